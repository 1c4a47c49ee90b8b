// FirstTouchFilter cost per sample, as the attach loop runs it on every
// batch of hint-fault samples before PolicyEngine::Ingest. Peer in the same
// binary: BM_Copy copies the same batch into the kept vector without the
// filter (what the loop pays for a span it cannot ingest in place). Two
// cases: the process does not grow (every sample passes, each marks its
// page), and it grows by as many pages as the batch has (every sample on an
// unseen page is dropped until the budget is spent). Ingest itself runs at
// ~60M samples/s (tools/attach/attach_loop.h), so the filter should stay
// well under its per-sample cost.
//
//   bazel run -c opt //sampler/hintfault:first_touch_filter_benchmark

#include <cstdint>
#include <vector>

#include "benchmark/benchmark.h"
#include "sampler/hintfault/first_touch_filter.h"

namespace hotpage {
namespace {

constexpr int kBatch = 4096;

// A batch of page faults over `pages` distinct pages, strided so that
// consecutive samples hit different cache lines of the bitmaps.
std::vector<Sample> Batch(uint64_t first_page, uint64_t pages) {
  std::vector<Sample> out(kBatch);
  for (int i = 0; i < kBatch; ++i) {
    out[i].vaddr = 0x7f0000000000 + ((first_page + (i * 7919) % pages) << 12);
    out[i].source = SampleSource::kPageFault;
  }
  return out;
}

void BM_Copy(benchmark::State& state) {
  const std::vector<Sample> batch = Batch(0, 1 << 20);
  std::vector<Sample> kept;
  kept.reserve(kBatch);
  for (auto _ : state) {
    kept.assign(batch.begin(), batch.end());
    benchmark::DoNotOptimize(kept.data());
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}
BENCHMARK(BM_Copy);

void BM_FilterSteady(benchmark::State& state) {
  const std::vector<Sample> batch = Batch(0, 1 << 20);
  FirstTouchFilter f;
  std::vector<Sample> kept;
  uint64_t now = 1;
  f.NoteResident(now, 1 << 20);
  for (auto _ : state) {
    now += 50'000'000;
    f.NoteResident(now, 1 << 20);
    f.Filter(now, batch, &kept);
    benchmark::DoNotOptimize(kept.data());
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}
BENCHMARK(BM_FilterSteady);

void BM_FilterGrowing(benchmark::State& state) {
  FirstTouchFilter f;
  std::vector<Sample> kept;
  uint64_t now = 1, resident = 1000, first = 0;
  f.NoteResident(now, resident);
  std::vector<Sample> batch = Batch(first, kBatch);
  for (auto _ : state) {
    state.PauseTiming();
    first += kBatch;
    batch = Batch(first, kBatch);
    state.ResumeTiming();
    now += 50'000'000;
    resident += kBatch;
    f.NoteResident(now, resident);
    f.Filter(now, batch, &kept);
    benchmark::DoNotOptimize(kept.data());
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}
BENCHMARK(BM_FilterGrowing);

}  // namespace
}  // namespace hotpage
