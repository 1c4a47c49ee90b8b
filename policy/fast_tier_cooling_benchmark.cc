// What the change confirmation (policy/fast_tier_cooling.h) adds to the
// round of a first share-drop detection: one FastTierCooling::Add per
// fast-tier entry (an exp() for pages with two or more long samples),
// against the round's own walk (attach_round_benchmark BM_Round: 40 ms at
// 64k live entries, 370 ms at 1M, -c opt). N fast entries with long counts
// 0-15 and round samples 0-3 in a fixed pseudo-random mix; items are
// entries.
//
//   bazel run -c opt //policy:fast_tier_cooling_benchmark

#include <cstdint>
#include <vector>

#include "benchmark/benchmark.h"
#include "policy/fast_tier_cooling.h"

namespace hotpage {
namespace {

void BM_FastTierCooling(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  std::vector<float> long_counts(n), round_samples(n);
  uint64_t x = 88172645463325252ull;  // xorshift64
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    long_counts[i] = static_cast<float>(x % 16);
    round_samples[i] = static_cast<float>((x >> 8) % 4);
  }
  for (auto _ : state) {
    FastTierCooling c(10, 0.25);
    for (size_t i = 0; i < n; ++i) c.Add(long_counts[i], round_samples[i]);
    benchmark::DoNotOptimize(c.Cooled(3.09));
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
}
BENCHMARK(BM_FastTierCooling)
    ->Arg(32 << 10)
    ->Arg(512 << 10)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hotpage
