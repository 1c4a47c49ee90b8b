#include "migrator/stats.h"

#include <cerrno>

#include "gtest/gtest.h"

namespace hotpage {
namespace {

TEST(LatencyHistogramTest, Buckets) {
  EXPECT_EQ(LatencyHistogram::BucketOf(absl::Nanoseconds(500)), 0);
  EXPECT_EQ(LatencyHistogram::BucketOf(absl::Microseconds(1)), 1);
  EXPECT_EQ(LatencyHistogram::BucketOf(absl::Microseconds(3)), 2);
  EXPECT_EQ(LatencyHistogram::BucketOf(absl::Microseconds(4)), 3);
  EXPECT_EQ(LatencyHistogram::BucketOf(absl::Hours(24 * 365)),
            LatencyHistogram::kBuckets - 1);
  EXPECT_EQ(LatencyHistogram::BucketUpperBound(3), absl::Microseconds(8));
}

TEST(LatencyHistogramTest, QuantilesWithinAFactorOfTwo) {
  LatencyHistogram h;
  EXPECT_EQ(h.Quantile(0.5), absl::ZeroDuration());
  for (int i = 1; i <= 1000; ++i) h.Record(absl::Microseconds(i * 10));
  EXPECT_EQ(h.count(), 1000u);
  const absl::Duration p50 = h.Quantile(0.5);  // true 5 ms
  EXPECT_GE(p50, absl::Milliseconds(5));
  EXPECT_LE(p50, absl::Milliseconds(10));
  const absl::Duration p99 = h.Quantile(0.99);  // true 9.9 ms
  EXPECT_GE(p99, absl::Microseconds(9900));
  EXPECT_LE(p99, absl::Milliseconds(10));  // capped by the max seen
  EXPECT_EQ(h.max(), absl::Milliseconds(10));
  EXPECT_EQ(h.Mean(), absl::Microseconds(5005));
  LatencyHistogram g;
  g.Record(absl::Seconds(1));
  h.Merge(g);
  EXPECT_EQ(h.count(), 1001u);
  EXPECT_EQ(h.Quantile(1.0), absl::Seconds(1));
}

TEST(MigratorStatsTest, TotalsAndString) {
  MigratorStats s;
  s.promoted_pages = 3;
  s.demoted_pages = 2;
  s.promoted_bytes = 3 * 4096;
  s.failed_pages_by_errno[EBUSY] = 4;
  s.failed_pages_by_errno[EACCES] = 1;
  s.skipped_stale = 1;
  EXPECT_EQ(s.moved_pages(), 5u);
  EXPECT_EQ(s.failed_pages(), 5u);
  EXPECT_EQ(s.failed(EBUSY), 4u);
  EXPECT_EQ(s.failed(ENOMEM), 0u);
  EXPECT_EQ(s.settled(), 11u);
  const std::string str = s.ToString();
  EXPECT_NE(str.find("promoted=3"), std::string::npos) << str;
  EXPECT_NE(str.find("failed={EACCES:1,EBUSY:4}"), std::string::npos) << str;
}

}  // namespace
}  // namespace hotpage
