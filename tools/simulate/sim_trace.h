// Reading a trace for the replay simulator: .hpt or perf.data, streamed,
// put in time order, surveyed once before the simulation.
//
// TraceSource detects the format by its magic ("\x89HPT\r\n\x1a\n": .hpt,
// sampler/trace/trace_reader.h; "PERFILE2": perf.data in file or pipe mode,
// sampler/perf/perf_data_reader.h) and hands out batches of samples with the
// bytes read so far (for a progress bar).
//
// SampleOrderer: neither format is in global time order (.hpt traces keep
// the recorder's per-CPU ring drains in arrival order; perf.data is in
// perf's flush order, time-ordered per CPU only). The orderer holds
// samples in a window of kReorderWindowNs of trace time (and at most
// kMaxHeld samples: 64 MiB) and releases them sorted by time (stable: ties
// keep their arrival order). A sample that arrives after later ones were
// already released is late: it is counted and released at once, with the
// time of the last released sample. Memory is bounded by the window, not
// the trace. The buffering and merging are `hotpage record`'s
// (sampler/reorder_buffer.h, one reorder buffer for both); this class only
// chooses the watermark (the window behind the newest sample) and when to
// release. Throughput on one core of the development VM (20M samples, a
// throwaway benchmark with the previous stable_sort version as the peer):
// two interleaved per-CPU runs 4-6 M samples/s (the sort: 0.8-1.4), input
// already in order 12-14 M/s (the sort: 12-16).
//
// SurveyTrace (the first pass): samples per pid, each pid's footprint
// (distinct 4 KiB pages) and time span; what the simulation needs before
// it starts (the machine is scaled to the footprint).

#ifndef HOTPAGE_TOOLS_SIMULATE_SIM_TRACE_H_
#define HOTPAGE_TOOLS_SIMULATE_SIM_TRACE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "sampler/reorder_buffer.h"
#include "sampler/sample.h"

namespace hotpage {

class TraceSource {
 public:
  virtual ~TraceSource() = default;
  // Opens `path`. Errors name the file: missing, unreadable, neither an
  // .hpt trace nor a perf.data file.
  static absl::StatusOr<std::unique_ptr<TraceSource>> Open(
      const std::string& path);
  // The next batch (valid until the next call); empty at the end; an error
  // at the first damage (the samples before it were all handed out).
  virtual absl::StatusOr<absl::Span<const Sample>> Next() = 0;
  virtual uint64_t bytes_read() const = 0;
  uint64_t total_bytes() const { return total_bytes_; }
  const std::string& format() const { return format_; }  // "hpt", "perf.data"
  // Why the source handed out no sample, once Next() came back empty with
  // none: what it skipped and how to record what it needs; "" if nothing
  // was skipped (the file holds no sample records).
  virtual std::string EmptyReason() const { return ""; }

 protected:
  uint64_t total_bytes_ = 0;
  std::string format_;
};

class SampleOrderer {
 public:
  static constexpr uint64_t kReorderWindowNs = 1000000000;  // 1 s
  static constexpr size_t kMaxHeld = size_t{1} << 20;

  explicit SampleOrderer(uint64_t window_ns = kReorderWindowNs,
                         size_t max_held = kMaxHeld);
  // Adds samples; calls `out` with every batch that became releasable.
  void Push(absl::Span<const Sample> samples,
            const std::function<void(absl::Span<const Sample>)>& out);
  // Releases everything held.
  void Finish(const std::function<void(absl::Span<const Sample>)>& out);
  uint64_t late_samples() const { return late_; }
  // Samples that arrived before one already seen (reordered or late).
  uint64_t out_of_order() const { return out_of_order_; }

 private:
  // Releases what is due: the samples outside the window, and at the cap
  // at least the oldest half.
  void ReleaseDue(const std::function<void(absl::Span<const Sample>)>& out);

  const uint64_t window_ns_;
  const size_t max_held_;
  SampleReorderBuffer buffer_;
  bool released_any_ = false;
  size_t kept_after_release_ = 0;
  uint64_t last_released_ns_ = 0;
  uint64_t max_seen_ns_ = 0;
  uint64_t late_ = 0;
  uint64_t out_of_order_ = 0;
};

struct PidSurvey {
  uint64_t samples = 0;
  uint64_t footprint_pages = 0;
  uint64_t first_ns = UINT64_MAX;
  uint64_t last_ns = 0;
};

struct TraceSurvey {
  std::string format;
  uint64_t samples = 0;
  uint64_t out_of_order = 0;  // arrived before an earlier-timed sample
  std::map<uint32_t, PidSurvey> pids;
  // The pid with most samples (ties: the lowest).
  uint32_t busiest_pid() const;
};

// Reads `path` once. `progress(bytes_read, total_bytes)` is called every
// few batches (may be null). Errors: those of TraceSource, a damaged
// trace (naming the offset), an empty trace.
absl::StatusOr<TraceSurvey> SurveyTrace(
    const std::string& path,
    const std::function<void(uint64_t, uint64_t)>& progress);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_SIMULATE_SIM_TRACE_H_
