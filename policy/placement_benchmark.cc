// DecideMoves() cost per round: 100K hot candidates on the slow node and
// 100K cold victims on the fast nodes of the 3-node (2 packages + CXL)
// topology, with bind and preferred-many ranges. Items are candidates plus
// victims decided on (decisions/s).
//
//   bazel run //policy:placement_benchmark   (.bazelrc builds with -O2)
//
// Measured (this 2-vCPU dev VM, shared, load ~2): room 43 ms per round
// (4.7M decisions/s), swap 68 ms (3.0M/s, 200K moves), pressure 49 ms
// (4.1M/s). A round of 100K promotions is 400 MB of migration, ~1.5 s at
// the migrator's default 256 MB/s: the decision is ~3% of that.
//
// Cases: "room" (fast nodes have room for every promotion), "swap" (fast
// nodes full: every promotion displaces a victim), "pressure" (both fast
// nodes far below their low watermark: every victim is demoted, and the
// promotions then find neither room nor victims).

#include <random>
#include <vector>

#include "benchmark/benchmark.h"
#include "policy/placement.h"
#include "policy/topology.h"

namespace hotpage {
namespace {

constexpr uint64_t kPage = 4096;

Topology ThreeNodes() {
  Topology t;
  auto node = [](int id, std::vector<int> cpus, std::vector<int> dist,
                 int tier) {
    NodeInfo n;
    n.id = id;
    n.cpus = std::move(cpus);
    n.memory_bytes = uint64_t{16} << 30;
    n.distance = std::move(dist);
    n.tier = tier;
    return n;
  };
  t.nodes = {node(0, {0}, {10, 21, 24}, 0), node(1, {1}, {21, 10, 24}, 0),
             node(2, {}, {24, 24, 10}, 1)};
  t.tiers = {MemoryTier{0, {0, 1}}, MemoryTier{1, {2}}};
  return t;
}

struct Data {
  Topology topo = ThreeNodes();
  std::vector<PageHeat> candidates, victims;
  std::vector<NumaMapsRange> ranges;
  std::vector<NodeFree> free;
  PlacementConfig config;

  Data(size_t n, uint64_t fast_free_pages) {
    std::mt19937 rng(42);
    std::uniform_real_distribution<double> rate(0, 1000);
    const uint64_t base = 0x7f0000000000ull;
    for (size_t i = 0; i < n; ++i) {
      PageHeat c;
      c.vaddr = base + i * kPage;
      c.current_node = 2;
      c.accessor_node = static_cast<int>(i % 2);
      c.rate_lo = 100 + rate(rng);
      c.rate_hi = c.rate_lo + 50;
      c.rate = c.rate_lo + 25;
      candidates.push_back(c);
      PageHeat v;
      v.vaddr = base + (n + i) * kPage;
      v.current_node = static_cast<int>(i % 2);
      v.rate_lo = 0;
      v.rate_hi = rate(rng) / 20;  // < 50: colder than every candidate
      v.rate = v.rate_hi / 2;
      victims.push_back(v);
    }
    // 64 ranges over the candidates, alternating policies.
    for (int i = 0; i < 64; ++i) {
      NumaMapsRange r;
      r.start = base + uint64_t(i) * (n / 32) * kPage;
      r.end = r.start + (n / 32) * kPage;
      r.mode = i % 4 == 0   ? MempolicyMode::kBind
               : i % 4 == 1 ? MempolicyMode::kPreferredMany
                            : MempolicyMode::kDefault;
      r.nodes = i % 4 == 0 ? std::vector<int>{0, 2} : std::vector<int>{1};
      ranges.push_back(r);
    }
    free = {{0, fast_free_pages * kPage},
            {1, fast_free_pages * kPage},
            {2, uint64_t{8} << 30}};
    config.max_move_bytes = uint64_t{1} << 40;
    config.max_moves = 1 << 30;
  }
};

void Run(benchmark::State& state, uint64_t fast_free_pages) {
  const size_t n = state.range(0);
  Data data(n, fast_free_pages);
  PlacementInput in;
  in.topology = &data.topo;
  in.candidates = data.candidates;
  in.victims = data.victims;
  in.ranges = data.ranges;
  in.free = data.free;
  size_t moves = 0;
  for (auto _ : state) {
    PlacementDecision d = DecideMoves(in, data.config);
    moves = d.moves.size();
    benchmark::DoNotOptimize(d);
  }
  state.SetItemsProcessed(state.iterations() * 2 * n);
  state.counters["moves"] = moves;
}

// 16 GiB nodes: high watermark 4% = 167772 pages.
void BM_DecideMoves_Room(benchmark::State& s) { Run(s, 2'000'000); }
void BM_DecideMoves_Swap(benchmark::State& s) { Run(s, 167772); }
void BM_DecideMoves_Pressure(benchmark::State& s) { Run(s, 1000); }
BENCHMARK(BM_DecideMoves_Room)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecideMoves_Swap)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecideMoves_Pressure)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hotpage
