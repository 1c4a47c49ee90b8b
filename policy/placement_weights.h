// Weights for weighted placement (rule W in placement.h, --weights):
// ParseWeights reads the flag, ResolveWeights turns it into one weight per
// node of the machine. WeightedTargetStrategy (target_strategy.h) uses the
// result; ValidatePlacementConfig (placement.h) checks it up front.

#ifndef HOTPAGE_POLICY_PLACEMENT_WEIGHTS_H_
#define HOTPAGE_POLICY_PLACEMENT_WEIGHTS_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "policy/placement_types.h"
#include "policy/topology.h"

namespace hotpage {

// Parses --weights: "auto", "kernel", or "N:W[,N:W...]" (node ids >= 0,
// weights 1..255, each node once). Errors quote the offending item and do
// not name the option: the caller does (attach "--weights: ", the daemon's
// config "FILE:LINE: weights: ").
absl::StatusOr<WeightsConfig> ParseWeights(absl::string_view text);

// The weight of every topology node under `weights` (index: position in
// topology.nodes, in the same order). Nodes without a weight get 1, the
// kernel's default. kAuto: weights proportional to HMAT read bandwidth,
// scaled to at most 32 total before reducing by the GCD, each at least 1
// (as the kernel's reduce_interleave_weights); an error names a memory node
// without HMAT read bandwidth. kGiven: an error names a node not in the
// topology. kNone: all 1. Errors do not name the option (the caller does:
// ValidatePlacementConfig's "weights: ...").
absl::StatusOr<std::vector<NodeWeight>> ResolveWeights(
    const WeightsConfig& weights, const Topology& topology);

}  // namespace hotpage

#endif  // HOTPAGE_POLICY_PLACEMENT_WEIGHTS_H_
