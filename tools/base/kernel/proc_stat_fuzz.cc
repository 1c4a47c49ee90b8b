// Fuzz target for ParseProcStat (tools/base/kernel/proc_stat.h). Two checks
// per input: the raw bytes never crash the parser, and, used as a process's
// comm inside an otherwise valid stat line, they never confuse it: the
// parser must return exactly that comm, the line's counters and its start
// time, whatever parentheses, spaces or fake fields the comm holds.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "tools/base/kernel/proc_stat.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  std::optional<hotpage::ProcStat> raw = hotpage::ParseProcStat(text);
  if (raw.has_value()) {
    if (raw->pid <= 0) std::abort();
    if (raw->comm.size() > text.size()) std::abort();
    if (text.find(raw->comm) == absl::string_view::npos) std::abort();
  }
  const uint64_t start = 0x1234567890ull + size;
  const std::string line = absl::StrCat(
      "31337 (", text, ") S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 ",
      start, " 23 24 25\n");
  std::optional<hotpage::ProcStat> st = hotpage::ParseProcStat(line);
  if (line.size() <= (64 << 10)) {
    if (!st.has_value()) std::abort();
    if (st->pid != 31337 || st->comm != text || st->state != 'S' ||
        st->ppid != 1 || st->minflt != 7 || st->utime_ticks != 11 ||
        st->stime_ticks != 12 || st->start_time_ticks != start) {
      std::abort();
    }
  }
  return 0;
}
