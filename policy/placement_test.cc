#include "policy/placement.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"
#include "hotness/rate_stats.h"
#include "policy/count_prior.h"
#include "policy/topology.h"
#include "tools/base/kernel/kernel_fs.h"
#include "tools/base/kernel/numa_maps.h"

namespace hotpage {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kGiB = uint64_t{1} << 30;

NodeInfo Node(int id, std::vector<int> cpus, std::vector<int> distance,
              int tier, int package) {
  NodeInfo n;
  n.id = id;
  n.cpus = std::move(cpus);
  n.memory_bytes = kGiB;
  n.distance = std::move(distance);
  n.tier = tier;
  n.package = package;
  return n;
}

// The 2pkg-cxl guest by hand: DRAM nodes 0 and 1 in packages 0 and 1, and a
// CPU-less slower node 2 (package 1). `d2` are node 2's distances to 0, 1.
Topology ThreeNodes(int d20 = 24, int d21 = 24) {
  Topology t;
  t.nodes.push_back(Node(0, {0}, {10, 21, d20}, 0, 0));
  t.nodes.push_back(Node(1, {1}, {21, 10, d21}, 0, 1));
  t.nodes.push_back(Node(2, {}, {d20, d21, 10}, 1, 1));
  t.tiers = {MemoryTier{0, {0, 1}}, MemoryTier{1, {2}}};
  t.packages = {Package{0, {0}}, Package{1, {1, 2}}};
  return t;
}

PageHeat Page(uint64_t vaddr, int node, double lo, double hi,
              int accessor = -1) {
  PageHeat p;
  p.vaddr = vaddr;
  p.page_bytes = kPage;
  p.current_node = node;
  p.accessor_node = accessor;
  p.rate_lo = lo;
  p.rate_hi = hi;
  p.rate = (lo + hi) / 2;
  p.samples = 100;  // plenty for rule L; tests of its threshold set less
  return p;
}

NumaMapsRange Range(uint64_t start, uint64_t end, MempolicyMode mode,
                    std::vector<int> nodes) {
  NumaMapsRange r;
  r.start = start;
  r.end = end;
  r.mode = mode;
  r.nodes = std::move(nodes);
  return r;
}

// A test round: owns everything a PlacementInput points at. Watermarks are
// explicit (low 100 pages, high 200 pages on every node) unless changed.
struct Round {
  Topology topo = ThreeNodes();
  std::vector<PageHeat> candidates, victims, hot_on_fast;
  std::vector<NumaMapsRange> ranges;
  std::vector<NodeFree> free = {
      {0, 1000 * kPage}, {1, 1000 * kPage}, {2, 1000 * kPage}};
  std::vector<int> backed_off;
  std::set<uint64_t> held;
  PlacementConfig config;
  double margin = 0;
  const CountPrior* prior = nullptr;
  const CountPrior* long_prior = nullptr;
  double pair_tail = 0;
  bool victims_by_prior = false;

  Round() {
    for (int n = 0; n < 3; ++n)
      config.watermarks.push_back({n, 100 * kPage, 200 * kPage});
  }
  void SetFree(int node, uint64_t pages) {
    for (NodeFree& f : free) {
      if (f.node == node) f.free_bytes = pages * kPage;
    }
  }
  PlacementInput Input() const {
    PlacementInput in;
    in.topology = &topo;
    in.candidates = candidates;
    in.victims = victims;
    in.hot_on_fast = hot_on_fast;
    in.ranges = ranges;
    in.free = free;
    in.backed_off_nodes = backed_off;
    in.migration_margin_per_sec = margin;
    in.prior = prior;
    in.long_prior = long_prior;
    in.pair_tail = pair_tail;
    in.victims_by_prior = victims_by_prior;
    if (!held.empty())
      in.is_held = [this](uint64_t a) { return held.count(a) > 0; };
    return in;
  }
  PlacementDecision Decide() const { return DecideMoves(Input(), config); }
};

uint64_t A(int i) { return 0x7f0000000000ull + uint64_t(i) * kPage; }

// ---------------------------------------------------------------------------
// Promotion.

TEST(Placement, PromotesHotSlowPageToFastNode) {
  Round r;
  r.candidates = {Page(A(1), 2, 10, 20, /*accessor=*/0)};
  PlacementDecision d = r.Decide();
  ASSERT_EQ(d.moves.size(), 1u);
  const PlannedMove& m = d.moves[0];
  EXPECT_EQ(m.vaddr, A(1));
  EXPECT_EQ(m.from_node, 2);
  EXPECT_EQ(m.to_node, 0);
  EXPECT_EQ(m.reason, PlacementReason::kPromote);
  EXPECT_EQ(m.trigger, PlacementTrigger::kRoom);
  EXPECT_EQ(m.rate_lo, 10);
  EXPECT_EQ(m.rate_hi, 20);
  EXPECT_EQ(d.promoted_pages, 1u);
  EXPECT_EQ(d.promoted_bytes, kPage);
  EXPECT_EQ(d.promote_skipped.total(), 0u);
}

TEST(Placement, PrefersAccessorLocalNode) {
  Round r;
  r.candidates = {Page(A(1), 2, 10, 20, /*accessor=*/1),
                  Page(A(2), 2, 10, 20, /*accessor=*/0)};
  PlacementDecision d = r.Decide();
  ASSERT_EQ(d.moves.size(), 2u);
  std::map<uint64_t, int> to;
  for (const PlannedMove& m : d.moves) to[m.vaddr] = m.to_node;
  EXPECT_EQ(to[A(1)], 1);
  EXPECT_EQ(to[A(2)], 0);
}

TEST(Placement, UnknownAccessorGoesToNearestNodeFromCurrent) {
  Round r;
  r.topo = ThreeNodes(/*d20=*/30, /*d21=*/20);
  r.candidates = {Page(A(1), 2, 10, 20, /*accessor=*/-1)};
  PlacementDecision d = r.Decide();
  ASSERT_EQ(d.moves.size(), 1u);
  EXPECT_EQ(d.moves[0].to_node, 1);
}

TEST(Placement, FallsBackToNearestNodeWithRoom) {
  Round r;
  r.SetFree(0, 200);  // exactly at high: a promotion would go below it
  r.candidates = {Page(A(1), 2, 10, 20, /*accessor=*/0)};
  PlacementDecision d = r.Decide();
  ASSERT_EQ(d.moves.size(), 1u);
  EXPECT_EQ(d.moves[0].to_node, 1);
  EXPECT_EQ(d.fallback_targets, 1u);
}

TEST(Placement, FillsTargetOnlyDownToHighWatermark) {
  Round r;
  r.SetFree(0, 205);
  r.SetFree(1, 200);
  for (int i = 0; i < 10; ++i) r.candidates.push_back(Page(A(i), 2, 10, 20, 0));
  PlacementDecision d = r.Decide();
  EXPECT_EQ(d.promoted_pages, 5u);
  EXPECT_EQ(d.promote_skipped[SkipReason::kNoRoom], 5u);
  EXPECT_EQ(d.nodes[0].free_after, 200 * kPage);
}

// PlacementInput::reclaim_makes_room: a full target whose reclaim demotes
// takes a candidate sampled twice within the long window (and no other)
// once nothing is left to displace, in the strategy's order.
TEST(Placement, AFullTargetTakesARepeatedCandidateWhenReclaimMakesRoom) {
  Round r;
  r.SetFree(0, 150);  // below the high watermark: no room
  r.SetFree(1, 150);
  PageHeat once = Page(A(1), 2, 10, 20, /*accessor=*/1);
  PageHeat twice = Page(A(2), 2, 10, 20, /*accessor=*/1);
  twice.repeated = true;
  r.candidates = {once, twice};
  PlacementDecision d = r.Decide();
  EXPECT_TRUE(d.moves.empty());
  EXPECT_EQ(d.promote_skipped[SkipReason::kNoRoom], 2u);

  PlacementInput in = r.Input();
  in.reclaim_makes_room = true;
  d = DecideMoves(in, r.config);
  ASSERT_EQ(d.moves.size(), 1u);
  EXPECT_EQ(d.moves[0].vaddr, A(2));
  EXPECT_EQ(d.moves[0].to_node, 1);  // the accessor's node first
  EXPECT_EQ(d.moves[0].trigger, PlacementTrigger::kReclaim);
  EXPECT_EQ(d.reclaim_pages, 1u);
  EXPECT_EQ(d.promoted_pages, 1u);
  EXPECT_EQ(d.promote_skipped[SkipReason::kNoRoom], 1u);  // seen once
  EXPECT_STREQ(PlacementTriggerName(d.moves[0].trigger), "reclaim");

  // A victim a candidate provably beats is still displaced first (a swap,
  // for the first candidate); the next finds none and is left to reclaim.
  r.victims = {Page(A(9), 1, 0, 1)};
  in = r.Input();
  in.reclaim_makes_room = true;
  d = DecideMoves(in, r.config);
  ASSERT_EQ(d.moves.size(), 3u);
  EXPECT_EQ(d.moves[1].vaddr, A(1));
  EXPECT_EQ(d.moves[1].trigger, PlacementTrigger::kSwap);
  EXPECT_EQ(d.moves[2].vaddr, A(2));
  EXPECT_EQ(d.moves[2].trigger, PlacementTrigger::kReclaim);
  EXPECT_EQ(d.reclaim_pages, 1u);
}

TEST(Placement, BackedOffNodeIsSkippedForNext) {
  Round r;
  r.backed_off = {0};
  r.candidates = {Page(A(1), 2, 10, 20, /*accessor=*/0)};
  PlacementDecision d = r.Decide();
  ASSERT_EQ(d.moves.size(), 1u);
  EXPECT_EQ(d.moves[0].to_node, 1);

  r.backed_off = {0, 1};
  d = r.Decide();
  EXPECT_TRUE(d.moves.empty());
  EXPECT_EQ(d.promote_skipped[SkipReason::kTargetBackedOff], 1u);
}

TEST(Placement, UnknownFreeMemoryIsNeverATarget) {
  Round r;
  r.free = {{1, 1000 * kPage}, {2, 1000 * kPage}};  // node 0 unknown
  r.candidates = {Page(A(1), 2, 10, 20, /*accessor=*/0)};
  PlacementDecision d = r.Decide();
  ASSERT_EQ(d.moves.size(), 1u);
  EXPECT_EQ(d.moves[0].to_node, 1);
}

TEST(Placement, NotEnoughEvidenceIsNotPromoted) {
  Round r;
  r.config.min_promote_rate_lo_per_sec = 5;
  r.candidates = {Page(A(1), 2, 0, 3), Page(A(2), 2, 5, 9),
                  Page(A(3), 2, 6, 9)};
  PlacementDecision d = r.Decide();
  ASSERT_EQ(d.moves.size(), 1u);
  EXPECT_EQ(d.moves[0].vaddr, A(3));
  EXPECT_EQ(d.promote_skipped[SkipReason::kNotEnoughEvidence], 2u);
}

TEST(Placement, PageAlreadyOnFastestTierIsWrongTier) {
  Round r;
  r.candidates = {Page(A(1), 0, 10, 20)};
  PlacementDecision d = r.Decide();
  EXPECT_TRUE(d.moves.empty());
  EXPECT_EQ(d.promote_skipped[SkipReason::kWrongTier], 1u);
}

TEST(Placement, UnknownCurrentNodeIsNotMoved) {
  Round r;
  r.candidates = {Page(A(1), -1, 10, 20), Page(A(2), 7, 10, 20)};
  PlacementDecision d = r.Decide();
  EXPECT_TRUE(d.moves.empty());
  EXPECT_EQ(d.promote_skipped[SkipReason::kUnknownNode], 2u);
}

TEST(Placement, InvalidAndDuplicatePagesAreCounted) {
  Round r;
  PageHeat unaligned = Page(A(1) + 8, 2, 10, 20);
  PageHeat bad_size = Page(A(2), 2, 10, 20);
  bad_size.page_bytes = 12288;
  r.candidates = {unaligned, bad_size, Page(A(3), 2, 10, 20),
                  Page(A(3), 2, 9, 20)};
  PlacementDecision d = r.Decide();
  ASSERT_EQ(d.moves.size(), 1u);
  EXPECT_EQ(d.moves[0].rate_lo, 10);  // the hotter listing of A(3) wins
  EXPECT_EQ(d.promote_skipped[SkipReason::kInvalidPage], 2u);
  EXPECT_EQ(d.promote_skipped[SkipReason::kDuplicate], 1u);
}

// ---------------------------------------------------------------------------
// Demotion.

TEST(Placement, DemotesBelowLowUntilHighColdestFirst) {
  Round r;
  r.SetFree(0, 50);  // below low (100): demote until high (200): 150 pages
  for (int i = 0; i < 300; ++i) r.victims.push_back(Page(A(i), 0, 0, 1000 - i));
  PlacementDecision d = r.Decide();
  ASSERT_EQ(d.moves.size(), 150u);
  EXPECT_EQ(d.demoted_pages, 150u);
  for (const PlannedMove& m : d.moves) {
    EXPECT_EQ(m.reason, PlacementReason::kDemote);
    EXPECT_EQ(m.trigger, PlacementTrigger::kWatermark);
    EXPECT_EQ(m.from_node, 0);
    EXPECT_EQ(m.to_node, 2);
    EXPECT_LE(m.rate_hi, 1000 - 150);  // the coldest 150 (hi 701..850)
  }
  EXPECT_EQ(d.moves.front().rate_hi, 701);
  EXPECT_TRUE(d.nodes[0].below_low);
  EXPECT_EQ(d.nodes[0].free_after, 200 * kPage);
}

TEST(Placement, VictimsRankByTheLowerOfTheirUpperBounds) {
  // Ten victims of equal rate_hi; the long window bounds A(7) and A(3)
  // lower (A(7) the lowest), and A(5)'s long bound is above its rate_hi
  // (no effect). Watermark demotion of 2 pages takes A(7), then A(3).
  Round r;
  r.config.watermarks[0] = {0, 100 * kPage, 100 * kPage};
  r.SetFree(0, 98);
  for (int i = 0; i < 10; ++i) r.victims.push_back(Page(A(i), 0, 0, 10));
  r.victims[7].long_hi = 1;
  r.victims[3].long_hi = 2;
  r.victims[5].long_hi = 20;
  PlacementDecision d = r.Decide();
  ASSERT_EQ(d.moves.size(), 2u) << DecisionToString(d);
  EXPECT_EQ(d.moves[0].vaddr, A(7));
  EXPECT_EQ(d.moves[1].vaddr, A(3));
  // The long window prior's upper bound ranks too: A(9)'s is the lowest.
  r.victims[9].long_prior_hi = 0.5;
  d = r.Decide();
  ASSERT_EQ(d.moves.size(), 2u) << DecisionToString(d);
  EXPECT_EQ(d.moves[0].vaddr, A(9));
  EXPECT_EQ(d.moves[1].vaddr, A(7));
  // A NaN bound is an invalid page, never sorted.
  r.victims[1].long_hi = std::nan("");
  r.victims[2].long_prior_hi = std::nan("");
  d = r.Decide();
  EXPECT_EQ(d.demote_skipped[SkipReason::kInvalidPage], 2u);
}

// A victim whose recent bound does not show it cooled ranks by its long
// window alone (PageHeat::rank_by_long_window): A(2) drew no sample lately
// (rate_hi 1, the lowest) but its long window says 30; A(6), first touched
// a second ago, has rate_hi 10 and a long window of 4. Without the flag
// A(2) goes first, with it A(6); in the change window
// (victims_by_prior) the flag is not read.
TEST(Placement, AVictimThatHasNotCooledRanksByItsLongWindow) {
  Round r;
  r.config.watermarks[0] = {0, 100 * kPage, 100 * kPage};
  r.SetFree(0, 99);
  for (int i = 0; i < 10; ++i) {
    r.victims.push_back(Page(A(i), 0, 0, 20));
    r.victims.back().long_hi = 40;
  }
  r.victims[2].rate_hi = 1;
  r.victims[2].long_hi = 30;
  r.victims[6].rate_hi = 10;
  r.victims[6].long_hi = 4;
  PlacementDecision d = r.Decide();
  ASSERT_EQ(d.moves.size(), 1u) << DecisionToString(d);
  EXPECT_EQ(d.moves[0].vaddr, A(2));
  for (PageHeat& v : r.victims) v.rank_by_long_window = true;
  d = r.Decide();
  ASSERT_EQ(d.moves.size(), 1u) << DecisionToString(d);
  EXPECT_EQ(d.moves[0].vaddr, A(6));
  // The long window prior's bound ranks too.
  r.victims[8].long_prior_hi = 3;
  d = r.Decide();
  ASSERT_EQ(d.moves.size(), 1u) << DecisionToString(d);
  EXPECT_EQ(d.moves[0].vaddr, A(8));
  r.victims_by_prior = true;
  d = r.Decide();
  ASSERT_EQ(d.moves.size(), 1u) << DecisionToString(d);
  EXPECT_EQ(d.moves[0].vaddr, A(2));
}

// In the change window (PlacementInput::victims_by_prior) the prior's
// upper bound ranks the victims too. `young` drew samples since the change
// point (prior_hi 60) but few over the long window (long_hi 35); `stale`
// is of the old hot set: many samples over the long window, none since
// the change (prior_hi 5). Without the flag `young` comes first and the
// candidate, provably hotter than `stale` under the prior only, is not
// provably hotter than `young`, whose lowest upper bound (35) is above
// the candidate's highest lower bound (30): the swap search stops there. With
// it, `stale` is displaced, by a swap and by a watermark demotion alike.
TEST(Placement, VictimsRankByThePriorInTheChangeWindow) {
  Round r;
  r.SetFree(0, 200);  // at the high watermark: a promotion needs a swap
  r.SetFree(1, 200);
  PageHeat c = Page(A(1), 2, 20, 80, 0);
  c.prior_lo = 30;
  PageHeat young = Page(A(100), 0, 5, 40);
  young.long_hi = 35;
  young.prior_hi = 60;
  PageHeat stale = Page(A(101), 0, 5, 50);
  stale.long_hi = 100;
  stale.prior_hi = 5;
  r.candidates = {c};
  r.victims = {young, stale};
  PlacementDecision d = r.Decide();
  EXPECT_TRUE(d.moves.empty()) << DecisionToString(d);
  EXPECT_EQ(d.promote_skipped[SkipReason::kNotHotterThanVictim], 1u);

  PlacementInput in = r.Input();
  in.victims_by_prior = true;
  d = DecideMoves(in, r.config);
  ASSERT_EQ(d.moves.size(), 2u) << DecisionToString(d);
  EXPECT_EQ(d.moves[0].vaddr, A(101));
  EXPECT_EQ(d.moves[0].trigger, PlacementTrigger::kSwap);
  EXPECT_EQ(d.moves[1].vaddr, A(1));

  // A watermark demotion of one page takes `young` without the flag and
  // `stale` with it.
  r.candidates.clear();
  r.SetFree(0, 99);
  r.config.watermarks[0] = {0, 100 * kPage, 100 * kPage};
  d = r.Decide();
  ASSERT_EQ(d.moves.size(), 1u) << DecisionToString(d);
  EXPECT_EQ(d.moves[0].vaddr, A(100));
  in = r.Input();
  in.victims_by_prior = true;
  d = DecideMoves(in, r.config);
  ASSERT_EQ(d.moves.size(), 1u) << DecisionToString(d);
  EXPECT_EQ(d.moves[0].vaddr, A(101));
  EXPECT_EQ(d.moves[0].trigger, PlacementTrigger::kWatermark);
}

TEST(Placement, NoDemotionBetweenLowAndHigh) {
  Round r;
  r.SetFree(0, 150);
  for (int i = 0; i < 10; ++i) r.victims.push_back(Page(A(i), 0, 0, 1));
  PlacementDecision d = r.Decide();
  EXPECT_TRUE(d.moves.empty());
  EXPECT_FALSE(d.nodes[0].below_low);
}

TEST(Placement, DemotionTargetIsNearestNodeOfNextTier) {
  // Nodes 0, 1 fast; 2 and 3 in tier 1; 4 in tier 2 but nearest of all.
  Topology t;
  t.nodes.push_back(Node(0, {0}, {10, 20, 30, 25, 15}, 0, 0));
  t.nodes.push_back(Node(1, {1}, {20, 10, 25, 30, 15}, 0, 1));
  t.nodes.push_back(Node(2, {}, {30, 25, 10, 20, 20}, 1, 1));
  t.nodes.push_back(Node(3, {}, {25, 30, 20, 10, 20}, 1, 0));
  t.nodes.push_back(Node(4, {}, {15, 15, 20, 20, 10}, 2, 0));
  t.tiers = {MemoryTier{0, {0, 1}}, MemoryTier{1, {2, 3}}, MemoryTier{2, {4}}};
  Round r;
  r.topo = t;
  r.config.watermarks.clear();
  for (int n = 0; n < 5; ++n)
    r.config.watermarks.push_back({n, 100 * kPage, 200 * kPage});
  r.free = {{0, 199 * kPage},
            {1, 199 * kPage},
            {2, 1000 * kPage},
            {3, 1000 * kPage},
            {4, 1000 * kPage}};
  r.SetFree(0, 99);
  r.SetFree(1, 99);
  r.victims = {Page(A(1), 0, 0, 1)};
  for (int i = 0; i < 200; ++i)
    r.victims.push_back(Page(A(10 + i), i < 100 ? 0 : 1, 0, 1));
  PlacementDecision d = r.Decide();
  ASSERT_FALSE(d.moves.empty());
  for (const PlannedMove& m : d.moves) {
    EXPECT_EQ(m.to_node, m.from_node == 0 ? 3 : 2) << DecisionToString(d);
  }
  // When tier 1 is full, the next tier takes them.
  for (NodeFree& f : r.free) {
    if (f.node == 2 || f.node == 3) f.free_bytes = 100 * kPage;
  }
  d = r.Decide();
  ASSERT_FALSE(d.moves.empty());
  for (const PlannedMove& m : d.moves) EXPECT_EQ(m.to_node, 4);
}

// Tiers 0, 1, 2: nodes 0 (CPUs), 1 and 2 (CPU-less), nearest first.
Topology ThreeTiers() {
  Topology t;
  t.nodes.push_back(Node(0, {0}, {10, 20, 30}, 0, 0));
  t.nodes.push_back(Node(1, {}, {20, 10, 20}, 1, 0));
  t.nodes.push_back(Node(2, {}, {30, 20, 10}, 2, 0));
  t.tiers = {MemoryTier{0, {0}}, MemoryTier{1, {1}}, MemoryTier{2, {2}}};
  return t;
}

TEST(Placement, ASwapsVictimUsesOnlyRoomThereWhenItMoves) {
  // Node 0 at its high watermark (no room for a promotion without a swap)
  // and node 1 at its low one (no room for a demotion): a swap between
  // them would put the victim into the room the candidate leaves on node
  // 1, but the migrator moves the victim first (move_requests.h), into a
  // node with no room: ENOMEM, and then none for the candidate either.
  // The victim goes to node 2, which has room now.
  Round r;
  r.topo = ThreeTiers();
  r.SetFree(0, 200);
  r.SetFree(1, 100);
  r.candidates = {Page(A(1), 1, 50, 80, /*accessor=*/0)};
  r.victims = {Page(A(100), 0, 1, 2)};
  PlacementDecision d = r.Decide();
  ASSERT_EQ(d.moves.size(), 2u) << DecisionToString(d);
  EXPECT_EQ(d.moves[0].reason, PlacementReason::kDemote);
  EXPECT_EQ(d.moves[0].to_node, 2) << DecisionToString(d);
  EXPECT_EQ(d.moves[1].reason, PlacementReason::kPromote);
  EXPECT_EQ(d.moves[1].from_node, 1);
  EXPECT_EQ(d.moves[1].to_node, 0);
  // With room on node 1 now, the victim takes the nearer tier.
  r.SetFree(1, 101);
  d = r.Decide();
  ASSERT_EQ(d.moves.size(), 2u) << DecisionToString(d);
  EXPECT_EQ(d.moves[0].to_node, 1);
  // A second candidate promoted out of node 1 in the same round frees no
  // room for the second victim either: it goes to node 2.
  r.SetFree(0, 200);
  r.candidates.push_back(Page(A(2), 1, 50, 80, /*accessor=*/0));
  r.victims.push_back(Page(A(101), 0, 1, 2));
  d = r.Decide();
  ASSERT_EQ(d.moves.size(), 4u) << DecisionToString(d);
  EXPECT_EQ(d.moves[0].to_node, 1);
  EXPECT_EQ(d.moves[2].reason, PlacementReason::kDemote);
  EXPECT_EQ(d.moves[2].to_node, 2) << DecisionToString(d);
}

TEST(Placement, DemotionStopsWhenSlowNodeIsFull) {
  Round r;
  r.SetFree(0, 50);
  r.SetFree(2, 110);  // room for 10 pages above its low watermark
  for (int i = 0; i < 300; ++i) r.victims.push_back(Page(A(i), 0, 0, 1));
  PlacementDecision d = r.Decide();
  EXPECT_EQ(d.demoted_pages, 10u);
  EXPECT_GT(d.demote_skipped[SkipReason::kNoRoom], 0u);
  EXPECT_EQ(d.nodes[2].free_after, 100 * kPage);
}

// ---------------------------------------------------------------------------
// Hotter-than rules.

TEST(Placement, SwapDisplacesProvablyColderVictim) {
  Round r;
  r.SetFree(0, 200);
  r.SetFree(1, 200);  // both fast nodes at high: no room
  r.candidates = {Page(A(1), 2, 50, 80, /*accessor=*/0)};
  r.victims = {Page(A(100), 0, 1, 49), Page(A(101), 0, 1, 2)};
  PlacementDecision d = r.Decide();
  ASSERT_EQ(d.moves.size(), 2u) << DecisionToString(d);
  EXPECT_EQ(d.moves[0].reason, PlacementReason::kDemote);
  EXPECT_EQ(d.moves[0].vaddr, A(101));  // the coldest
  EXPECT_EQ(d.moves[0].trigger, PlacementTrigger::kSwap);
  EXPECT_EQ(d.moves[0].paired_vaddr, A(1));
  EXPECT_EQ(d.moves[0].to_node, 2);
  EXPECT_EQ(d.moves[1].reason, PlacementReason::kPromote);
  EXPECT_EQ(d.moves[1].trigger, PlacementTrigger::kSwap);
  EXPECT_EQ(d.moves[1].to_node, 0);
  EXPECT_EQ(d.moves[1].paired_vaddr, A(101));
  EXPECT_EQ(d.nodes[0].free_after, 200 * kPage);
}

TEST(Placement, SwapNeedsCandidateLoAboveVictimHi) {
  Round r;
  r.SetFree(0, 200);
  r.SetFree(1, 200);
  r.candidates = {Page(A(1), 2, 50, 80, 0)};
  r.victims = {Page(A(100), 0, 1, 50),
               Page(A(101), 1, 10, 60)};  // lo == hi: no
  PlacementDecision d = r.Decide();
  EXPECT_TRUE(d.moves.empty()) << DecisionToString(d);
  EXPECT_EQ(d.promote_skipped[SkipReason::kNotHotterThanVictim], 1u);
}

// Benefit against cost: a promotion into free room needs an expected rate
// (the point estimate, (lo + hi) / 2 here) above the margin, a swap a rate
// difference above twice the margin (two moves).
TEST(Placement, PromotionMustPayItsMigration) {
  Round r;
  r.margin = 40;
  r.candidates = {Page(A(1), 2, 30, 60, 0),   // rate 45 > 40
                  Page(A(2), 2, 20, 50, 0)};  // rate 35
  PlacementDecision d = r.Decide();
  ASSERT_EQ(d.moves.size(), 1u) << DecisionToString(d);
  EXPECT_EQ(d.moves[0].vaddr, A(1));
  EXPECT_EQ(d.promote_skipped[SkipReason::kNotWorthTheCost], 1u);
  r.margin = 0;  // no gate: both
  EXPECT_EQ(r.Decide().moves.size(), 2u);
}

TEST(Placement, SwapMustPayBothMigrations) {
  Round r;
  r.SetFree(0, 200);
  r.SetFree(1, 200);
  r.candidates = {Page(A(1), 2, 50, 80, 0)};  // rate 65
  r.victims = {Page(A(100), 0, 1, 49)};       // rate 25: difference 40
  r.margin = 20;                              // 2 x 20 = 40: not above
  PlacementDecision d = r.Decide();
  EXPECT_TRUE(d.moves.empty()) << DecisionToString(d);
  EXPECT_EQ(d.promote_skipped[SkipReason::kNotWorthTheCost], 1u);
  r.margin = 19;
  EXPECT_EQ(r.Decide().moves.size(), 2u);
}

// The swap test compares bounds of one model: rate_lo against rate_hi (the
// Poisson intervals) or prior_lo against prior_hi (the engine's
// empirical-Bayes posterior). A candidate provably hotter under the prior
// swaps though its Poisson bounds overlap the victim's; one that beats the
// victim only across the two models (its Poisson lower bound over the
// victim's posterior upper bound) does not: that mixed test is what made an
// ungated prior churn (a page's one sample in a short window against a
// victim the prior had made cold).
TEST(Placement, SwapNeedsOneModelsBoundsToSeparate) {
  Round r;
  r.SetFree(0, 200);
  r.SetFree(1, 200);
  PageHeat c = Page(A(1), 2, 20, 80, 0);
  PageHeat v = Page(A(100), 0, 1, 40);
  c.prior_lo = 30;
  v.prior_hi = 25;
  r.candidates = {c};
  r.victims = {v};
  PlacementDecision d = r.Decide();
  ASSERT_EQ(d.moves.size(), 2u) << DecisionToString(d);
  EXPECT_EQ(d.moves[0].vaddr, A(100));
  EXPECT_EQ(d.moves[1].vaddr, A(1));
  // Across the models only: c.rate_lo 30 > v.prior_hi 25, but neither model
  // separates them.
  r.candidates[0].rate_lo = 30;
  r.candidates[0].prior_lo = 20;
  d = r.Decide();
  EXPECT_TRUE(d.moves.empty()) << DecisionToString(d);
  EXPECT_EQ(d.promote_skipped[SkipReason::kNotHotterThanVictim], 1u);
}

// The long window prior is a third model (PageHeat::long_prior_lo/hi): it
// separates a pair on its own, it ranks the victims (its upper bound is
// among the ones whose lowest goes first), and a victim that only the
// order puts first -- colder by the long prior, but beaten by no model --
// is passed over for the next one, which the Poisson bounds separate.
TEST(Placement, SwapByTheLongPriorAndPastAVictimNoModelBeats) {
  Round r;
  r.SetFree(0, 200);
  r.SetFree(1, 200);
  PageHeat c = Page(A(1), 2, 20, 80, 0);
  PageHeat cold = Page(A(100), 0, 1, 40);  // Poisson: not beaten (40 > 20)
  c.long_prior_lo = 30;
  cold.long_prior_hi = 10;
  r.candidates = {c};
  r.victims = {cold};
  PlacementDecision d = r.Decide();
  ASSERT_EQ(d.moves.size(), 2u) << DecisionToString(d);
  EXPECT_EQ(d.moves[0].vaddr, A(100));
  EXPECT_EQ(d.moves[1].vaddr, A(1));
  // The candidate now has no long prior bound: the long prior ranks
  // A(100) first (10, below A(101)'s 15), no model beats it, and A(101)
  // (Poisson upper bound 15 < 20) goes instead.
  r.candidates[0].long_prior_lo = 0;
  r.victims.push_back(Page(A(101), 0, 1, 15));
  r.victims.push_back(Page(A(102), 0, 1, 15));
  r.victims[2].long_prior_hi = 35;  // above its rate_hi: no effect
  d = r.Decide();
  ASSERT_EQ(d.moves.size(), 2u) << DecisionToString(d);
  EXPECT_EQ(d.moves[0].vaddr, A(101));
  EXPECT_EQ(d.moves[1].vaddr, A(1));
  // A victim whose lowest upper bound is not below the candidate's
  // highest lower bound ends the search, as before.
  r.victims[1].rate_hi = 25;
  r.victims[2].rate_hi = 25;
  d = r.Decide();
  EXPECT_TRUE(d.moves.empty()) << DecisionToString(d);
  EXPECT_EQ(d.promote_skipped[SkipReason::kNotHotterThanVictim], 1u);
}

// The pass-over is bounded: 2000 candidates and 2000 victims that the
// long prior ranks cold (10) but no model beats (Poisson upper bound 1000
// above every candidate's lower bound 20-60). Each candidate would scan
// every victim again (4 million steps); a round passes over at most as
// many victims as the list holds. A candidate that the Poisson bound
// separates from a victim after them still swaps while the budget lasts.
TEST(Placement, PassingOverVictimsStaysLinear) {
  Round r;
  r.SetFree(0, 200);
  r.SetFree(1, 200);
  constexpr int kN = 2000;
  for (int i = 0; i < kN; ++i) {
    r.candidates.push_back(Page(A(i), 2, 20 + i % 40, 80, 0));
    r.victims.push_back(Page(A(kN + i), 0, 1, 1000));
    r.victims.back().long_prior_hi = 10;
  }
  r.config.max_moves = 1 << 20;
  r.config.max_move_bytes = uint64_t{1} << 40;
  PlacementDecision d = r.Decide();
  EXPECT_TRUE(d.moves.empty()) << d.moves.size();
  EXPECT_EQ(d.passed_over_victims, static_cast<uint64_t>(kN));
  EXPECT_EQ(d.promote_skipped[SkipReason::kNotHotterThanVictim],
            static_cast<uint64_t>(kN));
  // One victim the Poisson bound separates, after the others: the first
  // candidate passes over all 2000 to reach it; the budget is then spent.
  r.victims.push_back(Page(A(3 * kN), 0, 1, 15));
  r.victims.back().long_prior_hi = 20;
  d = r.Decide();
  ASSERT_EQ(d.moves.size(), 2u) << DecisionToString(d);
  EXPECT_EQ(d.moves[0].vaddr, A(3 * kN));
  EXPECT_EQ(d.passed_over_victims, static_cast<uint64_t>(kN + 1));
}

// Free room after watermark demotions: a candidate must beat every demoted
// page under one model, as in the swap.
TEST(Placement, PromotionIntoDemotedRoomByThePrior) {
  Round r;
  r.SetFree(0, 199);  // below low after override
  r.config.watermarks[0] = {0, 200 * kPage, 201 * kPage};
  PageHeat v = Page(A(100), 0, 1, 50);  // demoted by the watermark
  v.prior_hi = 10;
  PageHeat proven = Page(A(1), 2, 20, 90, 1);
  proven.prior_lo = 11;
  PageHeat mixed = Page(A(2), 2, 20, 90, 1);  // rate_lo 20 > 10, prior 5
  mixed.prior_lo = 5;
  r.victims = {v};
  r.candidates = {proven, mixed};
  PlacementDecision d = r.Decide();
  ASSERT_EQ(d.moves.size(), 2u) << DecisionToString(d);
  EXPECT_EQ(d.moves[0].reason, PlacementReason::kDemote);
  EXPECT_EQ(d.moves[1].vaddr, A(1));
  EXPECT_EQ(d.promote_skipped[SkipReason::kNotEnoughEvidence], 1u);
}

// A prior fitted to a hot set (3000 pages at 2.2 samples a window) and a
// cold rest (6000 at 0.1), their expected count histograms.
CountPrior HotSetAndColdRestPrior() {
  std::vector<uint64_t> h(CountPrior::kMaxCount + 1, 0);
  auto add = [&](double pages, double mean) {
    double p = std::exp(-mean);
    for (size_t k = 0; k < h.size(); ++k) {
      h[k] += static_cast<uint64_t>(std::llround(pages * p));
      p *= mean / static_cast<double>(k + 1);
    }
  };
  add(6000, 0.1);
  add(3000, 2.2);
  CountPrior prior;
  prior.Fit(h, 1.163);
  return prior;
}

// The pair form of the swap test (policy/count_prior.h, "The pair test"):
// a prior fitted to a hot set (2.2 samples a window) and a cold rest (0.1),
// a candidate of count 1 and a victim of count 0 under it. Their bounds
// overlap; their joint posterior says the candidate is hotter (P(not) =
// 0.10 <= a = 0.12). With the prior given, the pair swaps, under either
// prior's counts; without it, or with a victim that has no count under
// that prior, or at a tighter tail, it does not. Rule 2b holds the same
// way: after a watermark demotion of a count-0 page, a count-1 candidate
// takes the room; after one of a count-1 page, it does not.
TEST(Placement, PairFormOfTheSwapTest) {
  const CountPrior prior = HotSetAndColdRestPrior();
  ASSERT_TRUE(prior.fitted());
  const double a = 0.5 * std::erfc(1.163 / std::sqrt(2.0));
  const PoissonBounds b0 = *prior.Bounds(0), b1 = *prior.Bounds(1);
  ASSERT_LE(b1.lo, b0.hi);
  Round r;
  r.SetFree(0, 200);
  r.SetFree(1, 200);
  PageHeat c = Page(A(1), 2, 1, 80, 0);  // Poisson: not hotter (1 < 40)
  PageHeat v = Page(A(100), 0, 1, 40);
  c.prior_lo = b1.lo;
  c.prior_count = 1;
  v.prior_hi = b0.hi;
  v.prior_count = 0;
  r.candidates = {c};
  r.victims = {v};
  PlacementDecision d = r.Decide();  // no prior given: the bounds alone
  EXPECT_TRUE(d.moves.empty()) << DecisionToString(d);
  EXPECT_EQ(d.promote_skipped[SkipReason::kNotHotterThanVictim], 1u);
  r.prior = &prior;
  r.pair_tail = a;
  d = r.Decide();
  ASSERT_EQ(d.moves.size(), 2u) << DecisionToString(d);
  EXPECT_EQ(d.moves[0].vaddr, A(100));
  EXPECT_EQ(d.moves[1].vaddr, A(1));
  r.pair_tail = a / 2;  // P(not hotter) 0.10 is above it
  EXPECT_TRUE(r.Decide().moves.empty());
  r.pair_tail = a;
  r.victims[0].prior_count = -1;  // the prior gave the victim no bound
  EXPECT_TRUE(r.Decide().moves.empty());
  // The long prior's counts, the same way.
  r.victims[0].long_prior_count = 0;
  r.candidates[0].long_prior_count = 1;
  EXPECT_TRUE(r.Decide().moves.empty());  // long_prior not given
  r.long_prior = &prior;
  EXPECT_EQ(r.Decide().moves.size(), 2u);

  // Rule 2b: a watermark demotion sets the bar.
  Round w;
  w.prior = &prior;
  w.pair_tail = a;
  w.SetFree(0, 199);  // below low after the override
  w.config.watermarks[0] = {0, 200 * kPage, 201 * kPage};
  PageHeat demoted = Page(A(100), 0, 1, 50);
  demoted.prior_count = 0;
  PageHeat cand = Page(A(1), 2, 1, 90, 1);
  cand.prior_count = 1;
  w.victims = {demoted};
  w.candidates = {cand};
  d = w.Decide();
  ASSERT_EQ(d.moves.size(), 2u) << DecisionToString(d);
  EXPECT_EQ(d.moves[0].reason, PlacementReason::kDemote);
  EXPECT_EQ(d.moves[1].vaddr, A(1));
  w.victims[0].prior_count = 1;  // a tie: no promotion into its room
  d = w.Decide();
  ASSERT_EQ(d.moves.size(), 1u) << DecisionToString(d);
  EXPECT_EQ(d.promote_skipped[SkipReason::kNotEnoughEvidence], 1u);
}

// A tail of 1/2 (policy/engine.h, "The odds suffice while a slower tier is
// saturated"): under the prior of PairFormOfTheSwapTest a candidate of count
// 2 against a victim of count 1 is more likely hotter than not (P(not
// hotter) = 0.35): no swap at the bounds' tail, a swap at 1/2. Equal counts
// never pass (a shared grid value counts as not hotter).
TEST(Placement, TheOddsSufficeAtATailOfOneHalf) {
  const CountPrior prior = HotSetAndColdRestPrior();
  ASSERT_TRUE(prior.fitted());
  const double a = 0.5 * std::erfc(1.163 / std::sqrt(2.0));
  const double p21 = *prior.ProbNotHotter(2, 1);
  ASSERT_GT(p21, a);
  ASSERT_LT(p21, 0.5);
  ASSERT_GT(*prior.ProbNotHotter(2, 2), 0.5);
  Round r;
  r.SetFree(0, 200);
  r.SetFree(1, 200);
  PageHeat c = Page(A(1), 2, 1, 80, 0);  // Poisson: not hotter (1 < 40)
  PageHeat v = Page(A(100), 0, 1, 40);
  c.prior_lo = prior.Bounds(2)->lo;
  c.prior_count = 2;
  v.prior_hi = prior.Bounds(1)->hi;
  v.prior_count = 1;
  r.candidates = {c};
  r.victims = {v};
  r.prior = &prior;
  r.pair_tail = a;
  PlacementDecision d = r.Decide();
  EXPECT_TRUE(d.moves.empty()) << DecisionToString(d);
  EXPECT_EQ(d.promote_skipped[SkipReason::kNotHotterThanVictim], 1u);
  r.pair_tail = 0.5;
  d = r.Decide();
  ASSERT_EQ(d.moves.size(), 2u) << DecisionToString(d);
  EXPECT_EQ(d.moves[0].vaddr, A(100));
  EXPECT_EQ(d.moves[1].vaddr, A(1));
  r.victims[0].prior_count = 2;  // a tie
  r.victims[0].prior_hi = prior.Bounds(2)->hi;
  EXPECT_TRUE(r.Decide().moves.empty());
}

TEST(Placement, FullTargetsWithoutVictimsIsNoRoom) {
  Round r;
  r.SetFree(0, 200);
  r.SetFree(1, 200);
  r.candidates = {Page(A(1), 2, 50, 80, 0)};
  PlacementDecision d = r.Decide();
  EXPECT_TRUE(d.moves.empty());
  EXPECT_EQ(d.promote_skipped[SkipReason::kNoRoom], 1u);
}

TEST(Placement, NeverPromotesPageNotHotterThanADemotedOne) {
  Round r;
  r.SetFree(0, 199);  // below low after override
  r.config.watermarks[0] = {0, 200 * kPage, 201 * kPage};
  r.victims = {Page(A(100), 0, 40, 50)};      // demoted by the watermark
  r.candidates = {Page(A(1), 2, 50, 90, 1),   // lo == demoted hi: not proven
                  Page(A(2), 2, 51, 90, 1)};  // proven hotter
  PlacementDecision d = r.Decide();
  ASSERT_EQ(d.moves.size(), 2u) << DecisionToString(d);
  EXPECT_EQ(d.moves[0].reason, PlacementReason::kDemote);
  EXPECT_EQ(d.moves[1].vaddr, A(2));
  EXPECT_EQ(d.promote_skipped[SkipReason::kNotEnoughEvidence], 1u);
}

TEST(Placement, HugeCandidateSwapIsAllOrNothing) {
  Round r;
  r.SetFree(0, 200);
  r.SetFree(1, 200);
  PageHeat huge = Page(0x7f0000200000ull, 2, 50, 80, 0);
  huge.page_bytes = 2u << 20;
  r.candidates = {huge};
  for (int i = 0; i < 511; ++i) r.victims.push_back(Page(A(i), 0, 0, 1));
  PlacementDecision d = r.Decide();
  EXPECT_TRUE(d.moves.empty()) << "511 victims cannot make room for 512 pages";
  EXPECT_EQ(d.demoted_pages, 0u);
  EXPECT_EQ(d.nodes[0].free_after, 200 * kPage);
  EXPECT_EQ(d.nodes[2].free_after, 1000 * kPage);

  r.victims.push_back(Page(A(511), 0, 0, 1));
  r.SetFree(2, 1000);
  d = r.Decide();
  ASSERT_EQ(d.moves.size(), 513u);
  EXPECT_EQ(d.moves.back().vaddr, huge.vaddr);
  EXPECT_EQ(d.moves.back().page_bytes, 2u << 20);
  EXPECT_EQ(d.demoted_pages, 512u);
  // The huge page leaving node 2 made the room its victims use there.
  EXPECT_EQ(d.nodes[2].free_after, 1000 * kPage);
}

// ---------------------------------------------------------------------------
// Memory policies.

TEST(Placement, BindRangeIsNeverPromotedOutsideItsNodes) {
  Round r;
  r.ranges = {Range(A(0), A(10), MempolicyMode::kBind, {2}),
              Range(A(10), A(20), MempolicyMode::kBind, {1, 2})};
  r.candidates = {Page(A(1), 2, 10, 20, 0), Page(A(11), 2, 10, 20, 0)};
  PlacementDecision d = r.Decide();
  ASSERT_EQ(d.moves.size(), 1u);
  EXPECT_EQ(d.moves[0].vaddr, A(11));
  EXPECT_EQ(d.moves[0].to_node, 1);  // not the accessor's node 0
  EXPECT_EQ(d.promote_skipped[SkipReason::kBindForbidden], 1u);
}

TEST(Placement, BindRangeIsNeverDemotedOutsideItsNodes) {
  Round r;
  r.SetFree(0, 50);
  r.config.watermarks[0] = {0, 100 * kPage, 101 * kPage};
  r.ranges = {Range(A(0), A(10), MempolicyMode::kBind, {0, 1})};
  r.victims = {Page(A(1), 0, 0, 1), Page(A(20), 0, 0, 2)};
  PlacementDecision d = r.Decide();
  std::string all = DecisionToString(d);
  for (const PlannedMove& m : d.moves) EXPECT_NE(m.vaddr, A(1)) << all;
  EXPECT_EQ(d.demote_skipped[SkipReason::kBindForbidden], 1u);
  EXPECT_EQ(d.demoted_pages, 1u);
}

TEST(Placement, PreferredManyRangeLimitsTargets) {
  Round r;
  r.ranges = {Range(A(0), A(10), MempolicyMode::kPreferredMany, {1}),
              Range(A(10), A(20), MempolicyMode::kPreferredMany, {0, 1}),
              Range(A(20), A(30), MempolicyMode::kPreferredMany, {2})};
  r.candidates = {Page(A(1), 2, 10, 20, 0),    // accessor outside mask: -> 1
                  Page(A(11), 2, 10, 20, 1),   // accessor in mask: its node
                  Page(A(21), 2, 10, 20, 0)};  // mask has no faster node
  PlacementDecision d = r.Decide();
  std::map<uint64_t, int> to;
  for (const PlannedMove& m : d.moves) to[m.vaddr] = m.to_node;
  EXPECT_EQ(to.size(), 2u);
  EXPECT_EQ(to[A(1)], 1);
  EXPECT_EQ(to[A(11)], 1);
  EXPECT_EQ(d.promote_skipped[SkipReason::kOutsidePreferredMany], 1u);
}

TEST(Placement, PreferredManyMaskStaysInMaskWhenFull) {
  Round r;
  r.ranges = {Range(A(0), A(10), MempolicyMode::kPreferredMany, {1})};
  r.SetFree(1, 200);  // node 1 full; node 0 has room but is outside the mask
  r.candidates = {Page(A(1), 2, 10, 20, 0)};
  PlacementDecision d = r.Decide();
  EXPECT_TRUE(d.moves.empty());
  EXPECT_EQ(d.promote_skipped[SkipReason::kNoRoom], 1u);
}

TEST(Placement, PromoteToConfigIsAPreferredManyMask) {
  Round r;
  r.config.promote_to = {1};
  r.candidates = {Page(A(1), 2, 10, 20, 0), Page(A(2), 2, 10, 20, 1)};
  PlacementDecision d = r.Decide();
  ASSERT_EQ(d.moves.size(), 2u);
  for (const PlannedMove& m : d.moves) EXPECT_EQ(m.to_node, 1);

  r.config.promote_to = {2};
  d = r.Decide();
  EXPECT_TRUE(d.moves.empty());
  EXPECT_EQ(d.promote_skipped[SkipReason::kOutsidePreferredMany], 2u);
}

TEST(Placement, InterleaveAndPreferredDoNotRestrict) {
  Round r;
  r.ranges = {Range(A(0), A(10), MempolicyMode::kInterleave, {2}),
              Range(A(10), A(20), MempolicyMode::kPreferred, {2})};
  r.candidates = {Page(A(1), 2, 10, 20, 0), Page(A(11), 2, 10, 20, 0)};
  EXPECT_EQ(r.Decide().promoted_pages, 2u);
}

// ---------------------------------------------------------------------------
// Ping-pong, budget.

TEST(Placement, HeldPagesAreNeverMovedAndCounted) {
  Round r;
  r.SetFree(0, 50);
  r.config.watermarks[0] = {0, 100 * kPage, 101 * kPage};
  r.candidates = {Page(A(1), 2, 10, 20, 1), Page(A(2), 2, 10, 20, 1)};
  r.victims = {Page(A(100), 0, 0, 1), Page(A(101), 0, 0, 2)};
  r.held = {A(1), A(100)};
  PlacementDecision d = r.Decide();
  for (const PlannedMove& m : d.moves) {
    EXPECT_NE(m.vaddr, A(1));
    EXPECT_NE(m.vaddr, A(100));
  }
  EXPECT_EQ(d.promoted_pages, 1u);
  EXPECT_EQ(d.demoted_pages, 1u);
  EXPECT_EQ(d.promote_skipped[SkipReason::kHeld], 1u);
  EXPECT_EQ(d.demote_skipped[SkipReason::kHeld], 1u);
}

TEST(Placement, RespectsByteAndMoveBudget) {
  Round r;
  for (int i = 0; i < 10; ++i)
    r.candidates.push_back(Page(A(i), 2, 100 - i, 200, 0));
  r.config.max_move_bytes = 3 * kPage;
  PlacementDecision d = r.Decide();
  ASSERT_EQ(d.moves.size(), 3u);
  EXPECT_EQ(d.moves[0].vaddr, A(0));  // hottest first
  EXPECT_EQ(d.promote_skipped[SkipReason::kBudget], 7u);

  r.config.max_move_bytes = uint64_t{1} << 40;
  r.config.max_moves = 4;
  d = r.Decide();
  EXPECT_EQ(d.moves.size(), 4u);
  EXPECT_EQ(d.promote_skipped[SkipReason::kBudget], 6u);
}

TEST(Placement, HugePageCountsItsBytesAgainstBudget) {
  Round r;
  PageHeat huge = Page(0x7f0000200000ull, 2, 50, 80, 0);
  huge.page_bytes = 2u << 20;
  r.candidates = {huge, Page(A(1), 2, 10, 20, 0)};
  r.config.max_move_bytes = (2u << 20);  // the huge page only
  PlacementDecision d = r.Decide();
  ASSERT_EQ(d.moves.size(), 1u);
  EXPECT_EQ(d.moves[0].page_bytes, 2u << 20);
  EXPECT_EQ(d.promote_skipped[SkipReason::kBudget], 1u);
}

// ---------------------------------------------------------------------------
// Helpers and configuration.

TEST(Placement, FindRangeHonoursEndsAndUnjoinedRanges) {
  std::vector<NumaMapsRange> ranges = {
      Range(0x1000, 0x3000, MempolicyMode::kBind, {0}),
      Range(0x5000, 0, MempolicyMode::kBind, {1}),
      Range(0x8000, 0, MempolicyMode::kBind, {2})};
  std::vector<const NumaMapsRange*> sorted;
  for (const auto& r : ranges) sorted.push_back(&r);
  EXPECT_EQ(FindRange(sorted, 0x0fff), nullptr);
  EXPECT_EQ(FindRange(sorted, 0x1000), &ranges[0]);
  EXPECT_EQ(FindRange(sorted, 0x2fff), &ranges[0]);
  EXPECT_EQ(FindRange(sorted, 0x3000), nullptr);
  EXPECT_EQ(FindRange(sorted, 0x7fff), &ranges[1]);
  EXPECT_EQ(FindRange(sorted, 0x8000), &ranges[2]);
  EXPECT_EQ(FindRange(sorted, ~0ull), &ranges[2]);
}

TEST(Placement, DefaultWatermarksAreTwoAndFourPercentOfNode) {
  Topology t = ThreeNodes();
  PlacementConfig c;
  NodeWatermarks wm = WatermarksFor(c, t, 1);
  EXPECT_EQ(wm.low_bytes, static_cast<uint64_t>(kGiB * 0.02));
  EXPECT_EQ(wm.high_bytes, static_cast<uint64_t>(kGiB * 0.04));
  c.watermarks = {{1, 5, 6}};
  EXPECT_EQ(WatermarksFor(c, t, 1).high_bytes, 6u);
  EXPECT_EQ(WatermarksFor(c, t, 0).low_bytes,
            static_cast<uint64_t>(kGiB * 0.02));
}

// The daemon VM tests' guest: a 512 MiB fast node whose kernel floor
// (/proc/zoneinfo: DMA low 160 + lowmem_reserve 443 pages, DMA32 low 4758)
// is 20.9 MiB, above both of the fractions' watermarks (10.2, 20.5 MiB).
TEST(Placement, OnASmallNodeTheLowWatermarkIsTheKernelsFloor) {
  constexpr uint64_t kMiB = 1ull << 20;
  Topology t = ThreeNodes();
  t.nodes[0].memory_bytes = 512 * kMiB;
  PlacementConfig c;
  const uint64_t floor = (160 + 443 + 4758) * kPage;
  const std::vector<NodeWatermarks> wm =
      KernelFloorWatermarks(c, t, {{0, floor}, {2, 5u << 20}});
  ASSERT_EQ(wm.size(), 1u);  // node 2 (1 GiB): 2% is above its floor
  EXPECT_EQ(wm[0].node, 0);
  EXPECT_EQ(wm[0].low_bytes, floor);
  // The fractions' gap (2% of 512 MiB) above it.
  EXPECT_EQ(wm[0].high_bytes, floor + static_cast<uint64_t>(512 * kMiB * 0.02));
  c.watermarks = wm;
  ASSERT_TRUE(ValidatePlacementConfig(c, t).ok());
  EXPECT_EQ(WatermarksFor(c, t, 0).low_bytes, floor);
  // Applied again, nothing more: the node has its entry now.
  EXPECT_TRUE(KernelFloorWatermarks(c, t, {{0, floor}}).empty());
}

TEST(Placement, ABigNodeWithSmallKernelWatermarksKeepsTheFractions) {
  Topology t = ThreeNodes();  // 1 GiB nodes: 2% is 20.5 MiB
  PlacementConfig c;
  EXPECT_TRUE(
      KernelFloorWatermarks(c, t, {{0, 20u << 20}, {1, 0}, {2, 5u << 20}})
          .empty());
  EXPECT_EQ(WatermarksFor(c, t, 0).low_bytes,
            static_cast<uint64_t>(kGiB * 0.02));
}

TEST(Placement, AGivenWatermarkIsNotRaisedToTheKernelsFloor) {
  Topology t = ThreeNodes();
  PlacementConfig c;
  c.watermarks = {{0, 5, 6}};
  EXPECT_TRUE(KernelFloorWatermarks(c, t, {{0, 64u << 20}}).empty());
}

TEST(Placement, ValidateConfigNamesTheProblem) {
  Topology t = ThreeNodes();
  PlacementConfig c;
  EXPECT_TRUE(ValidatePlacementConfig(c, t).ok());
  c.promote_to = {0, 5};
  absl::Status s = ValidatePlacementConfig(c, t);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("node 5"), std::string::npos) << s;
  c.promote_to = {};
  c.low_watermark_fraction = 0.5;
  c.high_watermark_fraction = 0.1;
  EXPECT_FALSE(ValidatePlacementConfig(c, t).ok());
  c = PlacementConfig{};
  c.watermarks = {{1, 10, 5}};
  EXPECT_FALSE(ValidatePlacementConfig(c, t).ok());
}

// A strategy that asks for a forbidden node first: the engine ignores it.
class GreedyStrategy : public NearestTargetStrategy {
 public:
  void RankPromotionTargets(const PageHeat& page, const NumaMapsRange* range,
                            absl::Span<const int> allowed,
                            const PlacementContext& ctx,
                            std::vector<int>& order) override {
    order = {0, 2, 1};
    ++calls;
  }
  void Promoted(const PageHeat& page, int node) override {
    placed.push_back(node);
  }
  int calls = 0;
  std::vector<int> placed;
};

TEST(Placement, StrategyCannotWidenAllowedTargets) {
  Round r;
  r.ranges = {Range(A(0), A(10), MempolicyMode::kBind, {1, 2})};
  r.candidates = {Page(A(1), 2, 10, 20, 0)};
  GreedyStrategy s;
  PlacementDecision d = DecideMoves(r.Input(), r.config, s);
  ASSERT_EQ(d.moves.size(), 1u);
  EXPECT_EQ(d.moves[0].to_node, 1);
  EXPECT_EQ(s.calls, 1);
  EXPECT_EQ(s.placed, std::vector<int>{1});
}

// ---------------------------------------------------------------------------
// Combined scenarios, determinism, properties.

TEST(Placement, CombinedScenarioOnThreeNodes) {
  Round r;
  r.SetFree(0, 90);   // below low: demote 110 pages
  r.SetFree(1, 205);  // room for 5 promotions
  r.ranges = {Range(A(0), A(1000), MempolicyMode::kBind, {0, 2}),
              Range(A(1000), A(2000), MempolicyMode::kPreferredMany, {1})};
  for (int i = 0; i < 120; ++i)
    r.victims.push_back(Page(A(3000 + i), 0, 0, 1 + i * 0.01));
  for (int i = 0; i < 20; ++i)
    r.victims.push_back(Page(A(4000 + i), 1, 0, 0.5));
  // Bound to {0, 2}: promoted to 0 only (after its demotions).
  r.candidates.push_back(Page(A(5), 2, 100, 200, 1));
  // Preferred-many {1}: to node 1.
  r.candidates.push_back(Page(A(1005), 2, 90, 200, 0));
  for (int i = 0; i < 10; ++i)
    r.candidates.push_back(Page(A(2000 + i), 2, 80 - i, 200, 1));
  r.held = {A(2009)};
  PlacementDecision d = r.Decide();
  std::string all = DecisionToString(d);
  std::map<uint64_t, const PlannedMove*> by;
  for (const PlannedMove& m : d.moves) by[m.vaddr] = &m;
  ASSERT_TRUE(by.count(A(5))) << all;
  EXPECT_EQ(by[A(5)]->to_node, 0);
  ASSERT_TRUE(by.count(A(1005))) << all;
  EXPECT_EQ(by[A(1005)]->to_node, 1);
  EXPECT_FALSE(by.count(A(2009)));
  EXPECT_EQ(d.promote_skipped[SkipReason::kHeld], 1u);
  // Node 0 demoted to its high watermark, then took A(5): 110 + 1 moves.
  size_t demoted_from_0 = 0;
  for (const PlannedMove& m : d.moves) {
    if (m.reason == PlacementReason::kDemote && m.from_node == 0)
      ++demoted_from_0;
  }
  EXPECT_GE(demoted_from_0, 110u) << all;
  // Every promotion is provably hotter than every demotion.
  for (const PlannedMove& p : d.moves) {
    if (p.reason != PlacementReason::kPromote) continue;
    for (const PlannedMove& q : d.moves) {
      if (q.reason == PlacementReason::kDemote) {
        EXPECT_GT(p.rate_lo, q.rate_hi);
      }
    }
  }
}

std::string RunfilesDir() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* ws = std::getenv("TEST_WORKSPACE");
  if (srcdir == nullptr || ws == nullptr) return "";
  return std::string(srcdir) + "/" + ws;
}

TEST(Placement, DiscoveredTwoPackageCxlTopology) {
  const std::string src = RunfilesDir() + "/tests/testdata/sysfs/2pkg-cxl";
  // Declared data of this test: missing runfiles are a failure, not a skip.
  ASSERT_TRUE(std::filesystem::exists(src)) << "no runfiles at " << src;
  // Runfiles are symlinks, which KernelFs (RESOLVE_IN_ROOT) does not follow
  // out of the root: copy the tree with the links resolved.
  const std::string dst = std::string(std::getenv("TEST_TMPDIR")) + "/2pkg-cxl";
  std::filesystem::remove_all(dst);
  std::filesystem::copy(src, dst, std::filesystem::copy_options::recursive);
  absl::StatusOr<KernelFs> fs = KernelFs::Open(dst);
  ASSERT_TRUE(fs.ok()) << fs.status();
  absl::StatusOr<Topology> topo = DiscoverTopology(*fs, nullptr);
  ASSERT_TRUE(topo.ok()) << topo.status();
  ASSERT_EQ(topo->FastNodes(), (std::vector<int>{0, 1}));

  Round r;
  r.topo = *topo;
  r.config = PlacementConfig{};  // watermarks from the captured node sizes
  std::vector<NodeFree> free;
  for (const NodeInfo& n : topo->nodes) free.push_back({n.id, n.free_bytes});
  r.free = free;
  r.candidates = {Page(A(1), 2, 10, 20, 1), Page(A(2), 2, 10, 20, 0),
                  Page(A(3), 2, 10, 20, -1)};
  PlacementDecision d = r.Decide();
  std::map<uint64_t, int> to;
  for (const PlannedMove& m : d.moves) to[m.vaddr] = m.to_node;
  EXPECT_EQ(to[A(1)], 1);
  EXPECT_EQ(to[A(2)], 0);
  EXPECT_EQ(to[A(3)], 0);  // equal distances 24/24 from node 2: lowest id
  ASSERT_EQ(d.nodes.size(), 3u);
  EXPECT_EQ(d.nodes[0].low_bytes,
            static_cast<uint64_t>(topo->nodes[0].memory_bytes * 0.02));
}

// Random rounds over the 3-node topology.
struct RandomRound {
  Round round;
  explicit RandomRound(uint32_t seed) {
    std::mt19937 rng(seed);
    auto uni = [&](int lo, int hi) {
      return std::uniform_int_distribution<int>(lo, hi)(rng);
    };
    Round& r = round;
    r.topo = ThreeNodes(uni(20, 30), uni(20, 30));
    for (NodeFree& f : r.free) f.free_bytes = uint64_t(uni(0, 400)) * kPage;
    if (uni(0, 3) == 0) r.free.erase(r.free.begin() + uni(0, 2));
    if (uni(0, 2) == 0) r.backed_off.push_back(uni(0, 2));
    if (uni(0, 2) == 0) r.config.promote_to = {uni(0, 2)};
    r.config.max_moves = uni(1, 300);
    r.config.max_move_bytes = uint64_t(uni(1, 400)) * kPage;
    static const MempolicyMode kModes[] = {
        MempolicyMode::kBind, MempolicyMode::kPreferredMany,
        MempolicyMode::kInterleave, MempolicyMode::kDefault};
    for (int i = 0; i < 8; ++i) {
      std::vector<int> nodes;
      for (int n = 0; n < 3; ++n) {
        if (uni(0, 1)) nodes.push_back(n);
      }
      r.ranges.push_back(Range(A(i * 64),
                               uni(0, 3) ? A(i * 64 + uni(1, 64)) : 0,
                               kModes[uni(0, 3)], nodes));
    }
    auto page = [&](bool hot) {
      int slot = uni(0, 600);
      PageHeat p;
      if (uni(0, 40) == 0) {
        p.page_bytes = 2u << 20;
        p.vaddr =
            0x7f0000000000ull + uint64_t(slot) * (2u << 20) + (1ull << 40);
      } else {
        p.vaddr = A(slot);
      }
      p.current_node =
          hot ? (uni(0, 5) ? 2 : uni(-1, 1)) : (uni(0, 5) ? uni(0, 1) : 2);
      p.accessor_node = uni(-1, 2);
      p.rate_lo = uni(0, 100);
      p.rate_hi = p.rate_lo + uni(0, 50);
      p.rate = (p.rate_lo + p.rate_hi) / 2;
      return p;
    };
    int nc = uni(0, 200), nv = uni(0, 200);
    for (int i = 0; i < nc; ++i) r.candidates.push_back(page(true));
    for (int i = 0; i < nv; ++i) r.victims.push_back(page(false));
    for (int i = 0; i < 20; ++i) r.held.insert(A(uni(0, 600)));
    for (int n = 0; n < 3; ++n) {
      uint64_t low = uint64_t(uni(0, 150)) * kPage;
      r.config.watermarks[n] = {n, low, low + uint64_t(uni(0, 150)) * kPage};
    }
  }
};

TEST(Placement, DeterministicUnderInputShuffle) {
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    RandomRound rr(seed);
    const std::string want = DecisionToString(rr.round.Decide());
    std::mt19937 rng(seed * 7919);
    Round& r = rr.round;
    std::shuffle(r.candidates.begin(), r.candidates.end(), rng);
    std::shuffle(r.victims.begin(), r.victims.end(), rng);
    std::shuffle(r.ranges.begin(), r.ranges.end(), rng);
    std::shuffle(r.free.begin(), r.free.end(), rng);
    std::reverse(r.backed_off.begin(), r.backed_off.end());
    ASSERT_EQ(DecisionToString(r.Decide()), want) << "seed " << seed;
  }
}

TEST(Placement, RandomRoundsKeepEveryInvariant) {
  size_t promotions = 0, demotions = 0, swaps = 0;
  for (uint32_t seed = 1; seed <= 2000; ++seed) {
    RandomRound rr(seed);
    const Round& r = rr.round;
    PlacementDecision d = r.Decide();
    const std::string ctx =
        "seed " + std::to_string(seed) + "\n" + DecisionToString(d);
    std::vector<const NumaMapsRange*> sorted;
    for (const auto& g : r.ranges) sorted.push_back(&g);
    std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) {
      return std::tie(a->start, a->end) < std::tie(b->start, b->end);
    });
    absl::flat_hash_map<int, int64_t> free;
    for (const NodeFree& f : r.free) free[f.node] = f.free_bytes;
    absl::flat_hash_set<uint64_t> moved;
    uint64_t bytes = 0;
    double min_promoted_lo = 1e300, max_demoted_hi = -1e300;
    std::vector<int> promote_mask = r.config.promote_to.empty()
                                        ? std::vector<int>{0, 1}
                                        : r.config.promote_to;
    for (size_t i = 0; i < d.moves.size(); ++i) {
      const PlannedMove& m = d.moves[i];
      const NumaMapsRange* range = FindRange(sorted, m.vaddr);
      ASSERT_TRUE(range == nullptr || !range->Forbids(m.to_node)) << ctx;
      ASSERT_TRUE(std::find(r.backed_off.begin(), r.backed_off.end(),
                            m.to_node) == r.backed_off.end())
          << ctx;
      ASSERT_TRUE(free.contains(m.to_node)) << "unknown-free target\n" << ctx;
      ASSERT_FALSE(r.held.count(m.vaddr)) << ctx;
      ASSERT_TRUE(moved.insert(m.vaddr).second) << "moved twice\n" << ctx;
      bytes += m.page_bytes;
      const int to_rank = *r.topo.FindNode(m.to_node)->tier;
      const int from_rank = *r.topo.FindNode(m.from_node)->tier;
      if (m.reason == PlacementReason::kPromote) {
        ASSERT_LT(to_rank, from_rank) << ctx;
        ASSERT_TRUE(std::find(promote_mask.begin(), promote_mask.end(),
                              m.to_node) != promote_mask.end())
            << ctx;
        if (range != nullptr && range->mode == MempolicyMode::kPreferredMany &&
            !range->nodes.empty()) {
          ASSERT_TRUE(std::find(range->nodes.begin(), range->nodes.end(),
                                m.to_node) != range->nodes.end())
              << ctx;
        }
        min_promoted_lo = std::min(min_promoted_lo, m.rate_lo);
        ++promotions;
      } else {
        ASSERT_GT(to_rank, from_rank) << ctx;
        max_demoted_hi = std::max(max_demoted_hi, m.rate_hi);
        ++demotions;
      }
      // Room: a swap group (demotions paired with the promotion that
      // follows them) is applied as a whole before it is checked.
      if (m.reason == PlacementReason::kDemote &&
          m.trigger == PlacementTrigger::kSwap) {
        continue;
      }
      size_t first = i;
      while (first > 0 &&
             d.moves[first - 1].trigger == PlacementTrigger::kSwap &&
             d.moves[first - 1].reason == PlacementReason::kDemote &&
             d.moves[first - 1].paired_vaddr == m.vaddr) {
        --first;
      }
      int64_t swapped_out = 0;
      for (size_t k = first; k <= i; ++k) {
        free[d.moves[k].from_node] += d.moves[k].page_bytes;
        free[d.moves[k].to_node] -= d.moves[k].page_bytes;
        if (k < i) swapped_out += d.moves[k].page_bytes;
      }
      for (size_t k = first; k <= i; ++k) {
        const PlannedMove& g = d.moves[k];
        const NodeWatermarks wm = WatermarksFor(r.config, r.topo, g.to_node);
        if (g.reason == PlacementReason::kDemote) {
          ASSERT_GE(free[g.to_node], int64_t(wm.low_bytes))
              << "full demotion target\n"
              << ctx;
        } else if (g.trigger == PlacementTrigger::kRoom) {
          ASSERT_GE(free[g.to_node], int64_t(wm.high_bytes))
              << "full promotion target\n"
              << ctx;
        } else {
          ++swaps;
          ASSERT_GE(swapped_out, int64_t(g.page_bytes)) << ctx;
          ASSERT_GT(g.rate_lo, d.moves[first].rate_hi) << ctx;
        }
      }
    }
    ASSERT_LE(bytes, r.config.max_move_bytes) << ctx;
    ASSERT_LE(d.moves.size(), r.config.max_moves) << ctx;
    if (min_promoted_lo < 1e300 && max_demoted_hi > -1e300) {
      ASSERT_GT(min_promoted_lo, max_demoted_hi)
          << "demoted a page hotter than a promoted one\n"
          << ctx;
    }
  }
  // The generator must exercise every kind of move, or the test proves little.
  EXPECT_GT(promotions, 1000u);
  EXPECT_GT(demotions, 1000u);
  EXPECT_GT(swaps, 10u);
}

// ---------------------------------------------------------------------------
// The opt-in rules: weighted placement, package-aware, locality, interleave
// ratios, huge pages.

// A machine by hand: `tier` and `package` per node; nodes of tier 0 that are
// listed in `cpu_nodes` get a CPU. Distances: 10 self, 12 same package, 21
// other package, +4 when either node is of a slower tier.
Topology Machine(std::vector<int> tier, std::vector<int> package,
                 std::vector<int> cpu_nodes) {
  Topology t;
  const int n = static_cast<int>(tier.size());
  for (int i = 0; i < n; ++i) {
    std::vector<int> dist;
    for (int j = 0; j < n; ++j) {
      int d = i == j ? 10 : package[i] == package[j] ? 12 : 21;
      if (i != j && (tier[i] > 0 || tier[j] > 0)) d += 4;
      dist.push_back(d);
    }
    std::vector<int> cpus;
    if (std::find(cpu_nodes.begin(), cpu_nodes.end(), i) != cpu_nodes.end())
      cpus.push_back(i);
    t.nodes.push_back(Node(i, cpus, dist, tier[i], package[i]));
  }
  int max_tier = *std::max_element(tier.begin(), tier.end());
  for (int r = 0; r <= max_tier; ++r) {
    MemoryTier mt{r, {}};
    for (int i = 0; i < n; ++i)
      if (tier[i] == r) mt.nodes.push_back(i);
    t.tiers.push_back(mt);
  }
  int max_pkg = *std::max_element(package.begin(), package.end());
  for (int p = 0; p <= max_pkg; ++p) {
    Package pk{p, {}};
    for (int i = 0; i < n; ++i)
      if (package[i] == p) pk.nodes.push_back(i);
    t.packages.push_back(pk);
  }
  return t;
}

// Two packages with two fast nodes each (0, 2 with CPUs; 1, 3 CPU-less
// DRAM-class) and a slow node 4 in package 1.
Topology TwoPackagesFourFast() {
  return Machine({0, 0, 0, 0, 1}, {0, 0, 1, 1, 1}, {0, 2});
}

// A round on `topo` with every node at `free_pages` free and watermarks
// low 100 / high 200 pages.
Round RoundOn(Topology topo, uint64_t free_pages) {
  Round r;
  r.topo = std::move(topo);
  r.free.clear();
  r.config.watermarks.clear();
  for (const NodeInfo& n : r.topo.nodes) {
    r.free.push_back({n.id, free_pages * kPage});
    r.config.watermarks.push_back({n.id, 100 * kPage, 200 * kPage});
  }
  return r;
}

WeightsConfig Weights(const std::string& text) {
  absl::StatusOr<WeightsConfig> w = ParseWeights(text);
  EXPECT_TRUE(w.ok()) << w.status();
  return w.ok() ? *w : WeightsConfig{};
}

std::map<int, int> PromotedTo(const PlacementDecision& d) {
  std::map<int, int> to;
  for (const PlannedMove& m : d.moves) {
    if (m.reason == PlacementReason::kPromote) ++to[m.to_node];
  }
  return to;
}

// Rule W. ------------------------------------------------------------------

TEST(PlacementWeighted, ThousandPromotionsFollowWeightsThreeToOne) {
  Round r;
  r.SetFree(0, 5000);
  r.SetFree(1, 5000);
  // Accessors alternate: the nearest strategy alone would split 50/50.
  for (int i = 0; i < 1000; ++i)
    r.candidates.push_back(Page(A(i), 2, 10, 20, i % 2));
  r.config.weights = Weights("0:3,1:1");
  PlacementDecision d = r.Decide();
  std::map<int, int> to = PromotedTo(d);
  EXPECT_EQ(d.promoted_pages, 1000u);
  EXPECT_NEAR(to[0], 750, 50);
  EXPECT_NEAR(to[1], 250, 50);
  // Kernel-like weighted round-robin: 3 on node 0, then 1 on node 1.
  std::vector<int> first;
  for (size_t i = 0; i < 8; ++i) first.push_back(d.moves[i].to_node);
  EXPECT_EQ(first, (std::vector<int>{0, 0, 0, 1, 0, 0, 0, 1}));
}

TEST(PlacementWeighted, FullNodeDropsOutAllGoToTheOther) {
  Round r;
  r.SetFree(0, 200);  // at its high watermark: no room
  r.SetFree(1, 5000);
  for (int i = 0; i < 1000; ++i)
    r.candidates.push_back(Page(A(i), 2, 10, 20, 0));
  r.config.weights = Weights("0:3,1:1");
  PlacementDecision d = r.Decide();
  std::map<int, int> to = PromotedTo(d);
  EXPECT_EQ(to[0], 0);
  EXPECT_EQ(to[1], 1000);
}

TEST(PlacementWeighted, RatioAmongTheRestHoldsWhenOneNodeIsFull) {
  Round r = RoundOn(TwoPackagesFourFast(), 5000);
  r.SetFree(2, 150);  // below high: no room
  for (int i = 0; i < 1200; ++i)
    r.candidates.push_back(Page(A(i), 4, 10, 20, 2));
  r.config.weights = Weights("0:3,1:1,2:2,3:2");
  std::map<int, int> to = PromotedTo(r.Decide());
  EXPECT_EQ(to[2], 0);
  EXPECT_NEAR(to[0], 600, 12);  // 3 : 1 : 2 of 1200
  EXPECT_NEAR(to[1], 200, 12);
  EXPECT_NEAR(to[3], 400, 12);
}

// Both fast nodes full (between their watermarks): every promotion is a
// swap, and the weights still decide where (the ratio held only on free
// room before, so a full DRAM split by accessor, 50/50 here).
TEST(PlacementWeighted, RatioHoldsOnAFullFastTierThroughSwaps) {
  Round r;
  r.SetFree(0, 150);
  r.SetFree(1, 150);
  for (int i = 0; i < 400; ++i)
    r.candidates.push_back(Page(A(i), 2, 10, 20, i % 2));
  for (int i = 0; i < 400; ++i) {
    r.victims.push_back(Page(A(1000 + i), 0, 0, 1));
    r.victims.push_back(Page(A(2000 + i), 1, 0, 1));
  }
  r.config.weights = Weights("0:3,1:1");
  PlacementDecision d = r.Decide();
  std::map<int, int> to = PromotedTo(d);
  EXPECT_EQ(d.promoted_pages, 400u) << DecisionToString(d);
  EXPECT_EQ(to[0], 300);
  EXPECT_EQ(to[1], 100);
}

// Rule W with region evidence: DAMON's 2 MiB entries of 4 KiB pages
// (PageHeat::divisible). As whole round-robin units six regions split 5:1
// (83% on node 0); split by weight, each region's 512 pages go 384:128, one
// contiguous part per node, and no page moves twice.
PageHeat Region(int i, int node, double lo, double hi) {
  PageHeat p = Page(0x7f0000000000ull + uint64_t(i) * (2u << 20), node, lo, hi);
  p.page_bytes = 2u << 20;
  p.divisible = true;
  return p;
}

std::map<int, uint64_t> PromotedPagesTo(const PlacementDecision& d) {
  std::map<int, uint64_t> to;
  for (const PlannedMove& m : d.moves) {
    if (m.reason == PlacementReason::kPromote)
      to[m.to_node] += m.page_bytes / kPage;
  }
  return to;
}

TEST(PlacementWeighted, RegionEvidenceIsSplitByWeightInBasePages) {
  Round r;
  r.SetFree(0, 100000);
  r.SetFree(1, 100000);
  for (int i = 0; i < 6; ++i) r.candidates.push_back(Region(i, 2, 10, 20));
  r.config.weights = Weights("0:3,1:1");
  PlacementDecision d = r.Decide();
  std::map<int, uint64_t> to = PromotedPagesTo(d);
  ASSERT_EQ(to[0] + to[1], 6u * 512) << DecisionToString(d);
  const double share = static_cast<double>(to[0]) / (to[0] + to[1]);
  EXPECT_NEAR(share, 0.75, 0.05) << DecisionToString(d);
  EXPECT_EQ(to[0], 6u * 384);
  EXPECT_EQ(to[1], 6u * 128);
  EXPECT_EQ(d.promoted_pages, 6u);  // entries
  EXPECT_EQ(d.promoted_bytes, 6u * (2u << 20));
  // Each region: two parts, node 0's run first, covering it exactly once.
  ASSERT_EQ(d.moves.size(), 12u) << DecisionToString(d);
  for (int i = 0; i < 6; ++i) {
    const PlannedMove& a = d.moves[2 * i];
    const PlannedMove& b = d.moves[2 * i + 1];
    const uint64_t start = Region(i, 2, 0, 0).vaddr;
    EXPECT_EQ(a.vaddr, start);
    EXPECT_EQ(a.to_node, 0);
    EXPECT_EQ(a.page_bytes, 384 * kPage);
    EXPECT_EQ(b.vaddr, start + 384 * kPage);
    EXPECT_EQ(b.to_node, 1);
    EXPECT_EQ(b.page_bytes, 128 * kPage);
    for (const PlannedMove* m : {&a, &b}) {
      EXPECT_EQ(m->entry_bytes, 2u << 20);
      EXPECT_EQ(m->entry_vaddr(), start);
      EXPECT_EQ(m->from_node, 2);
    }
  }
}

// Weights whose shares are not whole pages: the credit carries over
// regions and rounds, so the pages split so far stay within one of the
// exact ratio per node.
TEST(PlacementWeighted, RegionSplitCarriesFractionsAcrossRounds) {
  Round r;
  r.SetFree(0, 100000);
  r.SetFree(1, 100000);
  r.config.weights = Weights("0:2,1:1");
  absl::StatusOr<std::unique_ptr<TargetStrategy>> s =
      MakeTargetStrategy(r.config, r.topo);
  ASSERT_TRUE(s.ok()) << s.status();
  uint64_t on0 = 0, total = 0;
  for (int round = 0; round < 7; ++round) {
    r.candidates = {Region(round, 2, 10, 20)};
    PlacementDecision d = DecideMoves(r.Input(), r.config, **s);
    std::map<int, uint64_t> to = PromotedPagesTo(d);
    ASSERT_EQ(to[0] + to[1], 512u) << DecisionToString(d);
    on0 += to[0];
    total += 512;
    EXPECT_LE(std::abs(3.0 * on0 - 2.0 * total), 3.0)
        << "round " << round << ": " << on0 << " of " << total;
  }
}

// What is not split: a huge page (not divisible) takes one round-robin
// unit whole; a region when only one target has room for it moves whole
// there; without weights a region goes whole to the nearest node.
TEST(PlacementWeighted, HugePagesAndRegionsWithOneTargetMoveWhole) {
  Round r;
  r.SetFree(0, 100000);
  r.SetFree(1, 100000);
  r.config.weights = Weights("0:3,1:1");
  PageHeat thp = Region(0, 2, 10, 20);
  thp.divisible = false;
  r.candidates = {thp};
  PlacementDecision d = r.Decide();
  ASSERT_EQ(d.moves.size(), 1u) << DecisionToString(d);
  EXPECT_EQ(d.moves[0].page_bytes, 2u << 20);
  EXPECT_EQ(d.moves[0].entry_bytes, 0u);

  r.SetFree(1, 300);  // node 1 has no room for 512 pages above its high mark
  r.candidates = {Region(1, 2, 10, 20)};
  d = r.Decide();
  ASSERT_EQ(d.moves.size(), 1u) << DecisionToString(d);
  EXPECT_EQ(d.moves[0].to_node, 0);
  EXPECT_EQ(d.moves[0].page_bytes, 2u << 20);

  r.SetFree(1, 100000);
  r.config.weights = {};
  d = r.Decide();
  ASSERT_EQ(d.moves.size(), 1u) << DecisionToString(d);
  EXPECT_EQ(d.moves[0].page_bytes, 2u << 20);
}

TEST(PlacementWeighted, DeterministicAndIndependentOfInputOrder) {
  Round r;
  r.SetFree(0, 3000);
  r.SetFree(1, 3000);
  for (int i = 0; i < 500; ++i)
    r.candidates.push_back(Page(A(i), 2, 10 + i % 7, 30, i % 3 == 0));
  r.config.weights = Weights("0:2,1:5");
  const std::string want = DecisionToString(r.Decide());
  EXPECT_EQ(DecisionToString(r.Decide()), want);
  std::mt19937 rng(42);
  std::shuffle(r.candidates.begin(), r.candidates.end(), rng);
  std::shuffle(r.free.begin(), r.free.end(), rng);
  EXPECT_EQ(DecisionToString(r.Decide()), want);
  // A strategy object from MakeTargetStrategy decides the same.
  absl::StatusOr<std::unique_ptr<TargetStrategy>> s =
      MakeTargetStrategy(r.config, r.topo);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(DecisionToString(DecideMoves(r.Input(), r.config, **s)), want);
}

TEST(PlacementWeighted, CursorCarriesAcrossRounds) {
  // One promotion per round: a strategy kept across rounds still spreads
  // 3:1 (a fresh one per round would always pick node 0).
  Round r;
  r.config.weights = Weights("0:3,1:1");
  absl::StatusOr<std::unique_ptr<TargetStrategy>> s =
      MakeTargetStrategy(r.config, r.topo);
  ASSERT_TRUE(s.ok());
  std::map<int, int> to;
  for (int i = 0; i < 400; ++i) {
    r.candidates = {Page(A(i), 2, 10, 20, 1)};
    PlacementDecision d = DecideMoves(r.Input(), r.config, **s);
    ASSERT_EQ(d.moves.size(), 1u);
    ++to[d.moves[0].to_node];
  }
  EXPECT_EQ(to[0], 300);
  EXPECT_EQ(to[1], 100);
}

TEST(PlacementWeighted, NeverLeavesBindOrPromoteToMask) {
  Round r = RoundOn(TwoPackagesFourFast(), 5000);
  r.ranges = {Range(A(0), A(100), MempolicyMode::kBind, {1, 3, 4})};
  r.config.promote_to = {0, 1, 3};
  for (int i = 0; i < 200; ++i)
    r.candidates.push_back(Page(A(i), 4, 10, 20, 0));
  r.config.weights = Weights("0:5,1:1,2:5,3:1");
  PlacementDecision d = r.Decide();
  std::map<int, int> to = PromotedTo(d);
  EXPECT_EQ(d.promoted_pages, 200u);
  EXPECT_EQ(to[2], 0);  // heavy, but outside --promote-to
  EXPECT_EQ(to[0] + to[1] + to[3], 200);
  EXPECT_GT(to[0], to[1]);  // weight 5 against 1
  for (const PlannedMove& m : d.moves) {
    // A(0..99) are bound to {1,3,4}: never node 0.
    if (m.vaddr < A(100)) {
      EXPECT_NE(m.to_node, 0) << m.vaddr;
    }
  }
}

TEST(PlacementWeighted, KernelWeightsDriveTheSpread) {
  Round r;
  r.SetFree(0, 5000);
  r.SetFree(1, 5000);
  r.topo.nodes[0].weight = 1;
  r.topo.nodes[1].weight = 4;
  for (int i = 0; i < 500; ++i)
    r.candidates.push_back(Page(A(i), 2, 10, 20, 0));
  r.config.weights = Weights("kernel");
  std::map<int, int> to = PromotedTo(r.Decide());
  EXPECT_EQ(to[0], 100);
  EXPECT_EQ(to[1], 400);
}

// Rule P. ------------------------------------------------------------------

TEST(PlacementPackage, KeepsPagesInTheAccessorsPackageWithWeights) {
  Round r = RoundOn(TwoPackagesFourFast(), 5000);
  for (int i = 0; i < 400; ++i)
    r.candidates.push_back(Page(A(i), 4, 10, 20, i < 200 ? 0 : 2));
  r.config.weights = Weights("0:3,1:1,2:1,3:1");
  r.config.package_aware = true;
  PlacementDecision d = r.Decide();
  std::map<uint64_t, int> to;
  std::map<int, int> per_node = PromotedTo(d);
  for (const PlannedMove& m : d.moves) to[m.vaddr] = m.to_node;
  for (int i = 0; i < 400; ++i) {
    const int pkg = r.topo.nodes[to[A(i)]].package;
    EXPECT_EQ(pkg, i < 200 ? 0 : 1) << i;
  }
  EXPECT_EQ(per_node[0], 150);  // 3:1 within package 0
  EXPECT_EQ(per_node[1], 50);
  EXPECT_EQ(per_node[2], 100);  // 1:1 within package 1
  EXPECT_EQ(per_node[3], 100);

  // Without package awareness the same weights cross packages.
  r.config.package_aware = false;
  per_node = PromotedTo(r.Decide());
  EXPECT_GT(per_node[2] + per_node[3], 100);
}

TEST(PlacementPackage, FallsBackToOtherPackageByWeightsWhenFull) {
  Round r = RoundOn(TwoPackagesFourFast(), 5000);
  r.SetFree(0, 200);
  r.SetFree(1, 210);  // room for 10 pages
  for (int i = 0; i < 410; ++i)
    r.candidates.push_back(Page(A(i), 4, 10, 20, 0));
  r.config.weights = Weights("0:1,1:1,2:3,3:1");
  r.config.package_aware = true;
  std::map<int, int> to = PromotedTo(r.Decide());
  EXPECT_EQ(to[0], 0);
  EXPECT_EQ(to[1], 10);
  EXPECT_EQ(to[2], 300);
  EXPECT_EQ(to[3], 100);
}

TEST(PlacementPackage, WithoutWeightsPrefersPackageOverDistance) {
  // Node 0's nearest other node is 2 (other package) by SLIT; package-aware
  // takes package-mate 1 first when the accessor's node is full.
  Round r = RoundOn(TwoPackagesFourFast(), 5000);
  r.topo.nodes[0].distance = {10, 20, 11, 21, 25};
  r.SetFree(0, 200);
  r.candidates = {Page(A(1), 4, 10, 20, 0)};
  PlacementDecision d = r.Decide();
  ASSERT_EQ(d.moves.size(), 1u);
  EXPECT_EQ(d.moves[0].to_node, 2);  // nearest, today's behaviour
  r.config.package_aware = true;
  d = r.Decide();
  ASSERT_EQ(d.moves.size(), 1u);
  EXPECT_EQ(d.moves[0].to_node, 1);
}

TEST(PlacementPackage, NeverLeavesPreferredManyMask) {
  Round r = RoundOn(TwoPackagesFourFast(), 5000);
  r.ranges = {Range(A(0), A(1000), MempolicyMode::kPreferredMany, {1, 2})};
  r.SetFree(1, 300);  // room for 100 pages
  for (int i = 0; i < 300; ++i)
    r.candidates.push_back(Page(A(i), 4, 10, 20, 0));
  r.config.weights = Weights("0:1,1:1,2:1,3:1");
  r.config.package_aware = true;
  std::map<int, int> to = PromotedTo(r.Decide());
  EXPECT_EQ(to[0], 0);
  EXPECT_EQ(to[3], 0);
  EXPECT_EQ(to[1], 100);  // package 0 part of the mask while it has room
  EXPECT_EQ(to[2], 200);
}

// Rule L. ------------------------------------------------------------------

TEST(PlacementLocality, MovesPrivateHotPageToItsAccessorsNode) {
  Round r;
  r.hot_on_fast = {Page(A(1), 1, 10, 20, /*accessor=*/0)};
  PlacementDecision d = r.Decide();
  EXPECT_TRUE(d.moves.empty());  // off by default
  r.config.locality = true;
  d = r.Decide();
  ASSERT_EQ(d.moves.size(), 1u);
  EXPECT_EQ(d.moves[0].from_node, 1);
  EXPECT_EQ(d.moves[0].to_node, 0);
  EXPECT_EQ(d.moves[0].trigger, PlacementTrigger::kLocality);
  EXPECT_EQ(d.moves[0].reason, PlacementReason::kPromote);
  EXPECT_EQ(d.locality_pages, 1u);
  EXPECT_EQ(d.locality_bytes, kPage);
  EXPECT_EQ(d.promoted_pages, 0u);
  EXPECT_NE(DecisionToString(d).find("locality=1"), std::string::npos);
}

TEST(PlacementLocality, SharedLocalAndUnknownAccessorPagesStay) {
  Round r;
  r.config.locality = true;
  PageHeat shared = Page(A(1), 1, 10, 20, 0);
  shared.shared = true;
  r.hot_on_fast = {shared, Page(A(2), 0, 10, 20, 0), Page(A(3), 1, 10, 20)};
  PlacementDecision d = r.Decide();
  EXPECT_TRUE(d.moves.empty());
  EXPECT_EQ(d.locality_skipped.total(), 0u);
}

TEST(PlacementLocality, HonoursMasksRoomHoldAndEvidence) {
  Round r;
  r.config.locality = true;
  r.ranges = {Range(A(0), A(10), MempolicyMode::kBind, {1}),
              Range(A(10), A(20), MempolicyMode::kPreferredMany, {1})};
  r.hot_on_fast = {Page(A(1), 1, 10, 20, 0), Page(A(11), 1, 10, 20, 0),
                   Page(A(21), 1, 10, 20, 0), Page(A(22), 1, 0, 20, 0)};
  r.held = {A(21)};
  PlacementDecision d = r.Decide();
  EXPECT_TRUE(d.moves.empty());
  EXPECT_EQ(d.locality_skipped[SkipReason::kBindForbidden], 1u);
  EXPECT_EQ(d.locality_skipped[SkipReason::kOutsidePreferredMany], 1u);
  EXPECT_EQ(d.locality_skipped[SkipReason::kHeld], 1u);
  EXPECT_EQ(d.locality_skipped[SkipReason::kNotEnoughEvidence], 1u);

  Round full;
  full.config.locality = true;
  full.SetFree(0, 200);
  full.hot_on_fast = {Page(A(1), 1, 10, 20, 0)};
  d = full.Decide();
  EXPECT_TRUE(d.moves.empty());
  EXPECT_EQ(d.locality_skipped[SkipReason::kNoRoom], 1u);
}

TEST(PlacementLocality, WaitsForEnoughSamplesToCallAPagePrivate) {
  Round r;
  r.config.locality = true;
  PageHeat p = Page(A(1), 1, 10, 20, 0);
  p.samples = 11;
  r.hot_on_fast = {p};
  PlacementDecision d = r.Decide();
  EXPECT_TRUE(d.moves.empty());
  EXPECT_EQ(d.locality_skipped[SkipReason::kNotEnoughEvidence], 1u);
  r.hot_on_fast[0].samples = 12;
  d = r.Decide();
  ASSERT_EQ(d.moves.size(), 1u);
  EXPECT_EQ(d.moves[0].to_node, 0);
  r.config.locality_min_samples = 0;  // unknown sample counts then pass
  r.hot_on_fast[0].samples = 0;
  EXPECT_EQ(r.Decide().moves.size(), 1u);
}

TEST(PlacementLocality, PromotionsTakeTheRoomFirst) {
  Round r;
  r.config.locality = true;
  r.SetFree(0, 201);  // room for one page
  r.candidates = {Page(A(1), 2, 5, 20, 0)};
  r.hot_on_fast = {Page(A(2), 1, 50, 90, 0)};
  PlacementDecision d = r.Decide();
  ASSERT_EQ(d.moves.size(), 1u);
  EXPECT_EQ(d.moves[0].vaddr, A(1));
  EXPECT_EQ(d.locality_skipped[SkipReason::kNoRoom], 1u);
}

// Rule I. ------------------------------------------------------------------

NumaMapsRange Interleaved(MempolicyMode mode, std::vector<int> nodes,
                          std::vector<std::pair<int, uint64_t>> pages) {
  NumaMapsRange r = Range(A(0), A(100000), mode, std::move(nodes));
  r.pages_on_node = std::move(pages);
  return r;
}

TEST(PlacementInterleave, PromotionsRestoreTheEqualRatio) {
  Round r;
  r.ranges = {Interleaved(MempolicyMode::kInterleave, {0, 1},
                          {{0, 30}, {1, 50}, {2, 20}})};
  for (int i = 0; i < 20; ++i) r.candidates.push_back(Page(A(i), 2, 10, 20, 1));
  std::map<int, int> to = PromotedTo(r.Decide());
  EXPECT_EQ(to[1], 20);  // today: all to the accessor's node -> 30:70
  r.config.interleave_tolerance = 0.05;
  to = PromotedTo(r.Decide());
  EXPECT_EQ(to[0], 20);  // -> 50:50
  EXPECT_EQ(to[1], 0);
}

TEST(PlacementInterleave, ToleranceLimitsMovesThatBreakTheRatio) {
  Round r;
  r.ranges = {
      Interleaved(MempolicyMode::kInterleave, {0, 2}, {{0, 50}, {2, 50}})};
  for (int i = 0; i < 10; ++i) r.candidates.push_back(Page(A(i), 2, 10, 20, 0));
  EXPECT_EQ(r.Decide().promoted_pages, 10u);
  r.config.interleave_tolerance = 0.05;
  PlacementDecision d = r.Decide();
  EXPECT_EQ(d.promoted_pages, 5u);  // node 0 up to 55%, node 2 down to 45%
  EXPECT_EQ(d.promote_skipped[SkipReason::kInterleaveRatio], 5u);
}

TEST(PlacementInterleave, WeightedInterleaveKeepsNodeWeights) {
  Round r;
  r.SetFree(0, 1000);
  r.topo.nodes[0].weight = 3;
  r.topo.nodes[1].weight = 1;
  r.ranges = {
      Interleaved(MempolicyMode::kWeightedInterleave, {0, 1}, {{2, 100}})};
  for (int i = 0; i < 100; ++i)
    r.candidates.push_back(Page(A(i), 2, 10, 20, 1));
  r.config.interleave_tolerance = 0.02;
  std::map<int, int> to = PromotedTo(r.Decide());
  EXPECT_NEAR(to[0], 75, 1);
  EXPECT_NEAR(to[1], 25, 1);
  EXPECT_EQ(to[0] + to[1], 100);
}

TEST(PlacementInterleave, DemotionsChooseTheNodeBelowItsShare) {
  // Fast 0, 1; slow 2 (package 0) and 3 (package 1). Range interleaved over
  // 0, 2, 3 with node 3 short; watermark demotions from node 0.
  Round r = RoundOn(Machine({0, 0, 1, 1}, {0, 1, 0, 1}, {0, 1}), 1000);
  r.SetFree(0, 90);
  r.ranges = {Interleaved(MempolicyMode::kInterleave, {0, 2, 3},
                          {{0, 30}, {2, 40}, {3, 30}})};
  for (int i = 0; i < 10; ++i) r.victims.push_back(Page(A(i), 0, 0, 1));
  PlacementDecision d = r.Decide();
  ASSERT_EQ(d.demoted_pages, 10u);
  for (const PlannedMove& m : d.moves) EXPECT_EQ(m.to_node, 2);  // nearest
  r.config.interleave_tolerance = 0.2;
  d = r.Decide();
  ASSERT_EQ(d.demoted_pages, 10u);
  for (const PlannedMove& m : d.moves) EXPECT_EQ(m.to_node, 3);  // 30 -> 40
  r.config.interleave_tolerance = 0.05;  // node 0 may drop to 28.3% only
  d = r.Decide();
  EXPECT_EQ(d.demoted_pages, 1u);  // 30% -> 29%; 28% would break it
  EXPECT_EQ(d.demote_skipped[SkipReason::kInterleaveRatio], 9u);
}

// Rule H. ------------------------------------------------------------------

constexpr uint64_t kHugeAddr = 0x7f0000200000ull;

PageHeat Huge(int node, int accessor) {
  PageHeat p = Page(kHugeAddr, node, 50, 80, accessor);
  p.page_bytes = 2u << 20;
  return p;
}

TEST(PlacementHuge, PreferredNodeWinsOverCpuLocalNode) {
  Round r;
  r.ranges = {Range(A(0), A(100000), MempolicyMode::kPreferred, {1})};
  r.candidates = {Huge(2, /*accessor=*/0)};
  PlacementDecision d = r.Decide();
  ASSERT_EQ(d.moves.size(), 1u);
  EXPECT_EQ(d.moves[0].to_node, 0);  // today: the accessor's node
  r.config.huge_strict_preferred = true;
  d = r.Decide();
  ASSERT_EQ(d.moves.size(), 1u);  // one move: the whole 2 MiB
  EXPECT_EQ(d.moves[0].to_node, 1);
  EXPECT_EQ(d.moves[0].page_bytes, 2u << 20);
  EXPECT_EQ(d.promoted_bytes, uint64_t{512} * kPage);
}

TEST(PlacementHuge, NotScatteredWhenPreferredNodeIsFull) {
  Round r;
  r.ranges = {Range(A(0), A(100000), MempolicyMode::kPreferred, {1})};
  r.SetFree(1, 300);  // room for 100 small pages, not 512
  r.candidates = {Huge(2, 0), Page(A(1), 2, 10, 20, 0)};
  r.config.huge_strict_preferred = true;
  PlacementDecision d = r.Decide();
  ASSERT_EQ(d.moves.size(), 1u);
  EXPECT_EQ(d.moves[0].vaddr, A(1));  // a small page is not affected
  EXPECT_EQ(d.promote_skipped[SkipReason::kHugePreferredFull], 1u);
}

TEST(PlacementHuge, PromoteToAndPreferredManyMasks) {
  Round r;
  r.config.huge_strict_preferred = true;
  r.config.promote_to = {1};
  r.SetFree(1, 300);
  r.candidates = {Huge(2, 0)};
  PlacementDecision d = r.Decide();
  EXPECT_TRUE(d.moves.empty());
  EXPECT_EQ(d.promote_skipped[SkipReason::kHugePreferredFull], 1u);
  r.config.huge_strict_preferred = false;
  EXPECT_EQ(r.Decide().promote_skipped[SkipReason::kNoRoom], 1u);

  // prefer (many) {0,1}: any node of the mask is preferred.
  Round m;
  m.config.huge_strict_preferred = true;
  m.ranges = {Range(A(0), A(100000), MempolicyMode::kPreferredMany, {0, 1})};
  m.SetFree(0, 300);
  m.candidates = {Huge(2, 0)};
  d = m.Decide();
  ASSERT_EQ(d.moves.size(), 1u);
  EXPECT_EQ(d.moves[0].to_node, 1);
}

// All rules at once on random rounds: bind ranges and masks hold.
TEST(PlacementRules, RandomRoundsWithEveryRuleKeepMasks) {
  std::mt19937 rng(6);
  auto uni = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  uint64_t promoted = 0, demoted = 0, local = 0;
  for (int round = 0; round < 300; ++round) {
    Round r = RoundOn(TwoPackagesFourFast(), 0);
    for (NodeFree& f : r.free) f.free_bytes = uint64_t(uni(50, 900)) * kPage;
    r.config.weights = Weights("0:3,1:1,2:2,3:1");
    r.config.package_aware = uni(0, 1);
    r.config.locality = true;
    r.config.interleave_tolerance = 0.1;
    r.config.huge_strict_preferred = true;
    r.ranges = {Range(A(0), A(100), MempolicyMode::kBind, {1, 3, 4}),
                Interleaved(MempolicyMode::kInterleave, {0, 2, 4},
                            {{0, 50}, {2, 50}, {4, 100}})};
    r.ranges[1].start = A(100);
    r.ranges[1].end = A(200);
    for (int i = 0; i < 300; ++i) {
      const int node = uni(0, 4);
      PageHeat p = Page(A(i), node, uni(0, 50), 60, uni(-1, 4));
      p.shared = uni(0, 3) == 0;
      (node == 4   ? r.candidates
       : uni(0, 1) ? r.victims
                   : r.hot_on_fast)
          .push_back(p);
    }
    PlacementDecision d = r.Decide();
    const std::string want = DecisionToString(d);
    promoted += d.promoted_pages;
    demoted += d.demoted_pages;
    local += d.locality_pages;
    for (const PlannedMove& m : d.moves) {
      if (m.vaddr < A(100)) {
        EXPECT_TRUE(m.to_node == 1 || m.to_node == 3 || m.to_node == 4) << want;
      }
      if (m.trigger == PlacementTrigger::kLocality) {
        EXPECT_NE(m.to_node, 4) << want;  // within the fast tier
        EXPECT_NE(m.from_node, 4) << want;
      }
    }
    std::shuffle(r.candidates.begin(), r.candidates.end(), rng);
    std::shuffle(r.victims.begin(), r.victims.end(), rng);
    std::shuffle(r.hot_on_fast.begin(), r.hot_on_fast.end(), rng);
    std::shuffle(r.free.begin(), r.free.end(), rng);
    ASSERT_EQ(DecisionToString(r.Decide()), want) << "round " << round;
  }
  EXPECT_GT(promoted, 1000u);
  EXPECT_GT(demoted, 100u);
  EXPECT_GT(local, 100u);
}

// The text the round lines and DecisionToString show: nonzero reasons
// only, in SkipReason order.
TEST(SkipCountsString, NonzeroReasonsInOrder) {
  SkipCounts c;
  EXPECT_EQ(SkipCountsString(c), "");
  c[SkipReason::kNotWorthTheCost] = 7;
  c[SkipReason::kHeld] = 2;
  EXPECT_EQ(SkipCountsString(c), "held:2,not_worth_the_cost:7");
}

}  // namespace
}  // namespace hotpage
