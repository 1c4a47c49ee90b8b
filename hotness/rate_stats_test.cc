// PoissonInterval against the exact Garwood limits and its coverage, and
// RateWindow's scaling of a count to accesses per second.

#include "hotness/rate_stats.h"

#include <cstdint>
#include <random>

#include "gtest/gtest.h"

namespace hotpage {
namespace {

constexpr uint64_t kSecond = 1'000'000'000;

TEST(PoissonIntervalTest, MatchesExactGarwoodLimits) {
  // Exact 95% limits (chi-square quantiles / 2), from the standard tables.
  struct Case {
    double k, lo, hi;
  } cases[] = {{0, 0, 3.6889},           {1, 0.0253, 5.5716},
               {2, 0.2422, 7.2247},      {10, 4.7954, 18.3904},
               {20, 12.2165, 30.8884},   {100, 81.3639, 121.6268},
               {300, 267.0087, 335.9418}};
  for (const Case& c : cases) {
    const PoissonBounds b = PoissonInterval(c.k, 1.96);
    EXPECT_NEAR(b.lo, c.lo, 0.0005 * c.k + 0.001) << "k=" << c.k;
    EXPECT_NEAR(b.hi, c.hi, 0.0005 * c.hi + 0.001) << "k=" << c.k;
  }
}

TEST(PoissonIntervalTest, CoversTheTrueMeanAtTheNominalRate) {
  std::mt19937_64 rng(11);
  for (double mean : {2.0, 15.0, 80.0, 1000.0}) {
    std::poisson_distribution<int> poisson(mean);
    int covered = 0;
    constexpr int kTrials = 4000;
    for (int i = 0; i < kTrials; ++i) {
      const PoissonBounds b = PoissonInterval(poisson(rng), 1.96);
      covered += b.lo <= mean && mean <= b.hi;
    }
    // Garwood is conservative: at least 95%, at most ~99% for small means.
    EXPECT_GE(covered, kTrials * 0.94) << "mean " << mean;
    EXPECT_LE(covered, kTrials * 0.995) << "mean " << mean;
  }
}

TEST(RateWindowTest, ScalesCountsByPeriodAndWindow) {
  RateWindow w;
  w.sample_period = 1000;
  w.window_ns = kSecond / 2;
  const RateEstimate r = w.Estimate(100, 1.96);
  EXPECT_DOUBLE_EQ(r.per_sec, 200000);
  EXPECT_NEAR(r.lo_per_sec, 81.3639 * 2000, 10);
  EXPECT_NEAR(r.hi_per_sec, 121.6268 * 2000, 10);
}

}  // namespace
}  // namespace hotpage
