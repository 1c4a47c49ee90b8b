// Tests of the comparison's pieces that need no guest: the checker's logic
// (Watcher over a FakePageMover, a fake clock and canned layout/vmstat text),
// the parsers, and the table on a canned guest console.

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "migrator/fake_page_mover.h"
#include "tests/compare/compare_report.h"
#include "tests/compare/compare_watch.h"
#include "tools/base/json.h"

namespace hotpage {
namespace compare {
namespace {

constexpr uint64_t kBase = 0x7f0000000000;
constexpr uint64_t kBind = 0x7e0000000000;
constexpr uint64_t kSec = 1000000000;

std::string Layout(uint64_t phase, uint64_t switch_ns, uint64_t first_hot_page,
                   uint64_t hot_pages) {
  return absl::StrCat(
      "base 0x", absl::Hex(kBase), "\nbytes ", 64 * kPageBytes, "\nphase ",
      phase, "\nswitch_ns ", switch_ns, "\nbind 0x", absl::Hex(kBind), " 0x",
      absl::Hex(kBind + 4 * kPageBytes), " 1\nhot 0x",
      absl::Hex(kBase + first_hot_page * kPageBytes), " 0x",
      absl::Hex(kBase + (first_hot_page + hot_pages) * kPageBytes), "\n");
}

TEST(ParseLayout, ReadsEveryFieldAndSkipsUnknownKeys) {
  absl::StatusOr<WorkloadLayout> l = ParseLayout(
      "base 0x1000000\nbytes 65536\nphase 1\nswitch_ns 42\nfuture_key 7 8\n"
      "bind 0x2000000 0x2004000 1\nhot 0x1000000 0x1002000\nhot 0x1008000 "
      "0x1009000\n");
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->base, 0x1000000u);
  EXPECT_EQ(l->bytes, 65536u);
  EXPECT_EQ(l->phase, 1u);
  EXPECT_EQ(l->switch_ns, 42u);
  EXPECT_EQ(l->bind_start, 0x2000000u);
  EXPECT_EQ(l->bind_end, 0x2004000u);
  EXPECT_EQ(l->bind_node, 1);
  ASSERT_EQ(l->hot.size(), 2u);
  EXPECT_EQ(l->hot_pages(), 3u);
}

TEST(ParseLayout, RejectsBadInputWithTheLine) {
  EXPECT_FALSE(ParseLayout("bytes 4096\nhot 0x1000 0x2000\n").ok());  // no base
  EXPECT_FALSE(ParseLayout("base 0x1000\nbytes 8192\n").ok());  // no hot run
  EXPECT_FALSE(ParseLayout("base 0x1000\nbytes 8192\nhot 0x1000 0x1800\n")
                   .ok());  // unaligned
  EXPECT_FALSE(ParseLayout("base 0x1000\nbytes 8192\nhot 0x4000 0x5000\n")
                   .ok());  // outside
  EXPECT_FALSE(
      ParseLayout("base 0x1000\nbytes 8192\nhot 0x1000 0x2000\nbind 0x1 0x2\n")
          .ok());
  absl::StatusOr<WorkloadLayout> l =
      ParseLayout("base 0x1000\nbytes x\nhot 0x1000 0x2000\n");
  ASSERT_FALSE(l.ok());
  EXPECT_TRUE(absl::StrContains(l.status().message(), "line 2")) << l.status();
}

TEST(PeekLayoutPhase, ReadsTheHeaderOnly) {
  EXPECT_EQ(PeekLayoutPhase("base 0x1\nbytes 2\nphase 3\nhot 0x0 0x1000\n"), 3);
  EXPECT_EQ(PeekLayoutPhase("base 0x1\nhot 0x0 0x1000\nphase 3\n"), -1);
  EXPECT_EQ(PeekLayoutPhase("phase x\n"), -1);
}

TEST(ParseVmstat, NameValueLines) {
  auto m =
      ParseVmstat("pgmigrate_success 12\nbroken\nnuma_hint_faults 7\nx y\n");
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(m["pgmigrate_success"], 12u);
  EXPECT_EQ(m["numa_hint_faults"], 7u);
}

TEST(MoveTracker, CountsMovesAndPagesThatComeBack) {
  MoveTracker t;
  t.Observe({1, 1, 1, -2});
  t.Observe({0, 1, 0, -2});  // pages 0 and 2 promoted
  EXPECT_EQ(t.moved_pages(), 2u);
  EXPECT_EQ(t.pingpong_pages(), 0u);
  t.Observe({1, 1, 0, 0});  // page 0 back on node 1: ping-pong; page 3 appears
  t.Observe({0, 1, 0, 0});  // page 0 again: still one ping-pong page
  EXPECT_EQ(t.moved_pages(), 2u);
  EXPECT_EQ(t.moves(), 4u);
  EXPECT_EQ(t.pingpong_pages(), 1u);
  EXPECT_EQ(t.last_by_node().at(0), 3u);
  EXPECT_EQ(t.last_by_node().at(1), 1u);
}

// A workload of 64 pages, hot pages 0-9 in phase 0 and 32-41 in phase 1, a
// bind range of 4 pages on node 1; everything starts on node 1.
class WatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mover_.AddPages(kBase, 64, kPageBytes, 1);
    mover_.AddPages(kBind, 4, kPageBytes, 1);
    layout_ = Layout(0, 10 * kSec, 0, 10);
    vmstat_ = "pgmigrate_success 100\nnuma_hint_faults 5\n";
    Watcher::Env env;
    env.mover = &mover_;
    env.pid = 42;
    env.read_layout = [this]() -> absl::StatusOr<std::string> {
      return layout_;
    };
    env.read_vmstat = [this]() -> absl::StatusOr<std::string> {
      return vmstat_;
    };
    env.now_ns = [this] { return now_; };
    WatchOptions opt;
    opt.fast_nodes = {0};
    opt.scan_interval_ns = kSec;
    watcher_ = std::make_unique<Watcher>(opt, env);
  }
  void Move(uint64_t page, int node) {
    mover_.SetNode(kBase + page * kPageBytes, node);
  }

  FakePageMover mover_;
  std::string layout_, vmstat_;
  uint64_t now_ = 10 * kSec;
  std::unique_ptr<Watcher> watcher_;
};

TEST_F(WatcherTest, TimesEachPhaseFromItsStartTo90Percent) {
  ASSERT_TRUE(watcher_->Begin().ok());
  now_ = 10 * kSec + kSec / 2;
  ASSERT_TRUE(watcher_->Sample().ok());
  EXPECT_EQ(watcher_->start_ns(), 10 * kSec);
  for (int p = 0; p < 8; ++p) Move(p, 0);  // 80%: not yet
  now_ = 11 * kSec;
  ASSERT_TRUE(watcher_->Sample().ok());
  EXPECT_LT(watcher_->phases()[0].t90_s, 0);
  Move(8, 0);  // 90%
  now_ = 11 * kSec + kSec / 4;
  ASSERT_TRUE(watcher_->Sample().ok());
  EXPECT_DOUBLE_EQ(watcher_->phases()[0].t90_s, 1.25);
  Move(8, 1);  // falls back: t90 stays, the end fraction follows
  now_ = 12 * kSec;
  ASSERT_TRUE(watcher_->Sample().ok());
  EXPECT_DOUBLE_EQ(watcher_->phases()[0].t90_s, 1.25);
  EXPECT_DOUBLE_EQ(watcher_->phases()[0].end_fraction, 0.8);
  EXPECT_DOUBLE_EQ(watcher_->phases()[0].max_fraction, 0.9);

  // The switch: a new hot set, timed from the layout's switch_ns.
  layout_ = Layout(1, 20 * kSec, 32, 10);
  now_ = 20 * kSec + kSec / 10;
  ASSERT_TRUE(watcher_->Sample().ok());
  ASSERT_EQ(watcher_->phases().size(), 2u);
  EXPECT_EQ(watcher_->phases()[1].hot_pages, 10u);
  EXPECT_DOUBLE_EQ(watcher_->phases()[1].end_fraction, 0);
  for (int p = 32; p < 42; ++p) Move(p, 0);
  now_ = 22 * kSec;
  ASSERT_TRUE(watcher_->Sample().ok());
  EXPECT_DOUBLE_EQ(watcher_->phases()[1].t90_s, 2.0);
  EXPECT_DOUBLE_EQ(watcher_->phases()[1].end_fraction, 1.0);
}

TEST_F(WatcherTest, ScansTheAreaForMovesPingPongsAndTheBindRange) {
  ASSERT_TRUE(watcher_->Begin().ok());
  now_ = 10 * kSec;
  ASSERT_TRUE(watcher_->Sample().ok());  // first scan: all on node 1
  Move(5, 0);
  Move(50, 0);
  mover_.SetNode(kBind, 0);  // a bind page moved (as DAMOS paddr does)
  now_ = 10 * kSec + kSec / 2;
  ASSERT_TRUE(watcher_->Sample().ok());  // no scan yet: within the interval
  EXPECT_EQ(watcher_->moves().moved_pages(), 0u);
  now_ = 11 * kSec;
  ASSERT_TRUE(watcher_->Sample().ok());
  EXPECT_EQ(watcher_->moves().moved_pages(), 2u);
  EXPECT_EQ(watcher_->bind_off_max(), 1u);
  Move(50, 1);
  mover_.SetNode(kBind, 1);
  now_ = 12 * kSec;
  ASSERT_TRUE(watcher_->Sample().ok());
  EXPECT_EQ(watcher_->moves().pingpong_pages(), 1u);
  vmstat_ =
      "pgmigrate_success 130\nnuma_hint_faults 5\nnuma_pte_updates 64\n";  // the
                                                                           // kernel
                                                                           // scanned
  now_ = 13 * kSec;
  ASSERT_TRUE(watcher_->Sample().ok());
  ASSERT_EQ(watcher_->kernel_scan_times().size(), 1u);
  EXPECT_DOUBLE_EQ(watcher_->kernel_scan_times()[0], 3.0);
  ASSERT_TRUE(watcher_->End().ok());
  EXPECT_EQ(watcher_->vmstat_delta().at("pgmigrate_success"), 30);
  EXPECT_EQ(watcher_->vmstat_delta().at("numa_hint_faults"), 0);
  EXPECT_EQ(watcher_->vmstat_delta().at("pgpromote_success"), 0);  // absent: 0
  const std::string kv = watcher_->ResultKv();
  for (const char* want :
       {"hot_pages=10", "phases=1", "t90_0=-1.00", "moved_pages=2",
        "pingpong_seen=1", "area_node0=1", "area_node1=63", "bind_pages=4",
        "bind_off_max=1", "bind_off_end=0", "vm_pgmigrate_success=30",
        "kernel_scans_at=3"}) {
    EXPECT_TRUE(absl::StrContains(kv, want)) << want << " not in " << kv;
  }
  // The line the guest prints parses on the host.
  absl::StatusOr<RunResult> r =
      ParseResultLine("COMPARE-RESULT topo=t mech=m shape=s " + kv);
  EXPECT_TRUE(r.ok()) << r.status();
}

TEST_F(WatcherTest, VmstatBaselineFromASnapshot) {
  ASSERT_TRUE(watcher_->Begin("pgmigrate_success 90\n").ok());
  now_ = 10 * kSec;
  ASSERT_TRUE(watcher_->Sample().ok());
  ASSERT_TRUE(watcher_->End().ok());
  EXPECT_EQ(watcher_->vmstat_delta().at("pgmigrate_success"), 10);
}

TEST_F(WatcherTest, ProcessGoneIsNotFoundAndEndStillWorks) {
  ASSERT_TRUE(watcher_->Begin().ok());
  now_ = 10 * kSec;
  ASSERT_TRUE(watcher_->Sample().ok());
  mover_.InjectCallError(FakePageMover::Op::kQuery, ESRCH, 3);
  EXPECT_TRUE(absl::IsNotFound(watcher_->Sample()));
  EXPECT_TRUE(watcher_->End().ok());
}

TEST_F(WatcherTest, AnotherAreaIsAnError) {
  ASSERT_TRUE(watcher_->Begin().ok());
  ASSERT_TRUE(watcher_->Sample().ok());
  layout_ = absl::StrCat(
      "base 0x", absl::Hex(kBase + 0x100000), "\nbytes 4096\nphase 1\nhot 0x",
      absl::Hex(kBase + 0x100000), " 0x", absl::Hex(kBase + 0x101000), "\n");
  EXPECT_FALSE(watcher_->Sample().ok());
}

// --- Report -----------------------------------------------------------------

std::string ReadTestdata(const std::string& name) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* ws = std::getenv("TEST_WORKSPACE");
  std::ifstream in(std::string(srcdir ? srcdir : ".") + "/" + (ws ? ws : "") +
                   "/tests/compare/testdata/" + name);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ParseResultLine, KeyValuesAfterTheMarker) {
  absl::StatusOr<RunResult> r =
      ParseResultLine("noise COMPARE-RESULT topo=a mech=b shape=c t90_0=1.5");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->GetOr("mech", ""), "b");
  EXPECT_EQ(r->Number("t90_0"), 1.5);
  EXPECT_FALSE(r->Number("mech").has_value());
  EXPECT_FALSE(
      ParseResultLine("COMPARE-RESULT topo=a mech=b shape=c junk").ok());
  EXPECT_FALSE(
      ParseResultLine("COMPARE-RESULT topo=a mech=b shape=c mech=d").ok());
  EXPECT_FALSE(ParseResultLine("COMPARE-RESULT topo=a shape=c").ok());
  EXPECT_FALSE(ParseResultLine("COMPARE-RESULT topo=a mech=b shape=c =1").ok());
}

TEST(RangeCell, SingleValueRangeAndNever) {
  RunResult a, b, c;
  a.kv = {{"t", "1.21"}};
  b.kv = {{"t", "1.94"}};
  c.kv = {{"t", "-1.00"}};
  EXPECT_EQ(RangeCell({&a}, "t", 1, true), "1.2");
  EXPECT_EQ(RangeCell({&b, &a}, "t", 1, true), "1.2–1.9");
  EXPECT_EQ(RangeCell({&c}, "t", 1, true), "never");
  EXPECT_EQ(RangeCell({&a, &c}, "t", 1, true), "1.2–never");
  EXPECT_EQ(RangeCell({&c}, "t", 1, false), "-1.0");
  EXPECT_EQ(RangeCell({&a}, "missing", 1, true), "–");
}

TEST(HotpageStatsKv, PicksTheCountersFromAttachStats) {
  absl::StatusOr<std::string> kv = HotpageStatsKv(R"({
  "promoted_pages": 12288, "demoted_pages": 0, "failed_pages": {"ESRCH": 2},
  "failed_pages_total": 2, "pingpong_pages": 3, "samples": 3111, "rounds": 14,
  "source": "damon", "cpu_seconds": 5.19805})");
  ASSERT_TRUE(kv.ok()) << kv.status();
  EXPECT_EQ(*kv,
            "hp_promoted=12288 hp_demoted=0 hp_pingpong=3 hp_failed=2 "
            "hp_samples=3111 hp_rounds=14 "
            "hp_cpu_s=5.19805 hp_source=damon");
  EXPECT_FALSE(HotpageStatsKv("{\"samples\": 1}").ok());
  EXPECT_FALSE(HotpageStatsKv("{\"promoted_pages\": ").ok());
}

TEST(WorkloadLogKv, ClosingLine) {
  const std::string ok =
      "hot_set_workload: pid 146, 192 MiB at 0x7f, hot set interleaved, one "
      "page in 8\n"
      "hot_set_workload: 5284 passes, 3 phases, 32464896 touches, 32464896 "
      "counted, 0 bad pages\n";
  EXPECT_EQ(*WorkloadLogKv(ok), "passes=5284 touches=32464896 data_ok=1");
  EXPECT_EQ(*WorkloadLogKv(ok + "hot_set_workload: DATA CORRUPTED\n"),
            "passes=5284 touches=32464896 data_ok=0");
  EXPECT_TRUE(
      absl::IsNotFound(WorkloadLogKv("hot_set_workload: pid 1\n").status()));
}

// The canned console holds real guest output (see its header).
TEST(Report, TablesFromACannedConsole) {
  const std::string text = ReadTestdata("canned_console.txt");
  ASSERT_FALSE(text.empty()) << "testdata/canned_console.txt not found";
  const Results r = ParseResults(text);
  ASSERT_EQ(r.runs.size(), 8u);
  ASSERT_EQ(r.notes.size(), 3u);
  EXPECT_TRUE(absl::StrContains(r.notes[2], "malformed")) << r.notes[2];
  const std::string md = FormatMarkdown(r);
  // One row per (mechanism, shape); the two tiering/interleaved runs folded
  // into ranges.
  EXPECT_TRUE(
      absl::StrContains(md,
                        "| tiering | interleaved | 2 | 1.4–2.8 | 1.3–1.7 | "
                        "100% | 12288 | 1.00x | – | 0 | 18432 | 4228–10960 | "
                        "stayed |"))
      << md;
  EXPECT_TRUE(absl::StrContains(
      md,
      "| hotpage-damon | clusters | 1 | 2.8 | 3.6 | 100% | 36352 | 2.96x | "
      "36352 / 0 | 0 / 0 | 0 | 5374 | stayed |"))
      << md;
  EXPECT_TRUE(
      absl::StrContains(md,
                        "| damon-paddr | clusters | 1 | 3.7 | never | 77% | "
                        "144958 | 11.80x | – | "
                        "39299 | 0 | 10706 | **moved** (1024 of 1024 pages) |"))
      << md;
  EXPECT_TRUE(absl::StrContains(md, "### 2pkg+cxl (two fast nodes")) << md;
  EXPECT_TRUE(absl::StrContains(md,
                                "| tiering | clusters | 1 | 1.7 | 2.1 | 12288 "
                                "/ 0 / 36864 | 1.00 | 12288 |"))
      << md;
  // Goals (issue 13): the time after the start within 1.2x tiering's on
  // the same shape (upper median: 2.8 of 1.4 and 2.8), the switch caught,
  // migrations within 1.05x the hot sets, weights against 3:1.
  EXPECT_TRUE(absl::StrContains(
      md,
      "- hotpage-damon, clusters, dram+cxl: 90% after start 2.8 s vs tiering "
      "2.5 s, 1.1x (met); after switch 3.6 s vs tiering 0.5 s, 7.2x "
      "(caught); migrated 2.96x the hot sets' pages (**missed**: goal <= "
      "1.05x); bind range stayed (met)"))
      << md;
  EXPECT_TRUE(absl::StrContains(md,
                                "- hotpage-damon, interleaved, dram+cxl: 90% "
                                "after start never vs tiering "
                                "2.8 s (**missed**: goal <= 1.2x)"))
      << md;
  // 1.17x: under the old 1.2x goal (which said "under 1.2x, but the new
  // hot set never reached 90%"), over issue 13's 1.05x.
  EXPECT_TRUE(absl::StrContains(
      md, "migrated 1.17x the hot sets' pages (**missed**: goal <= 1.05x)"))
      << md;
  EXPECT_TRUE(absl::StrContains(md,
                                "- hotpage-damon, clusters, 2pkg+cxl: node 0 "
                                "share 0.75 for weights 3:1 (met); "
                                "tiering: 1.00"))
      << md;
  EXPECT_TRUE(absl::StrContains(md, "### Notes\n\n- hotpage-hintfault skipped"))
      << md;
}

TEST(Report, JsonHasEveryRunWithNumbersAsNumbers) {
  const Results r = ParseResults(ReadTestdata("canned_console.txt"));
  absl::StatusOr<Json> v = ParseJson(FormatJson(r));
  ASSERT_TRUE(v.ok()) << v.status();
  const Json* runs = JsonMember(*v, "runs");
  ASSERT_NE(runs, nullptr);
  ASSERT_EQ(runs->size(), 8u);
  const Json& first = (*runs)[0];
  EXPECT_EQ(JsonMember(first, "mech")->get<std::string>(), "tiering");
  EXPECT_TRUE(JsonMember(first, "hot_pages")->is_number());
  EXPECT_EQ(JsonMember(first, "hot_pages")->dump(), "6144");
  EXPECT_EQ(JsonMember(*v, "notes")->size(), 3u);
}

TEST(Report, EmptyInput) {
  EXPECT_EQ(FormatMarkdown(Results{}), "(no results)\n");
}

}  // namespace
}  // namespace compare
}  // namespace hotpage
