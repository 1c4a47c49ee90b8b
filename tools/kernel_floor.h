// The kernel's own free-memory floor of each node, from /proc/zoneinfo
// (tools/base/kernel/zoneinfo.h), applied to a PlacementConfig's watermarks
// (policy/placement.h KernelFloorWatermarks). Attach and the daemon call it
// once at start-up; the simulator does not (it has no kernel, and its
// watermarks stay the fractions).

#ifndef HOTPAGE_TOOLS_KERNEL_FLOOR_H_
#define HOTPAGE_TOOLS_KERNEL_FLOOR_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "policy/placement_types.h"
#include "policy/topology.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {

// Per node of /proc/zoneinfo, the level below which the kernel wakes
// kswapd for a movable allocation there (NodeKernelReserve::reclaim_bytes:
// its refusal level plus the kernel's own min-to-low margin). An error
// (missing, unreadable or malformed file) says why; the caller then keeps
// the fractions and says so once.
absl::StatusOr<std::vector<NodeFloor>> ReadKernelFloors(const KernelFs& fs);

// Appends KernelFloorWatermarks(*config, topology, floors) to
// config->watermarks. Returns one line per node raised, for the start-up
// log ("node 0: watermarks low 20.9 MiB high 31.0 MiB, the kernel's own
// floor there (/proc/zoneinfo); the fractions gave 10.1/20.1 MiB").
std::vector<std::string> ApplyKernelFloors(absl::Span<const NodeFloor> floors,
                                           const Topology& topology,
                                           PlacementConfig* config);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_KERNEL_FLOOR_H_
