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

// A cold majority (mean 0.05 per window) and a hot set (mean 6): a count of
// 0 is almost surely cold and a count of 4 hot, which the Poisson interval
// of one page cannot tell (U(0) = 2.1 is above L(4) = 2.0 at z = 1.163).
TEST(CountPrior, BimodalPopulationSeparatesWhatOnePageCannot) {
  std::vector<uint64_t> h(CountPrior::kMaxCount + 1, 0);
  AddPoisson(h, 8000, 0.05);
  AddPoisson(h, 2000, 6);
  CountPrior prior;
  prior.Fit(h, kZ);
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

}  // namespace
}  // namespace hotpage
