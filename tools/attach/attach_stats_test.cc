// The perf part of attach's stats: THROTTLE/UNTHROTTLE and loss records in
// --stats-json, --prom-file and the status line (issue 12, section 4). The
// rest of the formats is pinned in attach_loop_test.cc.

#include "tools/attach/attach_stats.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace hotpage {
namespace {

TEST(AttachStatsPerf, ThrottleInJsonPromAndStatusLine) {
  AttachStats s;
  s.source = "pebs";
  s.perf = PerfSourceStats{12, 11, 5, 2, 1, 3, 1};
  const std::string json = AttachStatsJson(s);
  EXPECT_TRUE(absl::StrContains(json, R"(  "perf": {
    "throttle": 12,
    "unthrottle": 11,
    "lost": 5,
    "lost_samples": 2,
    "period_errors": 1,
    "period_reopens": 3,
    "period_reopen_failures": 1
  })"))
      << json;
  const std::string prom = AttachStatsProm(s);
  EXPECT_TRUE(absl::StrContains(prom,
                                "# TYPE hotpage_perf_throttle_total counter\n"
                                "hotpage_perf_throttle_total 12\n"))
      << prom;
  EXPECT_TRUE(absl::StrContains(prom, "hotpage_perf_unthrottle_total 11\n"))
      << prom;
  EXPECT_TRUE(absl::StrContains(prom, "hotpage_perf_period_reopens_total 3\n"))
      << prom;
  EXPECT_TRUE(
      absl::StrContains(prom, "hotpage_perf_period_reopen_failures_total 1\n"))
      << prom;
  EXPECT_EQ(PerfStatusFields(s), " throttled=12 unthrottled=11 lost=7");
}

TEST(AttachStatsPerf, AbsentForOtherSources) {
  AttachStats s;
  s.source = "damon";
  EXPECT_FALSE(absl::StrContains(AttachStatsJson(s), "throttle"));
  EXPECT_FALSE(absl::StrContains(AttachStatsProm(s), "throttle"));
  EXPECT_EQ(PerfStatusFields(s), "");
}

}  // namespace
}  // namespace hotpage
