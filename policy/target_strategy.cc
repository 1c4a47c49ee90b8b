#include "policy/target_strategy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>

#include "policy/placement_weights.h"
#include "tools/base/status_macros.h"

namespace hotpage {
namespace {

bool Contains(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

void NearestTargetStrategy::RankPromotionTargets(const PageHeat& page,
                                                 const NumaMapsRange* range,
                                                 absl::Span<const int> allowed,
                                                 const PlacementContext& ctx,
                                                 std::vector<int>& order) {
  const int ref = page.accessor_node >= 0 &&
                          ctx.topology().FindNode(page.accessor_node) != nullptr
                      ? page.accessor_node
                      : page.current_node;
  order.assign(allowed.begin(), allowed.end());
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return std::make_tuple(a != page.accessor_node, ctx.Distance(ref, a), a) <
           std::make_tuple(b != page.accessor_node, ctx.Distance(ref, b), b);
  });
}

void NearestTargetStrategy::RankDemotionTargets(const PageHeat& page,
                                                const NumaMapsRange* range,
                                                absl::Span<const int> allowed,
                                                const PlacementContext& ctx,
                                                std::vector<int>& order) {
  auto rank = [&](int node) {
    const NodeInfo* n = ctx.topology().FindNode(node);
    return n != nullptr && n->tier ? *n->tier : std::numeric_limits<int>::max();
  };
  order.assign(allowed.begin(), allowed.end());
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return std::make_tuple(rank(a), ctx.Distance(page.current_node, a), a) <
           std::make_tuple(rank(b), ctx.Distance(page.current_node, b), b);
  });
}

WeightedTargetStrategy::WeightedTargetStrategy(std::vector<NodeWeight> weights,
                                               bool package_aware)
    : weighted_(!weights.empty()), package_aware_(package_aware) {
  for (const NodeWeight& w : weights) weights_[w.node] = std::max(w.weight, 1);
}

int WeightedTargetStrategy::Weight(int node) const {
  auto it = weights_.find(node);
  return it == weights_.end() ? 1 : it->second;
}

int WeightedTargetStrategy::GroupOf(const PageHeat& page, int node,
                                    const Topology& topo) const {
  if (!package_aware_ || page.accessor_node < 0) return -1;
  const NodeInfo* a = topo.FindNode(page.accessor_node);
  const NodeInfo* n = topo.FindNode(node);
  if (a == nullptr || n == nullptr || a->package != n->package) return -1;
  return a->package;
}

// weighted_interleave_nid(): stay on the current node while it has weight
// left and room, else the next eligible node after it in id order.
int WeightedTargetStrategy::Pick(const Cursor& c,
                                 const std::vector<int>& eligible) const {
  if (c.remaining > 0 && Contains(eligible, c.node)) return c.node;
  for (int n : eligible) {  // ascending
    if (n > c.node) return n;
  }
  return eligible.front();
}

void WeightedTargetStrategy::RankPromotionTargets(const PageHeat& page,
                                                  const NumaMapsRange* range,
                                                  absl::Span<const int> allowed,
                                                  const PlacementContext& ctx,
                                                  std::vector<int>& order) {
  topo_ = &ctx.topology();
  std::vector<int> near;
  nearest_.RankPromotionTargets(page, range, allowed, ctx, near);
  // Groups: the accessor's package first (package-aware), then the rest.
  std::vector<int> groups[2];
  int keys[2] = {-1, -1};
  for (int n : near) {
    const int g = GroupOf(page, n, *topo_);
    if (g >= 0) keys[0] = g;
    groups[g >= 0 ? 0 : 1].push_back(n);
  }
  order.clear();
  for (int gi = 0; gi < 2; ++gi) {
    const std::vector<int>& group = groups[gi];
    std::vector<int> eligible;
    for (int n : group) {
      if (ctx.HasRoomToPromote(n, page.page_bytes)) eligible.push_back(n);
    }
    if (!eligible.empty()) {
      int pick = eligible.front();  // nearest with room
      if (weighted_) {
        std::sort(eligible.begin(), eligible.end());
        pick = Pick(cursors_[keys[gi]], eligible);
      }
      order.push_back(pick);
      for (int n : group) {
        if (n != pick) order.push_back(n);
      }
    } else if (weighted_ && !group.empty()) {
      // No node of the group has room: the promotion will displace colder
      // pages, and the weights decide where as they do for free room (the
      // pick first, then the rest nearest first), so that the ratio holds
      // on a full fast tier too.
      std::vector<int> sorted = group;
      std::sort(sorted.begin(), sorted.end());
      const int pick = Pick(cursors_[keys[gi]], sorted);
      order.push_back(pick);
      for (int n : group) {
        if (n != pick) order.push_back(n);
      }
    } else {
      order.insert(order.end(), group.begin(), group.end());
    }
  }
}

void WeightedTargetStrategy::RankDemotionTargets(const PageHeat& page,
                                                 const NumaMapsRange* range,
                                                 absl::Span<const int> allowed,
                                                 const PlacementContext& ctx,
                                                 std::vector<int>& order) {
  nearest_.RankDemotionTargets(page, range, allowed, ctx, order);
}

void WeightedTargetStrategy::Promoted(const PageHeat& page, int node) {
  if (!weighted_ || topo_ == nullptr) return;
  Cursor& c = cursors_[GroupOf(page, node, *topo_)];
  if (c.node == node && c.remaining > 0) {
    --c.remaining;
  } else {
    c.node = node;
    c.remaining = Weight(node) - 1;
  }
}

bool WeightedTargetStrategy::SplitPromotion(
    const PageHeat& page, absl::Span<const int> targets,
    const PlacementContext& ctx, std::vector<std::pair<int, uint32_t>>& parts) {
  parts.clear();
  const uint32_t pages = page.page_bytes / 4096;
  if (!weighted_ || !page.divisible || pages < 2 || targets.empty())
    return false;
  const Topology& topo = ctx.topology();
  const int group = GroupOf(page, targets.front(), topo);
  std::vector<int> eligible;
  for (int n : targets) {
    if (GroupOf(page, n, topo) == group &&
        ctx.HasRoomToPromote(n, page.page_bytes) && !Contains(eligible, n))
      eligible.push_back(n);
  }
  if (eligible.size() < 2) return false;
  std::sort(eligible.begin(), eligible.end());
  double sum = 0;
  for (int n : eligible) sum += Weight(n);
  // Each node's exact share is added to its credit; it takes the whole
  // pages of its credit, and the pages left go one by one to the largest
  // remaining credit (ties: lower id).
  uint32_t given = 0;
  for (int n : eligible) {
    double& c = credit_[n];
    c += static_cast<double>(pages) * Weight(n) / sum;
    const double whole = std::floor(c + 1e-9);
    uint32_t take = whole <= 0 ? 0 : static_cast<uint32_t>(whole);
    take = std::min(take, pages - given);
    c -= take;
    given += take;
    parts.emplace_back(n, take);
  }
  while (given < pages) {
    size_t best = 0;
    for (size_t i = 1; i < eligible.size(); ++i) {
      if (credit_[eligible[i]] > credit_[eligible[best]]) best = i;
    }
    ++parts[best].second;
    credit_[eligible[best]] -= 1;
    ++given;
  }
  parts.erase(std::remove_if(parts.begin(), parts.end(),
                             [](const auto& p) { return p.second == 0; }),
              parts.end());
  return true;
}

absl::StatusOr<std::unique_ptr<TargetStrategy>> MakeTargetStrategy(
    const PlacementConfig& config, const Topology& topology) {
  if (config.weights.source == WeightsConfig::Source::kNone &&
      !config.package_aware) {
    return std::make_unique<NearestTargetStrategy>();
  }
  std::vector<NodeWeight> weights;
  if (config.weights.source != WeightsConfig::Source::kNone) {
    HOTPAGE_ASSIGN_OR_RETURN(weights, ResolveWeights(config.weights, topology));
  }
  return std::make_unique<WeightedTargetStrategy>(std::move(weights),
                                                  config.package_aware);
}

}  // namespace hotpage
