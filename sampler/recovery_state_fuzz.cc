// Fuzz target for the one crash-recovery state-file parser
// (sampler/recovery_state.h) and both kinds' records built on it. A state
// file is left in /run/hotpage by an earlier run and the next Start acts on
// it (it may remove the kdamond or rewrite the sysctls it names), so it is
// untrusted input. Checks properties, not only absence of crashes:
//  - generic: a parsed file formats back to text that parses to the same
//    record, with at most 4096 bytes;
//  - DAMON: kdamond 0, vaddr and pids in the kernel's range, and the file
//    formats back to the same size (one spelling per value);
//  - hint faults: only the two known sysctls, decimal values, at most two
//    lines, and a format/parse round trip.
// Each input is also tried after a valid header (and a few lines) of each
// kind, so that generated inputs (tools/base/fuzz_driver.cc, under gcc)
// reach the lines. Seeds: testdata/recovery_state_corpus (files of both
// kinds, as the earlier per-source writers wrote them).

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "sampler/recovery_state.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

using namespace hotpage;

void Generic(const RecoveryStateKind& kind, absl::string_view text) {
  absl::StatusOr<RecoveryState> st = ParseRecoveryState(kind, text);
  if (!st.ok()) {
    Check(!st.status().message().empty());
    return;
  }
  Check(text.size() <= kMaxRecoveryStateBytes);
  Check(st->pid >= 1 && st->pid <= (int64_t{1} << 22));
  absl::StatusOr<RecoveryState> again =
      ParseRecoveryState(kind, FormatRecoveryState(kind, *st));
  Check(again.ok() && again->pid == st->pid &&
        again->start_time_ticks == st->start_time_ticks &&
        again->fields.size() == st->fields.size());
}

void Damon(absl::string_view text) {
  Generic(DamonStateKind(), text);
  absl::StatusOr<DamonState> st = ParseDamonState(text);
  if (!st.ok()) {
    Check(!st.status().message().empty());
    return;
  }
  Check(st->pid >= 1 && st->pid <= (int64_t{1} << 22));
  Check(st->target_pid >= 1 && st->target_pid <= (int64_t{1} << 22));
  Check(st->kdamond == 0);
  Check(st->operations == "vaddr");
  const std::string again_text = FormatDamonState(*st);
  Check(again_text.size() == text.size());
  absl::StatusOr<DamonState> again = ParseDamonState(again_text);
  Check(again.ok() && again->pid == st->pid &&
        again->target_pid == st->target_pid &&
        again->start_time_ticks == st->start_time_ticks);
}

void HintFault(absl::string_view text) {
  Generic(HintFaultStateKind(), text);
  absl::StatusOr<HintFaultState> st = ParseHintFaultState(text);
  if (!st.ok()) {
    Check(!st.status().message().empty());
    return;
  }
  Check(st->pid > 0);
  Check(st->changes.size() <= 2);
  for (const HintFaultSysctlChange& c : st->changes) {
    Check(c.path == kNumaBalancingSysctl || c.path == kPromoteRateLimitSysctl);
    Check(!c.original.empty() && c.original.size() <= 10);
    for (char ch : c.original + c.wanted) Check(ch >= '0' && ch <= '9');
  }
  absl::StatusOr<HintFaultState> again =
      ParseHintFaultState(FormatHintFaultState(*st));
  Check(again.ok() && again->pid == st->pid &&
        again->changes.size() == st->changes.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  Damon(text);
  Damon(absl::StrCat("hotpage-damon-state 1\n", text));
  Damon(absl::StrCat("hotpage-damon-state 1\npid 7\nstart_time 1\nkdamond 0\n",
                     text));
  HintFault(text);
  HintFault(absl::StrCat("hotpage-hintfault-state 1\n", text));
  HintFault(
      absl::StrCat("hotpage-hintfault-state 1\npid 7\nstart_time 1\n", text));
  return 0;
}
