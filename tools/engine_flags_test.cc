// The engine flags' one parser (tools/engine_flags.h), which `attach` and
// `simulate` share: each flag lands in its PlacementConfig field, bad values
// are errors naming the flag, and machine checks name the node.

#include "tools/engine_flags.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tools/simulate/sim_machine.h"

namespace hotpage {
namespace {

ParsedFlags Parse(const std::vector<std::string>& args) {
  absl::StatusOr<ParsedFlags> f = ParseFlags(args, EngineFlagSpecs());
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? *f : ParsedFlags();
}

TEST(EngineFlagsTest, EveryFlagSetsItsRule) {
  PlacementConfig c;
  ASSERT_TRUE(ParseEngineFlags(Parse({}), &c).ok());
  EXPECT_EQ(c.weights.source, WeightsConfig::Source::kNone);
  EXPECT_FALSE(c.package_aware || c.locality || c.huge_strict_preferred);
  EXPECT_LT(c.interleave_tolerance, 0);

  const ParsedFlags f = Parse(
      {"--weights", "0:3,1:1", "--package-aware", "--locality", "--huge-strict",
       "--keep-interleave", "0.05", "--promote-to", "0-1"});
  ASSERT_TRUE(ParseEngineFlags(f, &c).ok());
  EXPECT_EQ(c.weights.source, WeightsConfig::Source::kGiven);
  ASSERT_EQ(c.weights.given.size(), 2u);
  EXPECT_EQ(c.weights.given[0].weight, 3);
  EXPECT_TRUE(c.package_aware);
  EXPECT_TRUE(c.locality);
  EXPECT_TRUE(c.huge_strict_preferred);
  EXPECT_DOUBLE_EQ(c.interleave_tolerance, 0.05);
  EXPECT_TRUE(c.promote_to.empty());  // needs the machine
  const Topology t = *PresetTopology("2pkg+cxl");
  ASSERT_TRUE(ApplyMachineEngineFlags(f, t, &c).ok());
  EXPECT_EQ(c.promote_to, (std::vector<int>{0, 1}));
  EXPECT_EQ(EngineFlagsSummary(f),
            "--promote-to 0-1 --weights 0:3,1:1 --package-aware "
            "--keep-interleave 0.05 --huge-strict --locality");
  EXPECT_EQ(EngineFlagsSummary(Parse({})), "");
}

TEST(EngineFlagsTest, ErrorsNameTheFlagOrTheNode) {
  PlacementConfig c;
  absl::Status s = ParseEngineFlags(Parse({"--weights", "0:x"}), &c);
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_EQ(s.message(),
            "--weights: \"0:x\" is not NODE:WEIGHT (e.g. 0:3); want auto, "
            "kernel or a list");
  s = ParseEngineFlags(Parse({"--keep-interleave", "2"}), &c);
  EXPECT_TRUE(absl::StrContains(s.message(), "--keep-interleave")) << s;

  const Topology t = *PresetTopology("dram+cxl");
  c = PlacementConfig{};
  s = ApplyMachineEngineFlags(Parse({"--promote-to", "7"}), t, &c);
  EXPECT_EQ(s.message(), "--promote-to: node 7 is not an online NUMA node");
  s = ApplyMachineEngineFlags(Parse({"--promote-to", "x"}), t, &c);
  EXPECT_TRUE(absl::StartsWith(s.message(), "--promote-to: ")) << s;
  // The weights must resolve on the machine (ValidatePlacementConfig).
  // Its messages name the option ("weights: ..."); here it is a flag.
  ASSERT_TRUE(ParseEngineFlags(Parse({"--weights", "4:1"}), &c).ok());
  s = ApplyMachineEngineFlags(Parse({}), t, &c);
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_EQ(s.message(),
            "--weights: node 4 is not an online memory node; see `hotpage "
            "topology`");
  // An option of two words: its flag has a dash (keep_interleave,
  // --keep-interleave). The flag's own range check comes first; a value
  // set another way reaches ValidatePlacementConfig.
  c = PlacementConfig{};
  c.interleave_tolerance = 1.5;
  s = ApplyMachineEngineFlags(Parse({}), t, &c);
  EXPECT_EQ(s.message(),
            "--keep-interleave: tolerance 1.5: need a fraction <= 1 "
            "(negative: off)");
  // --weights auto needs HMAT read bandwidth on every node.
  Topology no_hmat = t;
  for (NodeInfo& n : no_hmat.nodes) n.hmat = HmatPerf{};
  c = PlacementConfig{};
  ASSERT_TRUE(ParseEngineFlags(Parse({"--weights", "auto"}), &c).ok());
  EXPECT_TRUE(ApplyMachineEngineFlags(Parse({}), t, &c).ok());
  s = ApplyMachineEngineFlags(Parse({}), no_hmat, &c);
  EXPECT_TRUE(absl::StartsWith(s.message(), "--weights: auto: node ")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "HMAT")) << s;
}

}  // namespace
}  // namespace hotpage
