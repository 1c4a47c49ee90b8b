// MigratorPool over FakePageMover and a fake clock: the global rate limit
// is shared by weight among members that have work, and an idle member's
// share goes to the others.

#include "tools/daemon/migrator_pool.h"

#include <unistd.h>

#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "migrator/fake_page_mover.h"
#include "migrator/process_handle.h"
#include "tools/base/clock.h"
#include "tools/base/kernel/fake_tree.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {
namespace {

constexpr uint64_t kBase = 0x7f0000000000;
constexpr size_t kPages = 150000;  // more than 10 s of the budget moves
constexpr double kRate = 40e6;     // bytes per second, for the machine

class MigratorPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_.Write(absl::StrCat("/proc/", getpid(), "/stat"),
                absl::StrCat(getpid(),
                             " (pool test) S 1 100 100 0 -1 4194560 1234 0 0 "
                             "0 5 7 0 0 20 0 1 0 777000 12345678 300 0 0 0 "
                             "0\n"));
    auto fs = KernelFs::Open(tree_.root());
    ASSERT_TRUE(fs.ok());
    fs_.emplace(std::move(*fs));
  }

  // A member's migrator over its own mover, with `pages` promotions queued.
  std::unique_ptr<Migrator> Make(FakePageMover* mover, size_t pages) {
    mover->AddPages(kBase, kPages, kBasePageBytes, 1);
    MigratorOptions o;
    o.queue_capacity = 2 * kPages;
    o.cpu_budget = 0;
    auto h = ProcessHandle::Attach(getpid(), &*fs_);
    EXPECT_TRUE(h.ok()) << h.status();
    auto m = std::make_unique<Migrator>(o, std::move(*h), mover, &clock_);
    std::vector<MoveRequest> reqs(pages);
    for (size_t i = 0; i < pages; ++i) {
      reqs[i].vaddr = kBase + i * kBasePageBytes;
      reqs[i].from_node = 1;
      reqs[i].to_node = 0;
    }
    EXPECT_EQ(m->Submit(reqs), pages);
    return m;
  }

  // Runs the pool for `d` of fake time.
  void RunFor(MigratorPool& pool, absl::Duration d) {
    const absl::Time end = clock_.Now() + d;
    while (clock_.Now() < end) {
      const absl::Duration wait = pool.RunPass();
      clock_.Advance(std::max(wait, absl::Milliseconds(1)));
    }
  }

  FakeTree tree_;
  std::optional<KernelFs> fs_;
  FakeClock clock_;
};

TEST_F(MigratorPoolTest, SaturatedSharesOneToThreeMoveOneToThree) {
  FakePageMover mover_a, mover_b;
  std::unique_ptr<Migrator> a = Make(&mover_a, kPages);
  std::unique_ptr<Migrator> b = Make(&mover_b, kPages);
  MigratorPool pool(kRate, &clock_);
  pool.Add(a.get(), 1);
  pool.Add(b.get(), 3);
  RunFor(pool, absl::Seconds(10));
  const double pa = static_cast<double>(a->Snapshot().promoted_pages);
  const double pb = static_cast<double>(b->Snapshot().promoted_pages);
  // 10 s of 40 MB/s: ~97700 pages in all, plus each bucket's first burst.
  EXPECT_GT(pa + pb, 0.95 * 10 * kRate / 4096);
  EXPECT_LT(pa + pb, 1.10 * 10 * kRate / 4096);
  EXPECT_NEAR(pb / pa, 3.0, 0.3) << pa << " " << pb;
  pool.Remove(a.get());
  pool.Remove(b.get());
  EXPECT_EQ(pool.members(), 0u);
}

TEST_F(MigratorPoolTest, AnIdleWorkloadsShareGoesToTheOther) {
  FakePageMover mover_a, mover_b;
  std::unique_ptr<Migrator> a = Make(&mover_a, kPages);
  std::unique_ptr<Migrator> b = Make(&mover_b, 0);  // nothing to move
  MigratorPool pool(kRate, &clock_);
  pool.Add(a.get(), 1);
  pool.Add(b.get(), 3);
  RunFor(pool, absl::Seconds(10));
  const double pa = static_cast<double>(a->Snapshot().promoted_pages);
  // All of the budget, not a quarter of it.
  EXPECT_GT(pa, 0.95 * 10 * kRate / 4096);
  EXPECT_EQ(b->Snapshot().promoted_pages, 0u);
  pool.Remove(a.get());
  pool.Remove(b.get());
}

// The member's teardown (the daemon's SIGTERM path): Remove returns after
// at most the member's round in progress, even while the pool's thread
// runs passes back to back.
TEST_F(MigratorPoolTest, RemoveDoesNotWaitForTheOthersWork) {
  FakePageMover mover_a, mover_b;
  std::unique_ptr<Migrator> a = Make(&mover_a, kPages);
  std::unique_ptr<Migrator> b = Make(&mover_b, kPages);
  MigratorPool pool(0, &clock_);  // unlimited: every round has more
  pool.Add(a.get(), 1);
  pool.Add(b.get(), 1);
  pool.Start();
  while (a->Snapshot().promoted_pages == 0)
    absl::SleepFor(absl::Milliseconds(1));
  const absl::Time t0 = absl::Now();
  pool.Remove(a.get());
  a->Stop();
  EXPECT_LT(absl::Now() - t0, absl::Seconds(1));
  const uint64_t moved = a->Snapshot().promoted_pages;
  EXPECT_LT(moved, kPages);  // it did not run to the end first
  absl::SleepFor(absl::Milliseconds(20));
  EXPECT_EQ(a->Snapshot().promoted_pages, moved);  // never run again
  pool.Stop();
  pool.Remove(b.get());
}

// The pool's thread CPU (its per-thread clock), of which the part inside
// members' rounds is what their migrators count (in the members'
// cpu_seconds); the rest (own()) is in no member's.
TEST_F(MigratorPoolTest, ThePoolsThreadCpuIsSplitIntoMembersAndItsOwn) {
  FakePageMover mover;
  mover.AddPages(kBase, kPages, kBasePageBytes, 1);
  MigratorOptions o;
  o.queue_capacity = 2 * kPages;
  o.cpu_budget = 0;
  auto h = ProcessHandle::Attach(getpid(), &*fs_);
  ASSERT_TRUE(h.ok()) << h.status();
  Migrator m(o, std::move(*h), &mover, RealClock::Get());
  std::vector<MoveRequest> reqs(kPages);
  for (size_t i = 0; i < kPages; ++i) {
    reqs[i].vaddr = kBase + i * kBasePageBytes;
    reqs[i].from_node = 1;
    reqs[i].to_node = 0;
  }
  ASSERT_EQ(m.Submit(reqs), kPages);
  MigratorPool pool(0, RealClock::Get(), absl::Milliseconds(1));
  EXPECT_EQ(pool.Cpu().thread, absl::ZeroDuration());
  pool.Add(&m, 1);
  pool.Start();
  while (m.Snapshot().promoted_pages < 20000) {
    absl::SleepFor(absl::Milliseconds(2));
  }
  pool.Remove(&m);
  pool.Stop();
  const MigratorPool::CpuTimes c = pool.Cpu();
  const absl::Duration members = m.Snapshot().cpu_time;
  EXPECT_GT(members, absl::ZeroDuration());
  EXPECT_GE(c.in_members, members);
  EXPECT_GE(c.thread, c.in_members);
  EXPECT_EQ(c.own(), c.thread - c.in_members);
}

}  // namespace
}  // namespace hotpage
