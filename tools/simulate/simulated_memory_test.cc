#include "tools/simulate/simulated_memory.h"

#include <cerrno>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "policy/topology.h"

namespace hotpage {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kBase = 0x7f0000000000;
constexpr uint64_t kSec = 1000000000;

uint64_t A(uint64_t i) { return kBase + i * kPage; }

NodeInfo Node(int id, std::vector<int> cpus, std::vector<int> distance,
              int tier, int64_t latency_ns, int64_t bw_mbps) {
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
  t.nodes = {Node(0, {0, 1}, {10, 20}, 0, 80, 20480),
             Node(1, {}, {20, 10}, 1, 250, 8192)};
  t.tiers = {MemoryTier{0, {0}}, MemoryTier{1, {1}}};
  return t;
}

// Two packages, each DRAM + CXL: nodes 0, 1 DRAM (cpu 0, cpu 1), 2, 3 CXL.
Topology TwoPackages() {
  Topology t;
  t.nodes = {Node(0, {0}, {10, 21, 24, 31}, 0, 80, 20480),
             Node(1, {1}, {21, 10, 31, 24}, 0, 80, 20480),
             Node(2, {}, {24, 31, 10, 41}, 1, 250, 8192),
             Node(3, {}, {31, 24, 41, 10}, 1, 250, 8192)};
  t.tiers = {MemoryTier{0, {0, 1}}, MemoryTier{1, {2, 3}}};
  return t;
}

std::unique_ptr<SimulatedMemory> Make(const Topology& t,
                                      std::vector<SimNodeCapacity> caps,
                                      MigrationCost cost = {}) {
  SimulatedMemoryOptions o;
  o.capacities = std::move(caps);
  o.cost = cost;
  absl::StatusOr<std::unique_ptr<SimulatedMemory>> m =
      SimulatedMemory::Create(t, o);
  EXPECT_TRUE(m.ok()) << m.status();
  return std::move(*m);
}

TEST(SimulatedMemoryTest, FirstTouchFillsTheLocalNodeThenSpillsByDistance) {
  const Topology t = DramCxl();
  auto m = Make(t, {{0, 3}, {1, 100}});
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(m->Touch(A(i), /*cpu=*/1, 0), i < 3 ? 0 : 1) << i;
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

// SimulatedMemoryOptions::reclaim_demotes: a move that leaves the node below
// its low watermark (0.1% of 1000 pages: 1 page) demotes the node's least
// recently touched pages to its demotion target until 3 pages are free; a
// touch makes a page recent. Without the option the last page's move into
// the full node fails.
TEST(SimulatedMemoryTest, ReclaimDemotesTheLeastRecentlyTouchedPages) {
  const Topology t = DramCxl();
  for (const bool reclaim : {true, false}) {
    SCOPED_TRACE(reclaim ? "reclaim_demotes" : "off");
    SimulatedMemoryOptions o;
    o.capacities = {{0, 1000}, {1, 10000}};
    o.reclaim_demotes = reclaim;
    auto m = std::move(*SimulatedMemory::Create(t, o));
    for (uint64_t i = 0; i < 1010; ++i)
      ASSERT_EQ(m->Touch(A(i), 0, i), i < 999 ? 0 : 1) << i;
    for (uint64_t i = 5; i < 999; ++i) m->Touch(A(i), 0, 2000 + i);
    m->Touch(A(1), 0, 4000);  // recent again: A(0), A(2), A(3) are the LRU
    EXPECT_EQ(m->Move(A(1000), 0, 5000).status, 0);  // free 1 -> 0
    if (!reclaim) {
      EXPECT_EQ(m->Move(A(1001), 0, 5001).status, -ENOMEM);
      EXPECT_EQ(m->counters().reclaim_runs, 0u);
      continue;
    }
    EXPECT_EQ(m->counters().reclaim_runs, 1u);
    EXPECT_EQ(m->counters().reclaim_demotions, 3u);
    EXPECT_EQ(m->counters().demoted_pages, 3u);
    EXPECT_EQ(m->free_pages(0), 3u);
    for (uint64_t i : {0, 2, 3}) EXPECT_EQ(m->NodeOf(A(i)), 1) << i;
    for (uint64_t i : {1, 4, 1000}) EXPECT_EQ(m->NodeOf(A(i)), 0) << i;
    // Down to the low watermark: no reclaim; below it: A(4), then A(5).
    EXPECT_EQ(m->Move(A(1001), 0, 5001).status, 0);
    EXPECT_EQ(m->Move(A(1002), 0, 5002).status, 0);
    EXPECT_EQ(m->counters().reclaim_runs, 1u);
    EXPECT_EQ(m->Move(A(1003), 0, 5003).status, 0);
    EXPECT_EQ(m->counters().reclaim_runs, 2u);
    EXPECT_EQ(m->NodeOf(A(4)), 1);
    EXPECT_EQ(m->NodeOf(A(5)), 1);
    EXPECT_EQ(m->NodeOf(A(6)), 1);
    EXPECT_EQ(m->NodeOf(A(7)), 0);
    EXPECT_EQ(m->free_pages(0), 3u);
    EXPECT_EQ(m->used_pages(0) + m->used_pages(1), 1010u);
  }
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
      ASSERT_LE(m->used_pages(n), m->capacity_pages(n))
          << "node " << n << " step " << step;
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
  const uint64_t copy_ns =
      static_cast<uint64_t>(4096 * 1e9 / (8192.0 * 1024 * 1024) + 0.5);
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

// report_ranges: the touched pages as anonymous ranges, split where pages
// are 2 MiB (512 pages) or more apart, with their pages per node.
TEST(SimulatedMemoryTest, ReportsRangesOfTouchedPagesWhenAsked) {
  SimulatedMemoryOptions o;
  o.capacities = {{0, 4}, {1, 100}};
  o.report_ranges = true;
  absl::StatusOr<std::unique_ptr<SimulatedMemory>> m =
      SimulatedMemory::Create(DramCxl(), o);
  ASSERT_TRUE(m.ok()) << m.status();
  // Node 0 takes 4 (its reserve rounds down to 0), node 1 the rest.
  for (uint64_t i = 0; i < 6; ++i) (*m)->Touch(A(i), 0, 0);
  for (uint64_t i = 600; i < 602; ++i) (*m)->Touch(A(i), 0, 0);
  (*m)->Touch(A(1100), 0, 0);  // 498 pages after 602: the same range
  const std::vector<NumaMapsRange> r = (*m)->Ranges();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].start, A(0));
  EXPECT_EQ(r[0].end, A(6));
  EXPECT_TRUE(r[0].anon);
  EXPECT_EQ(r[0].pages_on_node,
            (std::vector<std::pair<int, uint64_t>>{{0, 4}, {1, 2}}));
  EXPECT_EQ(r[1].start, A(600));
  EXPECT_EQ(r[1].end, A(1101));
  EXPECT_EQ(r[1].pages_on_node,
            (std::vector<std::pair<int, uint64_t>>{{1, 3}}));
}

}  // namespace
}  // namespace hotpage
