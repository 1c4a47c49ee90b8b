#include "tools/trace_gen/prng.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "tools/trace_gen/det_math.h"
#include "tools/trace_gen/zipf.h"

namespace hotpage {
namespace trace_gen {
namespace {

TEST(RngTest, MatchesXoshiroReference) {
  // xoshiro256** from state {1, 2, 3, 4} (values of the reference C code).
  Rng r = Rng::FromState(1, 2, 3, 4);
  EXPECT_EQ(r.Next(), 11520u);
  EXPECT_EQ(r.Next(), 0u);
  EXPECT_EQ(r.Next(), 1509978240u);
  EXPECT_EQ(r.Next(), 1215971899390074240u);
}

TEST(RngTest, SeedingMatchesAnIndependentImplementation) {
  // From a Python transcription of SplitMix64 + xoshiro256** (see the
  // commit that added this test): catches any change of the seeding.
  Rng r(42);
  EXPECT_EQ(r.Next(), 0x15780b2e0c2ec716u);
  EXPECT_EQ(r.Next(), 0x6104d9866d113a7eu);
  EXPECT_EQ(r.Next(), 0xae17533239e499a1u);
  EXPECT_EQ(r.Next(), 0xecb8ad4703b360a1u);
  EXPECT_EQ(DeriveSeed(1, 0), 0xbeeb8da1658eec67u);
  EXPECT_EQ(DeriveSeed(1, 1), 0xfc180bc5de55d616u);
}

TEST(RngTest, BelowIsInRangeAndUniform) {
  Rng r(7);
  EXPECT_EQ(r.Below(1), 0u);
  constexpr uint64_t kN = 10;
  constexpr int kDraws = 200000;
  std::vector<int> counts(kN);
  for (int i = 0; i < kDraws; ++i) {
    const uint64_t v = r.Below(kN);
    ASSERT_LT(v, kN);
    ++counts[v];
  }
  for (int c : counts) EXPECT_NEAR(c, kDraws / kN, kDraws / kN * 0.03);
  // A bound that is not a power of two and close to 2^64: still in range.
  const uint64_t big = (uint64_t{1} << 63) + 12345;
  for (int i = 0; i < 1000; ++i) ASSERT_LT(r.Below(big), big);
}

TEST(RngTest, UniformIsInUnitInterval) {
  Rng r(3);
  double sum = 0;
  for (int i = 0; i < 100000; ++i) {
    const double u = r.Uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / 100000, 0.5, 0.01);
}

TEST(DetMathTest, CloseToLibm) {
  for (double x : {1e-300, 1e-10, 0.001, 0.5, 0.7071, 1.0, 1.5, 2.0, 10.0,
                   12345.678, 1e10, 1e300}) {
    EXPECT_NEAR(DetLog(x), std::log(x),
                4e-16 * std::max(1.0, std::fabs(std::log(x))))
        << x;
  }
  for (double x :
       {-700.0, -20.0, -1.0, -0.3, 0.0, 1e-9, 0.3, 1.0, 2.5, 20.0, 700.0}) {
    EXPECT_NEAR(DetExp(x), std::exp(x), 4e-16 * std::exp(x)) << x;
  }
  EXPECT_EQ(DetExp(0), 1.0);
  EXPECT_EQ(DetLog(1), 0.0);
  EXPECT_EQ(DetExp(-1000), 0.0);
  EXPECT_TRUE(std::isinf(DetExp(1000)));
  EXPECT_TRUE(std::isnan(DetLog(-1)));
  EXPECT_NEAR(DetPow(200000, -0.99), std::pow(200000.0, -0.99), 1e-18);
}

TEST(DetMathTest, GoldenBits) {
  // The bits these give here. A machine (compiler, libm, FMA contraction)
  // that gives other bits would generate different traces.
  // (Same at -O0 and -O2 here; libm's log(3) is one ulp above.)
  EXPECT_EQ(DetPow(2, -0.99), 0x1.01c7d6c404f0cp-1);
  EXPECT_EQ(DetLog(3), 0x1.193ea7aad030ap+0);
  EXPECT_EQ(DetPow(200000, -0.99), 0x1.7b1b0822b4a3fp-18);
}

TEST(ZipfTest, RankFrequencyFollowsThePowerLaw) {
  constexpr uint64_t kRanks = 1000;
  constexpr double kS = 0.99;
  const ZipfTable z(kRanks, kS);
  double total = 0;
  for (uint64_t r = 0; r < kRanks; ++r) total += z.Probability(r);
  EXPECT_NEAR(total, 1.0, 1e-12);
  EXPECT_NEAR(z.Probability(0) / z.Probability(9), std::pow(10.0, kS), 1e-9);

  Rng rng(11);
  constexpr int kDraws = 2000000;
  std::vector<int> counts(kRanks);
  for (int i = 0; i < kDraws; ++i) ++counts[z.Sample(rng)];
  // Observed frequencies match the table...
  for (uint64_t r : {0, 1, 2, 9, 99}) {
    const double want = z.Probability(r) * kDraws;
    EXPECT_NEAR(counts[r], want, 5 * std::sqrt(want)) << "rank " << r;
  }
  // ...and the log-log slope of rank vs frequency over ranks 1..100 is -s.
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int n = 0;
  for (uint64_t r = 0; r < 100; ++r) {
    const double x = std::log(static_cast<double>(r + 1));
    const double y = std::log(static_cast<double>(counts[r]));
    sx += x, sy += y, sxx += x * x, sxy += x * y, ++n;
  }
  const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  EXPECT_NEAR(slope, -kS, 0.05);
}

TEST(ZipfTest, ZeroExponentIsUniform) {
  const ZipfTable z(4, 0);
  for (uint64_t r = 0; r < 4; ++r) EXPECT_DOUBLE_EQ(z.Probability(r), 0.25);
  EXPECT_EQ(z.Probability(4), 0.0);
}

}  // namespace
}  // namespace trace_gen
}  // namespace hotpage
