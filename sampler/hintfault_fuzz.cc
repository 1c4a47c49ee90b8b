// Fuzz target for the parsers of sampler/hintfault_source.h: the state file
// (left in /run/hotpage by an earlier run and obeyed by the next one, so it
// is untrusted input), /proc/vmstat, /proc/PID/stat and /proc/PID/sched.
// Checks properties, not only absence of crashes: a parsed state names only
// the two known sysctls with decimal values and survives a format/parse
// round trip.

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "absl/strings/string_view.h"
#include "sampler/hintfault_source.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hotpage;
  const absl::string_view text(reinterpret_cast<const char*>(data), size);

  absl::StatusOr<HintFaultState> st = ParseHintFaultState(text);
  if (st.ok()) {
    Check(st->pid > 0);
    Check(st->changes.size() <= 2);
    for (const HintFaultSysctlChange& c : st->changes) {
      Check(c.path == kNumaBalancingSysctl || c.path == kPromoteRateLimitSysctl);
      Check(!c.original.empty() && c.original.size() <= 10);
      for (char ch : c.original + c.wanted) Check(ch >= '0' && ch <= '9');
    }
    absl::StatusOr<HintFaultState> again = ParseHintFaultState(FormatHintFaultState(*st));
    Check(again.ok() && again->pid == st->pid && again->changes.size() == st->changes.size());
  }
  (void)ParseNumaVmstat(text);
  if (ParseProcStatCpu(text)) Check(text.find(')') != absl::string_view::npos);
  (void)ParseNumaScanSeq(text);
  (void)WantedNumaBalancing(text);
  return 0;
}
