#include "sampler/hintfault/numa_balancing_controller.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tools/base/kernel/fake_sysfs_writer.h"
#include "tools/base/kernel/fake_tree.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {
namespace {

constexpr pid_t kPid = 4321;
constexpr char kNb[] = "/proc/sys/kernel/numa_balancing";
constexpr char kRl[] =
    "/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps";

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool Exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

std::string Vmstat(uint64_t pte, uint64_t hint, uint64_t migrated = 0) {
  return absl::StrCat("nr_free_pages 1\nnuma_pte_updates ", pte,
                      "\nnuma_huge_pte_updates 0\nnuma_hint_faults ", hint,
                      "\nnuma_hint_faults_local 0\nnuma_pages_migrated ",
                      migrated, "\npgpromote_success ", migrated,
                      "\npgpromote_candidate ", hint, "\n");
}

std::string Stat(uint64_t minflt, uint64_t utime) {
  return absl::StrCat(kPid, " (a (weird) name) R 1 1 1 0 -1 4194304 ", minflt,
                      " 0 0 0 ", utime, " 3 0 0 20 0 1 0 777 0 0\n");
}

// A machine on a FakeTree: the two sysctls, vmstat, the target's
// /proc files; writes go through a FakeSysfsLog so they land in the tree.
class HintFaultTest : public ::testing::Test {
 protected:
  HintFaultTest() : log_(&tree_) {
    tree_.Write(kNb, "0\n");
    tree_.Write(kRl, "65536\n");
    tree_.Write("/proc/vmstat", Vmstat(0, 0));
    tree_.Write(
        "/proc/self/stat",
        "99 (hotpage) R 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 4242 0 0\n");
    SetTarget(100, 0, 0);
    tree_.Mkdir("/run");
    state_dir_ = absl::StrCat(tree_.root(), "/run/hotpage");
  }

  void SetTarget(uint64_t cpu_ticks, uint64_t seq, uint64_t minflt) {
    tree_.Write(absl::StrCat("/proc/", kPid, "/stat"), Stat(minflt, cpu_ticks));
    tree_.Write(
        absl::StrCat("/proc/", kPid, "/sched"),
        absl::StrCat("x (4321, #threads: 1)\n----\nmm->numa_scan_seq : ", seq,
                     "\n"));
  }

  NumaBalancingOptions Options() {
    NumaBalancingOptions o;
    o.pid = kPid;
    o.slow_nodes = {1};
    o.state_dir = state_dir_;
    o.check_interval = absl::Hours(1);  // tests drive CheckNow()
    o.warn = [this](const std::string& line) { warnings_.push_back(line); };
    return o;
  }

  absl::StatusOr<std::unique_ptr<NumaBalancingController>> StartSource() {
    absl::StatusOr<KernelFs> fs = KernelFs::Open(tree_.root());
    if (!fs.ok()) return fs.status();
    return NumaBalancingController::Start(Options(), std::move(*fs),
                                          log_.NewWriter());
  }

  std::string Read(absl::string_view path) {
    return Slurp(absl::StrCat(tree_.root(), path));
  }
  std::string StateFile() const {
    return absl::StrCat(state_dir_, "/hintfault-sysctls");
  }
  bool WarnedAbout(absl::string_view what) const {
    for (const std::string& w : warnings_) {
      if (absl::StrContains(w, what)) return true;
    }
    return false;
  }

  FakeTree tree_;
  FakeSysfsLog log_;
  std::string state_dir_;
  std::vector<std::string> warnings_;
};

// --- parsers ---------------------------------------------------------------

TEST(HintFaultParse, WantedKeepsTheNormalBit) {
  EXPECT_EQ(*WantedNumaBalancing("0"), "2");
  EXPECT_EQ(*WantedNumaBalancing("1"), "3");
  EXPECT_EQ(*WantedNumaBalancing("2"), "2");
  EXPECT_EQ(*WantedNumaBalancing("3"), "3");
  EXPECT_FALSE(WantedNumaBalancing("on").ok());
  EXPECT_FALSE(WantedNumaBalancing("").ok());
}

// --- the source
// ------------------------------------------------------------------

TEST_F(HintFaultTest, StateFileBeforeTheSysctlsThenRestoredOnStop) {
  bool state_before_first_write = false;
  log_.set_hook([&](absl::string_view path, absl::string_view) {
    if (log_.writes().empty()) state_before_first_write = Exists(StateFile());
    return 0;
  });
  absl::StatusOr<std::unique_ptr<NumaBalancingController>> s = StartSource();
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(state_before_first_write);
  EXPECT_EQ(absl::StrJoin(log_.Lines(), " "),
            absl::StrCat(kNb, "=2 ", kRl, "=0"));
  EXPECT_EQ(Read(kNb), "2");
  EXPECT_EQ(Read(kRl), "0");
  absl::StatusOr<HintFaultState> st = ParseHintFaultState(Slurp(StateFile()));
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->pid, getpid());
  EXPECT_EQ(st->start_time_ticks, 4242u);
  ASSERT_EQ(st->changes.size(), 2u);
  EXPECT_EQ(st->changes[0].original, "0");
  EXPECT_EQ(st->changes[1].original, "65536");
  struct stat dir;
  ASSERT_EQ(stat(state_dir_.c_str(), &dir), 0);
  EXPECT_EQ(dir.st_mode & 0777, 0700u);
  EXPECT_EQ((*s)->DescribeChanges(),
            "kernel.numa_balancing 0 -> 2, "
            "kernel.numa_balancing_promote_rate_limit_MBps 65536 -> 0");

  log_.clear();
  ASSERT_TRUE((*s)->Stop().ok());
  // Reverse order: the rate limit goes back before tiering mode is left.
  EXPECT_EQ(absl::StrJoin(log_.Lines(), " "),
            absl::StrCat(kRl, "=65536 ", kNb, "=0"));
  EXPECT_EQ((*s)->restored(),
            "restored kernel.numa_balancing=0, "
            "kernel.numa_balancing_promote_rate_limit_MBps=65536");
  EXPECT_FALSE(Exists(StateFile()));
  log_.clear();
  EXPECT_TRUE((*s)->Stop().ok());  // idempotent
  s->reset();                      // and the destructor adds nothing
  EXPECT_TRUE(log_.writes().empty());
}

TEST_F(HintFaultTest, DestructorRestores) {
  tree_.Write(kNb, "1\n");
  {
    absl::StatusOr<std::unique_ptr<NumaBalancingController>> s = StartSource();
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(Read(kNb), "3");  // NORMAL kept
  }
  EXPECT_EQ(Read(kNb), "1");
  EXPECT_EQ(Read(kRl), "65536");
  EXPECT_FALSE(Exists(StateFile()));
}

TEST_F(HintFaultTest, SecondSourceRefusedAndNamesTheHolder) {
  absl::StatusOr<std::unique_ptr<NumaBalancingController>> a = StartSource();
  ASSERT_TRUE(a.ok()) << a.status();
  log_.clear();
  absl::StatusOr<std::unique_ptr<NumaBalancingController>> b = StartSource();
  ASSERT_FALSE(b.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(b.status()));
  EXPECT_TRUE(
      absl::StrContains(b.status().message(),
                        absl::StrCat("another hotpage (pid ", getpid(), ")")))
      << b.status();
  EXPECT_TRUE(log_.writes().empty());  // touched nothing
  EXPECT_TRUE(Exists(StateFile()));    // nor the holder's state
  EXPECT_EQ(Read(kNb), "2");
  a->reset();
  EXPECT_EQ(Read(kNb), "0");
  EXPECT_TRUE(StartSource().ok());  // free again
}

TEST_F(HintFaultTest, StaleStateFromADeadRunIsRestoredFirst) {
  // A run that was SIGKILLed: its state file, and the sysctls as it left them.
  ASSERT_EQ(mkdir(state_dir_.c_str(), 0700), 0);
  std::ofstream(StateFile())
      << "hotpage-hintfault-state 1\npid 999\nstart_time 1\n"
      << "sysctl " << kNb << " 1 3\nsysctl " << kRl << " 4096 0\n";
  tree_.Write(kNb, "3\n");
  tree_.Write(kRl, "0\n");
  absl::StatusOr<std::unique_ptr<NumaBalancingController>> s = StartSource();
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(absl::StrJoin(log_.Lines(), " "),
            absl::StrCat(kRl, "=4096 ", kNb, "=1 ", kNb, "=3 ", kRl, "=0"));
  EXPECT_TRUE(WarnedAbout("left changed by hotpage pid 999"))
      << absl::StrJoin(warnings_, "\n");
  EXPECT_TRUE(absl::StrContains((*s)->stats().recovered, "pid 999"));
  // The originals are the dead run's originals, not what it left.
  EXPECT_EQ((*s)->DescribeChanges(),
            "kernel.numa_balancing 1 -> 3, "
            "kernel.numa_balancing_promote_rate_limit_MBps 4096 -> 0");
  s->reset();
  EXPECT_EQ(Read(kNb), "1");
  EXPECT_EQ(Read(kRl), "4096");
}

TEST_F(HintFaultTest, SigkilledHolderIsRecoveredByTheNextStart) {
  // A real process takes the lock, changes the sysctls and dies by SIGKILL.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    absl::StatusOr<KernelFs> fs = KernelFs::Open(tree_.root());
    FakeSysfsLog log(&tree_);
    NumaBalancingOptions o = Options();
    o.warn = [](const std::string&) {};
    absl::StatusOr<std::unique_ptr<NumaBalancingController>> s =
        NumaBalancingController::Start(o, std::move(*fs), log.NewWriter());
    if (!s.ok()) _exit(3);
    raise(SIGKILL);
    _exit(4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  EXPECT_EQ(Read(kNb), "2");  // left changed
  absl::StatusOr<std::unique_ptr<NumaBalancingController>> s = StartSource();
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(WarnedAbout(absl::StrCat("hotpage pid ", child)))
      << absl::StrJoin(warnings_, "\n");
  EXPECT_EQ((*s)->DescribeChanges(),
            "kernel.numa_balancing 0 -> 2, "
            "kernel.numa_balancing_promote_rate_limit_MBps 65536 -> 0");
  s->reset();
  EXPECT_EQ(Read(kNb), "0");
  EXPECT_EQ(Read(kRl), "65536");
}

TEST_F(HintFaultTest, CorruptStateIsRefusedAndKept) {
  ASSERT_EQ(mkdir(state_dir_.c_str(), 0700), 0);
  std::ofstream(StateFile()) << "hotpage-hintfault-state 1\npid 5\nsysctl "
                                "/proc/sys/vm/drop_caches 0 3\n";
  absl::StatusOr<std::unique_ptr<NumaBalancingController>> s = StartSource();
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(
      absl::StrContains(s.status().message(), "left over but unreadable"))
      << s.status();
  EXPECT_TRUE(log_.writes().empty());
  EXPECT_TRUE(Exists(StateFile()));
}

TEST_F(HintFaultTest, PermissionDeniedChangesNothing) {
  log_.set_hook([](absl::string_view path, absl::string_view) {
    return path == kNb ? EPERM : 0;
  });
  absl::StatusOr<std::unique_ptr<NumaBalancingController>> s = StartSource();
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(
      absl::StrContains(s.status().message(), "set kernel.numa_balancing to 2"))
      << s.status();
  EXPECT_TRUE(absl::StrContains(s.status().message(), "needs root"))
      << s.status();
  EXPECT_EQ(Read(kNb), "0\n");
  EXPECT_EQ(Read(kRl), "65536\n");
  EXPECT_FALSE(Exists(StateFile()));
}

TEST_F(HintFaultTest, FailedSecondWriteUndoesTheFirst) {
  log_.set_hook([](absl::string_view path, absl::string_view v) {
    return path == kRl && v == "0" ? EACCES : 0;
  });
  absl::StatusOr<std::unique_ptr<NumaBalancingController>> s = StartSource();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(absl::StrJoin(log_.Lines(), " "),
            absl::StrCat(kNb, "=2 ", kRl, "=0 !EACCES ", kNb, "=0"));
  EXPECT_EQ(Read(kNb), "0");
  EXPECT_FALSE(Exists(StateFile()));
}

TEST_F(HintFaultTest, KernelWithoutTheRateLimitIsRefused) {
  tree_.Remove(kRl);
  absl::StatusOr<std::unique_ptr<NumaBalancingController>> s = StartSource();
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.status().message(), "Linux 6.0"))
      << s.status();
  EXPECT_TRUE(log_.writes().empty());
  EXPECT_FALSE(Exists(StateFile()));
}

TEST_F(HintFaultTest, UnsafeStateDirectoryIsRefused) {
  ASSERT_EQ(mkdir(state_dir_.c_str(), 0700), 0);
  ASSERT_EQ(chmod(state_dir_.c_str(), 0777), 0);
  absl::StatusOr<std::unique_ptr<NumaBalancingController>> s = StartSource();
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(
      absl::StrContains(s.status().message(), "writable by group or others"))
      << s.status();
  EXPECT_TRUE(log_.writes().empty());
  // A symlink instead of the directory is refused too (O_NOFOLLOW).
  ASSERT_EQ(rmdir(state_dir_.c_str()), 0);
  tree_.Mkdir("/elsewhere");
  ASSERT_EQ(symlink(absl::StrCat(tree_.root(), "/elsewhere").c_str(),
                    state_dir_.c_str()),
            0);
  s = StartSource();
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(log_.writes().empty());
}

// The watchdog reads demotion_enabled (not a file the controller changes)
// and says when it changes; DemotionEnabled() is its last reading.
TEST_F(HintFaultTest, DemotionEnabledIsReadAndItsChangeWarned) {
  tree_.Write("/sys/kernel/mm/numa/demotion_enabled", "true\n");
  absl::StatusOr<std::unique_ptr<NumaBalancingController>> s = StartSource();
  ASSERT_TRUE(s.ok()) << s.status();
  (*s)->CheckNow();
  EXPECT_EQ((*s)->DemotionEnabled(), true);
  EXPECT_FALSE(WarnedAbout("demotion_enabled"));
  tree_.Write("/sys/kernel/mm/numa/demotion_enabled", "false\n");
  (*s)->CheckNow();
  EXPECT_EQ((*s)->DemotionEnabled(), false);
  EXPECT_TRUE(WarnedAbout("demotion_enabled"))
      << absl::StrJoin(warnings_, "\n");
  EXPECT_EQ((*s)->stats().demotion_changes, 1u);
  ASSERT_TRUE((*s)->Stop().ok());
  // Never written: it is not one of the controller's sysctls.
  EXPECT_EQ(Read("/sys/kernel/mm/numa/demotion_enabled"), "false\n");
}

TEST_F(HintFaultTest, ChangedBehindOurBackIsWarnedAndStillRestored) {
  absl::StatusOr<std::unique_ptr<NumaBalancingController>> s = StartSource();
  ASSERT_TRUE(s.ok()) << s.status();
  tree_.Write(kNb, "0\n");  // an admin turns balancing off
  (*s)->CheckNow();
  EXPECT_TRUE(WarnedAbout("kernel.numa_balancing is now 0"))
      << absl::StrJoin(warnings_, "\n");
  EXPECT_EQ((*s)->stats().sysctl_overrides, 1u);
  tree_.Write(kNb, "1\n");
  ASSERT_TRUE((*s)->Stop().ok());
  EXPECT_TRUE(absl::StrContains(
      (*s)->restored(),
      "kernel.numa_balancing=0 (it was 1, set by someone else)"))
      << (*s)->restored();
  EXPECT_EQ(Read(kNb), "0");
}

TEST_F(HintFaultTest, FailedRestoreKeepsTheStateAndSaysWhatToDo) {
  absl::StatusOr<std::unique_ptr<NumaBalancingController>> s = StartSource();
  ASSERT_TRUE(s.ok()) << s.status();
  log_.set_hook([](absl::string_view path, absl::string_view) {
    return path == kRl ? EIO : 0;
  });
  absl::Status st = (*s)->Stop();
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(absl::StrContains(
      st.message(),
      "sysctl -w kernel.numa_balancing_promote_rate_limit_MBps=65536"))
      << st;
  EXPECT_TRUE(Exists(StateFile()));
  EXPECT_EQ(Read(kNb), "0");  // the other one was still restored
  log_.set_hook(nullptr);
  s->reset();
  // The next run repairs it from the state file.
  absl::StatusOr<std::unique_ptr<NumaBalancingController>> again =
      StartSource();
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(
      WarnedAbout("restored kernel.numa_balancing=0, "
                  "kernel.numa_balancing_promote_rate_limit_MBps=65536"))
      << absl::StrJoin(warnings_, "\n");
}

TEST_F(HintFaultTest, WatchdogReadsTheKernelAndReportsJson) {
  absl::StatusOr<std::unique_ptr<NumaBalancingController>> s = StartSource();
  ASSERT_TRUE(s.ok()) << s.status();
  tree_.Write("/proc/vmstat", Vmstat(49152, 6144, 0));
  SetTarget(300, 1, 6244);
  (*s)->CheckNow();
  HintFaultStats st = (*s)->stats();
  EXPECT_EQ(st.delta.numa_pte_updates, 49152u);
  EXPECT_EQ(st.delta.numa_hint_faults, 6144u);
  EXPECT_EQ(st.scan_passes, 1u);
  EXPECT_TRUE(st.scan_seq_known);
  EXPECT_EQ(st.target_minor_faults, 6244u);
  EXPECT_EQ(st.kernel_migrated_pages, 0u);
  JsonWriter w;
  (*s)->AppendJson(&w);
  for (const char* key :
       {"\"numa_hint_faults\":6144", "\"kernel_migrated_pages\":0",
        "\"scan_passes\":1", "\"scan_stalled\":false",
        "\"hint_faults_per_sec\""}) {
    EXPECT_TRUE(absl::StrContains(w.str(), key)) << key << " in " << w.str();
  }
}

TEST_F(HintFaultTest, SlowPagesTheScannerSkipsAreCounted) {
  tree_.Write(
      absl::StrCat("/proc/", kPid, "/numa_maps"),
      "7f0000000000 prefer:1 anon=100 dirty=100 N1=100 kernelpagesize_kB=4\n"
      "7f1000000000 default anon=50 dirty=50 N1=50 kernelpagesize_kB=4\n"
      "7f2000000000 bind=balancing:1 anon=7 dirty=7 N1=7 kernelpagesize_kB=4\n"
      "7f3000000000 bind:0 anon=9 dirty=9 N0=9 kernelpagesize_kB=4\n");
  absl::StatusOr<std::unique_ptr<NumaBalancingController>> s = StartSource();
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)->stats().unscannable_slow_pages, 100u);
  EXPECT_TRUE(WarnedAbout("100 pages")) << absl::StrJoin(warnings_, "\n");
  EXPECT_TRUE(WarnedAbout("prefer at 0x7f0000000000"))
      << absl::StrJoin(warnings_, "\n");
}

TEST_F(HintFaultTest, StopWakesTheWatchdogThreadAtOnce) {
  absl::StatusOr<std::unique_ptr<NumaBalancingController>> s =
      StartSource();  // interval: 1 h
  ASSERT_TRUE(s.ok()) << s.status();
  const absl::Time t0 = absl::Now();
  ASSERT_TRUE((*s)->Stop().ok());
  EXPECT_LT(absl::Now() - t0, absl::Seconds(10));
}

// The watchdog thread checks every millisecond while another thread reads
// the stats and the kernel's counters change: run under --config=tsan.
TEST_F(HintFaultTest, WatchdogThreadAndReadersStress) {
  NumaBalancingOptions o = Options();
  o.check_interval = absl::Milliseconds(1);
  std::atomic<int> warned{0};
  o.warn = [&warned](const std::string&) {
    warned.fetch_add(1, std::memory_order_relaxed);
  };
  absl::StatusOr<KernelFs> fs = KernelFs::Open(tree_.root());
  ASSERT_TRUE(fs.ok());
  absl::StatusOr<std::unique_ptr<NumaBalancingController>> s =
      NumaBalancingController::Start(o, std::move(*fs), log_.NewWriter());
  ASSERT_TRUE(s.ok()) << s.status();
  std::atomic<bool> done{false};
  std::thread reader([&] {
    while (!done.load(std::memory_order_relaxed)) {
      JsonWriter w;
      (*s)->AppendJson(&w);
      EXPECT_FALSE(w.str().empty());
    }
  });
  for (uint64_t i = 1; i <= 200; ++i) {
    tree_.Write("/proc/vmstat",
                Vmstat(i * 10, i * 5, i));  // the kernel migrates too
    absl::SleepFor(absl::Microseconds(500));
  }
  done.store(true, std::memory_order_relaxed);
  reader.join();
  ASSERT_TRUE((*s)->Stop().ok());
  const HintFaultStats st = (*s)->stats();
  EXPECT_GT(st.checks, 10u);
  EXPECT_GT(st.kernel_migrated_pages, 0u);
  EXPECT_GT(warned.load(), 0);
  EXPECT_EQ(Read(kNb), "0");
}

}  // namespace
}  // namespace hotpage
