// AttachLoop without a kernel: a scripted source that advances a
// FakeClock by 50 ms per poll (the perf sampler's poll timeout) and
// samples a hot set on the slow node; LiveMemoryView over a FakePageMover and a
// fake /sys and /proc; a real Migrator thread on the same FakeClock.
// Covers the rounds' timing, dry run, every ending (duration, target exit, the
// source's end and failure, the termination flag and a real SIGTERM, the
// migrator failing) with its teardown, the stats files rewritten atomically
// every round, and hot_to_moved measured on the migrator's clock.

#include "tools/attach/attach_loop.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "migrator/fake_page_mover.h"
#include "migrator/migrator.h"
#include "migrator/process_handle.h"
#include "policy/engine.h"
#include "policy/topology.h"
#include "tools/attach/attach_stats.h"
#include "tools/base/clock.h"
#include "tools/base/json.h"
#include "tools/base/kernel/fake_tree.h"
#include "tools/base/kernel/kernel_fs.h"
#include "tools/base/termination_signals.h"
#include "tools/live_memory_view.h"

namespace hotpage {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kPage = 4096;
constexpr uint64_t kBase = 0x7f0000000000;
constexpr int kHotPages = 16;
constexpr absl::Duration kPoll = absl::Milliseconds(50);

NodeInfo Node(int id, std::vector<int> cpus, std::vector<int> distance,
              int tier, int package) {
  NodeInfo n;
  n.id = id;
  n.cpus = std::move(cpus);
  n.memory_bytes = kGiB;
  n.distance = std::move(distance);
  n.tier = tier;
  n.package = package;
  return n;
}

// Two DRAM nodes (cpu 0 on node 0, cpu 1 on node 1) and a CPU-less slower
// node 2.
Topology ThreeNodes() {
  Topology t;
  t.nodes.push_back(Node(0, {0}, {10, 21, 24}, 0, 0));
  t.nodes.push_back(Node(1, {1}, {21, 10, 24}, 0, 1));
  t.nodes.push_back(Node(2, {}, {24, 24, 10}, 1, 1));
  t.tiers = {MemoryTier{0, {0, 1}}, MemoryTier{1, {2}}};
  t.packages = {Package{0, {0}}, Package{1, {1, 2}}};
  return t;
}

// Every poll: advances the clock by 50 ms, then runs the test's hook for
// this poll (which may end the source or set the stop flag), then samples
// each hot page once from cpu 0.
class ScriptedSource : public AttachSource {
 public:
  ScriptedSource(FakeClock* clock, uint32_t pid) : clock_(clock), pid_(pid) {}

  absl::Status Poll(const SampleSink& sink) override {
    clock_->Advance(kPoll);
    ++polls;
    if (hook) {
      if (absl::Status s = hook(polls); !s.ok()) return s;
    }
    const uint64_t now =
        static_cast<uint64_t>(absl::ToUnixNanos(clock_->Now()));
    batch_.clear();
    for (int i = first; i < first + pages; ++i) {
      Sample s;
      s.time_ns = now;
      s.source = kind;
      s.vaddr = kBase + i * kPage + 64;
      s.pid = pid_;
      s.tid = pid_;
      s.cpu = 0;
      s.period = 1;
      batch_.push_back(s);
    }
    sink(batch_);
    return absl::OkStatus();
  }
  void Stop() override { ++stops; }
  std::optional<PerfSourceStats> PerfStats() const override { return perf; }

  // A perf source's throttle and loss counts (unset: not a perf source).
  std::optional<PerfSourceStats> perf;
  int pages = kHotPages;  // distinct pages sampled each poll
  int first = 0;          // from this one on
  SampleSource kind = SampleSource::kUnknown;
  // Called with the poll's number (1 for the first) after the clock moved.
  std::function<absl::Status(int)> hook;
  int polls = 0;
  int stops = 0;

 private:
  FakeClock* const clock_;
  const uint32_t pid_;
  std::vector<Sample> batch_;
};

// Keeps every Publish with the clock's time.
class RecordingSink : public AttachStatsSink {
 public:
  explicit RecordingSink(FakeClock* clock) : clock_(clock) {}
  void Publish(const AttachStats& stats, bool final) override {
    published.push_back({stats, final, clock_->Now()});
  }
  struct Entry {
    AttachStats stats;
    bool final;
    absl::Time at;
  };
  std::vector<Entry> published;

 private:
  FakeClock* const clock_;
};

std::string StatLine(uint64_t start) {
  return absl::StrCat(getpid(), " (attach test) S 1 100 100 0 -1 4194560 ",
                      "1234 0 0 0 5 7 0 0 20 0 1 0 ", start,
                      " 12345678 300 0 0 0 0\n");
}

class AttachLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pid_ = static_cast<uint32_t>(getpid());
    for (int node = 0; node < 3; ++node) {
      tree_.Write(
          absl::StrCat("/sys/devices/system/node/node", node, "/meminfo"),
          absl::StrCat("Node ", node, " MemTotal:  1048576 kB\nNode ", node,
                       " MemFree:  524288 kB\n"));
    }
    tree_.Write(absl::StrCat("/proc/", pid_, "/stat"), StatLine(777000));
    absl::StatusOr<KernelFs> fs = KernelFs::Open(tree_.root());
    ASSERT_TRUE(fs.ok()) << fs.status();
    fs_.emplace(std::move(*fs));
    mover_.AddPages(kBase, kHotPages, kPage, 2);
    topo_ = ThreeNodes();
    options_.source_name = "scripted";
    options_.duration_s = 2;
  }

  // Builds the engine, migrator and view, runs the loop. `interval` is the
  // round interval.
  absl::Status Run(absl::Duration interval = absl::Milliseconds(200)) {
    EngineOptions eopt;
    eopt.interval_ns =
        static_cast<uint64_t>(absl::ToInt64Nanoseconds(interval));
    eopt.address_space = pid_;
    eopt.max_table_entries = 1 << 16;
    if (query_batch_pages_ > 0)
      eopt.placement_query_batch_pages = query_batch_pages_;
    eopt.slow_tier_samples = slow_tier_samples_;
    eopt.reclaim_makes_room = reclaim_makes_room_;
    absl::StatusOr<std::unique_ptr<PolicyEngine>> engine =
        PolicyEngine::Create(topo_, PlacementConfig{}, eopt);
    EXPECT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(*engine);
    absl::StatusOr<ProcessHandle> handle =
        ProcessHandle::Attach(getpid(), &*fs_);
    EXPECT_TRUE(handle.ok()) << handle.status();
    MigratorOptions mopt;
    mopt.rate_limit_bytes_per_sec = 0;
    mopt.cpu_budget = 0;
    migrator_ =
        std::make_unique<Migrator>(mopt, std::move(*handle), &mover_, &clock_);
    view_ = std::make_unique<LiveMemoryView>(
        getpid(), &mover_, &*fs_, &topo_,
        options_.dry_run ? nullptr : migrator_.get());
    AttachLoopParts parts;
    parts.source = &source_;
    parts.engine = engine_.get();
    parts.view = view_override_ != nullptr ? view_override_ : view_.get();
    parts.migrator = migrator_.get();
    parts.migrator_external = migrator_external_;
    parts.clock = &clock_;
    parts.stats = stats_sink_ != nullptr ? stats_sink_ : &recorder_;
    parts.target_alive = [this] { return alive_; };
    parts.stop = &stop_;
    parts.log = &log_;
    parts.rounds = rounds_;
    parts.before_round = before_round_;
    parts.cpu_time = cpu_time_;
    parts.wall_ns = wall_ns_;
    parts.resident_pages = resident_pages_;
    parts.resident_before_source = resident_before_source_;
    loop_ = std::make_unique<AttachLoop>(options_, std::move(parts));
    start_ = clock_.Now();
    return loop_->Run();
  }

  // Non-final publishes.
  std::vector<RecordingSink::Entry> Rounds() const {
    std::vector<RecordingSink::Entry> out;
    for (const auto& e : recorder_.published) {
      if (!e.final) out.push_back(e);
    }
    return out;
  }

  void ExpectTornDown() {
    EXPECT_EQ(source_.stops, 1);
    ASSERT_FALSE(recorder_.published.empty());
    EXPECT_TRUE(recorder_.published.back().final);
    EXPECT_NE(migrator_->state(), MigratorState::kRunning);
    EXPECT_TRUE(absl::StrContains(
        log_.str(), "hotpage attach: " + loop_->stop_reason() + " after"))
        << log_.str();
  }

  uint32_t pid_ = 0;
  FakeTree tree_;
  std::optional<KernelFs> fs_;
  FakePageMover mover_;
  FakeClock clock_;
  Topology topo_;
  ScriptedSource source_{&clock_, static_cast<uint32_t>(getpid())};
  RecordingSink recorder_{&clock_};
  AttachStatsSink* stats_sink_ = nullptr;  // null: recorder_
  bool alive_ = true;
  std::atomic<bool> stop_{false};
  std::ostringstream log_;
  AppendOnlyFile* rounds_ = nullptr;  // --rounds
  std::function<void()> before_round_;
  bool migrator_external_ = false;
  std::function<absl::Duration()> cpu_time_;  // empty: the loop's default
  std::function<int64_t()> wall_ns_;          // empty: CLOCK_REALTIME
  std::function<uint64_t()> resident_pages_;  // empty: no first-touch filter
  uint64_t resident_before_source_ = 0;
  AttachLoopOptions options_;
  std::unique_ptr<PolicyEngine> engine_;
  std::unique_ptr<Migrator> migrator_;
  std::unique_ptr<LiveMemoryView> view_;
  MemoryView* view_override_ = nullptr;  // the loop's view instead of view_
  // EngineOptions::placement_query_batch_pages; 0: the default.
  size_t query_batch_pages_ = 0;
  bool slow_tier_samples_ = false;   // EngineOptions::slow_tier_samples
  bool reclaim_makes_room_ = false;  // EngineOptions::reclaim_makes_room
  std::unique_ptr<AttachLoop> loop_;
  absl::Time start_;
};

TEST_F(AttachLoopTest, RoundsRunEveryIntervalUntilTheDuration) {
  options_.dry_run = true;
  options_.duration_s = 1;
  ASSERT_TRUE(Run(absl::Milliseconds(200)).ok());
  EXPECT_EQ(loop_->stop_reason(), "--duration 1 s reached");
  // Polls every 50 ms. The first round comes at the first samples
  // interval / 4 after the start (50 ms: the engine's early first round),
  // then on the schedule: 200, 400, 600 and 800 ms; the poll at 1000 ms
  // ends the run before its round.
  const std::vector<RecordingSink::Entry> rounds = Rounds();
  ASSERT_EQ(rounds.size(), 5u);
  const int at_ms[] = {50, 200, 400, 600, 800};
  for (size_t i = 0; i < rounds.size(); ++i) {
    EXPECT_EQ(rounds[i].stats.rounds, i + 1);
    EXPECT_EQ(rounds[i].at - start_, absl::Milliseconds(at_ms[i])) << i;
    EXPECT_EQ(rounds[i].stats.samples, kHotPages * (at_ms[i] / 50));
  }
  EXPECT_EQ(rounds.back().stats.early_rounds, 1u);
  EXPECT_EQ(source_.polls, 20);
  ExpectTornDown();
  EXPECT_TRUE(absl::StrContains(
      log_.str(), "hotpage attach: t=0.2s round=2 samples=64 hot_pages="))
      << log_.str();
  EXPECT_TRUE(absl::StrContains(log_.str(),
                                "hotpage attach: --duration 1 s reached after "
                                "1.0 s; promoted 0 pages"))
      << log_.str();
}

// --quiet (round_lines off) and the daemon's prefix: no per-round lines,
// the summary under the caller's prefix; the before-round hook runs once
// per round on the loop's thread.
TEST_F(AttachLoopTest, QuietDropsRoundLinesAndTheHookRunsBeforeEachRound) {
  options_.dry_run = true;
  options_.duration_s = 1;
  options_.round_lines = false;
  options_.log_prefix = "hotpage daemon: w: pid 7: ";
  int hooks = 0;
  before_round_ = [&hooks] { ++hooks; };
  ASSERT_TRUE(Run(absl::Milliseconds(200)).ok());
  EXPECT_EQ(Rounds().size(), 5u);  // 50 ms (early), 200, 400, 600, 800
  EXPECT_EQ(hooks, 5);
  EXPECT_FALSE(absl::StrContains(log_.str(), "round=")) << log_.str();
  EXPECT_TRUE(absl::StrContains(log_.str(),
                                "hotpage daemon: w: pid 7: --duration 1 s "
                                "reached after 1.0 s"))
      << log_.str();
}

// --rounds: one JSON line per round (tools/round_log.h), in order, each
// with the round's planned moves; the round lines on the log stay as they
// are.
TEST_F(AttachLoopTest, RoundsAreRecordedAsOneJsonLineEach) {
  options_.dry_run = true;
  options_.duration_s = 1;
  const std::string path =
      absl::StrCat(::testing::TempDir(), "/attach_rounds.jsonl");
  absl::StatusOr<std::unique_ptr<AppendOnlyFile>> file =
      AppendOnlyFile::Create(path, 0600);
  ASSERT_TRUE(file.ok()) << file.status();
  rounds_ = file->get();
  ASSERT_TRUE(Run(absl::Milliseconds(200)).ok()) << log_.str();
  std::ifstream in(path);
  std::vector<Json> lines;
  for (std::string line; std::getline(in, line);) {
    absl::StatusOr<Json> j = ParseJson(line);
    ASSERT_TRUE(j.ok()) << j.status() << "\n" << line;
    lines.push_back(*j);
  }
  ASSERT_EQ(lines.size(), Rounds().size());  // 50 ms (early), 200, ... 800
  ASSERT_EQ(lines.size(), 5u);
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i]["round"].get<uint64_t>(), i + 1);
    // Dry run: every round plans the hot pages' promotions again.
    EXPECT_EQ(lines[i]["promoted_pages"].get<int>(), kHotPages);
    ASSERT_EQ(lines[i]["moves"].size(), static_cast<size_t>(kHotPages));
    EXPECT_EQ(lines[i]["moves"][0][4].get<std::string>(), "promote");
  }
  EXPECT_NEAR(lines[0]["t_s"].get<double>(), 0.05, 1e-9);
  EXPECT_NEAR(lines[1]["t_s"].get<double>(), 0.2, 1e-9);
  EXPECT_TRUE(absl::StrContains(log_.str(), "round=5")) << log_.str();
}

// A rounds file at its bound (the daemon's rounds_max_bytes) keeps the
// whole lines it has, says so once, and the run goes on to its end.
TEST_F(AttachLoopTest, ARoundsFileAtItsBoundStopsRecordingNotTheRun) {
  options_.dry_run = true;
  options_.duration_s = 1;
  const std::string path =
      absl::StrCat(::testing::TempDir(), "/attach_rounds_bound.jsonl");
  absl::StatusOr<std::unique_ptr<AppendOnlyFile>> file =
      AppendOnlyFile::Create(path, 0600);
  ASSERT_TRUE(file.ok()) << file.status();
  AppendOnlyFile* f = file->get();
  rounds_ = f;
  // Once the first line is in: room for two lines of about its size, not
  // three (a dry run's rounds plan the same moves).
  before_round_ = [f] {
    if (f->max_bytes() == 0 && f->bytes() > 0) {
      f->set_max_bytes(f->bytes() * 5 / 2);
    }
  };
  ASSERT_TRUE(Run(absl::Milliseconds(200)).ok()) << log_.str();
  EXPECT_EQ(Rounds().size(), 5u);  // the run went on
  std::ifstream in(path);
  int lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    ASSERT_TRUE(ParseJson(line).ok()) << line;
  }
  EXPECT_EQ(lines, 2);
  const std::string log = log_.str();
  const std::string warning = "warning: rounds: ";
  ASSERT_TRUE(absl::StrContains(log, warning)) << log;
  EXPECT_EQ(log.find(warning), log.rfind(warning)) << log;  // once
  EXPECT_TRUE(absl::StrContains(log, "would pass its bound of")) << log;
  EXPECT_TRUE(absl::StrContains(log, "no further round is recorded")) << log;
}

TEST_F(AttachLoopTest, DryRunDecidesAndReportsButMovesNothing) {
  options_.dry_run = true;
  ASSERT_TRUE(Run().ok());
  const AttachStats& s = recorder_.published.back().stats;
  // Nothing moved, so every round (the early first at 50 ms, then 200 ms
  // apart over 2 s) plans the same promotions again.
  EXPECT_EQ(s.rounds, 10u);
  EXPECT_EQ(s.planned_promotions, kHotPages * s.rounds);
  EXPECT_EQ(s.migrator.promoted_pages, 0u);
  EXPECT_EQ(s.migrator.submitted, 0u);
  EXPECT_TRUE(s.dry_run);
  EXPECT_EQ(mover_.move_calls(), 0u);
  EXPECT_EQ(mover_.CountOn(2), static_cast<size_t>(kHotPages));
  EXPECT_EQ(migrator_->state(), MigratorState::kNotStarted);
  EXPECT_TRUE(absl::StrContains(AttachStatsJson(s), "\"dry_run\": true"));
}

// A perf source's THROTTLE/UNTHROTTLE counts reach the stats and the status
// line (issue 12, section 4).
TEST_F(AttachLoopTest, PerfThrottleCountsReachStatsAndStatusLine) {
  options_.dry_run = true;
  options_.duration_s = 0.5;
  source_.perf = PerfSourceStats{7, 6, 3, 1};
  ASSERT_TRUE(Run(absl::Milliseconds(200)).ok());
  const AttachStats& s = recorder_.published.back().stats;
  ASSERT_TRUE(s.perf.has_value());
  EXPECT_EQ(s.perf->throttle, 7u);
  EXPECT_EQ(s.perf->unthrottle, 6u);
  EXPECT_TRUE(absl::StrContains(AttachStatsJson(s), "\"throttle\": 7"));
  EXPECT_TRUE(absl::StrContains(log_.str(),
                                "failed=0 throttled=7 unthrottled=6 lost=4"))
      << log_.str();
}

// Every published stats says who (the identity given) and when (the wall
// clock at the publish, not the loop's monotonic clock).
TEST_F(AttachLoopTest, StatsCarryTheIdentityAndTheWallTime) {
  options_.dry_run = true;
  options_.duration_s = 0.5;
  options_.identity.pid = pid_;
  options_.identity.comm = "attach test";
  options_.identity.workload = "w";
  options_.identity.version = "9.8.7";
  int64_t wall = 1796194128000000000;
  wall_ns_ = [&wall] { return wall += 1000000000; };
  ASSERT_TRUE(Run(absl::Milliseconds(200)).ok());
  ASSERT_GE(recorder_.published.size(), 2u);
  int64_t previous = 0;
  for (const auto& e : recorder_.published) {
    EXPECT_EQ(e.stats.id.pid, pid_);
    EXPECT_EQ(e.stats.id.workload, "w");
    EXPECT_EQ(e.stats.id.version, "9.8.7");
    EXPECT_GT(e.stats.timestamp_ns, previous);  // taken at each publish
    previous = e.stats.timestamp_ns;
  }
  EXPECT_EQ(previous, wall);
  // Unset: CLOCK_REALTIME, so within a minute of now.
  wall_ns_ = nullptr;
  recorder_.published.clear();
  source_.stops = 0;
  ASSERT_TRUE(Run(absl::Milliseconds(200)).ok());
  EXPECT_NEAR(
      static_cast<double>(recorder_.published.back().stats.timestamp_ns) / 1e9,
      absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()), 60);
}

// cpu_seconds counts every thread when the loop is given the process CPU
// clock, as `hotpage attach` gives it: the migrator thread burns 300 ms of
// CPU in a move and the stats show it. (The loop thread's own clock, the
// earlier measure, missed it: the migrator's CPU was measured but not
// reported.)
TEST_F(AttachLoopTest, CpuSecondsIncludeTheMigratorThread) {
  options_.duration_s = 1;
  cpu_time_ = ProcessCpuTime;
  std::atomic<bool> burned{false};
  std::atomic<std::thread::id> mover_thread{};
  mover_.SetCallHook([&](FakePageMover::Op op) {
    if (op != FakePageMover::Op::kMove || burned.exchange(true)) return;
    mover_thread = std::this_thread::get_id();
    const absl::Duration start = ThreadCpuTime();
    while (ThreadCpuTime() - start < absl::Milliseconds(300)) {
    }
  });
  ASSERT_TRUE(Run(absl::Milliseconds(200)).ok());
  ASSERT_TRUE(burned.load());
  EXPECT_NE(mover_thread.load(), std::this_thread::get_id());  // the migrator
  const AttachStats& s = recorder_.published.back().stats;
  EXPECT_GT(s.migrator.promoted_pages, 0u);
  EXPECT_GE(s.cpu_seconds, 0.3);
}

// The migrator measures hot_to_moved on its own clock against the round's
// stamp: with the loop's clock being the migrator's, a move that takes 300 ms
// of (fake) time after the round shows as >= 300 ms. Stamped with wall time
// (absl::Now()), every latency was negative and recorded as 0.
TEST_F(AttachLoopTest, MovesHotPagesAndMeasuresHotToMovedOnTheMigratorsClock) {
  mover_.SetCallHook([this](FakePageMover::Op op) {
    if (op == FakePageMover::Op::kMove) clock_.Advance(absl::Milliseconds(300));
  });
  ASSERT_TRUE(Run().ok()) << log_.str();
  EXPECT_EQ(mover_.CountOn(0), static_cast<size_t>(kHotPages));
  const AttachStats& s = recorder_.published.back().stats;
  EXPECT_EQ(s.migrator.promoted_pages, static_cast<uint64_t>(kHotPages));
  ASSERT_EQ(s.migrator.hot_to_moved.count(), static_cast<uint64_t>(kHotPages));
  EXPECT_GE(s.migrator.hot_to_moved.max(), absl::Milliseconds(300));
  // At most the move plus the run's length (the loop's polls advance the
  // same clock meanwhile).
  EXPECT_LE(s.migrator.hot_to_moved.max(), absl::Milliseconds(300 + 2500));
  EXPECT_GT(s.migrator.hot_to_moved.Quantile(0.5), absl::ZeroDuration());
  EXPECT_FALSE(absl::StrContains(AttachStatsJson(s), "\"max\": 0\n"))
      << AttachStatsJson(s);
  EXPECT_EQ(migrator_->state(), MigratorState::kStopped);
}

// A round's line says how long the round took (took=): the loop reads no
// samples meanwhile. Each placement query here takes 7 ms of the loop's
// clock.
TEST_F(AttachLoopTest, TheRoundLineSaysHowLongTheRoundTook) {
  options_.round_lines = true;
  mover_.SetCallHook([this](FakePageMover::Op op) {
    if (op == FakePageMover::Op::kQuery) clock_.Advance(absl::Milliseconds(7));
  });
  ASSERT_TRUE(Run().ok()) << log_.str();
  const std::string log = log_.str();
  const size_t round1 = log.find("round=1 ");
  ASSERT_NE(round1, std::string::npos) << log;
  const size_t at = log.find(" took=", round1);
  ASSERT_NE(at, std::string::npos) << log;
  ASSERT_LT(at, log.find('\n', round1)) << log;  // on round 1's line
  int took_ms = -1;
  ASSERT_TRUE(absl::SimpleAtoi(
      log.substr(at + 6, log.find("ms", at + 6) - at - 6), &took_ms))
      << log;
  EXPECT_GE(took_ms, 7) << log;
}

// A source of slow-tier samples only (hint faults): the pages that arrive
// are promoted between rounds (PolicyEngine::PlaceArrivals), so the
// migrator has them before the first round.
TEST_F(AttachLoopTest, ArrivalsReachTheMigratorBeforeTheFirstRound) {
  slow_tier_samples_ = true;
  std::optional<uint64_t> at_first_round;
  before_round_ = [&] {
    if (!at_first_round) at_first_round = migrator_->Snapshot().submitted;
  };
  ASSERT_TRUE(Run().ok()) << log_.str();
  ASSERT_TRUE(at_first_round.has_value());
  EXPECT_EQ(*at_first_round, static_cast<uint64_t>(kHotPages));
  EXPECT_EQ(engine_->counters().arrival_promotions,
            static_cast<uint64_t>(kHotPages));
  EXPECT_EQ(mover_.CountOn(0), static_cast<size_t>(kHotPages));
}

// Hint faults from a process that grows (sampler/hintfault/
// first_touch_filter.h): in its first 3 polls it first-touches 16 new
// slow-tier pages each (pages 16-63), its resident set growing by as many;
// from then on its hot pages 0-15 take hint faults. With the filter the
// first touches are dropped and only the hot pages promoted; without it
// every page is an arrival and all 64 are.
class GrowingProcessTest : public AttachLoopTest {
 protected:
  void RunGrowing(bool filter) {
    constexpr int kNew = 16, kGrowPolls = 3;
    mover_.AddPages(kBase + kHotPages * kPage, kNew * kGrowPolls, kPage, 2);
    slow_tier_samples_ = true;
    source_.kind = SampleSource::kPageFault;
    options_.source_name = "hintfault";
    options_.duration_s = 1;
    uint64_t resident = 1000;
    if (filter) resident_pages_ = [&resident] { return resident; };
    source_.hook = [&](int poll) {
      if (poll <= kGrowPolls) {
        source_.first = kHotPages + kNew * (poll - 1);
        source_.pages = kNew;
        resident += kNew;
      } else {
        source_.first = 0;
        source_.pages = kHotPages;
      }
      return absl::OkStatus();
    };
    ASSERT_TRUE(Run().ok()) << log_.str();
    migrator_->WaitUntilIdle(absl::Seconds(5));
  }
};

TEST_F(GrowingProcessTest, FirstTouchesAreDroppedAndOnlyHotPagesPromoted) {
  RunGrowing(/*filter=*/true);
  EXPECT_EQ(mover_.CountOn(0), static_cast<size_t>(kHotPages));
  for (int i = 0; i < kHotPages; ++i) {
    EXPECT_EQ(mover_.NodeOf(kBase + i * kPage), std::optional<int>(0)) << i;
  }
  const AttachStats& end = recorder_.published.back().stats;
  EXPECT_EQ(end.first_touches_dropped, 48u);
  EXPECT_EQ(end.resident_growth_pages, 48u);
  EXPECT_EQ(end.arrival_promotions, static_cast<uint64_t>(kHotPages));
  EXPECT_TRUE(absl::StrContains(log_.str(),
                                "first touches: 48 fault samples dropped "
                                "while the resident set grew by 48 pages"))
      << log_.str();
}

// First touches made after the source started but before the loop did:
// their samples wait in the ring, and the growth since the reading before
// the source is their budget. Read only at the loop's start, that growth
// would be baseline and the 16 pages of the first poll promoted.
TEST_F(GrowingProcessTest, FirstTouchesQueuedBeforeTheLoopAreDroppedToo) {
  constexpr int kNew = 16;
  mover_.AddPages(kBase + kHotPages * kPage, kNew, kPage, 2);
  slow_tier_samples_ = true;
  source_.kind = SampleSource::kPageFault;
  options_.source_name = "hintfault";
  options_.duration_s = 1;
  resident_before_source_ = 1000;
  resident_pages_ = [] { return uint64_t{1000 + kNew}; };
  source_.hook = [&](int poll) {
    source_.first = poll == 1 ? kHotPages : 0;
    source_.pages = poll == 1 ? kNew : kHotPages;
    return absl::OkStatus();
  };
  ASSERT_TRUE(Run().ok()) << log_.str();
  migrator_->WaitUntilIdle(absl::Seconds(5));
  EXPECT_EQ(mover_.CountOn(0), static_cast<size_t>(kHotPages));
  EXPECT_EQ(recorder_.published.back().stats.first_touches_dropped,
            static_cast<uint64_t>(kNew));
}

TEST_F(GrowingProcessTest, WithoutTheFilterEveryFirstTouchIsPromoted) {
  RunGrowing(/*filter=*/false);
  EXPECT_EQ(mover_.CountOn(0), static_cast<size_t>(kHotPages + 48));
  EXPECT_EQ(recorder_.published.back().stats.first_touches_dropped, 0u);
  EXPECT_FALSE(absl::StrContains(log_.str(), "first touches:"));
}

// A round waits while arrivals are still being placed
// (PolicyEngine::RoundWaitsForArrivals): 8 new pages come in every poll up
// to the `last` one. The first samples bring the first round to interval
// / 4 (100 ms, poll 2); it waits while polls place new pages, at most
// until interval / 2 after it was due (300 ms, poll 6). Without the wait
// it runs at 100 ms having seen 16 pages.
class ArrivalStreamTest : public AttachLoopTest {
 protected:
  static constexpr int kPerPoll = 8;
  static constexpr int kPages = 10 * kPerPoll;

  void RunStream(int last, absl::Duration expect_round_at,
                 uint64_t expect_waited_rounds) {
    mover_.AddPages(kBase + kHotPages * kPage, kPages - kHotPages, kPage, 2);
    slow_tier_samples_ = true;
    source_.hook = [this, last](int poll) {
      // The migrator keeps up: what the last poll queued is moved before
      // this one (a round also waits while arrivals' moves are queued).
      migrator_->WaitUntilIdle(absl::Seconds(5));
      source_.pages = kPerPoll * std::min(poll, last);
      return absl::OkStatus();
    };
    std::optional<absl::Duration> first_at;
    uint64_t submitted = 0;
    before_round_ = [&] {
      if (first_at) return;
      first_at = clock_.Now() - start_;
      submitted = migrator_->Snapshot().submitted;
    };
    ASSERT_TRUE(Run(absl::Milliseconds(400)).ok()) << log_.str();
    ASSERT_TRUE(first_at.has_value());
    EXPECT_EQ(*first_at, expect_round_at);
    // Every page that arrived before the round was placed before it.
    const int polls = static_cast<int>(expect_round_at / kPoll);
    EXPECT_EQ(submitted,
              static_cast<uint64_t>(kPerPoll * std::min(polls, last)));
    EXPECT_EQ(engine_->counters().arrival_promotions,
              static_cast<uint64_t>(kPerPoll * last));
    // What --stats-json and the Prometheus text say: the rounds that
    // waited, and every page that arrived.
    ASSERT_FALSE(recorder_.published.empty());
    const AttachStats& end = recorder_.published.back().stats;
    EXPECT_EQ(end.rounds_waited_for_arrivals, expect_waited_rounds);
    EXPECT_EQ(end.arrival_promotions, static_cast<uint64_t>(kPerPoll * last));
  }
};

TEST_F(ArrivalStreamTest, ARoundWaitsUntilABurstOfArrivalsIsPlaced) {
  RunStream(/*last=*/3, absl::Milliseconds(200), /*expect_waited_rounds=*/1);
}

TEST_F(ArrivalStreamTest, ARoundWaitsAtMostHalfAnIntervalForArrivals) {
  // The next round, due at 400 ms, waits too: pages still come until
  // 500 ms.
  RunStream(/*last=*/10, absl::Milliseconds(300), /*expect_waited_rounds=*/2);
}

// The burst of ARoundWaitsUntilABurstOfArrivalsIsPlaced (placed by 150 ms,
// the round then due at 200 ms), with the migrator's copies held until
// the poll at 250 ms: the round also waits while the arrivals' moves are
// queued (PolicyEngine::RoundWaitsForArrivals), and runs at 250 ms with
// every page moved. Without that wait it ran at 200 ms beside the copies.
TEST_F(AttachLoopTest, ARoundWaitsWhileTheArrivalsMovesAreQueued) {
  constexpr int kPerPoll = 8, kLast = 3, kPages = 10 * kPerPoll;
  mover_.AddPages(kBase + kHotPages * kPage, kPages - kHotPages, kPage, 2);
  slow_tier_samples_ = true;
  std::atomic<bool> copies{false};
  mover_.SetCallHook([&copies](FakePageMover::Op op) {
    if (op != FakePageMover::Op::kMove) return;
    while (!copies.load())
      std::this_thread::sleep_for(
          absl::ToChronoMilliseconds(absl::Milliseconds(1)));
  });
  source_.hook = [&](int poll) {
    if (poll >= 5) {
      copies = true;
      migrator_->WaitUntilIdle(absl::Seconds(5));
    }
    source_.pages = kPerPoll * std::min(poll, kLast);
    return absl::OkStatus();
  };
  std::optional<absl::Duration> first_at;
  before_round_ = [&] {
    if (!first_at) first_at = clock_.Now() - start_;
  };
  const absl::Status s = Run(absl::Milliseconds(400));
  copies = true;
  mover_.SetCallHook(nullptr);  // `copies` ends with this scope
  ASSERT_TRUE(s.ok()) << log_.str();
  ASSERT_TRUE(first_at.has_value());
  EXPECT_EQ(*first_at, absl::Milliseconds(250));
  EXPECT_EQ(recorder_.published.back().stats.rounds_waited_for_arrivals, 1u);
  EXPECT_EQ(mover_.CountOn(0), static_cast<size_t>(kPerPoll * kLast));
}

// The hint-fault source with both fast nodes full of pages it never saw:
// the hot pages wait on node 2 with no victim to make room, and after
// three such rounds the log says why, once (attach_loop.h, "A fast tier
// the source cannot see"). Another source name: no such line.
// Not where the kernel's reclaim makes the room (reclaim_makes_room), nor
// for another source.
TEST_F(AttachLoopTest, AFullFastTierTheHintFaultSourceCannotSeeIsSaidOnce) {
  for (const char* source : {"hintfault", "scripted", "hintfault+reclaim"}) {
    SCOPED_TRACE(source);
    reclaim_makes_room_ = std::string(source) == "hintfault+reclaim";
    if (reclaim_makes_room_) source = "hintfault";
    for (int node = 0; node < 2; ++node) {
      tree_.Write(
          absl::StrCat("/sys/devices/system/node/node", node, "/meminfo"),
          absl::StrCat("Node ", node, " MemTotal:  1048576 kB\nNode ", node,
                       " MemFree:  1024 kB\n"));
    }
    slow_tier_samples_ = true;
    options_.source_name = source;
    log_.str("");
    ASSERT_TRUE(Run().ok()) << log_.str();
    // With reclaim the hot pages, sampled round after round, go into the
    // full nodes; without it nothing moves.
    EXPECT_EQ(mover_.CountOn(0) + mover_.CountOn(1),
              reclaim_makes_room_ ? static_cast<size_t>(kHotPages) : 0u);
    EXPECT_EQ(engine_->counters().reclaim_promotions,
              reclaim_makes_room_ ? static_cast<uint64_t>(kHotPages) : 0u);
    // The stats carry the repeat window where reclaim makes room, and none
    // elsewhere. The source samples the hot pages after their promotion
    // too, which the engine takes as returns (the kernel sent them back):
    // the window is cut below the long window, not below the 1 s floor.
    ASSERT_FALSE(recorder_.published.empty());
    const double window = recorder_.published.back().stats.repeat_window_s;
    EXPECT_EQ(recorder_.published.back().stats.reclaim_makes_room,
              reclaim_makes_room_);
    if (reclaim_makes_room_) {
      EXPECT_GE(window, 1.0);
      EXPECT_LT(window, 10.0);
    } else {
      EXPECT_EQ(window, 0.0);
    }
    const std::string said = "which the hint-fault source cannot see";
    const std::string log = log_.str();
    const size_t at = log.find(said);
    if (std::string(source) == "hintfault" && !reclaim_makes_room_) {
      ASSERT_NE(at, std::string::npos) << log;
      EXPECT_EQ(log.find(said, at + 1), std::string::npos) << log;
      EXPECT_TRUE(absl::StrContains(log, "16 hot pages wait on slower tiers"))
          << log;
    } else {
      EXPECT_EQ(at, std::string::npos) << log;
    }
  }
}

// Without it the first round plans them.
TEST_F(AttachLoopTest, WithoutSlowTierSamplesTheFirstRoundPlansThem) {
  std::optional<uint64_t> at_first_round;
  before_round_ = [&] {
    if (!at_first_round) at_first_round = migrator_->Snapshot().submitted;
  };
  ASSERT_TRUE(Run().ok()) << log_.str();
  ASSERT_TRUE(at_first_round.has_value());
  EXPECT_EQ(*at_first_round, 0u);
  EXPECT_EQ(engine_->counters().arrival_promotions, 0u);
  EXPECT_EQ(mover_.CountOn(0), static_cast<size_t>(kHotPages));
}

// The loop tells the engine what each round cost its thread (CPU time
// across RunRound), for the room rule's budget
// (EngineOptions::room_round_cpu_share): each reading of the thread's
// CPU clock here is 7 ms after the last.
TEST_F(AttachLoopTest, TheEngineLearnsWhatARoundCost) {
  absl::Duration cpu;
  cpu_time_ = [&cpu] { return cpu += absl::Milliseconds(7); };
  ASSERT_TRUE(Run().ok()) << log_.str();
  EXPECT_GT(engine_->counters().rounds, 0u);
  EXPECT_EQ(engine_->last_round_cost_ns(), 7000000u);
}

TEST_F(AttachLoopTest, TargetExitEndsTheRunCleanly) {
  source_.hook = [this](int poll) {
    if (poll == 6) alive_ = false;
    return absl::OkStatus();
  };
  ASSERT_TRUE(Run().ok());
  EXPECT_EQ(loop_->stop_reason(), "the process exited");
  EXPECT_EQ(source_.polls, 6);
  EXPECT_EQ(Rounds().size(), 2u);  // at polls 1 (early) and 4
  ExpectTornDown();
}

TEST_F(AttachLoopTest, SourceSeeingTheTargetGoneEndsCleanly) {
  source_.hook = [](int poll) {
    return poll == 5 ? absl::NotFoundError("DAMON stopped: target exited")
                     : absl::OkStatus();
  };
  ASSERT_TRUE(Run().ok());
  EXPECT_EQ(loop_->stop_reason(), "the process exited");
  EXPECT_EQ(Rounds().size(), 2u);  // at polls 1 (early, 50 ms) and 4 (200 ms)
  ExpectTornDown();
}

TEST_F(AttachLoopTest, SourceFailureEndsTheRunWithItsErrorAfterTeardown) {
  source_.hook = [](int poll) {
    return poll == 9 ? absl::InternalError("perf ring: read failed")
                     : absl::OkStatus();
  };
  absl::Status s = Run();
  EXPECT_EQ(s, absl::InternalError("perf ring: read failed"));
  EXPECT_EQ(Rounds().size(), 3u);  // polls 1, 4 and 8
  ExpectTornDown();
}

TEST_F(AttachLoopTest, TerminationFlagEndsTheRunBetweenRoundsWithTeardown) {
  source_.hook = [this](int poll) {
    if (poll == 7) stop_.store(true);
    return absl::OkStatus();
  };
  ASSERT_TRUE(Run().ok());
  EXPECT_EQ(loop_->stop_reason(), "interrupted");
  EXPECT_EQ(source_.polls, 7);
  EXPECT_EQ(Rounds().size(), 2u);  // polls 1 and 4
  EXPECT_EQ(migrator_->state(), MigratorState::kStopped);
  ExpectTornDown();
}

// The daemon runs members' migrators on its one migrator thread
// (tools/daemon/migrator_pool.h): the loop neither starts the migrator nor
// waits for it to drain at the end (up to 2 s), so a member stops at once.
TEST_F(AttachLoopTest, AnExternalMigratorIsNeitherStartedNorDrained) {
  migrator_external_ = true;
  source_.hook = [this](int poll) {
    if (poll == 7) stop_.store(true);
    return absl::OkStatus();
  };
  ASSERT_TRUE(Run().ok());
  EXPECT_EQ(loop_->stop_reason(), "interrupted");
  EXPECT_EQ(migrator_->state(), MigratorState::kNotStarted);
  ExpectTornDown();
}

// A real SIGTERM through TerminationSignalThread, as `hotpage attach` wires
// it: the loop ends at the first poll after the signal thread set the flag.
TEST_F(AttachLoopTest, SigtermEndsTheRunWithTeardown) {
  absl::StatusOr<std::unique_ptr<TerminationSignalThread>> signals =
      TerminationSignalThread::Start(
          [this](int) { stop_.store(true, std::memory_order_relaxed); },
          {SIGTERM});
  ASSERT_TRUE(signals.ok()) << signals.status();
  options_.duration_s = 3600;
  source_.hook = [](int poll) {
    if (poll == 3) kill(getpid(), SIGTERM);
    if (poll > 3) absl::SleepFor(absl::Milliseconds(1));  // let it arrive
    return absl::OkStatus();
  };
  ASSERT_TRUE(Run().ok());
  EXPECT_EQ(loop_->stop_reason(), "interrupted");
  EXPECT_GE(source_.polls, 3);
  EXPECT_EQ((*signals)->received(), 1);
  ExpectTornDown();
}

TEST_F(AttachLoopTest, MigratorFailureEndsTheRun) {
  // The round's promotions reach move_pages, which refuses (no
  // CAP_SYS_NICE): the migrator ends in kFailed and so does the loop.
  mover_.InjectCallError(FakePageMover::Op::kMove, EPERM, 1000);
  source_.hook = [](int poll) {
    if (poll > 4) absl::SleepFor(absl::Milliseconds(1));  // its thread
    return absl::OkStatus();
  };
  options_.duration_s = 3600;
  absl::Status s = Run();
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.message(), "CAP_SYS_NICE")) << s;
  EXPECT_EQ(loop_->stop_reason(), "the migrator failed");
  EXPECT_EQ(mover_.CountOn(2), static_cast<size_t>(kHotPages));
  ExpectTornDown();
}

// Reads a whole file; nullopt if missing.
std::optional<std::string> Slurp(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST_F(AttachLoopTest, StatsFilesAreReplacedAtomicallyEveryRound) {
  const std::string dir = tree_.root() + "/stats";
  tree_.Mkdir("/stats");
  const std::string json = dir + "/attach.json";
  const std::string prom = dir + "/attach.prom";
  AttachStatsFiles files(json, prom, &log_);
  stats_sink_ = &files;
  options_.dry_run = true;
  options_.duration_s = 1;
  options_.identity.pid = pid_;
  options_.identity.workload = "scripted";
  options_.identity.cgroup = "test.slice";
  // Before every poll's samples: what the files hold now.
  struct Seen {
    ino_t inode;
    std::string json;
  };
  std::vector<Seen> seen;
  source_.hook = [&](int) {
    struct stat st;
    if (stat(json.c_str(), &st) == 0) seen.push_back({st.st_ino, *Slurp(json)});
    return absl::OkStatus();
  };
  ASSERT_TRUE(Run().ok());
  // Rounds at polls 1 (early), 4, 8, 12, 16: one version of the file each, each
  // a new inode (renamed over the old one, never rewritten in place).
  std::vector<Seen> versions;
  for (const Seen& s : seen) {
    if (versions.empty() || versions.back().json != s.json)
      versions.push_back(s);
  }
  ASSERT_EQ(versions.size(), 5u);
  for (size_t i = 0; i < versions.size(); ++i) {
    EXPECT_TRUE(absl::StrContains(versions[i].json,
                                  absl::StrCat("\"rounds\": ", i + 1, ",")))
        << versions[i].json;
    if (i > 0) {
      EXPECT_NE(versions[i].inode, versions[i - 1].inode);
    }
  }
  // The final write, and no temporary files left behind.
  std::optional<std::string> last = Slurp(json);
  ASSERT_TRUE(last.has_value());
  EXPECT_TRUE(absl::StrContains(*last, "\"source\": \"scripted\""));
  std::optional<std::string> last_prom = Slurp(prom);
  ASSERT_TRUE(last_prom.has_value());
  EXPECT_TRUE(absl::StrContains(
      *last_prom,
      absl::StrCat("hotpage_samples_total{workload=\"scripted\",pid=\"", pid_,
                   "\",cgroup=\"test.slice\"} 320\n")))
      << *last_prom;
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  ASSERT_NE(d, nullptr);
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') names.push_back(e->d_name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"attach.json", "attach.prom"}));
}

// The stats formats, pinned: dashboards parse them.
TEST(AttachStatsTest, JsonAndPrometheusFormats) {
  AttachStats s;
  s.rounds = 3;
  s.samples = 1200;
  s.hot_pages = 40;
  s.hot_pages_by_node = {{0, 30}, {2, 10}};
  s.planned_promotions = 12;
  s.planned_demotions = 2;
  s.planned_locality = 1;
  s.promoted_entries = 4;
  s.yield_hits = 6;
  s.demoted_entries = 2;
  s.regret_hits = 1;
  s.early_rounds = 1;
  s.room_rounds = 1;
  s.short_window_held_rounds = 2;
  s.silences_doubted_rounds = 4;
  s.odds_pair_rounds = 5;
  s.arrival_promotions = 40;
  s.rounds_waited_for_arrivals = 3;
  s.first_touches_dropped = 11;
  s.resident_growth_pages = 13;
  s.refault_protections = 5;
  s.reclaim_promotions = 6;
  s.reclaim_returns = 2;
  s.repeat_window_s = 3.25;
  s.engine_bytes = 25165824;
  s.reclaim_makes_room = true;
  s.untracked_victims = 9;
  s.horizon_s = 6.5;
  s.migration_cost_ns = 2500;
  s.migration_margin_per_sec = 0.25;
  s.bandwidth_bound_rounds = 2;
  s.planned_sheds = 7;
  s.cpu_seconds = 0.25;
  s.migrator.promoted_pages = 10;
  s.migrator.demoted_pages = 2;
  s.migrator.promoted_bytes = 40960;
  s.migrator.demoted_bytes = 8192;
  s.migrator.failed_pages_by_errno = {{EBUSY, 1}};
  s.migrator.pingpong_pages = 1;
  s.migrator.hot_to_moved.Record(absl::Milliseconds(3));
  s.migrator.rate_limit_wait = absl::Milliseconds(1500);
  s.migrator.cpu_budget_wait = absl::Milliseconds(250);
  s.source = "pebs";
  s.damon_recovered = "kdamond 0 of pid 12";
  s.id.pid = 4242;
  s.id.comm = "memcached";
  s.id.workload = "cache";
  s.id.cgroup = "system.slice/memcached.service";
  s.id.version = "0.1.0";
  s.timestamp_ns = 1796194128123456789;
  EXPECT_EQ(AttachStatsJson(s), R"({
  "pid": 4242,
  "comm": "memcached",
  "workload": "cache",
  "cgroup": "system.slice/memcached.service",
  "version": "0.1.0",
  "timestamp": "2026-12-02T06:48:48.123Z",
  "timestamp_unix_s": 1796194128.123,
  "promoted_pages": 10,
  "demoted_pages": 2,
  "promoted_bytes": 40960,
  "demoted_bytes": 8192,
  "failed_pages": {
    "EBUSY": 1
  },
  "failed_pages_total": 1,
  "pingpong_pages": 1,
  "samples": 1200,
  "hot_pages": 40,
  "hot_pages_by_node": {
    "0": 30,
    "2": 10
  },
  "promotion_yield": 1.5,
  "demotion_regret": 0.5,
  "yield_samples": 6,
  "regret_samples": 1,
  "hot_to_moved_ms": {
    "count": 1,
    "p50": 3,
    "p99": 3,
    "max": 3
  },
  "rate_limit_wait_s": 1.5,
  "cpu_budget_wait_s": 0.25,
  "planned_promotions": 12,
  "planned_demotions": 2,
  "planned_locality": 1,
  "rounds": 3,
  "early_rounds": 1,
  "room_rounds": 1,
  "short_window_held_rounds": 2,
  "silences_doubted_rounds": 4,
  "odds_pair_rounds": 5,
  "arrival_promotions": 40,
  "rounds_waited_for_arrivals": 3,
  "first_touches_dropped": 11,
  "resident_growth_pages": 13,
  "refault_protections": 5,
  "reclaim_promotions": 6,
  "reclaim_returns": 2,
  "repeat_window_s": 3.25,
  "engine_bytes": 25165824,
  "reclaim_makes_room": true,
  "untracked_victims": 9,
  "horizon_s": 6.5,
  "migration_cost_ns": 2500,
  "migration_margin_per_sec": 0.25,
  "bandwidth_bound_rounds": 2,
  "planned_sheds": 7,
  "dry_run": false,
  "source": "pebs",
  "cpu_seconds": 0.25,
  "damon": {
    "recovered": "kdamond 0 of pid 12"
  }
}
)");
  EXPECT_EQ(
      AttachStatsProm(s),
      R"(# HELP hotpage_info Always 1; the labels say what runs: the process's comm, the sample source and hotpage's version.
# TYPE hotpage_info gauge
hotpage_info{workload="cache",pid="4242",cgroup="system.slice/memcached.service",comm="memcached",source="pebs",version="0.1.0"} 1
# HELP hotpage_stats_timestamp_seconds When these stats were taken (CLOCK_REALTIME, Unix seconds).
# TYPE hotpage_stats_timestamp_seconds gauge
hotpage_stats_timestamp_seconds{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 1796194128.123
# HELP hotpage_promoted_pages_total Pages moved to a faster tier.
# TYPE hotpage_promoted_pages_total counter
hotpage_promoted_pages_total{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 10
# HELP hotpage_demoted_pages_total Pages moved to a slower tier.
# TYPE hotpage_demoted_pages_total counter
hotpage_demoted_pages_total{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 2
# HELP hotpage_promoted_bytes_total Bytes moved to a faster tier.
# TYPE hotpage_promoted_bytes_total counter
hotpage_promoted_bytes_total{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 40960
# HELP hotpage_demoted_bytes_total Bytes moved to a slower tier.
# TYPE hotpage_demoted_bytes_total counter
hotpage_demoted_bytes_total{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 8192
# HELP hotpage_failed_pages_total Pages move_pages failed to move, by errno.
# TYPE hotpage_failed_pages_total counter
hotpage_failed_pages_total{workload="cache",pid="4242",cgroup="system.slice/memcached.service",errno="EBUSY"} 1
# HELP hotpage_pingpong_pages_total Pages put on hold for moving back and forth.
# TYPE hotpage_pingpong_pages_total counter
hotpage_pingpong_pages_total{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 1
# HELP hotpage_samples_total Samples ingested.
# TYPE hotpage_samples_total counter
hotpage_samples_total{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 1200
# HELP hotpage_hot_pages 4 KiB pages at or above the hot threshold.
# TYPE hotpage_hot_pages gauge
hotpage_hot_pages{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 40
# HELP hotpage_hot_pages_by_node Hot 4 KiB pages per NUMA node.
# TYPE hotpage_hot_pages_by_node gauge
hotpage_hot_pages_by_node{workload="cache",pid="4242",cgroup="system.slice/memcached.service",node="0"} 30
hotpage_hot_pages_by_node{workload="cache",pid="4242",cgroup="system.slice/memcached.service",node="2"} 10
# HELP hotpage_promotion_yield Samples on promoted pages after promotion, per promoted page.
# TYPE hotpage_promotion_yield gauge
hotpage_promotion_yield{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 1.5
# HELP hotpage_demotion_regret Samples on demoted pages after demotion, while on a slower tier, per demoted page (bandwidth sheds not counted).
# TYPE hotpage_demotion_regret gauge
hotpage_demotion_regret{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 0.5
# HELP hotpage_yield_samples_total Samples on promoted pages while on the fast tier.
# TYPE hotpage_yield_samples_total counter
hotpage_yield_samples_total{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 6
# HELP hotpage_regret_samples_total Samples on demoted pages while on a slower tier.
# TYPE hotpage_regret_samples_total counter
hotpage_regret_samples_total{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 1
# HELP hotpage_hot_to_moved_seconds From found hot to moved (quantiles are the upper bounds of power-of-two buckets).
# TYPE hotpage_hot_to_moved_seconds summary
hotpage_hot_to_moved_seconds{workload="cache",pid="4242",cgroup="system.slice/memcached.service",quantile="0.5"} 0.003
hotpage_hot_to_moved_seconds{workload="cache",pid="4242",cgroup="system.slice/memcached.service",quantile="0.99"} 0.003
hotpage_hot_to_moved_seconds_sum{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 0.003
hotpage_hot_to_moved_seconds_count{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 1
# HELP hotpage_hot_to_moved_max_seconds The longest time from found hot to moved.
# TYPE hotpage_hot_to_moved_max_seconds gauge
hotpage_hot_to_moved_max_seconds{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 0.003
# HELP hotpage_rate_limit_wait_seconds_total Time the migrator waited for the migration rate limit.
# TYPE hotpage_rate_limit_wait_seconds_total counter
hotpage_rate_limit_wait_seconds_total{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 1.5
# HELP hotpage_cpu_budget_wait_seconds_total Time the migrator waited for its CPU budget.
# TYPE hotpage_cpu_budget_wait_seconds_total counter
hotpage_cpu_budget_wait_seconds_total{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 0.25
# HELP hotpage_planned_promotions_total 4 KiB pages the policy chose to promote.
# TYPE hotpage_planned_promotions_total counter
hotpage_planned_promotions_total{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 12
# HELP hotpage_planned_demotions_total 4 KiB pages the policy chose to demote.
# TYPE hotpage_planned_demotions_total counter
hotpage_planned_demotions_total{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 2
# HELP hotpage_planned_locality_pages_total 4 KiB pages --locality chose to move within a tier.
# TYPE hotpage_planned_locality_pages_total counter
hotpage_planned_locality_pages_total{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 1
# HELP hotpage_rounds_total Policy rounds run.
# TYPE hotpage_rounds_total counter
hotpage_rounds_total{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 3
# HELP hotpage_early_rounds_total Rounds brought forward: by a shift of the hot set, the start, or a burst of samples on pages the last round did not place.
# TYPE hotpage_early_rounds_total counter
hotpage_early_rounds_total{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 1
# HELP hotpage_room_rounds_total Of the early rounds, those brought forward by new pages that used up the room the last round left on a fast node; they only demote.
# TYPE hotpage_room_rounds_total counter
hotpage_room_rounds_total{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 1
# HELP hotpage_short_window_held_rounds_total Rounds that ranked candidates without their samples since the last round: the last rounds' swaps displaced pages that then drew more samples than the pages promoted.
# TYPE hotpage_short_window_held_rounds_total counter
hotpage_short_window_held_rounds_total{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 2
# HELP hotpage_silences_doubted_rounds_total Rounds that took the victims' silences at the family-wise level: the pages the last rounds' swaps displaced for their silence then drew more samples than their bounds allowed.
# TYPE hotpage_silences_doubted_rounds_total counter
hotpage_silences_doubted_rounds_total{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 4
# HELP hotpage_odds_pair_rounds_total Rounds whose swap test took the odds (a candidate more likely hotter than its victim than not): a slower tier was saturated.
# TYPE hotpage_odds_pair_rounds_total counter
hotpage_odds_pair_rounds_total{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 5
# HELP hotpage_arrival_promotions_total Pages promoted as they arrived, between rounds (hint faults: the kernel's tiering mode scans slow-tier pages only).
# TYPE hotpage_arrival_promotions_total counter
hotpage_arrival_promotions_total{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 40
# HELP hotpage_rounds_waited_for_arrivals_total Rounds that waited, at most half an interval, while a burst of arriving pages was being placed.
# TYPE hotpage_rounds_waited_for_arrivals_total counter
hotpage_rounds_waited_for_arrivals_total{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 3
# HELP hotpage_first_touches_dropped_total Fault samples dropped as possible first touches while the process's resident set grew (hint faults: the page-fault event counts both).
# TYPE hotpage_first_touches_dropped_total counter
hotpage_first_touches_dropped_total{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 11
# HELP hotpage_resident_growth_pages_total Growth of the process's resident set seen by the first-touch filter, in 4 KiB pages (hint faults).
# TYPE hotpage_resident_growth_pages_total counter
hotpage_resident_growth_pages_total{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 13
# HELP hotpage_refault_protections_total Demoted pages that faulted back within the long window (10 s), each then kept from being a victim for one (hint faults: the only evidence of a page on the fast tier).
# TYPE hotpage_refault_protections_total counter
hotpage_refault_protections_total{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 5
# HELP hotpage_reclaim_promotions_total 4 KiB pages promoted into a full fast node whose reclaim demotes (demotion_enabled): the kernel's LRU chose what left.
# TYPE hotpage_reclaim_promotions_total counter
hotpage_reclaim_promotions_total{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 6
# HELP hotpage_reclaim_returns_total Of those, pages back on the slow tier within the long window (10 s): the kernel's reclaim demoted them.
# TYPE hotpage_reclaim_returns_total counter
hotpage_reclaim_returns_total{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 2
# HELP hotpage_repeat_window_seconds The window in which two hint faults make a page a candidate for a promotion left to reclaim, cut by the returns' ages (0: reclaim does not make room).
# TYPE hotpage_repeat_window_seconds gauge
hotpage_repeat_window_seconds{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 3.25
# HELP hotpage_engine_bytes The policy engine's own memory: its hotness table and per-page state (capacities, as of the last round).
# TYPE hotpage_engine_bytes gauge
hotpage_engine_bytes{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 25165824
# HELP hotpage_reclaim_makes_room 1: the fast tier's victims are left to the kernel's reclaim (hint faults where demotion_enabled is true, followed as it changes).
# TYPE hotpage_reclaim_makes_room gauge
hotpage_reclaim_makes_room{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 1
# HELP hotpage_untracked_victims_total 4 KiB pages on the fast tier never sampled, offered as the coldest victims (sources that see every access: pebs, ibs, damon).
# TYPE hotpage_untracked_victims_total counter
hotpage_untracked_victims_total{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 9
# HELP hotpage_bandwidth_bound_rounds_total Rounds whose fast tier's loaded latency was above the next tier's.
# TYPE hotpage_bandwidth_bound_rounds_total counter
hotpage_bandwidth_bound_rounds_total{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 2
# HELP hotpage_planned_sheds_total 4 KiB hot pages the bandwidth rule chose to move off a saturated fast tier.
# TYPE hotpage_planned_sheds_total counter
hotpage_planned_sheds_total{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 7
# HELP hotpage_horizon_seconds The last round's learned benefit horizon.
# TYPE hotpage_horizon_seconds gauge
hotpage_horizon_seconds{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 6.5
# HELP hotpage_migration_cost_seconds The measured cost of moving one 4 KiB page.
# TYPE hotpage_migration_cost_seconds gauge
hotpage_migration_cost_seconds{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 2.5e-06
# HELP hotpage_migration_margin_per_second The last round's benefit margin per second (0: no move gated; no cost measured yet, or fault or DAMON samples).
# TYPE hotpage_migration_margin_per_second gauge
hotpage_migration_margin_per_second{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 0.25
# HELP hotpage_dry_run 1: deciding without moving (--dry-run).
# TYPE hotpage_dry_run gauge
hotpage_dry_run{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 0
# HELP hotpage_cpu_seconds_total CPU time of every hotpage thread since the loop started.
# TYPE hotpage_cpu_seconds_total counter
hotpage_cpu_seconds_total{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 0.25
# HELP hotpage_damon_recovered 1: a kdamond left by a killed hotpage was removed at the start.
# TYPE hotpage_damon_recovered gauge
hotpage_damon_recovered{workload="cache",pid="4242",cgroup="system.slice/memcached.service"} 1
)");
}

// A view whose placement queries are slow (1 ms each, as a loaded machine
// makes move_pages): a round over N tracked pages lasts N ms or more. It
// is Interrupted() once the loop's stop flag is set, as the daemon's
// FairShareView is.
class SlowView : public MemoryView {
 public:
  explicit SlowView(const std::atomic<bool>* stop) : stop_(stop) {}
  int QueryNodes(absl::Span<const uint64_t> pages,
                 absl::Span<int> status) override {
    absl::SleepFor(absl::Milliseconds(1));
    for (int& st : status) st = 2;
    const int n = queries.fetch_add(1) + 1;
    if (n == 1) first_query = absl::Now();
    if (n == kMark) marked = absl::Now();
    return 0;
  }
  std::vector<NumaMapsRange> Ranges() override { return {}; }
  std::vector<NodeFree> Free() override {
    return {{0, kGiB / 2}, {1, kGiB / 2}, {2, kGiB / 2}};
  }
  bool Interrupted() override { return stop_->load(); }

  static constexpr int kMark = 50;  // queries before the stop
  std::atomic<int> queries{0};
  absl::Time first_query;
  absl::Time marked;

 private:
  const std::atomic<bool>* const stop_;
};

// SIGTERM under load (issue 14): a stop that comes while a round queries
// its pages ends the round within a fraction of its length, and nothing
// of the round is carried out.
TEST_F(AttachLoopTest, AStopMidRoundEndsTheRoundPromptlyAndMovesNothing) {
  constexpr int kPages = 1000;  // a round of >= 1 s of queries
  source_.pages = kPages;
  options_.duration_s = 0;  // until stopped
  // One page per query call: the stop is seen between calls (a batch is
  // one call), and this round must be made of many.
  query_batch_pages_ = 1;
  SlowView slow(&stop_);
  view_override_ = &slow;
  absl::Time stopped_at;
  std::thread stopper([&] {
    while (slow.queries.load() < SlowView::kMark) {
      absl::SleepFor(absl::Milliseconds(1));
    }
    stopped_at = absl::Now();
    stop_.store(true);
  });
  ASSERT_TRUE(Run().ok());
  const absl::Time returned = absl::Now();
  stopper.join();
  EXPECT_EQ(loop_->stop_reason(), "interrupted");
  // The round's length, from its own pace: the mean query time so far,
  // times the pages it would have queried.
  const absl::Duration per_query =
      (slow.marked - slow.first_query) / (SlowView::kMark - 1);
  const absl::Duration round = per_query * kPages;
  EXPECT_LT(returned - stopped_at, round / 4)
      << "stop took " << (returned - stopped_at) << ", the round " << round;
  EXPECT_LT(slow.queries.load(), kPages / 2);
  // Nothing of the interrupted round was submitted or moved.
  EXPECT_EQ(migrator_->Snapshot().submitted, 0u);
  EXPECT_EQ(mover_.move_calls(), 0u);
  ExpectTornDown();
}

}  // namespace
}  // namespace hotpage
