// Target choice for a placement round: the engine (placement.h) computes
// the nodes a page may go to (tier, bind, preferred-many masks, back-off)
// and a TargetStrategy orders them. Whatever a strategy returns, the engine
// only uses nodes from the allowed list it passed in, so a strategy can
// never break a policy, a back-off or a watermark.
//
//   NearestTargetStrategy   the default: accessor's node, then by distance
//   WeightedTargetStrategy  rules W (weights) and P (package-aware)
//   MakeTargetStrategy      the one a PlacementConfig asks for
//
// Deterministic: the same rounds fed to a fresh strategy give the same
// order. Not thread-safe; one instance serves one caller's rounds.

#ifndef HOTPAGE_POLICY_TARGET_STRATEGY_H_
#define HOTPAGE_POLICY_TARGET_STRATEGY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "policy/placement_types.h"
#include "policy/topology.h"
#include "tools/base/kernel/numa_maps.h"

namespace hotpage {

// What a strategy may ask about the round in progress.
class PlacementContext {
 public:
  virtual ~PlacementContext() = default;
  virtual const Topology& topology() const = 0;
  // Projected free bytes now (after the moves decided so far); nullopt if
  // unknown.
  virtual std::optional<uint64_t> FreeBytes(int node) const = 0;
  // Whether a promotion of `bytes` into `node` keeps it at or above its
  // high watermark (and it is known and not backed off).
  virtual bool HasRoomToPromote(int node, uint64_t bytes) const = 0;
  virtual bool BackedOff(int node) const = 0;
  // SLIT distance; a large value if unknown.
  virtual int Distance(int from, int to) const = 0;
};

// Chooses the order in which target nodes are tried. One instance serves
// one round at a time (it may keep per-round state, e.g. a weighted
// round-robin cursor; BeginRound resets it). Implementations must be
// deterministic. Returned nodes outside `allowed` are ignored by the engine.
class TargetStrategy {
 public:
  virtual ~TargetStrategy() = default;
  virtual void BeginRound(const PlacementContext& ctx) {}
  // Promotion targets for `page`, best first. `allowed` (ascending, not
  // empty) already honours tiers, bind, preferred-many masks and back-off.
  // `range` is the page's policy range, or null (default policy).
  virtual void RankPromotionTargets(const PageHeat& page,
                                    const NumaMapsRange* range,
                                    absl::Span<const int> allowed,
                                    const PlacementContext& ctx,
                                    std::vector<int>& order) = 0;
  // Demotion targets for `page` on `page.current_node`, best first, from
  // `allowed` (slower tiers, bind-allowed, not backed off; ascending).
  virtual void RankDemotionTargets(const PageHeat& page,
                                   const NumaMapsRange* range,
                                   absl::Span<const int> allowed,
                                   const PlacementContext& ctx,
                                   std::vector<int>& order) = 0;
  // The engine committed `page` to `node` (promotion).
  virtual void Promoted(const PageHeat& page, int node) {}
  // A divisible page (PageHeat::divisible: base pages under one entry)
  // about to be promoted: the strategy may split its 4 KiB pages over
  // `targets` (the engine's final order, best first, every node allowed).
  // On true, `parts` holds (node, 4 KiB pages) in ascending node order,
  // each count > 0, summing to page_bytes / 4 KiB, every node from
  // `targets` with room for the whole page (so every part fits), and the
  // split is committed (the engine then moves the parts; Promoted is not
  // called). False: no split, `parts` empty; the page moves whole.
  // Default: never split.
  virtual bool SplitPromotion(const PageHeat& page,
                              absl::Span<const int> targets,
                              const PlacementContext& ctx,
                              std::vector<std::pair<int, uint32_t>>& parts) {
    return false;
  }
};

// The default strategy. Promotion: the node local to the CPUs that access
// the page (accessor_node) if allowed, as the kernel's MPOL_PREFERRED_MANY
// under NUMA balancing does; then the rest by distance from the accessor
// node (from the current node when the accessor is unknown), ties by id:
// the kernel's zonelist order filtered by the mask. Demotion: the kernel's
// demotion order (nearest slower tier, then distance from the source).
class NearestTargetStrategy : public TargetStrategy {
 public:
  void RankPromotionTargets(const PageHeat& page, const NumaMapsRange* range,
                            absl::Span<const int> allowed,
                            const PlacementContext& ctx,
                            std::vector<int>& order) override;
  void RankDemotionTargets(const PageHeat& page, const NumaMapsRange* range,
                           absl::Span<const int> allowed,
                           const PlacementContext& ctx,
                           std::vector<int>& order) override;
};

// Weighted round-robin over the qualifying targets (rule W), optionally
// package-aware (rule P). Promotion: among the allowed targets that have room
// (PlacementContext::HasRoomToPromote), the next node of a weighted
// round-robin as the kernel's weighted_interleave_nid(): the current node
// takes `weight` consecutive promotions (one per page, whatever its size),
// then the next node in ascending id order (wrapping) takes its weight.
// Nodes without room are skipped, so the ratio among the rest holds; when
// none has room the same round-robin orders the displacement targets, so
// the ratio holds on a full fast tier too (each promotion then swaps out
// a colder page of the picked node, or of the next if it has none). The
// cursor persists across rounds (BeginRound does not reset it), so small
// rounds still spread; a fresh strategy fed the same rounds decides the
// same. Without weights (kNone) the pick is the nearest node instead.
// package_aware: the targets in the accessor node's package come first
// (their own cursor, weights within the package); only when none of them
// has room, the rest (another cursor). After the pick, the remaining
// targets follow in nearest order (for displacement). Demotion: as
// NearestTargetStrategy.
// Divisible pages (SplitPromotion): a 2 MiB entry of region evidence is 512
// base pages, and as one round-robin unit it would make the ratio as coarse
// as the number of regions (DAMON: a few dozen chunks; in the 2pkg+cxl
// guest, 3:1 landed at 0.81). Such a page is split instead, its base pages
// over the first target's group (package-aware: the accessor's package)
// among the nodes with room for the whole page, in proportion to their
// weights. The fractions carry over (a per-node credit, largest remainder
// first, ties to the lower id), so the pages split so far stay within one
// page per node of the exact ratio. The cursor is not advanced: a split
// page keeps the ratio by itself. Pages stay in one contiguous run per
// node, so the migrator's batches stay whole.
class WeightedTargetStrategy : public TargetStrategy {
 public:
  // `weights`: per node (missing nodes weigh 1); empty: nearest pick.
  WeightedTargetStrategy(std::vector<NodeWeight> weights, bool package_aware);
  void RankPromotionTargets(const PageHeat& page, const NumaMapsRange* range,
                            absl::Span<const int> allowed,
                            const PlacementContext& ctx,
                            std::vector<int>& order) override;
  void RankDemotionTargets(const PageHeat& page, const NumaMapsRange* range,
                           absl::Span<const int> allowed,
                           const PlacementContext& ctx,
                           std::vector<int>& order) override;
  void BeginRound(const PlacementContext& ctx) override {
    topo_ = &ctx.topology();
  }
  void Promoted(const PageHeat& page, int node) override;
  bool SplitPromotion(const PageHeat& page, absl::Span<const int> targets,
                      const PlacementContext& ctx,
                      std::vector<std::pair<int, uint32_t>>& parts) override;

 private:
  struct Cursor {
    int node = -1;      // current node, -1: none yet
    int remaining = 0;  // promotions it still takes
  };
  int Weight(int node) const;
  // The group key of `node` for `page`: its package when package-aware and
  // in the accessor's package, else -1.
  int GroupOf(const PageHeat& page, int node, const Topology& topo) const;
  int Pick(const Cursor& c, const std::vector<int>& eligible) const;

  std::map<int, int> weights_;
  bool weighted_ = false;
  bool package_aware_ = false;
  const Topology* topo_ = nullptr;  // set by RankPromotionTargets
  std::map<int, Cursor> cursors_;   // by group key
  // SplitPromotion: pages owed to (> 0) or taken ahead by (< 0) each node.
  std::map<int, double> credit_;
  NearestTargetStrategy nearest_;
};

// The strategy `config` asks for: WeightedTargetStrategy when weights are
// set or package_aware, else NearestTargetStrategy. Errors from
// ResolveWeights.
absl::StatusOr<std::unique_ptr<TargetStrategy>> MakeTargetStrategy(
    const PlacementConfig& config, const Topology& topology);

}  // namespace hotpage

#endif  // HOTPAGE_POLICY_TARGET_STRATEGY_H_
