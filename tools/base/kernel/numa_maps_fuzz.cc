// Fuzz target for tools/base/kernel/numa_maps.h: numa_maps, maps and smaps
// parsers.

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "absl/strings/string_view.h"
#include "tools/base/kernel/numa_maps.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto ranges = hotpage::ParseNumaMaps(text);
  auto maps = hotpage::ParseProcMaps(text);
  if (ranges.ok() && maps.ok()) {
    size_t unmatched = hotpage::JoinWithMaps(*ranges, *maps);
    if (unmatched > ranges->size()) std::abort();
    for (const auto& r : *ranges) {
      if (r.end != 0 && r.end <= r.start) std::abort();
    }
  }
  if (auto smaps = hotpage::ParseSmaps(text); smaps.ok()) {
    for (const auto& v : *smaps) {
      if (v.end <= v.start) std::abort();
    }
  }
  return 0;
}
