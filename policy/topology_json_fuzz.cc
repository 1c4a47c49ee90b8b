// Fuzz target for TopologyFromJson (policy/topology.h): any bytes give a
// Topology or an error, never a crash; a Topology it accepts survives
// TopologyToJson and parses again to the same JSON text.

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "absl/strings/string_view.h"
#include "policy/topology.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<hotpage::Topology> t = hotpage::TopologyFromJson(text);
  if (!t.ok()) return 0;
  const std::string json = hotpage::TopologyToJson(*t);
  absl::StatusOr<hotpage::Topology> again = hotpage::TopologyFromJson(json);
  if (!again.ok() || hotpage::TopologyToJson(*again) != json) std::abort();
  for (int n : t->FastNodes()) {
    if (t->FindNode(n) == nullptr) std::abort();
  }
  return 0;
}
