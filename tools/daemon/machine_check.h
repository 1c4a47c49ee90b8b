// A daemon config against this machine: what start-up, a reload and
// `hotpage daemon --check` check once the topology is known, so that a
// config that names a node the machine lacks is refused before anything
// runs, not found out process by process. ParseDaemonConfig checks what the
// file alone can show; this checks the rest:
//   - the machine has at least two memory tiers (CheckTiers);
//   - each workload's placement rules (WorkloadRules): its promote_to nodes
//     exist, its watermarks are raised to the kernel's floor, and the whole
//     passes ValidatePlacementConfig (weights' nodes, fractions, low <=
//     high);
//   - hotpage's own memory (self_memory, or --self-memory) names an online
//     node with memory (ChooseSelfMemoryPolicy).
// Pure: no file or syscall; the caller reads the topology and the floors.
// Thread-compatible.

#ifndef HOTPAGE_TOOLS_DAEMON_MACHINE_CHECK_H_
#define HOTPAGE_TOOLS_DAEMON_MACHINE_CHECK_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "policy/placement_types.h"
#include "policy/topology.h"
#include "tools/daemon/daemon_config.h"
#include "tools/kernel_floor.h"
#include "tools/self_memory.h"

namespace hotpage {

// FailedPrecondition, naming the nodes, when `topology` has fewer than two
// memory tiers: there is nothing to place pages between.
absl::Status CheckTiers(const Topology& topology);

// The rules a member of workload `w` runs with on `topology`: its
// placement options, promote_to resolved, watermarks raised to `floors`.
// InvalidArgument naming the key ("promote_to: node 5 is not on this
// machine (nodes: 0-1)").
absl::StatusOr<PlacementConfig> WorkloadRules(
    const WorkloadConfig& w, const Topology& topology,
    absl::Span<const NodeFloor> floors);

// What `cfg` comes to on `topology`, each part chosen once: start-up
// applies `self_memory`, --check prints it, and both report the problems.
struct ConfigOnMachine {
  // hotpage's own memory: ChooseSelfMemoryPolicy's for `self_memory_flag`
  // when given (it replaces the file's self_memory), else the file's.
  // InvalidArgument "PATH: self_memory: REASON" ("--self-memory: REASON"
  // for the flag) when it names a node that is not online with memory.
  absl::StatusOr<SelfMemoryPolicy> self_memory;
  // "PATH:LINE: workload NAME: REASON" for each workload whose rules
  // (WorkloadRules) do not fit, in file order.
  std::vector<std::string> workload_problems;

  // Every problem, one line each: self_memory's first, then the
  // workloads'. Empty when the daemon can run `cfg` here.
  std::vector<std::string> Problems() const;
};

ConfigOnMachine ResolveConfigOnMachine(
    const DaemonConfig& cfg, const Topology& topology,
    absl::Span<const NodeFloor> floors,
    const std::optional<SelfMemoryRequest>& self_memory_flag);

// ResolveConfigOnMachine's problems as one status: OK, or InvalidArgument
// with the problems joined by "; ".
absl::Status CheckConfigOnMachine(
    const DaemonConfig& cfg, const Topology& topology,
    absl::Span<const NodeFloor> floors,
    const std::optional<SelfMemoryRequest>& self_memory_flag);

// The machine in one line for --check: "2 node(s) with memory in 2
// tier(s): fast 0, then 1".
std::string DescribeTiers(const Topology& topology);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_DAEMON_MACHINE_CHECK_H_
