#include "migrator/token_bucket.h"

#include <cmath>

#include "gtest/gtest.h"

namespace hotpage {
namespace {

const absl::Time kT0 = absl::UnixEpoch() + absl::Hours(1);

TEST(TokenBucketTest, StartsFullAndTakes) {
  TokenBucket b(100, 50, kT0);
  EXPECT_DOUBLE_EQ(b.Available(kT0), 50);
  EXPECT_TRUE(b.TryTake(30, kT0));
  EXPECT_DOUBLE_EQ(b.Available(kT0), 20);
  EXPECT_FALSE(b.TryTake(21, kT0));
  EXPECT_DOUBLE_EQ(b.Available(kT0), 20);  // a failed take takes nothing
}

TEST(TokenBucketTest, RefillsAtRateUpToCapacity) {
  TokenBucket b(100, 50, kT0);
  ASSERT_TRUE(b.TryTake(50, kT0));
  EXPECT_NEAR(b.Available(kT0 + absl::Milliseconds(100)), 10, 1e-9);
  EXPECT_NEAR(b.Available(kT0 + absl::Milliseconds(250)), 25, 1e-9);
  EXPECT_DOUBLE_EQ(b.Available(kT0 + absl::Seconds(10)), 50);  // capped
}

TEST(TokenBucketTest, TimeUntilIsEnoughAndClampedToCapacity) {
  TokenBucket b(1000, 100, kT0);
  ASSERT_TRUE(b.TryTake(100, kT0));
  const absl::Duration d = b.TimeUntil(40, kT0);
  EXPECT_EQ(d, absl::Milliseconds(40));
  EXPECT_TRUE(b.TryTake(40, kT0 + d));
  // More than the capacity can ever hold: waits for a full bucket only.
  EXPECT_EQ(b.TimeUntil(1e9, kT0 + d), absl::Milliseconds(100));
  EXPECT_EQ(b.TimeUntil(0, kT0 + d), absl::ZeroDuration());
}

TEST(TokenBucketTest, DebtIsWaitedOut) {
  TokenBucket b(0.25, 0.025, kT0);  // a CPU budget: 0.25 s per s
  b.Take(0.125, kT0);               // a round that cost 125 ms of CPU
  EXPECT_NEAR(b.Available(kT0), -0.1, 1e-12);
  EXPECT_EQ(b.TimeUntil(0, kT0), absl::Milliseconds(400));
  EXPECT_NEAR(b.Available(kT0 + absl::Milliseconds(400)), 0, 1e-9);
}

TEST(TokenBucketTest, GiveRefundsUpToCapacity) {
  TokenBucket b(10, 100, kT0);
  ASSERT_TRUE(b.TryTake(60, kT0));
  b.Give(20, kT0);
  EXPECT_DOUBLE_EQ(b.Available(kT0), 60);
  b.Give(1000, kT0);
  EXPECT_DOUBLE_EQ(b.Available(kT0), 100);
}

TEST(TokenBucketTest, UnlimitedNeverWaits) {
  TokenBucket b(0, 0, kT0);
  EXPECT_TRUE(b.unlimited());
  EXPECT_TRUE(b.TryTake(1e18, kT0));
  b.Take(1e18, kT0);
  EXPECT_TRUE(std::isinf(b.Available(kT0)));
  EXPECT_EQ(b.TimeUntil(1e18, kT0), absl::ZeroDuration());
}

TEST(TokenBucketTest, SetRateKeepsLevelClamped) {
  TokenBucket b(100, 100, kT0);
  ASSERT_TRUE(b.TryTake(20, kT0));
  b.SetRate(10, 50, kT0);
  EXPECT_DOUBLE_EQ(b.Available(kT0), 50);
  EXPECT_NEAR(b.Available(kT0 + absl::Seconds(1)), 50, 1e-9);
  b.SetRate(0, 0, kT0);  // unlimited
  EXPECT_TRUE(b.TryTake(1e12, kT0));
  b.SetRate(10, 50, kT0);  // limited again: starts full
  EXPECT_DOUBLE_EQ(b.Available(kT0), 50);
}

TEST(TokenBucketTest, TimeGoingBackwardsIsIgnored) {
  TokenBucket b(100, 100, kT0);
  ASSERT_TRUE(b.TryTake(100, kT0 + absl::Seconds(1)));
  EXPECT_DOUBLE_EQ(b.Available(kT0), 0);
  EXPECT_NEAR(b.Available(kT0 + absl::Milliseconds(1500)), 50, 1e-9);
}

// The long-run rate equals the configured rate: a consumer that always
// waits for the next 4 MiB chunk moves rate x time + one burst.
TEST(TokenBucketTest, LongRunRateIsHonoured) {
  const double rate = 256e6, burst = 12.8e6, chunk = 4 << 20;
  TokenBucket b(rate, burst, kT0);
  absl::Time now = kT0;
  double taken = 0;
  while (now - kT0 < absl::Seconds(10)) {
    now += b.TimeUntil(chunk, now);
    ASSERT_TRUE(b.TryTake(chunk, now));
    taken += chunk;
  }
  const double seconds = absl::ToDoubleSeconds(now - kT0);
  EXPECT_NEAR((taken - burst) / seconds, rate, rate * 0.01);
}

}  // namespace
}  // namespace hotpage
