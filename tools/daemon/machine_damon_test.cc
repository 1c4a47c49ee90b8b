// MachineDamon over FakeDamonKernel (sampler/damon/fake_damon.h: DAMON's
// sysfs as of 6.12 with several targets, filters and commit).

#include "tools/daemon/machine_damon.h"

#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "sampler/damon/fake_damon.h"

namespace hotpage {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr pid_t kA = 1001, kB = 1002, kC = 1003;
constexpr uint64_t kReusedBase = uint64_t{0x500000000000};

uint64_t BaseOf(pid_t p) { return uint64_t{0x7f0000000000} + p * 64 * kMiB; }
ProcessKey Key(pid_t p) { return {p, static_cast<uint64_t>(100 + p)}; }

class MachineDamonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (pid_t p : {kA, kB, kC}) {
      k_.AddProcess(p, 100 + p);
      k_.SetRegions(p, {{BaseOf(p), BaseOf(p) + 2 * kMiB, 10, 1}});
    }
    k_.SetRegions(FakeDamonKernel::kSelfPid,
                  {{0x10000000, 0x10000000 + 2 * kMiB, 20, 1}});
    DamonOptions o;
    o.state_dir = k_.state_dir();
    o.self_pid = FakeDamonKernel::kSelfPid;
    o.sample_us = 1000;
    o.aggr_us = 1000;
    o.update_us = 1000;
    machine_ = std::make_unique<MachineDamon>(
        o,
        [this]() -> absl::StatusOr<
                     std::pair<KernelFs, std::unique_ptr<SysfsWriter>>> {
          return std::make_pair(k_.Fs(), k_.NewWriter());
        },
        &log_);
  }

  // (pid, chunk) of what one Poll of `src` delivers.
  static std::set<std::pair<uint32_t, uint64_t>> Drain(AttachSource& src) {
    std::set<std::pair<uint32_t, uint64_t>> got;
    EXPECT_TRUE(src.Poll([&](absl::Span<const Sample> b) {
                     for (const Sample& s : b) got.insert({s.pid, s.vaddr});
                   })
                    .ok());
    return got;
  }
  static std::set<std::pair<uint32_t, uint64_t>> Of(pid_t p) {
    return {{static_cast<uint32_t>(p), BaseOf(p)}};
  }

  FakeDamonKernel k_;
  std::ostringstream log_;
  std::unique_ptr<MachineDamon> machine_;
};

TEST_F(MachineDamonTest, TwoMembersShareOneKdamond) {
  auto a = machine_->Attach(Key(kA));
  ASSERT_TRUE(a.ok()) << a.status();
  auto b = machine_->Attach(Key(kB));
  ASSERT_TRUE(b.ok()) << b.status();  // the second DAMON member is not refused
  EXPECT_EQ(k_.Read("kdamonds/nr_kdamonds"), "1");
  EXPECT_EQ(k_.ons(), 1);
  EXPECT_EQ(k_.running_targets(), (std::vector<pid_t>{kA, kB}));
  EXPECT_EQ(machine_->targets(), 2u);
}

TEST_F(MachineDamonTest, RegionsOfEachTargetReachOnlyItsMember) {
  auto a = machine_->Attach(Key(kA));
  auto b = machine_->Attach(Key(kB));
  auto c = machine_->Attach(Key(kC));
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  ASSERT_TRUE(machine_->PollOnce().ok());
  EXPECT_EQ(Drain(**a), Of(kA));
  EXPECT_EQ(Drain(**b), Of(kB));
  EXPECT_EQ(Drain(**c), Of(kC));
}

TEST_F(MachineDamonTest, LeavingMemberIsRemovedByCommitWithoutRestartingOther) {
  auto a = machine_->Attach(Key(kA));
  auto b = machine_->Attach(Key(kB));
  ASSERT_TRUE(a.ok() && b.ok());
  const std::vector<uint64_t> gen = k_.generations();
  const int commits = k_.commits();
  b->reset();  // B's member ends
  EXPECT_EQ(k_.commits(), commits + 1);
  EXPECT_EQ(k_.running_targets(), (std::vector<pid_t>{kA}));
  EXPECT_EQ(k_.generations()[0], gen[0]);  // A's monitoring went on
  EXPECT_EQ(k_.ons(), 1);
  ASSERT_TRUE(machine_->PollOnce().ok());
  EXPECT_EQ(Drain(**a), Of(kA));
  // The first member leaving, with another still there, also commits.
  auto c = machine_->Attach(Key(kC));
  ASSERT_TRUE(c.ok());
  const uint64_t c_gen = k_.generations()[1];
  a->reset();
  EXPECT_EQ(k_.running_targets(),
            (std::vector<pid_t>{FakeDamonKernel::kSelfPid, kC}));
  EXPECT_EQ(k_.generations()[1], c_gen);
  EXPECT_EQ(k_.ons(), 1);
  ASSERT_TRUE(machine_->PollOnce().ok());
  EXPECT_EQ(Drain(**c), Of(kC));
  // The last one tears the kdamond down: DAMON is free again.
  c->reset();
  EXPECT_EQ(k_.Read("kdamonds/nr_kdamonds"), "0");
  EXPECT_FALSE(machine_->running());
  auto again = machine_->Attach(Key(kB));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(k_.ons(), 2);
}

TEST_F(MachineDamonTest, ReusedPidIsNeverMonitoredForTheOldMember) {
  auto a = machine_->Attach(Key(kA));
  auto b = machine_->Attach(Key(kB));
  ASSERT_TRUE(a.ok() && b.ok());
  // B exits; its pid goes to a new process with other memory.
  k_.AddProcess(kB, 9999);
  k_.SetRegions(kB, {{kReusedBase, kReusedBase + 2 * kMiB, 10, 1}});
  const ProcessKey reused{kB, 9999};
  machine_->Reconcile({Key(kA), reused});  // the daemon's next round
  EXPECT_EQ(k_.running_targets(), (std::vector<pid_t>{kA}));
  ASSERT_TRUE(machine_->PollOnce().ok());
  EXPECT_TRUE(Drain(**b).empty());
  // The new process, as a member of its own, gets its own samples; the
  // old member still none.
  auto b2 = machine_->Attach(reused);
  ASSERT_TRUE(b2.ok()) << b2.status();
  ASSERT_TRUE(machine_->PollOnce().ok());
  EXPECT_EQ(Drain(**b2),
            (std::set<std::pair<uint32_t, uint64_t>>{{kB, kReusedBase}}));
  EXPECT_TRUE(Drain(**b).empty());
  EXPECT_EQ(Drain(**a), Of(kA));
  // The old member's (pid, start time) cannot be attached again.
  EXPECT_FALSE(machine_->Attach(Key(kB)).ok());
}

TEST_F(MachineDamonTest, KdamondThatEndsEndsItsMembersAndStartsAfresh) {
  auto a = machine_->Attach(Key(kA));
  auto b = machine_->Attach(Key(kB));
  ASSERT_TRUE(a.ok() && b.ok());
  k_.ExitProcess(kA);
  k_.ExitProcess(kB);  // no target left: the kdamond stops by itself
  EXPECT_FALSE(machine_->PollOnce().ok());
  absl::Status s = (*a)->Poll([](absl::Span<const Sample>) {});
  EXPECT_TRUE(absl::IsUnavailable(s)) << s;
  EXPECT_FALSE(machine_->running());
  auto c = machine_->Attach(Key(kC));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(k_.ons(), 2);
  ASSERT_TRUE(machine_->PollOnce().ok());
  EXPECT_EQ(Drain(**c), Of(kC));
  EXPECT_TRUE((*c)->Poll([](absl::Span<const Sample>) {}).ok());
}

TEST_F(MachineDamonTest, AttachAfterTheKdamondStoppedUnseenStillWorks) {
  auto a = machine_->Attach(Key(kA));
  auto b = machine_->Attach(Key(kB));
  ASSERT_TRUE(a.ok() && b.ok());
  k_.ExitProcess(kA);
  k_.ExitProcess(kB);  // stopped, and no poll has seen it yet
  auto c = machine_->Attach(Key(kC));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(k_.running());
  ASSERT_TRUE(machine_->PollOnce().ok());
  EXPECT_EQ(Drain(**c), Of(kC));
}

TEST_F(MachineDamonTest, PollingThreadRoutesWhileMembersComeAndGo) {
  machine_->Start();
  auto a = machine_->Attach(Key(kA));
  ASSERT_TRUE(a.ok()) << a.status();
  auto b = machine_->Attach(Key(kB));
  ASSERT_TRUE(b.ok()) << b.status();
  std::set<std::pair<uint32_t, uint64_t>> got_a, got_b;
  for (int i = 0; i < 50 && (got_a.empty() || got_b.empty()); ++i) {
    for (auto x : Drain(**a)) got_a.insert(x);
    for (auto x : Drain(**b)) got_b.insert(x);
  }
  EXPECT_EQ(got_a, Of(kA));
  EXPECT_EQ(got_b, Of(kB));
  b->reset();
  a->reset();
  machine_->Stop();
  EXPECT_EQ(k_.Read("kdamonds/nr_kdamonds"), "0");
}

}  // namespace
}  // namespace hotpage
