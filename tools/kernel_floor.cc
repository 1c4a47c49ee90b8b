#include "tools/kernel_floor.h"

#include <unistd.h>

#include "absl/strings/str_format.h"
#include "policy/placement.h"
#include "tools/base/kernel/zoneinfo.h"

namespace hotpage {

absl::StatusOr<std::vector<NodeFloor>> ReadKernelFloors(const KernelFs& fs) {
  absl::StatusOr<ZoneInfo> info = ReadZoneInfo(fs);
  if (!info.ok()) return info.status();
  const long page = sysconf(_SC_PAGESIZE);
  std::vector<NodeFloor> out;
  for (const NodeKernelReserve& r :
       KernelReserves(*info, page > 0 ? static_cast<uint64_t>(page) : 4096)) {
    out.push_back({r.node, r.reclaim_bytes});
  }
  return out;
}

std::vector<std::string> ApplyKernelFloors(absl::Span<const NodeFloor> floors,
                                           const Topology& topology,
                                           PlacementConfig* config) {
  std::vector<std::string> lines;
  auto mib = [](uint64_t b) { return static_cast<double>(b) / (1 << 20); };
  for (const NodeWatermarks& w :
       KernelFloorWatermarks(*config, topology, floors)) {
    const NodeWatermarks was = WatermarksFor(*config, topology, w.node);
    lines.push_back(absl::StrFormat(
        "node %d: watermarks low %.1f MiB high %.1f MiB, from the kernel's "
        "own floor there (/proc/zoneinfo); the fractions gave %.1f/%.1f MiB",
        w.node, mib(w.low_bytes), mib(w.high_bytes), mib(was.low_bytes),
        mib(was.high_bytes)));
    config->watermarks.push_back(w);
  }
  return lines;
}

}  // namespace hotpage
