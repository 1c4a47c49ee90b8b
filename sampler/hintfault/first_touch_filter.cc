#include "sampler/hintfault/first_touch_filter.h"

#include <algorithm>

namespace hotpage {

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
  if (!have_resident_) {
    have_resident_ = true;
    last_resident_ = resident_pages;
    return;
  }
  if (budget_ > 0 && now_ns - last_growth_ns_ > options_.growth_window_ns) {
    budget_ = 0;
  }
  if (resident_pages > last_resident_) {
    const uint64_t growth = resident_pages - last_resident_;
    growth_pages_ += growth;
    budget_ += growth;
    last_growth_ns_ = now_ns;
  }
  last_resident_ = resident_pages;
}

size_t FirstTouchFilter::Bit(uint64_t vaddr) const {
  // Fibonacci hashing of the 4 KiB page number: the top bits_log2 bits.
  const uint64_t page = vaddr >> 12;
  return static_cast<size_t>((page * 0x9E3779B97F4A7C15ull) >>
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
  if (budget_ > 0 && now_ns - last_growth_ns_ > options_.growth_window_ns) {
    budget_ = 0;
  }
  size_t dropped = 0;
  bool read = false;
  for (const Sample& s : samples) {
    if (s.source != SampleSource::kPageFault) {
      kept->push_back(s);
      continue;
    }
    const size_t bit = Bit(s.vaddr);
    const bool seen = Test(current_, bit) || Test(previous_, bit);
    current_[bit >> 6] |= uint64_t{1} << (bit & 63);
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
