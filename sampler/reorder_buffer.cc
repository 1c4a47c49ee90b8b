#include "sampler/reorder_buffer.h"

#include <algorithm>
#include <cstddef>

namespace hotpage {

SampleReorderBuffer::SampleReorderBuffer(size_t max_samples)
    : max_samples_(std::max<size_t>(max_samples, 2)) {}

void SampleReorderBuffer::Add(absl::Span<const Sample> samples, Sink sink) {
  for (const Sample& s : samples) {
    if (emitted_any_ && s.time_ns < newest_emitted_ns_) ++late_;
    // A sample older than the one before starts a new sorted run (in
    // practice: the next ring's batch).
    if (!buffer_.empty() && s.time_ns < buffer_.back().time_ns)
      run_starts_.push_back(buffer_.size());
    buffer_.push_back(s);
    if (buffer_.size() >= max_samples_) {
      const size_t half = buffer_.size() / 2;
      forced_ += half;
      EmitOldest(half, sink);
    }
  }
  max_buffered_ = std::max(max_buffered_, buffer_.size());
}

void SampleReorderBuffer::Sort() {
  // Bottom-up merge of the sorted runs, adjacent pairs per pass: log2(runs)
  // passes (6 for 64 rings) instead of a full sort's log2(n). Stable, so
  // equal times keep their arrival order.
  auto by_time = [](const Sample& a, const Sample& b) {
    return a.time_ns < b.time_ns;
  };
  while (!run_starts_.empty()) {
    std::vector<size_t> merged;  // the starts of the runs after this pass
    std::vector<size_t> starts = {0};
    starts.insert(starts.end(), run_starts_.begin(), run_starts_.end());
    for (size_t i = 0; i < starts.size(); i += 2) {
      if (i > 0) merged.push_back(starts[i]);
      if (i + 1 >= starts.size()) break;
      const size_t end = i + 2 < starts.size() ? starts[i + 2] : buffer_.size();
      std::inplace_merge(
          buffer_.begin() + static_cast<std::ptrdiff_t>(starts[i]),
          buffer_.begin() + static_cast<std::ptrdiff_t>(starts[i + 1]),
          buffer_.begin() + static_cast<std::ptrdiff_t>(end), by_time);
    }
    run_starts_ = std::move(merged);
  }
}

void SampleReorderBuffer::EmitOldest(size_t n, Sink sink) {
  Sort();
  n = std::min(n, buffer_.size());
  if (n == 0) return;
  sink(absl::MakeConstSpan(buffer_.data(), n));
  newest_emitted_ns_ = std::max(newest_emitted_ns_, buffer_[n - 1].time_ns);
  emitted_any_ = true;
  buffer_.erase(buffer_.begin(),
                buffer_.begin() + static_cast<std::ptrdiff_t>(n));
}

void SampleReorderBuffer::Release(uint64_t watermark_ns, Sink sink) {
  ReleaseAtLeast(watermark_ns, 0, sink);
}

void SampleReorderBuffer::ReleaseAtLeast(uint64_t watermark_ns,
                                         size_t min_count, Sink sink) {
  if (buffer_.empty()) return;
  Sort();
  const auto end = std::lower_bound(
      buffer_.begin(), buffer_.end(), watermark_ns,
      [](const Sample& a, uint64_t w) { return a.time_ns < w; });
  size_t n = static_cast<size_t>(end - buffer_.begin());
  if (n < min_count) {
    const size_t more = std::min(min_count, buffer_.size()) - n;
    forced_ += more;
    n += more;
  }
  EmitOldest(n, sink);
}

void SampleReorderBuffer::Drain(Sink sink) { EmitOldest(buffer_.size(), sink); }

}  // namespace hotpage
