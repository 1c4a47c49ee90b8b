// The "mixed" workload: the replay simulator's test workload, part of the
// one synthetic workload generator (this package). Unlike the workloads of
// trace_gen.h (per-thread streams with jittered gaps and a PEBS model, for
// the bundled traces in tests/traces/), its samples are evenly spaced and
// carry only what the simulator reads, so its tests and goldens can state
// exact expectations.
//
// One process, two threads (cpu 0 and cpu 1, i.e. package 0 and 1 in the
// 2pkg+cxl preset), over `pages` 4 KiB pages:
//   - a hot set of `hot_pages` pages that takes `hot_fraction` of the
//     samples, uniformly, and moves to another part of the address space
//     every `shift_ms` (GUPS-like phases);
//   - a Zipf(0.99) background over every page (a shuffled rank order):
//     `zipf_fraction` of the samples;
//   - a sequential scan over the top quarter of the pages during the first
//     `scan_until_ms` (touched first, then cold): the rest of the samples
//     while it lasts, then Zipf.
// Samples are evenly spaced at `samples_per_sec`, both threads alternate.
// Everything comes from one SplitMix64 stream (prng.h) seeded with `seed`:
// the same options give the same samples (tools/simulate/testdata/mixed.hpt
// is GenerateMixed with the defaults, written by WriteMixedTrace; the
// simulator's goldens and tools:engine_equivalence_test depend on it).
//
// Used by tools/simulate (sim_test, sim_trace_gen) and
// tools:engine_equivalence_test.

#ifndef HOTPAGE_TOOLS_TRACE_GEN_MIXED_H_
#define HOTPAGE_TOOLS_TRACE_GEN_MIXED_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "sampler/sample.h"

namespace hotpage {
namespace trace_gen {

struct MixedOptions {
  uint64_t pages = 8192;
  uint64_t samples_per_sec = 4000;
  uint64_t duration_ms = 30000;
  uint64_t hot_pages = 600;
  uint64_t shift_ms = 10000;
  double hot_fraction = 0.7;
  double zipf_fraction = 0.2;
  uint64_t scan_until_ms = 5000;
  uint32_t pid = 4242;
  uint64_t seed = 1;
  uint64_t start_ns = 5000000000;  // the trace clock at the first sample
  uint64_t base_vaddr = 0x7f0000000000;
};

std::vector<Sample> GenerateMixed(const MixedOptions& o);

// Writes `samples` as a complete .hpt trace with the header of a mixed
// trace (source pebs-load, period 1000).
absl::Status WriteMixedTrace(const std::string& path,
                             absl::Span<const Sample> samples);

}  // namespace trace_gen
}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_TRACE_GEN_MIXED_H_
