#include "sampler/damon/damon_source.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "tools/base/kernel/fake_sysfs_writer.h"
#include "tools/base/kernel/fake_tree.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {
namespace {

constexpr char kAdmin[] = "/sys/kernel/mm/damon/admin";
constexpr pid_t kPid = 4321;
constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kBase = 0x7f0000000000;

// Plays DAMON's sysfs (mm/damon/sysfs*.c, 6.12) on a FakeTree: directories
// appear when their nr_* file is written, `state` takes commands, a running
// kdamond makes nr_kdamonds EBUSY, a stopped one makes `off` EPERM and the
// update command EINVAL, and the target's /proc/PID can vanish.
class FakeDamon {
 public:
  FakeDamon() : log_(&tree_) {
    tree_.Write(Path("kdamonds/nr_kdamonds"), "0\n");
    tree_.Mkdir(absl::StrCat("/proc/", kPid));
    tree_.Write(
        "/proc/self/stat",
        "99 (hot page) R 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 4242 0 0\n");
    tree_.Mkdir("/run");
    state_dir_ = tree_.root() + "/run/hotpage";
    log_.set_hook([this](absl::string_view path, absl::string_view value) {
      return Hook(path, value);
    });
  }

  static std::string Path(absl::string_view rel) {
    return absl::StrCat(kAdmin, "/", rel);
  }

  // Fail the n-th (0-based) write whose "rel=value" matches `what` with err;
  // n = -1: every one.
  void Inject(const std::string& what, int err, int times = -1) {
    inject_[what] = {err, times};
  }

  void SetRegions(std::vector<DamonRegion> r) { regions_ = std::move(r); }
  void set_avail_operations(std::string s) { avail_operations_ = std::move(s); }
  // Runs `fn` when "rel=value" is written, before the kernel acts on it.
  void Before(const std::string& what, std::function<void()> fn) {
    before_[what] = std::move(fn);
  }

  void TargetExits() {
    RemoveAll(absl::StrCat("/proc/", kPid));
    if (running()) StopKdamond();
  }
  void TurnedOffBySomeoneElse() { StopKdamond(); }

  std::string Read(absl::string_view rel) {
    auto fs = KernelFs::Open(tree_.root());
    auto s = fs->ReadTrimmed(Path(rel));
    return s.ok() ? *s : "<" + std::string(s.status().message()) + ">";
  }

  // With the state directory in the tree and notices collected in
  // warnings(), unless `o` says otherwise.
  absl::StatusOr<std::unique_ptr<DamonSource>> Start(DamonOptions o = {}) {
    auto fs = KernelFs::Open(tree_.root());
    if (!fs.ok()) return fs.status();
    if (o.state_dir == kDefaultStateDir) o.state_dir = state_dir_;
    if (!o.warn)
      o.warn = [this](const std::string& line) { warnings_.push_back(line); };
    return DamonSource::Start(kPid, o, std::move(*fs), log_.NewWriter());
  }

  // The real directory behind DamonOptions::state_dir, and its files.
  const std::string& state_dir() const { return state_dir_; }
  std::string StateFile() const { return state_dir_ + "/damon-state"; }
  std::string LockFile() const { return state_dir_ + "/damon.lock"; }
  const std::vector<std::string>& warnings() const { return warnings_; }

  // What a hotpage that created kdamond 0 for `target` and was then killed
  // leaves: the kdamond (running, unless `on` is false) and its state file.
  void LeaveStaleKdamond(pid_t target, bool on = true, int64_t dead_pid = 999) {
    std::unique_ptr<SysfsWriter> w = log_.NewWriter();
    const std::string c = "kdamonds/0/contexts/";
    for (const auto& [rel, value] :
         std::vector<std::pair<std::string, std::string>>{
             {"kdamonds/nr_kdamonds", "1"},
             {"kdamonds/0/contexts/nr_contexts", "1"},
             {c + "0/targets/nr_targets", "1"},
             {c + "0/targets/0/pid_target", absl::StrCat(target)},
             {c + "0/schemes/nr_schemes", "1"}}) {
      EXPECT_TRUE(w->Write(Path(rel), value).ok()) << rel;
    }
    if (on) {
      tree_.Mkdir(absl::StrCat("/proc/", target));
      EXPECT_TRUE(w->Write(Path("kdamonds/0/state"), "on").ok());
    }
    WriteState(absl::StrCat("hotpage-damon-state 1\npid ", dead_pid,
                            "\nstart_time 17\nkdamond 0\ntarget_pid ", target,
                            "\noperations vaddr\n"));
    log_.clear();
  }
  void WriteState(absl::string_view text) {
    mkdir(state_dir_.c_str(), 0700);
    std::ofstream(StateFile()) << text;
  }

  // The writes, relative to the admin dir ("kdamonds/0/state=on").
  std::vector<std::string> Writes() const {
    std::vector<std::string> out;
    for (std::string l : log_.Lines()) {
      out.push_back(
          std::string(absl::StripPrefix(l, absl::StrCat(kAdmin, "/"))));
    }
    return out;
  }
  void ClearWrites() { log_.clear(); }
  FakeTree& tree() { return tree_; }
  // The kdamond runs when its state file says so (also when another
  // process, a forked child, turned it on).
  bool running() const {
    std::ifstream in(tree_.root() + Path("kdamonds/0/state"));
    std::string state;
    in >> state;
    return state == "on";
  }
  bool pattern_widened() const { return widened_; }

 private:
  int Hook(absl::string_view path, absl::string_view value) {
    std::string rel(absl::StripPrefix(path, absl::StrCat(kAdmin, "/")));
    auto b = before_.find(absl::StrCat(rel, "=", value));
    if (b != before_.end()) b->second();
    auto it = inject_.find(absl::StrCat(rel, "=", value));
    if (it == inject_.end()) it = inject_.find(rel);
    if (it != inject_.end() && it->second.times != 0) {
      if (it->second.times > 0) --it->second.times;
      return it->second.err;
    }
    if (rel == "kdamonds/nr_kdamonds") {
      if (running()) return EBUSY;
      RemoveAll(Path("kdamonds"));
      int n = std::stoi(std::string(value));
      tree_.Write(Path("kdamonds/nr_kdamonds"), absl::StrCat(n, "\n"));
      for (int i = 0; i < n; ++i) {
        tree_.Write(Path(absl::StrCat("kdamonds/", i, "/state")), "off\n");
        tree_.Write(Path(absl::StrCat("kdamonds/", i, "/pid")), "-1\n");
        tree_.Write(Path(absl::StrCat("kdamonds/", i, "/contexts/nr_contexts")),
                    "0\n");
      }
      return FakeSysfsLog::kHandled;
    }
    const std::string c = "kdamonds/0/contexts/0";
    if (rel == "kdamonds/0/contexts/nr_contexts") {
      if (value != "1") return EINVAL;
      tree_.Write(Path(c + "/avail_operations"), avail_operations_);
      tree_.Write(Path(c + "/operations"), "vaddr\n");
      for (const char* f : {"sample_us", "aggr_us", "update_us"}) {
        tree_.Write(Path(c + "/monitoring_attrs/intervals/" + f), "0\n");
      }
      tree_.Write(Path(c + "/monitoring_attrs/nr_regions/min"), "10\n");
      tree_.Write(Path(c + "/monitoring_attrs/nr_regions/max"), "1000\n");
      tree_.Write(Path(c + "/targets/nr_targets"), "0\n");
      tree_.Write(Path(c + "/schemes/nr_schemes"), "0\n");
      return 0;
    }
    if (rel == c + "/targets/nr_targets") {
      tree_.Write(Path(c + "/targets/0/pid_target"), "0\n");
      tree_.Write(Path(c + "/targets/0/regions/nr_regions"), "0\n");
      return 0;
    }
    if (rel == c + "/schemes/nr_schemes") {
      const std::string s = c + "/schemes/0";
      tree_.Write(Path(s + "/action"), "stat\n");
      for (const char* f : {"sz", "nr_accesses", "age"}) {
        tree_.Write(Path(s + "/access_pattern/" + f + "/min"), "0\n");
        tree_.Write(Path(s + "/access_pattern/" + f + "/max"), "0\n");
      }
      tree_.Write(Path(s + "/tried_regions/total_bytes"), "0\n");
      return 0;
    }
    if (rel == "kdamonds/0/state") {
      if (value == "on") {
        if (running()) return EBUSY;
        auto fs = KernelFs::Open(tree_.root());
        if (!fs->Exists(
                absl::StrCat("/proc/", Read(c + "/targets/0/pid_target"))))
          return EINVAL;
        widened_ =
            Read(c + "/schemes/0/access_pattern/sz/max") ==
                "18446744073709551615" &&
            Read(c + "/schemes/0/access_pattern/nr_accesses/max") ==
                "4294967295" &&
            Read(c + "/schemes/0/access_pattern/age/max") == "4294967295";
        tree_.Write(Path("kdamonds/0/state"), "on\n");
        tree_.Write(Path("kdamonds/0/pid"), "777\n");
        return FakeSysfsLog::kHandled;
      }
      if (value == "off") {
        if (!running()) return EPERM;
        StopKdamond();
        return FakeSysfsLog::kHandled;
      }
      if (value == "update_schemes_tried_regions") {
        if (!running()) return EINVAL;
        const std::string dir = c + "/schemes/0/tried_regions";
        RemoveAll(Path(dir));
        uint64_t total = 0;
        for (size_t i = 0; i < regions_.size(); ++i) {
          const DamonRegion& r = regions_[i];
          const std::string d = absl::StrCat(dir, "/", i);
          tree_.Write(Path(d + "/start"), absl::StrCat(r.start, "\n"));
          tree_.Write(Path(d + "/end"), absl::StrCat(r.end, "\n"));
          tree_.Write(Path(d + "/nr_accesses"),
                      absl::StrCat(r.nr_accesses, "\n"));
          tree_.Write(Path(d + "/age"), absl::StrCat(r.age, "\n"));
          total += r.end - r.start;
        }
        tree_.Write(Path(dir + "/total_bytes"), absl::StrCat(total, "\n"));
        return FakeSysfsLog::kHandled;
      }
      return EINVAL;
    }
    return 0;
  }

  void StopKdamond() {
    tree_.Write(Path("kdamonds/0/state"), "off\n");
    tree_.Write(Path("kdamonds/0/pid"), "-1\n");
  }
  void RemoveAll(const std::string& path) {
    std::error_code ec;
    std::filesystem::remove_all(tree_.root() + path, ec);
  }

  struct Injection {
    int err;
    int times;
  };
  FakeTree tree_;
  FakeSysfsLog log_;
  std::map<std::string, Injection> inject_;
  std::vector<DamonRegion> regions_;
  std::string avail_operations_ = "vaddr\nfvaddr\npaddr\n";
  std::map<std::string, std::function<void()>> before_;
  std::string state_dir_;
  std::vector<std::string> warnings_;
  bool widened_ = false;
};

// The exact setup sequence of damon_source.h, with default options.
const std::vector<std::string> kSetup = {
    "kdamonds/nr_kdamonds=1",
    "kdamonds/0/contexts/nr_contexts=1",
    "kdamonds/0/contexts/0/operations=vaddr",
    "kdamonds/0/contexts/0/monitoring_attrs/intervals/sample_us=5000",
    "kdamonds/0/contexts/0/monitoring_attrs/intervals/aggr_us=100000",
    "kdamonds/0/contexts/0/monitoring_attrs/intervals/update_us=1000000",
    "kdamonds/0/contexts/0/monitoring_attrs/nr_regions/min=100",
    "kdamonds/0/contexts/0/monitoring_attrs/nr_regions/max=1000",
    "kdamonds/0/contexts/0/targets/nr_targets=1",
    "kdamonds/0/contexts/0/targets/0/pid_target=4321",
    "kdamonds/0/contexts/0/schemes/nr_schemes=1",
    "kdamonds/0/contexts/0/schemes/0/action=stat",
    "kdamonds/0/contexts/0/schemes/0/access_pattern/sz/min=0",
    "kdamonds/0/contexts/0/schemes/0/access_pattern/sz/"
    "max=18446744073709551615",
    "kdamonds/0/contexts/0/schemes/0/access_pattern/nr_accesses/min=0",
    "kdamonds/0/contexts/0/schemes/0/access_pattern/nr_accesses/max=4294967295",
    "kdamonds/0/contexts/0/schemes/0/access_pattern/age/min=0",
    "kdamonds/0/contexts/0/schemes/0/access_pattern/age/max=4294967295",
    "kdamonds/0/state=on",
};

std::vector<std::string> Concat(std::vector<std::string> a,
                                const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(DamonSource, ExactWriteSequenceThenTeardown) {
  FakeDamon k;
  auto src = k.Start();
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_EQ(k.Writes(), kSetup);
  EXPECT_TRUE(k.running());
  EXPECT_TRUE(k.pattern_widened());
  EXPECT_TRUE((*src)->running());
  EXPECT_EQ((*src)->stats().kdamond_pid, 777);
  EXPECT_EQ((*src)->max_nr_accesses(), 20u);

  ASSERT_TRUE((*src)->Stop().ok());
  EXPECT_EQ(k.Writes(),
            Concat(kSetup, {"kdamonds/0/state=off", "kdamonds/nr_kdamonds=0"}));
  EXPECT_EQ(k.Read("kdamonds/nr_kdamonds"), "0");
  EXPECT_FALSE((*src)->running());
  // Idempotent, also through the destructor: nothing more is written.
  EXPECT_TRUE((*src)->Stop().ok());
  src->reset();
  EXPECT_EQ(k.Writes().size(), kSetup.size() + 2);
}

TEST(DamonSource, OptionsReachTheKernelFiles) {
  FakeDamon k;
  DamonOptions o;
  o.sample_us = 1000;
  o.aggr_us = 50000;
  o.update_us = 500000;
  o.min_nr_regions = 20;
  o.max_nr_regions = 2000;
  auto src = k.Start(o);
  ASSERT_TRUE(src.ok()) << src.status();
  const std::string a = "kdamonds/0/contexts/0/monitoring_attrs/";
  EXPECT_EQ(k.Read(a + "intervals/sample_us"), "1000");
  EXPECT_EQ(k.Read(a + "intervals/aggr_us"), "50000");
  EXPECT_EQ(k.Read(a + "intervals/update_us"), "500000");
  EXPECT_EQ(k.Read(a + "nr_regions/min"), "20");
  EXPECT_EQ(k.Read(a + "nr_regions/max"), "2000");
  EXPECT_EQ((*src)->max_nr_accesses(), 50u);
}

TEST(DamonSource, RefusesWhenAnyKdamondExistsAndTouchesNothing) {
  FakeDamon k;
  // Someone else's running paddr kdamond.
  k.tree().Write(FakeDamon::Path("kdamonds/nr_kdamonds"), "1\n");
  k.tree().Write(FakeDamon::Path("kdamonds/0/state"), "on\n");
  k.tree().Write(FakeDamon::Path("kdamonds/0/pid"), "812\n");
  k.tree().Write(FakeDamon::Path("kdamonds/0/contexts/0/operations"),
                 "paddr\n");
  auto src = k.Start();
  ASSERT_FALSE(src.ok());
  EXPECT_EQ(src.status().code(), absl::StatusCode::kFailedPrecondition);
  const std::string m(src.status().message());
  EXPECT_TRUE(absl::StrContains(m, "DAMON is already in use")) << m;
  EXPECT_TRUE(absl::StrContains(
      m, k.tree().root() + kAdmin + "/kdamonds/nr_kdamonds is 1"))
      << m;
  EXPECT_TRUE(
      absl::StrContains(m, "kdamond 0: state on, thread pid 812, paddr"))
      << m;
  EXPECT_TRUE(absl::StrContains(m, "destroys every existing kdamond")) << m;
  EXPECT_TRUE(absl::StrContains(m, "echo 0 >")) << m;
  EXPECT_TRUE(k.Writes().empty());
  EXPECT_EQ(k.Read("kdamonds/nr_kdamonds"), "1");

  // A stopped leftover counts too: writing the count would destroy it.
  k.tree().Write(FakeDamon::Path("kdamonds/0/state"), "off\n");
  src = k.Start();
  ASSERT_FALSE(src.ok());
  EXPECT_TRUE(absl::StrContains(src.status().message(), "state off"))
      << src.status();
  EXPECT_TRUE(k.Writes().empty());
}

TEST(DamonSource, MissingDamonSysfsNamesThePath) {
  FakeTree tree;
  tree.Mkdir(absl::StrCat("/proc/", kPid));
  FakeSysfsLog log(&tree);
  auto src = DamonSource::Start(kPid, {}, *KernelFs::Open(tree.root()),
                                log.NewWriter());
  ASSERT_FALSE(src.ok());
  EXPECT_EQ(src.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(src.status().message(),
                                tree.root() + kAdmin + " does not exist"))
      << src.status();
  EXPECT_TRUE(absl::StrContains(src.status().message(), "CONFIG_DAMON_SYSFS"))
      << src.status();
  EXPECT_TRUE(log.writes().empty());
}

TEST(DamonSource, NoSuchProcessBeforeAnyWrite) {
  FakeDamon k;
  k.TargetExits();
  auto src = k.Start();
  ASSERT_FALSE(src.ok());
  EXPECT_EQ(src.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(
      absl::StrContains(src.status().message(), "no such process: pid 4321"));
  EXPECT_TRUE(k.Writes().empty());
}

TEST(DamonSource, NoVaddrOperationsIsUnsupportedAndCleanedUp) {
  FakeDamon k;
  k.set_avail_operations("paddr\n");
  auto src = k.Start();
  ASSERT_FALSE(src.ok());
  EXPECT_EQ(src.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(absl::StrContains(src.status().message(), "does not list vaddr"))
      << src.status();
  EXPECT_TRUE(absl::StrContains(src.status().message(), "CONFIG_DAMON_VADDR"))
      << src.status();
  EXPECT_EQ(k.Writes(),
            (std::vector<std::string>{"kdamonds/nr_kdamonds=1",
                                      "kdamonds/0/contexts/nr_contexts=1",
                                      "kdamonds/nr_kdamonds=0"}));
}

// Every write after nr_kdamonds=1 failing must leave no kdamond behind, and
// the error must name the file.
TEST(DamonSource, TeardownOnEveryErrorPath) {
  for (size_t i = 0; i < kSetup.size(); ++i) {
    SCOPED_TRACE(kSetup[i]);
    FakeDamon k;
    k.Inject(kSetup[i], EINVAL, 1);
    auto src = k.Start();
    ASSERT_FALSE(src.ok());
    const std::string path = kSetup[i].substr(0, kSetup[i].find('='));
    EXPECT_TRUE(absl::StrContains(src.status().message(),
                                  k.tree().root() + kAdmin + "/" + path))
        << src.status();
    EXPECT_TRUE(absl::StrContains(src.status().message(), "EINVAL"))
        << src.status();
    std::vector<std::string> expect(kSetup.begin(), kSetup.begin() + i);
    expect.push_back(kSetup[i] + " !EINVAL");
    if (i > 0) expect.push_back("kdamonds/nr_kdamonds=0");  // ours: removed
    EXPECT_EQ(k.Writes(), expect);
    EXPECT_EQ(k.Read("kdamonds/nr_kdamonds"), "0");
    EXPECT_FALSE(k.running());
  }
}

TEST(DamonSource, TargetGoneBeforeOnIsExplainedAndCleanedUp) {
  FakeDamon k;
  // The process exits during setup; the kernel answers `on` with EINVAL.
  k.Before("kdamonds/0/state=on", [&] { k.TargetExits(); });
  auto src = k.Start();
  ASSERT_FALSE(src.ok());
  EXPECT_TRUE(absl::StrContains(
      src.status().message(), "target pid 4321 exited before monitoring began"))
      << src.status();
  EXPECT_EQ(k.Writes().back(), "kdamonds/nr_kdamonds=0");
  EXPECT_EQ(k.Read("kdamonds/nr_kdamonds"), "0");
}

TEST(DamonSource, KernelRefusingOnIsExplainedAndCleanedUp) {
  FakeDamon k;
  k.Inject("kdamonds/0/state=on", EINVAL, 1);
  auto src = k.Start();
  ASSERT_FALSE(src.ok());
  EXPECT_TRUE(
      absl::StrContains(src.status().message(), "refused to start the kdamond"))
      << src.status();
  EXPECT_EQ(k.Read("kdamonds/nr_kdamonds"), "0");
}

TEST(DamonSource, PollReadsRegionsInNumericOrderAndEmitsChunkSamples) {
  FakeDamon k;
  // 12 regions of 2 MiB in address order with nr_accesses 0..11: directory
  // names 0..11, which a byte-wise listing returns as 0, 1, 10, 11, 2, ...
  std::vector<DamonRegion> regions;
  for (uint32_t i = 0; i < 12; ++i) {
    regions.push_back(
        {kBase + i * 2 * kMiB, kBase + (i + 1) * 2 * kMiB, i, 100 + i});
  }
  k.SetRegions(regions);
  auto src = k.Start();
  ASSERT_TRUE(src.ok()) << src.status();
  std::vector<Sample> got;
  size_t batches = 0;
  auto n = (*src)->Poll([&](absl::Span<const Sample> batch) {
    ++batches;
    got.insert(got.end(), batch.begin(), batch.end());
  });
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ((*src)->regions(), regions);
  EXPECT_EQ(*n, 66u);  // 0 + 1 + ... + 11
  EXPECT_EQ(got.size(), 66u);
  EXPECT_EQ(batches, 1u);
  std::map<uint64_t, int> per_chunk;
  for (const Sample& s : got) {
    EXPECT_EQ(s.source, SampleSource::kDamon);
    EXPECT_EQ(s.pid, static_cast<uint32_t>(kPid));
    EXPECT_EQ(s.period, 20u);
    EXPECT_EQ(s.flags, kSampleRegion);
    EXPECT_EQ(s.weight, 0u);
    EXPECT_GT(s.time_ns, 0u);
    ++per_chunk[s.vaddr];
  }
  for (uint32_t i = 1; i < 12; ++i)
    EXPECT_EQ(per_chunk[kBase + i * 2 * kMiB], int(i));
  EXPECT_EQ(per_chunk.count(kBase), 0u);  // nr_accesses 0: no sample
  EXPECT_EQ(k.Writes().back(), "kdamonds/0/state=update_schemes_tried_regions");
  auto st = (*src)->stats();
  EXPECT_EQ(st.polls, 1u);
  EXPECT_EQ(st.regions, 12u);
  EXPECT_EQ(st.samples, 66u);
}

TEST(DamonSource, SampleCapCountsTheRest) {
  FakeDamon k;
  k.SetRegions({{kBase, kBase + 64 * kMiB, 20, 0}});  // 32 chunks x 20
  DamonOptions o;
  o.max_samples_per_poll = 100;
  auto src = k.Start(o);
  ASSERT_TRUE(src.ok());
  size_t seen = 0;
  auto n = (*src)->Poll([&](absl::Span<const Sample> b) { seen += b.size(); });
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 100u);
  EXPECT_EQ(seen, 100u);
  EXPECT_EQ((*src)->stats().samples_dropped, 640u - 100u);
}

TEST(DamonSource, LargePollIsDeliveredInBatches) {
  FakeDamon k;
  k.SetRegions({{kBase, kBase + 256 * kMiB, 20, 0}});  // 128 x 20 = 2560
  auto src = k.Start();
  ASSERT_TRUE(src.ok());
  std::vector<size_t> sizes;
  auto n = (*src)->Poll(
      [&](absl::Span<const Sample> b) { sizes.push_back(b.size()); });
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 2560u);
  EXPECT_EQ(sizes, (std::vector<size_t>{1024, 1024, 512}));
}

TEST(DamonSource, MalformedOrMissingRegionFilesNameTheFileAndKeepRunning) {
  struct Case {
    const char* file;
    const char* content;  // nullptr: remove the file
    const char* expect;
  };
  const Case cases[] = {
      {"nr_accesses", "lots\n",
       "/tried_regions/3/nr_accesses: expected an unsigned decimal"},
      {"end", "100\n", "/tried_regions/3/end: 100 is not above start"},
      {"start", nullptr, "/tried_regions/3/start: ENOENT"},
      {"age", "-1\n", "/tried_regions/3/age: expected"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    FakeDamon k;
    std::vector<DamonRegion> regions;
    for (uint32_t i = 0; i < 5; ++i) {
      regions.push_back(
          {kBase + i * 2 * kMiB, kBase + (i + 1) * 2 * kMiB, 3, 0});
    }
    k.SetRegions(regions);
    auto src = k.Start();
    ASSERT_TRUE(src.ok());
    // The fake kernel writes the region files during the update; the
    // corruption must land between that and the read, so it happens in the
    // kernel itself: poll once (good), then corrupt the now-stale files and
    // make the next update a no-op that keeps them.
    ASSERT_TRUE((*src)->Poll([](absl::Span<const Sample>) {}).ok());
    const std::string f = FakeDamon::Path(absl::StrCat(
        "kdamonds/0/contexts/0/schemes/0/tried_regions/3/", c.file));
    if (c.content) {
      k.tree().Write(f, c.content);
    } else {
      k.tree().Remove(f);
    }
    k.Inject("kdamonds/0/state=update_schemes_tried_regions",
             FakeSysfsLog::kHandled);
    auto n = (*src)->Poll([](absl::Span<const Sample>) {});
    ASSERT_FALSE(n.ok());
    EXPECT_TRUE(
        absl::StrContains(n.status().message(), k.tree().root() + kAdmin))
        << n.status();
    EXPECT_TRUE(absl::StrContains(n.status().message(), c.expect))
        << n.status();
    // Still running; the destructor removes it.
    EXPECT_TRUE((*src)->running());
    EXPECT_TRUE(k.running());
    src->reset();
    EXPECT_EQ(k.Writes().back(), "kdamonds/nr_kdamonds=0");
    EXPECT_EQ(k.Read("kdamonds/nr_kdamonds"), "0");
  }
}

TEST(DamonSource, TooManyTriedRegionsIsBounded) {
  FakeDamon k;
  DamonOptions o;
  o.min_nr_regions = 3;
  o.max_nr_regions = 3;  // limit: max(2 x 3, 64) = 64
  std::vector<DamonRegion> regions;
  for (uint32_t i = 0; i < 65; ++i)
    regions.push_back({kBase + i * 4096, kBase + (i + 1) * 4096, 1, 0});
  k.SetRegions(regions);
  auto src = k.Start(o);
  ASSERT_TRUE(src.ok());
  auto n = (*src)->Poll([](absl::Span<const Sample>) {});
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(
      absl::StrContains(n.status().message(), "/tried_regions: more than 64"))
      << n.status();
}

TEST(DamonSource, TargetExitEndsPollingAndCleansUp) {
  FakeDamon k;
  k.SetRegions({{kBase, kBase + 2 * kMiB, 20, 0}});
  auto src = k.Start();
  ASSERT_TRUE(src.ok());
  ASSERT_TRUE((*src)->Poll([](absl::Span<const Sample>) {}).ok());
  k.ClearWrites();
  // As on 6.12: the kdamond stops by itself, state reads off, stale
  // tried_regions stay, the update fails with EINVAL.
  k.TargetExits();
  EXPECT_EQ(k.Read("kdamonds/0/state"), "off");
  auto n = (*src)->Poll(
      [](absl::Span<const Sample>) { ADD_FAILURE() << "stale data"; });
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(n.status().message(), "target pid 4321 exited"))
      << n.status();
  EXPECT_TRUE(absl::StrContains(n.status().message(), "context was removed"))
      << n.status();
  // No `off` (it reads off already; it would be EPERM), then the count to 0.
  EXPECT_EQ(k.Writes(),
            (std::vector<std::string>{
                "kdamonds/0/state=update_schemes_tried_regions !EINVAL",
                "kdamonds/nr_kdamonds=0"}));
  EXPECT_EQ(k.Read("kdamonds/nr_kdamonds"), "0");
  EXPECT_FALSE((*src)->running());
  auto again = (*src)->Poll([](absl::Span<const Sample>) {});
  EXPECT_EQ(again.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(again.status().message(), "exited"))
      << again.status();
  EXPECT_TRUE((*src)->Stop().ok());
  src->reset();
  EXPECT_EQ(k.Writes().size(), 2u);
}

TEST(DamonSource, TargetExitRacingOffStillRemovesTheKdamond) {
  FakeDamon k;
  auto src = k.Start();
  ASSERT_TRUE(src.ok());
  k.ClearWrites();
  // state still reads "on", but the target exits (and the kdamond stops)
  // just before `off` arrives: EPERM.
  k.Before("kdamonds/0/state=off", [&] { k.TargetExits(); });
  EXPECT_TRUE((*src)->Stop().ok());
  EXPECT_EQ(k.Writes(), (std::vector<std::string>{"kdamonds/0/state=off !EPERM",
                                                  "kdamonds/nr_kdamonds=0"}));
}

TEST(DamonSource, TurnedOffBySomeoneElse) {
  FakeDamon k;
  auto src = k.Start();
  ASSERT_TRUE(src.ok());
  k.TurnedOffBySomeoneElse();
  auto n = (*src)->Poll([](absl::Span<const Sample>) {});
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(
      absl::StrContains(n.status().message(), "turned off by someone else"))
      << n.status();
  EXPECT_EQ(k.Read("kdamonds/nr_kdamonds"), "0");
}

TEST(DamonSource, NeverRemovesKdamondsThatAreNoLongerOurs) {
  {
    FakeDamon k;
    auto src = k.Start();
    ASSERT_TRUE(src.ok());
    k.ClearWrites();
    // Someone rewrote the count (destroying ours) and created two of theirs.
    k.tree().Write(FakeDamon::Path("kdamonds/nr_kdamonds"), "2\n");
    absl::Status s = (*src)->Stop();
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_TRUE(absl::StrContains(s.message(), "nr_kdamonds is 2")) << s;
    EXPECT_TRUE(k.Writes().empty());
  }
  {
    FakeDamon k;
    auto src = k.Start();
    ASSERT_TRUE(src.ok());
    k.ClearWrites();
    k.tree().Write(
        FakeDamon::Path("kdamonds/0/contexts/0/targets/0/pid_target"), "99\n");
    absl::Status s = (*src)->Stop();
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_TRUE(absl::StrContains(s.message(), "monitors pid 99")) << s;
    EXPECT_TRUE(k.Writes().empty());
  }
}

TEST(DamonSource, EbusyIsRetried) {
  FakeDamon k;
  k.Inject("kdamonds/nr_kdamonds=1", EBUSY, 2);
  auto src = k.Start();
  ASSERT_TRUE(src.ok()) << src.status();
  k.Inject("kdamonds/nr_kdamonds=0", EBUSY, 3);
  EXPECT_TRUE((*src)->Stop().ok());
  EXPECT_EQ((*src)->stats().ebusy_retries, 5u);
  EXPECT_EQ(k.Read("kdamonds/nr_kdamonds"), "0");
}

TEST(DamonSource, PermissionDeniedNamesWhatIsNeeded) {
  FakeDamon k;
  k.Inject("kdamonds/nr_kdamonds=1", EACCES);
  auto src = k.Start();
  ASSERT_FALSE(src.ok());
  EXPECT_EQ(src.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(absl::StrContains(src.status().message(), "run hotpage as root"))
      << src.status();
  EXPECT_TRUE(absl::StrContains(src.status().message(), "CAP_DAC_OVERRIDE"))
      << src.status();
  EXPECT_TRUE(absl::StrContains(src.status().message(), "nr_kdamonds: EACCES"))
      << src.status();
  EXPECT_EQ(k.Writes(),
            (std::vector<std::string>{"kdamonds/nr_kdamonds=1 !EACCES"}));
}

TEST(DamonSource, PersistentEbusyOnTakeIsNotTornDown) {
  FakeDamon k;
  k.Inject("kdamonds/nr_kdamonds=1", EBUSY);
  auto src = k.Start();
  ASSERT_FALSE(src.ok());
  EXPECT_TRUE(absl::StrContains(src.status().message(), "DAMON became busy"))
      << src.status();
  for (const std::string& w : k.Writes())
    EXPECT_EQ(w, "kdamonds/nr_kdamonds=1 !EBUSY");
}

TEST(DamonSource, TeardownFailureIsReported) {
  FakeDamon k;
  auto src = k.Start();
  ASSERT_TRUE(src.ok());
  k.Inject("kdamonds/0/state=off", EIO);
  k.Inject("kdamonds/nr_kdamonds=0", EBUSY);
  absl::Status s = (*src)->Stop();
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.message(), "kdamonds/nr_kdamonds: EBUSY"))
      << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "turning it off first")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "EIO")) << s;
}

TEST(DamonSource, TeardownAllStopsEverySourceOnce) {
  FakeDamon a, b;
  auto sa = a.Start();
  auto sb = b.Start();
  ASSERT_TRUE(sa.ok() && sb.ok());
  ASSERT_TRUE(DamonSource::TeardownAll().ok());
  EXPECT_EQ(a.Read("kdamonds/nr_kdamonds"), "0");
  EXPECT_EQ(b.Read("kdamonds/nr_kdamonds"), "0");
  EXPECT_FALSE((*sa)->running());
  auto n = (*sa)->Poll([](absl::Span<const Sample>) {});
  EXPECT_EQ(n.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(n.status().message(), "TeardownAll"))
      << n.status();
  const size_t wa = a.Writes().size();
  sa->reset();
  sb->reset();
  EXPECT_EQ(a.Writes().size(), wa);  // the destructor wrote nothing more
  EXPECT_TRUE(DamonSource::TeardownAll().ok());  // nothing registered
}

// The SIGTERM path: TeardownAll from another thread while the owner polls.
// Run under --config=tsan too.
TEST(DamonSource, TeardownAllRacesWithPoll) {
  for (int round = 0; round < 20; ++round) {
    FakeDamon k;
    k.SetRegions({{kBase, kBase + 8 * kMiB, 10, 0}});
    auto src = k.Start();
    ASSERT_TRUE(src.ok());
    // std::atomic rather than absl::Notification: Debian's abseil is not
    // TSan-instrumented (see tools/base/mutex.h).
    std::atomic<bool> polling{false};
    absl::Status end;
    std::thread owner([&] {
      for (;;) {
        auto n = (*src)->Poll([](absl::Span<const Sample>) {});
        polling.store(true, std::memory_order_release);
        if (!n.ok()) {
          end = n.status();
          return;
        }
      }
    });
    while (!polling.load(std::memory_order_acquire)) std::this_thread::yield();
    ASSERT_TRUE(DamonSource::TeardownAll().ok());
    owner.join();
    EXPECT_EQ(end.code(), absl::StatusCode::kFailedPrecondition) << end;
    int removals = 0;
    for (const std::string& w : k.Writes())
      removals += w == "kdamonds/nr_kdamonds=0";
    EXPECT_EQ(removals, 1);
    src->reset();
  }
}

// --- the state file and the cleanup after a SIGKILL ------------------------

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

bool Contains(const std::vector<std::string>& lines, absl::string_view what) {
  for (const std::string& l : lines) {
    if (absl::StrContains(l, what)) return true;
  }
  return false;
}

TEST(DamonState, RoundTrips) {
  DamonState st;
  st.pid = 1234;
  st.start_time_ticks = 5678;
  st.target_pid = 4321;
  const std::string text = FormatDamonState(st);
  EXPECT_EQ(text,
            "hotpage-damon-state 1\npid 1234\nstart_time 5678\nkdamond "
            "0\ntarget_pid 4321\n"
            "operations vaddr\n");
  absl::StatusOr<DamonState> back = ParseDamonState(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->pid, 1234);
  EXPECT_EQ(back->start_time_ticks, 5678u);
  EXPECT_EQ(back->kdamond, 0);
  EXPECT_EQ(back->target_pid, 4321);
  EXPECT_EQ(back->operations, "vaddr");
  // Keys in another order are the same state.
  back = ParseDamonState(
      "hotpage-damon-state 1\noperations vaddr\ntarget_pid 4321\nkdamond "
      "0\nstart_time 5678\npid 1234\n");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(FormatDamonState(*back), text);
}

TEST(DamonState, ParserIsStrict) {
  const std::string good_tail =
      "start_time 1\nkdamond 0\ntarget_pid 2\noperations vaddr\n";
  const std::string h = "hotpage-damon-state 1\n";
  struct Case {
    std::string text;
    std::string why;
  };
  const std::vector<Case> cases = {
      {"", "empty"},
      {h + "pid 1\n" + good_tail.substr(0, good_tail.size() - 1),
       "no final newline"},
      {"hotpage-damon-state 2\npid 1\n" + good_tail,
       "expected \"hotpage-damon-state 1\""},
      {"hotpage-hintfault-state 1\npid 1\n" + good_tail, "expected"},
      {h + "pid 0\n" + good_tail, "from 1 to 4194304"},
      {h + "pid 4194305\n" + good_tail, "from 1 to 4194304"},
      {h + "pid -5\n" + good_tail, "a pid is"},
      {h + "pid 012\n" + good_tail, "a pid is"},
      {h + "pid 1 \n" + good_tail, "a pid is"},
      {h + "pid  1\n" + good_tail, "a pid is"},
      {h + "pid 1\npid 1\n" + good_tail, "pid listed twice"},
      {h + "pid 1\nstart_time 1\nkdamond 1\ntarget_pid 2\noperations vaddr\n",
       "only creates kdamond 0"},
      {h + "pid 1\nstart_time 1\nkdamond 0\ntarget_pid 2\noperations paddr\n",
       "only uses vaddr"},
      {h + "pid 1\nstart_time x\nkdamond 0\ntarget_pid 2\noperations vaddr\n",
       "start_time must be"},
      {h + "pid 1\nstart_time 1\nkdamond 0\ntarget_pid 2\n",
       "no operations line"},
      {h + "pid 1\n", "no start_time, kdamond, target_pid, operations line"},
      {h, "no pid, start_time, kdamond, target_pid, operations line"},
      {h + "pid 1\n\n" + good_tail, "expected \"KEY VALUE\""},
      {h + "pid 1\n" + good_tail + "sysctl /proc/sys/vm/drop_caches 0 3\n",
       "too many lines"},
      {h + "pid 1\nstart_time 1\nkdamond 0\ntarget_pid 2\nnr_kdamonds 0\n",
       "unknown line"},
      {h + "pid 1\n" + good_tail + std::string(5000, '#'),
       "larger than 4096 bytes"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<DamonState> st = ParseDamonState(c.text);
    ASSERT_FALSE(st.ok()) << absl::CEscape(c.text);
    EXPECT_TRUE(absl::IsInvalidArgument(st.status()));
    EXPECT_TRUE(absl::StrContains(st.status().message(), c.why))
        << absl::CEscape(c.text) << " -> " << st.status();
  }
  EXPECT_TRUE(ParseDamonState(h + "pid 4194304\n" + good_tail).ok());
}

TEST(DamonSource, StateFileNamesTheKdamondBeforeItExistsAndStopRemovesIt) {
  FakeDamon k;
  bool state_first = false;
  k.Before("kdamonds/nr_kdamonds=1", [&] {
    absl::StatusOr<DamonState> st = ParseDamonState(Slurp(k.StateFile()));
    state_first = st.ok() && st->pid == getpid() && st->target_pid == kPid &&
                  st->start_time_ticks == 4242 && st->kdamond == 0 &&
                  st->operations == "vaddr";
  });
  auto src = k.Start();
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_TRUE(state_first) << Slurp(k.StateFile());
  EXPECT_EQ(k.Writes(), kSetup);  // nothing else written to DAMON
  struct stat dir;
  ASSERT_EQ(stat(k.state_dir().c_str(), &dir), 0);
  EXPECT_EQ(dir.st_mode & 07777, 0700u);
  EXPECT_TRUE((*src)->recovered().empty());
  EXPECT_TRUE(k.warnings().empty());
  // The lock is held while it runs.
  const int fd = open(k.LockFile().c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_NE(flock(fd, LOCK_EX | LOCK_NB), 0);
  ASSERT_TRUE((*src)->Stop().ok());
  EXPECT_FALSE(Exists(k.StateFile()));
  EXPECT_EQ(flock(fd, LOCK_EX | LOCK_NB), 0) << "Stop released the lock";
  close(fd);
}

TEST(DamonSource, StaleKdamondOfAKilledHotpageIsRemovedThenStarted) {
  FakeDamon k;
  k.LeaveStaleKdamond(kPid);
  ASSERT_TRUE(k.running());
  auto src = k.Start();
  ASSERT_TRUE(src.ok()) << src.status();
  // Removed exactly as a teardown does, then the usual setup.
  EXPECT_EQ(k.Writes(),
            Concat({"kdamonds/0/state=off", "kdamonds/nr_kdamonds=0"}, kSetup));
  const std::string said =
      "removed a stale hotpage kdamond left by pid 999 (target pid 4321)";
  EXPECT_TRUE(Contains(k.warnings(), said))
      << absl::StrJoin(k.warnings(), "\n");
  EXPECT_TRUE(absl::StrContains((*src)->recovered(), said))
      << (*src)->recovered();
  EXPECT_TRUE(absl::StrContains((*src)->recovered(), k.StateFile()))
      << (*src)->recovered();
  // The state file is ours now.
  absl::StatusOr<DamonState> st = ParseDamonState(Slurp(k.StateFile()));
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->pid, getpid());
  EXPECT_TRUE(k.running());
  ASSERT_TRUE((*src)->Stop().ok());
  EXPECT_EQ(k.Read("kdamonds/nr_kdamonds"), "0");
  EXPECT_FALSE(Exists(k.StateFile()));
}

TEST(DamonSource, StaleKdamondWhoseTargetExitedIsRemovedWithoutOff) {
  // The target of the killed run exited: its kdamond stopped by itself.
  FakeDamon k;
  k.LeaveStaleKdamond(7777, /*on=*/false);
  auto src = k.Start();
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_EQ(k.Writes(), Concat({"kdamonds/nr_kdamonds=0"}, kSetup));
  EXPECT_TRUE(Contains(k.warnings(), "left by pid 999 (target pid 7777)"));
}

TEST(DamonSource, SigkilledHotpageIsCleanedUpByTheNextStart) {
  FakeDamon k;
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The same tree and state directory; the fake's hooks run in the child.
    auto src = k.Start();
    if (!src.ok()) _exit(3);
    raise(SIGKILL);
    _exit(4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  ASSERT_TRUE(k.running());  // left behind
  ASSERT_EQ(k.Read("kdamonds/nr_kdamonds"), "1");
  k.ClearWrites();
  auto src = k.Start();
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_TRUE(Contains(
      k.warnings(), absl::StrCat("left by pid ", child, " (target pid 4321)")))
      << absl::StrJoin(k.warnings(), "\n");
  EXPECT_EQ(k.Writes(),
            Concat({"kdamonds/0/state=off", "kdamonds/nr_kdamonds=0"}, kSetup));
  src->reset();
  EXPECT_EQ(k.Read("kdamonds/nr_kdamonds"), "0");
  EXPECT_FALSE(Exists(k.StateFile()));
}

TEST(DamonSource, StaleStateButSomeoneElsesKdamondIsRefused) {
  // The file names target 4321, but kdamond 0 now monitors 5555: after
  // hotpage died someone replaced its kdamond with their own.
  {
    FakeDamon k;
    k.LeaveStaleKdamond(5555);
    k.WriteState(
        "hotpage-damon-state 1\npid 999\nstart_time 1\nkdamond 0\ntarget_pid "
        "4321\noperations vaddr\n");
    auto src = k.Start();
    ASSERT_FALSE(src.ok());
    EXPECT_TRUE(absl::IsFailedPrecondition(src.status()));
    const std::string m(src.status().message());
    EXPECT_TRUE(absl::StrContains(m, "DAMON is already in use")) << m;
    EXPECT_TRUE(absl::StrContains(
        m,
        "says hotpage pid 999 (no longer running) created kdamond 0 with "
        "vaddr operations for pid 4321, but kdamond 0 monitors pid 5555"))
        << m;
    EXPECT_TRUE(absl::StrContains(m, "echo 0 >"))
        << m;  // the manual cleanup, as before
    EXPECT_TRUE(k.Writes().empty());
    EXPECT_TRUE(k.running());
    EXPECT_TRUE(k.warnings().empty());
    EXPECT_TRUE(Exists(k.StateFile()));  // not ours to judge further
  }
  // paddr operations with our target pid: not ours either.
  {
    FakeDamon k;
    k.LeaveStaleKdamond(kPid);
    k.tree().Write(FakeDamon::Path("kdamonds/0/contexts/0/operations"),
                   "paddr\n");
    auto src = k.Start();
    ASSERT_FALSE(src.ok());
    EXPECT_TRUE(absl::StrContains(src.status().message(),
                                  "kdamond 0 uses paddr operations"))
        << src.status();
    EXPECT_TRUE(k.Writes().empty());
  }
  // Two kdamonds: hotpage only ever makes one.
  {
    FakeDamon k;
    k.LeaveStaleKdamond(kPid);
    k.tree().Write(FakeDamon::Path("kdamonds/nr_kdamonds"), "2\n");
    auto src = k.Start();
    ASSERT_FALSE(src.ok());
    EXPECT_TRUE(absl::StrContains(src.status().message(),
                                  "but nr_kdamonds is 2, not 1"))
        << src.status();
    EXPECT_TRUE(k.Writes().empty());
  }
}

TEST(DamonSource, KdamondExactlyLikeOursWithoutAStateFileIsRefused) {
  FakeDamon k;
  k.LeaveStaleKdamond(kPid);
  ASSERT_EQ(unlink(k.StateFile().c_str()), 0);
  auto src = k.Start();
  ASSERT_FALSE(src.ok());
  const std::string m(src.status().message());
  EXPECT_TRUE(absl::StrContains(m, "DAMON is already in use")) << m;
  EXPECT_TRUE(absl::StrContains(m, "vaddr target pid 4321")) << m;
  EXPECT_FALSE(absl::StrContains(m, "hotpage pid"))
      << m;  // no state file, nothing to add
  EXPECT_TRUE(k.Writes().empty());
  EXPECT_TRUE(k.running());
}

TEST(DamonSource, CorruptStateIsRefusedNeverObeyed) {
  FakeDamon k;
  k.LeaveStaleKdamond(kPid);
  // Looks almost right, but a line too many: never act on it.
  k.WriteState(
      "hotpage-damon-state 1\npid 999\nstart_time 1\nkdamond 0\ntarget_pid "
      "4321\noperations vaddr\n"
      "nr_kdamonds 0\n");
  const std::string before = Slurp(k.StateFile());
  auto src = k.Start();
  ASSERT_FALSE(src.ok());
  const std::string m(src.status().message());
  EXPECT_TRUE(absl::StrContains(m, "DAMON is already in use")) << m;
  EXPECT_TRUE(absl::StrContains(
      m, k.StateFile() + " is left over but unreadable (line 7"))
      << m;
  EXPECT_TRUE(absl::StrContains(m, "hotpage does not act on it")) << m;
  EXPECT_TRUE(k.Writes().empty());
  EXPECT_TRUE(k.running());
  EXPECT_EQ(Slurp(k.StateFile()), before);
}

TEST(DamonSource, LockHeldByAnotherProcessIsRefusedNamingIt) {
  FakeDamon k;
  k.LeaveStaleKdamond(kPid, /*on=*/true, /*dead_pid=*/31337);
  // "pid 31337" is alive: it holds the lock (from another open file).
  const int fd = open(k.LockFile().c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(flock(fd, LOCK_EX | LOCK_NB), 0);
  auto src = k.Start();
  ASSERT_FALSE(src.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(src.status()));
  const std::string m(src.status().message());
  EXPECT_TRUE(absl::StrContains(
      m,
      "another hotpage (pid 31337, monitoring pid 4321) holds " + k.LockFile()))
      << m;
  EXPECT_TRUE(
      absl::StrContains(m, "only one `--source damon` can run at a time"))
      << m;
  EXPECT_TRUE(k.Writes().empty());
  EXPECT_TRUE(k.running());  // its kdamond untouched
  EXPECT_TRUE(Exists(k.StateFile()));
  // Also when DAMON looks free: the holder may be about to create its own.
  FakeDamon free;
  free.WriteState("garbage\n");
  const int fd2 =
      open(free.LockFile().c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_EQ(flock(fd2, LOCK_EX | LOCK_NB), 0);
  src = free.Start();
  ASSERT_FALSE(src.ok());
  EXPECT_TRUE(
      absl::StrContains(src.status().message(), "another process holds"))
      << src.status();
  EXPECT_TRUE(free.Writes().empty());
  // Once released, the dead holder's kdamond is cleaned up.
  close(fd);
  src = k.Start();
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_TRUE(Contains(k.warnings(), "left by pid 31337 (target pid 4321)"));
  close(fd2);
}

TEST(DamonSource, SecondSourceWithTheSameStateDirIsRefused) {
  FakeDamon a, b;
  auto sa = a.Start();
  ASSERT_TRUE(sa.ok()) << sa.status();
  DamonOptions o;
  o.state_dir = a.state_dir();
  auto sb = b.Start(o);
  ASSERT_FALSE(sb.ok());
  EXPECT_TRUE(absl::StrContains(sb.status().message(),
                                absl::StrCat("another hotpage (pid ", getpid(),
                                             ", monitoring pid 4321)")))
      << sb.status();
  EXPECT_TRUE(b.Writes().empty());
  EXPECT_TRUE(Exists(a.StateFile()));  // the refused one removed nothing
  sa->reset();
  EXPECT_TRUE(b.Start(o).ok());  // free again
}

TEST(DamonSource, FailedSetupRemovesTheStateFileAndTheLock) {
  FakeDamon k;
  k.set_avail_operations("paddr\n");
  ASSERT_FALSE(k.Start().ok());
  EXPECT_FALSE(Exists(k.StateFile()));
  // Taken before anything else: the kdamond was never created.
  FakeDamon busy;
  busy.Inject("kdamonds/nr_kdamonds=1", EBUSY);
  ASSERT_FALSE(busy.Start().ok());
  EXPECT_FALSE(Exists(busy.StateFile()));
  const int fd = open(busy.LockFile().c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(flock(fd, LOCK_EX | LOCK_NB), 0);
  close(fd);
}

TEST(DamonSource, FailedTeardownKeepsTheStateSoTheNextStartRetries) {
  FakeDamon k;
  auto src = k.Start();
  ASSERT_TRUE(src.ok());
  k.Inject("kdamonds/nr_kdamonds=0", EBUSY, 1000);
  ASSERT_FALSE((*src)->Stop().ok());
  EXPECT_TRUE(Exists(k.StateFile()));
  EXPECT_EQ(k.Read("kdamonds/nr_kdamonds"), "1");
  // The lock is released with the teardown: another run may clean up,
  // even while this (finished) source object still exists.
  k.Inject("kdamonds/nr_kdamonds=0", EBUSY, 0);
  k.ClearWrites();
  auto next = k.Start();
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_TRUE(Contains(k.warnings(), absl::StrCat("left by pid ", getpid(),
                                                  " (target pid 4321)")));
  src->reset();  // writes nothing more
  EXPECT_EQ(k.Writes(), Concat({"kdamonds/nr_kdamonds=0"}, kSetup));
}

TEST(DamonSource, KdamondReplacedUnderUsDropsTheStateFile) {
  FakeDamon k;
  auto src = k.Start();
  ASSERT_TRUE(src.ok());
  k.tree().Write(FakeDamon::Path("kdamonds/0/contexts/0/targets/0/pid_target"),
                 "99\n");
  EXPECT_FALSE((*src)->Stop().ok());
  // The file would name someone else's kdamond: a later Start must not
  // remove it on the file's word.
  EXPECT_FALSE(Exists(k.StateFile()));
}

TEST(DamonSource, StateDirectoryMustBeSafe) {
  FakeDamon k;
  ASSERT_EQ(mkdir(k.state_dir().c_str(), 0777), 0);
  ASSERT_EQ(chmod(k.state_dir().c_str(), 0777), 0);
  auto src = k.Start();
  ASSERT_FALSE(src.ok());
  EXPECT_TRUE(
      absl::StrContains(src.status().message(), "the DAMON state directory"))
      << src.status();
  EXPECT_TRUE(
      absl::StrContains(src.status().message(), "writable by group or others"))
      << src.status();
  EXPECT_TRUE(k.Writes().empty());
}

TEST(DamonOptions, Validation) {
  EXPECT_TRUE(ValidateDamonOptions({}).ok());
  DamonOptions o;
  o.aggr_us = 7000;  // not a multiple of 5000
  EXPECT_TRUE(
      absl::StrContains(ValidateDamonOptions(o).message(), "aggr_us (7000)"));
  o = {};
  o.min_nr_regions = 2;
  EXPECT_FALSE(ValidateDamonOptions(o).ok());
  o = {};
  o.chunk_bytes = 3 << 20;
  EXPECT_FALSE(ValidateDamonOptions(o).ok());
  o = {};
  o.update_us = 1000;
  EXPECT_FALSE(ValidateDamonOptions(o).ok());
  o = {};
  o.sample_us = 0;
  EXPECT_FALSE(ValidateDamonOptions(o).ok());
  o = {};
  o.state_dir = "run/hotpage";
  EXPECT_TRUE(absl::StrContains(ValidateDamonOptions(o).message(),
                                "state_dir \"run/hotpage\""));
  FakeDamon k;
  o = {};
  o.max_nr_regions = 5;
  o.min_nr_regions = 6;
  auto src = k.Start(o);
  EXPECT_EQ(src.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(k.Writes().empty());
}

}  // namespace
}  // namespace hotpage
