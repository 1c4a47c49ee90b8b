#include "policy/fast_tier_cooling.h"

#include <cstdint>
#include <random>

#include "gtest/gtest.h"

namespace hotpage {
namespace {

// A hot set that moved: 400 fast pages sampled 1.5 times a second over a
// 10 s long window (15 samples each) draw none in a 0.25 s round. Each
// would draw 0.35 on average, none with probability 0.70: 280 expected
// zeros, 400 seen; 140 samples expected, 0 seen.
TEST(FastTierCooling, AHotSetThatStoppedCooled) {
  FastTierCooling c(10, 0.25);
  for (int i = 0; i < 400; ++i) c.Add(15, 0);
  EXPECT_GT(c.ZerosZ(), 10);
  EXPECT_GT(c.SamplesZ(), 10);
  EXPECT_TRUE(c.Cooled(3.09));
}

// The fast tier filling up: its pages keep their rates (each draws what
// its long window predicts), and cold pages first touched a second ago,
// one sample each, predict nothing and draw nothing.
TEST(FastTierCooling, PagesThatKeepTheirRatesDidNotCool) {
  FastTierCooling c(10, 1);
  for (int i = 0; i < 1000; ++i) {
    // 11 samples before: rate 1/s, one sample a round on average; every
    // page draws one.
    c.Add(11, 1);
  }
  for (int i = 0; i < 500; ++i) c.Add(1, 0);  // first touches
  EXPECT_LE(c.ZerosZ(), 0);
  EXPECT_LE(c.SamplesZ(), 0);
  EXPECT_FALSE(c.Cooled(3.09));
  // Counting the first sample as a rate would have made the 500 silent
  // first touches a cooling (0.1 sample each expected): they take no part.
  FastTierCooling d(10, 1);
  for (int i = 0; i < 500; ++i) d.Add(1, 0);
  EXPECT_FALSE(d.Cooled(0.5));
}

// A scan that ends: 3000 fast pages with 1.5 samples each in the long
// window (one sample a pass, the oldest decayed) fall silent. No page has
// two samples, so the zeros say nothing; but together they were to draw
// 3000 x 0.05 = 150 in a 1 s round at 0.5 / 10 s each, and drew none.
TEST(FastTierCooling, ManyColdPagesFallingSilentTogetherCooled) {
  FastTierCooling c(10, 1);
  for (int i = 0; i < 3000; ++i) c.Add(1.5, 0);
  EXPECT_EQ(c.ZerosZ(), 0);  // no page with two samples: no zero test
  EXPECT_GT(c.SamplesZ(), 3.09);
  EXPECT_TRUE(c.Cooled(3.09));
  // A few of them prove nothing.
  FastTierCooling few(10, 1);
  for (int i = 0; i < 30; ++i) few.Add(1.5, 0);
  EXPECT_FALSE(few.Cooled(3.09));
}

// Pages the zeros take by their second sample. Nothing cooled: of the
// cold pages 1000 have two samples in the long window and 1000 one, and a
// tenth as many samples come in the round as their counts predict (100
// from the pages with one sample: the samples test is level); 100 hot
// pages keep their rate. Read as a rate, each second sample predicted 0.1
// sample a round, 905 zeros where 1000 came (with the hot pages' zeros,
// z = 5.6): a cooling. But a page enters the zeros at its second sample;
// its rate's unbiased estimate is then 0, and its zero is no news.
TEST(FastTierCooling, PagesWithTheirSecondSampleOnlyPredictNoSample) {
  FastTierCooling c(10, 1);
  for (int i = 0; i < 1000; ++i) c.Add(2, 0);
  for (int i = 0; i < 1000; ++i) c.Add(1, i < 100 ? 1 : 0);
  for (int i = 0; i < 100; ++i) c.Add(11, 1);
  EXPECT_NEAR(c.SamplesZ(), 0, 1e-9);
  EXPECT_LE(c.ZerosZ(), 0);
  EXPECT_FALSE(c.Cooled(3.09));
  // One of them drawing a sample is evidence against a cooling.
  FastTierCooling d(10, 1);
  d.Add(2, 1);
  EXPECT_LT(d.ZerosZ(), 0);
}

// Nothing changes, the tier filling: every page keeps its rate, 80% cold
// (0.05 samples/s) and 20% hot (1/s), each known since its first sample
// and 2.6 s into the run (the long window so far), the round 0.25 s.
// Both tests at z = 3.09 are to alarm in at most 0.2% of rounds (this
// seed: none; 2 of 200 allowed); with the second sample taken for a rate
// the zeros test alarmed in 65 of 200
// (as on packages_2pkg at 1:2 with other seeds: the fill read as a change).
TEST(FastTierCooling, AFillWithoutAChangeRarelyAlarms) {
  std::mt19937_64 rng(13);
  std::uniform_real_distribution<double> u(0, 1);
  constexpr double kWindowS = 2.6, kRoundS = 0.25;
  int alarms = 0;
  for (int round = 0; round < 200; ++round) {
    FastTierCooling c(kWindowS, kRoundS);
    for (int i = 0; i < 3000; ++i) {
      const double rate = u(rng) < 0.8 ? 0.05 : 1.0;
      std::poisson_distribution<int> before(rate * kWindowS);
      std::poisson_distribution<int> in_round(rate * kRoundS);
      c.Add(1 + before(rng), in_round(rng));
    }
    alarms += c.Cooled(3.09);
  }
  EXPECT_LE(alarms, 2);
}

// Without a long window or a round length nothing is counted.
TEST(FastTierCooling, NoWindowNoTest) {
  FastTierCooling c(0, 1);
  for (int i = 0; i < 100; ++i) c.Add(20, 0);
  EXPECT_FALSE(c.Cooled(0));
  FastTierCooling d(10, 0);
  for (int i = 0; i < 100; ++i) d.Add(20, 0);
  EXPECT_FALSE(d.Cooled(0));
}

}  // namespace
}  // namespace hotpage
