// The arms and hemem peer models (sim_arms.h, sim_hemem.h) on small
// scripted sample streams over a two-node dram+cxl machine: each test shows
// the mechanism that defines the peer and fails if it is taken out.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tools/simulate/sim_arms.h"
#include "tools/simulate/sim_driver.h"
#include "tools/simulate/sim_hemem.h"
#include "tools/simulate/sim_machine.h"
#include "tools/simulate/sim_policy.h"
#include "tools/simulate/sim_testing.h"
#include "tools/simulate/simulated_memory.h"

namespace hotpage {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kBase = 0x7f0000000000;
constexpr uint64_t kUs = 1000;
constexpr uint64_t kMs = 1000000;
constexpr uint64_t kSec = 1000000000;

uint64_t A(uint64_t i) { return kBase + i * kPage; }

Sample At(uint64_t i, uint64_t t_ns, uint64_t period = 1, bool store = false) {
  Sample s;
  s.vaddr = A(i) + 64;
  s.time_ns = t_ns;
  s.pid = 7;
  s.period = period;
  if (store) {
    s.flags = kSampleStore;
    s.source = SampleSource::kPebsStore;
  }
  return s;
}

// A dram+cxl machine (node 0 DRAM, 80 ns; node 1 CXL, 250 ns) with `fast`
// DRAM pages and plenty of CXL. At 100 DRAM pages first touch keeps none
// free (its reserve is 0.1%, rounded down), so page 100 on lands on CXL.
SimMachine Machine(uint64_t fast) {
  return sim_testing::DramCxlMachine(fast, 5000);
}
std::unique_ptr<SimulatedMemory> Memory(const SimMachine& m) {
  return sim_testing::MemoryOf(m);
}
using sim_testing::Detail;

// --- arms ---------------------------------------------------------------

// One page on CXL sampled `per_sec` times a second (one access each) for
// 60 s while DRAM is full of pages sampled once at the start. Returns the
// page's node at the end; `policy` gets the ArmsPolicy's details.
struct ArmsRun {
  int node = -1;
  uint64_t refused = 0, promotions = 0;
  double long_rate = 0;
};
ArmsRun RunOneHotPage(const SimMachine& m, uint64_t per_sec) {
  auto arms = std::make_unique<ArmsPolicy>(Memory(m), ArmsOptions{});
  ArmsPolicy* a = arms.get();
  std::vector<std::unique_ptr<SimPolicy>> p;
  p.push_back(std::move(arms));
  Simulation sim(std::move(p), 100 * kSec);
  for (uint64_t i = 0; i < 100; ++i) sim.Feed(At(i, 1 + i));
  const uint64_t gap = kSec / per_sec;
  for (uint64_t t = kMs; t < 60 * kSec; t += gap) sim.Feed(At(500, t));
  EXPECT_EQ(a->memory().free_pages(0), 0u);
  ArmsRun r;
  r.node = a->memory().NodeOf(A(500));
  r.refused = Detail(*a, "refused_by_cost");
  r.promotions = Detail(*a, "promotions");
  r.long_rate = a->LongRateOf(A(500));
  sim.Finish();
  return r;
}

TEST(ArmsPolicyTest, MigratesOnlyWhenTheBenefitExceedsOneAndAHalfTheCost) {
  const SimMachine m = Machine(/*fast=*/100);
  auto mem = Memory(m);
  // A swap moves two pages, each at MigrationCost's 2 us plus the 4 KiB
  // copy at CXL's 8 GB/s; the benefit per access/s over the 1 s horizon
  // is the 170 ns DRAM/CXL difference.
  const double cost =
      static_cast<double>(mem->MoveCostNs(0, 1) + mem->MoveCostNs(1, 0));
  const double per_access = mem->read_latency_ns(1) - mem->read_latency_ns(0);
  ASSERT_DOUBLE_EQ(per_access, 170.0);
  // 36 accesses/s: the benefit exceeds the cost but not 1.5x it.
  const double slow_ratio = 36 * per_access / cost;
  ASSERT_GT(slow_ratio, 1.0);
  ASSERT_LT(slow_ratio, 1.5);
  const ArmsRun slow = RunOneHotPage(m, 36);
  EXPECT_NEAR(slow.long_rate, 36, 1.0);
  EXPECT_EQ(slow.node, 1);
  EXPECT_EQ(slow.promotions, 0u);
  EXPECT_GT(slow.refused, 0u);
  // 64 accesses/s: 2.2x the cost; the swap happens once its long average
  // clears 1.5x (about 44/s, after a few seconds).
  ASSERT_GT(64 * per_access / cost, 1.5);
  const ArmsRun fast = RunOneHotPage(m, 64);
  EXPECT_EQ(fast.node, 0);
  EXPECT_EQ(fast.promotions, 1u);
}

// The hot set moves at 30 s from 100 pages on DRAM to 100 pages on CXL.
// Returns how many of the new hot pages are on DRAM at `check_ns`.
struct ShiftRun {
  uint64_t on_dram_at_check = 0, on_dram_at_end = 0, detections = 0;
};
ShiftRun RunShift(bool detect, uint64_t check_ns) {
  const SimMachine m = Machine(/*fast=*/100);
  ArmsOptions o;
  o.detect_shifts = detect;
  auto arms = std::make_unique<ArmsPolicy>(Memory(m), o);
  ArmsPolicy* a = arms.get();
  std::vector<std::unique_ptr<SimPolicy>> p;
  p.push_back(std::move(arms));
  Simulation sim(std::move(p), 100 * kSec);
  ShiftRun r;
  auto count_new_on_dram = [&] {
    uint64_t n = 0;
    for (uint64_t i = 200; i < 300; ++i) n += a->memory().NodeOf(A(i)) == 0;
    return n;
  };
  // Five samples per page and second (period 1000: 5000 accesses/s).
  for (uint64_t t = 1; t < 60 * kSec; t += 200 * kMs) {
    if (t > check_ns && r.on_dram_at_check == 0 && t - check_ns < 200 * kMs)
      r.on_dram_at_check = count_new_on_dram();
    const uint64_t first = t < 30 * kSec ? 0 : 200;
    for (uint64_t i = 0; i < 100; ++i)
      sim.Feed(At(first + i, t + i * kUs, 1000));
  }
  r.on_dram_at_end = count_new_on_dram();
  r.detections = a->detections();
  sim.Finish();
  return r;
}

TEST(ArmsPolicyTest, ADetectedShiftPromotesSoonerThanTheLongAverage) {
  // At the first period after the shift (31 s) the fast tier's share falls
  // from 1 to 0: the detector fires, the short average ranks, and the new
  // hot pages (short average 0.63 of their rate) beat the old (0.37).
  const ShiftRun with = RunShift(/*detect=*/true, 32 * kSec);
  EXPECT_EQ(with.detections, 1u);
  EXPECT_EQ(with.on_dram_at_check, 100u);
  // With the long average alone the new pages overtake the old only when
  // 1 - e^(-k/10) > 0.95 e^(-k/10), k = 7 periods after the shift.
  const ShiftRun without = RunShift(/*detect=*/false, 32 * kSec);
  EXPECT_EQ(without.detections, 0u);
  EXPECT_EQ(without.on_dram_at_check, 0u);
  EXPECT_EQ(without.on_dram_at_end, 100u);
  const ShiftRun later = RunShift(/*detect=*/false, 38 * kSec);
  EXPECT_EQ(later.on_dram_at_check, 100u);
}

TEST(ArmsPolicyTest, SteadyPlacementRaisesNoAlarm) {
  // The same hot set throughout: no shift, no detection.
  const SimMachine m = Machine(/*fast=*/100);
  auto arms = std::make_unique<ArmsPolicy>(Memory(m), ArmsOptions{});
  ArmsPolicy* a = arms.get();
  std::vector<std::unique_ptr<SimPolicy>> p;
  p.push_back(std::move(arms));
  Simulation sim(std::move(p), 100 * kSec);
  for (uint64_t t = 1; t < 60 * kSec; t += 200 * kMs) {
    for (uint64_t i = 0; i < 100; ++i) sim.Feed(At(i, t + i * kUs, 1000));
  }
  EXPECT_EQ(a->detections(), 0u);
  EXPECT_FALSE(a->shift_mode());
  sim.Finish();
}

// --- hemem --------------------------------------------------------------

struct HememSim {
  explicit HememSim(uint64_t fast) : machine(Machine(fast)) {
    auto h = std::make_unique<HememPolicy>(Memory(machine), HememOptions{});
    policy = h.get();
    std::vector<std::unique_ptr<SimPolicy>> p;
    p.push_back(std::move(h));
    sim = std::make_unique<Simulation>(std::move(p), 100 * kSec);
  }
  void Feed(uint64_t page, bool store = false) {
    now += 10 * kUs;
    sim->Feed(At(page, now, 1, store));
  }
  // Lets the policy thread run (it runs every 10 ms) by sampling `page`.
  void Wait(uint64_t page) {
    now += 25 * kMs;
    sim->Feed(At(page, now));
  }
  int NodeOf(uint64_t page) { return policy->memory().NodeOf(A(page)); }

  SimMachine machine;
  HememPolicy* policy = nullptr;
  std::unique_ptr<Simulation> sim;
  uint64_t now = 1;
};

TEST(HememPolicyTest, PromotesAtTheThresholdDemotingColdPagesForRoom) {
  HememSim h(/*fast=*/100);
  for (uint64_t i = 0; i < 100; ++i) h.Feed(i);  // DRAM full, all cold
  // Page 500 (CXL): 7 reads are below HeMem's 8; nothing moves.
  for (int r = 0; r < 7; ++r) h.Feed(500);
  h.Wait(0);
  EXPECT_EQ(h.policy->ReadsOf(A(500)), 7u);
  EXPECT_FALSE(h.policy->IsHot(A(500)));
  EXPECT_EQ(h.NodeOf(500), 1);
  // The 8th read makes it hot; the next run demotes the fast cold list's
  // first page (page 0, listed first) and promotes it.
  h.Feed(500);
  EXPECT_TRUE(h.policy->IsHot(A(500)));
  h.Wait(1);
  EXPECT_EQ(h.NodeOf(500), 0);
  EXPECT_EQ(h.NodeOf(0), 1);
  // Stores count apart, against the write threshold of 4: page 600 with 7
  // reads and 3 stores stays; the 4th store promotes it.
  for (int r = 0; r < 7; ++r) h.Feed(600);
  for (int w = 0; w < 3; ++w) h.Feed(600, /*store=*/true);
  h.Wait(1);
  EXPECT_EQ(h.policy->WritesOf(A(600)), 3u);
  EXPECT_EQ(h.NodeOf(600), 1);
  h.Feed(600, /*store=*/true);
  h.Wait(1);
  EXPECT_EQ(h.NodeOf(600), 0);
  EXPECT_EQ(h.policy->memory().free_pages(0), 0u);
  h.sim->Finish();
  const PolicyTally t = h.sim->Totals()[0];
  EXPECT_EQ(t.promoted_pages, 2u);
  EXPECT_EQ(t.demoted_pages, 2u);
}

TEST(HememPolicyTest, CoolingHalvesEveryCountAndFreesHotFastPages) {
  HememSim h(/*fast=*/100);
  // Every DRAM page hot (8 reads), and page 500 on CXL hot too: with no
  // cold DRAM page the policy thread has nothing to demote.
  for (int r = 0; r < 8; ++r) {
    for (uint64_t i = 0; i < 100; ++i) h.Feed(i);
  }
  for (int r = 0; r < 8; ++r) h.Feed(500);
  h.Wait(0);
  h.Wait(0);
  EXPECT_TRUE(h.policy->IsHot(A(500)));
  EXPECT_EQ(h.NodeOf(500), 1);
  EXPECT_GT(Detail(*h.policy, "runs_with_every_fast_page_hot"), 0u);
  EXPECT_EQ(h.policy->global_clock(), 0u);
  // Page 0 reaches the cooling threshold (18): the global clock advances,
  // so every count is halved (lazily: as each is next looked at).
  const uint32_t before = h.policy->ReadsOf(A(0));
  ASSERT_LT(before, 18u);
  for (uint32_t r = before; r < 17; ++r) h.Feed(0);
  EXPECT_EQ(h.policy->global_clock(), 0u);
  EXPECT_EQ(h.policy->ReadsOf(A(0)), 17u);
  h.Feed(0);
  EXPECT_EQ(h.policy->global_clock(), 1u);
  EXPECT_EQ(h.policy->ReadsOf(A(0)), 9u);
  EXPECT_EQ(h.policy->ReadsOf(A(1)), 4u);
  EXPECT_EQ(h.policy->ReadsOf(A(500)), 4u);
  // The next run's partial cooling moves the cooled DRAM pages to the cold
  // list, and page 500 (4 reads) off the hot list.
  h.Wait(0);
  EXPECT_FALSE(h.policy->IsHot(A(1)));
  EXPECT_TRUE(h.policy->IsHot(A(0)));
  EXPECT_FALSE(h.policy->IsHot(A(500)));
  EXPECT_EQ(h.NodeOf(500), 1);
  // Four more reads make it hot again, and now a cooled DRAM page makes
  // room for it.
  for (int r = 0; r < 4; ++r) h.Feed(500);
  EXPECT_EQ(h.policy->ReadsOf(A(500)), 8u);
  h.Wait(0);
  EXPECT_EQ(h.NodeOf(500), 0);
  EXPECT_EQ(h.NodeOf(1), 1);
  h.sim->Finish();
  EXPECT_EQ(h.sim->Totals()[0].promoted_pages, 1u);
  EXPECT_EQ(h.sim->Totals()[0].demoted_pages, 1u);
}

}  // namespace
}  // namespace hotpage
