// Fuzz target for the kernel-counter parsers of the hint-fault watchdog
// (hintfault_watchdog.h: /proc/vmstat, /proc/PID/stat, /proc/PID/sched,
// demotion_enabled) and of the controller's numa_balancing value. (The state
// file the controller writes has the shared parser, fuzzed by
// //sampler:recovery_state_fuzz_test.) Checks properties, not only absence of
// crashes: /proc/PID/stat parses only with a ')' in it.

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/string_view.h"
#include "sampler/hintfault/hintfault_watchdog.h"
#include "sampler/hintfault/numa_balancing_controller.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hotpage;
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  (void)ParseNumaVmstat(text);
  if (ParseProcStatCpu(text)) Check(text.find(')') != absl::string_view::npos);
  (void)ParseNumaScanSeq(text);
  // demotion_enabled: a value only from one short word ("false" at most).
  if (ParseDemotionEnabled(text))
    Check(absl::StripAsciiWhitespace(text).size() <= 5);
  (void)WantedNumaBalancing(text);
  return 0;
}
