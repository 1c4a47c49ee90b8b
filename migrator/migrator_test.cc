// The Migrator over FakePageMover and a fake clock, in synchronous mode
// (RunOnce) unless a test is about the thread: every per-page errno and
// call-level error, retries, ENOMEM back-off, the rate limit and CPU
// budget against the clock, ping-pong holds, the queue bound, pid reuse.

#include "migrator/migrator.h"

#include <unistd.h>

#include <cerrno>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "migrator/fake_page_mover.h"
#include "tools/base/kernel/fake_tree.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {
namespace {

constexpr uint64_t kBase = 0x7f0000000000;
constexpr uint32_t k4K = kBasePageBytes;
constexpr uint32_t k2M = kHugePageBytes;
constexpr uint64_t kStart = 777000;

std::string StatLine(uint64_t start, char state = 'S') {
  return absl::StrCat(getpid(), " (migrator test) ", std::string(1, state),
                      " 1 100 100 0 -1 4194560 1234 0 0 0 5 7 0 0 20 0 1 0 ",
                      start, " 12345678 300 0 0 0 0\n");
}

MoveRequest Promote(uint64_t vaddr, uint32_t bytes = k4K) {
  MoveRequest r;
  r.vaddr = vaddr;
  r.page_bytes = bytes;
  r.from_node = 1;
  r.to_node = 0;
  r.reason = MoveReason::kPromote;
  return r;
}

MoveRequest Demote(uint64_t vaddr, uint32_t bytes = k4K) {
  MoveRequest r = Promote(vaddr, bytes);
  r.from_node = 0;
  r.to_node = 1;
  r.reason = MoveReason::kDemote;
  return r;
}

std::vector<MoveRequest> Promotions(uint64_t base, size_t n,
                                    uint32_t bytes = k4K) {
  std::vector<MoveRequest> v;
  for (size_t i = 0; i < n; ++i) v.push_back(Promote(base + i * bytes, bytes));
  return v;
}

// Options without limits; tests switch on what they test.
MigratorOptions Unlimited() {
  MigratorOptions o;
  o.rate_limit_bytes_per_sec = 0;
  o.cpu_budget = 0;
  return o;
}

class MigratorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteStat(kStart);
    auto fs = KernelFs::Open(tree_.root());
    ASSERT_TRUE(fs.ok());
    fs_.emplace(std::move(*fs));
  }

  void WriteStat(uint64_t start, char state = 'S') {
    tree_.Write(absl::StrCat("/proc/", getpid(), "/stat"),
                StatLine(start, state));
  }

  std::unique_ptr<Migrator> Make(const MigratorOptions& o) {
    auto h = ProcessHandle::Attach(getpid(), &*fs_);
    EXPECT_TRUE(h.ok()) << h.status();
    return std::make_unique<Migrator>(o, std::move(*h), &mover_, &clock_);
  }

  // 1000 pages on node 1 and an unlimited migrator of 10-page calls, but
  // for its CPU budget; each move call costs `per_call` of the thread's CPU.
  std::unique_ptr<Migrator> MakeCpuBound(double budget,
                                         absl::Duration per_call) {
    mover_.AddPages(kBase, 1000, k4K, 1);
    mover_.SetCallHook([this, per_call](FakePageMover::Op op) {
      if (op == FakePageMover::Op::kMove) clock_.AdvanceCpu(per_call);
    });
    MigratorOptions o = Unlimited();
    o.cpu_budget = budget;
    o.batch_pages = 10;
    return Make(o);
  }

  // Runs rounds until the migrator has nothing left (or ended), advancing
  // the fake clock by every wait. Returns the fake time that passed.
  absl::Duration Drain(Migrator& m, int max_rounds = 1000000) {
    const absl::Time t0 = clock_.Now();
    for (int i = 0; i < max_rounds; ++i) {
      MigratorRound r = m.RunOnce();
      if (r.next == MigratorRound::Next::kDone) break;
      if (r.next == MigratorRound::Next::kWaitForWork &&
          r.wait == absl::InfiniteDuration()) {
        break;
      }
      if (r.wait > absl::ZeroDuration()) clock_.Advance(r.wait);
    }
    return clock_.Now() - t0;
  }

  // Every accepted request ended exactly once.
  static void ExpectSettled(const MigratorStats& s) {
    EXPECT_EQ(s.in_flight, 0u) << s.ToString();
    EXPECT_EQ(s.queue_depth, 0u) << s.ToString();
    EXPECT_EQ(s.settled(), s.submitted) << s.ToString();
  }

  FakeTree tree_;
  std::optional<KernelFs> fs_;
  FakePageMover mover_;
  FakeClock clock_;
};

TEST_F(MigratorTest, PromotesEveryPageInBatchesOfOneNode) {
  mover_.AddPages(kBase, 3000, k4K, 1);
  auto m = Make(Unlimited());
  ASSERT_EQ(m->Submit(Promotions(kBase, 3000)), 3000u);
  Drain(*m);
  EXPECT_EQ(mover_.CountOn(0), 3000u);
  const MigratorStats s = m->Snapshot();
  EXPECT_EQ(s.promoted_pages, 3000u);
  EXPECT_EQ(s.promoted_bytes, 3000u * k4K);
  EXPECT_EQ(s.demoted_pages, 0u);
  EXPECT_EQ(s.move_calls, 3u);  // 1024 + 1024 + 952
  EXPECT_EQ(s.query_calls, 3u);
  EXPECT_EQ(s.hot_to_moved.count(), 3000u);
  EXPECT_EQ(s.failed_pages(), 0u);
  ExpectSettled(s);
  for (const auto& call : mover_.calls()) {
    EXPECT_EQ(call.pid, getpid());
    EXPECT_LE(call.pages.size(), 1024u);
  }
}

TEST_F(MigratorTest, DemotionsAndPromotionsCountedApartOneNodePerCall) {
  mover_.AddPages(kBase, 10, k4K, 1);
  mover_.AddPages(kBase + 100 * k4K, 10, k4K, 0);
  auto m = Make(Unlimited());
  std::vector<MoveRequest> reqs;
  for (int i = 0; i < 10; ++i) {
    reqs.push_back(Promote(kBase + i * k4K));
    reqs.push_back(Demote(kBase + (100 + i) * k4K));
  }
  ASSERT_EQ(m->Submit(reqs), 20u);
  Drain(*m);
  const MigratorStats s = m->Snapshot();
  EXPECT_EQ(s.promoted_pages, 10u);
  EXPECT_EQ(s.demoted_pages, 10u);
  EXPECT_EQ(s.demoted_bytes, 10u * k4K);
  EXPECT_EQ(mover_.CountOn(0), 10u);
  EXPECT_EQ(mover_.CountOn(1), 10u);
  for (const auto& call : mover_.calls()) {
    if (call.op != FakePageMover::Op::kMove) continue;
    for (int n : call.nodes) EXPECT_EQ(n, call.nodes[0]);
  }
  ExpectSettled(s);
  // By node: 10 pages onto node 0 and 10 off it; a move between two of
  // the nodes asked about counts both ways.
  const std::vector<int> fast = {0};
  EXPECT_EQ(m->MovedBytesOf(fast).in, 10u * k4K);
  EXPECT_EQ(m->MovedBytesOf(fast).out, 10u * k4K);
  const std::vector<int> both = {0, 1};
  EXPECT_EQ(m->MovedBytesOf(both).in, 20u * k4K);
  EXPECT_EQ(m->MovedBytesOf(both).out, 20u * k4K);
  const std::vector<int> none = {2};
  EXPECT_EQ(m->MovedBytesOf(none).in, 0u);
}

// What is queued and not yet done, by node: promotions count onto their
// target (and off their from_node), a demotion without a from_node off its
// planned_from (AppendMoveRequests sets only that one); nothing once they
// are done.
// The moved-page log (MovedSince): each page moved, with where its query
// found it and where it went, in order; a reader behind by more than the
// ring (moved_log_pages) is told it lost pages, one exactly the ring's
// size behind is not.
TEST_F(MigratorTest, MovedPageLogKeepsTheLastPagesAndSaysWhenSomeWereLost) {
  mover_.AddPages(kBase, 6, k4K, 1);
  MigratorOptions o = Unlimited();
  o.moved_log_pages = 4;
  auto m = Make(o);
  std::vector<MovedPage> out;
  out.reserve(4);
  bool lost = true;
  EXPECT_EQ(m->MovedSince(0, &out, &lost), 0u);
  EXPECT_FALSE(lost);
  EXPECT_TRUE(out.empty());
  std::vector<MoveRequest> reqs;
  for (int i = 0; i < 6; ++i) reqs.push_back(Promote(kBase + i * k4K));
  ASSERT_EQ(m->Submit(reqs), 6u);
  Drain(*m);
  EXPECT_EQ(m->MovedCount(), 6u);
  EXPECT_EQ(m->MovedSince(2, &out, &lost), 6u);
  EXPECT_FALSE(lost);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].vaddr, kBase + 2 * k4K);
  EXPECT_EQ(out[3].vaddr, kBase + 5 * k4K);
  EXPECT_EQ(out[0].from_node, 1);
  EXPECT_EQ(out[0].to_node, 0);
  EXPECT_EQ(out[0].page_bytes, k4K);
  EXPECT_EQ(m->MovedSince(1, &out, &lost), 6u);
  EXPECT_TRUE(lost);
  EXPECT_EQ(m->MovedSince(6, &out, &lost), 6u);
  EXPECT_FALSE(lost);
  EXPECT_TRUE(out.empty());
}

TEST_F(MigratorTest, QueuedBytesByNodeCountWhatIsNotDoneYet) {
  mover_.AddPages(kBase, 10, k4K, 1);
  mover_.AddPages(kBase + 100 * k4K, 4, k4K, 0);
  auto m = Make(Unlimited());
  std::vector<MoveRequest> reqs = Promotions(kBase, 10);
  for (int i = 0; i < 4; ++i) {
    MoveRequest d = Demote(kBase + (100 + i) * k4K);
    d.from_node = -1;
    d.planned_from = 0;
    reqs.push_back(d);
  }
  MoveRequest unknown = Demote(kBase + 104 * k4K);  // from nowhere known
  unknown.from_node = -1;
  reqs.push_back(unknown);
  ASSERT_EQ(m->Submit(reqs), 15u);
  const auto q = m->QueuedBytesByNode();
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q[0].first, 0);
  EXPECT_EQ(q[0].second.in, 10u * k4K);
  EXPECT_EQ(q[0].second.out, 4u * k4K);
  EXPECT_EQ(q[1].first, 1);
  EXPECT_EQ(q[1].second.in, 5u * k4K);
  EXPECT_EQ(q[1].second.out, 10u * k4K);
  Drain(*m);
  EXPECT_TRUE(m->QueuedBytesByNode().empty());
}

// The batch the worker has taken counts too: 600 promotions, a rate limit
// whose bucket holds 2 MiB (512 pages), one round: 512 move, 88 wait in the
// worker's batch with the queue empty, and still count onto node 0.
TEST_F(MigratorTest, QueuedBytesByNodeCountTheBatchTaken) {
  mover_.AddPages(kBase, 600, k4K, 1);
  MigratorOptions o = Unlimited();
  o.rate_limit_bytes_per_sec = 4096;
  o.burst_bytes = 2 << 20;
  auto m = Make(o);
  ASSERT_EQ(m->Submit(Promotions(kBase, 600)), 600u);
  EXPECT_EQ(m->RunOnce().pages_moved, 512u);
  const auto q = m->QueuedBytesByNode();
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q[0].first, 0);
  EXPECT_EQ(q[0].second.in, 88u * k4K);
  EXPECT_EQ(q[1].first, 1);
  EXPECT_EQ(q[1].second.out, 88u * k4K);
}

// Pages waiting for an EBUSY retry count too: they are moves still to
// come (20 ms later, then 40). 10 promotions, 3 busy twice: after the
// first round 7 moved and 3 wait, counted onto node 0 and off node 1, as
// after their second try; once they move, nothing is counted.
TEST_F(MigratorTest, QueuedBytesByNodeCountTheRetriesWaiting) {
  mover_.AddPages(kBase, 10, k4K, 1);
  for (int i = 0; i < 3; ++i) mover_.InjectMoveError(kBase + i * k4K, EBUSY, 2);
  MigratorOptions o = Unlimited();
  o.retry_delay = absl::Milliseconds(20);
  auto m = Make(o);
  ASSERT_EQ(m->Submit(Promotions(kBase, 10)), 10u);
  EXPECT_EQ(m->RunOnce().pages_moved, 7u);
  auto q = m->QueuedBytesByNode();
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q[0].first, 0);
  EXPECT_EQ(q[0].second.in, 3u * k4K);
  EXPECT_EQ(q[1].first, 1);
  EXPECT_EQ(q[1].second.out, 3u * k4K);
  clock_.Advance(absl::Milliseconds(20));
  EXPECT_EQ(m->RunOnce().pages_moved, 0u);  // busy again
  q = m->QueuedBytesByNode();
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q[0].second.in, 3u * k4K);
  clock_.Advance(absl::Milliseconds(40));
  EXPECT_EQ(m->RunOnce().pages_moved, 3u);
  EXPECT_TRUE(m->QueuedBytesByNode().empty());
  EXPECT_EQ(m->Snapshot().retries, 6u);
}

TEST_F(MigratorTest, HugePageNamedOnceMovesWholeAndCharges2MiB) {
  mover_.AddPages(kBase, 4, k2M, 1);
  auto m = Make(Unlimited());
  ASSERT_EQ(m->Submit(Promotions(kBase, 4, k2M)), 4u);
  Drain(*m);
  const MigratorStats s = m->Snapshot();
  EXPECT_EQ(s.promoted_pages, 4u);
  EXPECT_EQ(s.promoted_bytes, 4u * k2M);
  // Every 4 KiB part of each huge page moved with it.
  EXPECT_EQ(mover_.NodeOf(kBase + k2M + 77 * k4K), 0);
  for (const auto& call : mover_.calls()) EXPECT_EQ(call.pages.size(), 4u);
  ExpectSettled(s);
}

TEST_F(MigratorTest, EbusyIsRetriedLaterThenMoves) {
  mover_.AddPages(kBase, 4, k4K, 1);
  mover_.InjectMoveError(kBase + k4K, EBUSY, 2);
  MigratorOptions o = Unlimited();
  o.retry_delay = absl::Milliseconds(20);
  auto m = Make(o);
  ASSERT_EQ(m->Submit(Promotions(kBase, 4)), 4u);
  EXPECT_EQ(m->RunOnce().pages_moved, 3u);
  // Nothing ready: wait for the retry, 20 ms.
  MigratorRound r = m->RunOnce();
  EXPECT_EQ(r.next, MigratorRound::Next::kWaitForWork);
  EXPECT_EQ(r.wait, absl::Milliseconds(20));
  clock_.Advance(r.wait);
  EXPECT_EQ(m->RunOnce().pages_moved, 0u);  // busy again
  r = m->RunOnce();
  EXPECT_EQ(r.wait, absl::Milliseconds(40));  // doubled
  clock_.Advance(r.wait);
  EXPECT_EQ(m->RunOnce().pages_moved, 1u);
  const MigratorStats s = m->Snapshot();
  EXPECT_EQ(s.promoted_pages, 4u);
  EXPECT_EQ(s.retries, 2u);
  EXPECT_EQ(s.retries_exhausted, 0u);
  EXPECT_EQ(s.failed_pages(), 0u);
  ExpectSettled(s);
}

TEST_F(MigratorTest, EbusyGivesUpAfterMaxRetries) {
  mover_.AddPages(kBase, 2, k4K, 1);
  mover_.InjectMoveError(kBase, EBUSY);  // for ever
  MigratorOptions o = Unlimited();
  o.max_retries = 3;
  auto m = Make(o);
  ASSERT_EQ(m->Submit(Promotions(kBase, 2)), 2u);
  Drain(*m);
  const MigratorStats s = m->Snapshot();
  EXPECT_EQ(s.promoted_pages, 1u);
  EXPECT_EQ(s.retries, 3u);
  EXPECT_EQ(s.retries_exhausted, 1u);
  EXPECT_EQ(s.failed(EBUSY), 1u);
  EXPECT_EQ(mover_.move_calls(), 4u);  // first try + 3 retries
  ExpectSettled(s);
}

TEST_F(MigratorTest, RetryListIsBounded) {
  mover_.AddPages(kBase, 10, k4K, 1);
  for (int i = 0; i < 10; ++i) mover_.InjectMoveError(kBase + i * k4K, EBUSY);
  MigratorOptions o = Unlimited();
  o.retry_capacity = 4;
  o.max_retries = 1;
  auto m = Make(o);
  ASSERT_EQ(m->Submit(Promotions(kBase, 10)), 10u);
  Drain(*m);
  const MigratorStats s = m->Snapshot();
  EXPECT_EQ(s.dropped_retry_full, 6u);
  EXPECT_EQ(s.retries, 4u);
  EXPECT_EQ(s.failed(EBUSY), 10u);
  ExpectSettled(s);
}

TEST_F(MigratorTest, PartialGroupIsRetriedAndCountedOnce) {
  mover_.AddPages(kBase, 100, k4K, 1);
  mover_.InjectPartialGroup(10);
  auto m = Make(Unlimited());
  ASSERT_EQ(m->Submit(Promotions(kBase, 100)), 100u);
  Drain(*m);
  const MigratorStats s = m->Snapshot();
  EXPECT_EQ(mover_.CountOn(0), 100u);
  // The 10 the kernel moved before giving up are found on node 0 by the
  // retry's query and counted as moved, not as "already there".
  EXPECT_EQ(s.promoted_pages, 100u);
  EXPECT_EQ(s.already_on_target, 0u);
  EXPECT_EQ(s.retries, 100u);
  ExpectSettled(s);
}

TEST_F(MigratorTest, EnomemBacksOffTheNodeUntilCleared) {
  mover_.AddPages(kBase, 8, k4K, 1);
  mover_.AddPages(kBase + 100 * k4K, 2, k4K, 0);
  mover_.SetNodeFull(0, true);
  MigratorOptions o = Unlimited();
  o.enomem_backoff = absl::ZeroDuration();  // until cleared
  o.batch_pages = 4;
  auto m = Make(o);
  ASSERT_EQ(m->Submit(Promotions(kBase, 8)), 8u);
  Drain(*m);
  MigratorStats s = m->Snapshot();
  // The first call met ENOMEM; the next four were not even tried.
  EXPECT_EQ(s.failed(ENOMEM), 4u);
  EXPECT_EQ(s.skipped_node_backoff, 4u);
  EXPECT_EQ(mover_.move_calls(), 1u);
  EXPECT_TRUE(m->IsNodeBackedOff(0));
  EXPECT_EQ(m->BackedOffNodes(), std::vector<int>{0});
  // Submissions to node 0 are refused; demotions elsewhere go on.
  EXPECT_FALSE(m->Submit(Promote(kBase)));
  EXPECT_TRUE(m->Submit(Demote(kBase + 100 * k4K)));
  clock_.Advance(absl::Hours(1));
  Drain(*m);
  s = m->Snapshot();
  EXPECT_EQ(s.dropped_node_backoff, 1u);
  EXPECT_EQ(s.demoted_pages, 1u);
  EXPECT_TRUE(m->IsNodeBackedOff(0));  // no expiry configured
  // Free memory rose: the caller clears the back-off.
  mover_.SetNodeFull(0, false);
  m->ClearNodeBackoff(0);
  EXPECT_FALSE(m->IsNodeBackedOff(0));
  ASSERT_EQ(m->Submit(Promotions(kBase, 8)), 8u);
  Drain(*m);
  s = m->Snapshot();
  EXPECT_EQ(s.promoted_pages, 8u);
  ExpectSettled(s);
}

TEST_F(MigratorTest, EnomemBackoffExpires) {
  mover_.AddPages(kBase, 2, k4K, 1);
  mover_.SetNodeFull(0, true, /*call_level=*/true);
  MigratorOptions o = Unlimited();
  o.enomem_backoff_first = absl::Seconds(10);
  o.enomem_backoff = absl::Seconds(10);
  auto m = Make(o);
  ASSERT_TRUE(m->Submit(Promote(kBase)));
  Drain(*m);
  MigratorStats s = m->Snapshot();
  EXPECT_EQ(s.call_errors_by_errno[ENOMEM], 1u);
  EXPECT_EQ(s.failed(ENOMEM), 1u);
  EXPECT_TRUE(m->IsNodeBackedOff(0));
  clock_.Advance(absl::Seconds(9));
  EXPECT_TRUE(m->IsNodeBackedOff(0));
  clock_.Advance(absl::Seconds(1));
  EXPECT_FALSE(m->IsNodeBackedOff(0));
  mover_.SetNodeFull(0, false);
  ASSERT_TRUE(m->Submit(Promote(kBase + k4K)));
  Drain(*m);
  EXPECT_EQ(m->Snapshot().promoted_pages, 1u);
}

TEST_F(MigratorTest, EnomemBackoffStartsShortAndDoublesInARow) {
  mover_.AddPages(kBase, 8, k4K, 1);
  mover_.SetNodeFull(0, true, /*call_level=*/true);
  MigratorOptions o = Unlimited();
  o.enomem_backoff_first = absl::Seconds(1);
  o.enomem_backoff = absl::Seconds(10);
  auto m = Make(o);
  // The node keeps refusing: back-offs of 1, 2, 4, 8, then 10 s.
  const absl::Duration lengths[] = {absl::Seconds(1),  absl::Seconds(2),
                                    absl::Seconds(4),  absl::Seconds(8),
                                    absl::Seconds(10), absl::Seconds(10)};
  uint64_t vaddr = kBase;
  for (absl::Duration length : lengths) {
    ASSERT_TRUE(m->Submit(Promote(vaddr)));
    vaddr += k4K;
    Drain(*m);
    ASSERT_TRUE(m->IsNodeBackedOff(0));
    clock_.Advance(length - absl::Milliseconds(1));
    EXPECT_TRUE(m->IsNodeBackedOff(0)) << length;
    clock_.Advance(absl::Milliseconds(1));
    EXPECT_FALSE(m->IsNodeBackedOff(0)) << length;
  }
  EXPECT_EQ(m->Snapshot().call_errors_by_errno[ENOMEM], 6u);
  // A page moved to the node: the next ENOMEM is a first one again.
  mover_.SetNodeFull(0, false);
  ASSERT_TRUE(m->Submit(Promote(vaddr)));
  vaddr += k4K;
  Drain(*m);
  EXPECT_EQ(m->Snapshot().promoted_pages, 1u);
  mover_.SetNodeFull(0, true, /*call_level=*/true);
  ASSERT_TRUE(m->Submit(Promote(vaddr)));
  vaddr += k4K;
  Drain(*m);
  clock_.Advance(absl::Seconds(1));
  EXPECT_FALSE(m->IsNodeBackedOff(0));
  // So is one that comes long (enomem_backoff or more) after the last
  // back-off ended, even with nothing moved between.
  ASSERT_TRUE(m->Submit(Promote(vaddr)));
  vaddr += k4K;
  Drain(*m);
  clock_.Advance(absl::Seconds(2));  // a second back-off in a row: 2 s
  EXPECT_FALSE(m->IsNodeBackedOff(0));
  clock_.Advance(absl::Seconds(10));
  ASSERT_TRUE(m->Submit(Promote(vaddr)));
  Drain(*m);
  clock_.Advance(absl::Seconds(1));
  EXPECT_FALSE(m->IsNodeBackedOff(0));
}

TEST_F(MigratorTest, FaultAndNotPresentPagesAreDropped) {
  mover_.AddPages(kBase, 2, k4K, 1);
  mover_.AddPages(kBase + 2 * k4K, 1, k4K, -ENOENT);  // never touched
  mover_.AddPages(kBase + 3 * k4K, 2, k4K, 1);
  // Unmapped between query and move, and swapped out between them.
  mover_.InjectMoveError(kBase + 3 * k4K, EFAULT);
  mover_.InjectMoveError(kBase + 4 * k4K, ENOENT);
  auto m = Make(Unlimited());
  std::vector<MoveRequest> reqs = Promotions(kBase, 5);
  reqs.push_back(Promote(kBase + 1000 * k4K));  // never mapped
  ASSERT_EQ(m->Submit(reqs), 6u);
  Drain(*m);
  const MigratorStats s = m->Snapshot();
  EXPECT_EQ(s.promoted_pages, 2u);
  EXPECT_EQ(s.failed(ENOENT), 2u);
  EXPECT_EQ(s.failed(EFAULT), 2u);
  EXPECT_EQ(s.retries, 0u);
  // The query weeded out two: only three were named in the move.
  ASSERT_EQ(mover_.move_calls(), 1u);
  EXPECT_EQ(mover_.calls().back().pages.size(), 4u);
  ExpectSettled(s);
}

TEST_F(MigratorTest, SharedPagesAreSkippedAndCounted) {
  mover_.AddPages(kBase, 3, k4K, 1);
  mover_.InjectMoveError(kBase + k4K, EACCES);
  auto m = Make(Unlimited());
  ASSERT_EQ(m->Submit(Promotions(kBase, 3)), 3u);
  Drain(*m);
  const MigratorStats s = m->Snapshot();
  EXPECT_EQ(s.promoted_pages, 2u);
  EXPECT_EQ(s.shared_skipped, 1u);
  EXPECT_EQ(s.failed(EACCES), 1u);
  EXPECT_EQ(s.retries, 0u);
  ExpectSettled(s);
  // The shared page is held, so the policy does not plan it again (a daemon
  // member's swaps picked the same four shared victims every round, and
  // each round's promotions went through while their demotions failed);
  // it is no ping-pong, and the hold ends like one.
  EXPECT_TRUE(m->IsHeld(kBase + k4K));
  EXPECT_FALSE(m->IsHeld(kBase));
  EXPECT_EQ(s.pingpong_pages, 0u);
  EXPECT_EQ(s.held_pages_now, 1u);
  clock_.Advance(MigratorOptions().pingpong.hold);
  EXPECT_FALSE(m->IsHeld(kBase + k4K));
}

TEST_F(MigratorTest, StaleAndAlreadyPlacedNeedNoMove) {
  mover_.AddPages(kBase, 1, k4K, 0);            // already on the target
  mover_.AddPages(kBase + k4K, 1, k4K, 2);      // moved elsewhere meanwhile
  mover_.AddPages(kBase + 2 * k4K, 1, k4K, 2);  // from_node = -1: any
  auto m = Make(Unlimited());
  MoveRequest any = Promote(kBase + 2 * k4K);
  any.from_node = -1;
  ASSERT_EQ(m->Submit({Promote(kBase), Promote(kBase + k4K), any}), 3u);
  Drain(*m);
  const MigratorStats s = m->Snapshot();
  EXPECT_EQ(s.already_on_target, 1u);
  EXPECT_EQ(s.skipped_stale, 1u);
  EXPECT_EQ(s.promoted_pages, 1u);
  ASSERT_EQ(mover_.move_calls(), 1u);
  EXPECT_EQ(mover_.calls().back().pages,
            std::vector<uint64_t>{kBase + 2 * k4K});
  ExpectSettled(s);
}

// A later policy round planned pages again while the first requests were
// still queued. Taken in one batch, the older request for each page is
// dropped and counted (in one move_pages call the kernel would answer the
// second -EBUSY, the page being isolated for the first: a retry for
// nothing); the page moves and counts once. The newest plan wins (here a
// demotion of a page first planned for promotion).
TEST_F(MigratorTest, APagePlannedTwiceMovesAndCountsOnce) {
  mover_.AddPages(kBase, 4, k4K, 1);
  mover_.AddPages(kBase + 8 * k4K, 1, k4K, 0);
  auto m = Make(Unlimited());
  ASSERT_EQ(m->Submit(Promotions(kBase, 4)), 4u);
  ASSERT_EQ(m->Submit({Promote(kBase), Promote(kBase + k4K),
                       Promote(kBase + 8 * k4K), Demote(kBase + 8 * k4K)}),
            4u);
  Drain(*m);
  const MigratorStats s = m->Snapshot();
  EXPECT_EQ(s.promoted_pages, 4u) << s.ToString();
  EXPECT_EQ(s.demoted_pages, 1u) << s.ToString();
  EXPECT_EQ(s.skipped_duplicate, 3u) << s.ToString();
  EXPECT_EQ(mover_.NodeOf(kBase + 8 * k4K), 1);
  ExpectSettled(s);
}

TEST_F(MigratorTest, TargetGoneOnMoveEndsCleanly) {
  mover_.AddPages(kBase, 3000, k4K, 1);
  mover_.InjectCallError(FakePageMover::Op::kMove, ESRCH);
  auto m = Make(Unlimited());
  ASSERT_EQ(m->Submit(Promotions(kBase, 3000)), 3000u);
  Drain(*m);
  EXPECT_EQ(m->state(), MigratorState::kTargetExited);
  EXPECT_TRUE(m->status().ok()) << m->status();
  MigratorStats s = m->Snapshot();
  EXPECT_EQ(s.state, MigratorState::kTargetExited);
  EXPECT_EQ(s.abandoned, 3000u);
  EXPECT_EQ(s.call_errors_by_errno[ESRCH], 1u);
  EXPECT_EQ(s.failed_pages(), 0u);
  ExpectSettled(s);
  // Nothing more is accepted or run.
  EXPECT_FALSE(m->Submit(Promote(kBase)));
  EXPECT_EQ(m->Snapshot().dropped_not_running, 1u);
  EXPECT_EQ(m->RunOnce().next, MigratorRound::Next::kDone);
  EXPECT_EQ(mover_.move_calls(), 1u);
}

TEST_F(MigratorTest, TargetGoneOnQueryEndsCleanly) {
  mover_.AddPages(kBase, 10, k4K, 1);
  mover_.InjectCallError(FakePageMover::Op::kQuery, ESRCH);
  auto m = Make(Unlimited());
  ASSERT_EQ(m->Submit(Promotions(kBase, 10)), 10u);
  Drain(*m);
  EXPECT_EQ(m->state(), MigratorState::kTargetExited);
  EXPECT_EQ(mover_.move_calls(), 0u);
  ExpectSettled(m->Snapshot());
}

TEST_F(MigratorTest, ZombieTargetEndsBeforeAnyCall) {
  mover_.AddPages(kBase, 10, k4K, 1);
  auto m = Make(Unlimited());
  WriteStat(kStart, 'Z');
  ASSERT_EQ(m->Submit(Promotions(kBase, 10)), 10u);
  Drain(*m);
  EXPECT_EQ(m->state(), MigratorState::kTargetExited);
  EXPECT_TRUE(mover_.calls().empty());
}

TEST_F(MigratorTest, EpermFailsWithAnActionableMessage) {
  mover_.AddPages(kBase, 10, k4K, 1);
  mover_.InjectCallError(FakePageMover::Op::kQuery, EPERM);
  auto m = Make(Unlimited());
  ASSERT_EQ(m->Submit(Promotions(kBase, 10)), 10u);
  Drain(*m);
  EXPECT_EQ(m->state(), MigratorState::kFailed);
  EXPECT_EQ(m->status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(m->status().message().find("CAP_SYS_NICE"), absl::string_view::npos)
      << m->status();
  EXPECT_EQ(mover_.move_calls(), 0u);
  ExpectSettled(m->Snapshot());
}

TEST_F(MigratorTest, EpermOnMoveFails) {
  mover_.AddPages(kBase, 10, k4K, 1);
  mover_.InjectCallError(FakePageMover::Op::kMove, EPERM);
  auto m = Make(Unlimited());
  ASSERT_EQ(m->Submit(Promotions(kBase, 10)), 10u);
  Drain(*m);
  EXPECT_EQ(m->state(), MigratorState::kFailed);
  EXPECT_EQ(m->status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(mover_.CountOn(1), 10u);
}

TEST_F(MigratorTest, OtherCallErrorsDropTheBatchAndGoOn) {
  mover_.AddPages(kBase, 8, k4K, 1);
  mover_.InjectCallError(FakePageMover::Op::kMove, ENODEV);
  MigratorOptions o = Unlimited();
  o.batch_pages = 4;
  auto m = Make(o);
  ASSERT_EQ(m->Submit(Promotions(kBase, 8)), 8u);
  Drain(*m);
  const MigratorStats s = m->Snapshot();
  EXPECT_EQ(m->state(), MigratorState::kRunning);
  EXPECT_EQ(s.call_errors_by_errno.at(ENODEV), 1u);
  EXPECT_EQ(s.failed(ENODEV), 4u);
  EXPECT_EQ(s.promoted_pages, 4u);
  ExpectSettled(s);
}

TEST_F(MigratorTest, CallErrorFromAnExitedTargetEndsCleanly) {
  // The target exits between the check and the call: move_pages answers
  // EINVAL for a zombie. The pages are abandoned, not failed.
  mover_.AddPages(kBase, 10, k4K, 1);
  mover_.SetCallHook([this](FakePageMover::Op op) {
    if (op == FakePageMover::Op::kMove) WriteStat(kStart, 'Z');
  });
  mover_.InjectCallError(FakePageMover::Op::kMove, EINVAL);
  auto m = Make(Unlimited());
  ASSERT_EQ(m->Submit(Promotions(kBase, 10)), 10u);
  Drain(*m);
  EXPECT_EQ(m->state(), MigratorState::kTargetExited);
  const MigratorStats s = m->Snapshot();
  EXPECT_EQ(s.failed_pages(), 0u);
  EXPECT_EQ(s.abandoned, 10u);
  EXPECT_EQ(s.call_errors_by_errno.at(EINVAL), 1u);
  ExpectSettled(s);
}

TEST_F(MigratorTest, ReusedPidIsNeverActedOn) {
  mover_.AddPages(kBase, 10, k4K, 1);
  auto m = Make(Unlimited());
  // The target exited and another process got its pid: new start time.
  WriteStat(kStart + 1);
  ASSERT_EQ(m->Submit(Promotions(kBase, 10)), 10u);
  Drain(*m);
  EXPECT_EQ(m->state(), MigratorState::kPidReused);
  EXPECT_EQ(m->status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(m->status().message().find("another process"),
            absl::string_view::npos);
  EXPECT_TRUE(mover_.calls().empty());  // not even a query
  EXPECT_EQ(mover_.CountOn(1), 10u);
  ExpectSettled(m->Snapshot());
}

TEST_F(MigratorTest, ReuseBetweenQueryAndMoveStopsBeforeTheMove) {
  mover_.AddPages(kBase, 10, k4K, 1);
  mover_.SetCallHook([this](FakePageMover::Op op) {
    if (op == FakePageMover::Op::kQuery) WriteStat(kStart + 1);
  });
  auto m = Make(Unlimited());
  ASSERT_EQ(m->Submit(Promotions(kBase, 10)), 10u);
  Drain(*m);
  EXPECT_EQ(m->state(), MigratorState::kPidReused);
  EXPECT_EQ(mover_.query_calls(), 1u);
  EXPECT_EQ(mover_.move_calls(), 0u);
  EXPECT_EQ(m->Snapshot().abandoned, 10u);
}

TEST_F(MigratorTest, RateLimitIsHonouredAgainstTheClock) {
  constexpr size_t kPages = 32768;  // 128 MiB
  mover_.AddPages(kBase, kPages, k4K, 1);
  MigratorOptions o = Unlimited();
  o.rate_limit_bytes_per_sec = 64e6;
  o.queue_capacity = kPages;
  auto m = Make(o);
  ASSERT_EQ(m->Submit(Promotions(kBase, kPages)), kPages);
  const absl::Duration elapsed = Drain(*m);
  const MigratorStats s = m->Snapshot();
  ASSERT_EQ(s.promoted_pages, kPages);
  const double bytes = static_cast<double>(kPages) * k4K;
  // The bucket holds one full call (4 MiB > 50 ms at 64 MB/s).
  const double burst = 1024.0 * k4K;
  const double expected_s = (bytes - burst) / 64e6;  // 2.03 s
  EXPECT_NEAR(absl::ToDoubleSeconds(elapsed), expected_s, expected_s * 0.03);
  // The time waited is the time that passed (the fake rounds cost none).
  EXPECT_NEAR(absl::ToDoubleSeconds(s.rate_limit_wait), expected_s,
              expected_s * 0.03);
  // Full batches: the limiter waits for a call's worth of tokens.
  EXPECT_EQ(s.move_calls, kPages / 1024);
}

TEST_F(MigratorTest, RateLimitWithHugePagesAndNoRefundLeak) {
  mover_.AddPages(kBase, 64, k2M, 1);     // 128 MiB
  mover_.InjectMoveError(kBase, EACCES);  // one never moves: refunded
  MigratorOptions o = Unlimited();
  o.rate_limit_bytes_per_sec = 128e6;
  auto m = Make(o);
  ASSERT_EQ(m->Submit(Promotions(kBase, 64, k2M)), 64u);
  const absl::Duration elapsed = Drain(*m);
  const MigratorStats s = m->Snapshot();
  ASSERT_EQ(s.promoted_pages, 63u);
  const double burst = 128e6 * 0.05;  // 6.4 MB > one batch of 4 KiB pages
  const double expected_s = (63.0 * k2M - burst) / 128e6;
  EXPECT_NEAR(absl::ToDoubleSeconds(elapsed), expected_s, expected_s * 0.05);
}

TEST_F(MigratorTest, SetRateLimitTakesEffect) {
  mover_.AddPages(kBase, 8192, k4K, 1);  // 32 MiB
  MigratorOptions o = Unlimited();
  o.rate_limit_bytes_per_sec = 1e6;
  o.queue_capacity = 8192;
  auto m = Make(o);
  ASSERT_EQ(m->Submit(Promotions(kBase, 8192)), 8192u);
  m->SetRateLimit(0);  // unlimited
  EXPECT_EQ(Drain(*m), absl::ZeroDuration());
  EXPECT_EQ(m->Snapshot().promoted_pages, 8192u);
}

TEST_F(MigratorTest, CpuBudgetIsHonoured) {
  // Each move call costs 5 ms of CPU (the kernel copying pages).
  auto m = MakeCpuBound(/*budget=*/0.1, absl::Milliseconds(5));
  ASSERT_EQ(m->Submit(Promotions(kBase, 1000)), 1000u);
  const absl::Duration elapsed = Drain(*m);
  const MigratorStats s = m->Snapshot();
  EXPECT_EQ(s.promoted_pages, 1000u);
  // CPU used / time passed stays within the budget (plus the 100 ms burst,
  // 1 s of the budget). 100 calls x 5 ms = 0.5 s of CPU at 0.1 CPU: about
  // 4 s.
  const double used = absl::ToDoubleSeconds(s.cpu_time);
  EXPECT_GE(used, 0.5);
  EXPECT_LE(used, 0.1 * absl::ToDoubleSeconds(elapsed) + 0.101);
  EXPECT_GE(used, 0.09 * absl::ToDoubleSeconds(elapsed));
  EXPECT_GT(s.cpu_budget_wait, absl::ZeroDuration());
}

// The budget is averaged over kMigratorCpuWindow (a second): a hot set
// found at once moves at once if it takes less than a second's budget.
// 100 calls x 2 ms = 0.2 s of CPU within the 0.25 s of a quarter core:
// no wait (100 ms deep, it waited 0.7 s).
TEST_F(MigratorTest, ABurstWithinTheWindowDoesNotWait) {
  auto m = MakeCpuBound(/*budget=*/0.25, absl::Milliseconds(2));
  ASSERT_EQ(m->Submit(Promotions(kBase, 1000)), 1000u);
  Drain(*m);
  const MigratorStats s = m->Snapshot();
  EXPECT_EQ(s.promoted_pages, 1000u);
  EXPECT_EQ(s.cpu_budget_wait, absl::ZeroDuration());
}

TEST_F(MigratorTest, PingPongPagesAreHeld) {
  mover_.AddPages(kBase, 1, k4K, 1);
  MigratorOptions o = Unlimited();
  o.pingpong.max_reversals = 2;
  auto m = Make(o);
  for (int i = 0; i < 4; ++i) {
    EXPECT_FALSE(m->IsHeld(kBase));
    ASSERT_TRUE(m->Submit(i % 2 == 0 ? Promote(kBase) : Demote(kBase)));
    Drain(*m);
    clock_.Advance(absl::Seconds(1));
  }
  EXPECT_TRUE(m->IsHeld(kBase));
  ASSERT_TRUE(m->Submit(Promote(kBase)));
  Drain(*m);
  MigratorStats s = m->Snapshot();
  EXPECT_EQ(s.pingpong_pages, 1u);
  EXPECT_EQ(s.held_pages_now, 1u);
  EXPECT_EQ(s.skipped_held, 1u);
  EXPECT_EQ(s.promoted_pages + s.demoted_pages, 4u);
  EXPECT_EQ(mover_.NodeOf(kBase), 1);
  // After the hold the page moves again.
  clock_.Advance(o.pingpong.hold);
  EXPECT_FALSE(m->IsHeld(kBase));
  ASSERT_TRUE(m->Submit(Promote(kBase)));
  Drain(*m);
  EXPECT_EQ(mover_.NodeOf(kBase), 0);
  ExpectSettled(m->Snapshot());
}

TEST_F(MigratorTest, ReleasedHoldsLetPagesMove) {
  mover_.AddPages(kBase, 1, k4K, 1);
  MigratorOptions o = Unlimited();
  o.pingpong.max_reversals = 2;
  auto m = Make(o);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(m->Submit(i % 2 == 0 ? Promote(kBase) : Demote(kBase)));
    Drain(*m);
    clock_.Advance(absl::Seconds(1));
  }
  ASSERT_TRUE(m->IsHeld(kBase));
  EXPECT_EQ(m->ReleaseHolds(), 1u);
  EXPECT_FALSE(m->IsHeld(kBase));
  EXPECT_EQ(m->Snapshot().held_pages_now, 0u);
  // Well within the hold's 5 minutes, the page moves.
  ASSERT_TRUE(m->Submit(Promote(kBase)));
  Drain(*m);
  EXPECT_EQ(mover_.NodeOf(kBase), 0);
  EXPECT_EQ(m->Snapshot().skipped_held, 0u);
  ExpectSettled(m->Snapshot());
}

TEST_F(MigratorTest, QueueIsBoundedAndBadRequestsRefused) {
  MigratorOptions o = Unlimited();
  o.queue_capacity = 8;
  auto m = Make(o);
  EXPECT_EQ(m->Submit(Promotions(kBase, 20)), 8u);
  MoveRequest unaligned = Promote(kBase + 100);
  MoveRequest odd_size = Promote(kBase);
  odd_size.page_bytes = 8192;
  MoveRequest huge_unaligned = Promote(kBase + k4K, k2M);
  MoveRequest same = Promote(kBase);
  same.to_node = same.from_node;
  MoveRequest no_target = Promote(kBase);
  no_target.to_node = -1;
  EXPECT_EQ(m->Submit({unaligned, odd_size, huge_unaligned, same, no_target}),
            0u);
  const MigratorStats s = m->Snapshot();
  EXPECT_EQ(s.submitted, 8u);
  EXPECT_EQ(s.dropped_queue_full, 12u);
  EXPECT_EQ(s.dropped_invalid, 5u);
  EXPECT_EQ(s.queue_depth, 8u);
  EXPECT_EQ(s.queue_capacity, 8u);
}

TEST_F(MigratorTest, HotToMovedTimeIsMeasured) {
  mover_.AddPages(kBase, 2, k4K, 1);
  auto m = Make(Unlimited());
  MoveRequest early = Promote(kBase);
  early.hot_since = clock_.Now() - absl::Seconds(3);  // hot 3 s ago
  ASSERT_TRUE(m->Submit(early));
  ASSERT_TRUE(m->Submit(Promote(kBase + k4K)));  // stamped now
  clock_.Advance(absl::Milliseconds(5));
  Drain(*m);
  const MigratorStats s = m->Snapshot();
  ASSERT_EQ(s.hot_to_moved.count(), 2u);
  EXPECT_EQ(s.hot_to_moved.max(), absl::Milliseconds(3005));
  EXPECT_LE(s.hot_to_moved.Quantile(0.5), absl::Microseconds(8192));
  EXPECT_GE(s.hot_to_moved.Quantile(0.5), absl::Milliseconds(5));
}

// --- The thread --------------------------------------------------------------

TEST_F(MigratorTest, ThreadMovesAndStopsCleanly) {
  mover_.AddPages(kBase, 5000, k4K, 1);
  RealClock* real = RealClock::Get();
  auto h = ProcessHandle::Attach(getpid(), &*fs_);
  ASSERT_TRUE(h.ok());
  Migrator m(Unlimited(), std::move(*h), &mover_, real);
  ASSERT_TRUE(m.Start().ok());
  EXPECT_FALSE(m.Start().ok());                             // once only
  EXPECT_EQ(m.RunOnce().next, MigratorRound::Next::kDone);  // not with Start
  ASSERT_EQ(m.Submit(Promotions(kBase, 5000)), 5000u);
  ASSERT_TRUE(m.WaitUntilIdle(absl::Seconds(30)));
  EXPECT_EQ(m.Snapshot().promoted_pages, 5000u);
  m.Stop();
  m.Stop();  // idempotent
  EXPECT_EQ(m.state(), MigratorState::kStopped);
  EXPECT_FALSE(m.Submit(Promote(kBase)));
  ExpectSettled(m.Snapshot());
}

TEST_F(MigratorTest, StopInterruptsARateLimitWaitAndCountsAbandoned) {
  mover_.AddPages(kBase, 4096, k4K, 1);
  auto h = ProcessHandle::Attach(getpid(), &*fs_);
  ASSERT_TRUE(h.ok());
  MigratorOptions o = Unlimited();
  o.rate_limit_bytes_per_sec = 4e6;  // 4 MB/s: 16 MiB would take 4 s
  Migrator m(o, std::move(*h), &mover_, RealClock::Get());
  ASSERT_TRUE(m.Start().ok());
  ASSERT_EQ(m.Submit(Promotions(kBase, 4096)), 4096u);
  EXPECT_FALSE(m.WaitUntilIdle(absl::Milliseconds(200)));
  const absl::Time t0 = absl::Now();
  m.Stop();
  EXPECT_LT(absl::Now() - t0, absl::Milliseconds(500));
  const MigratorStats s = m.Snapshot();
  EXPECT_EQ(s.state, MigratorState::kStopped);
  EXPECT_GT(s.abandoned, 0u);
  EXPECT_LT(s.promoted_pages, 4096u);
  ExpectSettled(s);
}

TEST_F(MigratorTest, ThreadEndsByItselfWhenTheTargetExits) {
  mover_.AddPages(kBase, 100, k4K, 1);
  auto h = ProcessHandle::Attach(getpid(), &*fs_);
  ASSERT_TRUE(h.ok());
  Migrator m(Unlimited(), std::move(*h), &mover_, RealClock::Get());
  ASSERT_TRUE(m.Start().ok());
  mover_.InjectCallError(FakePageMover::Op::kQuery, ESRCH);
  ASSERT_EQ(m.Submit(Promotions(kBase, 100)), 100u);
  ASSERT_TRUE(m.WaitUntilIdle(absl::Seconds(30)));
  EXPECT_EQ(m.state(), MigratorState::kTargetExited);
  m.Stop();
  EXPECT_EQ(m.state(), MigratorState::kTargetExited);  // kept
  ExpectSettled(m.Snapshot());
}

TEST_F(MigratorTest, DestructorStopsARunningThread) {
  auto h = ProcessHandle::Attach(getpid(), &*fs_);
  ASSERT_TRUE(h.ok());
  auto m = std::make_unique<Migrator>(Unlimited(), std::move(*h), &mover_,
                                      RealClock::Get());
  ASSERT_TRUE(m->Start().ok());
  m.reset();  // joins; a hang here fails the test by timeout
  SUCCEED();
}

}  // namespace
}  // namespace hotpage
