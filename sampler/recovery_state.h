// Recovery state: the one file format in which a source that changes
// system-wide kernel state records what it changed, so that the next run can
// undo it after this one was SIGKILLed. The DAMON source (its kdamond) and
// the NUMA-balancing controller behind hint-fault sensing (two sysctls) both
// write it; tools/base/state_dir.h keeps it (STATE_DIR/NAME-state, written
// atomically, next to the flock that says whether its writer is alive).
//
// The format, one record per file:
//   hotpage-KIND-state 1        KIND: damon, hintfault
//   pid 1234                    the hotpage that wrote it
//   start_time 5678             its start, field 22 of /proc/PID/stat
//   KEY VALUE                   per kind (RecoveryStateKind below)
// Every line ends in '\n'; KEY is followed by exactly one space; no empty,
// unknown or repeated lines beyond what the kind allows; at most 4096 bytes.
// The writer emits one spelling per value, in the order above, so a parsed
// file formats back to the same bytes (up to the order of the lines).
//
// The file is left by an earlier run and the next Start acts on it (it may
// remove the kdamond or rewrite the sysctls it names), so it is untrusted:
// ParseRecoveryState is strict, bounded for any input, and fuzzed
// (recovery_state_fuzz.cc, seeds in testdata/recovery_state_corpus). Each
// kind's typed record (DamonState, HintFaultState) is converted from the one
// parsed form by the functions below; their callers never split lines.
//
// Compatibility: the two per-source formats this replaces were already this
// shape (same headers, keys and order), so files written by earlier versions
// parse unchanged. The one difference: the hint-fault parser used to skip
// empty lines and accept a missing final newline, which its writer never
// produced; those hand-edited files are now refused like DAMON's.
//
// Thread-compatible: pure functions over strings.

#ifndef HOTPAGE_SAMPLER_RECOVERY_STATE_H_
#define HOTPAGE_SAMPLER_RECOVERY_STATE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hotpage {

inline constexpr size_t kMaxRecoveryStateBytes = 4096;

// What one kind of file may hold besides pid and start_time.
struct RecoveryStateKey {
  const char* name;
  int min_count;  // 1: required
  int max_count;
  // Checks one value; returns "" when good, else why not (the parser adds
  // the line). nullptr: any value.
  std::string (*check)(absl::string_view value);
};

struct RecoveryStateKind {
  const char* name;  // "damon" -> header "hotpage-damon-state 1"
  bool start_time_required;
  std::vector<RecoveryStateKey> keys;  // in the order the writer emits them
};

// The parsed form: pid, start_time, then the kind's lines in file order.
struct RecoveryState {
  int64_t pid = 0;
  uint64_t start_time_ticks = 0;
  std::vector<std::pair<std::string, std::string>> fields;  // KEY, VALUE
};

// Header, pid, start_time, then `fields` in the kind's key order.
std::string FormatRecoveryState(const RecoveryStateKind& kind,
                                const RecoveryState& state);
// Strict (see the file comment); InvalidArgument naming the line and what
// was expected. pid 1..4194304 and start_time as canonical decimals (no
// sign, no leading zero; at most 20 digits).
absl::StatusOr<RecoveryState> ParseRecoveryState(const RecoveryStateKind& kind,
                                                 absl::string_view text);

// 1 to max_digits decimal digits, no sign, no leading zero (one spelling per
// value, so that a parsed file formats back to the same bytes).
bool ParseCanonicalDecimal(absl::string_view s, size_t max_digits,
                           uint64_t* out);

// --- DAMON -------------------------------------------------------------------

// What a running DamonSource wrote to STATE_DIR/damon-state before it
// created its kdamond:
//   hotpage-damon-state 1
//   pid 1234            this hotpage
//   start_time 5678     its start, field 22 of /proc/PID/stat (messages)
//   kdamond 0           the kdamond index (hotpage only creates 0)
//   target_pid 4321     the pid its one context monitors
//   operations vaddr
struct DamonState {
  int64_t pid = 0;
  uint64_t start_time_ticks = 0;
  int kdamond = 0;
  int64_t target_pid = 0;
  std::string operations = "vaddr";
};
const RecoveryStateKind& DamonStateKind();
std::string FormatDamonState(const DamonState& state);
// Strict: the header first, then each key exactly once, in any order; pids
// 1..4194304, start_time decimal (at most 20 digits), kdamond 0, operations
// vaddr, every line ending in a newline, no empty or unknown lines, at most
// 4096 bytes. Anything else is an InvalidArgument naming the line.
absl::StatusOr<DamonState> ParseDamonState(absl::string_view text);

// --- NUMA hint faults --------------------------------------------------------

// The two sysctls the NUMA-balancing controller changes, and the only paths
// a state file may name.
inline constexpr char kNumaBalancingSysctl[] =
    "/proc/sys/kernel/numa_balancing";
inline constexpr char kPromoteRateLimitSysctl[] =
    "/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps";

// What the NUMA-balancing controller wrote before changing anything:
//   hotpage-hintfault-state 1
//   pid 1234
//   start_time 5678            (optional)
//   sysctl /proc/sys/kernel/numa_balancing 0 2
//   sysctl /proc/sys/kernel/numa_balancing_promote_rate_limit_MBps 65536 0
// Each sysctl line: path, original value, value hotpage set.
struct HintFaultSysctlChange {
  std::string path;
  std::string original;
  std::string wanted;
};
struct HintFaultState {
  int64_t pid = 0;
  uint64_t start_time_ticks = 0;
  std::vector<HintFaultSysctlChange> changes;
};
const RecoveryStateKind& HintFaultStateKind();
std::string FormatHintFaultState(const HintFaultState& state);
// Strict: the header line, a pid, at most one line per KNOWN sysctl path
// (the two above), decimal values of at most 10 digits; anything else is
// an InvalidArgument naming the line. Bounded work for any input.
absl::StatusOr<HintFaultState> ParseHintFaultState(absl::string_view text);

}  // namespace hotpage

#endif  // HOTPAGE_SAMPLER_RECOVERY_STATE_H_
