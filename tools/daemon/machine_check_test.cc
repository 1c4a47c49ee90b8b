#include "tools/daemon/machine_check.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "policy/placement.h"
#include "policy/topology.h"
#include "tools/daemon/daemon_config.h"

namespace hotpage {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

// Nodes by tier: tiers[r] lists rank r's node ids; the fast tier's nodes
// have a CPU each.
Topology Make(const std::vector<std::vector<int>>& tiers) {
  Topology t;
  for (size_t r = 0; r < tiers.size(); ++r) {
    t.tiers.push_back(MemoryTier{static_cast<int>(r), tiers[r]});
    for (int id : tiers[r]) {
      NodeInfo n;
      n.id = id;
      if (r == 0) n.cpus = {id};
      n.memory_bytes = 4 * kGiB;
      n.tier = static_cast<int>(r);
      t.nodes.push_back(n);
    }
  }
  std::sort(t.nodes.begin(), t.nodes.end(),
            [](const NodeInfo& a, const NodeInfo& b) { return a.id < b.id; });
  t.features.preferred_many = true;
  return t;
}

DaemonConfig Parse(const std::string& text) {
  absl::StatusOr<DaemonConfig> cfg = ParseDaemonConfig(text, "/etc/h.toml");
  EXPECT_TRUE(cfg.ok()) << cfg.status();
  return cfg.ok() ? *cfg : DaemonConfig{};
}

TEST(MachineCheckTest, OneTierIsRefusedAndTwoAreNot) {
  const absl::Status one = CheckTiers(Make({{0}}));
  EXPECT_EQ(one.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(one.message(),
                                "1 NUMA node(s) in one "
                                "memory tier"))
      << one;
  EXPECT_TRUE(CheckTiers(Make({{0}, {1}})).ok());
  EXPECT_EQ(DescribeTiers(Make({{0}, {1}})),
            "2 node(s) with memory in 2 tier(s): fast 0, then 1");
  EXPECT_EQ(DescribeTiers(Make({{0, 1}, {2, 3}, {4}})),
            "5 node(s) with memory in 3 tier(s): fast 0-1, then 2-3, then 4");
}

TEST(MachineCheckTest, AConfigThatFitsTheMachineHasNoProblems) {
  const DaemonConfig cfg = Parse(R"([daemon]
self_memory = "1"

[[workload]]
name = "cache"
comm = "memcached"
promote_to = "0"
weights = "0:3,1:1"
)");
  const ConfigOnMachine on =
      ResolveConfigOnMachine(cfg, Make({{0}, {1}}), {}, std::nullopt);
  EXPECT_TRUE(on.Problems().empty());
  // The policy start-up sets and --check describes, chosen here once.
  ASSERT_TRUE(on.self_memory.ok()) << on.self_memory.status();
  EXPECT_EQ(DescribeSelfMemoryPolicy(*on.self_memory),
            "preferred on node 1 (as asked; tier 1 of 2)");
  EXPECT_TRUE(
      CheckConfigOnMachine(cfg, Make({{0}, {1}}), {}, std::nullopt).ok());
}

// Every problem is listed with its line, not only the first: the file's
// self_memory node, and each workload's promote_to and weights nodes.
TEST(MachineCheckTest, NodesTheMachineLacksAreNamedWithTheirLines) {
  const DaemonConfig cfg = Parse(R"([daemon]
self_memory = "7"

[[workload]]
name = "cache"
comm = "memcached"
promote_to = "0,5"

[[workload]]
name = "fine"
comm = "fine"

[[workload]]
name = "batch"
comm = "spark"
weights = "0:3,9:1"
)");
  const ConfigOnMachine on =
      ResolveConfigOnMachine(cfg, Make({{0}, {1}}), {}, std::nullopt);
  EXPECT_FALSE(on.self_memory.ok());
  EXPECT_EQ(on.workload_problems.size(), 2u);
  const std::vector<std::string> p = on.Problems();
  ASSERT_EQ(p.size(), 3u) << absl::StrJoin(p, "\n");
  EXPECT_TRUE(absl::StartsWith(p[0], "/etc/h.toml: self_memory: node 7"))
      << p[0];
  EXPECT_EQ(p[1],
            "/etc/h.toml:4: workload cache: promote_to: node 5 is not on "
            "this machine (nodes: 0-1)");
  EXPECT_TRUE(
      absl::StartsWith(p[2], "/etc/h.toml:13: workload batch: weights: node 9"))
      << p[2];
  const absl::Status s =
      CheckConfigOnMachine(cfg, Make({{0}, {1}}), {}, std::nullopt);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "; /etc/h.toml:4: workload cache"))
      << s;
}

// A workload's problems name the config's keys, never attach's flags:
// ValidatePlacementConfig names the option ("weights: ..."), only attach
// and simulate spell it "--weights".
TEST(MachineCheckTest, ProblemsNameTheKeysNotTheFlags) {
  const DaemonConfig cfg = Parse(R"([[workload]]
name = "given"
comm = "a"
weights = "0:1,9:1"

[[workload]]
name = "hmat"
comm = "b"
weights = "auto"
)");
  // Make's nodes have no HMAT bandwidth: auto cannot resolve.
  const std::vector<std::string> p =
      ResolveConfigOnMachine(cfg, Make({{0}, {1}}), {}, std::nullopt)
          .Problems();
  ASSERT_EQ(p.size(), 2u) << absl::StrJoin(p, "\n");
  EXPECT_EQ(p[0],
            "/etc/h.toml:1: workload given: weights: node 9 is not an online "
            "memory node; see `hotpage topology`");
  EXPECT_EQ(p[1],
            "/etc/h.toml:6: workload hmat: weights: auto: node 0 has no HMAT "
            "read bandwidth (access0/initiators/read_bandwidth); give the "
            "weights as NODE:WEIGHT,... instead");
  for (const std::string& m : p) {
    EXPECT_FALSE(absl::StrContains(m, "--")) << m;
  }
}

// --self-memory replaces the file's value, and a problem with it names the
// flag.
TEST(MachineCheckTest, TheSelfMemoryFlagReplacesTheFilesValue) {
  const DaemonConfig cfg = Parse(
      "[daemon]\nself_memory = \"7\"\n[[workload]]\nname = \"a\"\npid = 1\n");
  absl::StatusOr<SelfMemoryRequest> local = ParseSelfMemory("local");
  ASSERT_TRUE(local.ok());
  const ConfigOnMachine on =
      ResolveConfigOnMachine(cfg, Make({{0}, {1}}), {}, *local);
  EXPECT_TRUE(on.Problems().empty());
  ASSERT_TRUE(on.self_memory.ok());
  EXPECT_EQ(on.self_memory->mode, kMpolDefault);
  absl::StatusOr<SelfMemoryRequest> three = ParseSelfMemory("3");
  ASSERT_TRUE(three.ok());
  const std::vector<std::string> p =
      ResolveConfigOnMachine(cfg, Make({{0}, {1}}), {}, *three).Problems();
  ASSERT_EQ(p.size(), 1u);
  EXPECT_TRUE(absl::StartsWith(p[0], "--self-memory: node 3")) << p[0];
}

// The rules a member runs with: promote_to resolved, the kernel's floor
// raising a watermark the fractions put below it.
TEST(MachineCheckTest, WorkloadRulesResolvePromoteToAndTheFloor) {
  const DaemonConfig cfg = Parse(R"([[workload]]
name = "cache"
comm = "memcached"
promote_to = "0"
)");
  ASSERT_EQ(cfg.workloads.size(), 1u);
  const Topology t = Make({{0}, {1}});
  NodeFloor floor;
  floor.node = 0;
  floor.bytes = 1 * kGiB;  // above 2% of 4 GiB
  absl::StatusOr<PlacementConfig> rules =
      WorkloadRules(cfg.workloads[0], t, {floor});
  ASSERT_TRUE(rules.ok()) << rules.status();
  EXPECT_EQ(rules->promote_to, std::vector<int>{0});
  const NodeWatermarks wm = WatermarksFor(*rules, t, 0);
  EXPECT_GE(wm.low_bytes, 1 * kGiB);
}

}  // namespace
}  // namespace hotpage
