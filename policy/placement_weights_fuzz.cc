// Fuzz target for ParseWeights (placement_weights.h), the --weights flag of
// attach, simulate and the daemon's config file. Checks, beyond the absence
// of crashes: a parsed list of weights names each node once, in ascending
// order, with node ids >= 0 and weights 1..255 (what the placement rules
// and the kernel's weighted_interleave accept), and only "N:W" lists give
// one; "auto" and "kernel" give theirs.

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "absl/strings/string_view.h"
#include "policy/placement_weights.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto w = hotpage::ParseWeights(text);
  if (!w.ok()) return 0;
  using Source = hotpage::WeightsConfig::Source;
  if (w->source == Source::kGiven) {
    if (w->given.empty()) std::abort();
    int last = -1;
    for (const hotpage::NodeWeight& n : w->given) {
      if (n.node <= last || n.weight < 1 || n.weight > 255) std::abort();
      last = n.node;
    }
  } else if (!w->given.empty()) {
    std::abort();
  }
  return 0;
}
