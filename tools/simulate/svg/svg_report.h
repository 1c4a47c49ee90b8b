// The simulator's picture: `hotpage simulate TRACE --svg FILE.svg`.
//
// SvgReport is a plain data model of one replay, filled by the simulator
// (usually through SvgReportBuilder in svg_report_builder.h, which buckets a
// stream of accesses and tier changes with bounded memory), and RenderSvg
// turns it into one self-contained SVG file (no scripts, fonts or images to
// fetch) that a browser opens directly. The picture has three panels that
// share the time axis (x, seconds):
//
//   1. Heatmap: sampled accesses per (interval, address row), log colour
//      scale with a legend; rows cover only the touched address space, with
//      hex addresses at range starts and a mark at every collapsed gap.
//   2. Tiers: for the subject policy (normally hotpage), the share of each
//      row's pages on the fast tier at the end of each interval (grey slow,
//      blue fast), with cells that saw promotions green and demotions red
//      (both: green above red).
//   3. Line chart: per policy, the fast-tier share of sampled accesses per
//      interval (%), oracle dashed, the mean of each policy in the legend.
//
// Output is deterministic: the same report gives byte-identical SVG (fixed
// number formatting by std::to_chars, independent of the C locale). Its size
// is bounded: cells of equal colour are merged into runs, and if a panel
// would still need more than kMaxSvgHeatRuns / kMaxSvgTierRuns runs
// (noise-like data), adjacent intervals are merged for display in that panel
// (its legend then says so). Measured for 600 intervals x 256 rows: 38 KB
// smooth, 260 KB with sampling noise, 370 KB for random cells.

#ifndef HOTPAGE_TOOLS_SIMULATE_SVG_SVG_REPORT_H_
#define HOTPAGE_TOOLS_SIMULATE_SVG_SVG_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace hotpage::simulate {

// One row of the address axis: the pages in [start, end). Rows are sorted
// by address and disjoint; a row normally holds a bucket of many pages.
// When rows[i].start > rows[i - 1].end the address space between them was
// never touched and is left out; the picture marks such gaps.
struct AddressRow {
  uint64_t start = 0;
  uint64_t end = 0;  // exclusive; > start
};

// A per-(interval, row) matrix: at(i, r) is interval i, address row r.
// Stored interval-major, intervals * rows values.
template <typename T>
struct IntervalRowMatrix {
  int intervals = 0;
  int rows = 0;
  std::vector<T> values;

  void Reset(int n_intervals, int n_rows, T fill) {
    intervals = n_intervals;
    rows = n_rows;
    values.assign(static_cast<size_t>(n_intervals) * n_rows, fill);
  }
  T& at(int interval, int row) {
    return values[static_cast<size_t>(interval) * rows + row];
  }
  const T& at(int interval, int row) const {
    return values[static_cast<size_t>(interval) * rows + row];
  }
};

// One policy's line in the chart. The series named like
// SvgReport::subject_policy is drawn thick and blue, on top.
struct PolicySeries {
  std::string name;  // "hotpage", "first-touch", "tpp", ...
  // Drawn dashed in grey as the reference (the oracle's upper bound).
  bool is_oracle = false;
  // Per interval (N values): the share (0..1) of the interval's sampled
  // accesses that hit a page on the fast tier. NaN: no samples that interval.
  std::vector<double> fast_share;
};

// Everything the picture shows. N = interval_bounds_s.size() - 1 intervals,
// M = rows.size() rows; every matrix is N x M and every series has N values.
// ValidateSvgReport states the rules; RenderSvg checks them first.
struct SvgReport {
  // Any bytes (escaped, invalid UTF-8 replaced). title: e.g. "redis.hpt";
  // subtitle: e.g. "fast tier = 25% of touched pages, 1 s intervals";
  // subject_policy: whose tiers panel 2 shows, e.g. "hotpage".
  std::string title;
  std::string subtitle;
  std::string subject_policy;

  // Interval boundaries in seconds, strictly increasing: interval i is
  // [interval_bounds_s[i], interval_bounds_s[i + 1]). Empty: no intervals.
  std::vector<double> interval_bounds_s;
  std::vector<AddressRow> rows;

  // Sampled accesses per interval and row.
  IntervalRowMatrix<uint64_t> heat;
  // Share (0..1) of the row's pages that are on the fast tier at the end of
  // the interval, under subject_policy. NaN: the row has no pages yet.
  IntervalRowMatrix<float> fast;
  // Pages of the row moved to the fast tier / to the slow tier during the
  // interval, under subject_policy.
  IntervalRowMatrix<uint32_t> promotions;
  IntervalRowMatrix<uint32_t> demotions;

  std::vector<PolicySeries> series;

  int intervals() const {
    return interval_bounds_s.empty()
               ? 0
               : static_cast<int>(interval_bounds_s.size()) - 1;
  }
};

// Limits RenderSvg accepts. The builder stays far below them.
inline constexpr int kMaxSvgRows = 1024;
inline constexpr int kMaxSvgIntervals = 100000;
inline constexpr int kMaxSvgSeries = 16;
// Above this many cell runs in the heatmap (tiers panel: residency runs
// plus move runs), adjacent intervals of that panel are merged for display,
// so the file stays a few hundred KB.
inline constexpr int kMaxSvgHeatRuns = 50000;
inline constexpr int kMaxSvgTierRuns = 15000;

// OK, or InvalidArgument naming the first broken rule: bounds finite and
// strictly increasing; rows non-empty ranges, sorted, disjoint; matrices N
// x M; fast in [0, 1] or NaN; series N values in [0, 1] or NaN; at most
// kMaxSvgRows rows, kMaxSvgIntervals intervals, kMaxSvgSeries series.
absl::Status ValidateSvgReport(const SvgReport& report);

// The SVG document (UTF-8, starts with "<svg"), or ValidateSvgReport's error.
absl::StatusOr<std::string> RenderSvg(const SvgReport& report);

// RenderSvg, written to `path` atomically (tools/base/atomic_file.h).
absl::Status WriteSvgFile(const SvgReport& report, const std::string& path);

// Where RenderSvg puts the panels, in SVG pixels (the document's width and
// height are its viewport). For tests that look at a rendered PNG.
struct SvgRect {
  double x = 0, y = 0, width = 0, height = 0;
};
struct SvgLayout {
  double width = 0, height = 0;  // the whole document
  SvgRect heatmap;               // panel 1 plot area
  SvgRect tiers;                 // panel 2 plot area
  SvgRect chart;                 // panel 3 plot area
};
SvgLayout ComputeSvgLayout(const SvgReport& report);

// XML text escaping for SVG text and attribute values: & < > " ' become
// entities; invalid UTF-8, control characters XML 1.0 forbids and
// U+FFFE/U+FFFF become U+FFFD, so the document always parses.
std::string EscapeXmlText(const std::string& s);

}  // namespace hotpage::simulate

#endif  // HOTPAGE_TOOLS_SIMULATE_SVG_SVG_REPORT_H_
