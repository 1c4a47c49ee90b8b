// The placement engine: decides which pages to promote to faster memory and
// which to demote out of it, for one round, from values only.
//
// Data flow (house style: sampler -> hotness -> policy -> migrator):
//
//   HotnessScanner::last_result()      Topology      numa_maps ranges
//     hottest_not_fast -> candidates       |         free bytes per node
//     coldest_on_fast  -> victims          |         held pages, backed-off
//                \                         |         nodes, PlacementConfig
//                 +-------> DecideMoves(PlacementInput, PlacementConfig)
//                                          |
//                      PlacementDecision{moves, skip counters, per node}
//                                          |
//                    one MoveRequest per PlannedMove -> Migrator::Submit
//
// DecideMoves() is a pure function: no system calls, no clocks, no global
// state, no randomness. The same input (in any order) gives the same output
// in the same order, so it runs unchanged in the replay simulator and in
// tests. Pages held by the ping-pong tracker arrive as a predicate that the
// caller binds to "now" (see PlacementInput::is_held).
//
// ## Rules, in the order a round applies them
//
// 0. Input is sorted into a total order: candidates hottest first by
//    (rate_lo desc, rate desc, rate_hi desc, vaddr, ...), victims coldest
//    first by (rate_hi asc, rate asc, ...). A page listed twice is
//    considered once (the rest count as kDuplicate).
// 1. Watermark demotion. Every node that has a slower tier below it and
//    whose free memory is below its low watermark demotes its coldest
//    victims until its projected free memory reaches the high watermark.
//    Each victim goes to the first demotion target (below) that its bind
//    policy allows, that is not backed off and that keeps its own low
//    watermark.
// 2. Promotion. Each candidate, hottest first:
//    a. never moved if held for ping-pong (kHeld);
//    b. needs evidence: rate_lo > config.min_promote_rate_lo_per_sec and
//       rate_lo > rate_hi of every page demoted so far in the round
//       (kNotEnoughEvidence). Together with the order of rules 1 and 2c this
//       keeps the round invariant: every promoted page is provably hotter
//       (lo > hi) than every demoted page;
//    c. allowed targets: nodes of a strictly faster tier than the page's
//       (kWrongTier), inside its MPOL_BIND nodes (kBindForbidden), inside
//       config.promote_to and a `prefer (many)` range's nodes
//       (kOutsidePreferredMany), not backed off (kTargetBackedOff when none
//       is left);
//    d. the TargetStrategy orders the allowed targets (default: the
//       accessor's node if allowed, then by distance from it; rules W and
//       P below), then rules I and H narrow that order; the engine takes
//       the first with room above its high watermark after the move;
//    e. if none has room, it displaces: on the targets in the same order, it
//       demotes the coldest victims still on that node, each only if
//       candidate.rate_lo > victim.rate_hi (hotness ShouldPromote), until the
//       freed bytes cover the page (a swap never lowers free memory);
//       kNotHotterThanVictim when victims exist but none is provably colder,
//       kNoRoom when there is nothing to displace;
//    f. every move counts against the round budget (bytes and count;
//       kBudget).
//
// Demotion target, as the kernel's node_demotion[] (mm/memory-tiers.c):
// nodes of slower tiers, nearest tier first, then by distance from the
// source node, then by id.
//
// Room. A promotion needs the target's free bytes after the move to stay at
// or above its high watermark: the kernel promotes only into a node that is
// above its high watermark (mm/migrate.c migrate_balanced_pgdat), which
// leaves the band between low and high to the application's own
// allocations, so promotions do not immediately trigger demotions. A
// demotion needs its target to stay at or above the target's low watermark.
// A node whose free bytes the caller does not know is never a target and
// never demoted from.
//
// Watermarks default to 2% (low) and 4% (high) of the node's memory
// (NodeInfo::memory_bytes). 2% is TPP's demotion watermark default
// (demote_scale_factor = 200, i.e. 2%, in the TPP series), which sits above
// the kernel's own reclaim watermarks (min_free_kbytes scaling is ~0.1-1%),
// so hotpage demotes before kswapd starts reclaiming. The 2% gap to high is
// hysteresis: demotions happen in batches of 2% of the node instead of a
// page at a time each round.
//
// 3. Locality (rule L below), after every promotion has taken its room.
//
// ## Target choice and the issue-6 rules (all opt-in; defaults = the above)
//
// Target choice is a TargetStrategy. Whatever a strategy returns, the engine
// only uses nodes from the allowed list it passed in: a strategy can never
// break a bind policy, a preferred-many mask, a back-off or a watermark.
// MakeTargetStrategy(config, topology) builds the one the config asks for;
// a caller running rounds keeps it across rounds (the weighted cursor
// carries over). DecideMoves(input, config) builds a fresh one per call.
//
// W. Weighted placement (PlacementConfig::weights, --weights; ParseWeights,
//    ResolveWeights). When several nodes qualify as promotion targets,
//    WeightedTargetStrategy spreads promotions over those with room by a
//    deterministic weighted round-robin like the kernel's
//    weighted_interleave_nid() (mm/mempolicy.c): the current node takes
//    `weight` consecutive promotions, then the next node by id. Weights:
//    "kernel" = /sys/kernel/mm/mempolicy/weighted_interleave/nodeN
//    (NodeInfo::weight), "auto" = from HMAT read bandwidth as the kernel's
//    reduce_interleave_weights(), or "0:3,1:1". Nodes without room drop out
//    and the ratio among the rest holds. One unit per page (a 2 MiB page is
//    one unit, as one folio is for the kernel).
// P. Package-aware (PlacementConfig::package_aware, --package-aware): the
//    allowed targets in the package of the page's accessor node come first
//    while one of them has room, with the weights (rule W) applied within
//    the package (its own cursor); then the rest of the allowed set. Never
//    outside `allowed`, so never outside the policy's nodemask.
// L. Locality (PlacementConfig::locality, --locality; input
//    PlacementInput::hot_on_fast): a hot private page (not shared, accessor
//    known) on another node of the same tier as its accessor's node moves
//    there when bind, promote_to / prefer (many), back-off, evidence
//    (min_promote_rate_lo_per_sec), ping-pong hold, room above the high
//    watermark and the budget allow. No displacement: free room only.
//    Shared pages stay; a page with fewer than locality_min_samples samples
//    is not known to be private (kNotEnoughEvidence). Moves: reason
//    kPromote, trigger kLocality, counted
//    in PlacementDecision::locality_pages/bytes (not promoted_*), skips in
//    locality_skipped.
// I. Interleave ratios kept (PlacementConfig::interleave_tolerance >= 0,
//    --keep-interleave TOL): for a page of an `interleave` or `weighted
//    interleave` range, promotion and demotion targets are only those that
//    keep both the target's and the source's share of the range's bytes
//    (NumaMapsRange::pages_on_node plus the round's planned moves) within
//    TOL of the policy's share (equal over the policy nodes for interleave;
//    NodeInfo::weight, default 1, for weighted interleave; 0 outside the
//    policy nodes), the node furthest below its share first. No such target:
//    kInterleaveRatio. Applied after the strategy's order. A range without
//    pages_on_node counts has no known ratio: the rule does not apply.
// H. Huge pages (PlacementConfig::huge_strict_preferred, --huge-strict): a
//    PageHeat with page_bytes >= 2 MiB is always moved whole (one move of
//    page_bytes, which counts against max_move_bytes as 512 base pages).
//    With the rule, when it has a preferred node set (its range's `prefer`
//    node, which then wins over the CPU-local node, or `prefer (many)`
//    nodes, else --promote-to), it is promoted only into that set; if none
//    can take it (room or displacement) it is skipped as
//    kHugePreferredFull, never placed on another node. Finding THP-backed
//    ranges (smaps AnonHugePages, kpageflags) is the caller's job and not
//    done here: PageHeat::page_bytes must already say 2 MiB.
//
// ## Cost
//
// O((C + V) log (C + V)) for sorting plus O(C * N) for target choice (N
// nodes); placement_benchmark measures it (numbers in that file). Rule I
// adds O(N * R) per interleaved page (R: nodes in its pages_on_node); rule
// L adds O(H log H) for H hot_on_fast pages.

#ifndef HOTPAGE_POLICY_PLACEMENT_H_
#define HOTPAGE_POLICY_PLACEMENT_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "policy/topology.h"
#include "tools/base/kernel/numa_maps.h"

namespace hotpage {

// One page as the hotness scan sees it. From a hotness PageEstimate `e`
// (hotness/hotness_table.h) and its current node:
//   vaddr         = e.entry.key.vaddr()
//   page_bytes    = PageBytes(e.entry.key.kind)
//   current_node  = where the page is (move_pages query / the caller's map)
//   accessor_node = e.entry.node
//   shared        = e.entry.sharing == Sharing::kShared
//   rate, rate_lo, rate_hi = e.rate.per_sec, e.rate.lo_per_sec,
//                            e.rate.hi_per_sec
struct PageHeat {
  uint64_t vaddr = 0;          // aligned to page_bytes
  uint32_t page_bytes = 4096;  // a power of two >= 4096 (4 KiB, 2 MiB)
  int current_node = -1;       // -1: unknown (never moved)
  int accessor_node = -1;      // dominant accessing CPUs' node; -1: unknown
  bool shared = false;         // accessed from several nodes
  double rate = 0;             // accesses per second, point estimate
  double rate_lo = 0;          // confidence bounds of `rate`
  double rate_hi = 0;
  // Samples behind `shared` / `accessor_node`: the entry's decayed count in
  // samples (count / the source's sample weight). 0: unknown. Only rule L
  // reads it.
  uint32_t samples = 0;
};

struct NodeFree {
  int node = -1;
  uint64_t free_bytes = 0;
};

// Everything a round decides from. Spans and the topology must outlive the
// DecideMoves() call only; nothing is kept.
struct PlacementInput {
  const Topology* topology = nullptr;  // required
  // Hot pages on slower tiers (ScanResult::hottest_not_fast), any order.
  absl::Span<const PageHeat> candidates;
  // Cold pages on faster tiers (ScanResult::coldest_on_fast), any order.
  absl::Span<const PageHeat> victims;
  // Hot pages already on the fastest tier, any order: only the locality rule
  // (PlacementConfig::locality) looks at them. Empty: no locality moves.
  absl::Span<const PageHeat> hot_on_fast;
  // The process's per-range policies (ParseNumaMaps + JoinWithMaps), any
  // order. A range with end == 0 reaches to the next range's start.
  // Addresses in no range have the default policy.
  absl::Span<const NumaMapsRange> ranges;
  // Free bytes per node, now. Nodes not listed are unknown: never targets,
  // never demoted from.
  absl::Span<const NodeFree> free;
  // Nodes the migrator backed off after ENOMEM (Migrator node back-off):
  // never targets this round.
  absl::Span<const int> backed_off_nodes;
  // Pages on ping-pong hold (PingPongTracker::IsHeld bound to the round's
  // time); null: none. Called with PageHeat::vaddr; must be pure for the
  // round (the result is deterministic only if it is).
  std::function<bool(uint64_t vaddr)> is_held;
};

struct NodeWatermarks {
  int node = -1;
  uint64_t low_bytes = 0;
  uint64_t high_bytes = 0;
};

// Per-node weights for weighted placement (--weights).
struct NodeWeight {
  int node = -1;
  int weight = 1;  // 1..255, as the kernel's weighted_interleave/nodeN
};

struct WeightsConfig {
  enum class Source {
    kNone,    // no weighted placement (nearest target first)
    kKernel,  // Topology NodeInfo::weight (weighted_interleave/nodeN)
    kAuto,    // derived from HMAT read bandwidth (--weights auto)
    kGiven,   // --weights 0:3,1:1
  };
  Source source = Source::kNone;
  std::vector<NodeWeight> given;  // kGiven: ascending node, unique
};

// Parses --weights: "auto", "kernel", or "N:W[,N:W...]" (node ids >= 0,
// weights 1..255, each node once). Errors quote the offending item.
absl::StatusOr<WeightsConfig> ParseWeights(absl::string_view text);

// The weight of every topology node under `weights` (index: position in
// topology.nodes, in the same order). Nodes without a weight get 1, the
// kernel's default. kAuto: weights proportional to HMAT read bandwidth,
// scaled to at most 32 total before reducing by the GCD, each at least 1
// (as the kernel's reduce_interleave_weights); an error names a memory node
// without HMAT read bandwidth. kGiven: an error names a node not in the
// topology. kNone: all 1.
absl::StatusOr<std::vector<NodeWeight>> ResolveWeights(
    const WeightsConfig& weights, const Topology& topology);

struct PlacementConfig {
  // --promote-to NODES: a preferred-many mask for promotion targets. Empty:
  // every node of the fastest tier (Topology::FastNodes()).
  std::vector<int> promote_to;
  // Watermarks as fractions of each node's memory (see the file comment),
  // and explicit per-node overrides in bytes.
  double low_watermark_fraction = 0.02;
  double high_watermark_fraction = 0.04;
  std::vector<NodeWatermarks> watermarks;
  // Per-round budget; a move that would exceed either is skipped (kBudget).
  // 256 MiB is one second of the migrator's default 256 MB/s rate limit;
  // 65536 moves is the migrator's default queue capacity (more would be
  // refused there).
  uint64_t max_move_bytes = uint64_t{256} << 20;
  size_t max_moves = 65536;
  // A candidate is promoted only if its rate_lo exceeds this (0: at least
  // some evidence of access; the Garwood lower bound of 0 samples is 0).
  double min_promote_rate_lo_per_sec = 0;

  // ---- Issue 6 rules; the defaults keep the issue-5 behaviour. ----
  // Rule W (--weights): spread promotions over qualifying targets by weight
  // (WeightedTargetStrategy; MakeTargetStrategy builds it).
  WeightsConfig weights;
  // Rule P (--package-aware): prefer targets in the package of the page's
  // accessor node while they have room (WeightedTargetStrategy).
  bool package_aware = false;
  // Rule L (--locality): move hot private pages on the fastest tier to
  // their accessor's node (PlacementInput::hot_on_fast).
  bool locality = false;
  // Rule L moves a page only on at least this many samples
  // (PageHeat::samples). The table calls a page shared from 2 foreign
  // samples (and 1/8 of its count), so on few samples a shared page reads
  // as private: with s samples of a page two nodes use evenly, P(at most 1
  // foreign) = (s + 1) / 2^s, 0.3% at 12 (21% at 5). A wrong locality
  // move costs a migration and gains nothing, so the rule waits for the
  // evidence; measured in the 2pkg+cxl guest (attach_locality_vm_test), 5
  // samples moved 14% of a shared set, 12 moved none.
  uint32_t locality_min_samples = 12;
  // Rule I (--keep-interleave): interleave / weighted-interleave ranges keep
  // their per-node byte shares within this tolerance (a fraction, e.g. 0.05
  // = 5 percentage points) of the policy's shares. Negative: off.
  double interleave_tolerance = -1;
  // Rule H (--huge-strict): a huge page (page_bytes >= 2 MiB) with a
  // preferred node (range `prefer` / `prefer (many)`, else promote_to) goes
  // only there; it is never placed on another node (kHugePreferredFull).
  bool huge_strict_preferred = false;
};

// Checks config against the machine: promote_to and watermark nodes exist,
// fractions in [0, 1], low <= high. Messages name the node or value.
absl::Status ValidatePlacementConfig(const PlacementConfig& config,
                                     const Topology& topology);

enum class PlacementReason : uint8_t { kPromote, kDemote };
const char* PlacementReasonName(PlacementReason r);

// Why a demotion was decided (promotions: kRoom or kSwap).
enum class PlacementTrigger : uint8_t {
  kRoom,       // promotion into free room above the high watermark
  kSwap,       // promotion that displaced victims / demotion displaced by one
  kWatermark,  // demotion: source below its low watermark
  kLocality,   // move within the fastest tier to the accessor's node
};
const char* PlacementTriggerName(PlacementTrigger t);

// One decided move. To a migrator MoveRequest: vaddr, page_bytes,
// from_node, to_node as they are; reason kPromote -> MoveReason::kPromote,
// kDemote -> MoveReason::kDemote.
struct PlannedMove {
  uint64_t vaddr = 0;
  uint32_t page_bytes = 0;
  int from_node = -1;
  int to_node = -1;
  PlacementReason reason = PlacementReason::kPromote;
  PlacementTrigger trigger = PlacementTrigger::kRoom;
  // Evidence: the page's rate interval.
  double rate = 0;
  double rate_lo = 0;
  double rate_hi = 0;
  // kSwap: the promoted page this demotion made room for (on a demotion),
  // or the first page displaced (on a promotion); 0 otherwise.
  uint64_t paired_vaddr = 0;
};

enum class SkipReason : uint8_t {
  kHeld,                  // on ping-pong hold
  kBindForbidden,         // MPOL_BIND allows no target
  kOutsidePreferredMany,  // promote_to / prefer (many) mask allows no target
  kNotEnoughEvidence,     // rate_lo too low, or not above a demoted page
  kNotHotterThanVictim,   // targets full; no victim provably colder
  kTargetBackedOff,       // every allowed target backed off
  kNoRoom,                // targets full and nothing to displace
  kBudget,                // round byte or move budget spent
  kWrongTier,             // no faster (promotion) / slower (demotion) tier
  kUnknownNode,           // current node unknown or not in the topology
  kInvalidPage,           // vaddr not aligned / bad page_bytes
  kDuplicate,             // page already listed or moved this round
  kInterleaveRatio,       // every target would break the range's ratio
  kHugePreferredFull,     // huge page: its preferred node(s) cannot take it
  kCount,
};
inline constexpr size_t kNumSkipReasons =
    static_cast<size_t>(SkipReason::kCount);
const char* SkipReasonName(SkipReason r);

struct SkipCounts {
  std::array<uint64_t, kNumSkipReasons> pages{};
  uint64_t& operator[](SkipReason r) { return pages[static_cast<size_t>(r)]; }
  uint64_t operator[](SkipReason r) const {
    return pages[static_cast<size_t>(r)];
  }
  uint64_t total() const;
};

// A node's state over the round.
struct NodePlan {
  int node = -1;
  std::optional<uint64_t> free_before;  // nullopt: unknown
  uint64_t free_after = 0;              // projected, after all moves
  uint64_t low_bytes = 0;
  uint64_t high_bytes = 0;
  bool backed_off = false;
  bool below_low = false;  // triggered watermark demotion
};

struct PlacementDecision {
  // In the order decided: watermark demotions first, then per promotion its
  // displacing demotions followed by the promotion itself (a demotion
  // always precedes the promotion that needs its room).
  std::vector<PlannedMove> moves;
  SkipCounts promote_skipped;  // candidates not promoted, by reason
  SkipCounts demote_skipped;   // victims needed but not demoted, by reason
  uint64_t promoted_pages = 0, promoted_bytes = 0;
  uint64_t demoted_pages = 0, demoted_bytes = 0;
  // Promotions that did not get their first-choice target.
  uint64_t fallback_targets = 0;
  // Locality moves (trigger kLocality, reason kPromote; not in promoted_*).
  uint64_t locality_pages = 0, locality_bytes = 0;
  SkipCounts locality_skipped;  // hot_on_fast pages not moved, by reason
  std::vector<NodePlan> nodes;  // ascending node id
};

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
};

// The issue-5 strategy. Promotion: the node local to the CPUs that access
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
// Nodes without room are skipped, so the ratio among the rest holds. The
// cursor persists across rounds (BeginRound does not reset it), so small
// rounds still spread; a fresh strategy fed the same rounds decides the
// same. Without weights (kNone) the pick is the nearest node instead.
// package_aware: the targets in the accessor node's package come first
// (their own cursor, weights within the package); only when none of them
// has room, the rest (another cursor). After the pick, the remaining
// targets follow in nearest order (for displacement). Demotion: as
// NearestTargetStrategy.
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
  NearestTargetStrategy nearest_;
};

// The strategy `config` asks for: WeightedTargetStrategy when weights are
// set or package_aware, else NearestTargetStrategy. Errors from
// ResolveWeights.
absl::StatusOr<std::unique_ptr<TargetStrategy>> MakeTargetStrategy(
    const PlacementConfig& config, const Topology& topology);

// Decides one round with NearestTargetStrategy.
PlacementDecision DecideMoves(const PlacementInput& input,
                              const PlacementConfig& config);
// ... with a given strategy (BeginRound is called first).
PlacementDecision DecideMoves(const PlacementInput& input,
                              const PlacementConfig& config,
                              TargetStrategy& strategy);

// The policy range containing `vaddr` in `sorted` (ascending start), or
// null. A range with end == 0 reaches to the next range's start.
const NumaMapsRange* FindRange(absl::Span<const NumaMapsRange* const> sorted,
                               uint64_t vaddr);

// Watermarks of `node` under `config` (override, else fractions of its
// memory_bytes).
NodeWatermarks WatermarksFor(const PlacementConfig& config,
                             const Topology& topology, int node);

// One line per move and the counters, for logs and golden tests.
std::string DecisionToString(const PlacementDecision& decision);

}  // namespace hotpage

#endif  // HOTPAGE_POLICY_PLACEMENT_H_
