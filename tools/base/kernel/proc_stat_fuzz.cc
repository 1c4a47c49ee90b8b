// Fuzz target for the parsers of a process's /proc files: ParseProcStat and
// ParseStatmResident (tools/base/kernel/proc_stat.h) and CgroupV2Path
// (proc_cgroup.h). For ParseProcStat, two checks per input: the raw bytes
// never crash the parser, and, used as a process's comm inside an otherwise
// valid stat line, they never confuse it: the parser must return exactly
// that comm, the line's counters and its start time, whatever parentheses,
// spaces or fake fields the comm holds. For CgroupV2Path, the bytes as a
// cgroup's name (a delegated owner chooses it) after a v1 line: the path
// returned is the v2 line's up to the name's first newline, so a name can
// shorten its own path to an ancestor within the same subtree but never
// name a cgroup outside it.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "tools/base/kernel/proc_cgroup.h"
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
  // statm: any bytes; a well-formed text gives its second number.
  (void)hotpage::ParseStatmResident(text);
  const std::optional<uint64_t> rss = hotpage::ParseStatmResident(
      absl::StrCat("2000 ", 1000 + size, " 300 4 0 500 0\n"));
  if (!rss.has_value() || *rss != 1000 + size) std::abort();
  // /proc/PID/cgroup.
  if (std::optional<std::string> p = hotpage::CgroupV2Path(text)) {
    if (p->size() > text.size() || text.find(*p) == absl::string_view::npos)
      std::abort();
  }
  const std::string cg =
      absl::StrCat("1:name=systemd:/v1\n0::/user.slice/u/", text, "\n");
  const std::optional<std::string> path = hotpage::CgroupV2Path(cg);
  const absl::string_view name = text.substr(0, text.find('\n'));
  if (!path.has_value() || *path != absl::StrCat("user.slice/u/", name))
    std::abort();
  return 0;
}
