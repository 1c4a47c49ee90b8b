// DamonSource with several targets in its one context (AddTarget,
// RemoveTarget, PollSlots) over FakeDamonKernel (fake_damon.h: DAMON's
// sysfs as of 6.12, with targets matched by index at commit and filters).

#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "sampler/damon/damon_source.h"
#include "sampler/damon/fake_damon.h"

namespace hotpage {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr pid_t kA = 1001, kB = 1002, kC = 1003, kD = 1004;
constexpr pid_t kSelf = FakeDamonKernel::kSelfPid;

// Process p's hot 2 MiB at its own base, so samples say whose they are.
uint64_t BaseOf(pid_t p) { return uint64_t{0x7f0000000000} + p * 64 * kMiB; }

class DamonMultiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (pid_t p : {kA, kB, kC, kD}) {
      k_.AddProcess(p, 100 + p);
      k_.SetRegions(p, {{BaseOf(p), BaseOf(p) + 2 * kMiB, 10, 1}});
    }
    // Free slots monitor hotpage itself: regions that must reach nobody.
    k_.SetRegions(kSelf, {{0x10000000, 0x10000000 + 2 * kMiB, 20, 1}});
  }

  absl::StatusOr<std::unique_ptr<DamonSource>> Start(
      pid_t first, uint64_t interval_us = 1000) {
    DamonOptions o;
    o.state_dir = k_.state_dir();
    o.self_pid = kSelf;
    // A reused slot's stale window is 3 intervals.
    o.sample_us = 1000;
    o.aggr_us = interval_us;
    o.update_us = interval_us;
    o.warn = [](const std::string&) {};
    return DamonSource::StartPinned(first, 100 + first, o, k_.Fs(),
                                    k_.NewWriter());
  }

  // slot -> the pids and chunk bases its Samples carried, for one poll.
  std::map<int, std::set<std::pair<uint32_t, uint64_t>>> Poll(DamonSource& s) {
    std::map<int, std::set<std::pair<uint32_t, uint64_t>>> got;
    absl::StatusOr<size_t> n =
        s.PollSlots([&](int slot, absl::Span<const Sample> b) {
          for (const Sample& x : b) got[slot].insert({x.pid, x.vaddr});
        });
    EXPECT_TRUE(n.ok()) << n.status();
    return got;
  }

  static std::set<std::pair<uint32_t, uint64_t>> Of(pid_t p) {
    return {{static_cast<uint32_t>(p), BaseOf(p)}};
  }

  FakeDamonKernel k_;
};

TEST_F(DamonMultiTest, TwoProcessesShareOneKdamondWithATargetFilterEach) {
  auto src = Start(kA);
  ASSERT_TRUE(src.ok()) << src.status();
  absl::StatusOr<int> b = (*src)->AddTarget(kB, 100 + kB);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(*b, 1);
  EXPECT_EQ(k_.running_targets(), (std::vector<pid_t>{kA, kB}));
  EXPECT_EQ(k_.ons(), 1);  // one kdamond, started once
  EXPECT_EQ(k_.commits(), 1);
  EXPECT_EQ(k_.Read("kdamonds/nr_kdamonds"), "1");
  const std::string s = "kdamonds/0/contexts/0/schemes/";
  for (int i : {0, 1}) {
    EXPECT_EQ(k_.Read(absl::StrCat(s, i, "/filters/0/type")), "target");
    EXPECT_EQ(k_.Read(absl::StrCat(s, i, "/filters/0/damon_target_idx")),
              absl::StrCat(i));
    EXPECT_EQ(k_.Read(absl::StrCat(s, i, "/filters/0/matching")), "N");
  }
  EXPECT_EQ((*src)->targets(), 2u);
  EXPECT_EQ((*src)->stats().commits, 1u);
}

TEST_F(DamonMultiTest, RegionsOfEachTargetReachOnlyItsSlot) {
  auto src = Start(kA);
  ASSERT_TRUE(src.ok()) << src.status();
  ASSERT_TRUE((*src)->AddTarget(kB, 100 + kB).ok());
  ASSERT_TRUE((*src)->AddTarget(kC, 100 + kC).ok());
  auto got = Poll(**src);
  EXPECT_EQ(got[0], Of(kA));
  EXPECT_EQ(got[1], Of(kB));
  EXPECT_EQ(got[2], Of(kC));
  EXPECT_EQ(got.size(), 3u);
}

TEST_F(DamonMultiTest, OneTargetKeepsTheSingleLayoutUntilASecondComes) {
  auto src = Start(kA);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_EQ(k_.Read("kdamonds/0/contexts/0/schemes/0/filters/nr_filters"), "0");
  EXPECT_EQ(Poll(**src)[0], Of(kA));
}

TEST_F(DamonMultiTest, LeavingMemberIsCommittedAwayWithoutRestartingOthers) {
  auto src = Start(kA);
  ASSERT_TRUE(src.ok()) << src.status();
  ASSERT_TRUE((*src)->AddTarget(kB, 100 + kB).ok());
  ASSERT_TRUE((*src)->AddTarget(kC, 100 + kC).ok());
  const std::vector<uint64_t> gen = k_.generations();
  // B (the middle) leaves: its slot is freed in place, nobody moves.
  ASSERT_TRUE((*src)->RemoveTarget(1).ok());
  EXPECT_EQ(k_.running_targets(), (std::vector<pid_t>{kA, kSelf, kC}));
  EXPECT_EQ(k_.generations()[0], gen[0]);  // A's monitoring went on
  EXPECT_EQ(k_.generations()[2], gen[2]);  // and C's
  EXPECT_EQ(k_.ons(), 1);                  // no restart
  auto got = Poll(**src);
  EXPECT_EQ(got[0], Of(kA));
  EXPECT_EQ(got[2], Of(kC));
  EXPECT_EQ(got.count(1), 0u);
  // C (the last) leaves: trailing free slots are dropped.
  ASSERT_TRUE((*src)->RemoveTarget(2).ok());
  EXPECT_EQ(k_.running_targets(), (std::vector<pid_t>{kA}));
  EXPECT_EQ(k_.generations()[0], gen[0]);
  EXPECT_EQ((*src)->targets(), 1u);
  // Unknown and free slots: nothing written.
  k_.ClearWrites();
  EXPECT_TRUE((*src)->RemoveTarget(1).ok());
  EXPECT_TRUE((*src)->RemoveTarget(7).ok());
  EXPECT_TRUE(k_.Writes().empty());
}

TEST_F(DamonMultiTest, SlotZeroLeavingStillTearsDownAsOurs) {
  auto src = Start(kA);
  ASSERT_TRUE(src.ok()) << src.status();
  ASSERT_TRUE((*src)->AddTarget(kB, 100 + kB).ok());
  ASSERT_TRUE((*src)->RemoveTarget(0).ok());
  EXPECT_EQ(k_.running_targets(), (std::vector<pid_t>{kSelf, kB}));
  EXPECT_EQ(Poll(**src).count(0), 0u);
  // The state file follows target 0, so the kdamond is still recognised.
  ASSERT_TRUE((*src)->Stop().ok());
  EXPECT_EQ(k_.Read("kdamonds/nr_kdamonds"), "0");
}

TEST_F(DamonMultiTest, ReusedFreeSlotWithholdsThePreviousProcessRegions) {
  auto src = Start(kA, /*interval_us=*/200000);  // a 0.6 s window
  ASSERT_TRUE(src.ok()) << src.status();
  ASSERT_TRUE((*src)->AddTarget(kB, 100 + kB).ok());
  ASSERT_TRUE((*src)->AddTarget(kC, 100 + kC).ok());
  ASSERT_TRUE((*src)->RemoveTarget(1).ok());
  absl::StatusOr<int> d = (*src)->AddTarget(kD, 100 + kD);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(*d, 1);  // the lowest free slot
  EXPECT_EQ(k_.running_targets(), (std::vector<pid_t>{kA, kD, kC}));
  // The kernel still reports the slot's previous regions once (DAMON keeps
  // a target's regions when its pid changes): never D's samples.
  auto first = Poll(**src);
  EXPECT_EQ(first.count(1), 0u);
  EXPECT_EQ(first[0], Of(kA));
  absl::SleepFor(absl::Milliseconds(650));  // past update_us + 2 x aggr_us
  EXPECT_EQ(Poll(**src)[1], Of(kD));
}

TEST_F(DamonMultiTest, PidReusedBeforeTheCommitIsNeverMonitored) {
  auto src = Start(kA);
  ASSERT_TRUE(src.ok()) << src.status();
  ASSERT_TRUE((*src)->AddTarget(kB, 100 + kB).ok());
  // B exits and its pid goes to another process before the next commit.
  k_.AddProcess(kB, 5555);
  ASSERT_TRUE((*src)->AddTarget(kC, 100 + kC).ok());
  EXPECT_EQ(k_.running_targets(), (std::vector<pid_t>{kA, kSelf, kC}));
  EXPECT_EQ((*src)->stats().reused_pids, 1u);
  EXPECT_EQ(Poll(**src).count(1), 0u);
  // The old member's (pid, start time) is refused; the new process can be
  // added as itself.
  EXPECT_FALSE((*src)->AddTarget(kB, 100 + kB).ok());
  absl::StatusOr<int> again = (*src)->AddTarget(kB, 5555);
  ASSERT_TRUE(again.ok()) << again.status();
}

TEST_F(DamonMultiTest, PidReusedDuringTheCommitIsFreedAndNeverDelivered) {
  auto src = Start(kA);
  ASSERT_TRUE(src.ok()) << src.status();
  ASSERT_TRUE((*src)->AddTarget(kB, 100 + kB).ok());
  // While C is committed, B exits and its pid is reused: the kernel
  // resolves B's number to the new process.
  k_.BeforeWrite("kdamonds/0/state=commit", [this] { k_.AddProcess(kB, 6); });
  ASSERT_TRUE((*src)->AddTarget(kC, 100 + kC).ok());
  // Found after the commit, freed and committed away.
  EXPECT_EQ(k_.running_targets(), (std::vector<pid_t>{kA, kSelf, kC}));
  auto got = Poll(**src);
  EXPECT_EQ(got.count(1), 0u);
  EXPECT_EQ(got[2], Of(kC));
}

TEST_F(DamonMultiTest, CommitThatStopsTheKdamondRestartsIt) {
  auto src = Start(kA);
  ASSERT_TRUE(src.ok()) << src.status();
  ASSERT_TRUE((*src)->AddTarget(kB, 100 + kB).ok());
  // B exits between the check and the commit: 6.12 stops the kdamond and
  // the writer hears nothing.
  k_.BeforeWrite("kdamonds/0/state=commit", [this] { k_.ExitProcess(kB); });
  absl::StatusOr<int> c = (*src)->AddTarget(kC, 100 + kC);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(k_.running());
  EXPECT_EQ(k_.ons(), 2);
  EXPECT_EQ((*src)->stats().restarts, 1u);
  EXPECT_EQ(k_.running_targets(), (std::vector<pid_t>{kA, kSelf, kC}));
  auto got = Poll(**src);
  EXPECT_EQ(got[0], Of(kA));
  EXPECT_EQ(got[2], Of(kC));
}

TEST_F(DamonMultiTest, StartPinnedRefusesAPidReusedBeforeOn) {
  k_.AddProcess(kA, 42);  // not the start time the caller pinned
  auto src = Start(kA);
  ASSERT_FALSE(src.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(src.status())) << src.status();
  EXPECT_EQ(k_.Read("kdamonds/nr_kdamonds"), "0");  // torn down
}

TEST_F(DamonMultiTest, AddTargetChecksItsProcess) {
  auto src = Start(kA);
  ASSERT_TRUE(src.ok()) << src.status();
  k_.ClearWrites();
  EXPECT_FALSE((*src)->AddTarget(4444, 1).ok());  // no such process
  EXPECT_FALSE((*src)->AddTarget(kB, 1).ok());    // another start time
  EXPECT_FALSE((*src)->AddTarget(kB, 0).ok());    // not pinned
  EXPECT_TRUE(k_.Writes().empty());
  absl::StatusOr<int> a = (*src)->AddTarget(kA, 100 + kA);  // already there
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, 0);
  EXPECT_TRUE(k_.Writes().empty());
}

}  // namespace
}  // namespace hotpage
