// The simulator's PMU-less sources for the hotpage policy
// (sim_fault_source.h) and the NUMA scanner they share with the tpp model
// (sim_numa_scanner.h), on scripted sample streams over a dram+cxl machine
// whose pages first land on CXL. The tpp model's use of the scanner is
// tested in sim_test (TppScannerTest).

#include "tools/simulate/sim_fault_source.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tools/simulate/sim_driver.h"
#include "tools/simulate/sim_hotpage.h"
#include "tools/simulate/sim_machine.h"
#include "tools/simulate/sim_numa_scanner.h"
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

Sample At(uint64_t i, uint64_t t_ns, bool store = false) {
  Sample s;
  s.vaddr = A(i) + 64;
  s.time_ns = t_ns;
  s.pid = 7;
  s.period = 1;
  s.source = store ? SampleSource::kPebsStore : SampleSource::kPebsLoad;
  if (store) s.flags = kSampleStore;
  return s;
}

SimMachine Machine() { return sim_testing::DramCxlMachine(3000, 50000); }

// Every page first on the CXL node (hot_set_workload's layout).
std::unique_ptr<SimulatedMemory> SlowFirst(const SimMachine& m) {
  return sim_testing::MemoryOf(m, /*first_touch_node=*/1);
}

using sim_testing::Detail;

TEST(SimSourceTest, ParsesItsNames) {
  for (SimSource s :
       {SimSource::kTrace, SimSource::kHintFault, SimSource::kWriteFault}) {
    absl::StatusOr<SimSource> back = ParseSimSource(SimSourceName(s));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, s);
  }
  EXPECT_STREQ(AttachSourceName(SimSource::kWriteFault), "pagefault");
  absl::StatusOr<SimSource> bad = ParseSimSource("pebs");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("one of trace"), std::string::npos);
}

// Without a counted fault (attach's rate limit 0: no fault promotes) the
// period stays at its start, and a page that stays on the slow tier faults
// once per pass however often it is accessed; an access from the top tier
// disarms without a fault.
TEST(NumaScannerTest, OneFaultPerPassAndTheRateLimitedPeriodStays) {
  const SimMachine m = Machine();
  std::unique_ptr<SimulatedMemory> mem = SlowFirst(m);
  NumaScanner scanner(*mem, NumaScannerOptions{});
  scanner.Start(0);
  mem->Touch(A(0), 0, 0);
  scanner.AddPage(A(0));
  EXPECT_EQ(scanner.next_scan_ns(), kSec);  // scan_delay
  uint64_t faults = 0;
  for (uint64_t t = 10 * kMs; t < 5 * kSec; t += 10 * kMs) {
    scanner.Advance(t);
    faults += scanner.Access(0, mem->NodeOf(A(0)));
  }
  EXPECT_EQ(scanner.scans(), 4u);  // at 1, 2, 3 and 4 s
  EXPECT_EQ(faults, 4u);
  EXPECT_EQ(scanner.scan_period_ns(), kSec);
  // A counted fault doubles it, once per sequence.
  scanner.CountedFault(5 * kSec);
  scanner.CountedFault(5 * kSec);
  EXPECT_EQ(scanner.scan_period_ns(), 2 * kSec);
  EXPECT_EQ(scanner.period_doublings(), 1u);
  // A page on the top tier is never armed, and its access is no fault.
  mem->Touch(A(1), 0, 5 * kSec);
  ASSERT_EQ(mem->Move(A(1), 0, 5 * kSec).status, 0);
  scanner.AddPage(A(1));
  scanner.Advance(8 * kSec);
  EXPECT_FALSE(scanner.armed(1));
  EXPECT_FALSE(scanner.Access(1, 0));
}

// 200 pages on CXL, each sampled every 20 ms. With every sample (a PMU)
// the engine promotes them within the first half second; with hint faults
// it sees nothing until the scanner's first pass at 1 s, then each page
// once (its fault), and places them as they arrive: all on DRAM by the
// poll after the pass, never sampled again (a page on the top tier is not
// armed).
TEST(HintFaultSourceTest, NothingBeforeTheFirstPassThenOneFaultPerPage) {
  for (const SimSource source : {SimSource::kTrace, SimSource::kHintFault}) {
    SCOPED_TRACE(SimSourceName(source));
    const SimMachine m = Machine();
    HotpagePolicyOptions o;
    o.engine.interval_ns = 500 * kMs;
    o.engine.address_space = 7;
    o.source = source;
    o.fault.scanner.present_at_start = true;
    absl::StatusOr<std::unique_ptr<HotpagePolicy>> hp =
        HotpagePolicy::Create(m.topology, SlowFirst(m), o);
    ASSERT_TRUE(hp.ok()) << hp.status();
    HotpagePolicy* h = hp->get();
    std::vector<std::unique_ptr<SimPolicy>> p;
    p.push_back(std::move(*hp));
    Simulation sim(std::move(p), kSec);
    auto on_dram = [&] {
      uint64_t n = 0;
      for (uint64_t i = 0; i < 200; ++i) n += h->memory().NodeOf(A(i)) == 0;
      return n;
    };
    uint64_t t = 0;
    auto run_until = [&](uint64_t end) {
      for (; t < end; t += 100 * kUs) sim.Feed(At(t / (100 * kUs) % 200, t));
    };
    run_until(990 * kMs);
    if (source == SimSource::kTrace) {
      EXPECT_EQ(on_dram(), 200u);
      continue;
    }
    EXPECT_EQ(on_dram(), 0u);
    EXPECT_EQ(h->engine().counters().samples, 0u);
    // The pass at 1 s arms them; within a 20 ms sweep each faults, and the
    // poll at 1.05 s places them; the migrator needs a few ms.
    run_until(1100 * kMs);
    EXPECT_EQ(on_dram(), 200u);
    EXPECT_EQ(Detail(*h, "arrival_promotions"), 200u);
    run_until(3 * kSec);
    sim.Finish();
    EXPECT_EQ(h->engine().counters().samples, 200u);
    EXPECT_EQ(Detail(*h, "source_faults"), 200u);
    EXPECT_EQ(Detail(*h, "scans"), 2u);  // at 1 and 2 s
    EXPECT_EQ(Detail(*h, "scan_period_ms"), 1000u);
  }
}

// The fast tier full from first touches of pages never sampled again (the
// hint-fault source never sees them: no page there faults): 200 hot pages
// land on CXL. The sweep (EngineOptions::sweep_untracked_fast, which
// attach sets for hint faults) offers the never-sampled pages as victims
// once the engine has run a long window (10 s), so the hot pages displace
// them; before that none moves. The simulated memory reports its ranges
// for the sweep (SimulatedMemoryOptions::report_ranges); without them the
// sweep finds nothing, and no page ever moves.
// The hotpage policy under hint faults on Machine(), in a simulation: its
// memory reports ranges (for the sweep) if `ranges`, and reclaims by
// demotion with the engine leaving it the room if `kernel_demotion`.
struct HintFaultRun {
  HotpagePolicy* policy = nullptr;
  std::unique_ptr<Simulation> sim;
};
HintFaultRun StartHintFaultRun(const SimMachine& m, bool ranges,
                               bool kernel_demotion) {
  SimulatedMemoryOptions mo;
  mo.capacities = m.capacities;
  mo.report_ranges = ranges;
  mo.reclaim_demotes = kernel_demotion;
  absl::StatusOr<std::unique_ptr<SimulatedMemory>> mem =
      SimulatedMemory::Create(m.topology, mo);
  EXPECT_TRUE(mem.ok()) << mem.status();
  HotpagePolicyOptions o;
  o.engine.interval_ns = 500 * kMs;
  o.engine.address_space = 7;
  o.source = SimSource::kHintFault;
  o.kernel_demotion = kernel_demotion;
  absl::StatusOr<std::unique_ptr<HotpagePolicy>> hp =
      HotpagePolicy::Create(m.topology, std::move(*mem), o);
  EXPECT_TRUE(hp.ok()) << hp.status();
  HintFaultRun run;
  run.policy = hp->get();
  std::vector<std::unique_ptr<SimPolicy>> p;
  p.push_back(std::move(*hp));
  run.sim = std::make_unique<Simulation>(std::move(p), kSec);
  return run;
}

TEST(HintFaultSourceTest, TheSweepMakesRoomInAFastTierTheSourceCannotSee) {
  for (const bool sweep : {true, false}) {
    SCOPED_TRACE(sweep ? "ranges" : "no ranges");
    const SimMachine m = Machine();
    HintFaultRun run = StartHintFaultRun(m, sweep, /*kernel_demotion=*/false);
    HotpagePolicy* h = run.policy;
    Simulation& sim = *run.sim;
    uint64_t t = 0;
    for (uint64_t i = 0; i < 3000; ++i) sim.Feed(At(10000 + i, t += kUs));
    auto on_dram = [&] {
      uint64_t n = 0;
      for (uint64_t i = 0; i < 200; ++i) n += h->memory().NodeOf(A(i)) == 0;
      return n;
    };
    auto run_until = [&](uint64_t end) {
      for (; t < end; t += 100 * kUs) sim.Feed(At(t / (100 * kUs) % 200, t));
    };
    run_until(kSec);
    EXPECT_EQ(on_dram(), 0u);  // first touch put them on CXL
    run_until(9 * kSec);
    EXPECT_EQ(on_dram(), 0u);  // the sweep waits for a long window
    run_until(30 * kSec);
    sim.Finish();
    if (sweep) {
      EXPECT_GE(on_dram(), 180u);
    } else {
      EXPECT_EQ(on_dram(), 0u);
    }
  }
}

// The same machine where the kernel demotes on reclaim: the hot pages,
// faulting pass after pass, go into the full DRAM before the sweep could
// have started (it waits a long window, 10 s, and does not run at all),
// and the memory's reclaim demoted the first-touched pages to make room.
TEST(HintFaultSourceTest, TheKernelsReclaimMakesRoomBeforeTheSweepCould) {
  const SimMachine m = Machine();
  HintFaultRun run = StartHintFaultRun(m, /*ranges=*/true,
                                       /*kernel_demotion=*/true);
  HotpagePolicy* h = run.policy;
  Simulation& sim = *run.sim;
  uint64_t t = 0;
  for (uint64_t i = 0; i < 3000; ++i) sim.Feed(At(10000 + i, t += kUs));
  uint64_t on_dram = 0;
  for (; t < 9 * kSec; t += 100 * kUs) sim.Feed(At(t / (100 * kUs) % 200, t));
  for (uint64_t i = 0; i < 200; ++i) on_dram += h->memory().NodeOf(A(i)) == 0;
  sim.Finish();
  EXPECT_GE(on_dram, 180u);
  EXPECT_GT(h->memory().counters().reclaim_demotions, 0u);
  // Every demotion was the reclaim's: the engine demoted nothing.
  EXPECT_EQ(h->memory().counters().demoted_pages,
            h->memory().counters().reclaim_demotions);
  EXPECT_GT(Detail(*h, "reclaim_promotions"), 0u);
}

// A process that grows while it runs: every page's first access is a first
// touch, which the page-fault event counts as it counts a hint fault
// (sampler/hintfault/first_touch_filter.h). 100 hot pages, sampled every
// 10 ms, and 2000 cold ones touched once each over 2 s, all first placed
// on CXL. Attach's first-touch filter, fed the simulated resident set,
// drops the first touches: the hot pages reach DRAM by their hint faults
// after the scanner's passes, the cold ones stay on CXL. Without the filter
// each first touch is a fault placed as it arrives: the cold pages are
// promoted too. With the trace's pages present at its start there are no
// first touches.
TEST(HintFaultSourceTest, FirstTouchesFaultAndTheFilterDropsThem) {
  struct Case {
    const char* name;
    bool filter;
    bool present_at_start;
  };
  for (const Case c :
       {Case{"filter", true, false}, Case{"no filter", false, false},
        Case{"present at start", true, true}}) {
    SCOPED_TRACE(c.name);
    const SimMachine m = Machine();
    HotpagePolicyOptions o;
    o.engine.interval_ns = 500 * kMs;
    o.engine.address_space = 7;
    o.source = SimSource::kHintFault;
    o.first_touch_filter = c.filter;
    o.fault.scanner.present_at_start = c.present_at_start;
    absl::StatusOr<std::unique_ptr<HotpagePolicy>> hp =
        HotpagePolicy::Create(m.topology, SlowFirst(m), o);
    ASSERT_TRUE(hp.ok()) << hp.status();
    HotpagePolicy* h = hp->get();
    std::vector<std::unique_ptr<SimPolicy>> p;
    p.push_back(std::move(*hp));
    Simulation sim(std::move(p), kSec);
    // Every 100 us a hot page; every 1 ms for the first 2 s a new cold one.
    for (uint64_t t = 0; t < 4 * kSec; t += 100 * kUs) {
      const uint64_t k = t / (100 * kUs);
      sim.Feed(At(k % 100, t));
      if (k % 10 == 5 && k / 10 < 2000)
        sim.Feed(At(1000 + k / 10, t + 50 * kUs));
    }
    sim.Finish();
    uint64_t hot_on_dram = 0, cold_on_dram = 0;
    for (uint64_t i = 0; i < 100; ++i)
      hot_on_dram += h->memory().NodeOf(A(i)) == 0;
    for (uint64_t i = 1000; i < 3000; ++i)
      cold_on_dram += h->memory().NodeOf(A(i)) == 0;
    if (c.present_at_start) {
      EXPECT_EQ(Detail(*h, "first_touch_faults"), 0u);
      EXPECT_EQ(Detail(*h, "first_touches_dropped"), 0u);
      EXPECT_EQ(hot_on_dram, 100u);
      continue;
    }
    EXPECT_EQ(Detail(*h, "first_touch_faults"), 2100u);
    if (c.filter) {
      EXPECT_GE(Detail(*h, "first_touches_dropped"), 2090u);
      EXPECT_EQ(Detail(*h, "resident_growth_pages"), 2100u);
      EXPECT_EQ(hot_on_dram, 100u);
      EXPECT_LE(cold_on_dram, 10u);
    } else {
      EXPECT_GE(cold_on_dram, 1900u);
    }
  }
}

// 50 pages stored to and 50 only loaded, every 10 ms each, for 2 s: the
// re-arm (attach's WriteFaultRearm, every 200 ms at this fault rate) makes
// each stored page fault once per re-arm, on whichever node it is; the
// loaded pages never fault, so the engine never sees them and they stay.
TEST(WriteFaultSourceTest, EachStoredPageFaultsOncePerRearmAndLoadsNever) {
  const SimMachine m = Machine();
  HotpagePolicyOptions o;
  o.engine.interval_ns = 500 * kMs;
  o.engine.address_space = 7;
  o.source = SimSource::kWriteFault;
  absl::StatusOr<std::unique_ptr<HotpagePolicy>> hp =
      HotpagePolicy::Create(m.topology, SlowFirst(m), o);
  ASSERT_TRUE(hp.ok()) << hp.status();
  HotpagePolicy* h = hp->get();
  std::vector<std::unique_ptr<SimPolicy>> p;
  p.push_back(std::move(*hp));
  Simulation sim(std::move(p), kSec);
  for (uint64_t t = 0; t < 2 * kSec; t += 100 * kUs) {
    const uint64_t i = t / (100 * kUs) % 100;
    sim.Feed(At(i, t, /*store=*/i < 50));
  }
  sim.Finish();
  EXPECT_EQ(Detail(*h, "rearms"), 10u);  // at 0, 0.2, ..., 1.8 s
  EXPECT_EQ(Detail(*h, "rearm_interval_ms"), 200u);
  EXPECT_EQ(Detail(*h, "source_faults"), 500u);
  EXPECT_EQ(h->engine().counters().samples, 500u);
  for (uint64_t i = 0; i < 50; ++i) EXPECT_EQ(h->memory().NodeOf(A(i)), 0);
  for (uint64_t i = 50; i < 100; ++i) EXPECT_EQ(h->memory().NodeOf(A(i)), 1);
}

}  // namespace
}  // namespace hotpage
