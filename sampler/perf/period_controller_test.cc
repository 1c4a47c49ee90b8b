#include "sampler/perf/period_controller.h"

#include "gtest/gtest.h"

namespace hotpage {
namespace {

TEST(PeriodController, RaisesUnderLoadInProportionCappedAt4x) {
  PeriodController c(1000, 1 << 20, 0.02);
  EXPECT_EQ(c.period(), 1000u);
  // 4% of a core against a 2% budget: double.
  EXPECT_EQ(c.Update(0.04, 1.0), 2000u);
  // 50% against 2%: capped at 4x per step.
  EXPECT_EQ(c.Update(0.5, 1.0), 8000u);
  EXPECT_EQ(c.raises(), 2u);
}

TEST(PeriodController, HoldsInsideTheBandAndLowersWhenQuiet) {
  PeriodController c(1000, 1 << 20, 0.02);
  c.Update(0.08, 1.0);  // 4000
  EXPECT_EQ(c.Update(0.015, 1.0),
            4000u);  // 1.5%: within budget, above a quarter: hold
  EXPECT_EQ(c.Update(0.001, 1.0), 2000u);  // quiet: halve
  EXPECT_EQ(c.Update(0.001, 1.0), 1000u);
  EXPECT_EQ(c.Update(0.0, 1.0), 1000u);  // never below what the user asked
  EXPECT_EQ(c.lowers(), 2u);
}

TEST(PeriodController, ClampsAtMaxAndIgnoresEmptyIntervals) {
  PeriodController c(1000, 3000, 0.02);
  EXPECT_EQ(c.Update(1.0, 1.0), 3000u);
  EXPECT_EQ(c.Update(1.0, 1.0), 3000u);
  EXPECT_EQ(c.Update(1.0, 0.0), 3000u);
}

TEST(PeriodController, ConvergesUnderASteadyLoad) {
  // Sampler cost proportional to the sample rate: usage = k / period.
  PeriodController c(100, 1 << 24, 0.02);
  const double k = 100.0;  // 100% of a core at period 100
  for (int i = 0; i < 20; ++i)
    c.Update(k / static_cast<double>(c.period()), 1.0);
  const double usage = k / static_cast<double>(c.period());
  EXPECT_LE(usage, 0.02);
  EXPECT_GE(usage, 0.02 / 8);  // not starved far below the budget either
}

TEST(PeriodController, NormalizesForIbs) {
  auto ibs = [](uint64_t p) {
    p &= ~uint64_t{0xf};
    return p < 0x90 ? uint64_t{0x90} : p;
  };
  PeriodController c(0x90, 1 << 20, 0.02, ibs);
  uint64_t p = c.Update(0.03, 1.0);  // x1.5 = 216 -> 0xd0
  EXPECT_EQ(p & 0xf, 0u);
  EXPECT_EQ(p, 0xd0u);
}

}  // namespace
}  // namespace hotpage
