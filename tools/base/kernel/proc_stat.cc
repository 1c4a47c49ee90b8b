#include "tools/base/kernel/proc_stat.h"

#include <unistd.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace hotpage {
namespace {

// A stat line is far below this; anything longer is not one.
constexpr size_t kMaxStatBytes = 64 << 10;

bool ParseDecimal(absl::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return absl::SimpleAtoi(s, out);
}

bool ParseSigned(absl::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return absl::SimpleAtoi(s, out);
}

}  // namespace

std::optional<ProcStat> ParseProcStat(absl::string_view text) {
  if (text.size() > kMaxStatBytes) return std::nullopt;
  ProcStat st;
  // "pid (": the pid runs up to the first space, followed by '('.
  const size_t open = text.find(" (");
  if (open == absl::string_view::npos) return std::nullopt;
  if (!ParseSigned(text.substr(0, open), &st.pid) || st.pid <= 0) {
    return std::nullopt;
  }
  const size_t close = text.rfind(')');
  if (close == absl::string_view::npos || close < open + 2) return std::nullopt;
  st.comm = std::string(text.substr(open + 2, close - (open + 2)));

  // Fields 3.. follow "') '", separated by single spaces in the kernel's
  // output; accept any ASCII whitespace.
  absl::string_view rest = text.substr(close + 1);
  if (rest.empty() ||
      !absl::ascii_isspace(static_cast<unsigned char>(rest[0]))) {
    return std::nullopt;
  }
  constexpr int kFirstField = 3;
  constexpr int kMinfltField = 10;
  constexpr int kUtimeField = 14;
  constexpr int kStimeField = 15;
  constexpr int kStartTimeField = 22;
  int field = kFirstField;
  size_t i = 0;
  while (field <= kStartTimeField) {
    while (i < rest.size() &&
           absl::ascii_isspace(static_cast<unsigned char>(rest[i]))) {
      ++i;
    }
    if (i == rest.size()) return std::nullopt;
    size_t j = i;
    while (j < rest.size() &&
           !absl::ascii_isspace(static_cast<unsigned char>(rest[j]))) {
      ++j;
    }
    absl::string_view tok = rest.substr(i, j - i);
    bool ok = true;
    switch (field) {
      case 3:
        ok = tok.size() == 1;
        st.state = tok[0];
        break;
      case 4:
        ok = ParseSigned(tok, &st.ppid);
        break;
      case kMinfltField:
        ok = ParseDecimal(tok, &st.minflt);
        break;
      case kUtimeField:
        ok = ParseDecimal(tok, &st.utime_ticks);
        break;
      case kStimeField:
        ok = ParseDecimal(tok, &st.stime_ticks);
        break;
      case kStartTimeField:
        ok = ParseDecimal(tok, &st.start_time_ticks);
        break;
      default:
        break;
    }
    if (!ok) return std::nullopt;
    ++field;
    i = j;
  }
  return st;
}

std::optional<uint64_t> ParseStatmResident(absl::string_view text) {
  std::vector<absl::string_view> f =
      absl::StrSplit(absl::StripAsciiWhitespace(text), ' ');
  uint64_t pages = 0;
  if (f.size() < 2 || !ParseDecimal(f[1], &pages)) return std::nullopt;
  return pages;
}

uint64_t ResidentPages4K(const KernelFs& fs, int64_t pid) {
  absl::StatusOr<std::string> text =
      fs.ReadFile(absl::StrCat("/proc/", pid, "/statm"));
  if (!text.ok()) return 0;
  const std::optional<uint64_t> pages = ParseStatmResident(*text);
  return pages ? *pages * (static_cast<uint64_t>(getpagesize()) / 4096) : 0;
}

uint64_t SelfStartTimeTicks(const KernelFs& fs) {
  absl::StatusOr<std::string> text = fs.ReadFile("/proc/self/stat");
  if (!text.ok()) return 0;
  std::optional<ProcStat> st = ParseProcStat(*text);
  return st ? st->start_time_ticks : 0;
}

}  // namespace hotpage
