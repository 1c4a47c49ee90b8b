#include "tools/simulate/svg/svg_report.h"

#include <clocale>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tools/simulate/svg/xml_check.h"

namespace hotpage::simulate {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// n intervals of 1 s from 0; m rows of 2 MiB from 0x7f0000000000, with a
// gap (1 GiB) before row gap_at (if 0 < gap_at < m).
SvgReport MakeReport(int n, int m, int gap_at = -1) {
  SvgReport r;
  r.title = "test trace";
  r.subtitle = "fast tier 25%";
  r.subject_policy = "hotpage";
  for (int i = 0; i <= n; ++i) r.interval_bounds_s.push_back(i);
  uint64_t a = 0x7f0000000000;
  for (int j = 0; j < m; ++j) {
    if (j == gap_at) a += uint64_t{1} << 30;
    r.rows.push_back({a, a + (2 << 20)});
    a += 2 << 20;
  }
  r.heat.Reset(n, m, 0);
  r.fast.Reset(n, m, std::numeric_limits<float>::quiet_NaN());
  r.promotions.Reset(n, m, 0);
  r.demotions.Reset(n, m, 0);
  return r;
}

// A plausible replay: a hot band moving through the rows, sampling noise,
// residency following the band, a few moves; three policies.
SvgReport RealisticReport(int n, int m, uint64_t seed) {
  SvgReport r = MakeReport(n, m, m / 3);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < n; ++i) {
    int hot = (i / (n / 3 + 1)) * (m / 3) + m / 10;
    for (int j = 0; j < m; ++j) {
      bool in_band = j >= hot && j < hot + m / 8;
      std::poisson_distribution<int> pois(in_band ? 400.0 : 3.0);
      r.heat.at(i, j) = pois(rng);
      r.fast.at(i, j) =
          in_band && i % (n / 3 + 1) > 5 ? 1.0f : (j < m / 4 ? 0.5f : 0.0f);
      if (in_band && i % (n / 3 + 1) <= 5) r.promotions.at(i, j) = 10;
    }
  }
  for (const char* name : {"hotpage", "tpp", "oracle"}) {
    PolicySeries s;
    s.name = name;
    s.is_oracle = std::string(name) == "oracle";
    for (int i = 0; i < n; ++i)
      s.fast_share.push_back(0.5 + 0.4 * std::sin(i * 0.05));
    r.series.push_back(s);
  }
  return r;
}

std::vector<XmlElement> ParseOk(const std::string& svg) {
  auto elements = CheckXml(svg);
  EXPECT_TRUE(elements.ok()) << elements.status();
  return elements.ok() ? *elements : std::vector<XmlElement>{};
}

std::vector<std::string> Texts(const std::vector<XmlElement>& elements) {
  std::vector<std::string> out;
  for (const XmlElement& e : elements) {
    if (e.name == "text") out.push_back(e.text);
  }
  return out;
}

bool HasText(const std::vector<XmlElement>& elements, const std::string& text) {
  for (const std::string& t : Texts(elements)) {
    if (t == text) return true;
  }
  return false;
}

bool HasTextContaining(const std::vector<XmlElement>& elements,
                       const std::string& part) {
  for (const std::string& t : Texts(elements)) {
    if (absl::StrContains(t, part)) return true;
  }
  return false;
}

TEST(SvgReportTest, RendersWellFormedSelfContainedSvg) {
  SvgReport r = RealisticReport(120, 64, 1);
  auto svg = RenderSvg(r);
  ASSERT_TRUE(svg.ok()) << svg.status();
  std::vector<XmlElement> e = ParseOk(*svg);
  ASSERT_FALSE(e.empty());
  EXPECT_EQ(e[0].name, "svg");
  EXPECT_EQ(e[0].attributes["xmlns"], "http://www.w3.org/2000/svg");
  SvgLayout l = ComputeSvgLayout(r);
  EXPECT_EQ(e[0].attributes["width"], absl::StrCat(l.width));
  EXPECT_EQ(e[0].attributes["height"], absl::StrCat(l.height));
  // Self-contained: nothing to fetch, nothing to run.
  for (const char* outside :
       {"<image", "<script", "href", "@import", "url(", "<foreignObject"}) {
    EXPECT_FALSE(absl::StrContains(*svg, outside)) << outside;
  }
  // Readable: title, axes with units, legends.
  EXPECT_TRUE(HasText(e, "test trace"));
  EXPECT_TRUE(HasText(e, "fast tier 25%"));
  EXPECT_TRUE(HasText(e, "time (s)"));
  EXPECT_TRUE(HasText(e, "virtual address"));
  EXPECT_TRUE(HasText(e, "fast-tier share of sampled accesses (%)"));
  EXPECT_TRUE(HasText(e, "sampled accesses per 1 s interval (log scale):"));
  EXPECT_TRUE(HasText(e, "promotions"));
  EXPECT_TRUE(HasText(e, "demotions"));
  EXPECT_TRUE(HasText(e, "0%"));
  EXPECT_TRUE(HasText(e, "100%"));
  EXPECT_TRUE(HasTextContaining(e, "each row 2 MiB of address space"));
  EXPECT_TRUE(HasTextContaining(e, "hotpage "));
  EXPECT_TRUE(HasTextContaining(e, "tpp "));
}

TEST(SvgReportTest, TimeAxisHasTicksInSeconds) {
  SvgReport r = MakeReport(60, 4);
  std::vector<XmlElement> e = ParseOk(*RenderSvg(r));
  for (const char* tick : {"0", "10", "20", "30", "40", "50", "60"}) {
    EXPECT_TRUE(HasText(e, tick)) << tick;
  }
  // Short spans get decimals.
  SvgReport s = MakeReport(0, 4);
  s.interval_bounds_s = {0, 0.25, 0.5};
  s.heat.Reset(2, 4, 1);
  s.fast.Reset(2, 4, 0.f);
  s.promotions.Reset(2, 4, 0);
  s.demotions.Reset(2, 4, 0);
  std::vector<XmlElement> f = ParseOk(*RenderSvg(s));
  EXPECT_TRUE(HasText(f, "0.05"));
  EXPECT_TRUE(HasText(f, "0.50"));
}

TEST(SvgReportTest, AddressAxisLabelsRangeStartsInHexAndMarksGaps) {
  SvgReport r = MakeReport(10, 8, /*gap_at=*/4);
  std::vector<XmlElement> e = ParseOk(*RenderSvg(r));
  EXPECT_TRUE(HasText(e, "0x7f0000000000"));
  // The range after the gap starts at 0x7f0000000000 + 8 MiB + 1 GiB.
  EXPECT_TRUE(HasText(e, "0x7f0040800000"));
  EXPECT_EQ(r.rows[4].start, 0x7f0040800000u);
  // Gap marks: the dashed path, in both row panels.
  int dashed = 0;
  for (const XmlElement& x : e)
    dashed += x.name == "path" && x.attributes.count("stroke-dasharray");
  EXPECT_EQ(dashed, 2);

  SvgReport no_gap = MakeReport(10, 8);
  std::vector<XmlElement> f = ParseOk(*RenderSvg(no_gap));
  dashed = 0;
  for (const XmlElement& x : f)
    dashed += x.name == "path" && x.attributes.count("stroke-dasharray");
  EXPECT_EQ(dashed, 0);
}

TEST(SvgReportTest, EscapesUntrustedText) {
  SvgReport r = MakeReport(3, 2);
  r.title = "a<b>&\"c\"'d";
  r.subtitle = "bad utf8 \xff\xfe and control \x01 and U+FFFF \xef\xbf\xbf";
  r.subject_policy = "p<&>";
  PolicySeries s;
  s.name = "</text><script>x</script>";
  s.fast_share = {0.5, 0.5, 0.5};
  r.series.push_back(s);
  auto svg = RenderSvg(r);
  ASSERT_TRUE(svg.ok()) << svg.status();
  std::vector<XmlElement> e = ParseOk(*svg);
  EXPECT_TRUE(HasText(e, "a<b>&\"c\"'d"));
  EXPECT_FALSE(absl::StrContains(*svg, "<script"));
  EXPECT_TRUE(HasTextContaining(e, "</text><script>x</script> 50%"));
  EXPECT_TRUE(HasTextContaining(e, "under p<&>") ||
              HasTextContaining(e, "Where p<&> keeps"));
  // Replaced, not dropped: each bad byte/character becomes U+FFFD.
  EXPECT_TRUE(HasText(
      e,
      "bad utf8 \xef\xbf\xbd\xef\xbf\xbd and control \xef\xbf\xbd and U+FFFF "
      "\xef\xbf\xbd"));
  EXPECT_EQ(EscapeXmlText("x<y&\"z\""), "x&lt;y&amp;&quot;z&quot;");
  EXPECT_EQ(EscapeXmlText("\xe2\x89\xa5 ok"),
            "\xe2\x89\xa5 ok");  // valid UTF-8 kept
}

TEST(SvgReportTest, LongTitleIsCutWithAnEllipsis) {
  SvgReport r = MakeReport(2, 2);
  r.title = std::string(500, 'x');
  std::vector<XmlElement> e = ParseOk(*RenderSvg(r));
  EXPECT_TRUE(HasText(e, std::string(90, 'x') + "\xe2\x80\xa6"));
}

TEST(SvgReportTest, DeterministicAndLocaleIndependent) {
  SvgReport r = RealisticReport(200, 100, 2);
  auto a = RenderSvg(r);
  auto b = RenderSvg(r);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  SvgReport changed = r;
  changed.heat.at(7, 7) += 1000;
  EXPECT_NE(*RenderSvg(changed), *a);
  // A locale with a decimal comma must not leak into coordinates.
  const char* locales[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8",
                           "C.UTF-8"};
  for (const char* loc : locales) {
    if (std::setlocale(LC_ALL, loc) == nullptr) continue;
    EXPECT_EQ(*RenderSvg(r), *a) << loc;
  }
  std::setlocale(LC_ALL, "C");
  // Fractional coordinates use '.', never ','.
  EXPECT_TRUE(std::regex_search(*a, std::regex("=\"[0-9]+\\.[0-9]+\"")));
  EXPECT_FALSE(std::regex_search(*a, std::regex("[0-9],[0-9]")));
}

// The <path>s of the n-th group of cell runs (0: heatmap; 1: tiers
// residency; 2: moves).
std::vector<XmlElement> CellGroupPaths(const std::vector<XmlElement>& e,
                                       int n) {
  std::vector<XmlElement> out;
  int seen = -1;
  for (size_t i = 0; i < e.size(); ++i) {
    if (e[i].name != "g" || !e[i].attributes.count("transform") ||
        !absl::StrContains(e[i].attributes.at("transform"), "scale(")) {
      continue;
    }
    if (++seen != n) continue;
    for (size_t j = i + 1; j < e.size() && e[j].depth > e[i].depth; ++j)
      out.push_back(e[j]);
    break;
  }
  return out;
}

TEST(SvgReportTest, HeatLegendIsLogScaleWithNiceBounds) {
  SvgReport r = MakeReport(4, 4);
  r.heat.at(0, 0) = 1;
  r.heat.at(1, 1) = 30;
  r.heat.at(2, 2) = 400;
  r.heat.at(3, 3) = 1000;
  std::vector<XmlElement> e = ParseOk(*RenderSvg(r));
  for (const char* label : {"\xe2\x89\xa5"
                            "1",
                            "\xe2\x89\xa5"
                            "2",
                            "\xe2\x89\xa5"
                            "5",
                            "\xe2\x89\xa5"
                            "10",
                            "\xe2\x89\xa5"
                            "500",
                            "\xe2\x89\xa5"
                            "1k"}) {
    EXPECT_TRUE(HasText(e, label)) << label;
  }
  EXPECT_FALSE(HasText(e,
                       "\xe2\x89\xa5"
                       "2k"));
  EXPECT_TRUE(HasText(e, "(max 1000)"));
  // Four cells, four different colours: one path each in the heat group.
  EXPECT_EQ(CellGroupPaths(e, 0).size(), 4u);
}

TEST(SvgReportTest, HugeCountsKeepTheLegendShort) {
  SvgReport r = MakeReport(2, 2);
  r.heat.at(0, 0) = 1;
  r.heat.at(1, 1) = std::numeric_limits<uint64_t>::max();
  std::vector<XmlElement> e = ParseOk(*RenderSvg(r));
  int swatches = 0;
  for (const std::string& t : Texts(e))
    swatches += absl::StartsWith(t, "\xe2\x89\xa5");
  EXPECT_GE(swatches, 2);
  EXPECT_LE(swatches, 12);
  EXPECT_TRUE(HasText(e,
                      "\xe2\x89\xa5"
                      "1"));
  EXPECT_TRUE(HasText(e,
                      "\xe2\x89\xa5"
                      "1E"));  // 10^18
  EXPECT_EQ(CellGroupPaths(e, 0).size(), 2u);
}

// Each run is "M<x> <row>h<w>" (or "m<dx> 0h<w>" on the same row); the
// rows a colour's path covers.
std::vector<int> RowsOfPath(const std::string& d) {
  std::vector<int> rows;
  for (size_t i = 0; (i = d.find('M', i)) != std::string::npos; ++i) {
    size_t sp = d.find(' ', i);
    rows.push_back(std::stoi(d.substr(sp + 1)));
  }
  return rows;
}

const XmlElement* PathWithStroke(const std::vector<XmlElement>& e,
                                 const std::string& color) {
  for (const XmlElement& x : e) {
    if (x.name == "path" && x.attributes.count("stroke") &&
        x.attributes.at("stroke") == color && x.attributes.count("d")) {
      return &x;
    }
  }
  return nullptr;
}

TEST(SvgReportTest, TiersPanelShowsResidencyPromotionsAndDemotions) {
  SvgReport r = MakeReport(10, 3);
  for (int i = 0; i < 10; ++i) {
    r.fast.at(i, 0) = 1.0f;  // all fast
    r.fast.at(i, 1) = 0.0f;  // all slow
    // row 2: no pages (NaN)
  }
  r.promotions.at(3, 0) = 5;
  r.demotions.at(6, 1) = 2;
  std::vector<XmlElement> e = ParseOk(*RenderSvg(r));
  const XmlElement* fast = PathWithStroke(e, "#08519c");
  const XmlElement* slow = PathWithStroke(e, "#d9d9d9");
  const XmlElement* promo = PathWithStroke(e, "#1a9641");
  const XmlElement* demo = PathWithStroke(e, "#d7191c");
  ASSERT_TRUE(fast && slow && promo && demo);
  EXPECT_EQ(RowsOfPath(fast->attributes.at("d")), std::vector<int>{0});
  EXPECT_EQ(RowsOfPath(slow->attributes.at("d")), std::vector<int>{1});
  EXPECT_EQ(RowsOfPath(promo->attributes.at("d")), std::vector<int>{0});
  EXPECT_EQ(RowsOfPath(demo->attributes.at("d")), std::vector<int>{1});
  // One run per row: ten equal cells merge; the move is one cell wide.
  EXPECT_EQ(fast->attributes.at("d"), "M0 0h10");  // x in columns
  EXPECT_EQ(promo->attributes.at("d"), "M3 0h1");
}

TEST(SvgReportTest, ChartDrawsOneLinePerPolicyBrokenAtMissingIntervals) {
  SvgReport r = MakeReport(6, 2);
  PolicySeries a{"hotpage", false, {0.5, 0.5, kNaN, 1.0, 1.0, 1.0}};
  PolicySeries o{"oracle", true, {1, 1, 1, 1, 1, 1}};
  PolicySeries t{"tpp", false, {kNaN, kNaN, kNaN, kNaN, kNaN, kNaN}};
  r.series = {a, o, t};
  std::vector<XmlElement> e = ParseOk(*RenderSvg(r));
  EXPECT_TRUE(HasText(e, "hotpage 80%"));  // mean of defined intervals
  EXPECT_TRUE(HasText(e, "oracle 100%"));
  EXPECT_TRUE(HasText(e, "tpp no samples"));
  const XmlElement* line = nullptr;
  const XmlElement* oracle = nullptr;
  for (const XmlElement& x : e) {
    if (x.name != "path" || !x.attributes.count("stroke-width")) continue;
    if (x.attributes.count("stroke") && x.attributes.at("stroke") == "#0072b2")
      line = &x;
    if (x.attributes.count("stroke") &&
        x.attributes.at("stroke") == "#555555" &&
        x.attributes.count("stroke-dasharray")) {
      oracle = &x;
    }
  }
  ASSERT_NE(line, nullptr);
  ASSERT_NE(oracle, nullptr);
  std::string d = line->attributes.at("d");
  EXPECT_EQ(std::count(d.begin(), d.end(), 'M'), 2) << d;  // the NaN breaks it
}

TEST(SvgReportTest, ChartLegendWrapsOntoMoreLines) {
  SvgReport one = MakeReport(4, 2);
  one.series.push_back({"hotpage", false, {0.1, 0.2, 0.3, 0.4}});
  SvgReport many = one;
  for (int k = 0; k < kMaxSvgSeries - 1; ++k) {
    many.series.push_back({absl::StrCat("a-rather-long-policy-name-", k),
                           false,
                           {0.1, 0.2, 0.3, 0.4}});
  }
  SvgLayout l1 = ComputeSvgLayout(one), l16 = ComputeSvgLayout(many);
  EXPECT_GT(l16.chart.y, l1.chart.y);
  EXPECT_EQ(l16.height - l16.chart.y, l1.height - l1.chart.y);
  std::vector<XmlElement> e = ParseOk(*RenderSvg(many));
  std::set<std::string> legend_rows;
  for (const XmlElement& x : e) {
    if (x.name == "text" &&
        absl::StrContains(x.text, "a-rather-long-policy-name-")) {
      legend_rows.insert(x.attributes.at("y"));
      // Starts inside the document, with room for its text.
      EXPECT_LT(std::stod(x.attributes.at("x")) + 0.58 * 12 * x.text.size(),
                l16.width);
    }
  }
  EXPECT_GE(legend_rows.size(), 3u);
}

TEST(SvgReportTest, EmptyReportsRenderAndSaySo) {
  SvgReport r;
  auto svg = RenderSvg(r);
  ASSERT_TRUE(svg.ok()) << svg.status();
  std::vector<XmlElement> e = ParseOk(*svg);
  EXPECT_TRUE(HasText(e, "no intervals"));
  SvgReport quiet = MakeReport(5, 0);
  std::vector<XmlElement> f = ParseOk(*RenderSvg(quiet));
  EXPECT_TRUE(HasText(f, "no sampled accesses"));
  EXPECT_TRUE(HasText(f, "no policies"));
}

std::string HeatUnit(const std::vector<XmlElement>& e) {
  for (const std::string& t : Texts(e)) {
    if (absl::StartsWith(t, "sampled accesses per ")) return t;
  }
  return "";
}

TEST(SvgReportTest, SizeStaysBoundedFor600x256) {
  // Smooth: a moving hot band, no noise; every interval gets its column.
  SvgReport smooth = MakeReport(600, 256, 100);
  for (int i = 0; i < 600; ++i) {
    for (int j = 0; j < 256; ++j) {
      smooth.heat.at(i, j) = (j + 600 - i) % 256 < 40 ? 1000 : 10;
      smooth.fast.at(i, j) = (j + 600 - i) % 256 < 30 ? 1.0f : 0.0f;
    }
  }
  auto s = RenderSvg(smooth);
  ASSERT_TRUE(s.ok());
  std::vector<XmlElement> se = ParseOk(*s);
  std::printf("600x256 smooth report: %zu bytes; %s\n", s->size(),
              HeatUnit(se).c_str());
  EXPECT_EQ(HeatUnit(se), "sampled accesses per 1 s interval (log scale):");
  EXPECT_LT(s->size(), 400u * 1024);

  // Realistic: a moving hot band over Poisson sampling noise (mean 3).
  SvgReport real = RealisticReport(600, 256, 3);
  auto a = RenderSvg(real);
  ASSERT_TRUE(a.ok());
  std::vector<XmlElement> ae = ParseOk(*a);
  std::printf("600x256 realistic report: %zu bytes; %s\n", a->size(),
              HeatUnit(ae).c_str());
  EXPECT_LT(a->size(), 400u * 1024);

  // Worst case: every cell a random level, residency and moves random too.
  SvgReport noise = MakeReport(600, 256, 100);
  std::mt19937_64 rng(4);
  for (int i = 0; i < 600; ++i) {
    for (int j = 0; j < 256; ++j) {
      noise.heat.at(i, j) = rng() % 100000;
      noise.fast.at(i, j) = (rng() % 5) / 4.0f;
      noise.promotions.at(i, j) = rng() % 2;
      noise.demotions.at(i, j) = rng() % 2;
    }
  }
  PolicySeries p{"hotpage", false, {}};
  for (int i = 0; i < 600; ++i) p.fast_share.push_back((rng() % 1000) / 1000.0);
  for (int k = 0; k < 6; ++k)
    noise.series.push_back(p), noise.series.back().name += k;
  auto b = RenderSvg(noise);
  ASSERT_TRUE(b.ok());
  std::vector<XmlElement> be = ParseOk(*b);
  std::printf("600x256 noise report: %zu bytes; %s\n", b->size(),
              HeatUnit(be).c_str());
  EXPECT_LT(b->size(), 450u * 1024);
  // Adversarial: each cell a random decade (sums over merged intervals stay
  // random), random residency and moves, all series full.
  SvgReport worst = MakeReport(600, 256, 100);
  for (int i = 0; i < 600; ++i) {
    for (int j = 0; j < 256; ++j) {
      uint64_t decade = 1;
      for (int k = rng() % 7; k > 0; --k) decade *= 10;
      worst.heat.at(i, j) = decade;
      worst.fast.at(i, j) = (rng() % 5) / 4.0f;
      worst.promotions.at(i, j) = rng() % 2;
      worst.demotions.at(i, j) = rng() % 2;
    }
  }
  for (int k = 0; k < kMaxSvgSeries; ++k) {
    worst.series.push_back(p);
    worst.series.back().name = absl::StrCat("policy-", k);
  }
  auto w = RenderSvg(worst);
  ASSERT_TRUE(w.ok());
  std::vector<XmlElement> we = ParseOk(*w);
  std::printf("600x256 adversarial report: %zu bytes; %s\n", w->size(),
              HeatUnit(we).c_str());
  EXPECT_LT(w->size(), 500u * 1024);

  // It says that it merged intervals for display, in both row panels.
  EXPECT_TRUE(absl::StrContains(HeatUnit(be), "intervals merged"));
  EXPECT_TRUE(HasTextContaining(be, "on the fast tier, end of each"));
}

TEST(SvgReportTest, ManyIntervalsAreMergedToOneColumnPerPixel) {
  SvgReport r = MakeReport(5000, 4);
  for (int i = 0; i < 5000; ++i) r.heat.at(i, i % 4) = 1;
  auto svg = RenderSvg(r);
  ASSERT_TRUE(svg.ok());
  std::vector<XmlElement> e = ParseOk(*svg);
  EXPECT_TRUE(
      HasText(e, "sampled accesses per 5 s (5 intervals merged) (log scale):"));
}

TEST(SvgReportTest, ValidationNamesTheBrokenRule) {
  auto err = [](const SvgReport& r) {
    return std::string(RenderSvg(r).status().message());
  };
  SvgReport r = MakeReport(4, 3);
  EXPECT_TRUE(ValidateSvgReport(r).ok());

  SvgReport b = r;
  b.interval_bounds_s[2] = 1;
  EXPECT_TRUE(absl::StrContains(err(b), "interval_bounds_s[2]")) << err(b);
  b = r;
  b.interval_bounds_s[1] = kNaN;
  EXPECT_TRUE(absl::StrContains(err(b), "not finite")) << err(b);
  b = r;
  b.rows[2].start = b.rows[1].start;
  EXPECT_TRUE(absl::StrContains(err(b), "rows[2]")) << err(b);
  b = r;
  b.rows[0].end = b.rows[0].start;
  EXPECT_TRUE(absl::StrContains(err(b), "rows[0]")) << err(b);
  b = r;
  b.heat.Reset(3, 3, 0);
  EXPECT_TRUE(absl::StrContains(err(b), "heat: 3 x 3")) << err(b);
  b = r;
  b.fast.at(1, 2) = 1.5f;
  EXPECT_TRUE(absl::StrContains(err(b), "fast[interval 1, row 2]")) << err(b);
  b = r;
  b.series.push_back({"tpp", false, {0.1, 0.2}});
  EXPECT_TRUE(
      absl::StrContains(err(b), "series 'tpp': 2 values for 4 intervals"))
      << err(b);
  b = r;
  b.series.push_back({"tpp", false, {0.1, 0.2, -0.5, 0.1}});
  EXPECT_TRUE(absl::StrContains(err(b), "interval 2")) << err(b);
  b = MakeReport(1, kMaxSvgRows + 1);
  EXPECT_TRUE(absl::StrContains(err(b), "rows: 1025 > 1024")) << err(b);
  b = r;
  b.interval_bounds_s = {0};
  EXPECT_FALSE(RenderSvg(b).ok());
}

}  // namespace
}  // namespace hotpage::simulate
