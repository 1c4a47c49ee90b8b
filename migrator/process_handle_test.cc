#include "migrator/process_handle.h"

#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tools/base/kernel/fake_tree.h"
#include "tools/base/kernel/kernel_fs.h"
#include "tools/base/kernel/proc_stat.h"

namespace hotpage {
namespace {

// A stat line as the kernel prints it (52 fields; starttime is field 22).
std::string StatLine(int64_t pid, absl::string_view comm, char state,
                     uint64_t start) {
  return absl::StrCat(pid, " (", comm, ") ", std::string(1, state),
                      " 1 100 100 0 -1 4194560 1234 0 0 0 5 7 0 0 20 0 1 0 ",
                      start,
                      " 12345678 300 18446744073709551615 1 1 0 0 0 0 0 0 0 "
                      "0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
}

// --- Live processes --------------------------------------------------------

std::string ReadProc(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

TEST(ProcessHandleTest, AttachToSelf) {
  auto fs = KernelFs::Open("/");
  ASSERT_TRUE(fs.ok());
  auto h = ProcessHandle::Attach(getpid(), &*fs);
  ASSERT_TRUE(h.ok()) << h.status();
  auto own = ParseProcStat(ReadProc("/proc/self/stat"));
  ASSERT_TRUE(own.has_value());
  EXPECT_EQ(h->start_time_ticks(), own->start_time_ticks);
  EXPECT_TRUE(h->has_pidfd());
  EXPECT_TRUE(h->Alive());
  EXPECT_EQ(h->StillSame(), TargetState::kSame);
  EXPECT_NE(h->Describe().find(absl::StrCat("pid ", getpid())),
            std::string::npos);
}

TEST(ProcessHandleTest, ChildExitIsSeenBeforeAndAfterReaping) {
  auto fs = KernelFs::Open("/");
  ASSERT_TRUE(fs.ok());
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  auto h = ProcessHandle::Attach(child, &*fs);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->StillSame(), TargetState::kSame);
  ASSERT_EQ(kill(child, SIGKILL), 0);
  // Zombie: the pidfd is readable, /proc still has it (state Z).
  siginfo_t info;
  ASSERT_EQ(waitid(P_PID, child, &info, WEXITED | WNOWAIT), 0);
  EXPECT_FALSE(h->Alive());
  EXPECT_EQ(h->StillSame(), TargetState::kExited);
  // A zombie cannot be attached to.
  auto z = ProcessHandle::Attach(child, &*fs);
  EXPECT_EQ(z.status().code(), absl::StatusCode::kFailedPrecondition)
      << z.status();
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  EXPECT_FALSE(h->Alive());
  EXPECT_EQ(h->StillSame(), TargetState::kExited);
  auto gone = ProcessHandle::Attach(child, &*fs);
  EXPECT_EQ(gone.status().code(), absl::StatusCode::kNotFound) << gone.status();
}

TEST(ProcessHandleTest, ThreadIdIsNotAProcess) {
  auto fs = KernelFs::Open("/");
  ASSERT_TRUE(fs.ok());
  std::atomic<pid_t> tid{0};
  std::atomic<bool> release{false};
  std::thread waiter([&] {
    tid.store(static_cast<pid_t>(syscall(SYS_gettid)));
    while (!release.load()) std::this_thread::yield();
  });
  while (tid.load() == 0) std::this_thread::yield();
  auto h = ProcessHandle::Attach(tid.load(), &*fs);
  release.store(true);
  waiter.join();
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument)
      << h.status();
  EXPECT_NE(h.status().message().find("thread"), absl::string_view::npos);
}

TEST(ProcessHandleTest, BadPid) {
  auto fs = KernelFs::Open("/");
  ASSERT_TRUE(fs.ok());
  EXPECT_EQ(ProcessHandle::Attach(0, &*fs).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ProcessHandle::Attach(-5, &*fs).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// A fake /proc for our own pid: the pidfd is real (on self, alive), the
// stat file is the test's, so pid reuse can be staged.
class FakeProcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteStat(1000, 'S');
    auto fs = KernelFs::Open(tree_.root());
    ASSERT_TRUE(fs.ok());
    fs_.emplace(std::move(*fs));
  }
  void WriteStat(uint64_t start, char state, int64_t pid = getpid()) {
    tree_.Write(absl::StrCat("/proc/", getpid(), "/stat"),
                StatLine(pid, "fake (target)", state, start));
  }
  FakeTree tree_;
  std::optional<KernelFs> fs_;
};

TEST_F(FakeProcTest, StartTimeChangeIsReuse) {
  auto h = ProcessHandle::Attach(getpid(), &*fs_);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->start_time_ticks(), 1000u);
  EXPECT_EQ(h->comm(), "fake (target)");
  EXPECT_EQ(h->StillSame(), TargetState::kSame);
  WriteStat(2000, 'S');
  EXPECT_EQ(h->StillSame(), TargetState::kReused);
  WriteStat(1000, 'S', getpid() + 1);  // another pid's line: not ours
  EXPECT_EQ(h->StillSame(), TargetState::kReused);
  WriteStat(1000, 'Z');
  EXPECT_EQ(h->StillSame(), TargetState::kExited);
  tree_.Write(absl::StrCat("/proc/", getpid(), "/stat"), "garbage");
  EXPECT_EQ(h->StillSame(), TargetState::kUnverified);
  tree_.Remove(absl::StrCat("/proc/", getpid(), "/stat"));
  EXPECT_EQ(h->StillSame(), TargetState::kUnverified);
}

TEST_F(FakeProcTest, MoveKeepsThePidfd) {
  auto h = ProcessHandle::Attach(getpid(), &*fs_);
  ASSERT_TRUE(h.ok());
  ProcessHandle moved = std::move(*h);
  EXPECT_TRUE(moved.has_pidfd());
  EXPECT_FALSE(h->has_pidfd());
  EXPECT_EQ(moved.StillSame(), TargetState::kSame);
}

// A simulated target (the replay simulator's) reads nothing and is always
// the same process, even for a pid no process can have (above
// PID_MAX_LIMIT); a live handle is never simulated, so its checks stay on.
TEST_F(FakeProcTest, SimulatedTargetIsAlwaysTheSame) {
  constexpr pid_t kImpossiblePid = (4 << 20) + 1;
  ProcessHandle sim = ProcessHandle::ForSimulation(kImpossiblePid);
  EXPECT_TRUE(sim.simulated());
  EXPECT_FALSE(sim.has_pidfd());
  EXPECT_EQ(sim.pid(), kImpossiblePid);
  EXPECT_EQ(sim.StillSame(), TargetState::kSame);
  EXPECT_TRUE(sim.Alive());
  EXPECT_EQ(sim.Describe(),
            absl::StrCat("pid ", kImpossiblePid, " (simulated)"));
  ProcessHandle moved = std::move(sim);
  EXPECT_TRUE(moved.simulated());
  EXPECT_EQ(moved.StillSame(), TargetState::kSame);

  auto live = ProcessHandle::Attach(getpid(), &*fs_);
  ASSERT_TRUE(live.ok()) << live.status();
  EXPECT_FALSE(live->simulated());
  WriteStat(2000, 'S');
  EXPECT_EQ(live->StillSame(), TargetState::kReused);
}

TEST_F(FakeProcTest, UnparsableStatRefusesAttach) {
  tree_.Write(absl::StrCat("/proc/", getpid(), "/stat"), "1 (x) S");
  EXPECT_EQ(ProcessHandle::Attach(getpid(), &*fs_).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace hotpage
