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
//    first by (min(rate_hi, long_hi) asc, rate_hi asc, rate asc, ...), and
//    with PlacementInput::victims_by_prior (the engine's change window) by
//    min(rate_hi, long_hi, prior_hi): coldest under either model, so that a
//    victim only the prior can show cold (after a shift: policy/engine.h)
//    is not queued behind one that neither model can. A page listed twice
//    is considered once (the rest count as kDuplicate).
// 1. Watermark demotion. Every node that has a slower tier below it and
//    whose free memory is below its low watermark demotes its coldest
//    victims until its projected free memory reaches the high watermark.
//    Each victim goes to the first demotion target (below) that its bind
//    policy allows, that is not backed off and that keeps its own low
//    watermark.
// 2. Promotion. Each candidate, hottest first:
//    a. never moved if held for ping-pong (kHeld);
//    b. needs evidence: rate_lo > config.min_promote_rate_lo_per_sec and
//       rate_lo > rate_hi of every page demoted so far in the round, or the
//       same with prior_lo and prior_hi, the second model's bounds
//       (PageHeat; kNotEnoughEvidence; a test never mixes the two models),
//       or, with PlacementInput::prior (long_prior), the prior's pair form
//       against the largest count demoted so far under it (rule e).
//       Together with the order of rules 1 and 2c this keeps the round
//       invariant: every promoted page is provably hotter (lo > hi, or the
//       pair form, under one model) than every demoted page; and it must
//       pay its move:
//       rate > input.migration_margin_per_sec per 4 KiB page
//       (kNotWorthTheCost; the margin is the engine's benefit-against-cost
//       test, policy/engine.h);
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
//       candidate.rate_lo > victim.rate_hi (hotness ShouldPromote) or
//       candidate.prior_lo > victim.prior_hi or candidate.long_prior_lo >
//       victim.long_prior_hi, or, with PlacementInput::prior
//       (long_prior), the pair's joint posterior under that prior puts at
//       most pair_tail on the candidate not being hotter (PageHeat::
//       prior_count; policy/count_prior.h, "The pair test") (the
//       victims' order is by the smallest upper
//       bound (rule 0): a victim that no model beats is passed over while
//       its smallest upper bound is below the candidate's largest lower
//       bound, at most as many times in a round as there are victims (a
//       round stays linear: PlacementDecision::passed_over_victims); the
//       first other one that fails every test ends the search), and
//       the pair's two moves pay (candidate.rate - victim.rate > 2 x the
//       margin per 4 KiB page, else kNotWorthTheCost), until the
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
// page at a time each round. On a small node 2% can lie below the kernel's
// own reserve; attach and the daemon then start the watermarks at the
// kernel's floor (KernelFloorWatermarks below), the 2% gap kept.
//
// Promotions that reclaim makes room for (PlacementInput::
// reclaim_makes_room: the kernel demotes on reclaim and the engine does not
// see the fast tier). A candidate with PageHeat::repeated that finds no room
// on any allowed target and nothing to displace (what would be kNoRoom) is
// promoted into the first target in the strategy's order (trigger
// kReclaim; PlacementDecision::reclaim_pages), within the budget; the
// target's free bytes go below its watermarks and its reclaim demotes what
// its LRU holds coldest. Swaps with victims it is given come first.
//
// 3. Locality (rule L below), after every promotion has taken its room.
//
// ## Target choice and the opt-in rules (defaults = the above)
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
//    one unit, as one folio is for the kernel). A divisible page
//    (PageHeat::divisible: a 2 MiB entry of DAMON region evidence over 4 KiB
//    pages, not a THP) is not one unit: when two or more targets of its
//    group have room for all of it, its base pages are split over them by
//    weight, one contiguous run per node (TargetStrategy::SplitPromotion;
//    PlannedMove::entry_bytes marks the parts), so the ratio holds by pages
//    however few regions there are. Never for a page of an interleaved range
//    under rule I, never through displacement (a swap moves whole pages).
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
//    Shared pages stay; a page with less than locality_min_samples of
//    evidence (PageHeat::samples: the engine's sequential test over all its
//    samples since it was homed, not reset by the epochs' halving, so a
//    slow source gets there too) is not known to be private
//    (kNotEnoughEvidence). Moves: reason
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

//
// ## Files
//
// placement_types.h (the values), placement_weights.h (--weights),
// target_strategy.h (target order) and this file (the round). Callers
// include this header; it includes the others.

#ifndef HOTPAGE_POLICY_PLACEMENT_H_
#define HOTPAGE_POLICY_PLACEMENT_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "policy/placement_types.h"
#include "policy/placement_weights.h"
#include "policy/target_strategy.h"
#include "policy/topology.h"
#include "tools/base/kernel/numa_maps.h"

namespace hotpage {

// Checks config against the machine: promote_to and watermark nodes exist,
// fractions in [0, 1], low <= high, the weights resolve. Messages name the
// node or value, and a user's option by its name without a flag's spelling
// ("weights: node 9 is not an online memory node; ...", "promote_to: ...",
// "keep_interleave: ..."): the daemon's config keys. A command with flags
// spells it as its flag (tools/engine_flags.h: "--weights: ...").
absl::Status ValidatePlacementConfig(const PlacementConfig& config,
                                     const Topology& topology);

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

// The watermarks that keep each node's low watermark at or above the
// kernel's own floor (`floors`, NodeFloor), to append to config.watermarks.
// On a small node the fractions can fall below what the kernel keeps: on
// the VM tests' 512 MiB node 2% is 10 MiB and 4% 20.1 MiB, while move_pages
// onto it failed with ENOMEM at ~18.75 MiB free (the kernel's refusal level
// there is 17.1-18.2 MiB, its floor 21-23 MiB: tools/base/kernel/zoneinfo.h),
// so the node never read as short and promotions kept failing. For each node of
// `topology` with a floor above its fractions' low watermark and no entry in
// config.watermarks: low = the floor, high = the floor plus the fractions' gap
// (high - low), the same hysteresis. Other nodes get no entry: their fractions
// stand (a big node: on a 9.8 GiB one 2% is 201 MiB, the kernel's floor 125
// MiB), and an explicit override, being there first, is never raised. Pure;
// called once at start-up (attach, the daemon).
std::vector<NodeWatermarks> KernelFloorWatermarks(
    const PlacementConfig& config, const Topology& topology,
    absl::Span<const NodeFloor> floors);

}  // namespace hotpage

#endif  // HOTPAGE_POLICY_PLACEMENT_H_
