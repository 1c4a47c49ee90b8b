#include "tools/simulate/sim_colloid.h"

#include <memory>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tools/simulate/sim_baselines.h"
#include "tools/simulate/sim_driver.h"
#include "tools/simulate/sim_machine.h"

namespace hotpage {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kBase = 0x7f0000000000;
constexpr uint64_t kSec = 1000000000;

uint64_t A(uint64_t i) { return kBase + i * kPage; }

Sample At(uint64_t i, uint64_t t_ns, uint64_t period) {
  Sample s;
  s.vaddr = A(i) + 64;
  s.time_ns = t_ns;
  s.pid = 7;
  s.period = period;
  return s;
}

SimMachine Machine(uint64_t fast_pages) {
  absl::StatusOr<Topology> t = PresetTopology("dram+cxl");
  EXPECT_TRUE(t.ok());
  CapacitySpec spec;
  spec.fast_bytes = fast_pages * kPage;
  absl::StatusOr<SimMachine> m = ScaleMachine(*t, 1000, spec);
  EXPECT_TRUE(m.ok()) << m.status();
  return *m;
}

std::unique_ptr<SimulatedMemory> Memory(const SimMachine& m) {
  SimulatedMemoryOptions o;
  o.capacities = m.capacities;
  absl::StatusOr<std::unique_ptr<SimulatedMemory>> mem =
      SimulatedMemory::Create(m.topology, o);
  EXPECT_TRUE(mem.ok()) << mem.status();
  return std::move(*mem);
}

// Samples every 10 us round-robin over pages [first, first + n) for
// `seconds`, each standing for `period` cache lines.
void Stream(Simulation& sim, uint64_t first, uint64_t n, uint64_t start_ns,
            double seconds, uint64_t period) {
  const uint64_t count = static_cast<uint64_t>(seconds * 100000);
  for (uint64_t k = 0; k < count; ++k)
    sim.Feed(At(first + k % n, start_ns + k * 10000, period));
}

int FastPages(const SimulatedMemory& mem, uint64_t first, uint64_t n) {
  int fast = 0;
  for (uint64_t i = first; i < first + n; ++i) {
    const int node = mem.NodeOf(A(i));
    fast += node >= 0 && mem.is_fast(node) ? 1 : 0;
  }
  return fast;
}

// 100k samples/s of period 3840 is 3.84e8 lines/s, 24.6 GB/s: 1.2x the
// DRAM node's 20480 MB/s (and less than DRAM and CXL together). First
// touch puts all 16 pages on DRAM, where they run at 5x its 80 ns, more
// than CXL's idle 250 ns: colloid moves hot pages to CXL; first touch
// keeps them all on DRAM.
TEST(ColloidPolicyTest, SaturatingStreamMovesHotPagesOutOfTheFastTier) {
  const SimMachine m = Machine(/*fast_pages=*/64);
  std::vector<std::unique_ptr<SimPolicy>> p;
  p.push_back(std::make_unique<ColloidPolicy>(Memory(m), ColloidOptions{}));
  p.push_back(std::make_unique<FirstTouchPolicy>(Memory(m)));
  Simulation sim(std::move(p), kSec);
  Stream(sim, 0, 16, 1, 3.0, 3840);
  sim.Finish();
  const auto& colloid = static_cast<const ColloidPolicy&>(*sim.policies()[0]);
  const auto& ft = static_cast<const FirstTouchPolicy&>(*sim.policies()[1]);
  EXPECT_EQ(FastPages(ft.memory(), 0, 16), 16);
  EXPECT_LT(FastPages(colloid.memory(), 0, 16), 16);
  EXPECT_GT(FastPages(colloid.memory(), 0, 16), 0);  // not all: balance
  const std::vector<PolicyTally> t = sim.Totals();
  EXPECT_GT(t[0].demoted_pages, 0u);
  EXPECT_LT(t[0].fast_share(), t[1].fast_share());
  // And it pays: a lower mean loaded latency than all-on-DRAM.
  EXPECT_LT(t[0].avg_latency_ns(), t[1].avg_latency_ns());
  EXPECT_NEAR(t[1].avg_latency_ns(), 400, 1);  // 5 x 80 ns
}

// A light load (period 1: a few MB/s): DRAM stays faster than CXL, so
// colloid promotes by its ranking as memtis does: the 200 equally hot
// pages that first touch left on CXL (the fast tier was full of
// once-touched pages) move to DRAM, cold pages making room, and nothing
// hot is demoted. Colloid stops within its binary search's resolution:
// a page whose probability (1/200) exceeds delta_p = (1 - p) / 2 stays,
// so at most 1% of the accesses stay on CXL (2 of the 200 pages).
TEST(ColloidPolicyTest, LightLoadBehavesLikeItsBaseRanking) {
  const SimMachine m = Machine(/*fast_pages=*/256);
  std::vector<std::unique_ptr<SimPolicy>> p;
  p.push_back(std::make_unique<ColloidPolicy>(Memory(m), ColloidOptions{}));
  p.push_back(std::make_unique<MemtisPolicy>(Memory(m), MemtisOptions{}));
  Simulation sim(std::move(p), kSec);
  for (uint64_t i = 0; i < 256; ++i) sim.Feed(At(1000 + i, 1 + i, 1));
  Stream(sim, 0, 200, 1000, 5.0, 1);
  sim.Finish();
  const auto& colloid = static_cast<const ColloidPolicy&>(*sim.policies()[0]);
  const auto& memtis = static_cast<const MemtisPolicy&>(*sim.policies()[1]);
  EXPECT_GE(FastPages(colloid.memory(), 0, 200), 198);
  EXPECT_EQ(FastPages(memtis.memory(), 0, 200), 200);
  EXPECT_LT(colloid.fast_latency_ns(), colloid.slow_latency_ns());
  uint64_t demotions = 0, capacity_demotions = 0;
  for (const auto& [k, v] : colloid.Details()) {
    if (k == "demotions") demotions = v;
    if (k == "capacity_demotions") capacity_demotions = v;
  }
  EXPECT_EQ(demotions, 0u);
  EXPECT_GE(capacity_demotions, 190u);
  // Steady state (the last second; colloid gets there in halving steps,
  // one per 500 ms quantum, memtis at its first migration): the same.
  const std::vector<PolicyTally>& last = sim.intervals().back().tallies;
  EXPECT_NEAR(last[0].fast_share(), last[1].fast_share(), 0.01);
}

}  // namespace
}  // namespace hotpage
