// Test and benchmark helpers for .hpt traces: deterministic synthetic
// sample streams, and whole-trace read/write in memory.
//
// SyntheticSamples imitates a PEBS load/store stream from a two-process
// workload on 8 CPUs: skewed page popularity over a heap, an mmap region
// and stacks, per-CPU rings merged in arrival order (time mostly rising,
// sometimes stepping back a few microseconds), ~70% of samples with a
// physical address, a handful of data_src values with matching
// level/tlb, an adaptive period that changes now and then. It is what the
// encoding was tuned and measured on (trace_benchmark.cc); real PEBS traces
// from `hotpage record` should replace it in the benchmark once they exist.

#ifndef HOTPAGE_SAMPLER_TRACE_TRACE_TESTING_H_
#define HOTPAGE_SAMPLER_TRACE_TRACE_TESTING_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sampler/sample.h"
#include "sampler/trace/trace_format.h"
#include "sampler/trace/trace_writer.h"

namespace hotpage {
namespace testing_internal {

class SyntheticSamples {
 public:
  explicit SyntheticSamples(uint64_t seed = 1);
  Sample Next();

 private:
  std::mt19937_64 rng_;
  uint64_t time_ns_ =
      1'700'000'000'000'000'000ull / 1000;  // ~20 days of uptime
  uint64_t period_ = 10007;
};

// Samples with edge values in every field: 0, 1, all ones, top bits set,
// every power of two, random bits, non-monotonic times.
std::vector<Sample> EdgeSamples(size_t n, uint64_t seed = 7);

// A header with every field filled in (topology: a small JSON text).
TraceHeader TestHeader();

// Writes `samples` to memory as a complete trace. Counters, if given, are
// set before Close().
absl::StatusOr<std::string> WriteTrace(
    const TraceHeader& header, const std::vector<Sample>& samples,
    const TraceWriter::Options& options,
    const std::vector<CpuCounters>& counters = {});

struct ReadResult {
  TraceHeader header;
  std::vector<Sample> samples;  // everything handed out before the error
  std::vector<CpuCounters> counters;
  bool complete = false;
  absl::Status status;  // OK when complete; the header or block error otherwise
  size_t max_buffer_bytes = 0;
};
// Reads a whole trace from memory.
ReadResult ReadTrace(const std::string& bytes);

bool SameSample(const Sample& a, const Sample& b);

}  // namespace testing_internal
}  // namespace hotpage

#endif  // HOTPAGE_SAMPLER_TRACE_TRACE_TESTING_H_
