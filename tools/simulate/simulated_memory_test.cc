#include "tools/simulate/simulated_memory.h"

#include <cerrno>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "migrator/migrator.h"
#include "migrator/move_requests.h"
#include "migrator/simulated_migrator.h"
#include "policy/topology.h"

namespace hotpage {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kBase = 0x7f0000000000;
constexpr uint64_t kSec = 1000000000;

uint64_t A(uint64_t i) { return kBase + i * kPage; }

NodeInfo Node(int id, std::vector<int> cpus, std::vector<int> distance, int tier,
              int64_t latency_ns, int64_t bw_mbps) {
  NodeInfo n;
  n.id = id;
  n.cpus = std::move(cpus);
  n.memory_bytes = uint64_t{1} << 30;
  n.distance = std::move(distance);
  n.tier = tier;
  n.hmat.read_latency_ns = latency_ns;
  n.hmat.read_bandwidth_mbps = bw_mbps;
  return n;
}

// DRAM (cpus 0-1) + CXL, as the repo's dram+cxl guest.
Topology DramCxl() {
  Topology t;
  t.nodes = {Node(0, {0, 1}, {10, 20}, 0, 80, 20480), Node(1, {}, {20, 10}, 1, 250, 8192)};
  t.tiers = {MemoryTier{0, {0}}, MemoryTier{1, {1}}};
  return t;
}

// Two packages, each DRAM + CXL: nodes 0, 1 DRAM (cpu 0, cpu 1), 2, 3 CXL.
Topology TwoPackages() {
  Topology t;
  t.nodes = {Node(0, {0}, {10, 21, 24, 31}, 0, 80, 20480), Node(1, {1}, {21, 10, 31, 24}, 0, 80, 20480),
             Node(2, {}, {24, 31, 10, 41}, 1, 250, 8192), Node(3, {}, {31, 24, 41, 10}, 1, 250, 8192)};
  t.tiers = {MemoryTier{0, {0, 1}}, MemoryTier{1, {2, 3}}};
  return t;
}

std::unique_ptr<SimulatedMemory> Make(const Topology& t, std::vector<SimNodeCapacity> caps,
                                      MigrationCost cost = {}) {
  SimulatedMemoryOptions o;
  o.capacities = std::move(caps);
  o.cost = cost;
  absl::StatusOr<std::unique_ptr<SimulatedMemory>> m = SimulatedMemory::Create(t, o);
  EXPECT_TRUE(m.ok()) << m.status();
  return std::move(*m);
}

TEST(SimulatedMemoryTest, FirstTouchFillsTheLocalNodeThenSpillsByDistance) {
  const Topology t = DramCxl();
  auto m = Make(t, {{0, 3}, {1, 100}});
  for (int i = 0; i < 5; ++i) EXPECT_EQ(m->Touch(A(i), /*cpu=*/1, 0), i < 3 ? 0 : 1) << i;
  // Touching again (any offset in the page) keeps the node.
  EXPECT_EQ(m->Touch(A(0) + 100, 0, 1), 0);
  EXPECT_EQ(m->Touch(A(4), 0, 1), 1);
  EXPECT_EQ(m->used_pages(0), 3u);
  EXPECT_EQ(m->used_pages(1), 2u);
  EXPECT_EQ(m->counters().touched_pages, 5u);
  EXPECT_EQ(m->counters().spilled_pages, 2u);
  // An unknown CPU prefers the first fast node (full: spills too).
  EXPECT_EQ(m->Touch(A(9), 4000, 0), 1);
  EXPECT_EQ(m->NodeOf(A(9)), 1);
  EXPECT_EQ(m->NodeOf(A(50)), -ENOENT);
}

TEST(SimulatedMemoryTest, FirstTouchUsesTheCpusPackageAndZonelistOrder) {
  const Topology t = TwoPackages();
  auto m = Make(t, {{0, 1}, {1, 1}, {2, 1}, {3, 10}});
  EXPECT_EQ(m->Touch(A(0), 1, 0), 1);  // cpu 1: node 1
  EXPECT_EQ(m->Touch(A(1), 0, 0), 0);  // cpu 0: node 0
  // cpu 1 again: node 1 full, then by distance from node 1: 0 (21, full),
  // 3 (24).
  EXPECT_EQ(m->Touch(A(2), 1, 0), 3);
  // cpu 0: 0 full, 1 (21) full, 2 (24).
  EXPECT_EQ(m->Touch(A(3), 0, 0), 2);
  EXPECT_EQ(m->Touch(A(4), 0, 0), 3);  // 2 full too: 3 (31)
  EXPECT_EQ(m->fast_nodes(), (std::vector<int>{0, 1}));
  EXPECT_EQ(m->DemotionTargets(0), (std::vector<int>{2, 3}));
  EXPECT_EQ(m->DemotionTargets(1), (std::vector<int>{3, 2}));
  EXPECT_TRUE(m->DemotionTargets(2).empty());
}

TEST(SimulatedMemoryTest, FirstTouchLeavesTheLowWatermarkToMigrations) {
  // 0.1% of 5000 pages: first touch leaves 5 free; a move may take them.
  auto m = Make(DramCxl(), {{0, 5000}, {1, 10000}});
  for (int i = 0; i < 5000; ++i) m->Touch(A(i), 0, 0);
  EXPECT_EQ(m->used_pages(0), 4995u);
  EXPECT_EQ(m->NodeOf(A(4999)), 1);
  for (int i = 4995; i < 5000; ++i) EXPECT_EQ(m->Move(A(i), 0, 0).status, 0);
  EXPECT_EQ(m->free_pages(0), 0u);
  EXPECT_EQ(m->Move(A(6000 - 1), 0, 0).status, -ENOENT);
}

TEST(SimulatedMemoryTest, EveryNodeFullLeavesThePageUnplaced) {
  auto m = Make(DramCxl(), {{0, 1}, {1, 1}});
  EXPECT_EQ(m->Touch(A(0), 0, 0), 0);
  EXPECT_EQ(m->Touch(A(1), 0, 0), 1);
  EXPECT_EQ(m->Touch(A(2), 0, 0), -ENOMEM);
  EXPECT_EQ(m->NodeOf(A(2)), -ENOENT);
  EXPECT_EQ(m->counters().unplaced_samples, 1u);
  EXPECT_EQ(m->pages(), 2u);
}

TEST(SimulatedMemoryTest, CapacityIsNeverExceeded) {
  auto m = Make(TwoPackages(), {{0, 50}, {1, 50}, {2, 60}, {3, 60}});
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200; ++i) ASSERT_GE(m->Touch(A(i), rng() % 3, 0), 0);
  uint64_t enomem = 0;
  for (int step = 0; step < 20000; ++step) {
    const uint64_t v = A(rng() % 200);
    const int to = static_cast<int>(rng() % 4);
    const int before = m->NodeOf(v);
    SimulatedMemory::MoveResult r = m->Move(v, to, step);
    if (r.status == -ENOMEM) {
      ++enomem;
      EXPECT_EQ(m->free_pages(to), 0u);
      EXPECT_EQ(m->NodeOf(v), before);
    } else {
      ASSERT_EQ(r.status, to);
    }
    uint64_t total = 0;
    for (int n : {0, 1, 2, 3}) {
      ASSERT_LE(m->used_pages(n), m->capacity_pages(n)) << "node " << n << " step " << step;
      total += m->used_pages(n);
    }
    ASSERT_EQ(total, 200u);
  }
  EXPECT_GT(enomem, 0u);
  EXPECT_EQ(m->counters().failed_enomem, enomem);
}

TEST(SimulatedMemoryTest, AccountsMigrationCostBytesAndDirection) {
  MigrationCost cost;
  cost.per_page_ns = 1000;
  auto m = Make(DramCxl(), {{0, 10}, {1, 10}}, cost);
  ASSERT_EQ(m->Touch(A(0), 0, 0), 0);
  // Demotion 0 -> 1: 1000 ns + 4096 bytes at min(20480, 8192) MiB/s.
  const uint64_t copy_ns = static_cast<uint64_t>(4096 * 1e9 / (8192.0 * 1024 * 1024) + 0.5);
  EXPECT_EQ(copy_ns, 477u);
  SimulatedMemory::MoveResult r = m->Move(A(0), 1, 10);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.cost_ns, 1000 + copy_ns);
  // Already there: success, free.
  r = m->Move(A(0), 1, 20);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.cost_ns, 0u);
  m->Move(A(0), 0, 30);  // back up: a ping-pong (left tier 0 at 10)
  m->AddOverheadNs(70000);
  const SimMemoryCounters& c = m->counters();
  EXPECT_EQ(c.demoted_pages, 1u);
  EXPECT_EQ(c.promoted_pages, 1u);
  EXPECT_EQ(c.bytes_migrated, 2 * kPage);
  EXPECT_EQ(c.migration_ns, 2 * (1000 + copy_ns) + 70000);
  EXPECT_EQ(c.pingpongs, 1u);
  EXPECT_EQ(m->Move(A(99), 1, 40).status, -ENOENT);
  EXPECT_EQ(m->Move(A(0), 7, 40).status, -EINVAL);
}

TEST(SimulatedMemoryTest, PingPongNeedsTheReturnWithinTheWindow) {
  auto m = Make(DramCxl(), {{0, 10}, {1, 10}});
  ASSERT_EQ(m->Touch(A(0), 0, 0), 0);
  m->Move(A(0), 1, 0);
  m->Move(A(0), 0, 61 * kSec);  // left tier 0 61 s ago: not a ping-pong
  EXPECT_EQ(m->counters().pingpongs, 0u);
  m->Move(A(0), 1, 62 * kSec);  // left tier 1 1 s ago
  EXPECT_EQ(m->counters().pingpongs, 1u);
}

TEST(SimulatedMemoryTest, IsAMemoryView) {
  auto m = Make(DramCxl(), {{0, 4}, {1, 10}});
  m->Touch(A(0), 0, 0);
  m->Touch(A(1), 0, 0);
  m->Move(A(1), 1, 0);
  std::vector<uint64_t> pages = {A(0), A(1), A(2)};
  std::vector<int> status(3, 99);
  EXPECT_EQ(m->QueryNodes(pages, absl::MakeSpan(status)), 0);
  EXPECT_EQ(status, (std::vector<int>{0, 1, -ENOENT}));
  std::vector<NodeFree> free = m->Free();
  ASSERT_EQ(free.size(), 2u);
  EXPECT_EQ(free[0].node, 0);
  EXPECT_EQ(free[0].free_bytes, 3 * kPage);
  EXPECT_EQ(free[1].free_bytes, 9 * kPage);
  EXPECT_TRUE(m->Ranges().empty());
  EXPECT_FALSE(m->IsHeld(A(0)));
  EXPECT_TRUE(m->BackedOffNodes().empty());
}

// --- SimulatedMigrator ------------------------------------------------------

std::vector<MoveRequest> Requests(uint64_t first, uint64_t count, int to,
                                  MoveReason reason = MoveReason::kPromote) {
  std::vector<MoveRequest> out;
  for (uint64_t i = first; i < first + count; ++i) {
    MoveRequest r;
    r.vaddr = A(i);
    r.to_node = to;
    r.reason = reason;
    out.push_back(r);
  }
  return out;
}

// Pages moved by `t` at `rate_mbps` when 200k pages wait on the slow node.
uint64_t MovedBy(double rate_mbps, uint64_t t) {
  const Topology topo = DramCxl();
  auto m = Make(topo, {{0, 400000}, {1, 400000}});
  for (uint64_t i = 0; i < 200000; ++i) m->Touch(A(i), 4000, 0);
  for (uint64_t i = 0; i < 200000; ++i) m->Move(A(i), 1, 0);
  MigratorOptions o;
  o.rate_limit_bytes_per_sec = rate_mbps * 1e6;
  o.queue_capacity = 1 << 20;
  SimulatedMigrator mig(o, MigrationCost{}, m.get(), 0);
  mig.Submit(Requests(0, 200000, 0), 0);
  mig.RunUntil(t);
  return mig.stats().promoted_pages;
}

TEST(SimulatedMigratorTest, MovesAtTheRateLimitInSimulatedTime) {
  // 256 MB/s with a 12.8 MB bucket (50 ms of the rate): after t seconds,
  // burst + rate * t bytes, within one batch (1024 pages).
  for (uint64_t secs : {1, 2}) {
    const double expect = (12.8e6 + 256e6 * secs) / kPage;
    const double got = static_cast<double>(MovedBy(256, secs * kSec));
    EXPECT_NEAR(got, expect, 1024) << secs << " s";
  }
  // Twice the rate, twice the pages (the bucket scales with it too).
  const double r = static_cast<double>(MovedBy(512, kSec)) / static_cast<double>(MovedBy(256, kSec));
  EXPECT_NEAR(r, 2.0, 0.05);
  // At t = 0 one call of a batch; the next starts when it has taken its
  // modelled time.
  EXPECT_EQ(MovedBy(256, 0), 1024u);
}

TEST(SimulatedMigratorTest, QueueCapacityAndValidity) {
  auto m = Make(DramCxl(), {{0, 10}, {1, 100000}});
  MigratorOptions o;
  SimulatedMigrator mig(o, MigrationCost{}, m.get(), 0);
  std::vector<MoveRequest> reqs = Requests(0, 70000, 0);
  reqs.push_back(MoveRequest{});  // vaddr 0: invalid
  EXPECT_EQ(mig.Submit(reqs, 0), 65536u);
  EXPECT_EQ(mig.stats().dropped_queue_full, 70000u - 65536u);
  EXPECT_EQ(mig.stats().dropped_invalid, 1u);
  EXPECT_EQ(mig.stats().queue_depth, 65536u);
}

TEST(SimulatedMigratorTest, UntouchedAndAlreadyPlacedPagesAreDropped) {
  auto m = Make(DramCxl(), {{0, 10}, {1, 10}});
  m->Touch(A(0), 0, 0);  // node 0
  m->Touch(A(1), 0, 0);
  m->Move(A(1), 1, 0);
  SimulatedMigrator mig(MigratorOptions{}, MigrationCost{}, m.get(), 0);
  mig.Submit(Requests(0, 3, 0), 5);  // A(0) already there, A(2) untouched
  EXPECT_EQ(mig.NextEventNs(), 5u);
  mig.RunUntil(5);
  const SimulatedMigratorStats s = mig.stats();
  EXPECT_EQ(s.already_on_target, 1u);
  EXPECT_EQ(s.failed_enoent, 1u);
  EXPECT_EQ(s.promoted_pages, 1u);
  EXPECT_EQ(m->NodeOf(A(1)), 0);
  EXPECT_TRUE(mig.idle() || mig.NextEventNs() > 5);
  mig.RunUntil(kSec);
  EXPECT_TRUE(mig.idle());
  EXPECT_EQ(mig.NextEventNs(), UINT64_MAX);
}

TEST(SimulatedMigratorTest, CallsTakeModelledTime) {
  auto m = Make(DramCxl(), {{0, 10}, {1, 10}});
  m->Touch(A(0), 0, 0);
  m->Move(A(0), 1, 0);
  MigrationCost cost;
  cost.per_call_ns = 70000;
  cost.per_page_ns = 2000;
  SimulatedMigrator mig(MigratorOptions{}, cost, m.get(), 0);
  mig.Submit(Requests(0, 1, 0), 100);
  mig.RunUntil(100);
  // Busy until 100 + 70 us + 2 us + 4096 B at 8 GiB/s; then idle.
  EXPECT_EQ(mig.NextEventNs(), 100u + 70000 + 2000 + 477);
  mig.RunUntil(mig.NextEventNs());
  EXPECT_TRUE(mig.idle());
  EXPECT_EQ(m->counters().migration_ns, 70000u + 2000 + 477 + (2000 + 477));
}

TEST(SimulatedMigratorTest, EnomemBacksTheNodeOff) {
  auto m = Make(DramCxl(), {{0, 1}, {1, 10}});
  m->Touch(A(0), 0, 0);  // fills node 0
  m->Touch(A(1), 0, 0);  // node 1
  SimulatedMigrator mig(MigratorOptions{}, MigrationCost{}, m.get(), 0);
  m->set_gate(&mig);
  mig.Submit(Requests(1, 1, 0), 0);
  mig.RunUntil(0);
  EXPECT_EQ(mig.stats().failed_enomem, 1u);
  EXPECT_EQ(mig.BackedOffNodes(kSec), std::vector<int>{0});
  m->set_now(kSec);
  EXPECT_EQ(m->BackedOffNodes(), std::vector<int>{0});
  // Submitting to it during the back-off is refused; after 10 s it is not.
  EXPECT_EQ(mig.Submit(Requests(1, 1, 0), kSec), 0u);
  EXPECT_EQ(mig.stats().dropped_node_backoff, 1u);
  EXPECT_TRUE(mig.BackedOffNodes(11 * kSec).empty());
  EXPECT_EQ(mig.Submit(Requests(1, 1, 0), 11 * kSec), 1u);
}

TEST(SimulatedMigratorTest, PingPongPagesAreHeld) {
  auto m = Make(DramCxl(), {{0, 10}, {1, 10}});
  m->Touch(A(0), 0, 0);
  SimulatedMigrator mig(MigratorOptions{}, MigrationCost{}, m.get(), 0);
  m->set_gate(&mig);
  // 0 -> 1 -> 0 -> 1 -> 0: the third reversal (fourth move) holds it
  // (PingPongOptions: more than 2 reversals within 60 s).
  uint64_t t = 0;
  for (int i = 0; i < 4; ++i) {
    t += kSec;
    mig.Submit(Requests(0, 1, i % 2 == 0 ? 1 : 0), t);
    mig.RunUntil(t + kSec / 2);
  }
  EXPECT_EQ(mig.stats().pingpong_pages, 1u);
  m->set_now(t + kSec / 2);
  EXPECT_TRUE(m->IsHeld(A(0)));
  t += kSec;
  mig.Submit(Requests(0, 1, 1), t);
  mig.RunUntil(t + kSec / 2);
  EXPECT_EQ(mig.stats().skipped_held, 1u);
  EXPECT_EQ(m->NodeOf(A(0)), 0);
}

// --- AppendMoveRequests ----------------------------------------------------

PlannedMove Planned(uint64_t vaddr, int from, int to, PlacementReason reason, uint32_t bytes = 4096) {
  PlannedMove m;
  m.vaddr = vaddr;
  m.page_bytes = bytes;
  m.from_node = from;
  m.to_node = to;
  m.reason = reason;
  return m;
}

TEST(MoveRequestsTest, DemotionsFirstIn4KiBPages) {
  PlacementDecision d;
  d.moves = {Planned(A(1), 0, 1, PlacementReason::kDemote), Planned(A(2), 1, 0, PlacementReason::kPromote),
             Planned(A(3), 0, 1, PlacementReason::kDemote),
             Planned(kBase + (4 << 20), 1, 0, PlacementReason::kPromote, 2 << 20)};
  std::vector<MoveRequest> r;
  AppendMoveRequests(d, SimTime(5), &r);
  ASSERT_EQ(r.size(), 3u + 512u);
  EXPECT_EQ(r[0].vaddr, A(1));
  EXPECT_EQ(r[1].vaddr, A(3));
  EXPECT_EQ(r[1].reason, MoveReason::kDemote);
  EXPECT_EQ(r[2].vaddr, A(2));
  EXPECT_EQ(r[2].reason, MoveReason::kPromote);
  EXPECT_EQ(r[3].vaddr, kBase + (4 << 20));
  EXPECT_EQ(r.back().vaddr, kBase + (4 << 20) + (511 << 12));
  for (const MoveRequest& q : r) {
    EXPECT_EQ(q.page_bytes, 4096u);
    EXPECT_EQ(q.from_node, -1);
    EXPECT_EQ(q.hot_since, SimTime(5));
  }
}

// 600 swaps on a full fast node. In the decision's order (demotion,
// promotion, demotion, ...) the migrator's one-node-per-call batches run
// promotions before the demotions that make their room: ENOMEM, and the
// node is backed off. Demotions first: every promotion finds its room.
TEST(MoveRequestsTest, DemotionsFirstKeepPromotionsBehindTheirRoom) {
  for (const bool demotions_first : {false, true}) {
    auto m = Make(DramCxl(), {{0, 600}, {1, 10000}});
    for (int i = 0; i < 1200; ++i) m->Touch(A(i), 0, 0);  // 0..599 on node 0
    PlacementDecision d;
    for (int i = 0; i < 600; ++i) {
      d.moves.push_back(Planned(A(i), 0, 1, PlacementReason::kDemote));
      d.moves.push_back(Planned(A(600 + i), 1, 0, PlacementReason::kPromote));
    }
    std::vector<MoveRequest> reqs;
    if (demotions_first) {
      AppendMoveRequests(d, SimTime(0), &reqs);
    } else {
      for (const PlannedMove& p : d.moves) {
        MoveRequest q;
        q.vaddr = p.vaddr;
        q.to_node = p.to_node;
        reqs.push_back(q);
      }
    }
    SimulatedMigrator mig(MigratorOptions{}, MigrationCost{}, m.get(), 0);
    mig.Submit(reqs, 0);
    mig.RunUntil(10 * kSec);
    SCOPED_TRACE(demotions_first ? "demotions first" : "decision order");
    if (demotions_first) {
      EXPECT_EQ(mig.stats().failed_enomem, 0u);
      EXPECT_EQ(mig.stats().promoted_pages, 600u);
      EXPECT_TRUE(mig.BackedOffNodes(10 * kSec).empty());
    } else {
      EXPECT_GT(mig.stats().failed_enomem, 0u);
      EXPECT_EQ(mig.BackedOffNodes(10 * kSec), std::vector<int>{0});
    }
  }
}

}  // namespace
}  // namespace hotpage
