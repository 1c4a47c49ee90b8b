#include "policy/topology.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tools/base/kernel/fake_tree.h"

namespace hotpage {
namespace {

struct FakeHmat {
  int read_latency, write_latency, read_bw, write_bw;
  std::vector<int> initiators;
};

struct FakeNode {
  int id;
  std::vector<int> cpus;
  std::vector<int> distance;
  std::optional<FakeHmat> hmat;
  int package = 0;            // physical_package_id of its CPUs
  uint64_t mem_kb = 1 << 20;  // 1 GiB
};

// Writes a sysfs tree like the kernel's for `nodes` (all online).
void Build(FakeTree& t, const std::vector<FakeNode>& nodes) {
  std::vector<int> ids;
  for (const FakeNode& n : nodes) ids.push_back(n.id);
  t.Write("/sys/devices/system/node/online",
          absl::StrCat(absl::StrJoin(ids, ","), "\n"));
  t.Write("/sys/devices/system/node/possible",
          absl::StrCat(absl::StrJoin(ids, ","), "\n"));
  for (const FakeNode& n : nodes) {
    std::string dir = absl::StrCat("/sys/devices/system/node/node", n.id);
    t.Write(dir + "/cpulist", absl::StrCat(absl::StrJoin(n.cpus, ","), "\n"));
    t.Write(
        dir + "/meminfo",
        absl::StrCat("Node ", n.id, " MemTotal:       ", n.mem_kb, " kB\nNode ",
                     n.id, " MemFree:        ", n.mem_kb / 2, " kB\nNode ",
                     n.id, " MemUsed:        ", n.mem_kb / 2, " kB\n"));
    t.Write(dir + "/distance",
            absl::StrCat(absl::StrJoin(n.distance, " "), "\n"));
    for (int cpu : n.cpus) {
      t.Write(absl::StrCat("/sys/devices/system/cpu/cpu", cpu,
                           "/topology/physical_package_id"),
              absl::StrCat(n.package, "\n"));
      t.Symlink(absl::StrCat("../../cpu/cpu", cpu),
                absl::StrCat(dir, "/cpu", cpu));
    }
    if (n.hmat) {
      std::string a = dir + "/access0/initiators";
      t.Write(a + "/read_latency", absl::StrCat(n.hmat->read_latency, "\n"));
      t.Write(a + "/write_latency", absl::StrCat(n.hmat->write_latency, "\n"));
      t.Write(a + "/read_bandwidth", absl::StrCat(n.hmat->read_bw, "\n"));
      t.Write(a + "/write_bandwidth", absl::StrCat(n.hmat->write_bw, "\n"));
      for (int i : n.hmat->initiators) {
        t.Symlink(absl::StrCat("../../../node", i),
                  absl::StrCat(a, "/node", i));
      }
    }
  }
}

void KernelTiers(FakeTree& t, const std::map<int, std::string>& tiers) {
  for (auto& [id, list] : tiers) {
    t.Write(absl::StrCat("/sys/devices/virtual/memory_tiering/memory_tier", id,
                         "/nodelist"),
            list + "\n");
  }
}

absl::StatusOr<Topology> Discover(const FakeTree& t) {
  auto fs = KernelFs::Open(t.root());
  if (!fs.ok()) return fs.status();
  return DiscoverTopology(*fs, nullptr);
}

std::vector<std::vector<int>> TierNodes(const Topology& topo) {
  std::vector<std::vector<int>> out;
  for (const MemoryTier& tier : topo.tiers) out.push_back(tier.nodes);
  return out;
}

std::map<int, std::vector<int>> PackageNodes(const Topology& topo) {
  std::map<int, std::vector<int>> out;
  for (const Package& p : topo.packages) out[p.id] = p.nodes;
  return out;
}

using Nodes = std::vector<std::vector<int>>;

// mm/memory-tiers.c, example 1: nodes 0 and 1 are CPU + DRAM, nodes 2 and 3
// are PMEM.
//   node   0    1    2    3
//      0  10   20   30   40
//      1  20   10   40   30
//      2  30   40   10   40
//      3  40   30   40   10
//   memory_tiers0 = 0-1, memory_tiers1 = 2-3
std::vector<FakeNode> KernelExample1() {
  return {{0, {0}, {10, 20, 30, 40}, {}, 0},
          {1, {1}, {20, 10, 40, 30}, {}, 1},
          {2, {}, {30, 40, 10, 40}, {}},
          {3, {}, {40, 30, 40, 10}, {}}};
}

TEST(Topology, KernelExample1FromKernelTiers) {
  FakeTree t;
  Build(t, KernelExample1());
  KernelTiers(t, {{4, "0-1"}, {22, "2-3"}});
  auto topo = Discover(t);
  ASSERT_TRUE(topo.ok()) << topo.status();
  EXPECT_EQ(topo->tier_source, TierSource::kKernel);
  EXPECT_EQ(TierNodes(*topo), (Nodes{{0, 1}, {2, 3}}));
  EXPECT_EQ(topo->FastNodes(), (std::vector<int>{0, 1}));
  // PMEM node 2 is nearest to node 0 (30 < 40), node 3 to node 1.
  EXPECT_EQ(PackageNodes(*topo),
            (std::map<int, std::vector<int>>{{0, {0, 2}}, {1, {1, 3}}}));
  EXPECT_EQ(topo->FindNode(2)->package_source, "distance");
  EXPECT_EQ(topo->Distance(1, 3), 30);
  EXPECT_TRUE(topo->warnings.empty()) << absl::StrJoin(topo->warnings, "\n");
}

TEST(Topology, KernelExample1FromDistanceAlone) {
  FakeTree t;
  Build(t, KernelExample1());
  auto topo = Discover(t);
  ASSERT_TRUE(topo.ok()) << topo.status();
  EXPECT_EQ(topo->tier_source, TierSource::kDistance);
  // Both PMEM nodes are 30 from their nearest CPU node: one slow tier.
  EXPECT_EQ(TierNodes(*topo), (Nodes{{0, 1}, {2, 3}}));
  EXPECT_EQ(topo->FindNode(3)->tier, 1);
}

// Example 2: nodes 0 and 1 are CPU + DRAM, node 2 is a memory-only DRAM node.
//   node   0    1    2
//      0  10   20   30
//      1  20   10   30
//      2  30   30   10
//   memory_tiers0 = 0-2
std::vector<FakeNode> KernelExample2(bool with_hmat) {
  std::vector<FakeNode> n = {{0, {0}, {10, 20, 30}, {}, 0},
                             {1, {1}, {20, 10, 30}, {}, 1},
                             {2, {}, {30, 30, 10}, {}}};
  if (with_hmat) {
    n[0].hmat = FakeHmat{80, 80, 20480, 20480, {0}};
    n[1].hmat = FakeHmat{80, 80, 20480, 20480, {1}};
    n[2].hmat = FakeHmat{80, 80, 20480, 20480, {1}};
  }
  return n;
}

TEST(Topology, KernelExample2OneTierWhenHmatSaysDram) {
  FakeTree t;
  Build(t, KernelExample2(/*with_hmat=*/true));
  KernelTiers(t, {{4, "0-2"}});
  auto topo = Discover(t);
  ASSERT_TRUE(topo.ok()) << topo.status();
  // Kernel and HMAT agree: one tier, as the kernel's example says.
  EXPECT_EQ(topo->tier_source, TierSource::kKernel);
  EXPECT_EQ(TierNodes(*topo), (Nodes{{0, 1, 2}}));
  EXPECT_FALSE(topo->hmat_disagrees.has_value());
  // Equidistant from both CPU nodes: the HMAT initiator (node 1) decides.
  EXPECT_EQ(topo->FindNode(2)->package, 1);
  EXPECT_EQ(topo->FindNode(2)->package_source, "hmat-initiator");
}

TEST(Topology, KernelExample2WithoutHmatFallsBackToDistance) {
  FakeTree t;
  Build(t, KernelExample2(/*with_hmat=*/false));
  KernelTiers(t, {{4, "0-2"}});
  auto topo = Discover(t);
  ASSERT_TRUE(topo.ok()) << topo.status();
  // The documented limit of the distance fallback: a CPU-less node is
  // assumed slower, since nothing in sysfs says it is DRAM.
  EXPECT_EQ(topo->tier_source, TierSource::kDistance);
  EXPECT_EQ(TierNodes(*topo), (Nodes{{0, 1}, {2}}));
  // The kernel's single tier is still reported.
  ASSERT_EQ(topo->kernel_tiers.size(), 1u);
  EXPECT_EQ(topo->kernel_tiers[0].nodes, (std::vector<int>{0, 1, 2}));
  // Equidistant, no HMAT: the lowest node id wins the tie.
  EXPECT_EQ(topo->FindNode(2)->package, 0);
}

// Example 3: node 0 is CPU + DRAM, node 1 is HBM, node 2 is PMEM.
//   node   0    1    2
//      0  10   20   30
//      1  20   10   40
//      2  30   40   10
//   memory_tiers0 = 1, memory_tiers1 = 0, memory_tiers2 = 2
std::vector<FakeNode> KernelExample3(bool with_hmat) {
  std::vector<FakeNode> n = {{0, {0, 1}, {10, 20, 30}, {}},
                             {1, {}, {20, 10, 40}, {}},
                             {2, {}, {30, 40, 10}, {}}};
  if (with_hmat) {
    n[0].hmat = FakeHmat{80, 80, 20480, 20480, {0}};
    n[1].hmat = FakeHmat{60, 60, 102400, 102400, {0}};
    n[2].hmat = FakeHmat{300, 300, 5120, 5120, {0}};
  }
  return n;
}

TEST(Topology, KernelExample3HbmIsFasterThanDram) {
  FakeTree t;
  Build(t, KernelExample3(false));
  KernelTiers(t, {{1, "1"}, {4, "0"}, {10, "2"}});
  auto topo = Discover(t);
  ASSERT_TRUE(topo.ok()) << topo.status();
  EXPECT_EQ(topo->tier_source, TierSource::kKernel);
  EXPECT_EQ(TierNodes(*topo), (Nodes{{1}, {0}, {2}}));
  EXPECT_EQ(topo->FastNodes(), (std::vector<int>{1}));
  EXPECT_EQ(topo->FindNode(0)->tier, 1);
  EXPECT_EQ(PackageNodes(*topo),
            (std::map<int, std::vector<int>>{{0, {0, 1, 2}}}));
}

TEST(Topology, KernelExample3FromHmatAlone) {
  FakeTree t;
  Build(t, KernelExample3(true));
  auto topo = Discover(t);
  ASSERT_TRUE(topo.ok()) << topo.status();
  EXPECT_EQ(topo->tier_source, TierSource::kHmat);
  EXPECT_EQ(TierNodes(*topo), (Nodes{{1}, {0}, {2}}));
  EXPECT_EQ(topo->FindNode(1)->hmat.read_bandwidth_mbps, 102400);
  EXPECT_EQ(topo->FindNode(2)->hmat.initiators, (std::vector<int>{0}));
}

TEST(Topology, AbstractDistanceMatchesTheKernelsTiers) {
  // What Linux 6.12 built from QEMU's HMAT (tests/vm): 80 ns / 20 GB/s is
  // memory_tier4, 250 ns / 8 GB/s memory_tier35, 500 ns / 4 GB/s
  // memory_tier140.
  HmatPerf dram{80, 80, 20480, 20480, {}};
  EXPECT_EQ(AbstractDistance(dram, dram) >> 7, 4);
  EXPECT_EQ(AbstractDistance(HmatPerf{250, 250, 8192, 8192, {}}, dram) >> 7,
            35);
  EXPECT_EQ(AbstractDistance(HmatPerf{500, 500, 4096, 4096, {}}, dram) >> 7,
            140);
  // Bandwidths large enough to overflow the kernel's 32-bit arithmetic
  // before its 2025 fix still rank correctly here.
  HmatPerf fast{100, 100, 400000, 400000, {}};
  HmatPerf cxl{300, 300, 50000, 50000, {}};
  EXPECT_GT(AbstractDistance(cxl, fast), AbstractDistance(fast, fast));
}

TEST(Topology, KernelLumpsEverythingButHmatSeparates) {
  // The real-world failure: every node in memory_tier4 although HMAT shows
  // a much slower CPU-less node. Report both; use HMAT.
  FakeTree t;
  Build(t, {{0, {0, 1}, {10, 20}, FakeHmat{80, 80, 20480, 20480, {0}}},
            {1, {}, {20, 10}, FakeHmat{250, 250, 8192, 8192, {0}}}});
  KernelTiers(t, {{4, "0-1"}});
  auto topo = Discover(t);
  ASSERT_TRUE(topo.ok()) << topo.status();
  EXPECT_EQ(topo->tier_source, TierSource::kHmat);
  EXPECT_EQ(TierNodes(*topo), (Nodes{{0}, {1}}));
  EXPECT_TRUE(topo->hmat_disagrees.has_value());
  ASSERT_EQ(topo->kernel_tiers.size(), 1u);
  EXPECT_EQ(topo->kernel_tiers[0].id, 4);
  ASSERT_EQ(topo->warnings.size(), 1u);
  EXPECT_NE(topo->warnings[0].find("HMAT"), std::string::npos);
  std::string json = TopologyToJson(*topo);
  EXPECT_NE(json.find("\"tier_source\": \"hmat\""), std::string::npos);
  EXPECT_NE(json.find("\"kernel_tiers_disagree_with_hmat\": true"),
            std::string::npos);
  EXPECT_NE(TopologyToTable(*topo).find("disagrees with HMAT"),
            std::string::npos);
}

TEST(Topology, PartialHmatFallsBackToDistance) {
  FakeTree t;
  Build(t, {{0, {0}, {10, 20, 30}, FakeHmat{80, 80, 20480, 20480, {0}}},
            {1, {}, {20, 10, 40}, FakeHmat{250, 250, 8192, 8192, {0}}},
            {2, {}, {30, 40, 10}, {}}});  // no HMAT for node 2
  auto topo = Discover(t);
  ASSERT_TRUE(topo.ok()) << topo.status();
  EXPECT_EQ(topo->tier_source, TierSource::kDistance);
  EXPECT_EQ(TierNodes(*topo), (Nodes{{0}, {1}, {2}}));
}

TEST(Topology, HmatInitiatorBeatsDistanceForPackage) {
  // Node 2 is nearer to node 0 by SLIT, but HMAT names node 1 its initiator.
  FakeTree t;
  Build(t, {{0, {0}, {10, 21, 20}, FakeHmat{80, 80, 20480, 20480, {0}}, 0},
            {1, {1}, {21, 10, 30}, FakeHmat{80, 80, 20480, 20480, {1}}, 1},
            {2, {}, {20, 30, 10}, FakeHmat{200, 200, 10240, 10240, {1}}}});
  KernelTiers(t, {{4, "0-1"}, {22, "2"}});
  auto topo = Discover(t);
  ASSERT_TRUE(topo.ok()) << topo.status();
  EXPECT_EQ(PackageNodes(*topo),
            (std::map<int, std::vector<int>>{{0, {0}}, {1, {1, 2}}}));
  EXPECT_EQ(topo->FindNode(2)->package_source, "hmat-initiator");
}

TEST(Topology, SingleNodeMachine) {
  FakeTree t;
  Build(t, {{0, {0, 1}, {10}, {}}});
  auto topo = Discover(t);
  ASSERT_TRUE(topo.ok()) << topo.status();
  EXPECT_EQ(TierNodes(*topo), (Nodes{{0}}));
  EXPECT_EQ(topo->nodes[0].memory_bytes, (1ull << 20) * 1024);
  EXPECT_EQ(topo->nodes[0].free_bytes, (1ull << 19) * 1024);
  EXPECT_NE(TopologyToTable(*topo).find("only tier"), std::string::npos);
}

TEST(Topology, OfflineNodesAreSkipped) {
  FakeTree t;
  // Node 1 exists (possible) but is offline: no directory, not in rows.
  Build(t, {{0, {0}, {10, 20}, {}}, {2, {}, {20, 10}, {}}});
  t.Write("/sys/devices/system/node/possible", "0-2\n");
  auto topo = Discover(t);
  ASSERT_TRUE(topo.ok()) << topo.status();
  ASSERT_EQ(topo->nodes.size(), 2u);
  EXPECT_EQ(topo->nodes[1].id, 2);
  EXPECT_EQ(topo->Distance(0, 2), 20);
  EXPECT_EQ(TierNodes(*topo), (Nodes{{0}, {2}}));
}

// Every error names the file it is about.
void ExpectErrorNaming(const FakeTree& t, const std::string& path,
                       const std::string& also = "") {
  auto topo = Discover(t);
  ASSERT_FALSE(topo.ok());
  EXPECT_NE(topo.status().message().find(t.root() + path), std::string::npos)
      << topo.status();
  if (!also.empty()) {
    EXPECT_NE(topo.status().message().find(also), std::string::npos)
        << topo.status();
  }
}

TEST(TopologyErrors, MissingOnlineFile) {
  FakeTree t;
  t.Mkdir("/sys");
  ExpectErrorNaming(t, "/sys/devices/system/node/online", "CONFIG_NUMA");
}

TEST(TopologyErrors, GarbageOnlineFile) {
  FakeTree t;
  t.Write("/sys/devices/system/node/online", "zero\n");
  ExpectErrorNaming(t, "/sys/devices/system/node/online", "zero");
}

TEST(TopologyErrors, EmptyOnlineFile) {
  FakeTree t;
  t.Write("/sys/devices/system/node/online", "\n");
  ExpectErrorNaming(t, "/sys/devices/system/node/online",
                    "no online NUMA node");
}

TEST(TopologyErrors, OnlineNodeWithoutDirectory) {
  FakeTree t;
  Build(t, {{0, {0}, {10, 20}, {}}});
  t.Write("/sys/devices/system/node/online", "0-1\n");
  ExpectErrorNaming(t, "/sys/devices/system/node/node1", "does not exist");
}

TEST(TopologyErrors, MissingCpulist) {
  FakeTree t;
  Build(t, {{0, {0}, {10}, {}}});
  t.Remove("/sys/devices/system/node/node0/cpulist");
  ExpectErrorNaming(t, "/sys/devices/system/node/node0/cpulist", "ENOENT");
}

TEST(TopologyErrors, GarbageMeminfo) {
  FakeTree t;
  Build(t, {{0, {0}, {10}, {}}});
  t.Write("/sys/devices/system/node/node0/meminfo", "Node 0 MemTotal: lots\n");
  ExpectErrorNaming(t, "/sys/devices/system/node/node0/meminfo", "MemTotal");
}

TEST(TopologyErrors, DistanceRowOfWrongLength) {
  FakeTree t;
  Build(t, {{0, {0}, {10, 20}, {}}, {1, {}, {20, 10}, {}}});
  t.Write("/sys/devices/system/node/node1/distance", "20\n");
  ExpectErrorNaming(t, "/sys/devices/system/node/node1/distance",
                    "expected 2 distances");
}

TEST(TopologyErrors, BinaryGarbageInDistance) {
  FakeTree t;
  Build(t, {{0, {0}, {10}, {}}});
  t.Write("/sys/devices/system/node/node0/distance",
          std::string("\x01\xff\x00", 3));
  ExpectErrorNaming(t, "/sys/devices/system/node/node0/distance");
}

TEST(TopologyErrors, MalformedOptionalFilesAreWarningsNamingTheFile) {
  FakeTree t;
  Build(t, {{0, {0}, {10, 20}, FakeHmat{80, 80, 20480, 20480, {0}}},
            {1, {}, {20, 10}, FakeHmat{250, 250, 8192, 8192, {0}}}});
  t.Write("/sys/devices/system/node/node1/access0/initiators/read_latency",
          "slow\n");
  t.Write("/sys/kernel/mm/mempolicy/weighted_interleave/node0", "heavy\n");
  t.Write("/sys/kernel/mm/transparent_hugepage/enabled",
          "always madvise never\n");
  t.Write("/sys/devices/virtual/memory_tiering/memory_tier4/nodelist", "0-x\n");
  auto topo = Discover(t);
  ASSERT_TRUE(topo.ok()) << topo.status();
  EXPECT_FALSE(topo->FindNode(1)->hmat.read_latency_ns.has_value());
  EXPECT_FALSE(topo->FindNode(0)->weight.has_value());
  EXPECT_FALSE(topo->features.thp.has_value());
  std::string all = absl::StrJoin(topo->warnings, "\n");
  for (const char* file :
       {"/sys/devices/system/node/node1/access0/initiators/read_latency",
        "/sys/kernel/mm/mempolicy/weighted_interleave/node0",
        "/sys/kernel/mm/transparent_hugepage/enabled",
        "/sys/devices/virtual/memory_tiering/memory_tier4/nodelist"}) {
    EXPECT_NE(all.find(t.root() + file), std::string::npos) << file << "\n"
                                                            << all;
  }
  // Node 1's HMAT is incomplete now, so tiers come from distance.
  EXPECT_EQ(topo->tier_source, TierSource::kDistance);
  // The missing value is null in JSON.
  EXPECT_NE(TopologyToJson(*topo).find("\"read_latency_ns\": null"),
            std::string::npos);
}

TEST(TopologyFeatures, FromSysfsTree) {
  FakeTree t;
  Build(t, {{0, {0, 1}, {10}, {}}});
  t.Write("/proc/sys/kernel/osrelease", "6.12.117+deb12-amd64\n");
  t.Write("/proc/sys/kernel/numa_balancing", "2\n");
  t.Write("/proc/sys/kernel/perf_event_paranoid", "2\n");
  t.Write("/sys/kernel/mm/numa/demotion_enabled", "true\n");
  t.Write("/sys/kernel/mm/transparent_hugepage/enabled",
          "always [madvise] never\n");
  t.Write("/sys/kernel/mm/mempolicy/weighted_interleave/node0", "3\n");
  t.Write("/sys/kernel/mm/mempolicy/weighted_interleave/auto", "true\n");
  t.Write("/sys/bus/event_source/devices/cpu/events/mem-loads",
          "event=0xcd,umask=0x1,ldlat=3\n");
  t.Write("/sys/bus/event_source/devices/cpu/events/mem-loads-aux",
          "event=0x03,umask=0x82\n");
  auto topo = Discover(t);
  ASSERT_TRUE(topo.ok()) << topo.status();
  const Features& f = topo->features;
  EXPECT_EQ(f.kernel_release, "6.12.117+deb12-amd64");
  EXPECT_EQ(f.numa_balancing, 2);
  EXPECT_EQ(f.perf_event_paranoid, 2);
  EXPECT_EQ(f.demotion_enabled, true);
  EXPECT_EQ(f.thp, "madvise");
  EXPECT_EQ(f.weighted_interleave, true);
  EXPECT_EQ(f.weighted_interleave_auto, true);
  EXPECT_EQ(f.preferred_many, true);
  EXPECT_EQ(f.mempolicy_probe, "sysfs");
  EXPECT_EQ(f.sampler, SamplerKind::kPebs);
  EXPECT_TRUE(f.pebs_mem_loads_aux);
  EXPECT_EQ(topo->nodes[0].weight, 3);
  std::string json = TopologyToJson(*topo);
  EXPECT_NE(json.find("\"sampler\": \"pebs\""), std::string::npos);
  EXPECT_NE(json.find("\"weight\": 3"), std::string::npos);
}

// The PMU part comes from the sampler's own probe (sampler/perf/pmu_probe.h):
// mem-loads-aux counts only on the PMU that has mem-loads, as the sampler
// groups the events, so topology cannot report a grouping attach would not
// use.
TEST(TopologyFeatures, PmuAsTheSamplerSeesIt) {
  FakeTree t;
  Build(t, {{0, {0}, {10}, {}}});
  t.Write("/sys/bus/event_source/devices/cpu/type", "4\n");
  t.Write("/sys/bus/event_source/devices/cpu/events/mem-loads",
          "event=0xcd,umask=0x1,ldlat=3\n");
  t.Write("/sys/bus/event_source/devices/cpu_core/type", "8\n");
  t.Write("/sys/bus/event_source/devices/cpu_core/events/mem-loads-aux",
          "event=0x03,umask=0x82\n");
  auto topo = Discover(t);
  ASSERT_TRUE(topo.ok()) << topo.status();
  EXPECT_EQ(topo->features.sampler, SamplerKind::kPebs);
  EXPECT_FALSE(topo->features.pebs_mem_loads_aux);
}

TEST(TopologyFeatures, IbsAndOldKernel) {
  FakeTree t;
  Build(t, {{0, {0}, {10}, {}}});
  t.Write("/proc/sys/kernel/osrelease", "5.10.0-28-amd64\n");
  t.Write("/sys/bus/event_source/devices/ibs_op/type", "11\n");
  auto topo = Discover(t);
  ASSERT_TRUE(topo.ok()) << topo.status();
  EXPECT_EQ(topo->features.sampler, SamplerKind::kIbs);
  EXPECT_EQ(topo->features.preferred_many, false);
  EXPECT_EQ(topo->features.weighted_interleave, false);
  EXPECT_FALSE(topo->features.numa_balancing.has_value());
  EXPECT_FALSE(topo->nodes[0].weight.has_value());
  EXPECT_NE(TopologyToJson(*topo).find("\"weight\": null"), std::string::npos);
}

class FakeProbe : public MempolicyProbe {
 public:
  std::optional<bool> Supports(int mode, unsigned flags, int node) override {
    calls.push_back({mode, flags, node});
    if (mode == kMpolPreferredMany)
      return flags == 0 ? std::optional<bool>(true) : std::nullopt;
    return false;
  }
  struct Call {
    int mode;
    unsigned flags;
    int node;
  };
  std::vector<Call> calls;
};

TEST(TopologyFeatures, ProbeIsAskedOnAMemoryNode) {
  FakeTree t;
  // Node 0 is memoryless: the probe must name node 1.
  std::vector<FakeNode> nodes = {{0, {0}, {10, 20}, {}}, {1, {}, {20, 10}, {}}};
  nodes[0].mem_kb = 0;
  Build(t, nodes);
  t.Write("/sys/kernel/mm/mempolicy/weighted_interleave/node1", "1\n");
  auto fs = KernelFs::Open(t.root());
  FakeProbe probe;
  auto topo = DiscoverTopology(*fs, &probe);
  ASSERT_TRUE(topo.ok()) << topo.status();
  EXPECT_EQ(topo->features.mempolicy_probe, "syscall");
  EXPECT_EQ(topo->features.preferred_many, true);
  // The probe said no, whatever sysfs suggests.
  EXPECT_EQ(topo->features.weighted_interleave, false);
  EXPECT_FALSE(topo->features.preferred_many_numa_balancing.has_value());
  ASSERT_GE(probe.calls.size(), 2u);
  for (const auto& c : probe.calls) EXPECT_EQ(c.node, 1);
  // Memoryless node 0 has no tier.
  EXPECT_FALSE(topo->FindNode(0)->tier.has_value());
  EXPECT_EQ(TierNodes(*topo), (Nodes{{1}}));
}

TEST(TopologyFeatures, LiveProbeAnswersOnThisKernel) {
  SyscallMempolicyProbe probe;
  // MPOL_BIND (2) has been supported forever; mode 99 never.
  EXPECT_EQ(probe.Supports(2, 0, 0), true);
  EXPECT_EQ(probe.Supports(99, 0, 0), false);
}

}  // namespace
}  // namespace hotpage
