#include "sampler/recovery_state.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace hotpage {
namespace {

constexpr uint64_t kPidMax = uint64_t{1} << 22;  // PID_MAX_LIMIT on 64-bit

std::string Header(const RecoveryStateKind& kind) {
  return absl::StrCat("hotpage-", kind.name, "-state 1");
}

}  // namespace

bool ParseCanonicalDecimal(absl::string_view s, size_t max_digits,
                           uint64_t* out) {
  if (s.empty() || s.size() > max_digits || (s.size() > 1 && s[0] == '0'))
    return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return absl::SimpleAtoi(s, out);
}

std::string FormatRecoveryState(const RecoveryStateKind& kind,
                                const RecoveryState& state) {
  std::string out = absl::StrCat(Header(kind), "\npid ", state.pid,
                                 "\nstart_time ", state.start_time_ticks, "\n");
  for (const RecoveryStateKey& key : kind.keys) {
    for (const auto& [k, v] : state.fields) {
      if (k == key.name) absl::StrAppend(&out, k, " ", v, "\n");
    }
  }
  return out;
}

absl::StatusOr<RecoveryState> ParseRecoveryState(const RecoveryStateKind& kind,
                                                 absl::string_view text) {
  if (text.size() > kMaxRecoveryStateBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("larger than ", kMaxRecoveryStateBytes, " bytes"));
  }
  if (text.empty()) return absl::InvalidArgumentError("empty");
  if (text.back() != '\n')
    return absl::InvalidArgumentError("truncated (no final newline)");
  text.remove_suffix(1);

  const std::string header = Header(kind);
  size_t max_lines = 3;  // header, pid, start_time
  for (const RecoveryStateKey& key : kind.keys) max_lines += key.max_count;

  RecoveryState st;
  bool have_pid = false, have_start = false;
  std::vector<int> counts(kind.keys.size(), 0);
  size_t line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", line_no, " (\"",
                       absl::CEscape(line.substr(0, 80)), "\"): ", why));
    };
    if (line_no == 1) {
      if (line != header) return bad(absl::StrCat("expected \"", header, "\""));
      continue;
    }
    if (line_no > max_lines) return bad("too many lines");
    const size_t sp = line.find(' ');
    if (sp == absl::string_view::npos) return bad("expected \"KEY VALUE\"");
    const absl::string_view key = line.substr(0, sp);
    const absl::string_view value = line.substr(sp + 1);
    uint64_t v = 0;
    if (key == "pid") {
      if (!ParseCanonicalDecimal(value, 7, &v) || v == 0 || v > kPidMax) {
        return bad(
            absl::StrCat("a pid is a decimal number from 1 to ", kPidMax));
      }
      if (have_pid) return bad("pid listed twice");
      have_pid = true;
      st.pid = static_cast<int64_t>(v);
      continue;
    }
    if (key == "start_time") {
      if (!ParseCanonicalDecimal(value, 20, &v))
        return bad("start_time must be a decimal number");
      if (have_start) return bad("start_time listed twice");
      have_start = true;
      st.start_time_ticks = v;
      continue;
    }
    size_t i = 0;
    while (i < kind.keys.size() && key != kind.keys[i].name) ++i;
    if (i == kind.keys.size()) return bad("unknown line");
    const RecoveryStateKey& k = kind.keys[i];
    if (k.check != nullptr) {
      if (std::string why = k.check(value); !why.empty()) return bad(why);
    }
    if (counts[i] == k.max_count) {
      return bad(k.max_count == 1 ? absl::StrCat(key, " listed twice")
                                  : absl::StrCat("more than ", k.max_count, " ",
                                                 key, " lines"));
    }
    ++counts[i];
    st.fields.emplace_back(std::string(key), std::string(value));
  }
  std::vector<absl::string_view> missing;
  if (!have_pid) missing.push_back("pid");
  if (!have_start && kind.start_time_required) missing.push_back("start_time");
  for (size_t i = 0; i < kind.keys.size(); ++i) {
    if (counts[i] < kind.keys[i].min_count)
      missing.push_back(kind.keys[i].name);
  }
  if (!missing.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("no ", absl::StrJoin(missing, ", "), " line"));
  }
  return st;
}

// --- DAMON -------------------------------------------------------------------

namespace {

std::string CheckKdamond(absl::string_view v) {
  return v == "0" ? "" : "hotpage only creates kdamond 0";
}

std::string CheckPid(absl::string_view v) {
  uint64_t n = 0;
  if (!ParseCanonicalDecimal(v, 7, &n) || n == 0 || n > kPidMax) {
    return absl::StrCat("a pid is a decimal number from 1 to ", kPidMax);
  }
  return "";
}

std::string CheckOperations(absl::string_view v) {
  return v == "vaddr" ? "" : "hotpage only uses vaddr operations";
}

}  // namespace

const RecoveryStateKind& DamonStateKind() {
  static const RecoveryStateKind* kind =
      new RecoveryStateKind{"damon",
                            /*start_time_required=*/true,
                            {
                                {"kdamond", 1, 1, &CheckKdamond},
                                {"target_pid", 1, 1, &CheckPid},
                                {"operations", 1, 1, &CheckOperations},
                            }};
  return *kind;
}

std::string FormatDamonState(const DamonState& state) {
  RecoveryState r;
  r.pid = state.pid;
  r.start_time_ticks = state.start_time_ticks;
  r.fields = {{"kdamond", absl::StrCat(state.kdamond)},
              {"target_pid", absl::StrCat(state.target_pid)},
              {"operations", state.operations}};
  return FormatRecoveryState(DamonStateKind(), r);
}

absl::StatusOr<DamonState> ParseDamonState(absl::string_view text) {
  absl::StatusOr<RecoveryState> r = ParseRecoveryState(DamonStateKind(), text);
  if (!r.ok()) return r.status();
  DamonState st;
  st.pid = r->pid;
  st.start_time_ticks = r->start_time_ticks;
  for (const auto& [k, v] : r->fields) {
    uint64_t n = 0;
    if (k == "target_pid" && absl::SimpleAtoi(v, &n))
      st.target_pid = static_cast<int64_t>(n);
    if (k == "operations") st.operations = v;
    // kdamond: checked to be 0.
  }
  return st;
}

// --- NUMA hint faults --------------------------------------------------------

namespace {

// A sysctl value hotpage reads or restores: 1 to 10 decimal digits (kept as
// the kernel printed it, so not necessarily canonical).
bool IsSysctlNumber(absl::string_view v) {
  if (v.empty() || v.size() > 10) return false;
  for (char c : v) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::string CheckSysctl(absl::string_view v) {
  std::vector<absl::string_view> f = absl::StrSplit(v, ' ');
  if (f.size() != 3) return "expected \"sysctl PATH ORIGINAL WANTED\"";
  if (f[0] != kNumaBalancingSysctl && f[0] != kPromoteRateLimitSysctl) {
    return "not a sysctl hotpage changes";
  }
  if (!IsSysctlNumber(f[1]) || !IsSysctlNumber(f[2]))
    return "values must be decimal numbers";
  return "";
}

}  // namespace

const RecoveryStateKind& HintFaultStateKind() {
  static const RecoveryStateKind* kind =
      new RecoveryStateKind{"hintfault",
                            /*start_time_required=*/false,
                            {
                                {"sysctl", 0, 2, &CheckSysctl},
                            }};
  return *kind;
}

std::string FormatHintFaultState(const HintFaultState& state) {
  RecoveryState r;
  r.pid = state.pid;
  r.start_time_ticks = state.start_time_ticks;
  for (const HintFaultSysctlChange& c : state.changes) {
    r.fields.emplace_back("sysctl",
                          absl::StrCat(c.path, " ", c.original, " ", c.wanted));
  }
  return FormatRecoveryState(HintFaultStateKind(), r);
}

absl::StatusOr<HintFaultState> ParseHintFaultState(absl::string_view text) {
  absl::StatusOr<RecoveryState> r =
      ParseRecoveryState(HintFaultStateKind(), text);
  if (!r.ok()) return r.status();
  HintFaultState st;
  st.pid = r->pid;
  st.start_time_ticks = r->start_time_ticks;
  for (const auto& [k, v] : r->fields) {
    std::vector<std::string> f = absl::StrSplit(v, ' ');  // checked: 3 fields
    for (const HintFaultSysctlChange& c : st.changes) {
      if (c.path == f[0]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "sysctl listed twice (\"", absl::CEscape(f[0]), "\")"));
      }
    }
    st.changes.push_back({std::move(f[0]), std::move(f[1]), std::move(f[2])});
  }
  return st;
}

}  // namespace hotpage
