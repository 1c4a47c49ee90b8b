#include "hotness/scanner.h"

#include <algorithm>
#include <cassert>
#include <vector>

namespace hotpage {

// ---------------------------------------------------------------------------
// Classification.

uint64_t Log2Histogram::total_pages() const {
  uint64_t t = 0;
  for (uint64_t p : pages_) t += p;
  return t;
}

uint32_t Log2Histogram::ThresholdForCapacity(uint64_t fast_capacity_4k) const {
  uint64_t fitted = 0;
  uint32_t threshold = uint32_t{1}
                       << internal::kCountBits;  // above every count
  for (int b = kBins - 1; b >= 1; --b) {
    if (fitted + pages_[b] > fast_capacity_4k) break;
    fitted += pages_[b];
    threshold = BinFloor(b);
  }
  return threshold;
}

namespace {

// "a is hotter than b": higher count, then seen more recently.
bool Hotter(const EntryView& a, const EntryView& b) {
  if (a.count != b.count) return a.count > b.count;
  return a.last_seen_ns > b.last_seen_ns;
}
bool Colder(const EntryView& a, const EntryView& b) { return Hotter(b, a); }

// The list orders on a listed entry (its index rides along).
template <typename T>
bool HotterFirst(const T& a, const T& b) {
  return Hotter(a.entry, b.entry);
}
template <typename T>
bool ColderFirst(const T& a, const T& b) {
  return Colder(a.entry, b.entry);
}

// Keeps the `k` best entries under `better` in a heap whose top is the
// worst of them.
template <typename T, typename Better>
void Offer(std::vector<T>& heap, size_t k, const T& e, Better better) {
  if (heap.size() < k) {
    heap.push_back(e);
    std::push_heap(heap.begin(), heap.end(), better);
  } else if (k != 0 && better(e, heap.front())) {
    std::pop_heap(heap.begin(), heap.end(), better);
    heap.back() = e;
    std::push_heap(heap.begin(), heap.end(), better);
  }
}

}  // namespace

HotnessScanner::HotnessScanner(HotnessTable* table, ScanOptions options)
    : table_(table), options_(options) {
  hot_heap_.reserve(options_.top_k);
  cold_heap_.reserve(options_.top_k);
  if (options_.hottest_on_fast) fast_hot_heap_.reserve(options_.top_k);
}

inline void HotnessScanner::Visit(const EntryView& e, size_t index, Tier tier) {
  ++live_;
  histogram_.Add(e.count, BasePages(e.key.kind));
  switch (tier) {
    case Tier::kSlow:
      if (e.count > 0) {
        Offer(hot_heap_, options_.top_k, Listed{e, index}, HotterFirst<Listed>);
      }
      break;
    case Tier::kFast:
      Offer(cold_heap_, options_.top_k, Listed{e, index}, ColderFirst<Listed>);
      if (options_.hottest_on_fast && e.count > 0) {
        Offer(fast_hot_heap_, options_.top_k, Listed{e, index},
              HotterFirst<Listed>);
      }
      break;
    case Tier::kUnknown:
      break;
  }
}

bool HotnessScanner::Step(size_t entry_budget, TierOf tier_of) {
  const size_t capacity = table_->capacity();
  const size_t end = cursor_ + std::min(entry_budget, capacity - cursor_);
  for (size_t i = cursor_; i < end; ++i) {
    EntryView e;
    if (!table_->ReadSlot(i, &e, /*normalize=*/true)) continue;
    Visit(e, i, tier_of(e.key));
  }
  cursor_ = end;
  if (cursor_ < capacity) return false;
  Publish();
  cursor_ = 0;
  return true;
}

void HotnessScanner::Pass(absl::Span<const EntryView> entries,
                          absl::Span<const Tier> tiers) {
  assert(cursor_ == 0 && entries.size() == tiers.size());
  for (size_t i = 0; i < entries.size(); ++i) Visit(entries[i], i, tiers[i]);
  Publish();
}

void HotnessScanner::Publish() {
  result_.pass += 1;
  result_.live_entries = live_;
  result_.epoch = table_->epoch();
  result_.window = table_->rate_window();
  result_.histogram = histogram_;
  std::sort(hot_heap_.begin(), hot_heap_.end(), HotterFirst<Listed>);
  std::sort(cold_heap_.begin(), cold_heap_.end(), ColderFirst<Listed>);
  std::sort(fast_hot_heap_.begin(), fast_hot_heap_.end(), HotterFirst<Listed>);
  auto fill = [&](const std::vector<Listed>& from,
                  std::vector<PageEstimate>& to) {
    to.clear();
    to.reserve(from.size());
    for (const Listed& l : from) {
      to.push_back(PageEstimate{
          l.entry, result_.window.Estimate(l.entry.count, options_.z),
          l.index});
    }
  };
  fill(hot_heap_, result_.hottest_not_fast);
  fill(cold_heap_, result_.coldest_on_fast);
  fill(fast_hot_heap_, result_.hottest_on_fast);
  hot_heap_.clear();
  cold_heap_.clear();
  fast_hot_heap_.clear();
  histogram_ = Log2Histogram();
  live_ = 0;
}

}  // namespace hotpage