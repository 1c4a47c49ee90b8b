#include "policy/count_prior.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "hotness/rate_stats.h"

namespace hotpage {
namespace {

constexpr double kZ = 1.163;  // the engine's default

// The expected histogram of `pages` pages whose counts are Poisson(mean).
void AddPoisson(std::vector<uint64_t>& h, double pages, double mean) {
  double p = std::exp(-mean);
  for (size_t k = 0; k < h.size(); ++k) {
    h[k] += static_cast<uint64_t>(std::llround(pages * p));
    p *= mean / static_cast<double>(k + 1);
  }
}

// A prior fitted to the expected histogram of a cold group and a hot group
// of pages (Poisson counts of the given means).
CountPrior FitTwoGroups(double cold_pages, double cold_mean, double hot_pages,
                        double hot_mean) {
  std::vector<uint64_t> h(CountPrior::kMaxCount + 1, 0);
  AddPoisson(h, cold_pages, cold_mean);
  AddPoisson(h, hot_pages, hot_mean);
  CountPrior prior;
  prior.Fit(h, kZ);
  return prior;
}

// A cold majority (mean 0.05 per window) and a hot set (mean 6): a count of
// 0 is almost surely cold and a count of 4 hot, which the Poisson interval
// of one page cannot tell (U(0) = 2.1 is above L(4) = 2.0 at z = 1.163).
TEST(CountPrior, BimodalPopulationSeparatesWhatOnePageCannot) {
  const CountPrior prior = FitTwoGroups(8000, 0.05, 2000, 6);
  ASSERT_TRUE(prior.fitted());
  const PoissonBounds g0 = PoissonInterval(0, kZ), g4 = PoissonInterval(4, kZ);
  ASSERT_LT(g4.lo, g0.hi);  // the Poisson test cannot act
  const PoissonBounds b0 = *prior.Bounds(0), b4 = *prior.Bounds(4);
  EXPECT_LT(b0.hi, 0.5);
  EXPECT_GT(b4.lo, 3.0);
  EXPECT_GT(b4.lo, b0.hi);  // the prior's test can
  // The posterior is a distribution: lo <= hi, and both grow with the count.
  for (uint32_t k = 0; k + 1 <= 20; ++k) {
    const PoissonBounds a = *prior.Bounds(k), b = *prior.Bounds(k + 1);
    EXPECT_LE(a.lo, a.hi) << k;
    EXPECT_LE(a.lo, b.lo) << k;
    EXPECT_LE(a.hi, b.hi) << k;
  }
  double sum = 0;
  for (double w : prior.weights()) sum += w;
  EXPECT_NEAR(sum, 1.0, 1e-9);
}

// One population (every page Poisson(5)): the counts' spread is all
// sampling noise, so each page's posterior is narrower than its own
// interval and contains the common mean.
TEST(CountPrior, OnePopulationShrinksTowardItsMean) {
  std::vector<uint64_t> h(CountPrior::kMaxCount + 1, 0);
  AddPoisson(h, 10000, 5);
  CountPrior prior;
  prior.Fit(h, kZ);
  ASSERT_TRUE(prior.fitted());
  for (uint32_t k : {2u, 5u, 9u}) {
    const PoissonBounds b = *prior.Bounds(k), g = PoissonInterval(k, kZ);
    EXPECT_LT(b.hi - b.lo, g.hi - g.lo) << k;
    EXPECT_LE(b.lo, 5.0) << k;
    EXPECT_GE(b.hi, 5.0 / 1.2) << k;  // within a grid step of the mean
  }
}

TEST(CountPrior, NeedsTwoCountsAndCoversOnlyItsRange) {
  CountPrior prior;
  std::vector<uint64_t> h(CountPrior::kMaxCount + 1, 0);
  h[3] = 100;
  prior.Fit(h, kZ);
  EXPECT_FALSE(prior.fitted());
  EXPECT_FALSE(prior.Bounds(3).has_value());
  h[0] = 100;
  prior.Fit(h, kZ);
  ASSERT_TRUE(prior.fitted());
  EXPECT_TRUE(prior.Bounds(CountPrior::kMaxCount).has_value());
  EXPECT_FALSE(prior.Bounds(CountPrior::kMaxCount + 1).has_value());
  // A histogram longer than the range is cut there; an empty one clears.
  h.assign(CountPrior::kMaxCount + 10, 0);
  prior.Fit(h, kZ);
  EXPECT_FALSE(prior.fitted());
}

// The pair test (count_prior.h): a hot set at 2.2 samples per window and a
// cold rest at 0.1, as pages sampled under once a second over a short
// window are. A count of 1 against a count of 0: the intervals overlap
// (L = 0.2 against U = 0.5), the pair's joint posterior does not (P(not
// hotter) = 0.10 < a = 0.12). A count of 3 against 1 passes neither: the
// intervals overlap, and the pair is too often a tie in the hot group.
// Every pair the intervals part has P(not hotter) <= 2a, the bound lo > hi
// gives.
TEST(CountPrior, PairTestPassesWhereTheIntervalsOverlap) {
  const CountPrior prior = FitTwoGroups(6000, 0.1, 3000, 2.2);
  ASSERT_TRUE(prior.fitted());
  const double a = 0.5 * std::erfc(kZ / std::sqrt(2.0));
  EXPECT_LE(prior.Bounds(1)->lo, prior.Bounds(0)->hi);  // intervals: no
  EXPECT_LE(*prior.ProbNotHotter(1, 0), a);             // the pair: yes
  EXPECT_LE(prior.Bounds(3)->lo, prior.Bounds(1)->hi);
  EXPECT_GT(*prior.ProbNotHotter(3, 1), a);
  // Ties: a page is not hotter than another of its count.
  EXPECT_GT(*prior.ProbNotHotter(3, 3), 0.5);
  EXPECT_GT(*prior.ProbNotHotter(1, 3), 0.5);
  for (uint32_t kc = 0; kc <= 12; ++kc) {
    for (uint32_t kv = 0; kv <= 12; ++kv) {
      const double p = *prior.ProbNotHotter(kc, kv);
      EXPECT_GE(p, 0) << kc << " " << kv;
      EXPECT_LE(p, 1) << kc << " " << kv;
      // Monotone: a larger count is stochastically hotter.
      if (kv > 0) {
        EXPECT_GE(p, *prior.ProbNotHotter(kc, kv - 1) - 1e-12)
            << kc << " " << kv;
      }
      if (prior.Bounds(kc)->lo > prior.Bounds(kv)->hi) {
        EXPECT_LE(p, 2 * a) << kc << " " << kv;
      }
    }
  }
  // Not fitted, or a count out of range: no answer.
  EXPECT_FALSE(prior.ProbNotHotter(CountPrior::kMaxCount + 1, 0));
  CountPrior empty;
  EXPECT_FALSE(empty.ProbNotHotter(1, 0));
}

// A histogram with no zeros to show (count_prior.h): the table's counts
// before its first epoch, as stream_mix's at 0.5 s. 512 streamed pages at
// 2.35 samples so far, 1024 hot-set pages at 0.3 and 8192 cold pages at
// 0.01, of which only those sampled are in the table (no count of 0).
// Fitted as a whole population, the prior must explain the missing zeros
// and credits a count of 1 to rates near the streamed pages': a count of 3
// against a count of 1 is a coin toss (P(not hotter) 0.51). Fitted as
// zero-truncated, a count of 1 may be the hot set's or a cold page's, and
// the pair test leans the right way.
TEST(CountPrior, ZeroTruncatedFitSeparatesWhatTheBlurredOneCannot) {
  std::vector<uint64_t> h(CountPrior::kMaxCount + 1, 0);
  AddPoisson(h, 512, 2.35);
  AddPoisson(h, 1024, 0.3);
  AddPoisson(h, 8192, 0.01);
  h[0] = 0;  // the pages not sampled yet are not in the table
  const double a = 0.5 * std::erfc(kZ / std::sqrt(2.0));
  CountPrior blurred;
  blurred.Fit(h, kZ);
  ASSERT_TRUE(blurred.fitted());
  EXPECT_FALSE(blurred.zero_truncated());
  CountPrior truncated;
  truncated.Fit(h, kZ, /*zero_truncated=*/true);
  ASSERT_TRUE(truncated.fitted());
  EXPECT_TRUE(truncated.zero_truncated());
  // Of the 422 pages of count 1, 308 are the hot set's or cold: the
  // blurred prior still bounds a count of 1 above 1.5 samples (at the
  // bounds' tail), the truncated one below the hot set's 0.3.
  EXPECT_GT(blurred.Bounds(1)->lo, 1.0);
  EXPECT_LT(truncated.Bounds(1)->lo, 0.3);
  // The pair test: 3 against 1 a coin toss blurred (0.51), 0.16 truncated;
  // 2 against 1 passes the saturated tier's odds (1/2) only truncated.
  EXPECT_GT(*blurred.ProbNotHotter(3, 1), 0.5);
  EXPECT_LT(*truncated.ProbNotHotter(3, 1), 0.2);
  EXPECT_GT(*blurred.ProbNotHotter(2, 1), 0.5);
  EXPECT_LT(*truncated.ProbNotHotter(2, 1), 0.5);
  EXPECT_LT(*truncated.ProbNotHotter(5, 1), a);
  // Still a distribution, and monotone in the count.
  double sum = 0;
  for (double w : truncated.weights()) sum += w;
  EXPECT_NEAR(sum, 1.0, 1e-9);
  for (uint32_t k = 1; k + 1 <= 12; ++k) {
    EXPECT_LE(truncated.Bounds(k)->lo, truncated.Bounds(k + 1)->lo) << k;
    EXPECT_LE(truncated.Bounds(k)->hi, truncated.Bounds(k + 1)->hi) << k;
  }
  // A zero bin is data: with it the flag changes nothing.
  std::vector<uint64_t> with_zeros(CountPrior::kMaxCount + 1, 0);
  AddPoisson(with_zeros, 512, 2.35);
  AddPoisson(with_zeros, 1024, 0.3);
  CountPrior plain, flagged;
  plain.Fit(with_zeros, kZ);
  flagged.Fit(with_zeros, kZ, /*zero_truncated=*/true);
  EXPECT_FALSE(flagged.zero_truncated());
  EXPECT_EQ(plain.weights(), flagged.weights());
  // Two counts above 0 are needed, as two counts are without the flag.
  std::vector<uint64_t> one(CountPrior::kMaxCount + 1, 0);
  one[2] = 50;
  CountPrior single;
  single.Fit(one, kZ, /*zero_truncated=*/true);
  EXPECT_FALSE(single.fitted());
}

}  // namespace
}  // namespace hotpage
