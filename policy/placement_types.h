// The values a placement round reads and writes: a page's heat (PageHeat),
// the round's input (PlacementInput) and configuration (PlacementConfig),
// and what it decides (PlannedMove, SkipCounts, PlacementDecision). The
// bottom of the placement files: it depends on nothing of them.
//
// The pieces above it:
//   placement_weights.h  --weights parsing and resolution (rule W's weights)
//   target_strategy.h    the order in which target nodes are tried
//   placement.h          the round algorithm, DecideMoves (its file comment
//                        states every rule the types below refer to)
//
// All are plain values: no system calls, no clocks, no global state.

#ifndef HOTPAGE_POLICY_PLACEMENT_TYPES_H_
#define HOTPAGE_POLICY_PLACEMENT_TYPES_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "policy/topology.h"
#include "tools/base/kernel/numa_maps.h"

namespace hotpage {

class CountPrior;  // policy/count_prior.h: the swap test's pair form

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
  // The fields are ordered by size (the flags last, in one padded word):
  // 112 bytes, not the 128 of an order with a bool between wider fields;
  // a round's lists hold up to top_k each (policy/engine.h).
  uint64_t vaddr = 0;          // aligned to page_bytes
  uint32_t page_bytes = 4096;  // a power of two >= 4096 (4 KiB, 2 MiB)
  int current_node = -1;       // -1: unknown (never moved)
  int accessor_node = -1;      // dominant accessing CPUs' node; -1: unknown
  // Rule L's evidence that the page is private to accessor_node, in
  // samples: the engine's sequential test over every sample since the
  // table homed the page (policy/engine.h, "Evidence that a page is
  // private"): its samples from accessor_node less 7.04 per sample from
  // another node, whole, at least 0, at most locality_min_samples; not
  // reset by the table's halving, so it does not depend on the source's
  // rate. Without --locality (nothing reads it then) the entry's decayed
  // count in samples. Only rule L reads it.
  uint32_t samples = 0;
  double rate = 0;     // accesses per second, point estimate
  double rate_lo = 0;  // confidence bounds of `rate`
  double rate_hi = 0;
  // A second pair of bounds from another model of the same evidence (the
  // engine's empirical-Bayes prior, policy/count_prior.h): a candidate is
  // provably hotter than a victim when rate_lo > rate_hi, or prior_lo >
  // prior_hi. Each test compares bounds of one model; the defaults never
  // pass.
  double prior_lo = 0;
  double prior_hi = std::numeric_limits<double>::infinity();
  // A victim's upper bound from a longer window of its samples (the
  // engine's long window, policy/engine.h), +infinity when there is none.
  // It only ranks victims (the coldest first by min(rate_hi, long_hi,
  // long_prior_hi), with PlacementInput::victims_by_prior also prior_hi):
  // no swap or promotion test reads it.
  double long_hi = std::numeric_limits<double>::infinity();
  // A third pair from a third model: the empirical-Bayes posterior of the
  // long window's count (the engine's long-window prior, policy/engine.h),
  // a candidate's lower bound and a victim's upper bound. The engine sets
  // them only for a page whose recent evidence does not contradict the
  // long window (a candidate that is not cooling, a victim that has not
  // heated up); the defaults never pass. A candidate is provably hotter
  // than a victim when long_prior_lo > long_prior_hi too (one model on
  // both sides, as above); victims also rank by long_prior_hi.
  double long_prior_lo = 0;
  double long_prior_hi = std::numeric_limits<double>::infinity();
  // A victim's long-window Poisson lower bound (0: none): only the
  // victims' order reads it (rank_by_long_window, ShowedCooling).
  double long_lo = 0;
  // The counts the two priors' bounds above came from (in samples; -1:
  // that prior gave this page no bound). With PlacementInput::prior or
  // long_prior, the swap test also asks the prior for the pair's joint
  // posterior (policy/count_prior.h, "The pair test"): a candidate is
  // hotter than a victim when P(lambda_c <= lambda_v) <= pair_tail under
  // one prior, which every pair with lo > hi under it passes too.
  int32_t prior_count = -1;
  int32_t long_prior_count = -1;
  bool shared = false;  // accessed from several nodes
  // The entry is evidence over a range of 4 KiB pages, not one page: a
  // 2 MiB entry of region evidence (DAMON) whose chunk is not backed by a
  // transparent huge page. Rule W may split a divisible page's base pages
  // over several nodes by weight (parts: PlannedMove::entry_bytes); a page
  // that is not divisible (a THP, a 4 KiB page) always moves whole.
  bool divisible = false;
  // A victim the table does not track (the engine's sweep of pages never
  // sampled): watermark demotions may take it even where they take no
  // tracked page (PlacementInput::watermark_demotions).
  bool untracked = false;
  // A candidate sampled at least twice within the engine's repeat window
  // (10 s, cut by the ages of pages reclaim sent back: policy/engine.h,
  // "The repeat window"): the evidence a promotion left to the kernel's
  // reclaim needs
  // (PlacementInput::reclaim_makes_room). One hint fault is one pass's
  // touch; a second pass's is repeated use.
  bool repeated = false;
  // Whether a victim ranks by its long-window bounds alone (long_hi,
  // long_prior_hi): its recent upper bound rate_hi is not below long_lo,
  // so nothing shows it cooled (policy/engine.h, "The long window ranks a
  // victim"). Only the victims' order reads it.
  bool rank_by_long_window = false;
  // The recent evidence shows the page cooled: its recent upper bound is
  // below its long window's lower bound (the one test of the rule, for the
  // full round and the room round alike).
  bool ShowedCooling() const { return rate_hi < long_lo; }
};
static_assert(sizeof(PageHeat) <= 112, "see the field order's comment");

struct NodeFree {
  int node = -1;
  uint64_t free_bytes = 0;
};

// Moves the caller has asked its migrator for and that are not done yet, by
// node: bytes bound onto the node and off it (MemoryView::QueuedMoves).
struct NodeQueued {
  int node = -1;
  uint64_t in_bytes = 0;
  uint64_t out_bytes = 0;
};

// Free memory as it will be once the queued moves are done: each node's
// free bytes less what is queued onto it plus what is queued off it (at
// least 0). Nodes not in `free` stay unknown; a node only in `queued` is
// ignored.
void ProjectQueuedMoves(absl::Span<const NodeQueued> queued,
                        std::vector<NodeFree>* free);

// Rule B (placement.h): an access rate of `node`, in accesses per second:
// to move off it to slower tiers this round because its loaded latency is
// above the next tier's, or that promotions into it may add (the engine's
// bandwidth rule, policy/engine.h).
struct NodeShed {
  int node = -1;
  double rate_per_sec = 0;
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
  // Benefit against cost (policy/engine.h computes it): one migration pays
  // for itself only if the page's rate, in accesses per second, exceeds
  // this margin = cost of one 4 KiB move / (latency saved per access x the
  // horizon over which the page stays hot). On the expected rates (the
  // point estimates; the confidence bounds already decide whether the page
  // is hotter at all): a promotion needs rate > margin per 4 KiB page, a
  // swap (the victim's move and the candidate's) candidate.rate -
  // victim.rate > 2 x margin per 4 KiB page. 0: no gate.
  double migration_margin_per_sec = 0;
  // Rule B, bandwidth (policy/engine.h decides both): hot pages on the
  // fastest tier that may be shed to slower tiers, any order (the engine
  // lists the hottest of each shedding node), and per node the access
  // rate to shed. Empty: no shedding.
  absl::Span<const PageHeat> shed_candidates;
  absl::Span<const NodeShed> bandwidth_shed;
  // Per node, the access rate (accesses per second, the candidates'
  // `rate`) that promotions into it may add this round, net of the victims
  // they displace: the demand it can take before its loaded latency
  // reaches the next tier's. Nodes not listed: no limit.
  absl::Span<const NodeShed> promote_headroom;
  // Victims rank coldest first by min(rate_hi, long_hi, prior_hi) instead
  // of min(rate_hi, long_hi) (placement.h rule 0), for watermark demotions
  // and swaps alike. The engine sets it while its change window is open
  // (policy/engine.h): the prior's bounds then describe the new regime
  // only, and a page of the old hot set that drew no sample since the
  // change point is colder than one that did, whatever its long window.
  bool victims_by_prior = false;
  // Watermark demotions (rule 0's demotions of a node below its low
  // watermark) of tracked pages. The engine turns them off for a source
  // that sees only some accesses (policy/engine.h, "Watermark demotions
  // need a full view"); untracked victims (PageHeat::untracked) stay
  // eligible.
  bool watermark_demotions = true;
  // The kernel demotes on reclaim (/sys/kernel/mm/numa/demotion_enabled)
  // and the engine does not see the fast tier (PageHeat victims are not
  // given): a candidate sampled twice within the long window
  // (PageHeat::repeated) that finds no room and nothing to displace on any
  // allowed target is promoted into the first of them anyway (trigger
  // kReclaim), within the budget; the allocation wakes the target's
  // reclaim, which demotes the pages its LRU holds coldest (placement.h,
  // "Promotions that reclaim makes room for").
  bool reclaim_makes_room = false;
  // The priors PageHeat::prior_count and long_prior_count refer to, for the
  // swap test's pair form (placement.h rules 2b and 2e); null: only the
  // bounds are compared. pair_tail: the largest posterior probability that
  // a candidate is not hotter than a victim for it to count as hotter (the
  // engine passes a, the bounds' one-sided tail; lo > hi guarantees 2a).
  const CountPrior* prior = nullptr;
  const CountPrior* long_prior = nullptr;
  double pair_tail = 0;
};

struct NodeWatermarks {
  int node = -1;
  uint64_t low_bytes = 0;
  uint64_t high_bytes = 0;
};

// The free memory of a node below which the kernel itself starts
// reclaiming for a movable allocation there, a margin above where it
// refuses one (tools/base/kernel/zoneinfo.h NodeKernelReserve; attach and
// the daemon read it from /proc/zoneinfo: KernelFloorWatermarks).
struct NodeFloor {
  int node = -1;
  uint64_t bytes = 0;
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

struct PlacementConfig {
  // --promote-to NODES: a preferred-many mask for promotion targets. Empty:
  // every node of the fastest tier (Topology::FastNodes()).
  std::vector<int> promote_to;
  // Watermarks as fractions of each node's memory (see the file comment),
  // and explicit per-node overrides in bytes (the last for a node wins;
  // attach and the daemon append KernelFloorWatermarks here).
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

  // ---- Opt-in rules; the defaults keep the nearest-target behaviour. ----
  // Rule W (--weights): spread promotions over qualifying targets by weight
  // (WeightedTargetStrategy; MakeTargetStrategy builds it).
  WeightsConfig weights;
  // Rule P (--package-aware): prefer targets in the package of the page's
  // accessor node while they have room (WeightedTargetStrategy).
  bool package_aware = false;
  // Rule L (--locality): move hot private pages on the fastest tier to
  // their accessor's node (PlacementInput::hot_on_fast).
  bool locality = false;
  // Rule L moves a page only on at least this much evidence that it is
  // private (PageHeat::samples: home samples, less 7.04 per foreign one,
  // over every sample since the page was homed, not the decayed window;
  // policy/engine.h, "Evidence that a page is private"). On few samples a
  // shared page reads as private: a page two nodes use evenly reaches 12
  // with probability at most (128/255)^12 = 2.6e-4 however long it is
  // watched (the engine's sequential test; on the decayed count's test,
  // at most 1 foreign of 12, it was (s + 1) / 2^s = 0.3% per window). A
  // wrong locality move costs a migration and gains nothing, so the rule
  // waits for the evidence; measured in the 2pkg+cxl guest
  // (attach_locality_vm_test), 5 decayed samples moved 14% of a shared set,
  // 12 moved none. 0: every page with a known accessor passes.
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

enum class PlacementReason : uint8_t { kPromote, kDemote };
const char* PlacementReasonName(PlacementReason r);

// Why a demotion was decided (promotions: kRoom or kSwap).
enum class PlacementTrigger : uint8_t {
  kRoom,       // promotion into free room above the high watermark
  kSwap,       // promotion that displaced victims / demotion displaced by one
  kWatermark,  // demotion: source below its low watermark
  kLocality,   // move within the fastest tier to the accessor's node
  kBandwidth,  // demotion of a hot page: its node's bandwidth (rule B)
  kReclaim,    // promotion into a full node whose reclaim demotes
               // (PlacementInput::reclaim_makes_room)
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
  // 0: the move is the whole entry [vaddr, + page_bytes). Otherwise it is
  // one part of a divisible entry of entry_bytes bytes (rule W's split,
  // PageHeat::divisible), aligned to entry_bytes: [vaddr, + page_bytes) is
  // a 4 KiB-aligned run of its base pages, and the entry's other parts are
  // other moves of the same round (adjacent, ascending vaddr).
  uint32_t entry_bytes = 0;
  // The entry this move belongs to.
  uint64_t entry_vaddr() const {
    return entry_bytes == 0 ? vaddr : vaddr & ~uint64_t{entry_bytes - 1};
  }
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
  kNotWorthTheCost,       // the latency it would save does not pay its moves
  kBandwidth,             // promotion: over the fast tier's bandwidth headroom;
                          // shed: hotter than what is left to shed (rule B)
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
// The nonzero counts as "name:pages,name:pages" (empty when none): for
// logs and test diagnostics.
std::string SkipCountsString(const SkipCounts& c);

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
  // Promotions into a full node left to the kernel's reclaim (trigger
  // kReclaim; also in promoted_*).
  uint64_t reclaim_pages = 0;
  // Victims a swap passed over, not provably colder by any single model
  // (rule e); at most the victims' count in a round.
  uint64_t passed_over_victims = 0;
  // Locality moves (trigger kLocality, reason kPromote; not in promoted_*).
  uint64_t locality_pages = 0, locality_bytes = 0;
  SkipCounts locality_skipped;  // hot_on_fast pages not moved, by reason
  // Rule B's demotions (trigger kBandwidth; also in demoted_*) and the
  // access rate they take off the fast tier (the sum of their `rate`).
  uint64_t shed_pages = 0, shed_bytes = 0;
  double shed_rate_per_sec = 0;
  SkipCounts shed_skipped;      // shed_candidates not shed, by reason
  std::vector<NodePlan> nodes;  // ascending node id
};

// One line per move and the counters, for logs and golden tests.
std::string DecisionToString(const PlacementDecision& decision);

}  // namespace hotpage

#endif  // HOTPAGE_POLICY_PLACEMENT_TYPES_H_
