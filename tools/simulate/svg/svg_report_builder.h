// SvgReportBuilder: fills an SvgReport (svg_report.h) from the simulator's
// event stream, with bounded memory, so a replay never holds the trace.
//
// Time: intervals of options.interval_s from options.start_s. When an event
// falls beyond options.max_intervals intervals, the interval length doubles
// and neighbouring intervals merge (sums add; end-of-interval residency
// takes the later one), as often as needed. Every interval of the finished
// report has the same length, except that Finish(end_s) may shorten the last.
//
// Address: rows are aligned power-of-two blocks of address space ("chunks"),
// at first one page each. Only touched chunks exist, so the gaps between
// mappings cost nothing and become the picture's gap marks. When more than
// 2 * options.max_rows chunks exist, the chunk size doubles (buddies merge);
// Finish merges further until at most max_rows remain. Every row of the
// report has the same size, and an address A lands in the row with
// row.start <= A < row.end.
//
// Memory: at most 2 * max_rows chunks of max_intervals cells of 24 bytes
// (7.4 MB at the defaults) plus 16 bytes per policy and interval. An event
// costs a map lookup (a cache hits runs in one chunk); memory only grows
// when a chunk or interval is first touched.
//
// Events may come in any time order except that the residency snapshot
// (SvgReport::fast) of an interval counts every AddPage/MovePage at or
// before that interval, whenever it was reported. Not thread-safe: one
// simulator thread feeds it.

#ifndef HOTPAGE_TOOLS_SIMULATE_SVG_SVG_REPORT_BUILDER_H_
#define HOTPAGE_TOOLS_SIMULATE_SVG_SVG_REPORT_BUILDER_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tools/simulate/svg/svg_report.h"

namespace hotpage::simulate {

enum class Tier { kFast, kSlow };

struct SvgReportBuilderOptions {
  double start_s = 0;  // start of the first interval; earlier events land in it
  double interval_s = 1.0;  // initial interval length (> 0)
  int max_intervals = 600;  // 1..kMaxSvgIntervals
  int max_rows = 256;       // 1..kMaxSvgRows
  int page_shift = 12;      // smallest row: one 2^page_shift-byte page
};

class SvgReportBuilder {
 public:
  // Invalid options are clamped to the nearest valid value.
  explicit SvgReportBuilder(SvgReportBuilderOptions options = {});

  // `count` sampled accesses at `address` (any byte of the page) at time_s.
  // NaN times are dropped (dropped_events()).
  void AddAccess(double time_s, uint64_t address, uint64_t count = 1);

  // Subject policy's tiers. AddPage: a page first appears (is placed) on
  // `tier`. MovePage: a page that AddPage reported moves to `to` (to kFast:
  // a promotion; to kSlow: a demotion). RemovePage: a page is gone (unmapped)
  // from `tier`. The builder keeps no per-page state: it trusts these.
  void AddPage(double time_s, uint64_t page_address, Tier tier);
  void MovePage(double time_s, uint64_t page_address, Tier to);
  void RemovePage(double time_s, uint64_t page_address, Tier tier);

  // Registers a chart line and returns its id for AddPolicyAccess.
  int AddPolicy(std::string name, bool is_oracle = false);
  // `count` sampled accesses under policy `id`, on the fast tier or not.
  void AddPolicyAccess(int id, double time_s, bool on_fast, uint64_t count = 1);

  // The report. end_s, if given, is the end of the replayed time (the last
  // interval ends there, or the axis is extended to it). The builder is
  // left empty.
  SvgReport Finish(std::string title, std::string subtitle,
                   std::string subject_policy,
                   std::optional<double> end_s = std::nullopt);

  // Current state, for tests and the simulator's log.
  double interval_s() const { return interval_s_; }
  int row_shift() const { return shift_; }  // rows are 2^row_shift bytes
  size_t chunks() const { return chunks_.size(); }
  uint64_t dropped_events() const { return dropped_; }
  // Bytes held by cells (chunks and policy series): what the bounds limit.
  size_t cell_bytes() const;

 private:
  struct Cell {
    uint64_t heat = 0;
    uint32_t promotions = 0;
    uint32_t demotions = 0;
    // End-of-interval snapshot; saturating at 2^32 - 1.
    uint32_t fast_pages = 0;
    uint32_t pages = 0;
  };
  struct Chunk {
    // cells[i] for i < size(); later intervals repeat the last snapshot
    // with no heat or moves.
    std::vector<Cell> cells;
  };
  struct PolicyCounts {
    std::string name;
    bool is_oracle = false;
    std::vector<uint64_t> fast;   // per interval
    std::vector<uint64_t> total;  // per interval
  };

  // Interval index of time_s, merging intervals first if needed; -1: drop.
  int IntervalOf(double time_s);
  void MergeIntervals();  // interval_s_ doubles
  void MergeChunks();     // shift_ grows by one
  // The cell of (interval, address), extending the chunk's cells to it.
  Cell& CellAt(int interval, uint64_t address);
  // Adds (d_fast, d_pages) to the snapshot of every interval >= interval.
  void AdjustResidency(int interval, uint64_t address, int d_fast, int d_pages);
  static void Extend(Chunk& c, size_t n);

  SvgReportBuilderOptions options_;
  double interval_s_;
  int shift_;
  int intervals_ = 0;  // intervals touched so far (max index + 1)
  std::map<uint64_t, Chunk>
      chunks_;  // chunk index (address >> shift_) -> cells
  std::vector<PolicyCounts> policies_;
  uint64_t dropped_ = 0;
};

}  // namespace hotpage::simulate

#endif  // HOTPAGE_TOOLS_SIMULATE_SVG_SVG_REPORT_BUILDER_H_
