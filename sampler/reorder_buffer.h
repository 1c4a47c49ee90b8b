// SampleReorderBuffer: puts samples drained from several per-CPU perf rings
// back into time order before they are written (`hotpage record`).
//
// Each ring is in time order, but a poll drains ring after ring, so the
// stream interleaves them: a `record` of two threads touching 50000 pages
// had 22-24k of 50k samples earlier than the one before (up to 4 ms). A
// trace should be in time order: the simulator replays it by time, and
// `dump` readers expect it.
//
// The rule is perf's own (tools/perf/util/ordered-events.c, flushed at each
// FINISHED_ROUND): the caller releases up to a watermark below which no
// sample can still be unread. For a sampler that reads CLOCK_MONOTONIC
// timestamps (event_config.cc sets use_clockid), that is the time a poll
// STARTED, minus a small slack, provided the poll drained every ring: a
// sample is written to its ring when its event happens, so one timestamped
// before the poll began was already in a ring that the poll then read
// (Sampler::last_poll_complete() says whether it read all of them).
//
// Contract:
//  - Add() accepts samples in any order.
//  - Release(w) emits, oldest first, every buffered sample with
//    time_ns < w; ties keep their arrival order. Release never emits a
//    sample older than one it emitted before, except a late one: a sample
//    added with time_ns below the newest already emitted (the caller's
//    watermark was wrong, or a ring was behind). Late samples are emitted
//    at the next Release in their own order and counted (late()); nothing
//    is dropped.
//  - Memory is bounded: past max_samples, Add() first emits the oldest half
//    of the buffer (counted in forced()); order may then break for samples
//    still unread, which late() counts.
//  - ReleaseAtLeast(w, n) is Release(w) that emits at least the n oldest
//    samples whatever their time (a caller's own memory bound; those at or
//    above w count in forced()), with one move of what stays.
//  - Drain() emits everything left, oldest first (the end of a recording).
//
// Users: `hotpage record` (watermark: the start of a poll that drained every
// ring) and the replay simulator's SampleOrderer (tools/simulate/sim_trace.h;
// watermark: a window of trace time behind the newest sample).
//
// Cost: each ring's batch is already in time order, so a release merges
// those runs (O(n log runs), not a full sort). reorder_buffer_benchmark, one
// core of this machine, per poll of R rings x S samples: 2 x 1k-16k 176-198
// M samples/s, 64 x 1k 42 M/s, 64 x 16k 14 M/s (a full stable_sort: 59, 38,
// 34 and 6.6 M/s); passing them through unordered, the peer, 180-880 M/s.
// The ring reader decodes 20-50 M/s, so ordering adds a fraction of that.
//
// Thread-compatible: the recording thread owns it.

#ifndef HOTPAGE_SAMPLER_REORDER_BUFFER_H_
#define HOTPAGE_SAMPLER_REORDER_BUFFER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/types/span.h"
#include "sampler/sample.h"

namespace hotpage {

class SampleReorderBuffer {
 public:
  using Sink = absl::FunctionRef<void(absl::Span<const Sample>)>;

  explicit SampleReorderBuffer(size_t max_samples = size_t{1} << 21);

  void Add(absl::Span<const Sample> samples, Sink sink);
  void Release(uint64_t watermark_ns, Sink sink);
  void ReleaseAtLeast(uint64_t watermark_ns, size_t min_count, Sink sink);
  void Drain(Sink sink);

  size_t buffered() const { return buffer_.size(); }
  size_t max_buffered() const { return max_buffered_; }
  uint64_t late() const { return late_; }  // added below the newest emitted
  uint64_t forced() const {
    return forced_;
  }  // emitted early by the memory bound

 private:
  void Sort();  // stable merge of the runs, by time; no-op if sorted
  // Sorts the buffer and emits its first `n` samples.
  void EmitOldest(size_t n, Sink sink);

  size_t max_samples_;
  std::vector<Sample> buffer_;
  // Where each sorted run but the first begins (buffer_ is the
  // concatenation of runs); empty = buffer_ is sorted.
  std::vector<size_t> run_starts_;
  bool emitted_any_ = false;
  uint64_t newest_emitted_ns_ = 0;
  size_t max_buffered_ = 0;
  uint64_t late_ = 0;
  uint64_t forced_ = 0;
};

}  // namespace hotpage

#endif  // HOTPAGE_SAMPLER_REORDER_BUFFER_H_
