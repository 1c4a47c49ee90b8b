#include "tools/base/kernel/capabilities.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace hotpage {

uint64_t EffectiveCapabilities(const KernelFs& fs) {
  absl::StatusOr<std::string> status = fs.ReadFile("/proc/self/status");
  if (!status.ok()) return 0;
  for (absl::string_view line : absl::StrSplit(*status, '\n')) {
    if (absl::ConsumePrefix(&line, "CapEff:")) {
      uint64_t caps = 0;
      return absl::SimpleHexAtoi(absl::StripAsciiWhitespace(line), &caps) ? caps
                                                                          : 0;
    }
  }
  return 0;
}

}  // namespace hotpage
