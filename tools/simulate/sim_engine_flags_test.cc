// The engine flags (tools/engine_flags.h) reach the simulator's hotpage
// policy and change its decisions, each test failing if its flag were
// ignored. The policy is built as `hotpage simulate` builds it
// (BuildPolicies from SimulateOptions::placement) on the 2pkg+cxl preset
// (nodes 0 and 1: DRAM of packages 0 and 1, cpu 0 on node 0 and cpu 1 on
// node 1; nodes 2 and 3: their CXL). The process's memory starts on CXL,
// as tests/compare's workload places it (--prefer_node), with room on
// DRAM: promotions go into free room, where the target rules (W, P,
// --promote-to) choose the node. (When DRAM is full every promotion is a
// swap, and the weights order the displacement targets the same way:
// policy/target_strategy.h, placement_test's
// RatioHoldsOnAFullFastTierThroughSwaps.)

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "policy/placement.h"
#include "tools/simulate/sim_driver.h"
#include "tools/simulate/sim_hotpage.h"
#include "tools/simulate/sim_machine.h"
#include "tools/simulate/sim_run.h"

namespace hotpage {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kHuge = uint64_t{2} << 20;
constexpr uint64_t kBase = 0x7f0000000000;
constexpr uint64_t kSec = 1000000000;

uint64_t A(uint64_t i) { return kBase + i * kPage; }

// 2pkg+cxl with 1000 pages of DRAM per package; `weights`: the nodes'
// weighted-interleave weights (NodeInfo::weight, 1 on the preset).
SimMachine TwoPackages(uint64_t fast_pages = 2000,
                       std::vector<int> weights = {}) {
  absl::StatusOr<Topology> t = PresetTopology("2pkg+cxl");
  EXPECT_TRUE(t.ok());
  for (size_t i = 0; i < weights.size(); ++i) t->nodes[i].weight = weights[i];
  CapacitySpec spec;
  spec.fast_bytes = fast_pages * kPage;
  absl::StatusOr<SimMachine> m = ScaleMachine(*t, 4000, spec);
  EXPECT_TRUE(m.ok()) << m.status();
  return *m;
}

// One page group: `count` pages from page index `first`, placed on `node`
// before the run, accessed from `cpu`.
struct Group {
  uint64_t first = 0;
  uint64_t count = 0;
  int node = 2;
  uint32_t cpu = 0;
};

struct Outcome {
  std::map<int, uint64_t> promoted_to;  // 4 KiB pages, by target node
  std::map<uint64_t, int> node_of;      // page index -> node at the end
  uint64_t locality_pages = 0;
  uint64_t huge_preferred_full = 0;
};

// Runs the hotpage policy as `hotpage simulate` builds it with `placement`:
// the groups' pages placed first, then 20 samples per page in the first
// second (a second and third round follow at 1 s and 2 s).
Outcome RunPolicy(const SimMachine& m, const PlacementConfig& placement,
                  const std::vector<Group>& groups, bool region = false) {
  SimulateOptions o;
  o.placement = placement;
  o.pid = 7;
  absl::StatusOr<std::vector<std::unique_ptr<SimPolicy>>> built =
      BuildPolicies({"hotpage"}, m, o, 1);
  EXPECT_TRUE(built.ok()) << built.status();
  Outcome out;
  if (!built.ok()) return out;
  auto* h = dynamic_cast<HotpagePolicy*>((*built)[0].get());
  EXPECT_NE(h, nullptr);
  if (h == nullptr) return out;
  h->set_round_listener([&out](const RoundReport& r) {
    for (const PlannedMove& mv : r.decision.moves) {
      if (mv.reason == PlacementReason::kPromote &&
          mv.trigger != PlacementTrigger::kLocality)
        out.promoted_to[mv.to_node] += mv.page_bytes / kPage;
    }
    out.locality_pages += r.decision.locality_pages;
    out.huge_preferred_full +=
        r.decision.promote_skipped[SkipReason::kHugePreferredFull];
  });
  const uint64_t stride = region ? kHuge / kPage : 1;
  for (const Group& g : groups) {
    for (uint64_t i = g.first; i < g.first + g.count; ++i) {
      h->memory().Touch(A(i * stride), g.cpu, 0);
      EXPECT_EQ(h->memory().Move(A(i * stride), g.node, 0).status, g.node);
    }
  }
  Simulation sim(std::move(*built), kSec);
  uint64_t now = 1;
  for (int r = 0; r < 20; ++r) {
    for (const Group& g : groups) {
      for (uint64_t i = g.first; i < g.first + g.count; ++i) {
        Sample s;
        s.vaddr = A(i * stride) + 64;
        s.time_ns = now;
        now += 50000;
        s.pid = 7;
        s.cpu = g.cpu;
        s.period = 1;
        if (region) s.flags = kSampleRegion;
        sim.Feed({&s, 1});
      }
    }
  }
  EXPECT_LT(now, kSec);
  Sample last;
  last.vaddr = A(0) + 64;
  last.time_ns = 2 * kSec + kSec / 2;
  last.pid = 7;
  last.period = 1;
  sim.Feed({&last, 1});
  sim.Finish();
  for (const Group& g : groups) {
    for (uint64_t i = g.first; i < g.first + g.count; ++i)
      out.node_of[i] = h->memory().NodeOf(A(i * stride));
  }
  return out;
}

// 400 pages used from package 0 (cpu 0) and 400 from package 1 (cpu 1),
// each on its package's CXL node.
const std::vector<Group> kPerPackage = {
    {.first = 0, .count = 400, .node = 2},
    {.first = 400, .count = 400, .node = 3, .cpu = 1}};

// Pages promoted into the package of the CPU that uses them.
uint64_t InPackage(const Outcome& o) {
  uint64_t n = 0;
  for (const auto& [i, node] : o.node_of) n += node == (i < 400 ? 0 : 1);
  return n;
}

TEST(SimEngineFlagsTest, DefaultPromotesToTheAccessorsNode) {
  Outcome o = RunPolicy(TwoPackages(), PlacementConfig{}, kPerPackage);
  EXPECT_EQ(o.promoted_to[0], 400u);
  EXPECT_EQ(o.promoted_to[1], 400u);
  EXPECT_EQ(InPackage(o), 800u);
}

TEST(SimEngineFlagsTest, WeightsSpreadPromotionsByWeight) {
  PlacementConfig c;
  c.weights = *ParseWeights("0:3,1:1");
  Outcome o = RunPolicy(TwoPackages(), c, kPerPackage);
  ASSERT_EQ(o.promoted_to[0] + o.promoted_to[1], 800u);
  // The kernel's weighted round robin: exactly 3 of every 4.
  EXPECT_EQ(o.promoted_to[0], 600u);
  EXPECT_EQ(o.promoted_to[1], 200u);
}

TEST(SimEngineFlagsTest, WeightsKernelAreTheTopologysWeights) {
  PlacementConfig c;
  c.weights = *ParseWeights("kernel");
  // The preset's weights are all 1 (the kernel's default): 1:1 round robin.
  Outcome o = RunPolicy(TwoPackages(), c, kPerPackage);
  EXPECT_EQ(o.promoted_to[0], 400u);
  EXPECT_EQ(o.promoted_to[1], 400u);
  EXPECT_LT(InPackage(o), 800u);  // round robin, not by accessor
  // A topology (JSON) recording weights 3 and 1 for the DRAM nodes.
  o = RunPolicy(TwoPackages(2000, {3, 1, 1, 1}), c, kPerPackage);
  EXPECT_EQ(o.promoted_to[0], 600u);
  EXPECT_EQ(o.promoted_to[1], 200u);
}

TEST(SimEngineFlagsTest, PackageAwareKeepsAPackagesPagesInItsPackage) {
  PlacementConfig c;
  c.weights = *ParseWeights("0:3,1:1");
  Outcome spread = RunPolicy(TwoPackages(), c, kPerPackage);
  c.package_aware = true;
  Outcome kept = RunPolicy(TwoPackages(), c, kPerPackage);
  // Weights alone cross packages (3:1 over both); with the rule each
  // package's pages stay in it (the weights then apply within a package).
  EXPECT_LT(InPackage(spread), 500u);
  EXPECT_EQ(InPackage(kept), 800u);
}

TEST(SimEngineFlagsTest, PromoteToPromotesOnlyThere) {
  PlacementConfig c;
  c.promote_to = {1};
  Outcome o = RunPolicy(TwoPackages(), c, kPerPackage);
  EXPECT_EQ(o.promoted_to[0], 0u);
  EXPECT_EQ(o.promoted_to[1], 800u);
}

TEST(SimEngineFlagsTest, LocalityMovesPrivatePagesToTheirAccessorsNode) {
  // 300 pages on node 0 used only from cpu 1 (node 1), which has room.
  const std::vector<Group> remote = {
      {.first = 0, .count = 300, .node = 0, .cpu = 1}};
  Outcome off = RunPolicy(TwoPackages(), PlacementConfig{}, remote);
  PlacementConfig c;
  c.locality = true;
  Outcome on = RunPolicy(TwoPackages(), c, remote);
  uint64_t on_node1_off = 0, on_node1_on = 0;
  for (const auto& [i, node] : off.node_of) on_node1_off += node == 1;
  for (const auto& [i, node] : on.node_of) on_node1_on += node == 1;
  EXPECT_EQ(on_node1_off, 0u);
  EXPECT_EQ(off.locality_pages, 0u);
  EXPECT_EQ(on_node1_on, 300u);
  EXPECT_EQ(on.locality_pages, 300u);
}

TEST(SimEngineFlagsTest, HugeStrictKeepsHugePagesToTheirPreferredNode) {
  // DAMON-like 2 MiB region samples on CXL; --promote-to 1, whose 300 pages
  // cannot take a 2 MiB page. Without a memory policy the preferred node
  // is --promote-to's, which already limits the targets, so the rule
  // changes why the page stays (kHugePreferredFull, not kNoRoom).
  const std::vector<Group> huge = {{.first = 0, .count = 2, .node = 2}};
  PlacementConfig c;
  c.promote_to = {1};
  Outcome off = RunPolicy(TwoPackages(600), c, huge, /*region=*/true);
  c.huge_strict_preferred = true;
  Outcome on = RunPolicy(TwoPackages(600), c, huge, /*region=*/true);
  EXPECT_EQ(off.huge_preferred_full, 0u);
  EXPECT_GT(on.huge_preferred_full, 0u);
  EXPECT_EQ(on.promoted_to[1], 0u);
  EXPECT_EQ(on.promoted_to[0], 0u);
}

TEST(SimEngineFlagsTest, RulesATraceCannotFeedAreRefusedWithTheReason) {
  PlacementConfig c;
  EXPECT_TRUE(CheckSimulatedPlacement(c).ok());
  c.interleave_tolerance = 0.05;
  absl::Status s = CheckSimulatedPlacement(c);
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_TRUE(absl::StrContains(s.message(), "--keep-interleave"));
  EXPECT_TRUE(absl::StrContains(s.message(), "no memory policies"));
  c = PlacementConfig{};
  c.huge_strict_preferred = true;
  s = CheckSimulatedPlacement(c);
  EXPECT_TRUE(absl::StrContains(s.message(), "give --promote-to"));
  c.promote_to = {0};
  EXPECT_TRUE(CheckSimulatedPlacement(c).ok());
  // SimulateTrace checks the same before reading the trace.
  SimulateOptions o;
  o.trace = "/nonexistent.hpt";
  o.placement.interleave_tolerance = 0;
  absl::StatusOr<SimulateResult> r = SimulateTrace(o);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::StrContains(r.status().message(), "--keep-interleave"));
  // And the machine: weights for a node the topology lacks.
  o.placement = PlacementConfig{};
  o.placement.weights = *ParseWeights("5:1");
  r = SimulateTrace(o);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::StrContains(r.status().message(), "node 5"));
}

}  // namespace
}  // namespace hotpage
