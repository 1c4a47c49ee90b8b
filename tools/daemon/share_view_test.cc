#include "tools/daemon/share_view.h"

#include <atomic>
#include <cerrno>
#include <map>
#include <memory>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "migrator/fake_page_mover.h"
#include "migrator/migrator.h"
#include "migrator/process_handle.h"
#include "tools/base/clock.h"
#include "tools/base/kernel/fake_tree.h"
#include "tools/live_memory_view.h"

namespace hotpage {
namespace {

constexpr uint64_t kGiB = 1ull << 30;
constexpr uint64_t kPage = 4096;
constexpr uint64_t kBase = 0x7f0000000000ull;
constexpr uint64_t kSec = 1000000000ull;

// One fast node (0, cpu 0) and one slow node (1), 1 GiB each.
Topology TwoTiers() {
  Topology t;
  NodeInfo fast;
  fast.id = 0;
  fast.cpus = {0};
  fast.memory_bytes = kGiB;
  fast.distance = {10, 20};
  fast.tier = 0;
  NodeInfo slow = fast;
  slow.id = 1;
  slow.cpus = {};
  slow.distance = {20, 10};
  slow.tier = 1;
  t.nodes = {fast, slow};
  t.tiers = {MemoryTier{0, {0}}, MemoryTier{1, {1}}};
  t.packages = {Package{0, {0, 1}}};
  return t;
}

// Pages live where `node` says; numa_maps reports `extra_fast_pages` more
// on the fast node (memory the engine does not track); half the fast node
// is free.
class MapView : public MemoryView {
 public:
  int QueryNodes(absl::Span<const uint64_t> pages,
                 absl::Span<int> status) override {
    for (size_t i = 0; i < pages.size(); ++i) {
      auto it = node.find(pages[i]);
      status[i] = it == node.end() ? -ENOENT : it->second;
    }
    return 0;
  }
  std::vector<NumaMapsRange> Ranges() override {
    NumaMapsRange r;
    r.start = kBase;
    r.end = kBase + (1ull << 32);
    r.anon = true;
    std::map<int, uint64_t> n;
    for (const auto& [addr, nd] : node) ++n[nd];
    n[0] += extra_fast_pages;
    for (const auto& [nd, pages] : n) r.pages_on_node.push_back({nd, pages});
    return {r};
  }
  std::vector<NodeFree> Free() override {
    return {{0, fast_free}, {1, kGiB / 2}};
  }
  std::map<uint64_t, int> node;
  uint64_t extra_fast_pages = 0;
  uint64_t fast_free = kGiB / 2;
};

Sample At(uint64_t vaddr, uint64_t t) {
  Sample s;
  s.vaddr = vaddr;
  s.time_ns = t;
  s.pid = 42;
  s.cpu = 0;
  s.period = 1;
  return s;
}

struct Moves {
  size_t promotions = 0;
  size_t demotions = 0;
};

// 100 hot slow pages and 10 sampled fast pages; one round through a
// FairShareView with `target` (kNoTarget: none).
Moves OneRound(uint64_t target, uint64_t extra_fast_pages,
               uint64_t fast_free = kGiB / 2,
               SampleSource source = SampleSource::kUnknown) {
  const Topology topo = TwoTiers();
  PlacementConfig cfg;
  EngineOptions opt;
  opt.address_space = 42;
  opt.max_table_entries = 1 << 16;
  auto engine = PolicyEngine::Create(topo, cfg, opt);
  EXPECT_TRUE(engine.ok());
  (*engine)->Start(0);
  MapView inner;
  inner.extra_fast_pages = extra_fast_pages;
  inner.fast_free = fast_free;
  std::vector<Sample> samples;
  for (int i = 0; i < 100; ++i) {
    inner.node[kBase + i * kPage] = 1;
    for (int k = 0; k < 8; ++k) samples.push_back(At(kBase + i * kPage, 1));
  }
  for (int i = 100; i < 110; ++i) {
    inner.node[kBase + i * kPage] = 0;
    samples.push_back(At(kBase + i * kPage, 1));
  }
  for (Sample& x : samples) x.source = source;
  (*engine)->Ingest(samples);
  FairShareView view(&inner, &topo, &(*engine)->config());
  view.SetTarget(target);
  EXPECT_EQ(view.HoldsToAShare(), target != FairShareView::kNoTarget);
  const RoundReport r = (*engine)->RunRound(view, kSec);
  Moves out;
  for (const PlannedMove& m : r.decision.moves) {
    (m.reason == PlacementReason::kPromote ? out.promotions : out.demotions)++;
  }
  EXPECT_EQ(view.Fast().read_bytes, (10 + extra_fast_pages) * kPage);
  return out;
}

TEST(FairShareViewTest, NoTargetLeavesTheEngineAlone) {
  const Moves r = OneRound(FairShareView::kNoTarget, 0);
  EXPECT_EQ(r.promotions, 100u);
  EXPECT_EQ(r.demotions, 0u);
}

TEST(FairShareViewTest, PromotionsStopAtTheTarget) {
  // 10 pages on the fast tier already, a target of 50: 40 more. (The
  // engine may also swap its 10 colder fast pages for hotter slow ones:
  // a swap does not change how much fast memory the process holds.)
  const Moves r = OneRound(50 * kPage, 0);
  EXPECT_EQ(r.promotions - r.demotions, 40u);
  EXPECT_GE(r.promotions, 40u);
}

TEST(FairShareViewTest, FarAboveTheTargetDemotes) {
  // 30 MiB on the fast tier, target 0: more than high - low (2% of 1 GiB)
  // above it, so the engine demotes what it tracks there (its 10 sampled
  // fast pages) and promotes nothing.
  const Moves r = OneRound(0, (30ull << 20) / kPage);
  EXPECT_EQ(r.promotions, 0u);
  EXPECT_EQ(r.demotions, 10u);
  // Within the hysteresis: no net change (swaps only).
  const Moves near = OneRound(0, (10ull << 20) / kPage);
  EXPECT_EQ(near.promotions, near.demotions);
  // The same with page-fault samples (a write-fault member): the engine
  // makes no watermark demotion for such a source on its own, but a share
  // is room to give back (MemoryView::HoldsToAShare).
  const Moves faults =
      OneRound(0, (30ull << 20) / kPage, kGiB / 2, SampleSource::kPageFault);
  EXPECT_EQ(faults.promotions, 0u);
  EXPECT_EQ(faults.demotions, 10u);
}

// The fast node below its low watermark (2% of 1 GiB): a process within
// its target is not the one to demote (its view reports the low
// watermark, and no room to promote into); one far above its target
// demotes as before; without a target the engine restores the watermark
// from its own pages (rule 1).
TEST(FairShareViewTest, BelowTheLowWatermarkOnlyThoseAboveTheirTargetDemote) {
  const uint64_t short_free = 5ull << 20;
  const Moves within = OneRound(50 * kPage, 0, short_free);
  // Swaps at most (a swap leaves what the process holds as it was);
  // without the floor its engine demoted its 10 pages and promoted none.
  EXPECT_EQ(within.promotions, within.demotions);
  const Moves above = OneRound(0, (30ull << 20) / kPage, short_free);
  EXPECT_EQ(above.promotions, 0u);
  EXPECT_EQ(above.demotions, 10u);
  const Moves none = OneRound(FairShareView::kNoTarget, 0, short_free);
  EXPECT_EQ(none.promotions, 0u);
  EXPECT_EQ(none.demotions, 10u);
}

// What the process holds now is its last reading plus its migrator's net
// moves onto the fast tier since that reading, not since it started.
TEST(FairShareViewTest, WhatItHoldsNowCountsTheMovesSinceTheLastReading) {
  const Topology topo = TwoTiers();
  const PlacementConfig cfg;
  MapView inner;
  for (int i = 0; i < 10; ++i) inner.node[kBase + i * kPage] = 0;
  FairShareView view(&inner, &topo, &cfg);
  int64_t moved = 0;  // the migrator's net moves onto the fast tier so far
  EXPECT_EQ(view.Fast().moved_since, 0);  // no counter: none
  view.SetFastMoved([&moved] { return moved; });
  moved = 100 * kPage;  // before the reading: in it already
  view.Ranges();
  EXPECT_EQ(view.Fast().read_bytes, 10 * kPage);
  EXPECT_EQ(view.Fast().moved_since, 0);
  moved += 30 * kPage;  // promoted since
  moved -= 5 * kPage;   // demoted since
  EXPECT_EQ(view.Fast().read_bytes, 10 * kPage);
  EXPECT_EQ(view.Fast().moved_since, static_cast<int64_t>(25 * kPage));
  EXPECT_EQ(view.Fast().read_bytes, 10 * kPage);
  // The next reading sees them (numa_maps): counted once.
  for (int i = 10; i < 35; ++i) inner.node[kBase + i * kPage] = 0;
  view.Ranges();
  EXPECT_EQ(view.Fast().read_bytes, 35 * kPage);
  EXPECT_EQ(view.Fast().moved_since, 0);
}

// The daemon's view over the live one, between two numa_maps reads
// (tools/live_memory_view.h): the live view counts its migrator's moves
// into the ranges it returns, and the share view takes the migrator's
// counter at each Ranges(), so a promotion done since a reading is counted
// once in Fast() (read_bytes + moved_since) and in the "mine" its free
// memory is cut by, whether or not numa_maps was read again.
TEST(FairShareViewTest, WhatItHoldsCountsEachMoveOnceBetweenNumaMapsReads) {
  const Topology topo = TwoTiers();
  const PlacementConfig cfg;
  FakeTree tree;
  const pid_t pid = getpid();
  tree.WriteProcStat(pid);
  const std::string proc = absl::StrCat("/proc/", pid);
  tree.Write(proc + "/maps",
             absl::StrCat(absl::Hex(kBase), "-", absl::Hex(kBase + kGiB),
                          " rw-p 00000000 00:00 0\n"));
  tree.Write(proc + "/numa_maps",
             absl::StrCat(absl::Hex(kBase),
                          " default anon=100 N1=100 kernelpagesize_kB=4\n"));
  tree.Write(proc + "/statm", "1000 100 0 1 0 100 0\n");
  tree.Write("/sys/devices/system/node/node0/meminfo",
             "Node 0 MemFree:         524288 kB\n");  // half of it
  absl::StatusOr<KernelFs> fs = KernelFs::Open(tree.root());
  ASSERT_TRUE(fs.ok());
  absl::StatusOr<ProcessHandle> target = ProcessHandle::Attach(pid, &*fs);
  ASSERT_TRUE(target.ok()) << target.status();
  FakePageMover mover;
  mover.AddPages(kBase, 100, kPage, 1);
  FakeClock clock(absl::FromUnixSeconds(1000));
  MigratorOptions o;
  o.rate_limit_bytes_per_sec = 0;
  o.cpu_budget = 0;
  Migrator migrator(o, std::move(*target), &mover, &clock);
  LiveMemoryView live(pid, &mover, &*fs, &topo, &migrator, RangesRefresh{},
                      &clock);
  FairShareView view(&live, &topo, &cfg);
  const std::vector<int> fast = {0};
  view.SetFastMoved([&] {
    const Migrator::MovedBytes b = migrator.MovedBytesOf(fast);
    return static_cast<int64_t>(b.in) - static_cast<int64_t>(b.out);
  });
  view.SetTarget(kGiB / 4);
  view.Ranges();
  EXPECT_EQ(view.Fast().read_bytes, 0u);
  auto promote = [&](int from, int to) {
    std::vector<MoveRequest> reqs;
    for (int i = from; i < to; ++i)
      reqs.push_back({kBase + i * kPage, kPage, 1, 0, MoveReason::kPromote});
    ASSERT_EQ(migrator.Submit(reqs), static_cast<size_t>(to - from));
    while (migrator.RunOnce().next == MigratorRound::Next::kMore) {
    }
  };
  promote(0, 30);
  EXPECT_EQ(view.Fast().read_bytes + view.Fast().moved_since, 30 * kPage);
  // The next round: numa_maps is not read again (same maps, same resident
  // set, 1 s old); the 30 pages are in the reading now, not in the moves.
  clock.Advance(absl::Seconds(1));
  view.Ranges();
  EXPECT_EQ(live.ranges_stats().full_reads, 1u);
  EXPECT_EQ(view.Fast().read_bytes, 30 * kPage);
  EXPECT_EQ(view.Fast().moved_since, 0);
  // Free() cuts the node's room by the 30 pages held: high + target -
  // mine.
  const NodeWatermarks wm = WatermarksFor(cfg, topo, 0);
  uint64_t free0 = 0;
  for (const NodeFree& f : view.Free())
    if (f.node == 0) free0 = f.free_bytes;
  EXPECT_EQ(free0, std::min(kGiB / 2, wm.high_bytes + kGiB / 4 - 30 * kPage));
  promote(30, 40);
  clock.Advance(absl::Seconds(1));
  view.Ranges();
  EXPECT_EQ(view.Fast().read_bytes + view.Fast().moved_since, 40 * kPage);
}

// A member being stopped: the view says Interrupted() and answers its
// placement queries with -EINTR without asking the process's real view.
TEST(FairShareViewTest, AStopInterruptsThePlacementQueries) {
  const Topology topo = TwoTiers();
  const PlacementConfig cfg;
  MapView inner;
  inner.node[kBase] = 1;
  FairShareView view(&inner, &topo, &cfg);
  EXPECT_FALSE(view.Interrupted());  // no flag: never
  std::atomic<bool> stop{false};
  view.SetStopFlag(&stop);
  const uint64_t page = kBase;
  int status = -1;
  EXPECT_FALSE(view.Interrupted());
  EXPECT_EQ(view.QueryNodes({&page, 1}, {&status, 1}), 0);
  EXPECT_EQ(status, 1);
  stop.store(true);
  EXPECT_TRUE(view.Interrupted());
  status = -1;
  EXPECT_EQ(view.QueryNodes({&page, 1}, {&status, 1}), -EINTR);
  EXPECT_EQ(status, -1);
}

}  // namespace
}  // namespace hotpage
