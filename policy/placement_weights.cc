#include "policy/placement_weights.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace hotpage {

absl::StatusOr<WeightsConfig> ParseWeights(absl::string_view text) {
  const absl::string_view t = absl::StripAsciiWhitespace(text);
  WeightsConfig w;
  if (t == "auto") {
    w.source = WeightsConfig::Source::kAuto;
    return w;
  }
  if (t == "kernel") {
    w.source = WeightsConfig::Source::kKernel;
    return w;
  }
  if (t.empty()) {
    return absl::InvalidArgumentError(
        "empty; want auto, kernel or NODE:WEIGHT[,...] (e.g. 0:3,1:1)");
  }
  w.source = WeightsConfig::Source::kGiven;
  for (absl::string_view item : absl::StrSplit(t, ',')) {
    item = absl::StripAsciiWhitespace(item);
    const size_t colon = item.find(':');
    int node = -1, weight = 0;
    if (colon == absl::string_view::npos ||
        !absl::SimpleAtoi(item.substr(0, colon), &node) ||
        !absl::SimpleAtoi(item.substr(colon + 1), &weight)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "\"", item,
          "\" is not NODE:WEIGHT (e.g. 0:3); want auto, kernel or a list"));
    }
    if (node < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", item, "\": node must be >= 0"));
    }
    if (weight < 1 || weight > 255) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", item,
                       "\": weight must be 1..255 (as the kernel's "
                       "weighted_interleave/nodeN)"));
    }
    for (const NodeWeight& g : w.given) {
      if (g.node == node) {
        return absl::InvalidArgumentError(
            absl::StrCat("node ", node, " given twice (\"", item, "\")"));
      }
    }
    w.given.push_back({node, weight});
  }
  std::sort(
      w.given.begin(), w.given.end(),
      [](const NodeWeight& a, const NodeWeight& b) { return a.node < b.node; });
  return w;
}

absl::StatusOr<std::vector<NodeWeight>> ResolveWeights(
    const WeightsConfig& weights, const Topology& topology) {
  std::vector<NodeWeight> out;
  out.reserve(topology.nodes.size());
  for (const NodeInfo& n : topology.nodes) out.push_back({n.id, 1});
  switch (weights.source) {
    case WeightsConfig::Source::kNone:
      break;
    case WeightsConfig::Source::kKernel:
      for (size_t i = 0; i < out.size(); ++i) {
        const std::optional<int>& w = topology.nodes[i].weight;
        if (w && *w > 0) out[i].weight = *w;
      }
      break;
    case WeightsConfig::Source::kGiven:
      for (const NodeWeight& g : weights.given) {
        auto it =
            std::find_if(out.begin(), out.end(),
                         [&](const NodeWeight& o) { return o.node == g.node; });
        if (it == out.end()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "node ", g.node,
              " is not an online memory node; see `hotpage topology`"));
        }
        it->weight = g.weight;
      }
      break;
    case WeightsConfig::Source::kAuto: {
      // mm/mempolicy.c reduce_interleave_weights(): scale bandwidths to
      // [1, 32] by their share of the sum, then divide by the GCD.
      constexpr uint64_t kWeightiness = 32;
      uint64_t sum = 0;
      for (const NodeInfo& n : topology.nodes) {
        if (!n.hmat.read_bandwidth_mbps || *n.hmat.read_bandwidth_mbps <= 0) {
          return absl::FailedPreconditionError(absl::StrCat(
              "auto: node ", n.id,
              " has no HMAT read bandwidth (access0/initiators/"
              "read_bandwidth); give the weights as NODE:WEIGHT,... "
              "instead"));
        }
        sum += static_cast<uint64_t>(*n.hmat.read_bandwidth_mbps);
      }
      uint64_t g = 0;
      for (size_t i = 0; i < out.size(); ++i) {
        const uint64_t bw =
            static_cast<uint64_t>(*topology.nodes[i].hmat.read_bandwidth_mbps);
        const uint64_t w = std::max<uint64_t>(bw * kWeightiness / sum, 1);
        out[i].weight = static_cast<int>(w);
        g = std::gcd(g, w);
      }
      if (g > 1) {
        for (NodeWeight& o : out) o.weight /= static_cast<int>(g);
      }
      break;
    }
  }
  return out;
}

}  // namespace hotpage
