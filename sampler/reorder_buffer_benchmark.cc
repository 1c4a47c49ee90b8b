// SampleReorderBuffer cost per sample, as `hotpage record` uses it: each
// poll adds one time-ordered batch per ring (R rings, interleaved in time),
// then releases everything below the poll's start. Peer in the same binary:
// BM_Passthrough copies the same batches straight to the sink (what record
// did before: no ordering). Compare the two per-sample times; a ring reader
// decodes ~20-50 M samples/s (ring_reader_benchmark), so ordering should
// stay well under that per-sample cost.
//
//   bazel run -c opt //sampler:reorder_buffer_benchmark

#include <cstdint>
#include <vector>

#include "benchmark/benchmark.h"
#include "sampler/reorder_buffer.h"

namespace hotpage {
namespace {

// One poll's worth: `rings` batches of `per_ring` samples, each batch in
// time order, the rings interleaved in time.
std::vector<std::vector<Sample>> Poll(int rings, int per_ring, uint64_t t0) {
  std::vector<std::vector<Sample>> out(rings);
  for (int r = 0; r < rings; ++r) {
    out[r].resize(per_ring);
    for (int i = 0; i < per_ring; ++i) {
      out[r][i].time_ns = t0 + static_cast<uint64_t>(i) * rings + r;
      out[r][i].cpu = static_cast<uint32_t>(r);
      out[r][i].vaddr = 0x7f0000000000 + (static_cast<uint64_t>(i) << 12);
    }
  }
  return out;
}

void BM_Reorder(benchmark::State& state) {
  const int rings = static_cast<int>(state.range(0));
  const int per_ring = static_cast<int>(state.range(1));
  SampleReorderBuffer buf;
  uint64_t sink_total = 0;
  auto sink = [&](absl::Span<const Sample> b) { sink_total += b.size(); };
  const std::vector<std::vector<Sample>> poll = Poll(rings, per_ring, 0);
  for (auto _ : state) {
    for (const auto& batch : poll) buf.Add(batch, sink);
    buf.Release(UINT64_MAX, sink);
  }
  benchmark::DoNotOptimize(sink_total);
  state.SetItemsProcessed(state.iterations() * rings * per_ring);
}

void BM_Passthrough(benchmark::State& state) {
  const int rings = static_cast<int>(state.range(0));
  const int per_ring = static_cast<int>(state.range(1));
  std::vector<Sample> out;
  out.reserve(static_cast<size_t>(rings) * per_ring);
  const std::vector<std::vector<Sample>> poll = Poll(rings, per_ring, 0);
  for (auto _ : state) {
    out.clear();
    for (const auto& batch : poll)
      out.insert(out.end(), batch.begin(), batch.end());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * rings * per_ring);
}

// 2 and 64 rings; 1k and 16k samples per ring per poll (a busy 100 ms poll).
BENCHMARK(BM_Reorder)
    ->Args({2, 1024})
    ->Args({2, 16384})
    ->Args({64, 1024})
    ->Args({64, 16384});
BENCHMARK(BM_Passthrough)
    ->Args({2, 1024})
    ->Args({2, 16384})
    ->Args({64, 1024})
    ->Args({64, 16384});

}  // namespace
}  // namespace hotpage
