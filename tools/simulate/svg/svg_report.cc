#include "tools/simulate/svg/svg_report.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tools/base/atomic_file.h"
#include "tools/base/status_macros.h"

namespace hotpage::simulate {
namespace {

// ---------------------------------------------------------------------------
// Geometry (SVG pixels). Panels share kPlotX/kPlotWidth, so one time runs
// down one vertical line through all three.

constexpr double kDocWidth = 1200;
constexpr double kPlotX = 150;
constexpr double kPlotWidth = 1000;
constexpr double kPanelRowsHeight = 384;  // 256 rows of 1.5 px
constexpr double kMinRowHeight = 1.5;
constexpr double kMaxRowHeight = 18;
constexpr double kChartHeight = 280;
constexpr double kTitleBlock = 64;   // title + subtitle
constexpr double kHeaderBlock = 46;  // panel heading + legend line above a plot
constexpr double kAxisBlock = 44;    // x ticks, labels, "time (s)" below a plot
constexpr double kPanelGap = 18;
constexpr double kBottomPad = 12;
// At most one display column per pixel.
constexpr int kMaxDisplayColumns = static_cast<int>(kPlotWidth);

constexpr char kFont[] = "DejaVu Sans, Helvetica, Arial, sans-serif";
constexpr char kMono[] = "DejaVu Sans Mono, Menlo, Consolas, monospace";
constexpr char kInk[] = "#222222";
constexpr char kMuted[] = "#666666";
constexpr char kGrid[] = "#e4e4e4";
constexpr char kFrame[] = "#999999";

// Tiers panel classes (index into kTierColors; 0 = no pages, not drawn).
constexpr const char* kTierColors[] = {nullptr,   "#d9d9d9", "#c6dbef",
                                       "#6baed6", "#3182bd", "#08519c"};
constexpr const char* kTierNames[] = {"",       "all slow", "<33%",
                                      "33-67%", ">67%",     "all fast"};
constexpr char kPromotionColor[] = "#1a9641";
constexpr char kDemotionColor[] = "#d7191c";

// Chart: the subject policy, then others in order (Okabe-Ito, colour-blind
// safe), the oracle grey and dashed.
constexpr char kSubjectColor[] = "#0072b2";
constexpr const char* kSeriesColors[] = {"#d55e00", "#009e73", "#cc79a7",
                                         "#e69f00", "#56b4e9", "#8c564b",
                                         "#7f7f7f", "#bcbd22"};
constexpr char kOracleColor[] = "#555555";

// Matplotlib's "inferno" at 0.0, 0.1, ..., 1.0 (perceptually uniform).
constexpr uint32_t kInferno[] = {0x000004, 0x160b39, 0x420a68, 0x6a176e,
                                 0x932667, 0xbc3754, 0xdd513a, 0xf37819,
                                 0xfca50a, 0xf6d746, 0xfcffa4};

// ---------------------------------------------------------------------------
// Locale-independent formatting.

// v with `decimals` digits after the point, trailing zeros (and a bare
// point) removed; never "-0".
std::string Num(double v, int decimals = 1) {
  if (!std::isfinite(v)) return "0";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::fixed,
                           decimals);
  std::string s(buf, res.ptr);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

// v with exactly `decimals` digits after the point (tick labels).
std::string Fixed(double v, int decimals) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::fixed,
                           decimals);
  std::string s(buf, res.ptr);
  if (s.find_first_not_of("-0.") == std::string::npos && s[0] == '-')
    s.erase(0, 1);  // "-0.0"
  return s;
}

// Like %g with 6 significant digits: "0.5", "2", "0.025", "12800".
std::string Short(double v) {
  if (!std::isfinite(v)) return "?";
  char buf[64];
  auto res =
      std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::general, 6);
  return std::string(buf, res.ptr);
}

std::string Hex(uint64_t v) {
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof(buf), v, 16);
  return "0x" + std::string(buf, res.ptr);
}

std::string ColorHex(uint32_t rgb) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s = "#000000";
  for (int i = 0; i < 6; ++i) s[6 - i] = kDigits[(rgb >> (4 * i)) & 0xf];
  return s;
}

// "4 KiB", "2 MiB", "1.5 GiB".
std::string Bytes(uint64_t b) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 6) {
    v /= 1024;
    ++u;
  }
  return absl::StrCat(Num(v, 1), " ", kUnits[u]);
}

// "1", "20", "5k", "200M": the heat legend's thresholds (1-2-5/1-3/10^k
// times a power of ten, so the division is exact).
std::string Count(uint64_t v) {
  static const char* kSuffix[] = {"", "k", "M", "G", "T", "P", "E"};
  int u = 0;
  while (v >= 1000 && v % 1000 == 0 && u < 6) {
    v /= 1000;
    ++u;
  }
  return absl::StrCat(v, kSuffix[u]);
}

// ---------------------------------------------------------------------------
// Text.

// Decodes the UTF-8 sequence at s[i]: returns its length (0: not valid
// UTF-8 there) and sets *xml_ok to whether XML 1.0 allows the character.
size_t DecodeUtf8(const std::string& s, size_t i, bool* xml_ok) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  uint32_t cp;
  size_t len;
  if (c < 0x80) {
    cp = c;
    len = 1;
  } else if ((c & 0xe0) == 0xc0) {
    cp = c & 0x1f;
    len = 2;
  } else if ((c & 0xf0) == 0xe0) {
    cp = c & 0x0f;
    len = 3;
  } else if ((c & 0xf8) == 0xf0) {
    cp = c & 0x07;
    len = 4;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((b(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3f);
  }
  static const uint32_t kMinForLen[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMinForLen[len] || cp > 0x10ffff)
    return 0;  // overlong or out of range
  // XML 1.0 Char: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] |
  // [#x10000-#x10FFFF]
  *xml_ok = cp == 0x9 || cp == 0xa || cp == 0xd ||
            (cp >= 0x20 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) ||
            cp >= 0x10000;
  return len;
}

// s with anything XML cannot carry replaced by U+FFFD (one per invalid
// byte, or per forbidden character), cut to at most max_chars code points
// (an ellipsis marks a cut).
std::string CleanText(const std::string& s,
                      size_t max_chars = std::string::npos) {
  std::string out;
  size_t chars = 0;
  for (size_t i = 0; i < s.size();) {
    if (chars == max_chars) {
      out += "\xe2\x80\xa6";  // U+2026
      break;
    }
    bool xml_ok = false;
    size_t len = DecodeUtf8(s, i, &xml_ok);
    if (len == 0 || !xml_ok) {
      out += "\xef\xbf\xbd";  // U+FFFD
      i += std::max<size_t>(len, 1);
    } else {
      out.append(s, i, len);
      i += len;
    }
    ++chars;
  }
  return out;
}

std::string Escape(const std::string& clean) {
  std::string out;
  out.reserve(clean.size());
  for (char c : clean) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// Rough rendered width of text in a sans-serif font (average glyph 0.58 em),
// for laying out legends on one line.
double TextWidth(const std::string& clean, double font_px) {
  size_t chars = 0;
  for (char c : clean) chars += (static_cast<unsigned char>(c) & 0xc0) != 0x80;
  return chars * font_px * 0.58;
}

// ---------------------------------------------------------------------------
// Colours.

uint32_t Inferno(double p) {
  p = std::clamp(p, 0.0, 1.0) * 10;
  int i = std::min(9, static_cast<int>(p));
  double f = p - i;
  uint32_t a = kInferno[i], b = kInferno[i + 1];
  uint32_t out = 0;
  for (int shift : {16, 8, 0}) {
    double ca = (a >> shift) & 0xff, cb = (b >> shift) & 0xff;
    out |= static_cast<uint32_t>(std::lround(ca + (cb - ca) * f)) << shift;
  }
  return out;
}

// Colour of heat level i of n: few accesses light, many dark. inferno from
// 0.92 (yellow) down to 0.06 (near black); the lower half is also blended
// towards white so sparse background accesses recede behind hot ranges.
// Lightness falls monotonically with the level either way.
uint32_t HeatColor(size_t i, size_t n) {
  double q = n == 1 ? 0.5 : static_cast<double>(i) / (n - 1);  // 0..1
  uint32_t c = Inferno(0.92 - 0.86 * q);
  double alpha = std::min(1.0, 0.35 + 1.3 * q);  // share of the colour vs white
  uint32_t out = 0;
  for (int shift : {16, 8, 0}) {
    double v = (c >> shift) & 0xff;
    out |= static_cast<uint32_t>(std::lround(255 - (255 - v) * alpha)) << shift;
  }
  return out;
}

// Heat levels: lower bounds of each colour, nice numbers from 1 to at most
// max_count, at most 12 of them.
std::vector<uint64_t> HeatThresholds(uint64_t max_count) {
  std::vector<uint64_t> t;
  if (max_count == 0) return t;
  const std::vector<std::vector<int>> kSteps = {{1, 2, 5}, {1, 3}, {1}};
  for (const auto& mult : kSteps) {
    t.clear();
    for (uint64_t decade = 1;; decade *= 10) {
      bool done = false;
      for (int m : mult) {
        if (decade > max_count / m) {  // decade * m > max_count, unwrapped
          done = true;
          break;
        }
        t.push_back(decade * m);
      }
      if (done || decade > std::numeric_limits<uint64_t>::max() / 10) break;
    }
    if (t.size() <= 12) return t;
  }
  // Huge counts: every k-th decade.
  for (int k = 2;; ++k) {
    t.clear();
    for (uint64_t v = 1;;) {
      t.push_back(v);
      bool overflow = false;
      for (int j = 0; j < k; ++j) {
        if (v > std::numeric_limits<uint64_t>::max() / 10)
          overflow = true;
        else
          v *= 10;
      }
      if (overflow || v > max_count) break;
    }
    if (t.size() <= 12) return t;
  }
}

int HeatLevel(const std::vector<uint64_t>& thresholds, uint64_t c) {
  // 1-based: 0 means no accesses.
  return static_cast<int>(
      std::upper_bound(thresholds.begin(), thresholds.end(), c) -
      thresholds.begin());
}

int TierClass(float f) {
  if (!(f >= 0)) return 0;  // NaN: no pages
  if (f <= 0) return 1;
  if (f >= 1) return 5;
  if (f < 1.0f / 3) return 2;
  if (f < 2.0f / 3) return 3;
  return 4;
}

// ---------------------------------------------------------------------------
// The display grid: the report's intervals, `group` per display column.

struct Display {
  int group = 1;
  int columns = 0;
  int rows = 0;
  std::vector<int> first_interval;  // per column, plus one past the end
  std::vector<uint64_t> heat;       // column-major: [c * rows + r]
  std::vector<float> fast;
  std::vector<uint32_t> promotions, demotions;
};

Display MakeDisplay(const SvgReport& r, int group) {
  Display d;
  const int n = r.intervals();
  d.group = group;
  d.rows = static_cast<int>(r.rows.size());
  d.columns = (n + group - 1) / group;
  for (int c = 0; c <= d.columns; ++c)
    d.first_interval.push_back(std::min(n, c * group));
  size_t cells = static_cast<size_t>(d.columns) * d.rows;
  d.heat.assign(cells, 0);
  d.fast.assign(cells, std::numeric_limits<float>::quiet_NaN());
  d.promotions.assign(cells, 0);
  d.demotions.assign(cells, 0);
  for (int c = 0; c < d.columns; ++c) {
    for (int i = d.first_interval[c]; i < d.first_interval[c + 1]; ++i) {
      for (int row = 0; row < d.rows; ++row) {
        size_t k = static_cast<size_t>(c) * d.rows + row;
        uint64_t h = r.heat.at(i, row);
        d.heat[k] = d.heat[k] > std::numeric_limits<uint64_t>::max() - h
                        ? std::numeric_limits<uint64_t>::max()
                        : d.heat[k] + h;
        // Only "any moves" is drawn; count intervals with moves (no overflow).
        d.promotions[k] += r.promotions.at(i, row) > 0;
        d.demotions[k] += r.demotions.at(i, row) > 0;
        d.fast[k] =
            r.fast.at(i, row);  // the column ends where its last interval does
      }
    }
  }
  return d;
}

uint64_t MaxHeat(const Display& d) {
  uint64_t m = 0;
  for (uint64_t h : d.heat) m = std::max(m, h);
  return m;
}

int MoveClass(const Display& d, size_t k) {
  return (d.promotions[k] > 0 ? 1 : 0) | (d.demotions[k] > 0 ? 2 : 0);
}

// Runs of equal non-zero class along each row, for a class function.
template <typename ClassFn>
size_t CountRuns(const Display& d, ClassFn cls) {
  size_t runs = 0;
  for (int row = 0; row < d.rows; ++row) {
    int prev = 0;
    for (int c = 0; c < d.columns; ++c) {
      int k = cls(static_cast<size_t>(c) * d.rows + row);
      if (k != 0 && k != prev) ++runs;
      prev = k;
    }
  }
  return runs;
}

size_t HeatRuns(const Display& d) {
  std::vector<uint64_t> t = HeatThresholds(MaxHeat(d));
  return CountRuns(d, [&](size_t k) { return HeatLevel(t, d.heat[k]); });
}

size_t TierRuns(const Display& d) {
  return CountRuns(d, [&](size_t k) { return TierClass(d.fast[k]); }) +
         CountRuns(d, [&](size_t k) { return MoveClass(d, k); });
}

// The display grid for one panel: one column per interval while that fits
// in a pixel and in `max_runs`, else intervals merged by powers of two.
template <typename RunsFn>
Display FitDisplay(const SvgReport& r, size_t max_runs, RunsFn runs) {
  const int n = r.intervals();
  int group = std::max(1, (n + kMaxDisplayColumns - 1) / kMaxDisplayColumns);
  Display d = MakeDisplay(r, group);
  while (d.columns > 1 && runs(d) > max_runs) {
    group *= 2;
    d = MakeDisplay(r, group);
  }
  return d;
}

// ---------------------------------------------------------------------------
// The document.

// The chart's legend: one item per series, "name mean%", wrapped onto as
// many lines above the chart as needed.
struct LegendItem {
  std::string label;
  double x = 0;
  int line = 0;
};
constexpr double kLegendLine = 18;

std::vector<LegendItem> ChartLegend(const SvgReport& r) {
  std::vector<LegendItem> items;
  double x = kPlotX - 130;
  int line = 0;
  for (const PolicySeries& s : r.series) {
    double sum = 0;
    int defined = 0;
    for (double v : s.fast_share) {
      if (v >= 0) {
        sum += v;
        ++defined;
      }
    }
    LegendItem item;
    item.label =
        absl::StrCat(CleanText(s.name, 32), " ",
                     defined ? absl::StrCat(Num(100 * sum / defined, 1), "%")
                             : std::string("no samples"));
    double w = 29 + TextWidth(item.label, 12) + 16;
    if (x + w > kDocWidth - 10 && x > kPlotX - 130) {
      x = kPlotX - 130;
      ++line;
    }
    item.x = x;
    item.line = line;
    items.push_back(item);
    x += w;
  }
  return items;
}

struct Geometry {
  double row_height = 0;
  double rows_height = 0;  // of panels 1 and 2
  int legend_lines = 1;    // of the chart
  SvgLayout layout;
};

Geometry MakeGeometry(const SvgReport& r) {
  Geometry g;
  const int m = static_cast<int>(r.rows.size());
  g.row_height =
      m == 0 ? kMaxRowHeight
             : std::clamp(kPanelRowsHeight / m, kMinRowHeight, kMaxRowHeight);
  g.rows_height = std::max(m, 1) * g.row_height;
  double y = kTitleBlock + kHeaderBlock;
  g.layout.heatmap = {kPlotX, y, kPlotWidth, g.rows_height};
  y += g.rows_height + kAxisBlock + kPanelGap + kHeaderBlock;
  g.layout.tiers = {kPlotX, y, kPlotWidth, g.rows_height};
  std::vector<LegendItem> legend = ChartLegend(r);
  g.legend_lines = legend.empty() ? 1 : legend.back().line + 1;
  y += g.rows_height + kAxisBlock + kPanelGap + kHeaderBlock +
       (g.legend_lines - 1) * kLegendLine;
  g.layout.chart = {kPlotX, y, kPlotWidth, kChartHeight};
  y += kChartHeight + kAxisBlock + kBottomPad;
  g.layout.width = kDocWidth;
  g.layout.height = std::ceil(y);
  return g;
}

class Writer {
 public:
  Writer(const SvgReport& r, const Geometry& g, const Display& heat,
         const Display& tiers)
      : r_(r), g_(g), heat_(heat), tiers_(tiers), d_(&heat), n_(r.intervals()) {
    if (n_ > 0) {
      t0_ = r.interval_bounds_s.front();
      t1_ = r.interval_bounds_s.back();
    }
  }

  std::string Render();

 private:
  double X(double t) const {
    return kPlotX + (t - t0_) / (t1_ - t0_) * kPlotWidth;
  }
  // Left edges of the current panel's display columns (and the right edge
  // of the last), from the plot's left edge, in units of unit_px pixels:
  // whole columns when the columns are equally wide (the last may be cut
  // short), else tenths of a pixel. Either way most numbers in the cell
  // paths are small integers.
  struct ColumnEdges {
    double unit_px = 0.1;
    std::vector<double> pos;
  };
  ColumnEdges Edges() const {
    ColumnEdges e;
    const int nc = d_->columns;
    std::vector<double> px(nc + 1);
    for (int c = 0; c <= nc; ++c)
      px[c] = X(r_.interval_bounds_s[d_->first_interval[c]]) - kPlotX;
    double w0 = nc > 0 ? px[1] - px[0] : 0;
    bool uniform = w0 > 0;
    for (int c = 1; c + 1 < nc && uniform; ++c) {
      uniform = std::abs((px[c + 1] - px[c]) - w0) <= 1e-6 * w0;
    }
    e.pos.resize(nc + 1);
    if (uniform) {
      e.unit_px = w0;
      for (int c = 0; c < nc; ++c) e.pos[c] = c;
      e.pos[nc] = std::round(px[nc] / w0 * 1000) / 1000;
    } else {
      for (int c = 0; c <= nc; ++c) e.pos[c] = std::round(px[c] * 10);
    }
    return e;
  }

  void Text(double x, double y, const std::string& clean_text,
            const std::string& attrs) {
    absl::StrAppend(&out_, "<text x=\"", Num(x), "\" y=\"", Num(y), "\"", attrs,
                    ">", Escape(CleanText(clean_text)), "</text>\n");
  }
  void Line(double x1, double y1, double x2, double y2,
            const std::string& attrs) {
    absl::StrAppend(&out_, "<line x1=\"", Num(x1), "\" y1=\"", Num(y1),
                    "\" x2=\"", Num(x2), "\" y2=\"", Num(y2), "\"", attrs,
                    "/>\n");
  }
  void Rect(double x, double y, double w, double h, const std::string& attrs) {
    absl::StrAppend(&out_, "<rect x=\"", Num(x), "\" y=\"", Num(y),
                    "\" width=\"", Num(w), "\" height=\"", Num(h), "\"", attrs,
                    "/>\n");
  }

  void Header(double plot_top, const std::string& heading,
              const std::string& note);
  // A legend swatch and its label at x on the legend line; returns the x
  // after it.
  double Swatch(double x, double y, const std::string& color,
                const std::string& label, bool outline = false);
  void Frame(const SvgRect& p);
  void TimeAxis(const SvgRect& p);
  void AddressAxis(const SvgRect& p);
  void GapMarks(const SvgRect& p);
  template <typename ClassFn>
  void CellRuns(const SvgRect& p, const std::vector<std::string>& colors,
                ClassFn cls, double stroke_width = 1, double y_offset = 0);
  void Heatmap();
  void Tiers();
  void Chart();
  void Empty(const SvgRect& p, const std::string& what);

  const SvgReport& r_;
  const Geometry& g_;
  const Display& heat_;
  const Display& tiers_;
  const Display* d_;  // the display grid of the panel being drawn
  const int n_;
  double t0_ = 0, t1_ = 1;
  std::string out_;
};

void Writer::Header(double plot_top, const std::string& heading,
                    const std::string& note) {
  double y = plot_top - kHeaderBlock + 16;
  Text(kPlotX - 130, y, heading,
       absl::StrCat(" font-size=\"15\" font-weight=\"bold\" fill=\"", kInk,
                    "\""));
  if (!note.empty()) {
    Text(kPlotX + kPlotWidth, y, CleanText(note),
         absl::StrCat(" font-size=\"12\" text-anchor=\"end\" fill=\"", kMuted,
                      "\""));
  }
}

double Writer::Swatch(double x, double y, const std::string& color,
                      const std::string& label, bool outline) {
  Rect(x, y - 10, 14, 12,
       absl::StrCat(" fill=\"", color, "\"",
                    outline ? " stroke=\"#999999\"" : ""));
  Text(x + 18, y, label, absl::StrCat(" font-size=\"12\" fill=\"", kInk, "\""));
  return x + 18 + TextWidth(label, 12) + 12;
}

void Writer::Frame(const SvgRect& p) {
  Rect(p.x, p.y, p.width, p.height,
       absl::StrCat(" fill=\"none\" stroke=\"", kFrame,
                    "\" stroke-width=\"1\""));
}

// Nice tick step: 1, 2 or 5 times a power of ten, at least `raw`.
double NiceStep(double raw) {
  if (!(raw > 0)) return 1;
  double p = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= raw * (1 - 1e-9)) return m * p;
  }
  return 10 * p;
}

void Writer::TimeAxis(const SvgRect& p) {
  const double bottom = p.y + p.height;
  if (n_ > 0) {
    double step = NiceStep((t1_ - t0_) / 10);
    int decimals =
        std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
    double first = std::ceil(t0_ / step - 1e-9);
    std::string ticks;
    for (double k = first;; k += 1) {
      double t = k * step;
      if (t > t1_ + step * 1e-9) break;
      double x = X(t);
      absl::StrAppend(&ticks, "M", Num(x), " ", Num(bottom), "v5");
      Text(x, bottom + 18, Fixed(t, decimals),
           absl::StrCat(" font-size=\"12\" text-anchor=\"middle\" fill=\"",
                        kInk, "\""));
      if (k - first > 1000) break;  // unreachable with NiceStep; a guard
    }
    absl::StrAppend(&out_, "<path d=\"", ticks, "\" stroke=\"", kFrame,
                    "\"/>\n");
  }
  Text(p.x + p.width / 2, bottom + 36, "time (s)",
       absl::StrCat(" font-size=\"13\" text-anchor=\"middle\" fill=\"", kInk,
                    "\""));
}

void Writer::AddressAxis(const SvgRect& p) {
  const int m = d_->rows;
  const double rh = g_.row_height;
  // Label range starts first (a gap before, or the first row), then, where
  // there is room, row boundaries inside long ranges, then the end.
  std::vector<std::pair<double, uint64_t>> labels;  // y, address
  auto fits = [&](double y, double spacing) {
    for (const auto& [ly, a] : labels) {
      if (std::abs(ly - y) < spacing) return false;
    }
    return true;
  };
  for (int i = 0; i < m; ++i) {
    bool starts_range = i == 0 || r_.rows[i].start != r_.rows[i - 1].end;
    double y = p.y + i * rh;
    if (starts_range && fits(y, 13)) labels.push_back({y, r_.rows[i].start});
  }
  for (int i = 1; i < m; ++i) {
    double y = p.y + i * rh;
    if (fits(y, 40)) labels.push_back({y, r_.rows[i].start});
  }
  if (m > 0 && fits(p.y + m * rh, 13))
    labels.push_back({p.y + m * rh, r_.rows[m - 1].end});
  std::sort(labels.begin(), labels.end());
  std::string ticks;
  for (const auto& [y, addr] : labels) {
    absl::StrAppend(&ticks, "M", Num(p.x - 5), " ", Num(y), "h5");
    Text(p.x - 8, y + 4, Hex(addr),
         absl::StrCat(" font-family=\"", kMono,
                      "\" font-size=\"11\" text-anchor=\"end\" fill=\"", kInk,
                      "\""));
  }
  if (!ticks.empty())
    absl::StrAppend(&out_, "<path d=\"", ticks, "\" stroke=\"", kFrame,
                    "\"/>\n");
  double cy = p.y + p.height / 2;
  Text(16, cy, "virtual address",
       absl::StrCat(" font-size=\"13\" text-anchor=\"middle\" fill=\"", kInk,
                    "\" transform=\"rotate(-90 16 ", Num(cy), ")\""));
}

void Writer::GapMarks(const SvgRect& p) {
  std::string d;
  for (int i = 1; i < d_->rows; ++i) {
    if (r_.rows[i].start == r_.rows[i - 1].end) continue;
    double y = p.y + i * g_.row_height;
    absl::StrAppend(&d, "M", Num(p.x - 4), " ", Num(y), "H",
                    Num(p.x + p.width + 4));
  }
  if (!d.empty()) {
    // A white band under a dark dashed line: visible on any cell colour.
    absl::StrAppend(&out_, "<path d=\"", d,
                    "\" stroke=\"#ffffff\" stroke-width=\"2.5\"/>\n");
    absl::StrAppend(&out_, "<path d=\"", d,
                    "\" stroke=\"#333333\" stroke-width=\"1\" "
                    "stroke-dasharray=\"5 3\"/>\n");
  }
}

// One <path> per class: each run is a horizontal line of stroke width 1 in
// a coordinate system of x in Edges() units and y in rows, so a run is
// "M<x> <row>h<width>" ("m<dx> 0h<width>" after a run of the same class on
// the same row) and the stroke fills the row.
template <typename ClassFn>
void Writer::CellRuns(const SvgRect& p, const std::vector<std::string>& colors,
                      ClassFn cls, double stroke_width, double y_offset) {
  const ColumnEdges edges = Edges();
  std::vector<std::string> paths(colors.size());
  std::vector<std::pair<int, double>> pen(colors.size(), {-1, 0});  // row, x
  for (int row = 0; row < d_->rows; ++row) {
    int prev = 0;
    double run_x = 0;
    for (int c = 0; c <= d_->columns; ++c) {
      int k =
          c < d_->columns ? cls(static_cast<size_t>(c) * d_->rows + row) : 0;
      if (k == prev) continue;
      double x = edges.pos[c];
      if (prev != 0 && x > run_x) {
        auto& [pen_row, pen_x] = pen[prev];
        if (pen_row == row) {
          absl::StrAppend(&paths[prev], "m", Num(run_x - pen_x, 3), " 0h",
                          Num(x - run_x, 3));
        } else {
          absl::StrAppend(&paths[prev], "M", Num(run_x, 3), " ", row, "h",
                          Num(x - run_x, 3));
        }
        pen[prev] = {row, x};
      }
      run_x = x;
      prev = k;
    }
  }
  absl::StrAppend(&out_, "<g transform=\"translate(", Num(p.x), " ",
                  Num(p.y + g_.row_height * (0.5 + y_offset), 3), ") scale(",
                  Num(edges.unit_px, 4), " ", Num(g_.row_height, 4),
                  ")\" fill=\"none\" stroke-width=\"", Num(stroke_width, 2),
                  "\">\n");
  for (size_t k = 1; k < colors.size(); ++k) {
    if (paths[k].empty()) continue;
    absl::StrAppend(&out_, "<path stroke=\"", colors[k], "\" d=\"", paths[k],
                    "\"/>\n");
  }
  absl::StrAppend(&out_, "</g>\n");
}

void Writer::Empty(const SvgRect& p, const std::string& what) {
  Text(p.x + p.width / 2, p.y + p.height / 2 + 5, what,
       absl::StrCat(" font-size=\"14\" text-anchor=\"middle\" fill=\"", kMuted,
                    "\""));
}

// "1 s interval", or "4 s (4 intervals merged)" when merged for display;
// "interval" / "4 intervals" when intervals differ in length.
std::string ColumnUnit(const SvgReport& r, int group) {
  const int n = r.intervals();
  bool uniform = n > 0;
  double w = n > 0 ? r.interval_bounds_s[1] - r.interval_bounds_s[0] : 0;
  for (int i = 1; i + 1 < n; ++i) {  // the last interval may be cut short
    double wi = r.interval_bounds_s[i + 1] - r.interval_bounds_s[i];
    if (std::abs(wi - w) > 1e-6 * w) uniform = false;
  }
  if (group == 1)
    return uniform ? absl::StrCat(Short(w), " s interval") : "interval";
  return uniform ? absl::StrCat(Short(w * group), " s (", group,
                                " intervals merged)")
                 : absl::StrCat(group, " intervals");
}

std::string RowNote(const SvgReport& r) {
  if (r.rows.empty()) return "";
  uint64_t lo = std::numeric_limits<uint64_t>::max(), hi = 0;
  for (const AddressRow& a : r.rows) {
    lo = std::min(lo, a.end - a.start);
    hi = std::max(hi, a.end - a.start);
  }
  std::string size =
      lo == hi ? absl::StrCat("each row ", Bytes(lo))
               : absl::StrCat("rows of ", Bytes(lo), " to ", Bytes(hi));
  return absl::StrCat(size,
                      " of address space, low addresses at top; dashed: "
                      "untouched gap left out");
}

void Writer::Heatmap() {
  d_ = &heat_;
  const SvgRect& p = g_.layout.heatmap;
  const uint64_t max_heat = MaxHeat(*d_);
  const std::vector<uint64_t> t = HeatThresholds(max_heat);
  std::vector<std::string> colors(t.size() + 1);
  for (size_t i = 0; i < t.size(); ++i) {
    colors[i + 1] = ColorHex(HeatColor(i, t.size()));
  }
  Header(p.y, "Sampled accesses", RowNote(r_));
  double ly = p.y - 12;
  std::string unit = absl::StrCat("sampled accesses per ",
                                  ColumnUnit(r_, d_->group), " (log scale):");
  double x = kPlotX - 130;
  Text(x, ly, unit, absl::StrCat(" font-size=\"12\" fill=\"", kInk, "\""));
  x += TextWidth(unit, 12) + 10;
  for (size_t i = 0; i < t.size(); ++i) {
    x = Swatch(x, ly, colors[i + 1],
               absl::StrCat("\xe2\x89\xa5", Count(t[i])));  // U+2265
  }
  if (max_heat > 0 && x + 90 < kDocWidth) {
    Text(x, ly, absl::StrCat("(max ", max_heat, ")"),
         absl::StrCat(" font-size=\"12\" fill=\"", kMuted, "\""));
  }
  if (max_heat == 0) {
    Empty(p, n_ == 0 ? "no intervals" : "no sampled accesses");
  } else {
    CellRuns(p, colors, [&](size_t k) { return HeatLevel(t, d_->heat[k]); });
  }
  GapMarks(p);
  Frame(p);
  AddressAxis(p);
  TimeAxis(p);
}

void Writer::Tiers() {
  d_ = &tiers_;
  const SvgRect& p = g_.layout.tiers;
  std::string subject = r_.subject_policy.empty()
                            ? "the policy"
                            : CleanText(r_.subject_policy, 24);
  Header(p.y, absl::StrCat("Where ", subject, " keeps each row's pages"),
         RowNote(r_));
  double ly = p.y - 12;
  double x = kPlotX - 130;
  std::string lead =
      d_->group == 1
          ? std::string(
                "share of the row's pages on the fast tier (end of interval):")
          : absl::StrCat(
                "share of the row's pages on the fast tier, end of each ",
                ColumnUnit(r_, d_->group), ":");
  Text(x, ly, lead, absl::StrCat(" font-size=\"12\" fill=\"", kInk, "\""));
  x += TextWidth(lead, 12) + 10;
  for (int k = 1; k <= 5; ++k) x = Swatch(x, ly, kTierColors[k], kTierNames[k]);
  x = Swatch(x, ly, "#ffffff", "no pages", /*outline=*/true);
  x = Swatch(x + 8, ly, kPromotionColor, "promotions");
  Swatch(x, ly, kDemotionColor, "demotions");

  bool any = false;
  for (float f : d_->fast) any = any || f >= 0;
  for (size_t k = 0; k < d_->promotions.size(); ++k)
    any = any || MoveClass(*d_, k) != 0;
  if (!any) {
    Empty(p, n_ == 0 ? "no intervals" : "no pages placed");
  } else {
    std::vector<std::string> tier_colors(6);
    for (int k = 1; k <= 5; ++k) tier_colors[k] = kTierColors[k];
    CellRuns(p, tier_colors, [&](size_t k) { return TierClass(d_->fast[k]); });
    // Moves over residency: promotions green, demotions red, a cell with
    // both green above red.
    std::vector<std::string> move_colors = {"", kPromotionColor, kDemotionColor,
                                            ""};
    CellRuns(p, move_colors, [&](size_t k) {
      int m = MoveClass(*d_, k);
      return m == 3 ? 0 : m;
    });
    std::vector<std::string> both = {"", kPromotionColor};
    CellRuns(
        p, both, [&](size_t k) { return MoveClass(*d_, k) == 3 ? 1 : 0; }, 0.5,
        -0.25);
    both[1] = kDemotionColor;
    CellRuns(
        p, both, [&](size_t k) { return MoveClass(*d_, k) == 3 ? 1 : 0; }, 0.5,
        0.25);
  }
  GapMarks(p);
  Frame(p);
  AddressAxis(p);
  TimeAxis(p);
}

void Writer::Chart() {
  const SvgRect& p = g_.layout.chart;
  Header(p.y - (g_.legend_lines - 1) * kLegendLine,
         "Fast-tier share of sampled accesses, per policy",
         "legend: mean over intervals; higher is better");
  auto Y = [&](double share) { return p.y + (1 - share) * p.height; };
  // Grid and y axis.
  std::string grid;
  for (int pct = 0; pct <= 100; pct += 25) {
    double y = Y(pct / 100.0);
    absl::StrAppend(&grid, "M", Num(p.x), " ", Num(y), "H", Num(p.x + p.width));
    Text(p.x - 8, y + 4, absl::StrCat(pct, "%"),
         absl::StrCat(" font-size=\"12\" text-anchor=\"end\" fill=\"", kInk,
                      "\""));
  }
  absl::StrAppend(&out_, "<path d=\"", grid, "\" stroke=\"", kGrid, "\"/>\n");
  double cy = p.y + p.height / 2;
  Text(16, cy, "fast-tier share of sampled accesses (%)",
       absl::StrCat(" font-size=\"12\" text-anchor=\"middle\" fill=\"", kInk,
                    "\" transform=\"rotate(-90 16 ", Num(cy), ")\""));

  // Series: colour and stroke per series; drawn others, oracle, subject.
  struct Style {
    std::string color;
    double width;
    bool dashed;
    int order;
  };
  std::vector<Style> styles;
  int next_color = 0;
  for (const PolicySeries& s : r_.series) {
    if (s.is_oracle) {
      styles.push_back({kOracleColor, 1.75, true, 1});
    } else if (!r_.subject_policy.empty() && s.name == r_.subject_policy) {
      styles.push_back({kSubjectColor, 2.5, false, 2});
    } else {
      styles.push_back({kSeriesColors[next_color++ % 8], 1.75, false, 0});
    }
  }
  // Legend.
  std::vector<LegendItem> legend = ChartLegend(r_);
  for (size_t i = 0; i < legend.size(); ++i) {
    const LegendItem& item = legend[i];
    double ly = p.y - 12 - (g_.legend_lines - 1 - item.line) * kLegendLine;
    Line(item.x, ly - 4, item.x + 24, ly - 4,
         absl::StrCat(" stroke=\"", styles[i].color, "\" stroke-width=\"",
                      Num(styles[i].width, 2), "\"",
                      styles[i].dashed ? " stroke-dasharray=\"6 4\"" : ""));
    Text(item.x + 29, ly, item.label,
         absl::StrCat(" font-size=\"12\" fill=\"", kInk, "\""));
  }
  if (n_ == 0 || r_.series.empty()) {
    Empty(p, n_ == 0 ? "no intervals" : "no policies");
  } else {
    // One point per display column of at most one pixel; a point is the
    // mean of the column's defined values at the column's middle time.
    const int group =
        std::max(1, (n_ + kMaxDisplayColumns - 1) / kMaxDisplayColumns);
    std::vector<size_t> order(r_.series.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return styles[a].order < styles[b].order;
    });
    for (size_t si : order) {
      const PolicySeries& s = r_.series[si];
      std::string d, dots;
      bool pen_down = false;
      std::vector<std::pair<double, double>> points;  // NaN y breaks the line
      for (int c = 0; c * group < n_; ++c) {
        int a = c * group, b = std::min(n_, a + group);
        double sum = 0;
        int defined = 0;
        for (int i = a; i < b; ++i) {
          if (s.fast_share[i] >= 0) {
            sum += s.fast_share[i];
            ++defined;
          }
        }
        double xm = X((r_.interval_bounds_s[a] + r_.interval_bounds_s[b]) / 2);
        points.push_back({xm, defined ? Y(sum / defined) : std::nan("")});
      }
      for (size_t i = 0; i < points.size(); ++i) {
        auto [px, py] = points[i];
        if (std::isnan(py)) {
          pen_down = false;
          continue;
        }
        bool isolated =
            (i == 0 || std::isnan(points[i - 1].second)) &&
            (i + 1 == points.size() || std::isnan(points[i + 1].second));
        absl::StrAppend(&d, pen_down ? " " : "M", Num(px), " ", Num(py));
        pen_down = true;
        if (isolated || points.size() <= 40) {
          absl::StrAppend(&dots, "<circle cx=\"", Num(px), "\" cy=\"", Num(py),
                          "\" r=\"2.5\"/>");
        }
      }
      absl::StrAppend(&out_, "<path d=\"", d, "\" fill=\"none\" stroke=\"",
                      styles[si].color, "\" stroke-width=\"",
                      Num(styles[si].width, 2), "\" stroke-linejoin=\"round\"",
                      styles[si].dashed ? " stroke-dasharray=\"6 4\"" : "",
                      "/>\n");
      if (!dots.empty()) {
        absl::StrAppend(&out_, "<g fill=\"", styles[si].color, "\">", dots,
                        "</g>\n");
      }
    }
  }
  Rect(p.x, p.y, p.width, p.height,
       absl::StrCat(" fill=\"none\" stroke=\"", kFrame,
                    "\" stroke-width=\"1\""));
  TimeAxis(p);
}

std::string Writer::Render() {
  const SvgLayout& l = g_.layout;
  std::string title = CleanText(
      r_.title.empty() ? std::string("hotpage simulate") : r_.title, 90);
  absl::StrAppend(&out_, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"",
                  Num(l.width), "\" height=\"", Num(l.height),
                  "\" viewBox=\"0 0 ", Num(l.width), " ", Num(l.height),
                  "\" font-family=\"", kFont, "\">\n");
  absl::StrAppend(&out_, "<title>", Escape(title), "</title>\n");
  Rect(0, 0, l.width, l.height, " fill=\"#ffffff\"");
  Text(kPlotX - 130, 30, title,
       absl::StrCat(" font-size=\"20\" font-weight=\"bold\" fill=\"", kInk,
                    "\""));
  if (!r_.subtitle.empty()) {
    Text(kPlotX - 130, 52, CleanText(r_.subtitle, 150),
         absl::StrCat(" font-size=\"13\" fill=\"", kMuted, "\""));
  }
  Heatmap();
  Tiers();
  Chart();
  out_ += "</svg>\n";
  return std::move(out_);
}

}  // namespace

std::string EscapeXmlText(const std::string& s) { return Escape(CleanText(s)); }

absl::Status ValidateSvgReport(const SvgReport& r) {
  const int n = r.intervals();
  const int m = static_cast<int>(r.rows.size());
  if (r.interval_bounds_s.size() == 1) {
    return absl::InvalidArgumentError(
        "interval_bounds_s: one bound makes no interval; need 0 or 2+");
  }
  if (n > kMaxSvgIntervals) {
    return absl::InvalidArgumentError(absl::StrCat(
        "intervals: ", n, " > ", kMaxSvgIntervals, "; merge intervals first"));
  }
  for (size_t i = 0; i < r.interval_bounds_s.size(); ++i) {
    double b = r.interval_bounds_s[i];
    if (!std::isfinite(b)) {
      return absl::InvalidArgumentError(
          absl::StrCat("interval_bounds_s[", i, "] is not finite"));
    }
    if (i > 0 && !(b > r.interval_bounds_s[i - 1])) {
      return absl::InvalidArgumentError(
          absl::StrCat("interval_bounds_s[", i, "] = ", Short(b),
                       " is not after the previous bound ",
                       Short(r.interval_bounds_s[i - 1]),
                       "; bounds must increase strictly"));
    }
  }
  if (m > kMaxSvgRows) {
    return absl::InvalidArgumentError(
        absl::StrCat("rows: ", m, " > ", kMaxSvgRows,
                     "; bucket pages into fewer rows (SvgReportBuilder)"));
  }
  for (int i = 0; i < m; ++i) {
    if (!(r.rows[i].end > r.rows[i].start)) {
      return absl::InvalidArgumentError(
          absl::StrCat("rows[", i, "]: end ", Hex(r.rows[i].end),
                       " is not above start ", Hex(r.rows[i].start)));
    }
    if (i > 0 && r.rows[i].start < r.rows[i - 1].end) {
      return absl::InvalidArgumentError(absl::StrCat(
          "rows[", i, "] starts at ", Hex(r.rows[i].start),
          ", inside or before rows[", i - 1, "] (ends ", Hex(r.rows[i - 1].end),
          "); rows must be sorted and disjoint"));
    }
  }
  auto check_dims = [&](const char* name, int rows, int intervals,
                        size_t values) {
    if (rows != m || intervals != n || values != static_cast<size_t>(n) * m) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": ", intervals, " x ", rows, " with ", values,
                       " values; want ", n, " x ", m, " (intervals x rows)"));
    }
    return absl::OkStatus();
  };
  HOTPAGE_RETURN_IF_ERROR(
      check_dims("heat", r.heat.rows, r.heat.intervals, r.heat.values.size()));
  HOTPAGE_RETURN_IF_ERROR(
      check_dims("fast", r.fast.rows, r.fast.intervals, r.fast.values.size()));
  HOTPAGE_RETURN_IF_ERROR(check_dims("promotions", r.promotions.rows,
                                     r.promotions.intervals,
                                     r.promotions.values.size()));
  HOTPAGE_RETURN_IF_ERROR(check_dims("demotions", r.demotions.rows,
                                     r.demotions.intervals,
                                     r.demotions.values.size()));
  for (size_t k = 0; k < r.fast.values.size(); ++k) {
    float f = r.fast.values[k];
    if (!std::isnan(f) && !(f >= 0 && f <= 1)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "fast[interval ", k / std::max(m, 1), ", row ", k % std::max(m, 1),
          "] = ", Short(f), "; want a share in [0, 1] or NaN"));
    }
  }
  if (r.series.size() > kMaxSvgSeries) {
    return absl::InvalidArgumentError(absl::StrCat(
        "series: ", r.series.size(), " > ", kMaxSvgSeries, " policies"));
  }
  for (const PolicySeries& s : r.series) {
    std::string name = EscapeXmlText(s.name);
    if (s.fast_share.size() != static_cast<size_t>(n)) {
      return absl::InvalidArgumentError(
          absl::StrCat("series '", name, "': ", s.fast_share.size(),
                       " values for ", n, " intervals"));
    }
    for (size_t i = 0; i < s.fast_share.size(); ++i) {
      double v = s.fast_share[i];
      if (!std::isnan(v) && !(v >= 0 && v <= 1)) {
        return absl::InvalidArgumentError(
            absl::StrCat("series '", name, "' interval ", i, ": ", Short(v),
                         "; want a share in [0, 1] or NaN"));
      }
    }
  }
  return absl::OkStatus();
}

SvgLayout ComputeSvgLayout(const SvgReport& report) {
  return MakeGeometry(report).layout;
}

absl::StatusOr<std::string> RenderSvg(const SvgReport& report) {
  HOTPAGE_RETURN_IF_ERROR(ValidateSvgReport(report));
  // Noise-like data: merge intervals for display until the runs fit.
  Display heat = FitDisplay(report, kMaxSvgHeatRuns, HeatRuns);
  Display tiers = FitDisplay(report, kMaxSvgTierRuns, TierRuns);
  Geometry g = MakeGeometry(report);
  return Writer(report, g, heat, tiers).Render();
}

absl::Status WriteSvgFile(const SvgReport& report, const std::string& path) {
  HOTPAGE_ASSIGN_OR_RETURN(std::string svg, RenderSvg(report));
  return WriteFileAtomically(path, svg);
}

}  // namespace hotpage::simulate
