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

}  // namespace
}  // namespace hotpage
