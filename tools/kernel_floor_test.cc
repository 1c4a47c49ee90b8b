#include "tools/kernel_floor.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "policy/placement.h"
#include "tools/base/kernel/fake_tree.h"
#include "tools/base/kernel/kernel_fs.h"
#include "tools/daemon/daemon_loop.h"

namespace hotpage {
namespace {

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kPage = 4096;

std::string Zone(int node, const std::string& name, uint64_t min, uint64_t low,
                 uint64_t managed, const std::string& prot) {
  return "Node " + std::to_string(node) + ", zone " + name +
         "\n  pages free     " + std::to_string(managed) +
         "\n        boost    0\n        min      " + std::to_string(min) +
         "\n        low      " + std::to_string(low) + "\n        high     " +
         std::to_string(low + (low - min)) + "\n        managed  " +
         std::to_string(managed) + "\n        protection: (" + prot + ")\n";
}

// The small-dram+cxl guest's zones (tests/vm/topologies; Debian 6.12,
// min_free_kbytes 66 MiB): node 0 512 MiB with the CPUs, DMA and DMA32;
// node 1 CPU-less, 1536 MiB of DMA32.
std::string GuestZoneinfo() {
  const std::string none = "0, 0, 0, 0, 0";
  return Zone(0, "DMA", 128, 160, 3840, "0, 443, 443, 443, 443") +
         Zone(0, "DMA32", 3807, 4758, 115192, none) +
         Zone(0, "Normal", 0, 0, 0, none) +
         Zone(0, "Movable", 32, 32, 0, none) +
         Zone(0, "Device", 0, 0, 0, none) + Zone(1, "DMA", 0, 0, 0, none) +
         Zone(1, "DMA32", 12959, 16198, 386477, none) +
         Zone(1, "Normal", 0, 0, 0, none) +
         Zone(1, "Movable", 32, 32, 0, none) + Zone(1, "Device", 0, 0, 0, none);
}

Topology Guest() {
  Topology t;
  NodeInfo fast;
  fast.id = 0;
  fast.cpus = {0, 1};
  fast.memory_bytes = 512 * kMiB;
  fast.distance = {10, 20};
  fast.tier = 0;
  NodeInfo slow = fast;
  slow.id = 1;
  slow.cpus = {};
  slow.memory_bytes = 1536 * kMiB;
  slow.distance = {20, 10};
  slow.tier = 1;
  t.nodes = {fast, slow};
  t.tiers = {MemoryTier{0, {0}}, MemoryTier{1, {1}}};
  t.packages = {Package{0, {0, 1}}};
  return t;
}

// The guest's zoneinfo read through a fake /proc as attach and the daemon
// read it.
std::vector<NodeFloor> GuestFloors() {
  FakeTree tree;
  tree.Write("/proc/zoneinfo", GuestZoneinfo());
  absl::StatusOr<KernelFs> fs = KernelFs::Open(tree.root());
  EXPECT_TRUE(fs.ok());
  if (!fs.ok()) return {};
  absl::StatusOr<std::vector<NodeFloor>> floors = ReadKernelFloors(*fs);
  EXPECT_TRUE(floors.ok()) << floors.status();
  return floors.ok() ? *floors : std::vector<NodeFloor>{};
}

// On the guests the kernel refused move_pages onto node 0 (ENOMEM) at
// ~18.75 MiB free while the engines' low watermark was 10 MiB: the fast
// tier never read as short (AddNodeFree), only a back-off's `refused`
// flag made it so. With the kernel's floor (20.9 MiB) under the
// watermarks, 15 MiB free is short by itself.
TEST(KernelFloorTest, OnTheGuestsSmallNodeFifteenMiBFreeIsShort) {
  const std::vector<NodeFloor> floors = GuestFloors();
  ASSERT_FALSE(floors.empty());
  const Topology topo = Guest();
  PlacementConfig config;  // what the daemon's members and fast_free use
  const std::vector<std::string> lines =
      ApplyKernelFloors(floors, topo, &config);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_TRUE(absl::StartsWith(lines[0], "node 0: watermarks low 20.9 MiB"))
      << lines[0];
  // Node 1's floor (63.3 MiB of DMA32 low) is above its 2% (30.7 MiB) too.
  EXPECT_TRUE(absl::StartsWith(lines[1], "node 1: watermarks low 63.3 MiB"))
      << lines[1];
  const uint64_t refuse = (128 + 443 + 3807) * kPage;  // 17.1 MiB
  const NodeWatermarks wm = WatermarksFor(config, topo, 0);
  EXPECT_GE(wm.low_bytes, refuse + 3 * kMiB);
  EXPECT_EQ(wm.low_bytes, (160 + 443 + 4758) * kPage);
  EXPECT_EQ(wm.high_bytes - wm.low_bytes,
            static_cast<uint64_t>(512 * kMiB * 0.02));
  FastTierFree f;
  AddNodeFree(15 * kMiB, wm.low_bytes, wm.high_bytes, /*refused=*/false, f);
  EXPECT_GT(f.short_bytes, 0u);
  EXPECT_EQ(f.room_bytes, 0u);
  // The same at the measured refusal level.
  FastTierFree g;
  AddNodeFree(18 * kMiB + 3 * kMiB / 4, wm.low_bytes, wm.high_bytes,
              /*refused=*/false, g);
  EXPECT_GT(g.short_bytes, 0u);
  EXPECT_EQ(WatermarksFor(config, topo, 1).low_bytes, 16198 * kPage);
}

// A big node whose kernel watermarks are small keeps the fractions.
TEST(KernelFloorTest, ABigNodeKeepsItsFractions) {
  const std::vector<NodeFloor> floors = GuestFloors();
  ASSERT_FALSE(floors.empty());
  Topology topo = Guest();
  topo.nodes[0].memory_bytes = 2048 * kMiB;  // 2%: 41 MiB > 20.9 MiB
  topo.nodes[1].memory_bytes = 4096 * kMiB;  // 2%: 82 MiB > 63.3 MiB
  PlacementConfig config;
  EXPECT_TRUE(ApplyKernelFloors(floors, topo, &config).empty());
  EXPECT_TRUE(config.watermarks.empty());
  EXPECT_EQ(WatermarksFor(config, topo, 0).low_bytes,
            static_cast<uint64_t>(2048 * kMiB * 0.02));
}

TEST(KernelFloorTest, WithoutZoneinfoTheFractionsStandAndTheErrorSaysWhy) {
  FakeTree tree;
  tree.Mkdir("/proc");
  absl::StatusOr<KernelFs> fs = KernelFs::Open(tree.root());
  ASSERT_TRUE(fs.ok());
  absl::StatusOr<std::vector<NodeFloor>> floors = ReadKernelFloors(*fs);
  ASSERT_FALSE(floors.ok());
  EXPECT_TRUE(absl::StrContains(floors.status().message(), "zoneinfo"))
      << floors.status();
  tree.Write("/proc/zoneinfo", "Node 0, zone DMA\n");
  floors = ReadKernelFloors(*fs);
  ASSERT_FALSE(floors.ok());
  EXPECT_TRUE(absl::StrContains(floors.status().message(), "zoneinfo"))
      << floors.status();
}

}  // namespace
}  // namespace hotpage
