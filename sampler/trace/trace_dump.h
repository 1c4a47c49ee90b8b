// The text form of a trace, as `hotpage dump` prints it: one line per
// sample, then counts. Kept apart from the command so that it is tested
// and benchmarked (trace_benchmark.cc BM_FormatSampleLines) on its own.
//
// A sample line has exactly these space-separated columns:
//   pid tid cpu time_ns vaddr paddr weight data_src
// vaddr, paddr and data_src in lowercase hex with "0x", the rest decimal.
// Every other line starts with "# " and holds key=value pairs, so
// `grep -v '^#'` leaves only samples.

#ifndef HOTPAGE_SAMPLER_TRACE_TRACE_DUMP_H_
#define HOTPAGE_SAMPLER_TRACE_TRACE_DUMP_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "sampler/sample.h"
#include "sampler/trace/trace_format.h"

namespace hotpage {

// Longest sample line, newline included: 3 x u32, u64, 3 x 0x-hex u64 and
// a u32, 7 spaces.
inline constexpr size_t kMaxSampleLineBytes = 3 * 10 + 20 + 3 * 18 + 10 + 7 + 1;

// Formats one sample line at `out` (which has kMaxSampleLineBytes) and
// returns the end. Hot path: no allocation, no locale, no iostream.
char* FormatSampleLine(const Sample& s, char* out);

// Counts for the summary: samples per CPU and per source, and the trace's
// per-CPU counters.
class TraceStats {
 public:
  void Add(absl::Span<const Sample> samples);
  void SetCounters(const std::vector<CpuCounters>& counters) {
    counters_ = counters;
  }

  uint64_t samples() const { return samples_; }

  // "# samples=N lost=N throttled=N unthrottled=N skipped=N\n"
  std::string Summary() const;
  // One line per CPU with samples or counters, ascending, counters'
  // kUnknownCpu last as cpu=unknown:
  // "# cpu=3 samples=N lost=N throttled=N unthrottled=N skipped=N\n"
  std::string PerCpu() const;
  // One line per source seen, by enum value: "# source=pebs-load samples=N\n"
  std::string PerSource() const;

 private:
  uint64_t samples_ = 0;
  std::vector<uint64_t> per_cpu_;  // index = cpu, for cpu < kDenseCpus
  std::map<uint32_t, uint64_t> sparse_cpu_;  // larger (hostile or future) ids
  std::array<uint64_t, 256> per_source_{};
  std::vector<CpuCounters> counters_;
};

// The header as "# key=value" lines; the topology JSON follows, each of its
// lines prefixed by "#   ".
std::string FormatTraceHeader(const TraceHeader& header);

}  // namespace hotpage

#endif  // HOTPAGE_SAMPLER_TRACE_TRACE_DUMP_H_
