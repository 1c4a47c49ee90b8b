#include "tools/daemon/daemon_loop.h"

#include <unistd.h>

#include <chrono>
#include <map>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tools/base/json.h"
#include "tools/base/kernel/fake_tree.h"
#include "tools/base/mutex.h"

namespace hotpage {
namespace {

constexpr uint64_t kGiB = 1ull << 30;

void AddProcess(FakeTree& t, int pid, const std::string& comm,
                const std::string& cgroup, uint64_t start) {
  const std::string d = absl::StrCat("/proc/", pid);
  t.Write(d + "/stat",
          absl::StrCat(pid, " (", comm, ") S 1 ", pid,
                       " 0 -1 -1 4194304 10 0 0 0 1 2 0 0 20 0 1 0 ", start,
                       " 1000 100\n"));
  t.Write(d + "/comm", comm + "\n");
  t.Write(d + "/cmdline", comm + std::string("\0", 1));
  t.Write(d + "/cgroup", "0::/" + cgroup + "\n");
  t.Write(d + "/statm", "200 100 0 0 0 0 0\n");
}

// A member whose process "runs" until stopped or told to exit; its
// snapshot is scripted; it records what the daemon told it.
class FakeMember : public DaemonMember {
 public:
  absl::Status Run(const std::atomic<bool>* stop) override {
    while (!stop->load() && !exit_now.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return absl::OkStatus();
  }
  void SetFastTarget(uint64_t bytes) override { target.store(bytes); }
  void SetRateLimit(double r) override { rate.store(r); }
  absl::Status Reconfigure(const WorkloadConfig& w) override {
    MutexLock l(&mu);
    if (w.placement.locality != locality) {
      return absl::FailedPreconditionError("locality changes the scanner");
    }
    weights_seen.push_back(w.promote_to);
    return absl::OkStatus();
  }
  MemberSnapshot Snapshot() const override {
    MutexLock l(&mu);
    return snap;
  }
  void Set(uint64_t fast, uint64_t hot, uint64_t samples) {
    MutexLock l(&mu);
    snap.fast_bytes = fast;
    snap.hot_bytes = hot;
    snap.samples = samples;
    snap.promoted_pages = samples / 10;
    snap.first_touches_dropped = samples / 4;
    snap.source = "pagefault";
  }
  void SetHotSlow(uint64_t bytes) {
    MutexLock l(&mu);
    snap.hot_slow_bytes = bytes;
  }
  // Net bytes its migrator moved onto the fast tier since its reading.
  void SetMoved(int64_t bytes) {
    MutexLock l(&mu);
    snap.fast_moved_bytes = bytes;
  }

  int serial = 0;  // which member this is (addresses get reused)
  std::atomic<bool> exit_now{false};
  std::atomic<uint64_t> target{0};
  std::atomic<double> rate{0};
  bool locality = false;
  mutable Mutex mu;
  MemberSnapshot snap;
  std::vector<std::string> weights_seen;
};

class DaemonLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    AddProcess(tree_, 100, "cache", "svc/a", 1000);
    AddProcess(tree_, 200, "db", "svc/b", 2000);
    auto fs = KernelFs::Open(tree_.root());
    ASSERT_TRUE(fs.ok());
    fs_.emplace(*std::move(fs));
  }

  std::unique_ptr<DaemonLoop> Make(const std::string& toml) {
    absl::StatusOr<DaemonConfig> c = ParseDaemonConfig(toml, "t.toml");
    EXPECT_TRUE(c.ok()) << c.status();
    DaemonParts parts;
    parts.fs = &*fs_;
    parts.fast_capacity_bytes = 8 * kGiB;
    if (free_bytes_ != 0 || free_reading_) {
      parts.fast_free = [this] {
        return FastTierFree{.room_bytes = free_bytes_,
                            .short_bytes = short_bytes_};
      };
    }
    parts.self = 1;
    parts.log = &log_;
    parts.on_selection = on_selection_;
    parts.machine = machine_;
    parts.process_cpu_s = process_cpu_s_;
    parts.instance = instance_;
    parts.stop = stop_;
    parts.factory = [this](const WorkloadConfig& w, const SelectedProcess& p)
        -> absl::StatusOr<std::unique_ptr<DaemonMember>> {
      ++made_[p.key.pid];
      if (on_make_) on_make_();
      if (refuse_.count(p.key.pid)) {
        return absl::FailedPreconditionError("pid was reused");
      }
      auto m = std::make_unique<FakeMember>();
      m->locality = w.placement.locality;
      m->serial = ++serial_;
      members_[p.key.pid] = m.get();
      return m;
    };
    return std::make_unique<DaemonLoop>(*c, parts);
  }

  // Five ticks in which a (pid 100) holds `a_fast` bytes with no hot set
  // and draws 10 samples a tick, and b (pid 200) draws 20000 and holds
  // `b_fast` with an 80 MiB hot set, `b_hot_slow` of it on the slow tier,
  // and `b_moved` moved onto the fast tier since its reading.
  void TickTwoMembers(DaemonLoop& loop, uint64_t a_fast, uint64_t b_fast,
                      uint64_t b_hot_slow, int64_t b_moved = 0) {
    constexpr uint64_t kMiB = 1ull << 20;
    for (int t = 0; t < 5; ++t) {
      a_samples_ += 10;
      b_samples_ += 20000;
      members_[100]->Set(a_fast, 0, a_samples_);
      members_[200]->Set(b_fast, 80 * kMiB, b_samples_);
      members_[200]->SetHotSlow(b_hot_slow);
      if (b_moved != 0) members_[200]->SetMoved(b_moved);
      loop.Tick();
    }
  }

  uint64_t a_samples_ = 0, b_samples_ = 0;  // TickTwoMembers' running rates
  FakeTree tree_;
  std::optional<KernelFs> fs_;
  std::ostringstream log_;
  std::map<int, FakeMember*> members_;
  std::map<int, int> made_;
  std::set<int> refuse_;
  int serial_ = 0;
  uint64_t free_bytes_ = 0;  // 0: no free-memory reading (unless set)
  bool free_reading_ = false;
  uint64_t short_bytes_ = 0;  // below the high watermark (of a node below low)
  std::function<void(const std::vector<ProcessKey>&)> on_selection_;
  std::function<MachineReport()> machine_;
  std::function<double()> process_cpu_s_;
  std::string instance_;
  const std::atomic<bool>* stop_ = nullptr;
  std::function<void()> on_make_;  // in the factory, before it makes one
};

constexpr char kTwo[] = R"(
[daemon]
rate_limit_mbps = 300
[[workload]]
name = "a"
cgroup = "svc/a"
rate_share = 2
[[workload]]
name = "b"
cgroup = "svc/b"
)";

TEST_F(DaemonLoopTest, StartsAMemberPerProcessAndSplitsTheBudget) {
  auto loop = Make(kTwo);
  loop->Tick();
  EXPECT_EQ(loop->members(), 2u);
  ASSERT_TRUE(members_.count(100) && members_.count(200));
  EXPECT_DOUBLE_EQ(members_[100]->rate.load(), 200e6);
  EXPECT_DOUBLE_EQ(members_[200]->rate.load(), 100e6);
  // The hot sets fit (none yet): no target.
  EXPECT_EQ(members_[100]->target.load(), kNoFastTarget);
  loop->Tick();
  EXPECT_EQ(made_[100], 1);  // not started twice
}

TEST_F(DaemonLoopTest, ALaterProcessIsPickedUpAndAnExitedOneDropped) {
  auto loop = Make(kTwo);
  loop->Tick();
  AddProcess(tree_, 150, "cache2", "svc/a/child", 3000);
  loop->Tick();
  EXPECT_EQ(loop->members(), 3u);
  ASSERT_TRUE(members_.count(150));
  // The rate of "a" is now split between its two processes.
  EXPECT_DOUBLE_EQ(members_[150]->rate.load(), 100e6);
  // 150 exits: its member ends by itself, and the process leaves /proc.
  members_[150]->exit_now = true;
  tree_.Remove("/proc/150/stat");
  for (int i = 0; i < 200 && loop->members() == 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    loop->Tick();
  }
  EXPECT_EQ(loop->members(), 2u);
  EXPECT_NE(log_.str().find("a: pid 150 ended"), std::string::npos)
      << log_.str();
}

// The selection can see a process leave before its member does (the
// member reads the exit at its next poll): the loop stops the member and
// says why, "ended" when the pid no longer names the process, "left the
// workload" when it moved out of the workload's cgroup.
TEST_F(DaemonLoopTest, ALeaverTheSelectionSeesFirstIsSaidToEndOrLeave) {
  auto loop = Make(kTwo);
  loop->Tick();
  AddProcess(tree_, 150, "cache2", "svc/a/child", 3000);
  AddProcess(tree_, 160, "cache3", "svc/a/child", 4000);
  loop->Tick();
  ASSERT_EQ(loop->members(), 4u);
  tree_.Remove("/proc/150/stat");                       // ended
  AddProcess(tree_, 160, "cache3", "svc/other", 4000);  // moved away
  loop->Tick();  // the members never exit by themselves here
  EXPECT_EQ(loop->members(), 2u);
  EXPECT_NE(log_.str().find("a: pid 150 ended"), std::string::npos)
      << log_.str();
  EXPECT_NE(log_.str().find("a: pid 160 left the workload"), std::string::npos)
      << log_.str();
}

TEST_F(DaemonLoopTest, AReusedPidIsANewProcess) {
  auto loop = Make(kTwo);
  loop->Tick();
  const int first = members_[200]->serial;
  // 200 exits and its pid goes to another process in the same cgroup.
  AddProcess(tree_, 200, "db", "svc/b", 9000);
  loop->Tick();
  EXPECT_EQ(made_[200], 2);
  EXPECT_NE(members_[200]->serial, first);
  EXPECT_EQ(loop->members(), 2u);
}

// The machine sampler's pid map is rebuilt from each round's selection:
// the reused pid's new start time replaces the old one at once.
TEST_F(DaemonLoopTest, EachRoundHandsTheSelectionToTheSamplerMap) {
  std::vector<std::vector<ProcessKey>> rounds;
  on_selection_ = [&rounds](const std::vector<ProcessKey>& live) {
    rounds.push_back(live);
  };
  auto loop = Make(kTwo);
  loop->Tick();
  AddProcess(tree_, 200, "db", "svc/b", 9000);
  loop->Tick();
  ASSERT_EQ(rounds.size(), 2u);
  EXPECT_EQ(rounds[0], (std::vector<ProcessKey>{{100, 1000}, {200, 2000}}));
  EXPECT_EQ(rounds[1], (std::vector<ProcessKey>{{100, 1000}, {200, 9000}}));
}

TEST_F(DaemonLoopTest, AProcessTheFactoryRefusesIsNotRetried) {
  refuse_.insert(200);
  auto loop = Make(kTwo);
  loop->Tick();
  loop->Tick();
  EXPECT_EQ(made_[200], 1);
  EXPECT_EQ(loop->members(), 1u);
  EXPECT_NE(log_.str().find("b: pid 200 (db): not managed: pid was reused"),
            std::string::npos)
      << log_.str();
}

// Two workloads whose hot sets (6 GiB each) exceed the 8 GiB fast tier.
TEST_F(DaemonLoopTest, ShortOfFastMemoryTheHotterWinsWithoutFloors) {
  auto loop = Make(kTwo);
  loop->Tick();
  members_[100]->Set(4 * kGiB, 6 * kGiB, 600000);  // hotter
  members_[200]->Set(4 * kGiB, 6 * kGiB, 60000);
  loop->Tick();
  EXPECT_EQ(members_[100]->target.load(), 6 * kGiB);
  EXPECT_EQ(members_[200]->target.load(), 2 * kGiB);
}

// Benefit is a recent rate, not the total since a member started: a, which
// started first and piled up samples, then cooled (no new samples), loses
// its share to b, which samples steadily now. With totals a would keep it.
TEST_F(DaemonLoopTest, ShortOfFastMemoryACooledWorkloadLosesToTheHotterOne) {
  auto loop = Make(kTwo);
  loop->Tick();
  uint64_t a = 0, b = 0;
  for (int t = 0; t < 100; ++t) {  // a: 50000 samples a tick for 100 ticks
    a += 50000;
    members_[100]->Set(6 * kGiB, 6 * kGiB, a);
    members_[200]->Set(2 * kGiB, 6 * kGiB, b);
    loop->Tick();
  }
  EXPECT_EQ(members_[100]->target.load(), 6 * kGiB);
  for (int t = 0; t < 30; ++t) {  // then a cools; b samples as a did
    a += 100;
    b += 50000;
    members_[100]->Set(6 * kGiB, 6 * kGiB, a);
    members_[200]->Set(2 * kGiB, 6 * kGiB, b);
    loop->Tick();
  }
  // b's 1.5M samples are fewer than a's 5M in all: only a rate sees it.
  EXPECT_EQ(members_[200]->target.load(), 6 * kGiB);
  EXPECT_EQ(members_[100]->target.load(), 2 * kGiB);
}

TEST_F(DaemonLoopTest, ShortOfFastMemoryEachKeepsItsFloor) {
  auto loop = Make(R"(
[[workload]]
name = "a"
cgroup = "svc/a"
fast_floor = "3GiB"
[[workload]]
name = "b"
cgroup = "svc/b"
fast_floor = "50%"
)");
  loop->Tick();
  members_[100]->Set(4 * kGiB, 6 * kGiB, 600000);  // hotter
  members_[200]->Set(4 * kGiB, 6 * kGiB, 60000);
  loop->Tick();
  EXPECT_EQ(members_[200]->target.load(), 4 * kGiB);  // its floor
  EXPECT_EQ(members_[100]->target.load(), 4 * kGiB);
}

// Memory of processes the daemon does not manage is not shared out: with
// 3 GiB held by the workloads and 2 GiB free, 5 GiB are shared, not 8.
TEST_F(DaemonLoopTest, SharesWhatTheWorkloadsHoldPlusTheFreeRoom) {
  free_bytes_ = 2 * kGiB;
  auto loop = Make(kTwo);
  loop->Tick();
  members_[100]->Set(2 * kGiB, 4 * kGiB, 600000);
  members_[200]->Set(1 * kGiB, 4 * kGiB, 60000);
  loop->Tick();
  EXPECT_EQ(members_[100]->target.load(), 4 * kGiB);
  EXPECT_EQ(members_[200]->target.load(), 1 * kGiB);
}

// The guest test's stuck state (daemon_fair_vm_test): the fast node is
// below its high watermark (no room: free above high 0); b, the hotter,
// holds 82 MiB of fast memory, 16 MiB of it cold pages its engine never
// sampled (it cannot demote them), and 13 MiB of its 80 MiB hot set is
// still on the slow node; a, cooled down (no hot set in its last rounds),
// holds 26 MiB. Taking b's 80 MiB hot set to fit in its 82 MiB, the daemon
// set no shares: nobody demoted and b stayed at 84% of its hot set. b must
// get room for the 13 MiB from a, and a keeps the rest of what it holds.
TEST_F(DaemonLoopTest, ShortOfRoomTheColderGivesWhatTheHottersHotSetNeeds) {
  constexpr uint64_t kMiB = 1ull << 20;
  free_reading_ = true;  // free above the high watermark: 0
  auto loop = Make(kTwo);
  loop->Tick();
  TickTwoMembers(*loop, 26 * kMiB, 82 * kMiB, 13 * kMiB);
  EXPECT_EQ(members_[200]->target.load(), 95 * kMiB);
  EXPECT_EQ(members_[100]->target.load(), 13 * kMiB);
  // Once b's hot set is up (nothing of it on the slow node), it fits: no
  // shares, and a keeps what it holds.
  a_samples_ += 10;
  b_samples_ += 20000;
  members_[100]->Set(13 * kMiB, 0, a_samples_);
  members_[200]->Set(95 * kMiB, 80 * kMiB, b_samples_);
  members_[200]->SetHotSlow(0);
  loop->Tick();
  EXPECT_EQ(members_[200]->target.load(), kNoFastTarget);
  EXPECT_EQ(members_[100]->target.load(), kNoFastTarget);
  // a's burst (20 MiB of its hot set written, on the slow node) does not
  // cut b back to its 80 MiB hot set: b would demote what its engine
  // tracks, its hot pages, not the cold ones it holds.
  a_samples_ += 2000;
  b_samples_ += 20000;
  members_[100]->Set(13 * kMiB, 20 * kMiB, a_samples_);
  members_[100]->SetHotSlow(20 * kMiB);
  members_[200]->Set(95 * kMiB, 80 * kMiB, b_samples_);
  loop->Tick();
  EXPECT_EQ(members_[200]->target.load(), 95 * kMiB);
  EXPECT_EQ(members_[100]->target.load(), 13 * kMiB);
}

// The fast node below its low watermark, 15 MiB short of its high one,
// with both hot sets on the fast tier (nothing wanted): the 15 MiB come
// from a, the colder, not from each member's own coldest pages; b keeps
// what it holds (its view then reports no shortage: share_view.h).
TEST_F(DaemonLoopTest, BelowTheLowWatermarkTheColderMakesTheRoom) {
  constexpr uint64_t kMiB = 1ull << 20;
  free_reading_ = true;
  short_bytes_ = 15 * kMiB;
  auto loop = Make(kTwo);
  loop->Tick();
  uint64_t a = 0, b = 0;
  for (int t = 0; t < 5; ++t) {
    a += 100;
    b += 20000;
    members_[100]->Set(40 * kMiB, 40 * kMiB, a);
    members_[200]->Set(60 * kMiB, 60 * kMiB, b);
    loop->Tick();
  }
  EXPECT_EQ(members_[200]->target.load(), 60 * kMiB);
  EXPECT_EQ(members_[100]->target.load(), 25 * kMiB);
  // Back above the low watermark: no shares.
  short_bytes_ = 0;
  loop->Tick();
  EXPECT_EQ(members_[200]->target.load(), kNoFastTarget);
  EXPECT_EQ(members_[100]->target.load(), kNoFastTarget);
}

// A node the kernel refused (a migrator backed off after ENOMEM) is short
// below its high watermark, not only below its low one: the kernel's own
// reserve can lie between the two (daemon_loop.h AddNodeFree).
TEST(AddNodeFreeTest, ARefusedNodeBelowItsHighWatermarkIsShort) {
  constexpr uint64_t kMiB = 1ull << 20;
  FastTierFree f;
  AddNodeFree(16 * kMiB, 10 * kMiB, 20 * kMiB, /*refused=*/false, f);
  EXPECT_EQ(f.short_bytes, 0u);  // between the watermarks
  EXPECT_EQ(f.room_bytes, 0u);
  AddNodeFree(16 * kMiB, 10 * kMiB, 20 * kMiB, /*refused=*/true, f);
  EXPECT_EQ(f.short_bytes, 4 * kMiB);
  AddNodeFree(8 * kMiB, 10 * kMiB, 20 * kMiB, /*refused=*/false, f);
  EXPECT_EQ(f.short_bytes, 16 * kMiB);  // below the low one: as before
  AddNodeFree(30 * kMiB, 10 * kMiB, 20 * kMiB, /*refused=*/true, f);
  EXPECT_EQ(f.room_bytes, 10 * kMiB);   // above the high one: room, refused
  EXPECT_EQ(f.short_bytes, 16 * kMiB);  // or not
}

// daemon_fair_vm_test's swing: b, the hotter, read 54 MiB on the fast
// tier at its last round, with 26 MiB of its 80 MiB hot set on the slow
// node; its migrator has promoted 23 MiB of that since, which took the
// last of the free room (read now: none). a, cooled, holds 8 MiB. With the
// readings alone the daemon shared out 8 + 54 + 0 = 62 MiB, and b's target
// fell below the 77 MiB it holds (its engine demoted 10 MiB of its hot
// set, to promote it again once its reading caught up). Counted now, b
// holds 77 MiB and gets its 80 MiB hot set, from a.
TEST_F(DaemonLoopTest, MovesDoneSinceAMembersLastReadingCountInWhatItHolds) {
  constexpr uint64_t kMiB = 1ull << 20;
  free_reading_ = true;  // no room above the high watermark
  auto loop = Make(kTwo);
  loop->Tick();
  TickTwoMembers(*loop, 8 * kMiB, 54 * kMiB, 26 * kMiB, 23 * kMiB);
  EXPECT_EQ(members_[200]->target.load(), 80 * kMiB);
  EXPECT_EQ(members_[100]->target.load(), 5 * kMiB);
  // The status and metrics say what each holds now.
  EXPECT_TRUE(absl::StrContains(
      loop->MetricsProm(),
      absl::StrCat("hotpage_workload_fast_bytes{workload=\"b\"} ", 77 * kMiB,
                   "\n")))
      << loop->MetricsProm();
}

TEST_F(DaemonLoopTest, ACapHoldsEvenWithRoom) {
  auto loop = Make(R"(
[[workload]]
name = "a"
cgroup = "svc/a"
fast_cap = "1GiB"
[[workload]]
name = "b"
cgroup = "svc/b"
)");
  loop->Tick();
  members_[100]->Set(kGiB / 2, 2 * kGiB, 1000);
  loop->Tick();
  EXPECT_EQ(members_[100]->target.load(), kGiB);
  EXPECT_EQ(members_[200]->target.load(), kNoFastTarget);
}

TEST_F(DaemonLoopTest, ReloadKeepsMembersAndRestartsWhatMustRestart) {
  auto loop = Make(kTwo);
  loop->Tick();
  FakeMember* a = members_[100];
  const int a_serial = a->serial;
  const int b_serial = members_[200]->serial;
  absl::StatusOr<DaemonConfig> next = ParseDaemonConfig(R"(
[[workload]]
name = "a"
cgroup = "svc/a"
promote_to = "0"
[[workload]]
name = "b"
cgroup = "svc/b"
locality = true
)",
                                                        "t.toml");
  ASSERT_TRUE(next.ok());
  loop->Reload(*next);
  // "a" kept (same member, new rules); "b" restarted (locality).
  EXPECT_EQ(loop->members(), 1u);
  {
    MutexLock l(&a->mu);
    EXPECT_EQ(a->weights_seen, (std::vector<std::string>{"0"}));
  }
  loop->Tick();
  EXPECT_EQ(members_[100]->serial, a_serial);
  EXPECT_NE(members_[200]->serial, b_serial);
  EXPECT_EQ(made_[200], 2);
  EXPECT_EQ(loop->members(), 2u);
  // A workload removed by a reload is stopped.
  absl::StatusOr<DaemonConfig> only_b = ParseDaemonConfig(
      "[[workload]]\nname = \"b\"\ncgroup = \"svc/b\"\nlocality = true\n",
      "t.toml");
  ASSERT_TRUE(only_b.ok());
  loop->Reload(*only_b);
  EXPECT_EQ(loop->members(), 1u);
}

TEST_F(DaemonLoopTest, StatusAndLabelledMetrics) {
  AddProcess(tree_, 300, "odd", "svc/a/x\"y", 4000);
  auto loop = Make(kTwo);
  loop->Tick();
  members_[100]->Set(kGiB, 2 * kGiB, 1000);
  loop->Tick();
  const std::string status = loop->StatusJson();
  absl::StatusOr<Json> doc = ParseJson(status);
  ASSERT_TRUE(doc.ok()) << doc.status() << "\n" << status;
  EXPECT_NE(status.find("\"name\": \"a\""), std::string::npos) << status;
  EXPECT_NE(status.find("\"pid\": 100"), std::string::npos);
  EXPECT_NE(status.find("\"fast_bytes\": 1073741824"), std::string::npos);
  const std::string prom = loop->MetricsProm();
  EXPECT_NE(prom.find("# TYPE hotpage_workload_fast_bytes gauge"),
            std::string::npos)
      << prom;
  EXPECT_NE(prom.find("hotpage_workload_fast_bytes{workload=\"a\"} "
                      "1073741824"),
            std::string::npos)
      << prom;
  EXPECT_NE(prom.find("hotpage_process_fast_bytes{workload=\"a\",pid=\"100\","
                      "cgroup=\"svc/a\"} 1073741824"),
            std::string::npos)
      << prom;
  // Label values are escaped.
  EXPECT_NE(prom.find("cgroup=\"svc/a/x\\\"y\""), std::string::npos) << prom;
  EXPECT_NE(prom.find("hotpage_workload_promoted_pages_total{workload=\"a\"} "
                      "100"),
            std::string::npos)
      << prom;
  // Hint faults' first touches, per process and per workload.
  EXPECT_NE(status.find("\"first_touches_dropped\": 250"), std::string::npos)
      << status;
  EXPECT_NE(prom.find("hotpage_workload_first_touches_dropped_total{workload="
                      "\"a\"} 250"),
            std::string::npos)
      << prom;
}

TEST_F(DaemonLoopTest, StopJoinsEveryMember) {
  auto loop = Make(kTwo);
  loop->Tick();
  const auto t0 = std::chrono::steady_clock::now();
  loop->Stop();
  EXPECT_EQ(loop->members(), 0u);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
}

// The machine's counters and threads are published once, as machine-level
// series with the daemon's label and no workload's; the daemon's CPU is
// every member's (ended ones included) plus the machine threads'.
TEST_F(DaemonLoopTest, MachineSeriesAndTheDaemonsTotalCpu) {
  instance_ = "/run/hotpage/a.sock";
  machine_ = [] {
    MachineReport m;
    MachineSamplerReport r;
    r.source = "pebs";
    r.routed = 90;
    r.unmapped = 11;
    r.inbox_full = 2;
    r.throttle = 7;
    r.lost = 3;
    r.events = 8;
    r.mapped = 2;
    m.samplers.push_back(r);
    m.threads.push_back({"migrator", 2.0});
    m.threads.push_back({"sampler pebs", 0.25});
    return m;
  };
  auto loop = Make(kTwo);
  loop->Tick();
  ASSERT_TRUE(members_.count(100) && members_.count(200));
  {
    MutexLock l(&members_[100]->mu);
    members_[100]->snap.cpu_seconds = 1.0;
  }
  {
    MutexLock l(&members_[200]->mu);
    members_[200]->snap.cpu_seconds = 0.5;
  }
  loop->Tick();
  absl::StatusOr<Json> doc = ParseJson(loop->StatusJson());
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_DOUBLE_EQ(JsonMember(*doc, "cpu_seconds")->get<double>(), 3.75);
  const Json* machine = JsonMember(*doc, "machine");
  ASSERT_NE(machine, nullptr);
  EXPECT_DOUBLE_EQ(JsonMember(*machine, "cpu_seconds")->get<double>(), 2.25);
  const Json* samplers = JsonMember(*machine, "samplers");
  ASSERT_TRUE(samplers != nullptr && samplers->is_array() &&
              samplers->size() == 1);
  EXPECT_EQ(JsonMember((*samplers)[0], "throttle")->get<double>(), 7);
  EXPECT_EQ(JsonMember((*samplers)[0], "unmapped")->get<double>(), 11);
  EXPECT_EQ(JsonMember(*machine, "self_memory"), nullptr);
  const Json* w = JsonMember(*doc, "workloads");
  EXPECT_DOUBLE_EQ(JsonMember((*w)[0], "cpu_seconds")->get<double>(), 1.0);

  const std::string prom = loop->MetricsProm();
  for (const char* line : {
           "hotpage_daemon_cpu_seconds_total{daemon=\"/run/hotpage/a.sock\"} "
           "3.75\n",
           "hotpage_machine_thread_cpu_seconds_total{daemon=\"/run/hotpage/"
           "a.sock\",thread=\"migrator\"} 2\n",
           "hotpage_machine_sampler_throttle_total{daemon=\"/run/hotpage/"
           "a.sock\",source=\"pebs\"} 7\n",
           "hotpage_machine_sampler_routed_samples_total{daemon=\"/run/hotpage/"
           "a.sock\",source=\"pebs\"} 90\n",
           "hotpage_machine_sampler_lost_records_total{daemon=\"/run/hotpage/"
           "a.sock\",source=\"pebs\"} 3\n",
           "hotpage_workload_cpu_seconds_total{workload=\"b\"} 0.5\n",
       }) {
    EXPECT_NE(prom.find(line), std::string::npos) << line << prom;
  }
  // Counted once, for the machine: no machine series names a workload.
  for (absl::string_view l : absl::StrSplit(prom, '\n')) {
    if (absl::StartsWith(l, "hotpage_machine_") ||
        absl::StartsWith(l, "hotpage_daemon_")) {
      EXPECT_FALSE(absl::StrContains(l, "workload=")) << l;
    }
  }

  // A member ends: its CPU stays in the daemon's total.
  members_[200]->exit_now = true;
  tree_.Remove("/proc/200/stat");
  for (int i = 0; i < 200 && loop->members() == 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    loop->Tick();
  }
  ASSERT_EQ(loop->members(), 1u);
  doc = ParseJson(loop->StatusJson());
  ASSERT_TRUE(doc.ok());
  EXPECT_DOUBLE_EQ(JsonMember(*doc, "cpu_seconds")->get<double>(), 3.75);
}

// Where the daemon's own memory goes (cmd_daemon sets it at start-up,
// tools/self_memory.h) is in the machine object, once (absent when unset:
// MachineSeriesAndTheDaemonsTotalCpu).
TEST_F(DaemonLoopTest, TheMachineSaysWhereTheDaemonsOwnMemoryGoes) {
  machine_ = [] {
    MachineReport m;
    m.self_memory = MachineSelfMemory{"slow", "preferred-many", {2, 3}};
    return m;
  };
  auto loop = Make(kTwo);
  loop->Tick();
  absl::StatusOr<Json> doc = ParseJson(loop->StatusJson());
  ASSERT_TRUE(doc.ok()) << doc.status();
  const Json* machine = JsonMember(*doc, "machine");
  ASSERT_NE(machine, nullptr);
  const Json* self = JsonMember(*machine, "self_memory");
  ASSERT_TRUE(self != nullptr && self->is_object()) << loop->StatusJson();
  EXPECT_EQ(JsonMember(*self, "requested")->get<std::string>(), "slow");
  EXPECT_EQ(JsonMember(*self, "mode")->get<std::string>(), "preferred-many");
  const Json* nodes = JsonMember(*self, "nodes");
  ASSERT_TRUE(nodes != nullptr && nodes->is_array() && nodes->size() == 2);
  EXPECT_EQ((*nodes)[0].get<int>(), 2);
  EXPECT_EQ((*nodes)[1].get<int>(), 3);
  // And for Prometheus, one info series.
  const std::string prom = loop->MetricsProm();
  EXPECT_TRUE(
      absl::StrContains(prom, "# TYPE hotpage_daemon_self_memory_info gauge"))
      << prom;
  EXPECT_TRUE(absl::StrContains(
      prom,
      "hotpage_daemon_self_memory_info{daemon=\"\",requested=\"slow\","
      "mode=\"preferred-many\",nodes=\"2-3\"} 1"))
      << prom;
}

// With the process's CPU known, what no member and no machine thread
// lists is the machine thread "other": the total is the process's.
TEST_F(DaemonLoopTest, TheUnlistedRestOfTheProcessCpuIsOther) {
  machine_ = [] {
    MachineReport m;
    m.threads.push_back({"migrator", 2.0});
    return m;
  };
  process_cpu_s_ = [] { return 5.0; };
  auto loop = Make(kTwo);
  loop->Tick();
  {
    MutexLock l(&members_[100]->mu);
    members_[100]->snap.cpu_seconds = 1.5;
  }
  loop->Tick();
  absl::StatusOr<Json> doc = ParseJson(loop->StatusJson());
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_DOUBLE_EQ(JsonMember(*doc, "cpu_seconds")->get<double>(), 5.0);
  const Json* machine = JsonMember(*doc, "machine");
  EXPECT_DOUBLE_EQ(JsonMember(*machine, "cpu_seconds")->get<double>(), 3.5);
  EXPECT_NE(loop->MetricsProm().find(
                "hotpage_machine_thread_cpu_seconds_total{daemon=\"\","
                "thread=\"other\"} 1.5\n"),
            std::string::npos)
      << loop->MetricsProm();
}

// A stop that comes while a tick starts members (each start held up here)
// returns the tick at the next member, not after all of them.
TEST_F(DaemonLoopTest, AStopMidTickReturnsAtTheNextMember) {
  for (int pid = 300; pid < 310; ++pid) {
    AddProcess(tree_, pid, "w", "svc/a", 5000 + pid);
  }
  std::atomic<bool> stop{false};
  stop_ = &stop;
  int made = 0;
  on_make_ = [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (++made == 2) stop.store(true);
  };
  auto loop = Make(kTwo);
  const absl::Time t0 = absl::Now();
  loop->Tick();
  const absl::Duration took = absl::Now() - t0;
  // 11 processes to start in "a" and one in "b": two were started.
  EXPECT_EQ(made, 2);
  EXPECT_EQ(loop->members(), 2u);
  // The whole tick would take 12 starts of >= 20 ms: it took about 2.
  EXPECT_LT(took, absl::Milliseconds(20) * 12 / 4);
  loop->Stop();
}

}  // namespace
}  // namespace hotpage
