#include <cstdlib>
#include <filesystem>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "policy/topology.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {
namespace {

std::string RunfilesDir() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* ws = std::getenv("TEST_WORKSPACE");
  if (srcdir == nullptr || ws == nullptr) return "";
  return std::string(srcdir) + "/" + ws;
}

// Every field TopologyToJson writes, compared one by one (the JSON text is
// compared too, but a field both sides dropped would not show there).
void ExpectSameTopology(const Topology& a, const Topology& b) {
  EXPECT_EQ(a.root, b.root);
  ASSERT_EQ(a.nodes.size(), b.nodes.size());
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const NodeInfo& x = a.nodes[i];
    const NodeInfo& y = b.nodes[i];
    SCOPED_TRACE(x.id);
    EXPECT_EQ(x.id, y.id);
    EXPECT_EQ(x.cpus, y.cpus);
    EXPECT_EQ(x.memory_bytes, y.memory_bytes);
    EXPECT_EQ(x.free_bytes, y.free_bytes);
    EXPECT_EQ(x.distance, y.distance);
    EXPECT_EQ(x.tier, y.tier);
    EXPECT_EQ(x.package, y.package);
    EXPECT_EQ(x.package_source, y.package_source);
    EXPECT_EQ(x.hmat.read_latency_ns, y.hmat.read_latency_ns);
    EXPECT_EQ(x.hmat.write_latency_ns, y.hmat.write_latency_ns);
    EXPECT_EQ(x.hmat.read_bandwidth_mbps, y.hmat.read_bandwidth_mbps);
    EXPECT_EQ(x.hmat.write_bandwidth_mbps, y.hmat.write_bandwidth_mbps);
    EXPECT_EQ(x.hmat.initiators, y.hmat.initiators);
    EXPECT_EQ(x.weight, y.weight);
  }
  ASSERT_EQ(a.tiers.size(), b.tiers.size());
  for (size_t i = 0; i < a.tiers.size(); ++i) {
    EXPECT_EQ(a.tiers[i].rank, b.tiers[i].rank);
    EXPECT_EQ(a.tiers[i].nodes, b.tiers[i].nodes);
  }
  EXPECT_EQ(a.tier_source, b.tier_source);
  ASSERT_EQ(a.kernel_tiers.size(), b.kernel_tiers.size());
  for (size_t i = 0; i < a.kernel_tiers.size(); ++i) {
    EXPECT_EQ(a.kernel_tiers[i].id, b.kernel_tiers[i].id);
    EXPECT_EQ(a.kernel_tiers[i].nodes, b.kernel_tiers[i].nodes);
  }
  EXPECT_EQ(a.hmat_disagrees.has_value(), b.hmat_disagrees.has_value());
  ASSERT_EQ(a.packages.size(), b.packages.size());
  for (size_t i = 0; i < a.packages.size(); ++i) {
    EXPECT_EQ(a.packages[i].id, b.packages[i].id);
    EXPECT_EQ(a.packages[i].nodes, b.packages[i].nodes);
  }
  const Features& f = a.features;
  const Features& g = b.features;
  EXPECT_EQ(f.kernel_release, g.kernel_release);
  EXPECT_EQ(f.preferred_many, g.preferred_many);
  EXPECT_EQ(f.weighted_interleave, g.weighted_interleave);
  EXPECT_EQ(f.preferred_many_numa_balancing, g.preferred_many_numa_balancing);
  EXPECT_EQ(f.mempolicy_probe, g.mempolicy_probe);
  EXPECT_EQ(f.weighted_interleave_auto, g.weighted_interleave_auto);
  EXPECT_EQ(f.numa_balancing, g.numa_balancing);
  EXPECT_EQ(f.demotion_enabled, g.demotion_enabled);
  EXPECT_EQ(f.thp, g.thp);
  EXPECT_EQ(f.sampler, g.sampler);
  EXPECT_EQ(f.pebs_mem_loads, g.pebs_mem_loads);
  EXPECT_EQ(f.pebs_mem_loads_aux, g.pebs_mem_loads_aux);
  EXPECT_EQ(f.ibs_op, g.ibs_op);
  EXPECT_EQ(f.perf_event_paranoid, g.perf_event_paranoid);
  EXPECT_EQ(a.warnings, b.warnings);
}

class CapturedTree : public ::testing::TestWithParam<const char*> {};

TEST_P(CapturedTree, RoundTripsThroughJson) {
  const std::string src = RunfilesDir() + "/tests/testdata/sysfs/" + GetParam();
  // Declared data of this test: missing runfiles are a failure, not a skip.
  ASSERT_TRUE(std::filesystem::exists(src)) << "no runfiles at " << src;
  // Runfiles are symlinks, which KernelFs does not follow out of its root.
  const std::string dst =
      std::string(std::getenv("TEST_TMPDIR")) + "/" + GetParam();
  std::filesystem::remove_all(dst);
  std::filesystem::copy(src, dst, std::filesystem::copy_options::recursive);
  absl::StatusOr<KernelFs> fs = KernelFs::Open(dst);
  ASSERT_TRUE(fs.ok()) << fs.status();
  absl::StatusOr<Topology> topo = DiscoverTopology(*fs, nullptr);
  ASSERT_TRUE(topo.ok()) << topo.status();
  ASSERT_GE(topo->tiers.size(), 2u);
  const std::string json = TopologyToJson(*topo);
  absl::StatusOr<Topology> back = TopologyFromJson(json);
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSameTopology(*topo, *back);
  EXPECT_EQ(TopologyToJson(*back), json);
}

INSTANTIATE_TEST_SUITE_P(Trees, CapturedTree,
                         ::testing::Values("dram-cxl", "2pkg-cxl"));

// A topology with the warnings, the HMAT disagreement and every optional
// set and unset survives too.
TEST(TopologyJson, RoundTripsEveryField) {
  Topology t;
  t.root = "/some \"quoted\" root";
  NodeInfo a;
  a.id = 0;
  a.cpus = {0, 1, 2};
  a.memory_bytes = uint64_t{1} << 40;
  a.free_bytes = 12345;
  a.distance = {10, 30};
  a.tier = 0;
  a.package = 3;
  a.package_source = "cpu";
  a.hmat.read_latency_ns = 90;
  a.hmat.read_bandwidth_mbps = 30000;
  a.hmat.initiators = {0};
  a.weight = 7;
  NodeInfo b;
  b.id = 5;
  b.memory_bytes = 4096;
  b.distance = {30, 10};
  b.tier = 1;
  b.package = 3;
  b.package_source = "distance";
  b.hmat.write_latency_ns = 500;
  b.hmat.write_bandwidth_mbps = 1000;
  t.nodes = {a, b};
  t.tiers = {MemoryTier{0, {0}}, MemoryTier{1, {5}}};
  t.tier_source = TierSource::kHmat;
  t.kernel_tiers = {KernelTier{4, {0, 5}}};
  t.hmat_disagrees = TierSource::kKernel;
  t.packages = {Package{3, {0, 5}}};
  t.features.kernel_release = "6.12";
  t.features.preferred_many = true;
  t.features.weighted_interleave = false;
  t.features.mempolicy_probe = "sysfs";
  t.features.numa_balancing = 2;
  t.features.thp = "madvise";
  t.features.sampler = SamplerKind::kIbs;
  t.features.ibs_op = true;
  t.features.perf_event_paranoid = -1;
  t.warnings = {"one", "two\nlines"};
  absl::StatusOr<Topology> back = TopologyFromJson(TopologyToJson(t));
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSameTopology(t, *back);
}

// A hand-written machine: nodes only; tiers come from HMAT, packages from
// the nodes' "package".
TEST(TopologyJson, DerivesTiersForHandWrittenFiles) {
  absl::StatusOr<Topology> t = TopologyFromJson(R"({"nodes": [
    {"id": 0, "cpus": [0, 1], "memory_bytes": 1073741824, "distance": [10, 20],
     "read_latency_ns": 80, "read_bandwidth_mbps": 20480},
    {"id": 1, "memory_bytes": 1073741824, "distance": [20, 10],
     "read_latency_ns": 250, "read_bandwidth_mbps": 8192}]})");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->tier_source, TierSource::kHmat);
  ASSERT_EQ(t->tiers.size(), 2u);
  EXPECT_EQ(t->FastNodes(), std::vector<int>{0});
  EXPECT_EQ(t->nodes[1].tier, 1);
  ASSERT_EQ(t->packages.size(), 1u);
  EXPECT_EQ(t->packages[0].nodes, (std::vector<int>{0, 1}));
}

TEST(TopologyJson, ErrorsNameThePath) {
  struct Case {
    const char* json;
    const char* message;
  } cases[] = {
      {"", "offset"},
      {"[]", "$: expected an object"},
      {"{}", "$.nodes: expected a non-empty array"},
      {R"({"nodes": [{"cpus": []}]})", "$.nodes[0]: missing \"id\""},
      {R"({"nodes": [{"id": 0}, {"id": 0}]})",
       "$.nodes[1].id: node 0 listed twice"},
      {R"({"nodes": [{"id": 70}]})",
       "$.nodes[0].id: expected an integer in [0, 62]"},
      {R"({"nodes": [{"id": 0, "cpus": [1.5]}]})",
       "$.nodes[0].cpus[0]: expected an integer"},
      {R"({"nodes": [{"id": 0, "memory_bytes": -1}]})",
       "$.nodes[0].memory_bytes"},
      {R"({"nodes": [{"id": 0, "distance": [10, 20]}]})",
       "$.nodes[0].distance: has 2 entries for 1 nodes"},
      {R"({"nodes": [{"id": 0, "read_bandwidth_mbps": 0}]})",
       "must be positive"},
      {R"({"nodes": [{"id": 0}], "tiers": [{"rank": 0, "nodes": [3]}]})",
       "$.tiers[0].nodes: node 3 is not in $.nodes"},
      {R"({"nodes": [{"id": 0}], "tiers": [{"rank": 1, "nodes": [0]}]})",
       "$.tiers[0].rank"},
      {R"({"nodes": [{"id": 0}], "tier_source": "magic"})",
       "$.tier_source: unknown tier source"},
      {R"({"nodes": [{"id": 0, "cpus": [0]}, {"id": 1, "cpus": [0]}]})",
       "$.nodes[1].cpus: cpu 0 is on two nodes"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Topology> t = TopologyFromJson(c.json);
    ASSERT_FALSE(t.ok()) << c.json;
    EXPECT_TRUE(absl::StrContains(t.status().message(), c.message))
        << c.json << " -> " << t.status().message();
  }
}

}  // namespace
}  // namespace hotpage
