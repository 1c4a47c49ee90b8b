#include "tools/self_memory.h"

#include <algorithm>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "policy/topology.h"
#include "tools/self_memory_fake.h"

namespace hotpage {
namespace {

using Nodes = std::vector<int>;

constexpr uint64_t kGiB = 1ull << 30;

NodeInfo Node(int id, std::vector<int> cpus, int tier, int package) {
  NodeInfo n;
  n.id = id;
  n.cpus = std::move(cpus);
  n.memory_bytes = 4 * kGiB;
  n.tier = tier;
  n.package = package;
  return n;
}

// Nodes by tier: tiers[r] lists rank r's node ids; node ids are assigned in
// order, the fast tier's with a CPU each.
Topology Make(const std::vector<std::vector<int>>& tiers,
              std::optional<bool> preferred_many = true) {
  Topology t;
  for (size_t r = 0; r < tiers.size(); ++r) {
    t.tiers.push_back(MemoryTier{static_cast<int>(r), tiers[r]});
    for (int id : tiers[r]) {
      t.nodes.push_back(Node(id,
                             r == 0 ? std::vector<int>{id} : std::vector<int>{},
                             static_cast<int>(r), id % 2));
    }
  }
  std::sort(t.nodes.begin(), t.nodes.end(),
            [](const NodeInfo& a, const NodeInfo& b) { return a.id < b.id; });
  t.features.preferred_many = preferred_many;
  return t;
}

SelfMemoryRequest Default() { return SelfMemoryRequest{}; }

SelfMemoryRequest Parsed(const char* text) {
  absl::StatusOr<SelfMemoryRequest> r = ParseSelfMemory(text);
  EXPECT_TRUE(r.ok()) << text << ": " << r.status();
  return r.ok() ? *r : SelfMemoryRequest{};
}

TEST(SelfMemoryTest, ParsesSlowLocalAndNodes) {
  EXPECT_EQ(Parsed("slow").choice, SelfMemoryChoice::kSlow);
  EXPECT_TRUE(Parsed("slow").given);
  EXPECT_EQ(Parsed("local").choice, SelfMemoryChoice::kLocal);
  EXPECT_EQ(Parsed("2").choice, SelfMemoryChoice::kNode);
  EXPECT_EQ(Parsed("2").node, 2);
  EXPECT_EQ(Parsed("1023").node, 1023);
  EXPECT_FALSE(Default().given);
  for (const char* bad : {"", "fast", "Slow", "-1", "+1", " 1", "1 ", "0x1",
                          "1024", "99999", "1,2", "1.0"}) {
    absl::StatusOr<SelfMemoryRequest> r = ParseSelfMemory(bad);
    ASSERT_FALSE(r.ok()) << "'" << bad << "'";
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(std::string(r.status().message()),
                                  "is not slow, local or a node number"))
        << std::string(r.status().message());
  }
  for (const char* text : {"slow", "local", "0", "17"}) {
    EXPECT_EQ(SelfMemoryRequestName(Parsed(text)), text);
  }
}

// DRAM + CXL: the one CXL node, MPOL_PREFERRED (with one node the same as
// preferred-many, and accepted by every kernel).
TEST(SelfMemoryTest, TwoTiersPreferTheSlowNode) {
  absl::StatusOr<SelfMemoryPolicy> p =
      ChooseSelfMemoryPolicy(Default(), Make({{0}, {1}}));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->mode, kMpolPreferred);
  EXPECT_EQ(p->nodes, Nodes({1}));
  EXPECT_EQ(p->why, "the slowest tier");
}

// Two packages, each with DRAM and a CXL node: preferred-many over both
// CXL nodes, so that each thread's pages go to the CXL node nearest it.
TEST(SelfMemoryTest, TwoPackagesWithCxlPreferManyOverTheSlowTier) {
  absl::StatusOr<SelfMemoryPolicy> p =
      ChooseSelfMemoryPolicy(Default(), Make({{0, 1}, {2, 3}}));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->mode, kMpolPreferredMany);
  EXPECT_EQ(p->nodes, Nodes({2, 3}));
  // Two packages and one CXL node (the 2pkg+cxl guest): that node.
  p = ChooseSelfMemoryPolicy(Default(), Make({{0, 1}, {2}}));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->mode, kMpolPreferred);
  EXPECT_EQ(p->nodes, Nodes({2}));
}

// Three tiers: the slowest, not the middle one.
TEST(SelfMemoryTest, ThreeTiersPreferTheSlowest) {
  absl::StatusOr<SelfMemoryPolicy> p =
      ChooseSelfMemoryPolicy(Default(), Make({{0}, {1}, {2, 3}}));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->mode, kMpolPreferredMany);
  EXPECT_EQ(p->nodes, Nodes({2, 3}));
}

// A kernel before 5.15 (or one that could not be asked): MPOL_PREFERRED on
// the slowest tier's lowest node, and the reason says so.
TEST(SelfMemoryTest, WithoutPreferredManyTheFirstSlowNode) {
  for (std::optional<bool> pm :
       {std::optional<bool>(false), std::optional<bool>(std::nullopt)}) {
    absl::StatusOr<SelfMemoryPolicy> p =
        ChooseSelfMemoryPolicy(Default(), Make({{0, 1}, {3, 2}}, pm));
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(p->mode, kMpolPreferred);
    EXPECT_EQ(p->nodes, Nodes({2}));
    EXPECT_TRUE(
        absl::StrContains(p->why, "no MPOL_PREFERRED_MANY for all of 2-3"))
        << p->why;
  }
}

// One tier (one node, or nodes the kernel does not tell apart): nothing.
TEST(SelfMemoryTest, OneTierSetsNothing) {
  for (const Topology& t : {Make({{0}}), Make({{0, 1}})}) {
    absl::StatusOr<SelfMemoryPolicy> p = ChooseSelfMemoryPolicy(Default(), t);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(p->mode, kMpolDefault);
    EXPECT_TRUE(p->nodes.empty());
    FakeSelfMempolicy kernel;
    absl::StatusOr<SelfMemoryReport> r =
        ApplySelfMemoryPolicy(Default(), *p, kernel);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(kernel.calls.empty());
    EXPECT_EQ(r->mode, "default");
    EXPECT_TRUE(absl::StrContains(r->line, "one memory tier")) << r->line;
  }
}

TEST(SelfMemoryTest, LocalSetsNothing) {
  absl::StatusOr<SelfMemoryPolicy> p =
      ChooseSelfMemoryPolicy(Parsed("local"), Make({{0}, {1}}));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->mode, kMpolDefault);
  FakeSelfMempolicy kernel;
  absl::StatusOr<SelfMemoryReport> r =
      ApplySelfMemoryPolicy(Parsed("local"), *p, kernel);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(kernel.calls.empty());
  EXPECT_EQ(r->requested, "local");
  EXPECT_EQ(r->line,
            "hotpage's own memory: first touch, where its threads "
            "run (local)");
}

// A node: preferred there, whatever its tier (the fast one too: asked).
TEST(SelfMemoryTest, ANamedNodeIsPreferred) {
  const Topology t = Make({{0, 1}, {2, 3}});
  for (int node : {0, 3}) {
    SelfMemoryRequest req;
    req.choice = SelfMemoryChoice::kNode;
    req.node = node;
    req.given = true;
    absl::StatusOr<SelfMemoryPolicy> p = ChooseSelfMemoryPolicy(req, t);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(p->mode, kMpolPreferred);
    EXPECT_EQ(p->nodes, Nodes({node}));
  }
}

// A node that is not online, or has no memory: refused, naming the nodes
// that would do.
TEST(SelfMemoryTest, AnInvalidNodeIsRefused) {
  Topology t = Make({{0}, {1}});
  NodeInfo cpu_only = Node(2, {2}, 0, 0);
  cpu_only.memory_bytes = 0;
  cpu_only.tier.reset();
  t.nodes.push_back(cpu_only);
  for (const char* node : {"7", "2"}) {
    absl::StatusOr<SelfMemoryPolicy> p =
        ChooseSelfMemoryPolicy(Parsed(node), t);
    ASSERT_FALSE(p.ok()) << node;
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(p.status().message(),
              absl::StrCat("node ", node,
                           " is not an online node with memory (nodes with "
                           "memory: 0-1)"));
  }
}

TEST(SelfMemoryTest, AppliesAndReports) {
  const SelfMemoryRequest req = Default();
  absl::StatusOr<SelfMemoryPolicy> p =
      ChooseSelfMemoryPolicy(req, Make({{0, 1}, {2, 3}}));
  ASSERT_TRUE(p.ok());
  FakeSelfMempolicy kernel;
  absl::StatusOr<SelfMemoryReport> r = ApplySelfMemoryPolicy(req, *p, kernel);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(kernel.calls.size(), 1u);
  EXPECT_EQ(kernel.calls[0].mode, kMpolPreferredMany);
  EXPECT_EQ(kernel.calls[0].nodes, Nodes({2, 3}));
  EXPECT_EQ(r->requested, "slow");
  EXPECT_EQ(r->mode, "preferred-many");
  EXPECT_EQ(r->nodes, Nodes({2, 3}));
  EXPECT_EQ(r->line,
            "hotpage's own memory: preferred on nodes 2-3 (the slowest tier, "
            "MPOL_PREFERRED_MANY)");
  EXPECT_TRUE(r->warning.empty());
}

// One wording for `hotpage daemon --check` and the start-up line: the
// nodes ("node" or "nodes"), the reason, and MPOL_PREFERRED_MANY for that
// mode; a policy that sets nothing is its reason alone. The start-up line
// (what Apply reports when the policy was set) is the same words.
TEST(SelfMemoryTest, DescribesThePolicyAsTheStartUpLineDoes) {
  struct Case {
    SelfMemoryRequest request;
    Topology topology;
    std::string want;
  };
  const Case cases[] = {
      {Default(), Make({{0}, {1}}), "preferred on node 1 (the slowest tier)"},
      {Default(), Make({{0, 1}, {2, 3}}),
       "preferred on nodes 2-3 (the slowest tier, MPOL_PREFERRED_MANY)"},
      {Default(), Make({{0, 1}, {3, 2}}, false),
       "preferred on node 2 (the slowest tier's first node; this kernel has "
       "no MPOL_PREFERRED_MANY for all of 2-3)"},
      {Parsed("0"), Make({{0}, {1}}),
       "preferred on node 0 (as asked; tier 0 "
       "of 2)"},
      {Default(), Make({{0}}),
       "first touch: one memory tier, no slower memory to prefer"},
      {Parsed("local"), Make({{0}, {1}}),
       "first touch, where its threads run (local)"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<SelfMemoryPolicy> p =
        ChooseSelfMemoryPolicy(c.request, c.topology);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(DescribeSelfMemoryPolicy(*p), c.want);
    FakeSelfMempolicy kernel;
    absl::StatusOr<SelfMemoryReport> r =
        ApplySelfMemoryPolicy(c.request, *p, kernel);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->line, absl::StrCat("hotpage's own memory: ", c.want));
  }
}

// The contract: before any other thread. A second thread is a start-up
// order bug and fails before anything is set.
TEST(SelfMemoryTest, RefusesOnceAnotherThreadRuns) {
  absl::StatusOr<SelfMemoryPolicy> p =
      ChooseSelfMemoryPolicy(Default(), Make({{0}, {1}}));
  ASSERT_TRUE(p.ok());
  FakeSelfMempolicy kernel;
  kernel.threads = 2;
  absl::StatusOr<SelfMemoryReport> r =
      ApplySelfMemoryPolicy(Default(), *p, kernel);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(std::string(r.status().message()),
                                "before any other thread starts"))
      << std::string(r.status().message());
  EXPECT_TRUE(kernel.calls.empty());
  // Unreadable (no /proc): not checked.
  kernel.threads = absl::UnavailableError("no /proc");
  r = ApplySelfMemoryPolicy(Default(), *p, kernel);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(kernel.calls.size(), 1u);
}

// The default keeps a policy hotpage was started with; slow by name
// replaces it.
TEST(SelfMemoryTest, AnInheritedPolicyIsKeptUnlessSlowIsNamed) {
  absl::StatusOr<SelfMemoryPolicy> p =
      ChooseSelfMemoryPolicy(Default(), Make({{0}, {1}}));
  ASSERT_TRUE(p.ok());
  FakeSelfMempolicy kernel;
  kernel.current_mode = 2;  // MPOL_BIND, e.g. numactl --membind
  absl::StatusOr<SelfMemoryReport> r =
      ApplySelfMemoryPolicy(Default(), *p, kernel);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(kernel.calls.empty());
  EXPECT_EQ(r->mode, "inherited");
  EXPECT_TRUE(
      absl::StrContains(r->line, "the policy hotpage was started with (bind)"))
      << r->line;
  r = ApplySelfMemoryPolicy(Parsed("slow"), *p, kernel);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(kernel.calls.size(), 1u);
  EXPECT_EQ(r->mode, "preferred");
}

// set_mempolicy refused (a cpuset without the slow node, seccomp): the
// default warns and goes on with first touch; a request by name fails.
TEST(SelfMemoryTest, ARefusedSetWarnsForTheDefaultAndFailsWhenAsked) {
  absl::StatusOr<SelfMemoryPolicy> p =
      ChooseSelfMemoryPolicy(Default(), Make({{0}, {1}}));
  ASSERT_TRUE(p.ok());
  FakeSelfMempolicy kernel;
  kernel.set_error = absl::InvalidArgumentError("set_mempolicy: EINVAL");
  absl::StatusOr<SelfMemoryReport> r =
      ApplySelfMemoryPolicy(Default(), *p, kernel);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->mode, "default");
  EXPECT_TRUE(r->nodes.empty());
  EXPECT_TRUE(absl::StrContains(r->warning,
                                "set_mempolicy(preferred on node 1) "
                                "failed: set_mempolicy: EINVAL"))
      << r->warning;
  EXPECT_TRUE(absl::StrContains(r->line, "first touch")) << r->line;
  for (const char* asked : {"slow", "1"}) {
    absl::StatusOr<SelfMemoryPolicy> q =
        ChooseSelfMemoryPolicy(Parsed(asked), Make({{0}, {1}}));
    ASSERT_TRUE(q.ok());
    r = ApplySelfMemoryPolicy(Parsed(asked), *q, kernel);
    ASSERT_FALSE(r.ok()) << asked;
    EXPECT_TRUE(
        absl::StrContains(std::string(r.status().message()),
                          "hotpage's own memory: set_mempolicy(preferred on "
                          "node 1) failed"))
        << std::string(r.status().message());
  }
}

// The live seam on this machine, on a throw-away thread so that the test
// process keeps its policy: what Set writes, CurrentMode reads back.
TEST(SelfMemoryTest, TheLiveSeamRoundTrips) {
  SyscallSelfMempolicy kernel;
  absl::StatusOr<int> threads = kernel.Threads();
  ASSERT_TRUE(threads.ok()) << threads.status();
  EXPECT_GE(*threads, 1);
  std::thread t([&] {
    ASSERT_TRUE(kernel.Set(kMpolPreferred, {0}).ok());
    absl::StatusOr<int> mode = kernel.CurrentMode();
    ASSERT_TRUE(mode.ok()) << mode.status();
    EXPECT_EQ(*mode, kMpolPreferred);
    EXPECT_FALSE(kernel.Set(kMpolPreferred, {kMaxSelfMemoryNode + 1}).ok());
    ASSERT_TRUE(kernel.Set(kMpolDefault, {}).ok());
    mode = kernel.CurrentMode();
    ASSERT_TRUE(mode.ok());
    EXPECT_EQ(*mode, kMpolDefault);
  });
  t.join();
}

}  // namespace
}  // namespace hotpage
