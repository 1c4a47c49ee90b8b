// `hotpage attach`'s metrics end to end (issue 14, section 4): AttachMain
// in-process over the Skylake-SP profile and the fake perf kernel (the
// harness of profiles_test), with --stats-json, --prom-file, --workload
// and --metrics-listen 127.0.0.1:0. The JSON says who (pid, comm, cgroup
// from the target's /proc files through the KernelFs seam, the binary's
// version) and when; every series of the Prometheus file carries the
// workload, pid and cgroup labels; the endpoint's URL is logged.

#include <sys/stat.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/pmu/profile_checks.h"
#include "tests/pmu/profile_harness.h"
#include "tools/base/json.h"
#include "tools/version.h"

namespace hotpage {
namespace {

TEST(AttachMetricsTest, StatsSayWhoAndEverySeriesIsLabelled) {
  ProfileRun m("skylake_sp");
  const pid_t p = m.target();
  m.tree().Write(absl::StrCat("/proc/", p, "/comm"), "hp-target\n");
  m.tree().Write(absl::StrCat("/proc/", p, "/cgroup"),
                 "0::/test.slice/a\"b.scope\n");
  const std::string prom = m.tree().root() + "/attach.prom";
  const std::vector<FakeAccess> script = LoadsOnCpus(p, {0, 1, 2, 3}, 8);
  RecordResult r = m.Attach({"--prom-file", prom, "--metrics-listen",
                             "127.0.0.1:0", "--workload", "web"},
                            script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectAttachStats(r.stats_json, script.size(), "pebs");
  EXPECT_TRUE(
      absl::StrContains(r.err, "hotpage attach: metrics on http://127.0.0.1:"))
      << r.err;

  absl::StatusOr<Json> doc = ParseJson(r.stats_json);
  ASSERT_TRUE(doc.ok()) << doc.status() << "\n" << r.stats_json;
  EXPECT_EQ((*doc)["pid"], p);
  EXPECT_EQ((*doc)["comm"], "hp-target");
  EXPECT_EQ((*doc)["workload"], "web");
  EXPECT_EQ((*doc)["cgroup"], "test.slice/a\"b.scope");
  EXPECT_EQ((*doc)["version"], std::string(VersionNumber()));
  const std::string ts = (*doc)["timestamp"].get<std::string>();
  EXPECT_EQ(ts.size(), 24u) << ts;  // 2026-12-02T06:48:48.123Z
  EXPECT_TRUE(absl::EndsWith(ts, "Z")) << ts;
  // Taken now (CLOCK_REALTIME), within a minute.
  EXPECT_NEAR((*doc)["timestamp_unix_s"].get<double>(),
              static_cast<double>(time(nullptr)), 60);

  std::ifstream in(prom);
  std::stringstream text;
  text << in.rdbuf();
  const std::string who = absl::StrCat("{workload=\"web\",pid=\"", p,
                                       "\",cgroup=\"test.slice/a\\\"b.scope\"");
  int series = 0;
  for (absl::string_view line :
       absl::StrSplit(text.str(), '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "#")) continue;
    ++series;
    EXPECT_TRUE(absl::StrContains(line, who)) << line;
  }
  EXPECT_GT(series, 25);
  EXPECT_TRUE(absl::StrContains(
      text.str(),
      absl::StrCat("hotpage_samples_total", who, "} ", script.size(), "\n")))
      << text.str();
  EXPECT_TRUE(absl::StrContains(
      text.str(), absl::StrCat("hotpage_info", who,
                               ",comm=\"hp-target\",source=\"pebs\",version=\"",
                               VersionNumber(), "\"} 1\n")))
      << text.str();
}

// --rounds FILE: one JSON line per round (tools/round_log.h), as many as
// the stats count, created 0600; a path that cannot be created fails the
// run (exit 1, the path in the message).
TEST(AttachMetricsTest, RoundsAreRecordedOneJsonLineEach) {
  ProfileRun m("skylake_sp");
  const std::string path = m.tree().root() + "/rounds.jsonl";
  const std::vector<FakeAccess> script =
      LoadsOnCpus(m.target(), {0, 1, 2, 3}, 8);
  RecordResult r = m.Attach({"--rounds", path}, script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  absl::StatusOr<Json> stats = ParseJson(r.stats_json);
  ASSERT_TRUE(stats.ok()) << stats.status();
  const uint64_t rounds = (*stats)["rounds"].get<uint64_t>();
  ASSERT_GT(rounds, 0u);
  std::ifstream in(path);
  uint64_t lines = 0;
  for (std::string line; std::getline(in, line);) {
    absl::StatusOr<Json> j = ParseJson(line);
    ASSERT_TRUE(j.ok()) << j.status() << "\n" << line;
    EXPECT_EQ((*j)["round"].get<uint64_t>(), ++lines);
    EXPECT_TRUE((*j)["moves"].is_array());
  }
  EXPECT_EQ(lines, rounds);
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  RecordResult bad =
      m.Attach({"--rounds", m.tree().root() + "/no/such/dir/r.jsonl"}, script);
  EXPECT_EQ(bad.exit_code, 1) << bad.err;
  EXPECT_TRUE(absl::StrContains(bad.err, "no/such/dir/r.jsonl")) << bad.err;
}

}  // namespace
}  // namespace hotpage
