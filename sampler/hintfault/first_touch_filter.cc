#include "sampler/hintfault/first_touch_filter.h"

#include <algorithm>

namespace hotpage {
namespace {
uint64_t PageKeyOf(uint64_t vaddr) { return vaddr >> 12; }
// Chunk numbers live apart from page numbers (bit 63: no user page number
// has it).
uint64_t ChunkKeyOf(uint64_t vaddr) { return (vaddr >> 21) | (1ull << 63); }
}  // namespace

FirstTouchFilter::FirstTouchFilter(const FirstTouchFilterOptions& options)
    : options_([&] {
        FirstTouchFilterOptions o = options;
        o.bits_log2 = std::clamp(o.bits_log2, 10, 28);
        return o;
      }()) {
  const size_t words = (size_t{1} << options_.bits_log2) / 64;
  current_.assign(words, 0);
  previous_.assign(words, 0);
}

void FirstTouchFilter::NoteResident(uint64_t now_ns, uint64_t resident_pages) {
  if (resident_pages == 0) return;  // unreadable: no growth known
  last_read_ns_ = now_ns;
  if (!have_resident_) {
    have_resident_ = true;
    last_resident_ = resident_pages;
    return;
  }
  LapseBudget(now_ns);
  if (resident_pages > last_resident_) {
    const uint64_t growth = resident_pages - last_resident_;
    growth_pages_ += growth;
    budget_ += growth;
    last_growth_ns_ = now_ns;
  }
  last_resident_ = resident_pages;
}

void FirstTouchFilter::LapseBudget(uint64_t now_ns) {
  if (budget_ > 0 && now_ns - last_growth_ns_ > options_.growth_window_ns) {
    budget_ = 0;
  }
}

size_t FirstTouchFilter::Bit(uint64_t key) const {
  // Fibonacci hashing: the top bits_log2 bits.
  return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >>
                             (64 - options_.bits_log2));
}

void FirstTouchFilter::MaybeTurn(uint64_t now_ns) {
  if (!started_) {
    started_ = true;
    generation_start_ns_ = now_ns;
    return;
  }
  if (now_ns - generation_start_ns_ < options_.generation_ns) return;
  // A page is remembered for one to two generations: the older one goes.
  current_.swap(previous_);
  std::fill(current_.begin(), current_.end(), 0);
  generation_start_ns_ = now_ns;
}

size_t FirstTouchFilter::Filter(uint64_t now_ns,
                                absl::Span<const Sample> samples,
                                std::vector<Sample>* kept,
                                const std::function<uint64_t()>& resident) {
  kept->clear();
  MaybeTurn(now_ns);
  // A reading at least every kReadEveryNs keeps the growth's time true,
  // whether or not the budget runs out: growth read late would be budget
  // later than the first touches it counts.
  bool read = false;
  if (resident && (!have_resident_ || now_ns - last_read_ns_ >= kReadEveryNs)) {
    read = true;
    NoteResident(now_ns, resident());
  }
  LapseBudget(now_ns);
  size_t dropped = 0;
  for (const Sample& s : samples) {
    if (s.source != SampleSource::kPageFault) {
      kept->push_back(s);
      continue;
    }
    const size_t page_bit = Bit(PageKeyOf(s.vaddr));
    const size_t chunk_bit = Bit(ChunkKeyOf(s.vaddr));
    const bool huge = in_huge_chunk_ && in_huge_chunk_(s.vaddr);
    const bool seen = Seen(huge ? chunk_bit : page_bit);
    Mark(page_bit);
    Mark(chunk_bit);
    if (!seen && budget_ == 0 && resident && !read) {
      read = true;
      NoteResident(now_ns, resident());
    }
    if (!seen && budget_ > 0) {
      --budget_;
      ++dropped;
      continue;
    }
    kept->push_back(s);
  }
  dropped_ += dropped;
  return dropped;
}

}  // namespace hotpage
