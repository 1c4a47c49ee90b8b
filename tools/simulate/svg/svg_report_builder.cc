#include "tools/simulate/svg/svg_report_builder.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace hotpage::simulate {
namespace {

constexpr uint32_t kMax32 = std::numeric_limits<uint32_t>::max();

uint32_t SatAdd32(uint32_t a, uint64_t b) {
  uint64_t s = uint64_t{a} + b;
  return s > kMax32 ? kMax32 : static_cast<uint32_t>(s);
}

// a + d clamped to [0, 2^32 - 1]: a misreported RemovePage cannot wrap.
uint32_t SatAdjust32(uint32_t a, int d) {
  int64_t s = int64_t{a} + d;
  if (s < 0) return 0;
  return s > kMax32 ? kMax32 : static_cast<uint32_t>(s);
}

uint64_t SatAdd64(uint64_t a, uint64_t b) {
  return a > std::numeric_limits<uint64_t>::max() - b
             ? std::numeric_limits<uint64_t>::max()
             : a + b;
}

}  // namespace

SvgReportBuilder::SvgReportBuilder(SvgReportBuilderOptions options)
    : options_(options) {
  if (!std::isfinite(options_.start_s)) options_.start_s = 0;
  if (!(options_.interval_s > 0) || !std::isfinite(options_.interval_s))
    options_.interval_s = 1.0;
  options_.max_intervals =
      std::clamp(options_.max_intervals, 1, kMaxSvgIntervals);
  // Two rows at least: at the largest chunk size (2^63 bytes) two chunks
  // cover every address, so merging always ends.
  options_.max_rows = std::clamp(options_.max_rows, 2, kMaxSvgRows);
  options_.page_shift = std::clamp(options_.page_shift, 0, 63);
  interval_s_ = options_.interval_s;
  shift_ = options_.page_shift;
}

int SvgReportBuilder::IntervalOf(double time_s) {
  if (!std::isfinite(time_s)) {
    ++dropped_;
    return -1;
  }
  if (time_s <= options_.start_s) {
    intervals_ = std::max(intervals_, 1);
    return 0;
  }
  double idx = std::floor((time_s - options_.start_s) / interval_s_);
  while (idx >= options_.max_intervals) {
    MergeIntervals();
    idx = std::floor((time_s - options_.start_s) / interval_s_);
  }
  int i = static_cast<int>(idx);
  intervals_ = std::max(intervals_, i + 1);
  return i;
}

void SvgReportBuilder::MergeIntervals() {
  interval_s_ *= 2;
  intervals_ = (intervals_ + 1) / 2;
  for (auto& [key, chunk] : chunks_) {
    std::vector<Cell>& old = chunk.cells;
    std::vector<Cell> merged((old.size() + 1) / 2);
    for (size_t i = 0; i < merged.size(); ++i) {
      const Cell& a = old[2 * i];
      Cell m = a;
      if (2 * i + 1 < old.size()) {
        const Cell& b = old[2 * i + 1];
        m.heat = SatAdd64(a.heat, b.heat);
        m.promotions = SatAdd32(a.promotions, b.promotions);
        m.demotions = SatAdd32(a.demotions, b.demotions);
        // The merged interval ends where the later one ended.
        m.fast_pages = b.fast_pages;
        m.pages = b.pages;
      }
      merged[i] = m;
    }
    old = std::move(merged);
  }
  for (PolicyCounts& p : policies_) {
    for (std::vector<uint64_t>* v : {&p.fast, &p.total}) {
      std::vector<uint64_t> merged((v->size() + 1) / 2, 0);
      for (size_t i = 0; i < v->size(); ++i)
        merged[i / 2] = SatAdd64(merged[i / 2], (*v)[i]);
      *v = std::move(merged);
    }
  }
}

void SvgReportBuilder::Extend(Chunk& c, size_t n) {
  if (c.cells.size() >= n) return;
  Cell last;
  if (!c.cells.empty()) {
    last.fast_pages = c.cells.back().fast_pages;
    last.pages = c.cells.back().pages;
  }
  c.cells.resize(n, last);
}

void SvgReportBuilder::MergeChunks() {
  ++shift_;
  std::map<uint64_t, Chunk> merged;
  for (auto& [key, chunk] : chunks_) {
    uint64_t k = key >> 1;
    auto it = merged.end();
    if (!merged.empty() && std::prev(merged.end())->first == k)
      it = std::prev(merged.end());
    if (it == merged.end()) {
      merged.emplace_hint(merged.end(), k, std::move(chunk));
      continue;
    }
    Chunk& into = it->second;
    size_t n = std::max(into.cells.size(), chunk.cells.size());
    Extend(into, n);
    Extend(chunk, n);
    for (size_t i = 0; i < n; ++i) {
      Cell& a = into.cells[i];
      const Cell& b = chunk.cells[i];
      a.heat = SatAdd64(a.heat, b.heat);
      a.promotions = SatAdd32(a.promotions, b.promotions);
      a.demotions = SatAdd32(a.demotions, b.demotions);
      a.fast_pages = SatAdd32(a.fast_pages, b.fast_pages);
      a.pages = SatAdd32(a.pages, b.pages);
    }
  }
  chunks_ = std::move(merged);
}

SvgReportBuilder::Cell& SvgReportBuilder::CellAt(int interval,
                                                 uint64_t address) {
  auto it = chunks_.find(address >> shift_);
  if (it == chunks_.end()) {
    chunks_.emplace(address >> shift_, Chunk{});
    while (chunks_.size() > 2 * static_cast<size_t>(options_.max_rows))
      MergeChunks();
    it = chunks_.find(address >> shift_);
  }
  Chunk& c = it->second;
  if (c.cells.size() <= static_cast<size_t>(interval)) {
    // Grow geometrically, but never past max_intervals cells.
    size_t want = static_cast<size_t>(interval) + 1;
    if (want > c.cells.capacity()) {
      c.cells.reserve(std::min<size_t>(options_.max_intervals,
                                       std::max(want, 2 * c.cells.capacity())));
    }
    Extend(c, want);
  }
  return c.cells[interval];
}

void SvgReportBuilder::AddAccess(double time_s, uint64_t address,
                                 uint64_t count) {
  int i = IntervalOf(time_s);
  if (i < 0) return;
  Cell& c = CellAt(i, address);
  c.heat = SatAdd64(c.heat, count);
}

void SvgReportBuilder::AdjustResidency(int interval, uint64_t address,
                                       int d_fast, int d_pages) {
  CellAt(interval, address);
  std::vector<Cell>& cells = chunks_.find(address >> shift_)->second.cells;
  // Snapshots are cumulative: an event counts in its interval and every
  // later one already stored (later ones not stored repeat the last).
  for (size_t j = interval; j < cells.size(); ++j) {
    cells[j].fast_pages = SatAdjust32(cells[j].fast_pages, d_fast);
    cells[j].pages = SatAdjust32(cells[j].pages, d_pages);
  }
}

void SvgReportBuilder::AddPage(double time_s, uint64_t page_address,
                               Tier tier) {
  int i = IntervalOf(time_s);
  if (i < 0) return;
  AdjustResidency(i, page_address, tier == Tier::kFast ? 1 : 0, 1);
}

void SvgReportBuilder::RemovePage(double time_s, uint64_t page_address,
                                  Tier tier) {
  int i = IntervalOf(time_s);
  if (i < 0) return;
  AdjustResidency(i, page_address, tier == Tier::kFast ? -1 : 0, -1);
}

void SvgReportBuilder::MovePage(double time_s, uint64_t page_address, Tier to) {
  int i = IntervalOf(time_s);
  if (i < 0) return;
  Cell& c = CellAt(i, page_address);
  if (to == Tier::kFast) {
    c.promotions = SatAdd32(c.promotions, 1);
  } else {
    c.demotions = SatAdd32(c.demotions, 1);
  }
  AdjustResidency(i, page_address, to == Tier::kFast ? 1 : -1, 0);
}

int SvgReportBuilder::AddPolicy(std::string name, bool is_oracle) {
  policies_.push_back(PolicyCounts{std::move(name), is_oracle, {}, {}});
  return static_cast<int>(policies_.size()) - 1;
}

void SvgReportBuilder::AddPolicyAccess(int id, double time_s, bool on_fast,
                                       uint64_t count) {
  if (id < 0 || id >= static_cast<int>(policies_.size())) {
    ++dropped_;
    return;
  }
  int i = IntervalOf(time_s);
  if (i < 0) return;
  PolicyCounts& p = policies_[id];
  if (p.total.size() <= static_cast<size_t>(i)) {
    p.total.resize(i + 1, 0);
    p.fast.resize(i + 1, 0);
  }
  p.total[i] = SatAdd64(p.total[i], count);
  if (on_fast) p.fast[i] = SatAdd64(p.fast[i], count);
}

size_t SvgReportBuilder::cell_bytes() const {
  size_t bytes = 0;
  for (const auto& [key, chunk] : chunks_)
    bytes += chunk.cells.capacity() * sizeof(Cell);
  for (const PolicyCounts& p : policies_) {
    bytes += (p.fast.capacity() + p.total.capacity()) * sizeof(uint64_t);
  }
  return bytes;
}

SvgReport SvgReportBuilder::Finish(std::string title, std::string subtitle,
                                   std::string subject_policy,
                                   std::optional<double> end_s) {
  SvgReport r;
  r.title = std::move(title);
  r.subtitle = std::move(subtitle);
  r.subject_policy = std::move(subject_policy);

  bool has_end =
      end_s.has_value() && std::isfinite(*end_s) && *end_s > options_.start_s;
  if (has_end) {
    // Extend the axis to end_s: the interval holding a point just before it.
    double last = std::nextafter(*end_s, options_.start_s);
    IntervalOf(last);
  }
  while (chunks_.size() > static_cast<size_t>(options_.max_rows)) MergeChunks();

  const int n = intervals_;
  const int m = static_cast<int>(chunks_.size());
  if (n > 0) {
    r.interval_bounds_s.resize(n + 1);
    for (int i = 0; i <= n; ++i)
      r.interval_bounds_s[i] = options_.start_s + i * interval_s_;
    if (has_end && *end_s > r.interval_bounds_s[n - 1] &&
        *end_s < r.interval_bounds_s[n]) {
      r.interval_bounds_s[n] = *end_s;
    }
  }
  r.heat.Reset(n, m, 0);
  r.fast.Reset(n, m, std::numeric_limits<float>::quiet_NaN());
  r.promotions.Reset(n, m, 0);
  r.demotions.Reset(n, m, 0);
  const uint64_t row_bytes = uint64_t{1} << shift_;
  int row = 0;
  for (auto& [key, chunk] : chunks_) {
    AddressRow ar;
    ar.start = key << shift_;
    ar.end = ar.start > std::numeric_limits<uint64_t>::max() - row_bytes
                 ? std::numeric_limits<uint64_t>::max()
                 : ar.start + row_bytes;
    r.rows.push_back(ar);
    Extend(chunk, n);
    for (int i = 0; i < n; ++i) {
      const Cell& c = chunk.cells[i];
      r.heat.at(i, row) = c.heat;
      r.promotions.at(i, row) = c.promotions;
      r.demotions.at(i, row) = c.demotions;
      if (c.pages > 0) {
        r.fast.at(i, row) =
            std::min(1.0f, static_cast<float>(c.fast_pages) / c.pages);
      }
    }
    ++row;
  }
  for (PolicyCounts& p : policies_) {
    PolicySeries s;
    s.name = std::move(p.name);
    s.is_oracle = p.is_oracle;
    s.fast_share.assign(n, std::numeric_limits<double>::quiet_NaN());
    for (int i = 0; i < n && i < static_cast<int>(p.total.size()); ++i) {
      if (p.total[i] > 0)
        s.fast_share[i] = static_cast<double>(p.fast[i]) / p.total[i];
    }
    r.series.push_back(std::move(s));
  }

  chunks_.clear();
  policies_.clear();
  intervals_ = 0;
  interval_s_ = options_.interval_s;
  shift_ = options_.page_shift;
  return r;
}

}  // namespace hotpage::simulate
