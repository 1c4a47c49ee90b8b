// ParseWeights and ResolveWeights (placement_weights.h): the --weights
// syntax, and weights from the kernel, from HMAT bandwidth or as given.
// Weighted placement itself (rule W over rounds) is tested through
// DecideMoves in placement_test.cc.

#include "policy/placement_weights.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "policy/placement.h"
#include "policy/topology.h"

namespace hotpage {
namespace {

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

// The 2pkg-cxl guest by hand (as in placement_test.cc): DRAM nodes 0 and 1
// in packages 0 and 1, and a CPU-less slower node 2 (package 1).
Topology ThreeNodes() {
  Topology t;
  t.nodes.push_back(Node(0, {0}, {10, 21, 24}, 0, 0));
  t.nodes.push_back(Node(1, {1}, {21, 10, 24}, 0, 1));
  t.nodes.push_back(Node(2, {}, {24, 24, 10}, 1, 1));
  t.tiers = {MemoryTier{0, {0, 1}}, MemoryTier{1, {2}}};
  t.packages = {Package{0, {0}}, Package{1, {1, 2}}};
  return t;
}

WeightsConfig Weights(const std::string& text) {
  absl::StatusOr<WeightsConfig> w = ParseWeights(text);
  EXPECT_TRUE(w.ok()) << w.status();
  return w.ok() ? *w : WeightsConfig{};
}

TEST(PlacementWeighted, ParseWeights) {
  absl::StatusOr<WeightsConfig> w = ParseWeights("1:1, 0:3");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->source, WeightsConfig::Source::kGiven);
  ASSERT_EQ(w->given.size(), 2u);
  EXPECT_EQ(w->given[0].node, 0);
  EXPECT_EQ(w->given[0].weight, 3);
  EXPECT_EQ(w->given[1].node, 1);
  EXPECT_EQ(w->given[1].weight, 1);
  EXPECT_EQ(ParseWeights(" auto ")->source, WeightsConfig::Source::kAuto);
  EXPECT_EQ(ParseWeights("kernel")->source, WeightsConfig::Source::kKernel);
  const std::pair<const char*, const char*> bad[] = {
      {"", "empty"},
      {"0:0", "\"0:0\": weight must be 1..255"},
      {"0:256", "1..255"},
      {"a:1", "\"a:1\" is not NODE:WEIGHT"},
      {"0-3", "\"0-3\""},
      {"-1:2", "node must be >= 0"},
      {"0:3,0:1", "node 0 given twice"},
      {"0:3,", "\"\" is not"},
  };
  for (const auto& [text, want] : bad) {
    absl::StatusOr<WeightsConfig> e = ParseWeights(text);
    ASSERT_FALSE(e.ok()) << text;
    EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(e.status().message().find(want), absl::string_view::npos)
        << text << ": " << e.status().message();
    // The caller names the option (as a flag or a config key).
    EXPECT_EQ(e.status().message().find("weights"), absl::string_view::npos)
        << text << ": " << e.status().message();
  }
}

TEST(PlacementWeighted, ResolveWeightsFromKernelHmatOrGiven) {
  Topology t = ThreeNodes();
  // auto: HMAT read bandwidth 400:200:200 -> 16:8:8 of 32 -> 2:1:1.
  t.nodes[0].hmat.read_bandwidth_mbps = 400;
  t.nodes[1].hmat.read_bandwidth_mbps = 200;
  t.nodes[2].hmat.read_bandwidth_mbps = 200;
  absl::StatusOr<std::vector<NodeWeight>> w =
      ResolveWeights(Weights("auto"), t);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_EQ(w->size(), 3u);
  EXPECT_EQ((*w)[0].weight, 2);
  EXPECT_EQ((*w)[1].weight, 1);
  EXPECT_EQ((*w)[2].weight, 1);
  t.nodes[2].hmat.read_bandwidth_mbps.reset();
  w = ResolveWeights(Weights("auto"), t);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("node 2 has no HMAT read bandwidth"),
            absl::string_view::npos)
      << w.status();
  // kernel: weighted_interleave/nodeN, default 1.
  t.nodes[0].weight = 5;
  w = ResolveWeights(Weights("kernel"), t);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ((*w)[0].weight, 5);
  EXPECT_EQ((*w)[1].weight, 1);
  // given: unknown node is an error, also from ValidatePlacementConfig.
  w = ResolveWeights(Weights("0:2,7:1"), t);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("node 7"), absl::string_view::npos);
  PlacementConfig c;
  c.weights = Weights("7:1");
  EXPECT_FALSE(ValidatePlacementConfig(c, t).ok());
  c.weights = Weights("0:2,1:1");
  EXPECT_TRUE(ValidatePlacementConfig(c, t).ok());
  c.interleave_tolerance = 1.5;
  EXPECT_FALSE(ValidatePlacementConfig(c, t).ok());
}

// ValidatePlacementConfig names an option as the daemon's config does,
// without a flag's "--"; attach and simulate spell it as their flag
// (engine_flags_test).
TEST(PlacementWeighted, ValidateNamesTheOptionWithoutAFlag) {
  const Topology t = ThreeNodes();  // no HMAT bandwidth
  PlacementConfig c;
  c.weights = Weights("0:2,7:1");
  absl::Status s = ValidatePlacementConfig(c, t);
  EXPECT_EQ(s.message(),
            "weights: node 7 is not an online memory node; see `hotpage "
            "topology`");
  c.weights = Weights("auto");
  s = ValidatePlacementConfig(c, t);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "weights: auto: node 0 has no HMAT read bandwidth "
            "(access0/initiators/read_bandwidth); give the weights as "
            "NODE:WEIGHT,... instead");
  c = PlacementConfig{};
  c.promote_to = {0, 5};
  s = ValidatePlacementConfig(c, t);
  EXPECT_EQ(s.message(),
            "promote_to: node 5 is not an online memory node; see `hotpage "
            "topology`");
  c = PlacementConfig{};
  c.interleave_tolerance = 1.5;
  s = ValidatePlacementConfig(c, t);
  EXPECT_EQ(s.message(),
            "keep_interleave: tolerance 1.5: need a fraction <= 1 (negative: "
            "off)");
}

}  // namespace
}  // namespace hotpage
