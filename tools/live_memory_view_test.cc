#include "tools/live_memory_view.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "migrator/fake_page_mover.h"
#include "migrator/migrator.h"
#include "migrator/move_requests.h"
#include "migrator/process_handle.h"
#include "tools/base/clock.h"
#include "tools/base/kernel/fake_tree.h"

namespace hotpage {
namespace {

constexpr uint64_t kChunk = uint64_t{1} << 21;

// The view's huge chunks are FindHugeChunks' (its own tests are in
// tools/base/kernel/huge_chunks_test.cc), and the view swallows errors: no
// chunks known.
TEST(LiveMemoryViewTest, HugeChunksFromSmapsOrNoneOnError) {
  FakeTree tree;
  const uint64_t a = 0x40000000;  // 2 whole chunks, all anon THP
  tree.Write("/proc/9/smaps",
             absl::StrCat(absl::Hex(a), "-", absl::Hex(a + 2 * kChunk),
                          " rw-p 00000000 00:00 0\n",
                          "Anonymous:  4096 kB\nAnonHugePages:  4096 kB\n"));
  auto fs = KernelFs::Open(tree.root());
  ASSERT_TRUE(fs.ok());
  Topology topo;
  LiveMemoryView view(9, nullptr, &*fs, &topo, nullptr);
  EXPECT_EQ(view.HugeChunks(), (std::vector<uint64_t>{a, a + kChunk}));
  LiveMemoryView no_smaps(10, nullptr, &*fs, &topo, nullptr);
  EXPECT_TRUE(no_smaps.HugeChunks().empty());
}

// attach's view answers QueuedMoves from its Migrator: a round's
// promotions and demotions, submitted as cmd_attach.cc submits them
// (AppendMoveRequests), count onto and off their nodes until the migrator
// has done them; with no migrator (a dry run) nothing is queued.
TEST(LiveMemoryViewTest, QueuedMovesAreTheMigratorsQueue) {
  FakeTree tree;
  const pid_t pid = getpid();
  tree.WriteProcStat(pid);
  auto fs = KernelFs::Open(tree.root());
  ASSERT_TRUE(fs.ok());
  absl::StatusOr<ProcessHandle> target = ProcessHandle::Attach(pid, &*fs);
  ASSERT_TRUE(target.ok()) << target.status();
  FakePageMover mover;
  const uint64_t a = 0x40000000;
  mover.AddPages(a, 3, 4096, 1);
  mover.AddPages(a + 0x10000, 1, 4096, 0);
  FakeClock clock(absl::FromUnixSeconds(1000));
  MigratorOptions o;
  o.rate_limit_bytes_per_sec = 0;
  o.cpu_budget = 0;
  Migrator migrator(o, std::move(*target), &mover, &clock);
  Topology topo;
  LiveMemoryView view(pid, &mover, &*fs, &topo, &migrator);
  EXPECT_TRUE(view.QueuedMoves().empty());
  PlacementDecision d;
  d.moves.push_back({a, 3 * 4096, 1, 0, PlacementReason::kPromote});
  d.moves.push_back({a + 0x10000, 4096, 0, 1, PlacementReason::kDemote});
  std::vector<MoveRequest> reqs;
  AppendMoveRequests(d, clock.Now(), &reqs);
  ASSERT_EQ(migrator.Submit(reqs), 4u);
  const std::vector<NodeQueued> q = view.QueuedMoves();
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q[0].node, 0);
  EXPECT_EQ(q[0].in_bytes, 3u * 4096);
  EXPECT_EQ(q[0].out_bytes, 4096u);
  EXPECT_EQ(q[1].node, 1);
  EXPECT_EQ(q[1].in_bytes, 4096u);
  EXPECT_EQ(q[1].out_bytes, 3u * 4096);
  while (migrator.RunOnce().next == MigratorRound::Next::kMore) {
  }
  EXPECT_TRUE(view.QueuedMoves().empty());
  LiveMemoryView dry(pid, &mover, &*fs, &topo, nullptr);
  EXPECT_TRUE(dry.QueuedMoves().empty());
}

// A process with two VMAs: an interleaved heap over nodes 0-1 (100 pages
// on each) and a default-policy anonymous range (50 pages on node 1).
constexpr uint64_t kHeap = 0x40000000;
constexpr uint64_t kAnon = 0x50000000;

std::string Maps(bool split) {
  if (!split) {
    return absl::StrCat(absl::Hex(kHeap), "-", absl::Hex(kHeap + 0x1000000),
                        " rw-p 00000000 00:00 0 [heap]\n", absl::Hex(kAnon),
                        "-", absl::Hex(kAnon + 0x1000000),
                        " rw-p 00000000 00:00 0\n");
  }
  // mbind over the anonymous range's second half splits its VMA.
  return absl::StrCat(absl::Hex(kHeap), "-", absl::Hex(kHeap + 0x1000000),
                      " rw-p 00000000 00:00 0 [heap]\n", absl::Hex(kAnon), "-",
                      absl::Hex(kAnon + 0x800000), " rw-p 00000000 00:00 0\n",
                      absl::Hex(kAnon + 0x800000), "-",
                      absl::Hex(kAnon + 0x1000000), " rw-p 00000000 00:00 0\n");
}

std::string NumaMaps(int heap0, int heap1, int anon1, bool split = false) {
  std::string s = absl::StrCat(
      absl::Hex(kHeap), " interleave:0-1 heap anon=", heap0 + heap1,
      " N0=", heap0, " N1=", heap1, " kernelpagesize_kB=4\n");
  if (!split) {
    absl::StrAppend(&s, absl::Hex(kAnon), " default anon=", anon1,
                    " N1=", anon1, " kernelpagesize_kB=4\n");
  } else {
    absl::StrAppend(&s, absl::Hex(kAnon), " default anon=", anon1,
                    " N1=", anon1, " kernelpagesize_kB=4\n",
                    absl::Hex(kAnon + 0x800000),
                    " bind:1 kernelpagesize_kB=4\n");
  }
  return s;
}

uint64_t PagesOn(const std::vector<NumaMapsRange>& ranges, uint64_t start,
                 int node) {
  for (const NumaMapsRange& r : ranges) {
    if (r.start != start) continue;
    for (const auto& [n, pages] : r.pages_on_node)
      if (n == node) return pages;
  }
  return 0;
}

// numa_maps walks every page table: between reads the view answers from
// the last reading (live_memory_view.h, "Ranges"). Counts the process
// changed inside its VMAs (here: the file, as if faults moved 10 pages)
// are seen within max_age, or once the resident set moved by more than
// rss_change; a new VMA or a split one (mbind over part of a range) at the
// very next call.
TEST(LiveMemoryViewTest,
     NumaMapsIsReadAgainWhenMapsOrTheResidentSetChangeOrAtMaxAge) {
  FakeTree tree;
  tree.Write("/proc/9/maps", Maps(false));
  tree.Write("/proc/9/numa_maps", NumaMaps(100, 100, 50));
  tree.Write("/proc/9/statm", "1000 250 0 1 0 300 0\n");
  auto fs = KernelFs::Open(tree.root());
  ASSERT_TRUE(fs.ok());
  Topology topo;
  FakeClock clock(absl::FromUnixSeconds(1000));
  LiveMemoryView view(9, nullptr, &*fs, &topo, nullptr, RangesRefresh{},
                      &clock);
  std::vector<NumaMapsRange> r = view.Ranges();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[1].end, kAnon + 0x1000000);
  EXPECT_EQ(view.ranges_stats().full_reads, 1u);
  // The counts changed, the layout and the resident set (by 1/25) did not.
  tree.Write("/proc/9/numa_maps", NumaMaps(110, 90, 50));
  tree.Write("/proc/9/statm", "1000 260 0 1 0 300 0\n");
  clock.Advance(absl::Seconds(9));
  r = view.Ranges();
  EXPECT_EQ(view.ranges_stats().full_reads, 1u);
  EXPECT_EQ(view.ranges_stats().cached_reads, 1u);
  EXPECT_EQ(PagesOn(r, kHeap, 0), 100u);  // stale, within max_age
  clock.Advance(absl::Seconds(1));
  r = view.Ranges();
  EXPECT_EQ(view.ranges_stats().full_reads, 2u);
  EXPECT_EQ(PagesOn(r, kHeap, 0), 110u);
  // The resident set grew by more than 1/16 of it: read again at once.
  tree.Write("/proc/9/numa_maps", NumaMaps(110, 90, 70));
  tree.Write("/proc/9/statm", "1000 280 0 1 0 300 0\n");
  r = view.Ranges();
  EXPECT_EQ(view.ranges_stats().full_reads, 3u);
  EXPECT_EQ(PagesOn(r, kAnon, 1), 70u);
  // mbind over half of the anonymous range: its new policy at the next
  // call.
  tree.Write("/proc/9/maps", Maps(true));
  tree.Write("/proc/9/numa_maps", NumaMaps(110, 90, 70, /*split=*/true));
  r = view.Ranges();
  EXPECT_EQ(view.ranges_stats().full_reads, 4u);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[2].start, kAnon + 0x800000);
  EXPECT_EQ(r[2].end, kAnon + 0x1000000);
  EXPECT_EQ(r[2].mode, MempolicyMode::kBind);
  EXPECT_EQ(r[2].nodes, std::vector<int>{1});
  // Unchanged: the reading again; max_age zero reads every call.
  EXPECT_EQ(view.Ranges().size(), 3u);
  EXPECT_EQ(view.ranges_stats().full_reads, 4u);
  LiveMemoryView every(9, nullptr, &*fs, &topo, nullptr,
                       RangesRefresh{.max_age = absl::ZeroDuration()}, &clock);
  every.Ranges();
  every.Ranges();
  EXPECT_EQ(every.ranges_stats().full_reads, 2u);
  // numa_maps unreadable (the process exited): no ranges, and no reading
  // kept.
  tree.Remove("/proc/9/numa_maps");
  tree.Remove("/proc/9/maps");
  EXPECT_TRUE(view.Ranges().empty());
  EXPECT_TRUE(view.Ranges().empty());
}

// Between reads the counts rule I, the untracked sweep and the daemon's
// share read follow the view's migrator: each page it moved is counted off
// its source and onto its target in its range, as numa_maps shows it at
// the next read (here the fake numa_maps is left as it was, so only the
// view's own counting can get the new figures). A log that lost pages
// (moved_log_pages 4, 6 moved) makes the next call read numa_maps.
TEST(LiveMemoryViewTest, CountsBetweenReadsFollowTheMigratorsMoves) {
  FakeTree tree;
  const pid_t pid = getpid();
  tree.WriteProcStat(pid);
  const std::string proc = absl::StrCat("/proc/", pid);
  tree.Write(proc + "/maps", Maps(false));
  // The anonymous range: 50 base pages and a 2 MiB THP (512) on node 1.
  tree.Write(proc + "/numa_maps", NumaMaps(100, 100, 562));
  tree.Write(proc + "/statm", "1000 250 0 1 0 300 0\n");
  auto fs = KernelFs::Open(tree.root());
  ASSERT_TRUE(fs.ok());
  FakePageMover mover;
  mover.AddPages(kHeap, 100, 4096, 0);
  mover.AddPages(kHeap + 100 * 4096, 100, 4096, 1);
  mover.AddPages(kAnon, 50, 4096, 1);
  mover.AddPages(kAnon + 0x200000, 1, 2u << 20, 1);
  FakeClock clock(absl::FromUnixSeconds(1000));
  for (size_t log_pages : {size_t{1024}, size_t{4}}) {
    SCOPED_TRACE(log_pages);
    absl::StatusOr<ProcessHandle> target = ProcessHandle::Attach(pid, &*fs);
    ASSERT_TRUE(target.ok()) << target.status();
    MigratorOptions o;
    o.rate_limit_bytes_per_sec = 0;
    o.cpu_budget = 0;
    o.moved_log_pages = log_pages;
    Migrator migrator(o, std::move(*target), &mover, &clock);
    Topology topo;
    LiveMemoryView view(pid, &mover, &*fs, &topo, &migrator, RangesRefresh{},
                        &clock);
    ASSERT_EQ(view.Ranges().size(), 2u);
    // Two heap pages from 0 to 1, three anonymous pages from 1 to 0, and
    // one 2 MiB request counted as 512 base pages in its range.
    std::vector<MoveRequest> reqs;
    for (int i = 0; i < 2; ++i)
      reqs.push_back({kHeap + i * 4096, 4096, 0, 1, MoveReason::kDemote});
    for (int i = 0; i < 3; ++i)
      reqs.push_back({kAnon + i * 4096, 4096, 1, 0, MoveReason::kPromote});
    ASSERT_EQ(migrator.Submit(reqs), 5u);
    while (migrator.RunOnce().next == MigratorRound::Next::kMore) {
    }
    ASSERT_TRUE(migrator.Submit(
        {kAnon + 0x200000, 2u << 20, 1, 0, MoveReason::kPromote}));
    while (migrator.RunOnce().next == MigratorRound::Next::kMore) {
    }
    const std::vector<NumaMapsRange> r = view.Ranges();
    if (log_pages == 4) {
      EXPECT_EQ(view.ranges_stats().full_reads, 2u);
      EXPECT_EQ(PagesOn(r, kHeap, 0), 100u);  // the file, as it is
    } else {
      EXPECT_EQ(view.ranges_stats().full_reads, 1u);
      EXPECT_EQ(view.ranges_stats().moves_applied, 6u);
      EXPECT_EQ(PagesOn(r, kHeap, 0), 98u);
      EXPECT_EQ(PagesOn(r, kHeap, 1), 102u);
      EXPECT_EQ(PagesOn(r, kAnon, 0), 3u + 512u);  // a new node entry
      EXPECT_EQ(PagesOn(r, kAnon, 1), 47u);
    }
    // Moves back: put back exactly.
    mover.SetNode(kAnon + 0x200000, 1);
    mover.SetNode(kHeap, 0);
    mover.SetNode(kHeap + 4096, 0);
    mover.SetNode(kAnon, 1);
    mover.SetNode(kAnon + 4096, 1);
    mover.SetNode(kAnon + 2 * 4096, 1);
  }
}

}  // namespace
}  // namespace hotpage
