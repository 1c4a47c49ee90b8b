#include "tools/simulate/svg/svg_report_builder.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "tools/simulate/svg/svg_report.h"

namespace hotpage::simulate {
namespace {

constexpr uint64_t kPage = 4096;

// The row whose [start, end) holds `address`, or -1.
int RowOf(const SvgReport& r, uint64_t address) {
  for (size_t i = 0; i < r.rows.size(); ++i) {
    if (r.rows[i].start <= address && address < r.rows[i].end)
      return static_cast<int>(i);
  }
  return -1;
}

uint64_t TotalHeat(const SvgReport& r) {
  uint64_t t = 0;
  for (uint64_t h : r.heat.values) t += h;
  return t;
}

TEST(SvgReportBuilderTest, AccessLandsInTheRowThatContainsItsAddress) {
  SvgReportBuilderOptions opt;
  opt.max_rows = 8;
  SvgReportBuilder b(opt);
  // Three mappings far apart: a heap, a library, a stack.
  std::vector<uint64_t> addrs;
  for (uint64_t p = 0; p < 64; ++p)
    addrs.push_back(0x555555554000 + p * kPage + 17);
  for (uint64_t p = 0; p < 8; ++p) addrs.push_back(0x7f1234560000 + p * kPage);
  for (uint64_t p = 0; p < 2; ++p)
    addrs.push_back(0x7ffffffde000 + p * kPage + 4095);
  for (size_t i = 0; i < addrs.size(); ++i) b.AddAccess(0.5, addrs[i], i + 1);
  const int shift = b.row_shift();
  SvgReport r = b.Finish("t", "", "hotpage");
  ASSERT_TRUE(ValidateSvgReport(r).ok()) << ValidateSvgReport(r);
  ASSERT_LE(r.rows.size(), 8u);
  for (size_t i = 0; i < addrs.size(); ++i) {
    int row = RowOf(r, addrs[i]);
    ASSERT_GE(row, 0) << std::hex << addrs[i];
  }
  // Heat is where the accesses were: each row's count is the sum of the
  // counts of the addresses inside it.
  std::vector<uint64_t> want(r.rows.size(), 0);
  for (size_t i = 0; i < addrs.size(); ++i) want[RowOf(r, addrs[i])] += i + 1;
  for (size_t j = 0; j < r.rows.size(); ++j)
    EXPECT_EQ(r.heat.at(0, j), want[j]) << j;
  // Rows are equal power-of-two blocks, aligned.
  uint64_t size = r.rows[0].end - r.rows[0].start;
  EXPECT_EQ(size & (size - 1), 0u);
  for (const AddressRow& a : r.rows) {
    EXPECT_EQ(a.end - a.start, size);
    EXPECT_EQ(a.start % size, 0u);
  }
  // Finish merged further than streaming needed (8 rows, not 16 chunks).
  EXPECT_GE(size, uint64_t{1} << shift);
}

TEST(SvgReportBuilderTest, GapsBetweenMappingsCollapse) {
  SvgReportBuilder b;  // 256 rows
  // Two 1 MiB mappings 100 TiB apart: 512 touched pages.
  for (uint64_t p = 0; p < 256; ++p) {
    b.AddAccess(0, 0x100000000 + p * kPage);
    b.AddAccess(0, 0x650000000000 + p * kPage);
  }
  SvgReport r = b.Finish("t", "", "");
  // Rows cover only touched memory: at most 2 x 1 MiB, not 100 TiB.
  uint64_t covered = 0;
  for (const AddressRow& a : r.rows) covered += a.end - a.start;
  EXPECT_LE(covered, 2u << 20);
  // Two ranges: exactly one gap between consecutive rows.
  int gaps = 0;
  for (size_t i = 1; i < r.rows.size(); ++i)
    gaps += r.rows[i].start != r.rows[i - 1].end;
  EXPECT_EQ(gaps, 1);
  // With 256 rows for 512 pages, a row is two pages.
  EXPECT_EQ(r.rows.size(), 256u);
  EXPECT_EQ(r.rows[0].end - r.rows[0].start, 2 * kPage);
  EXPECT_EQ(r.rows[0].start, 0x100000000u);
  EXPECT_EQ(r.rows[128].start, 0x650000000000u);
}

TEST(SvgReportBuilderTest, IntervalsDoubleWhenTimeRunsPastTheCap) {
  SvgReportBuilderOptions opt;
  opt.interval_s = 1;
  opt.max_intervals = 4;
  SvgReportBuilder b(opt);
  for (int t = 0; t < 8; ++t) b.AddAccess(t + 0.5, 0x1000, t + 1);  // 1..8
  EXPECT_EQ(b.interval_s(), 2);
  SvgReport r = b.Finish("t", "", "");
  ASSERT_EQ(r.intervals(), 4);
  EXPECT_EQ(r.interval_bounds_s, (std::vector<double>{0, 2, 4, 6, 8}));
  EXPECT_EQ(r.heat.at(0, 0), 1u + 2);
  EXPECT_EQ(r.heat.at(3, 0), 7u + 8);
  // A far-future event doubles as often as needed, keeping totals.
  SvgReportBuilder c(opt);
  c.AddAccess(0, 0x1000);
  c.AddAccess(1000, 0x1000);
  SvgReport s = c.Finish("t", "", "");
  EXPECT_LE(s.intervals(), 4);
  EXPECT_EQ(TotalHeat(s), 2u);
  EXPECT_GT(s.interval_bounds_s.back(), 1000);
}

TEST(SvgReportBuilderTest, ResidencySnapshotsAndMoves) {
  SvgReportBuilder b;  // 1 s intervals
  const uint64_t a = 0x10000,
                 c = 0x11000;  // same row at first: same chunk? no, next page
  b.AddPage(0.1, a, Tier::kFast);
  b.AddPage(0.2, c, Tier::kSlow);
  b.AddAccess(4.5, a);
  b.MovePage(2.5, c, Tier::kFast);  // promotion, reported late
  b.MovePage(3.5, a, Tier::kSlow);  // demotion
  SvgReport r = b.Finish("t", "", "hotpage");
  ASSERT_EQ(r.intervals(), 5);
  int ra = RowOf(r, a), rc = RowOf(r, c);
  ASSERT_NE(ra, rc);
  std::vector<float> fa, fc;
  for (int i = 0; i < 5; ++i) {
    fa.push_back(r.fast.at(i, ra));
    fc.push_back(r.fast.at(i, rc));
  }
  EXPECT_EQ(fa, (std::vector<float>{1, 1, 1, 0, 0}));
  EXPECT_EQ(fc, (std::vector<float>{0, 0, 1, 1, 1}));
  EXPECT_EQ(r.promotions.at(2, rc), 1u);
  EXPECT_EQ(r.demotions.at(3, ra), 1u);
  EXPECT_EQ(r.promotions.at(3, ra) + r.demotions.at(2, rc), 0u);
}

TEST(SvgReportBuilderTest, RowShareCountsItsPagesAndNaNBeforeAny) {
  SvgReportBuilderOptions opt;
  opt.max_rows = 2;
  SvgReportBuilder b(opt);
  // Four pages in one 16 KiB block, one far away that appears later.
  for (uint64_t p = 0; p < 4; ++p)
    b.AddPage(0, p * kPage, p == 0 ? Tier::kFast : Tier::kSlow);
  b.AddPage(3, 0x7f0000000000, Tier::kFast);
  b.RemovePage(4, 3 * kPage, Tier::kSlow);
  SvgReport r = b.Finish("t", "", "");
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_FLOAT_EQ(r.fast.at(0, 0), 0.25f);
  EXPECT_FLOAT_EQ(r.fast.at(4, 0), 1.0f / 3);  // a slow page went away
  EXPECT_TRUE(std::isnan(r.fast.at(2, 1)));    // not placed yet
  EXPECT_FLOAT_EQ(r.fast.at(3, 1), 1.0f);
}

TEST(SvgReportBuilderTest, MergingKeepsTotalsAndTakesTheLaterSnapshot) {
  SvgReportBuilderOptions opt;
  opt.max_intervals = 3;
  opt.max_rows = 2;
  SvgReportBuilder b(opt);
  b.AddPage(0, 0x1000, Tier::kSlow);
  b.MovePage(1.5, 0x1000, Tier::kFast);  // interval 1
  b.MovePage(2.5, 0x1000, Tier::kSlow);  // interval 2
  b.AddAccess(3.5, 0x1000, 5);           // interval 3: merges to 2 s intervals
  SvgReport r = b.Finish("t", "", "");
  ASSERT_EQ(r.intervals(), 2);
  EXPECT_EQ(r.promotions.at(0, 0), 1u);  // [0, 2)
  EXPECT_EQ(r.demotions.at(1, 0), 1u);   // [2, 4)
  EXPECT_EQ(r.fast.at(0, 0), 1.0f);      // at 2 s the page was fast
  EXPECT_EQ(r.fast.at(1, 0), 0.0f);
  EXPECT_EQ(r.heat.at(1, 0), 5u);
}

TEST(SvgReportBuilderTest, PolicySeriesShares) {
  SvgReportBuilder b;
  int hp = b.AddPolicy("hotpage");
  int orc = b.AddPolicy("oracle", true);
  b.AddPolicyAccess(hp, 0.5, true, 3);
  b.AddPolicyAccess(hp, 0.6, false, 1);
  b.AddPolicyAccess(hp, 2.5, true);
  b.AddPolicyAccess(orc, 0.5, true);
  b.AddPolicyAccess(7, 0.5, true);  // unknown id: dropped
  EXPECT_EQ(b.dropped_events(), 1u);
  SvgReport r = b.Finish("t", "", "hotpage", 4.0);
  ASSERT_EQ(r.intervals(), 4);
  ASSERT_EQ(r.series.size(), 2u);
  EXPECT_EQ(r.series[0].name, "hotpage");
  EXPECT_FALSE(r.series[0].is_oracle);
  EXPECT_TRUE(r.series[1].is_oracle);
  EXPECT_DOUBLE_EQ(r.series[0].fast_share[0], 0.75);
  EXPECT_TRUE(std::isnan(r.series[0].fast_share[1]));
  EXPECT_DOUBLE_EQ(r.series[0].fast_share[2], 1.0);
  EXPECT_TRUE(std::isnan(r.series[0].fast_share[3]));
  EXPECT_TRUE(std::isnan(r.series[1].fast_share[1]));
  EXPECT_TRUE(ValidateSvgReport(r).ok()) << ValidateSvgReport(r);
}

TEST(SvgReportBuilderTest, EndTimeExtendsOrCutsTheLastInterval) {
  SvgReportBuilder b;
  b.AddAccess(0.5, 0x1000);
  SvgReport r = b.Finish("t", "", "", 9.5);
  ASSERT_EQ(r.intervals(), 10);
  EXPECT_EQ(r.interval_bounds_s[9], 9);
  EXPECT_EQ(r.interval_bounds_s[10], 9.5);
  EXPECT_TRUE(ValidateSvgReport(r).ok());
}

TEST(SvgReportBuilderTest, BadTimesAreDroppedAndEarlyOnesClamped) {
  SvgReportBuilderOptions opt;
  opt.start_s = 10;
  SvgReportBuilder b(opt);
  b.AddAccess(std::nan(""), 0x1000);
  b.AddAccess(INFINITY, 0x1000);
  b.AddAccess(3, 0x1000);  // before start: first interval
  EXPECT_EQ(b.dropped_events(), 2u);
  SvgReport r = b.Finish("t", "", "");
  ASSERT_EQ(r.intervals(), 1);
  EXPECT_EQ(r.interval_bounds_s[0], 10);
  EXPECT_EQ(r.heat.at(0, 0), 1u);
}

TEST(SvgReportBuilderTest, FinishLeavesTheBuilderEmpty) {
  SvgReportBuilder b;
  b.AddAccess(5, 0x1000);
  b.AddPolicy("x");
  SvgReport first = b.Finish("a", "", "");
  EXPECT_EQ(first.intervals(), 6);
  SvgReport second = b.Finish("b", "", "");
  EXPECT_EQ(second.intervals(), 0);
  EXPECT_TRUE(second.rows.empty());
  EXPECT_TRUE(second.series.empty());
  EXPECT_TRUE(RenderSvg(second).ok());
}

TEST(SvgReportBuilderTest, MemoryStaysBoundedOnAHostileStream) {
  SvgReportBuilderOptions opt;  // 600 intervals, 256 rows
  SvgReportBuilder b(opt);
  int hp = b.AddPolicy("hotpage");
  std::mt19937_64 rng(1);
  const size_t cell_bound = 2 * 256 * 600 * 24 + 2 * 600 * 8;
  size_t peak = 0;
  for (int i = 0; i < 2000000; ++i) {
    // Addresses all over the 64-bit space, times over 10^6 s.
    uint64_t addr = rng();
    double t = (rng() % 1000000000) / 1000.0;
    switch (rng() % 4) {
      case 0:
        b.AddAccess(t, addr);
        break;
      case 1:
        b.AddPage(t, addr, Tier::kSlow);
        break;
      case 2:
        b.MovePage(t, addr, Tier::kFast);
        break;
      case 3:
        b.AddPolicyAccess(hp, t, rng() % 2);
        break;
    }
    if (i % 4096 == 0) {
      ASSERT_LE(b.chunks(), 512u);
      peak = std::max(peak, b.cell_bytes());
      ASSERT_LE(b.cell_bytes(), cell_bound);
    }
  }
  std::printf(
      "peak cell bytes %zu (bound %zu), rows of 2^%d bytes, %g s intervals\n",
      peak, cell_bound, b.row_shift(), b.interval_s());
  SvgReport r = b.Finish("t", "", "hotpage");
  EXPECT_LE(r.rows.size(), 256u);
  EXPECT_LE(r.intervals(), 600);
  EXPECT_TRUE(ValidateSvgReport(r).ok()) << ValidateSvgReport(r);
  auto svg = RenderSvg(r);
  ASSERT_TRUE(svg.ok());
  EXPECT_LT(svg->size(), 500u * 1024);
}

}  // namespace
}  // namespace hotpage::simulate
