// Ring decode + filter throughput: a PEBS-shaped record stream (IDENTIFIER,
// IP, TID, TIME, ADDR, CPU, PERIOD, WEIGHT_STRUCT, DATA_SRC, PHYS_ADDR; 88
// bytes per record) in an in-memory ring, drained by RingReader with the
// pid filter on, as the sampler does. Reports samples/s on one core.
//
//   bazel run -c opt //sampler/perf:ring_reader_benchmark

#include <linux/perf_event.h>

#include <vector>

#include "benchmark/benchmark.h"
#include "sampler/perf/ring_reader.h"
#include "sampler/perf/synthetic_ring.h"

namespace hotpage {
namespace {

constexpr uint64_t kPebs =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
    PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
    PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_PHYS_ADDR;

// Fills the ring with records; returns how many. `wrap` starts the ring so
// that records straddle the end.
size_t Fill(SyntheticRing& ring, bool wrap) {
  ring.SetPosition(wrap ? ring.data_size() - 40 : 0);
  size_t n = 0;
  uint64_t addr = 0x7f0000000000;
  for (;; ++n) {
    addr += 4096 * 17;
    std::vector<uint64_t> body = {7,
                                  0x401000,
                                  uint64_t{43} << 32 | 42,
                                  n,
                                  addr,
                                  n & 1,
                                  1000,
                                  uint64_t{3} << 32 | 120,
                                  0x68100142,
                                  addr & 0xffffffff};
    if (!ring.Write(PERF_RECORD_SAMPLE, body)) break;
  }
  return n;
}

void BM_RingDrain(benchmark::State& state) {
  const bool wrap = state.range(0) != 0;
  SyntheticRing ring(1 << 20);
  const size_t n = Fill(ring, wrap);
  PerfEventLayout layout;
  layout.sample_type = kPebs;
  layout.sample_id_all = true;
  layout.source = SampleSource::kPebsLoad;
  PidFilter filter({42});
  RingReader reader(ring.base(), SyntheticRing::kPage, 1 << 20, {{7, layout}},
                    &filter);
  const uint64_t start = ring.meta()->data_tail;
  std::vector<Sample> out(1024);
  uint64_t sink = 0;
  for (auto _ : state) {
    ring.meta()->data_tail = start;  // re-read the same records
    size_t got;
    while ((got = reader.Drain(out.data(), out.size(), SIZE_MAX)) > 0)
      sink += out[got - 1].vaddr;
  }
  benchmark::DoNotOptimize(sink);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * n * 88));
  state.counters["records"] = static_cast<double>(n);
}
BENCHMARK(BM_RingDrain)->Arg(0)->Arg(1)->ArgName("wrap");

}  // namespace
}  // namespace hotpage
