#include "tools/daemon/machine_check.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
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
  if (absl::Status s = ValidatePlacementConfig(cfg, topology); !s.ok()) {
    // Its messages name attach's flags ("--weights: ..."); a config names
    // the same option by its key (weights, keep_interleave).
    std::string m(s.message());
    if (absl::StartsWith(m, "--")) {
      const size_t colon = m.find(':');
      if (colon != std::string::npos) {
        std::string key = m.substr(2, colon - 2);
        std::replace(key.begin(), key.end(), '-', '_');
        m = key + m.substr(colon);
      }
    }
    return absl::Status(s.code(), m);
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
