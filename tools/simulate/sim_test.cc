// Tests of the replay simulator's pieces on tiny, hand-computed inputs:
// the machine (presets, scaling, flag parsing), the driver's intervals,
// the reordering window, and every policy.

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/types/span.h"
#include "gtest/gtest.h"
#include "policy/engine.h"
#include "policy/loaded_latency.h"
#include "policy/placement.h"
#include "tools/simulate/sim_baselines.h"
#include "tools/simulate/sim_driver.h"
#include "tools/simulate/sim_hotpage.h"
#include "tools/simulate/sim_machine.h"
#include "tools/simulate/sim_policy.h"
#include "tools/simulate/sim_report.h"
#include "tools/simulate/sim_run.h"
#include "tools/simulate/sim_trace.h"
#include "tools/simulate/simulated_memory.h"
#include "tools/trace_gen/mixed.h"

namespace hotpage {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kBase = 0x7f0000000000;
constexpr uint64_t kMs = 1000000;
constexpr uint64_t kSec = 1000000000;

uint64_t A(uint64_t i) { return kBase + i * kPage; }

Sample At(uint64_t i, uint64_t t_ns, uint32_t cpu = 0) {
  Sample s;
  s.vaddr = A(i) + 64;
  s.time_ns = t_ns;
  s.pid = 7;
  s.cpu = cpu;
  s.period = 1;
  return s;
}

std::string TmpPath(const std::string& name) {
  const char* d = std::getenv("TEST_TMPDIR");
  return std::string(d ? d : "/tmp") + "/" + name;
}

// A dram+cxl machine scaled to `fast` fast pages and `slow` slow pages.
SimMachine Machine(uint64_t fast, uint64_t slow,
                   const std::string& preset = "dram+cxl") {
  absl::StatusOr<Topology> t = PresetTopology(preset);
  EXPECT_TRUE(t.ok());
  CapacitySpec spec;
  spec.fast_bytes = fast * kPage;
  absl::StatusOr<SimMachine> m = ScaleMachine(*t, slow / 2, spec);
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

// --- Machine ----------------------------------------------------------------

TEST(SimMachineTest, PresetsHaveTheirTiersAndPackages) {
  absl::StatusOr<Topology> a = PresetTopology("dram+cxl");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->tier_source, TierSource::kHmat);
  EXPECT_EQ(a->FastNodes(), std::vector<int>{0});
  ASSERT_EQ(a->tiers.size(), 2u);
  absl::StatusOr<Topology> b = PresetTopology("2pkg+cxl");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->FastNodes(), (std::vector<int>{0, 1}));
  ASSERT_EQ(b->packages.size(), 2u);
  EXPECT_EQ(b->packages[0].nodes, (std::vector<int>{0, 2}));
  EXPECT_EQ(b->packages[1].nodes, (std::vector<int>{1, 3}));
  EXPECT_EQ(b->nodes[0].cpus.front(), 0);  // cpu 0: package 0
  EXPECT_EQ(b->nodes[1].cpus.front(), 1);  // cpu 1: package 1
  absl::StatusOr<Topology> c = PresetTopology("3tier");
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->tiers.size(), 3u);
  EXPECT_EQ(c->tiers[2].nodes, std::vector<int>{2});
  absl::StatusOr<Topology> bad = PresetTopology("4tier");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(
      absl::StrContains(bad.status().message(), "dram+cxl, 2pkg+cxl, 3tier"));
}

TEST(SimMachineTest, ScalesTheFastTierToTheFootprint) {
  absl::StatusOr<Topology> t = PresetTopology("2pkg+cxl");
  ASSERT_TRUE(t.ok());
  CapacitySpec spec;
  spec.ratio_n = 4;
  absl::StatusOr<SimMachine> m = ScaleMachine(*t, 1001, spec);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->fast_pages, 200u);  // floor(1001 / 5)
  std::map<int, uint64_t> cap;
  for (const SimNodeCapacity& c : m->capacities) cap[c.node] = c.pages;
  EXPECT_EQ(cap[0], 100u);  // equal DRAM nodes
  EXPECT_EQ(cap[1], 100u);
  EXPECT_EQ(cap[2], 2 * 1001u + 16);  // slowest tier: never full
  EXPECT_EQ(m->topology.nodes[0].memory_bytes, 100 * kPage);
  // An odd split gives the remainder to the lower id.
  spec.ratio_n = 2;
  m = ScaleMachine(*t, 1000, spec);  // 333
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->capacities[0].pages, 167u);
  EXPECT_EQ(m->capacities[1].pages, 166u);
  // Middle tiers keep their proportion to the fast tier (3tier: CXL = DRAM).
  absl::StatusOr<Topology> three = PresetTopology("3tier");
  spec.fast_bytes = 64 * kPage;
  m = ScaleMachine(*three, 1000, spec);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->capacities[0].pages, 64u);
  EXPECT_EQ(m->capacities[1].pages, 64u);
  EXPECT_EQ(m->capacities[2].pages, 2016u);
  // One tier is no tiered machine.
  Topology flat = *t;
  flat.tiers = {MemoryTier{0, {0, 1, 2, 3}}};
  EXPECT_FALSE(ScaleMachine(flat, 1000, spec).ok());
}

TEST(SimMachineTest, ParsesRatiosAndSizes) {
  EXPECT_EQ(*ParseRatio("1:8"), 8u);
  EXPECT_EQ(*ParseRatio(" 1:2 "), 2u);
  for (const char* bad : {"", "1", "2:8", "1:0", "1:x", "1:-3", "1:8:2"}) {
    absl::StatusOr<uint64_t> r = ParseRatio(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_TRUE(absl::StrContains(r.status().message(), "expected 1:N")) << bad;
  }
  EXPECT_EQ(*ParseSize("65536"), 65536u);
  EXPECT_EQ(*ParseSize("64M"), uint64_t{64} << 20);
  EXPECT_EQ(*ParseSize("2GiB"), uint64_t{2} << 30);
  EXPECT_EQ(*ParseSize("512k"), uint64_t{512} << 10);
  EXPECT_EQ(*ParseSize("1tb"), uint64_t{1} << 40);
  for (const char* bad : {"", "M", "12Q", "-5", "100", "1.5G"})
    EXPECT_FALSE(ParseSize(bad).ok()) << bad;
}

// --- Driver
// -------------------------------------------------------------------

// Records what the driver calls, to check its order.
class ProbePolicy : public SimPolicy {
 public:
  explicit ProbePolicy(std::vector<std::string>* log)
      : SimPolicy("probe"), log_(log) {}
  void Start(uint64_t t) override { next_ = t + 100; }
  uint64_t next_event_ns() const override { return next_; }
  void Advance(uint64_t now) override {
    while (next_ <= now) {
      log_->push_back("event@" + std::to_string(next_));
      next_ += 100;
    }
  }
  void OnSample(const Sample& s) override {
    log_->push_back("sample@" + std::to_string(s.time_ns));
    ++n_;
  }
  PolicyTally EndInterval(uint64_t end) override {
    log_->push_back("end@" + std::to_string(end));
    PolicyTally t;
    t.samples = n_;
    n_ = 0;
    return t;
  }

 private:
  std::vector<std::string>* log_;
  uint64_t next_ = UINT64_MAX;
  uint64_t n_ = 0;
};

TEST(SimulationTest, RunsEventsBeforeSamplesAndClosesIntervalsOnTheGrid) {
  std::vector<std::string> log;
  std::vector<std::unique_ptr<SimPolicy>> p;
  p.push_back(std::make_unique<ProbePolicy>(&log));
  Simulation sim(std::move(p), /*interval_ns=*/250);
  for (uint64_t t : {1000, 1150, 1260, 1700, 1690}) sim.Feed(At(0, t));
  sim.Finish();
  const std::vector<std::string> want = {
      "sample@1000", "event@1100",  "sample@1150",  // interval 0: [1000, 1250)
      "event@1200",  "end@1250",  // events before the boundary first
      "sample@1260",              // interval 1
      "event@1300",  "event@1400",  "end@1500",    // interval 1 closes
      "event@1500",  "event@1600",  "event@1700",  // interval 2
      "sample@1700", "sample@1700",  // 1690 came late: replayed at 1700
      "end@1750"};
  EXPECT_EQ(log, want);
  ASSERT_EQ(sim.intervals().size(), 3u);
  EXPECT_EQ(sim.intervals()[0].index, 0u);
  EXPECT_EQ(sim.intervals()[1].index, 1u);
  EXPECT_EQ(sim.intervals()[2].index, 2u);
  EXPECT_EQ(sim.intervals()[2].start_ns, 500u);
  EXPECT_EQ(sim.intervals()[2].tallies[0].samples, 2u);
  EXPECT_EQ(sim.late_samples(), 1u);
  EXPECT_EQ(sim.Totals()[0].samples, 5u);
}

TEST(SampleOrdererTest, SortsWithinTheWindowAndCountsLateSamples) {
  SampleOrderer o(/*window_ns=*/100, /*max_held=*/4);
  std::vector<uint64_t> out;
  auto sink = [&](absl::Span<const Sample> s) {
    for (const Sample& x : s) out.push_back(x.time_ns);
  };
  std::vector<Sample> in;
  for (uint64_t t : {50, 10, 30, 20, 400, 390, 5, 600}) in.push_back(At(0, t));
  o.Push(in, sink);
  o.Finish(sink);
  // Held 4 (cap): released sorted up to 400 - 100; 5 arrived after 50 was
  // released: late, replayed at 50.
  EXPECT_EQ(out, (std::vector<uint64_t>{10, 20, 30, 50, 50, 390, 400, 600}));
  EXPECT_EQ(o.late_samples(), 1u);
  EXPECT_EQ(o.out_of_order(), 5u);  // 10, 30, 20 (after 50), 390, 5
}

TEST(SampleOrdererTest, AtTheCapTheOldestHalfGoesOutFirst) {
  SampleOrderer o(/*window_ns=*/1000, /*max_held=*/4);
  std::vector<uint64_t> out;
  auto sink = [&](absl::Span<const Sample> s) {
    for (const Sample& x : s) out.push_back(x.time_ns);
  };
  std::vector<Sample> in;
  for (uint64_t t : {10, 20, 30, 40, 15}) in.push_back(At(0, t));
  o.Push(in, sink);
  o.Finish(sink);
  // 4 held (cap), none outside the window: the oldest half (10, 20) goes
  // out anyway, so 15 arrives late and is replayed at 20.
  EXPECT_EQ(out, (std::vector<uint64_t>{10, 20, 20, 30, 40}));
  EXPECT_EQ(o.late_samples(), 1u);
}

// --- first-touch and oracle
// -----------------------------------------------------

TEST(FirstTouchPolicyTest, ScoresByTheNodeAtTheTimeOfEachAccess) {
  const SimMachine m = Machine(/*fast=*/2, /*slow=*/100);
  std::vector<std::unique_ptr<SimPolicy>> p;
  p.push_back(std::make_unique<FirstTouchPolicy>(Memory(m)));
  Simulation sim(std::move(p), kSec);
  // Pages 0, 1 fill DRAM; 2 spills to CXL. Accesses: 0 0 1 2 2 2.
  for (uint64_t i : {0, 0, 1, 2, 2, 2}) sim.Feed(At(i, 10 * i + 1));
  sim.Finish();
  const PolicyTally t = sim.Totals()[0];
  EXPECT_EQ(t.samples, 6u);
  EXPECT_EQ(t.fast_samples, 3u);
  EXPECT_DOUBLE_EQ(t.avg_idle_latency_ns(), (3 * 80.0 + 3 * 250.0) / 6);
  // Six accesses in a second load no node: loaded = idle (to 1e-4 ns).
  EXPECT_NEAR(t.avg_latency_ns(), (3 * 80.0 + 3 * 250.0) / 6, 1e-4);
  EXPECT_EQ(t.bytes_migrated, 0u);
}

// Loaded latency (sim_policy.h): the interval's demand per node, from the
// samples' periods, sets each node's latency for that interval.
TEST(FirstTouchPolicyTest, ScoresTheLoadedLatencyOfTheInterval) {
  const SimMachine m = Machine(/*fast=*/2, /*slow=*/100);
  std::vector<std::unique_ptr<SimPolicy>> p;
  p.push_back(std::make_unique<FirstTouchPolicy>(Memory(m)));
  Simulation sim(std::move(p), kSec);
  // Interval 0: 100 samples of period 1.6e6 on DRAM page 0: 1.6e8 lines,
  // 10.24 GB/s = half of DRAM's 20480 MB/s: 1.2105x its 80 ns.
  for (uint64_t k = 0; k < 100; ++k) {
    Sample s = At(0, 1 + k);
    s.period = 1600000;
    sim.Feed(s);
  }
  // Interval 1: the same 100 accesses at period 1: idle.
  for (uint64_t k = 0; k < 100; ++k) sim.Feed(At(0, kSec + 1 + k));
  sim.Finish();
  ASSERT_EQ(sim.intervals().size(), 2u);
  const PolicyTally& a = sim.intervals()[0].tallies[0];
  EXPECT_NEAR(a.avg_latency_ns(), 80 * LoadedLatencyFactor(0.5), 1e-9);
  EXPECT_NEAR(a.avg_latency_ns(), 96.84, 0.01);
  EXPECT_DOUBLE_EQ(a.avg_idle_latency_ns(), 80);
  const PolicyTally& b = sim.intervals()[1].tallies[0];
  EXPECT_NEAR(b.avg_latency_ns(), 80, 1e-4);
}

// The other package's DRAM costs the SLIT hop (2pkg+cxl: 21 vs 10).
TEST(FirstTouchPolicyTest, ChargesTheRemotePackagePenalty) {
  const SimMachine m = Machine(/*fast=*/4, /*slow=*/100, "2pkg+cxl");
  std::vector<std::unique_ptr<SimPolicy>> p;
  p.push_back(std::make_unique<FirstTouchPolicy>(Memory(m)));
  Simulation sim(std::move(p), kSec);
  sim.Feed(At(0, 1, /*cpu=*/0));  // first touch: node 0, local
  sim.Feed(At(0, 2, /*cpu=*/1));  // cpu 1 is package 1: remote
  sim.Finish();
  const PolicyTally t = sim.Totals()[0];
  EXPECT_EQ(t.fast_samples, 2u);
  EXPECT_NEAR(t.idle_latency_ns_sum, 80 + 80 * 2.1, 1e-9);
  EXPECT_NEAR(t.latency_ns_sum, 80 + 80 * 2.1, 1e-4);
}

TEST(OraclePolicyTest, PutsEachIntervalsHottestPagesOnTheFastTier) {
  const SimMachine m = Machine(/*fast=*/2, /*slow=*/100);
  std::vector<std::unique_ptr<SimPolicy>> p;
  p.push_back(std::make_unique<OraclePolicy>(OracleTiersOf(*Memory(m))));
  Simulation sim(std::move(p), kSec);
  uint64_t now = 1;
  // Interval 0: page 5 x3, 6 x2, 7 x1 -> 5 and 6 fast: 5 of 6.
  for (uint64_t i : {5, 6, 7, 5, 6, 5}) sim.Feed(At(i, now++));
  // Interval 1: 7 x2, 8 x2, 5 x1: 7 and 8 fast (4 of 5); two pages
  // entered the fast set.
  now = kSec + 10;
  for (uint64_t i : {7, 8, 7, 8, 5}) sim.Feed(At(i, now++));
  sim.Finish();
  ASSERT_EQ(sim.intervals().size(), 2u);
  const PolicyTally& a = sim.intervals()[0].tallies[0];
  EXPECT_EQ(a.fast_samples, 5u);
  EXPECT_DOUBLE_EQ(a.idle_latency_ns_sum, 5 * 80.0 + 250.0);
  EXPECT_NEAR(a.latency_ns_sum, 5 * 80.0 + 250.0, 1e-4);
  EXPECT_EQ(a.oracle_moves, 2u);
  const PolicyTally& b = sim.intervals()[1].tallies[0];
  EXPECT_EQ(b.samples, 5u);
  EXPECT_EQ(b.fast_samples, 4u);
  EXPECT_EQ(b.oracle_moves, 2u);
  EXPECT_EQ(b.bytes_migrated, 0u);  // never charged
}

// --- tpp
// ------------------------------------------------------------------------

TEST(TppPolicyTest, PromotesOnTheSecondSampleWithinTheThreshold) {
  // A large fast node that is full (no "free space enough" shortcut).
  const SimMachine m = Machine(/*fast=*/2000, /*slow=*/10000);
  auto tpp = std::make_unique<TppPolicy>(Memory(m), TppOptions{});
  TppPolicy* t = tpp.get();
  std::vector<std::unique_ptr<SimPolicy>> p;
  p.push_back(std::move(tpp));
  Simulation sim(std::move(p), 100 * kSec);
  uint64_t now = 1;
  for (uint64_t i = 0; i < 2000; ++i) sim.Feed(At(i, now++));
  // First touch stops at DRAM's low watermark (0.1% = 2 pages): the last
  // two pages land on CXL.
  EXPECT_EQ(t->memory().free_pages(0), 2u);
  EXPECT_EQ(t->memory().NodeOf(A(1998)), 1);
  EXPECT_EQ(t->memory().NodeOf(A(1999)), 1);
  // Page 1999 sampled 10 s after its first sample: not hot. Again 0.5 s
  // later: a candidate, but DRAM would fall below its high watermark (4):
  // the promotion fails and wakes kswapd, which demotes the least recently
  // sampled pages (0-3) to the promo watermark (6). The next hint fault
  // within the threshold promotes it.
  sim.Feed(At(1999, 10 * kSec));
  EXPECT_EQ(t->memory().NodeOf(A(1999)), 1);
  sim.Feed(At(1999, 10 * kSec + 500 * kMs));
  EXPECT_EQ(t->memory().NodeOf(A(1999)), 1);
  EXPECT_EQ(t->memory().free_pages(0), 6u);
  EXPECT_EQ(t->memory().NodeOf(A(0)), 1);
  EXPECT_EQ(t->memory().NodeOf(A(3)), 1);
  EXPECT_EQ(t->memory().NodeOf(A(4)), 0);
  sim.Feed(At(1999, 10 * kSec + 900 * kMs));
  EXPECT_EQ(t->memory().NodeOf(A(1999)), 0);
  EXPECT_EQ(t->memory().free_pages(0), 5u);  // still above high (4)
  // Page 1998 at 20 s and 21.5 s: 1.5 s apart, over the 1 s threshold.
  sim.Feed(At(1998, 20 * kSec));
  sim.Feed(At(1998, 21 * kSec + 500 * kMs));
  EXPECT_EQ(t->memory().NodeOf(A(1998)), 1);
  sim.Finish();
  EXPECT_EQ(sim.Totals()[0].promoted_pages, 1u);
  EXPECT_EQ(sim.Totals()[0].demoted_pages, 4u);
}

TEST(TppPolicyTest, PromotesAtOnceWhileTheTargetHasPlentyOfRoom) {
  const SimMachine m = Machine(/*fast=*/1600, /*slow=*/10000);
  auto tpp = std::make_unique<TppPolicy>(Memory(m), TppOptions{});
  TppPolicy* t = tpp.get();
  // Page 1 lands on CXL (fill DRAM by hand), then DRAM frees up: its first
  // hint fault promotes it (free > promo + 1/16 of the node).
  ASSERT_EQ(t->memory().Touch(A(1), 0, 0), 0);
  ASSERT_EQ(t->memory().Move(A(1), 1, 0).status, 1);
  std::vector<std::unique_ptr<SimPolicy>> p;
  p.push_back(std::move(tpp));
  Simulation sim(std::move(p), 100 * kSec);
  sim.Feed(At(1, 5 * kSec));
  EXPECT_EQ(t->memory().NodeOf(A(1)), 0);
}

// The tests above are of the idealised model (TppOptions{}: "tpp-ideal");
// these of "tpp", with the NUMA scanner (sim_baselines.h).

// A tpp policy whose pages all start on the CXL node (first touch there).
std::unique_ptr<TppPolicy> ScannerTpp(const SimMachine& m,
                                      bool present_at_start = false) {
  SimulatedMemoryOptions o;
  o.capacities = m.capacities;
  o.first_touch_node = 1;
  absl::StatusOr<std::unique_ptr<SimulatedMemory>> mem =
      SimulatedMemory::Create(m.topology, o);
  EXPECT_TRUE(mem.ok()) << mem.status();
  TppOptions t;
  t.scanner = true;
  t.present_at_start = present_at_start;
  return std::make_unique<TppPolicy>(std::move(*mem), t);
}

TEST(TppScannerTest, HintFaultsOnlyOnPagesTheScannerArmed) {
  const SimMachine m = Machine(/*fast=*/2000, /*slow=*/10000);
  auto tpp = ScannerTpp(m);
  TppPolicy* t = tpp.get();
  EXPECT_EQ(t->name(), "tpp");
  std::vector<std::unique_ptr<SimPolicy>> p;
  p.push_back(std::move(tpp));
  Simulation sim(std::move(p), 100 * kSec);
  // Samples 0.4 s apart before the first scan (scan_delay: 1 s after the
  // first sample): no hint fault, so no promotion (tpp-ideal would promote
  // at the second one).
  sim.Feed(At(1, 0));
  sim.Feed(At(1, 400 * kMs));
  sim.Feed(At(1, 800 * kMs));
  EXPECT_EQ(t->memory().NodeOf(A(1)), 1);
  EXPECT_FALSE(t->IsArmed(A(1)));
  // The scan at 1 s arms it (a slow-tier page); its next sample, 0.2 s
  // later, is the hint fault: below the 1 s threshold (1.125 s after the
  // first adjustment), and DRAM (2000 pages) never has 1 GiB free: promoted
  // on latency.
  sim.Feed(At(2, 1100 * kMs));  // a sample after the scan
  EXPECT_TRUE(t->IsArmed(A(1)));
  EXPECT_EQ(t->scan_seq(), 1u);
  sim.Feed(At(1, 1200 * kMs));
  EXPECT_FALSE(t->IsArmed(A(1)));
  EXPECT_EQ(t->memory().NodeOf(A(1)), 0);
  // A promotion is a counted fault: the scan period doubles (1 s -> 2 s).
  EXPECT_EQ(t->scan_period_ns(), 2 * kSec);
  sim.Finish();
  EXPECT_EQ(sim.Totals()[0].promoted_pages, 1u);
}

TEST(TppScannerTest, AnArmedPageKeepsItsScanStampUntilItFaults) {
  const SimMachine m = Machine(/*fast=*/2000, /*slow=*/10000);
  auto tpp = ScannerTpp(m);
  TppPolicy* t = tpp.get();
  std::vector<std::unique_ptr<SimPolicy>> p;
  p.push_back(std::move(tpp));
  Simulation sim(std::move(p), 100 * kSec);
  // Page 5 is sampled once, then armed by the scan at 1 s. Page 9, sampled
  // every 100 ms, faults at once after that scan and is promoted: a counted
  // fault, so the period doubles to 2 s and the next scan is at 3 s. That
  // scan skips page 5 (already PROT_NONE: its stamp stays 1 s), so its
  // next sample, at 4.5 s, faults 3.5 s after the stamp: not hot.
  sim.Feed(At(5, 0));
  for (uint64_t ms = 100; ms < 4500; ms += 100) sim.Feed(At(9, ms * kMs));
  EXPECT_EQ(t->memory().NodeOf(A(9)), 0);
  EXPECT_TRUE(t->IsArmed(A(5)));
  EXPECT_EQ(t->scan_seq(), 2u);
  sim.Feed(At(5, 4500 * kMs));
  EXPECT_EQ(t->memory().NodeOf(A(5)), 1);
  EXPECT_FALSE(t->IsArmed(A(5)));
  const std::vector<std::pair<std::string, uint64_t>> d = t->Details();
  uint64_t stale = 0;
  for (const auto& [name, v] : d)
    if (name == "stale_faults") stale = v;
  EXPECT_EQ(stale, 1u);
  // The scan at 5 s re-arms it with a fresh stamp; its sample 0.1 s later
  // is hot and promotes it.
  sim.Feed(At(9, 5000 * kMs));
  EXPECT_TRUE(t->IsArmed(A(5)));
  EXPECT_EQ(t->scan_seq(), 3u);
  sim.Feed(At(5, 5100 * kMs));
  EXPECT_EQ(t->memory().NodeOf(A(5)), 0);
}

TEST(TppScannerTest, PagesPresentAtStartCarryTheFirstPassStamp) {
  // hot_set_workload's second hot set is written before the trace and
  // first sampled at the switch: the first pass armed it then, so its first
  // sample faults with that old stamp (not hot); without present_at_start
  // the page is new to the scanner and takes no fault.
  for (const bool present : {true, false}) {
    const SimMachine m = Machine(/*fast=*/2000, /*slow=*/10000);
    auto tpp = ScannerTpp(m, present);
    TppPolicy* t = tpp.get();
    std::vector<std::unique_ptr<SimPolicy>> p;
    p.push_back(std::move(tpp));
    Simulation sim(std::move(p), 100 * kSec);
    sim.Feed(At(1, 0));
    sim.Feed(At(1, 1100 * kMs));  // after the first pass (1 s): promoted
    EXPECT_EQ(t->memory().NodeOf(A(1)), 0);
    sim.Feed(At(50, 12 * kSec));  // first sample of page 50
    EXPECT_EQ(t->memory().NodeOf(A(50)), 1);
    EXPECT_FALSE(t->IsArmed(A(50)));  // the fault (if any) disarmed it
    uint64_t stale = 0;
    for (const auto& [name, v] : t->Details())
      if (name == "stale_faults") stale = v;
    EXPECT_EQ(stale, present ? 1u : 0u) << "present_at_start " << present;
  }
}

TEST(TppScannerTest, ThePassCostDelaysTheNextPass) {
  // Two pages 10 apart: a pass walks 10 PTEs. At 1 ms a PTE the pass costs
  // 10 ms, and the 3% cap puts the next pass 32 x 10 ms beyond the period:
  // at 1 + 1 + 0.32 s instead of 2 s.
  for (const uint64_t ns_per_pte : {uint64_t{0}, 1 * kMs}) {
    const SimMachine m = Machine(/*fast=*/2000, /*slow=*/10000);
    SimulatedMemoryOptions o;
    o.capacities = m.capacities;
    o.first_touch_node = 1;
    absl::StatusOr<std::unique_ptr<SimulatedMemory>> mem =
        SimulatedMemory::Create(m.topology, o);
    ASSERT_TRUE(mem.ok());
    TppOptions t;
    t.scanner = true;
    t.scan_ns_per_pte = ns_per_pte;
    auto tpp = std::make_unique<TppPolicy>(std::move(*mem), t);
    TppPolicy* pt = tpp.get();
    std::vector<std::unique_ptr<SimPolicy>> p;
    p.push_back(std::move(tpp));
    Simulation sim(std::move(p), 100 * kSec);
    sim.Feed(At(0, 0));
    sim.Feed(At(9, 1));
    sim.Feed(At(20000, 1500 * kMs));  // after the first pass, far away
    EXPECT_EQ(pt->scan_seq(), 1u);
    EXPECT_EQ(pt->next_event_ns(),
              ns_per_pte == 0 ? 2 * kSec : 2 * kSec + 320 * kMs);
  }
}

TEST(TppScannerTest, IdealModelIsTppIdeal) {
  const SimMachine m = Machine(/*fast=*/2000, /*slow=*/10000);
  TppPolicy ideal(Memory(m), TppOptions{});
  EXPECT_EQ(ideal.name(), "tpp-ideal");
  EXPECT_EQ(ideal.next_event_ns(), UINT64_MAX);  // no scanner
}

// --- memtis
// ---------------------------------------------------------------------

TEST(MemtisPolicyTest, HistogramThresholdCoolingAndPeriodicMigration) {
  EXPECT_EQ(MemtisPolicy::BinOf(0), 0);
  EXPECT_EQ(MemtisPolicy::BinOf(1), 1);
  EXPECT_EQ(MemtisPolicy::BinOf(3), 2);
  EXPECT_EQ(MemtisPolicy::BinOf(4), 3);
  EXPECT_EQ(MemtisPolicy::BinOf(1u << 30), 15);
  // 100 DRAM pages (2% watermark: 2 pages), plenty of CXL.
  const SimMachine m = Machine(/*fast=*/100, /*slow=*/10000);
  MemtisOptions o;
  o.cooling_samples = 1000;
  auto mt = std::make_unique<MemtisPolicy>(Memory(m), o);
  MemtisPolicy* pm = mt.get();
  std::vector<std::unique_ptr<SimPolicy>> p;
  p.push_back(std::move(mt));
  Simulation sim(std::move(p), 100 * kSec);
  uint64_t now = 1;
  // Pages 0..99 fill DRAM with one sample each; pages 100..109 land on CXL
  // and get 8 samples each (bin 4).
  for (uint64_t i = 0; i < 100; ++i) sim.Feed(At(i, now++));
  for (int r = 0; r < 8; ++r) {
    for (uint64_t i = 100; i < 110; ++i) sim.Feed(At(i, now++));
  }
  EXPECT_EQ(pm->CountOf(A(105)), 8u);
  // 10 pages in bin 4 fit; adding bin 1's 100 would not (98 fit): the
  // threshold is the lowest bin above bin 1 (bins 2 and 3 are empty).
  EXPECT_EQ(pm->ThresholdBin(), 2);
  for (uint64_t i = 100; i < 110; ++i) EXPECT_EQ(pm->memory().NodeOf(A(i)), 1);
  // The migration at 500 ms demotes 12 cold pages (room for 10 hot + the
  // 2-page watermark) and promotes the 10.
  sim.Feed(At(100, 600 * kMs));
  for (uint64_t i = 100; i < 110; ++i)
    EXPECT_EQ(pm->memory().NodeOf(A(i)), 0) << i;
  EXPECT_EQ(pm->memory().free_pages(0), 2u);
  // Cooling after 1000 samples halves every count.
  const uint32_t before = pm->CountOf(A(100));
  while (now < 1000) sim.Feed(At(200, 700 * kMs + now++));
  sim.Feed(At(201, 800 * kMs));
  EXPECT_EQ(pm->CountOf(A(100)), before / 2);
  sim.Finish();
  const PolicyTally t = sim.Totals()[0];
  EXPECT_EQ(t.promoted_pages, 10u);
  EXPECT_GE(t.demoted_pages, 12u);
}

// --- hotpage
// --------------------------------------------------------------------

TEST(HotpagePolicyTest, RoundsPromoteThroughTheRateLimitedMigrator) {
  const SimMachine m = Machine(/*fast=*/3000, /*slow=*/100000);
  HotpagePolicyOptions o;
  o.engine.interval_ns = kSec;
  o.engine.address_space = 7;
  o.migrator.rate_limit_bytes_per_sec = 4096 * 1000;  // 1000 pages/s
  o.migrator.batch_pages = 100;
  // Rounds on the schedule only: the first samples would bring the first
  // round to interval / 4 (engine_test FirstRoundComesEarlyWithSamples);
  // this test is about the migrator between two scheduled rounds.
  o.engine.shift_z = 0;
  absl::StatusOr<std::unique_ptr<HotpagePolicy>> hp =
      HotpagePolicy::Create(m.topology, Memory(m), o);
  ASSERT_TRUE(hp.ok()) << hp.status();
  HotpagePolicy* h = hp->get();
  std::vector<uint64_t> round_times;
  h->set_round_listener(
      [&](const RoundReport& r) { round_times.push_back(r.time_ns); });
  std::vector<std::unique_ptr<SimPolicy>> p;
  p.push_back(std::move(*hp));
  Simulation sim(std::move(p), kSec);
  // 3000 cold pages fill DRAM; 500 hot pages on CXL, 20 samples each
  // within the first second.
  uint64_t now = 0;
  for (uint64_t i = 0; i < 3000; ++i) sim.Feed(At(i, now++));
  for (int r = 0; r < 20; ++r) {
    for (uint64_t i = 3000; i < 3500; ++i) sim.Feed(At(i, now += 1000));
  }
  ASSERT_LT(now, kSec);
  for (uint64_t i = 3000; i < 3500; ++i) EXPECT_EQ(h->memory().NodeOf(A(i)), 1);
  // The round at 1 s decides 500 promotions (displacing cold pages); at
  // 1000 pages/s (the bucket holds max(50 ms, one batch, 2 MiB) = 512
  // pages) the migrator needs about half a second for the 1000 moves.
  sim.Feed(At(3000, kSec + 100 * kMs));
  ASSERT_EQ(round_times, std::vector<uint64_t>{kSec});
  const SimMigrationStats early = h->migration().stats();
  EXPECT_GT(early.promoted_pages + early.demoted_pages, 0u);
  EXPECT_LT(early.promoted_pages + early.demoted_pages, 1000u);
  sim.Feed(At(3000, kSec + 900 * kMs));
  // Every hot page the engine tracked is promoted (an 8-way set that
  // overflows may displace a few entries: the table is set-associative).
  const uint64_t promoted = h->migration().stats().promoted_pages;
  EXPECT_GE(promoted, 490u);
  EXPECT_EQ(promoted, h->engine().counters().planned_promotions);
  uint64_t hot_on_dram = 0;
  for (uint64_t i = 3000; i < 3500; ++i)
    hot_on_dram += h->memory().NodeOf(A(i)) == 0;
  EXPECT_EQ(hot_on_dram, promoted);
  EXPECT_EQ(h->migration().stats().queue_depth, 0u);
  sim.Finish();
  const PolicyTally t = sim.Totals()[0];
  EXPECT_EQ(t.promoted_pages, promoted);
  EXPECT_EQ(t.demoted_pages, h->migration().stats().demoted_pages);
  EXPECT_EQ(t.bytes_migrated, (t.promoted_pages + t.demoted_pages) * kPage);
}

// A perf.data file whose samples carry no data address (a `perf record`
// without -d: these are real files from perf 3.4-4.4) has nothing to
// replay; the error says so and how to record one, rather than only that
// the trace is empty.
TEST(SurveyTraceTest, APerfDataFileWithoutAddressesSaysWhy) {
  for (const char* f : {"perf.data.throttle-3.8", "perf.data.lost_samples-4.4",
                        "perf.data.piped.target.throttled-3.4"}) {
    SCOPED_TRACE(f);
    const std::string path = std::string("sampler/perf/testdata/") + f;
    absl::StatusOr<TraceSurvey> s = SurveyTrace(path, nullptr);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    const absl::string_view m = s.status().message();
    EXPECT_TRUE(absl::StrContains(m, "holds no samples")) << m;
    EXPECT_TRUE(absl::StrContains(m, "had no data address")) << m;
    EXPECT_TRUE(absl::StrContains(m, "perf record -d")) << m;
  }
}

// `hotpage simulate` of a perf.data recording of page faults (read through
// TraceSource, as the simulator reads it; an .hpt from `hotpage import`
// keeps the same per-sample source) feeds the engine fault samples: their
// rates bound the access rates from below, so the benefit-vs-cost gate is
// off (engine.h, SamplesCountAccesses). The same samples tagged as a PMU
// recording (kPerfData) are priced against the measured move cost.
TEST(HotpagePolicyTest, PageFaultRecordingsAreNotPricedAsAccesses) {
  absl::StatusOr<std::unique_ptr<TraceSource>> src =
      TraceSource::Open("sampler/perf/testdata/pagefaults.dd.perf.data");
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_EQ((*src)->format(), "perf.data");
  std::vector<Sample> samples;
  for (;;) {
    absl::StatusOr<absl::Span<const Sample>> b = (*src)->Next();
    ASSERT_TRUE(b.ok()) << b.status();
    if (b->empty()) break;
    samples.insert(samples.end(), b->begin(), b->end());
  }
  ASSERT_EQ(samples.size(), 9u);  // testdata/README.md
  for (const Sample& s : samples) {
    ASSERT_EQ(s.source, SampleSource::kPageFault);
  }
  const SimMachine m = Machine(/*fast=*/1000, /*slow=*/10000);
  for (const bool as_pmu : {false, true}) {
    SCOPED_TRACE(as_pmu ? "tagged kPerfData" : "as read");
    if (as_pmu) {
      for (Sample& s : samples) s.source = SampleSource::kPerfData;
    }
    std::unique_ptr<SimulatedMemory> mem = Memory(m);
    EngineOptions opt;
    opt.address_space = samples[0].pid;
    absl::StatusOr<std::unique_ptr<PolicyEngine>> engine =
        PolicyEngine::Create(m.topology, PlacementConfig{}, opt);
    ASSERT_TRUE(engine.ok()) << engine.status();
    (*engine)->Start(samples[0].time_ns);
    (*engine)->ObserveMigration(1, 5000000);  // a measured cost: 5 ms/page
    (*engine)->Ingest(samples);
    const RoundReport r =
        (*engine)->RunRound(*mem, samples[0].time_ns + opt.interval_ns);
    EXPECT_GT(r.migration_cost_ns, 0);
    EXPECT_EQ(r.rates_bound_accesses, !as_pmu);
    if (as_pmu) {
      EXPECT_GT(r.migration_margin_per_sec, 0);
    } else {
      EXPECT_EQ(r.migration_margin_per_sec, 0);
    }
  }
}

// --- the whole run
// ----------------------------------------------------------------

std::string WriteSyntheticTrace(const std::string& name,
                                trace_gen::MixedOptions w) {
  const std::string path = TmpPath(name);
  EXPECT_TRUE(
      trace_gen::WriteMixedTrace(path, trace_gen::GenerateMixed(w)).ok());
  return path;
}

TEST(SimulateTraceTest, TwoRunsGiveByteIdenticalReports) {
  trace_gen::MixedOptions w;
  w.duration_ms = 6000;
  w.pages = 2000;
  w.hot_pages = 200;
  w.shift_ms = 3000;
  const std::string path = WriteSyntheticTrace("det.hpt", w);
  std::string reports[2];
  for (std::string& r : reports) {
    SimulateOptions o;
    o.trace = path;
    o.topology = "2pkg+cxl";
    absl::StatusOr<SimulateResult> res = SimulateTrace(o);
    ASSERT_TRUE(res.ok()) << res.status();
    r = ReportJson(res->info, *res->sim);
  }
  EXPECT_EQ(reports[0], reports[1]);
  EXPECT_TRUE(absl::StrContains(reports[0], "\"name\": \"memtis\""));
  EXPECT_GT(reports[0].size(), 1000u);
}

TEST(SimulateTraceTest, PicksTheBusiestPidAndHonoursPid) {
  std::vector<Sample> s = trace_gen::GenerateMixed(trace_gen::MixedOptions{
      .pages = 100, .samples_per_sec = 1000, .duration_ms = 2000});
  for (size_t i = 0; i < s.size(); i += 3) s[i].pid = 99;  // a third for pid 99
  const std::string path = TmpPath("pids.hpt");
  ASSERT_TRUE(trace_gen::WriteMixedTrace(path, s).ok());
  SimulateOptions o;
  o.trace = path;
  o.policy = "first-touch";
  absl::StatusOr<SimulateResult> r = SimulateTrace(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->info.pid, 4242u);
  EXPECT_TRUE(absl::StrContains(r->notes, "simulating pid 4242")) << r->notes;
  EXPECT_EQ(r->sim->samples(), s.size() - (s.size() + 2) / 3);
  ASSERT_EQ(r->sim->policies().size(), 2u);  // with the oracle beside it
  o.pid = 99;
  r = SimulateTrace(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->sim->samples(), (s.size() + 2) / 3);
  o.pid = 5;
  r = SimulateTrace(o);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::StrContains(r.status().message(), "no samples of pid 5"))
      << r.status();
}

TEST(SimulateTraceTest, ClearErrors) {
  SimulateOptions o;
  o.trace = TmpPath("nonexistent.hpt");
  absl::StatusOr<SimulateResult> r = SimulateTrace(o);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::StrContains(r.status().message(), "no such file"))
      << r.status();

  o.trace = TmpPath("text.txt");
  std::ofstream(o.trace) << "hello, not a trace\n";
  r = SimulateTrace(o);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::StrContains(r.status().message(), "neither an .hpt trace"))
      << r.status();

  o.trace = TmpPath("empty.hpt");
  ASSERT_TRUE(trace_gen::WriteMixedTrace(o.trace, {}).ok());
  r = SimulateTrace(o);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::StrContains(r.status().message(), "no samples"))
      << r.status();

  o.trace = WriteSyntheticTrace(
      "ok.hpt", trace_gen::MixedOptions{.pages = 64, .duration_ms = 500});
  o.topology = "5tier";
  r = SimulateTrace(o);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::StrContains(r.status().message(), "neither a preset"))
      << r.status();
  o.topology = "dram+cxl";
  o.policy = "lru";
  r = SimulateTrace(o);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::StrContains(r.status().message(), "unknown policy 'lru'"))
      << r.status();
}

// Observer calls arrive for every access of every memory-backed policy, for
// every move, and once per interval.
class CountingObserver : public SimObserver {
 public:
  void OnStart(const std::vector<std::string>& p, uint64_t) override {
    policies = p;
  }
  void OnAccess(size_t policy, uint64_t, uint64_t, int, bool fast) override {
    ++accesses[policy];
    fast_accesses[policy] += fast;
  }
  void OnMove(size_t policy, uint64_t, uint64_t, int, int) override {
    ++moves[policy];
  }
  void OnIntervalEnd(uint64_t, uint64_t, uint64_t,
                     const std::vector<PolicyTally>& t) override {
    ++intervals;
    for (size_t i = 0; i < t.size(); ++i) tallied_fast[i] += t[i].fast_samples;
  }
  std::vector<std::string> policies;
  std::map<size_t, uint64_t> accesses, fast_accesses, moves, tallied_fast;
  int intervals = 0;
};

TEST(SimulateTraceTest, ObserverSeesAccessesMovesAndIntervals) {
  CountingObserver obs;
  SimulateOptions o;
  o.trace = WriteSyntheticTrace(
      "obs.hpt", trace_gen::MixedOptions{
                     .pages = 1000, .duration_ms = 4000, .hot_pages = 100});
  o.observer = &obs;
  absl::StatusOr<SimulateResult> r = SimulateTrace(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(obs.policies, AllPolicyNames());
  EXPECT_EQ(obs.intervals, 4);
  const std::vector<PolicyTally> totals = r->sim->Totals();
  for (size_t i = 1; i < obs.policies.size(); ++i) {
    EXPECT_EQ(obs.accesses[i], r->sim->samples()) << obs.policies[i];
    EXPECT_EQ(obs.fast_accesses[i], totals[i].fast_samples) << obs.policies[i];
    EXPECT_EQ(obs.tallied_fast[i], totals[i].fast_samples);
    EXPECT_EQ(obs.moves[i] * kPage, totals[i].bytes_migrated)
        << obs.policies[i];
  }
  EXPECT_EQ(obs.accesses[0], 0u);  // the oracle places by interval
}

}  // namespace
}  // namespace hotpage
