// The policy's view of the hotness table: HotnessScanner walks the table
// incrementally (a budget of slots per Step(), so a pass over a large table
// is spread over many calls) and publishes, per completed pass, a
// ScanResult: a log2 histogram of counts with a Memtis-style hot threshold
// (Log2Histogram), the K hottest pages not on the fast tier and the K
// coldest on it, each with a rate interval (PageEstimate, rate_stats.h).
// ShouldPromote compares two such intervals.
//
// Sits on top of hotness_table.h (it reads slots with ReadSlot) and
// rate_stats.h (it scales counts with the table's RateWindow).
//
// Threading: a scanner belongs to the thread that drives it; any number of
// scanners may run alongside the table's writers.

#ifndef HOTPAGE_HOTNESS_SCANNER_H_
#define HOTPAGE_HOTNESS_SCANNER_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/types/span.h"
#include "hotness/access_sample.h"
#include "hotness/hotness_table.h"
#include "hotness/rate_stats.h"

namespace hotpage {

// Entry hotness in log2 bins, weighted by 4 KiB pages (a 2 MiB entry adds
// 512): bin 0 holds count 0, bin b >= 1 holds counts in [2^(b-1), 2^b).
class Log2Histogram {
 public:
  static constexpr int kBins = internal::kCountBits + 1;

  static int BinOf(uint32_t count) {
    return count == 0 ? 0 : std::bit_width(count);
  }
  static uint32_t BinFloor(int bin) {
    return bin == 0 ? 0 : uint32_t{1} << (bin - 1);
  }

  void Add(uint32_t count, uint64_t base_pages) {
    pages_[BinOf(count)] += base_pages;
  }
  uint64_t pages(int bin) const { return pages_[bin]; }
  uint64_t total_pages() const;

  // Memtis-style hot threshold: the smallest bin floor T such that all
  // pages with count >= T fit in `fast_capacity_4k` 4 KiB pages (so that
  // "count >= T" selects the hottest pages that fit). If even the hottest
  // non-empty bin does not fit, T is the floor of the bin above it: no
  // page qualifies. If every sampled page fits, T is 1.
  uint32_t ThresholdForCapacity(uint64_t fast_capacity_4k) const;

 private:
  uint64_t pages_[kBins] = {};
};

// Where the caller says a page lives now; the table does not know placement.
enum class Tier : uint8_t {
  kUnknown = 0,  // not resident / not known: ignored by the scan's lists
  kFast = 1,
  kSlow = 2,
};

struct PageEstimate {
  EntryView entry;
  RateEstimate rate;
  // Where the pass found the entry: its slot (Step()) or its index in the
  // entries Pass() was given.
  size_t index = 0;
};

// Promote `candidate` in place of `victim` only if the candidate's lower
// bound beats the victim's upper bound (see rate_stats.h).
inline bool ShouldPromote(const PageEstimate& candidate,
                          const PageEstimate& victim) {
  return candidate.rate.lo_per_sec > victim.rate.hi_per_sec;
}

struct ScanOptions {
  size_t top_k = 256;  // length of each list
  double z = 1.96;     // normal quantile of the rate intervals
  // Also list the K hottest entries on the fast tier (ScanResult::
  // hottest_on_fast; the locality rule's input). Off: that list is empty
  // and costs nothing.
  bool hottest_on_fast = false;
};

struct ScanResult {
  uint64_t pass = 0;          // completed passes so far (1 for the first)
  uint64_t live_entries = 0;  // entries seen in the pass
  uint32_t epoch = 0;
  RateWindow window;
  Log2Histogram histogram;
  // The K hottest entries on the slow tier, hottest first, and the K
  // coldest tracked entries on the fast tier, coldest first. Fast-tier
  // pages that were never sampled are colder still; the table cannot list
  // them (the policy knows its fast-tier pages).
  std::vector<PageEstimate> hottest_not_fast;
  std::vector<PageEstimate> coldest_on_fast;
  // The K hottest entries on the fast tier, hottest first (only with
  // ScanOptions::hottest_on_fast).
  std::vector<PageEstimate> hottest_on_fast;

  uint32_t HotThreshold(uint64_t fast_capacity_4k) const {
    return histogram.ThresholdForCapacity(fast_capacity_4k);
  }
};

// Incremental reader for the policy. Thread-compatible: one thread drives
// a scanner; writers keep ingesting meanwhile. An entry that moves during a
// pass may be seen twice or not at all in that pass (the lists are
// estimates; the next pass corrects them).
class HotnessScanner {
 public:
  using TierOf = absl::FunctionRef<Tier(const PageKey&)>;

  explicit HotnessScanner(HotnessTable* table, ScanOptions options = {});

  // Visits the next `entry_budget` slots (fewer at the end of a pass),
  // asking `tier_of` where each live entry lives. Returns true if this call
  // completed a pass; last_result() then holds it.
  bool Step(size_t entry_budget, TierOf tier_of);

  // One whole pass over `entries` instead of the table's slots: the live
  // entries the caller read with ReadSlot(i, &e, /*normalize=*/true) for
  // every slot i in ascending order, `tiers[i]` saying where entries[i]
  // lives (same size). Publishes it as a completed pass; the lists and the
  // histogram are those a pass of Step() over the same entries publishes.
  // For a caller that reads every slot anyway (the policy round: it needs
  // the keys before it can say where they live), so the table is read once
  // and nothing is called per entry. Requires no pass in progress
  // (cursor() == 0).
  void Pass(absl::Span<const EntryView> entries, absl::Span<const Tier> tiers);

  const ScanResult& last_result() const { return result_; }
  size_t cursor() const { return cursor_; }

 private:
  // Counts `e` into the pass in progress, on `tier`.
  void Visit(const EntryView& e, size_t index, Tier tier);
  void Publish();

  HotnessTable* const table_;
  const ScanOptions options_;
  size_t cursor_ = 0;
  uint64_t live_ = 0;
  Log2Histogram histogram_;
  struct Listed {
    EntryView entry;
    size_t index;  // PageEstimate::index
  };
  std::vector<Listed> hot_heap_;       // min-heap on count: the K hottest
  std::vector<Listed> cold_heap_;      // max-heap on coldness: the K coldest
  std::vector<Listed> fast_hot_heap_;  // the K hottest on the fast tier
  ScanResult result_;
};

}  // namespace hotpage

#endif  // HOTPAGE_HOTNESS_SCANNER_H_
