// The engine attach makes for a process: its table sized by the process's
// resident set and grown with it, over a fake /proc.

#include "tools/attach/attach_engine.h"

#include <unistd.h>

#include <memory>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "policy/engine.h"
#include "policy/topology.h"
#include "sampler/sample.h"
#include "tools/base/kernel/fake_tree.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

// One DRAM node with the CPU (4 GiB: a million 4 KiB pages) and a
// CPU-less slower node.
Topology DramCxl() {
  Topology t;
  for (int id : {0, 1}) {
    NodeInfo n;
    n.id = id;
    if (id == 0) n.cpus = {0};
    n.memory_bytes = 4 * kGiB;
    n.distance = id == 0 ? std::vector<int>{10, 20} : std::vector<int>{20, 10};
    n.tier = id;
    n.package = 0;
    t.nodes.push_back(std::move(n));
  }
  t.tiers = {MemoryTier{0, {0}}, MemoryTier{1, {1}}};
  t.packages = {Package{0, {0, 1}}};
  return t;
}

std::string Statm(uint64_t resident_4k) {
  const uint64_t page = static_cast<uint64_t>(getpagesize());
  return absl::StrCat("900000 ", resident_4k * 4096 / page, " 0 0 0 0 0\n");
}

// Hint faults leave the fast tier's victims to the kernel's reclaim where
// it demotes (demotion_enabled true); nowhere else, and no other source.
TEST(AttachEngineTest, HintFaultsLeaveRoomToTheKernelsReclaimWhereItDemotes) {
  FakeTree tree;
  auto fs = KernelFs::Open(tree.root());
  ASSERT_TRUE(fs.ok());
  tree.Write("/proc/77/statm", Statm(20000));
  EXPECT_FALSE(KernelDemotes(*fs));  // absent
  EXPECT_FALSE(
      AttachEngineOptions(*fs, 77, 500, "hintfault").reclaim_makes_room);
  for (const char* off : {"false\n", "0\n", "garbage\n"}) {
    tree.Write("/sys/kernel/mm/numa/demotion_enabled", off);
    EXPECT_FALSE(KernelDemotes(*fs)) << off;
  }
  tree.Write("/sys/kernel/mm/numa/demotion_enabled", "true\n");
  EXPECT_TRUE(KernelDemotes(*fs));
  EXPECT_TRUE(
      AttachEngineOptions(*fs, 77, 500, "hintfault").reclaim_makes_room);
  for (const char* source : {"pagefault", "pebs", "ibs", "damon"}) {
    EXPECT_FALSE(AttachEngineOptions(*fs, 77, 500, source).reclaim_makes_room)
        << source;
  }
}

// The engine follows demotion_enabled as the watchdog reads it while attach
// runs: hint faults switch to and from leaving the room to reclaim; no
// reading changes nothing, nor does any reading for a source that sees the
// fast tier.
TEST(AttachEngineTest, TheEngineFollowsDemotionEnabled) {
  FakeTree tree;
  auto fs = KernelFs::Open(tree.root());
  ASSERT_TRUE(fs.ok());
  tree.Write("/proc/77/statm", Statm(20000));
  const Topology topo = DramCxl();
  for (const char* source : {"hintfault", "pebs"}) {
    SCOPED_TRACE(source);
    const bool hint = std::string(source) == "hintfault";
    absl::StatusOr<std::unique_ptr<PolicyEngine>> engine = PolicyEngine::Create(
        topo, {}, AttachEngineOptions(*fs, 77, 500, source));
    ASSERT_TRUE(engine.ok()) << engine.status();
    PolicyEngine& e = **engine;
    EXPECT_FALSE(e.reclaim_makes_room());  // demotion_enabled absent
    EXPECT_FALSE(FollowKernelDemotion(e, std::nullopt));
    EXPECT_EQ(FollowKernelDemotion(e, true), hint);
    EXPECT_EQ(e.reclaim_makes_room(), hint);
    EXPECT_FALSE(FollowKernelDemotion(e, true));  // already
    EXPECT_FALSE(FollowKernelDemotion(e, std::nullopt));
    EXPECT_EQ(e.reclaim_makes_room(), hint);
    EXPECT_EQ(FollowKernelDemotion(e, false), hint);
    EXPECT_FALSE(e.reclaim_makes_room());
  }
  // KernelDemotes reads the spellings the kernel's store takes.
  for (const char* on : {"true\n", "1\n", "Y\n", "y\n", "on\n"}) {
    tree.Write("/sys/kernel/mm/numa/demotion_enabled", on);
    EXPECT_TRUE(KernelDemotes(*fs)) << on;
  }
}

TEST(AttachEngineTest, OptionsForTheProcessAndItsSource) {
  FakeTree tree;
  auto fs = KernelFs::Open(tree.root());
  ASSERT_TRUE(fs.ok());
  tree.Write("/proc/77/statm", Statm(20000));
  const EngineOptions o = AttachEngineOptions(*fs, 77, 500, "pagefault");
  EXPECT_EQ(o.interval_ns, 500000000u);
  EXPECT_EQ(o.address_space, 77u);
  EXPECT_EQ(o.sample_weight, 1);
  EXPECT_TRUE(o.table_by_footprint);
  EXPECT_EQ(o.footprint_pages, 20000u);
  EXPECT_EQ(AttachEngineOptions(*fs, 77, 500, "hintfault").sample_weight, 8);
  // Hint faults in tiering mode are slow-tier pages only: placed as they
  // arrive (PolicyEngine::PlaceArrivals); other sources see every tier.
  EXPECT_TRUE(AttachEngineOptions(*fs, 77, 500, "hintfault").slow_tier_samples);
  for (const char* source : {"pagefault", "pebs", "ibs", "damon"}) {
    EXPECT_FALSE(AttachEngineOptions(*fs, 77, 500, source).slow_tier_samples)
        << source;
  }
  // Unreadable (the process exited): the engine's minimum table.
  EXPECT_EQ(AttachEngineOptions(*fs, 78, 500, "pebs").footprint_pages, 0u);
  // Pages never sampled are cold only for sources that see every access;
  // hint faults see no fast-tier page and probe them (policy/engine.h).
  EXPECT_FALSE(o.sweep_untracked_fast);
  EXPECT_FALSE(
      AttachEngineOptions(*fs, 77, 500, "pagefault").sweep_untracked_fast);
  EXPECT_TRUE(
      AttachEngineOptions(*fs, 77, 500, "hintfault").sweep_untracked_fast);
  for (const char* source : {"pebs", "ibs", "damon"}) {
    EXPECT_TRUE(AttachEngineOptions(*fs, 77, 500, source).sweep_untracked_fast)
        << source;
  }
  // A daemon member's sampler names its source by its first event
  // (SampleSourceName), as "auto" resolved: loads sampled, every tier.
  for (const SampleSource s : {SampleSource::kPebsLoad, SampleSource::kIbsOp}) {
    EXPECT_TRUE(SourceSeesEveryAccess(SampleSourceName(s)))
        << SampleSourceName(s);
  }
  EXPECT_FALSE(
      SourceSeesEveryAccess(SampleSourceName(SampleSource::kPebsStore)));
  EXPECT_FALSE(
      SourceSeesEveryAccess(SampleSourceName(SampleSource::kPageFault)));
}

// A 20k-page process gets a table for 20k pages, not for the fast tier's
// million; it grows when the process does, and never shrinks.
TEST(AttachEngineTest, TheTableFollowsTheResidentSet) {
  FakeTree tree;
  auto fs = KernelFs::Open(tree.root());
  ASSERT_TRUE(fs.ok());
  tree.Write("/proc/77/statm", Statm(20000));
  const Topology topo = DramCxl();
  EngineOptions by_fast_tier = AttachEngineOptions(*fs, 77, 500, "pagefault");
  by_fast_tier.table_by_footprint = false;
  auto big = PolicyEngine::Create(topo, {}, by_fast_tier);
  ASSERT_TRUE(big.ok()) << big.status();
  auto engine = PolicyEngine::Create(
      topo, {}, AttachEngineOptions(*fs, 77, 500, "pagefault"));
  ASSERT_TRUE(engine.ok()) << engine.status();
  const size_t small = (*engine)->table().capacity();
  EXPECT_GE(small, 20000u);
  EXPECT_LE(small * 16, (*big)->table().capacity());
  std::ostringstream log;
  tree.Write("/proc/77/statm", Statm(200000));
  GrowWithProcess(**engine, *fs, 77, log);
  const size_t grown = (*engine)->table().capacity();
  EXPECT_GE(grown, 200000u);
  tree.Write("/proc/77/statm", Statm(1000));
  GrowWithProcess(**engine, *fs, 77, log);
  EXPECT_EQ((*engine)->table().capacity(), grown);
  tree.Remove("/proc/77/statm");  // the process exited
  GrowWithProcess(**engine, *fs, 77, log);
  EXPECT_EQ((*engine)->table().capacity(), grown);
  EXPECT_EQ(log.str(), "");
}

}  // namespace
}  // namespace hotpage
