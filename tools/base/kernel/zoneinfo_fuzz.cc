// Fuzz target for tools/base/kernel/zoneinfo.h: ParseZoneInfo and, on what
// it accepts, KernelReserves. Checks the parser's promises, not only the
// absence of crashes.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>

#include "absl/strings/string_view.h"
#include "tools/base/kernel/zoneinfo.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto info = hotpage::ParseZoneInfo(text);
  if (!info.ok()) return 0;
  if (info->zones.empty()) std::abort();
  std::map<int, size_t> zones_of_node;
  for (const auto& z : info->zones) ++zones_of_node[z.node];
  for (const auto& z : info->zones) {
    if (z.min_pages > z.low_pages || z.low_pages > z.high_pages) std::abort();
    if (z.boost_pages > z.min_pages) std::abort();
    if (z.protection.size() != zones_of_node[z.node]) std::abort();
    if (z.index < 0 || static_cast<size_t>(z.index) >= z.protection.size()) {
      std::abort();
    }
  }
  for (const auto& r : hotpage::KernelReserves(*info, 4096)) {
    if (r.refuse_bytes > r.reclaim_bytes) std::abort();
    if (zones_of_node.count(r.node) == 0) std::abort();
  }
  return 0;
}
