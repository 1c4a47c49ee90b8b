#include "tools/daemon/machine_check.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "policy/placement.h"
#include "tools/base/parse.h"

namespace hotpage {
namespace {

std::vector<int> NodeIds(const Topology& topology) {
  std::vector<int> ids;
  for (const NodeInfo& n : topology.nodes) ids.push_back(n.id);
  return ids;
}

}  // namespace

absl::Status CheckTiers(const Topology& topology) {
  if (topology.tiers.size() >= 2) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "this machine has ", topology.nodes.size(),
      " NUMA node(s) in one memory tier: there is no faster or slower "
      "memory to place pages on (see `hotpage topology`)"));
}

absl::StatusOr<PlacementConfig> WorkloadRules(
    const WorkloadConfig& w, const Topology& topology,
    absl::Span<const NodeFloor> floors) {
  PlacementConfig cfg = w.placement;
  ApplyKernelFloors(floors, topology, &cfg);
  if (!w.promote_to.empty()) {
    absl::StatusOr<std::vector<int>> nodes = ParseKernelList(w.promote_to);
    if (!nodes.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("promote_to: ", nodes.status().message()));
    }
    for (int n : *nodes) {
      if (topology.FindNode(n) == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(
            "promote_to: node ", n, " is not on this machine (nodes: ",
            FormatKernelList(NodeIds(topology)), ")"));
      }
    }
    cfg.promote_to = *nodes;
  }
  // Its messages name an option by its config key ("weights: ...").
  if (absl::Status s = ValidatePlacementConfig(cfg, topology); !s.ok()) {
    return s;
  }
  return cfg;
}

std::vector<std::string> ConfigOnMachine::Problems() const {
  std::vector<std::string> problems;
  if (!self_memory.ok()) {
    problems.emplace_back(self_memory.status().message());
  }
  problems.insert(problems.end(), workload_problems.begin(),
                  workload_problems.end());
  return problems;
}

ConfigOnMachine ResolveConfigOnMachine(
    const DaemonConfig& cfg, const Topology& topology,
    absl::Span<const NodeFloor> floors,
    const std::optional<SelfMemoryRequest>& self_memory_flag) {
  ConfigOnMachine out;
  out.self_memory = ChooseSelfMemoryPolicy(
      self_memory_flag.value_or(cfg.self_memory), topology);
  if (!out.self_memory.ok()) {
    out.self_memory =
        absl::Status(out.self_memory.status().code(),
                     absl::StrCat(self_memory_flag ? "--self-memory"
                                                   : cfg.path + ": self_memory",
                                  ": ", out.self_memory.status().message()));
  }
  for (const WorkloadConfig& w : cfg.workloads) {
    absl::StatusOr<PlacementConfig> rules = WorkloadRules(w, topology, floors);
    if (!rules.ok()) {
      out.workload_problems.push_back(absl::StrCat(cfg.path, ":", w.line,
                                                   ": workload ", w.name, ": ",
                                                   rules.status().message()));
    }
  }
  return out;
}

absl::Status CheckConfigOnMachine(
    const DaemonConfig& cfg, const Topology& topology,
    absl::Span<const NodeFloor> floors,
    const std::optional<SelfMemoryRequest>& self_memory_flag) {
  const std::vector<std::string> problems =
      ResolveConfigOnMachine(cfg, topology, floors, self_memory_flag)
          .Problems();
  if (problems.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrJoin(problems, "; "));
}

std::string DescribeTiers(const Topology& topology) {
  size_t with_memory = 0;
  for (const NodeInfo& n : topology.nodes) {
    if (n.memory_bytes > 0) ++with_memory;
  }
  std::vector<std::string> tiers;
  for (const MemoryTier& t : topology.tiers) {
    tiers.push_back(FormatKernelList(t.nodes));
  }
  return absl::StrCat(with_memory, " node(s) with memory in ",
                      topology.tiers.size(), " tier(s)",
                      tiers.empty() ? "" : ": fast ",
                      absl::StrJoin(tiers, ", then "));
}

}  // namespace hotpage
