// What one policy round costs the attach loop's thread (attach_loop.h,
// Threading), at realistic table sizes: N live entries (64k, 256k, 1M
// distinct 4 KiB pages sampled), half of them on the slow node, over an
// in-memory view (the engine's own work; live, the node queries add about
// 1 us per page). Also the ingest rate of the same engine (samples/s), the
// other half of the loop. Compare the round time with the poll interval
// (50 ms) and with how long the perf rings take to fill. The counter
// ingest_ms is the untimed Ingest of the 4N samples between two rounds.
//
//   bazel run -c opt //tools/attach:attach_round_benchmark
//
// Measured (2 shared cores, other jobs running: noisy, medians of
// --benchmark_repetitions=3 over two interleaved runs; N = live entries):
//
//   N      016ae3e  main b93a23c   after (branch round)
//   64k    ~25 ms   113-174 ms     50-67 ms
//   256k   -        443-665 ms     195-199 ms
//   1M     ~0.5 s   1471-1563 ms   613-629 ms
//
// engine_bytes_per_entry at 64k / 256k / 1M entries: the 4M-slot table
// (64 MiB) and, per entry, the entries' views, the keys' map and the
// round's lists of PageHeat. 1476 / 610 / 353 bytes before 4699380..78de37c
// (Ingest's batch_ had kept the largest batch a caller handed over, 128
// bytes per entry here; placement and counts were two maps, 84 bytes per
// key; PageHeat was 128 bytes), 1316 / 456 / 206 after (medians of 4
// interleaved runs each, base and final; rounds 0.92-0.97x). The untimed
// ingest_ms at 64k rose 15 -> 26 ms (the one 256k-sample call now goes to
// the table in 4096-sample pieces, and the keys' map has 32-byte slots);
// BM_Ingest, the per-sample path, 59.2M -> 58.2M samples/s.
//
// No O(n log n) or O(n^2) piece had crept in: the round stayed linear,
// but at 016ae3e it read the table twice (pass 1 for the keys, pass 2 for
// the lists, a placement lookup per key) and looked each key up once more
// for the hot pages, and every feature added since (the short window, the
// long window and its prior, the count prior, the change window) added
// its own walk over the keys with hash lookups (a cache miss each at 1M
// keys) and a map rebuilt every round (absl's clear() frees a table of
// more than 127 slots: reallocated, zeroed by the kernel, regrown). Now:
// one read of the table (HotnessTable::ReadSlots, HotnessScanner::Pass),
// one walk over its entries with one lookup per key per map (CountRound),
// dense arrays by entry index for the listed pages, and maps updated in
// place. What is left at 1M is mostly those lookups per key (keys_); at
// 64k, the read of the 4M-slot table (sized for the 16 GiB
// fast tier) and placement's sorts of its 32k-page lists.

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "benchmark/benchmark.h"
#include "policy/engine.h"
#include "policy/topology.h"

namespace hotpage {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kPage = 4096;
constexpr uint64_t kBase = 0x7f0000000000;
constexpr uint64_t kSec = 1000000000;
constexpr uint32_t kPid = 42;

NodeInfo Node(int id, std::vector<int> cpus, std::vector<int> distance,
              int tier, uint64_t bytes) {
  NodeInfo n;
  n.id = id;
  n.cpus = std::move(cpus);
  n.memory_bytes = bytes;
  n.distance = std::move(distance);
  n.tier = tier;
  n.package = 0;
  return n;
}

// DRAM node 0 with cpu 0 and a CPU-less slower node 1, 16 GiB each.
Topology TwoTiers() {
  Topology t;
  t.nodes.push_back(Node(0, {0}, {10, 20}, 0, 16 * kGiB));
  t.nodes.push_back(Node(1, {}, {20, 10}, 1, 16 * kGiB));
  t.tiers = {MemoryTier{0, {0}}, MemoryTier{1, {1}}};
  t.packages = {Package{0, {0, 1}}};
  return t;
}

// Even pages on node 0, odd ones on node 1; plenty of free memory.
class HalfAndHalfView : public MemoryView {
 public:
  int QueryNodes(absl::Span<const uint64_t> pages,
                 absl::Span<int> status) override {
    for (size_t i = 0; i < pages.size(); ++i) {
      status[i] = static_cast<int>((pages[i] / kPage) & 1);
    }
    return 0;
  }
  std::vector<NumaMapsRange> Ranges() override { return {}; }
  std::vector<NodeFree> Free() override {
    return {{0, fast_free}, {1, 8 * kGiB}};
  }
  // Node 0's free memory: plenty (promotions into room), or between its
  // watermarks (every promotion a swap).
  uint64_t fast_free = 8 * kGiB;
};

std::unique_ptr<PolicyEngine> MakeEngine(const Topology& topo, size_t pages,
                                         bool locality = false,
                                         bool by_footprint = false,
                                         bool swap_payoff = true) {
  EngineOptions opt;
  opt.hold_short_window_when_swaps_lose = swap_payoff;
  opt.address_space = kPid;
  opt.footprint_pages = pages;
  opt.table_by_footprint = by_footprint;
  PlacementConfig cfg;
  cfg.locality = locality;
  absl::StatusOr<std::unique_ptr<PolicyEngine>> e =
      PolicyEngine::Create(topo, cfg, opt);
  if (!e.ok()) std::abort();
  return std::move(*e);
}

// `n` samples over `pages` pages, page i sampled about (i % 8) + 1 times
// out of 8 (a skewed heat).
std::vector<Sample> Samples(size_t pages, size_t n, uint64_t t) {
  std::vector<Sample> out;
  out.reserve(n);
  for (size_t i = 0; out.size() < n; ++i) {
    const size_t p = i % pages;
    if ((i / pages) % 8 > p % 8) continue;
    Sample s;
    s.vaddr = kBase + p * kPage;
    s.time_ns = t;
    s.pid = kPid;
    s.cpu = 0;
    s.period = 1;
    out.push_back(s);
  }
  return out;
}

void Rounds(benchmark::State& state, bool locality, bool swap_payoff = true,
            bool fast_full = false) {
  const size_t pages = static_cast<size_t>(state.range(0));
  const Topology topo = TwoTiers();
  std::unique_ptr<PolicyEngine> engine =
      MakeEngine(topo, pages, locality, /*by_footprint=*/false, swap_payoff);
  HalfAndHalfView view;
  if (fast_full) view.fast_free = 16 * kGiB * 3 / 100;
  engine->Start(0);
  const std::vector<Sample> samples = Samples(pages, pages * 4, kSec / 2);
  uint64_t t = kSec;
  double ingest_s = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const auto start = std::chrono::steady_clock::now();
    engine->Ingest(samples);  // keeps every entry live across epochs
    ingest_s +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    state.ResumeTiming();
    RoundReport r = engine->RunRound(view, t);
    benchmark::DoNotOptimize(r);
    t += kSec;
  }
  const double live =
      static_cast<double>(engine->RunRound(view, t).live_entries);
  state.counters["live_entries"] = live;
  // The engine's own memory per live entry (PolicyEngine::MemoryBytes:
  // the table's slots and the per-page state), what attach's engine_bytes
  // reports.
  state.counters["engine_bytes_per_entry"] =
      static_cast<double>(engine->MemoryBytes()) / std::max(1.0, live);
  // The untimed Ingest of the N * 4 samples between rounds (placement
  // lookups included), per round.
  state.counters["ingest_ms"] =
      1e3 * ingest_s / static_cast<double>(state.iterations());
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(pages));
  // The swaps the next round weighs (promotions per round), and the rounds
  // whose short window they held back.
  state.counters["promoted_per_round"] =
      static_cast<double>(engine->counters().planned_promotions /
                          std::max<uint64_t>(1, engine->counters().rounds));
  state.counters["held_rounds"] =
      static_cast<double>(engine->counters().short_window_held_rounds);
}
void BM_Round(benchmark::State& state) { Rounds(state, /*locality=*/false); }
// Node 0 between its watermarks, so that every promotion is a swap, with
// and without "Swaps that do not pay" (policy/engine.h): what remembering
// a round's swap pairs and weighing them at the next costs. The static view
// makes every round plan the same swaps, so each round weighs the last
// one's.
void BM_RoundSwaps(benchmark::State& state) {
  Rounds(state, /*locality=*/false, /*swap_payoff=*/true, /*fast_full=*/true);
}
BENCHMARK(BM_RoundSwaps)
    ->Arg(64 << 10)
    ->Arg(256 << 10)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
void BM_RoundSwapsWithoutPayoff(benchmark::State& state) {
  Rounds(state, /*locality=*/false, /*swap_payoff=*/false, /*fast_full=*/true);
}
BENCHMARK(BM_RoundSwapsWithoutPayoff)
    ->Arg(64 << 10)
    ->Arg(256 << 10)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Round)
    ->Arg(64 << 10)
    ->Arg(256 << 10)
    ->Arg(1 << 20)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
// --locality: the hottest-on-fast list, the memory of sharing and rule L's
// evidence (policy/engine.h) on top.
// A round with nothing new: the fixed cost every round pays. Measured
// (-c opt, CPU, 2 shared cores): 0.9 ms at a 64k-page footprint, 2.3 ms at
// 1M, no function above 7% (callgrind: the placement's sorts and
// comparisons, the table read, the count prior's grid, log/exp). The
// hint-fault guest of tests/compare shows such rounds at 54-250 ms of wall
// time: TCG emulation, not a hot spot. A process of
// `footprint` 4 KiB pages whose 6,144 hot pages were sampled once, before
// the first round (the guest of tests/compare: 48k pages, one hint-fault
// pass), then rounds with no samples.
void BM_QuietRound(benchmark::State& state) {
  const size_t footprint = static_cast<size_t>(state.range(0));
  const Topology topo = TwoTiers();
  // The table sized by the footprint, as attach sizes it.
  std::unique_ptr<PolicyEngine> engine =
      MakeEngine(topo, footprint, /*locality=*/false, /*by_footprint=*/true);
  HalfAndHalfView view;
  engine->Start(0);
  engine->Ingest(Samples(6144, 6144, kSec / 2));
  uint64_t t = kSec;
  engine->RunRound(view, t);
  for (auto _ : state) {
    t += kSec;
    RoundReport r = engine->RunRound(view, t);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_QuietRound)
    ->Arg(64 << 10)
    ->Arg(1 << 20)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// A room round (policy/engine.h, "A room round reads no table") beside
// the full round it stands in for: the table holds N live entries (as in
// BM_Round) and node 0, of 1 GiB, has one page free, so each full round
// demotes it to its high watermark (4%, 10,486 pages) and leaves that room;
// 10,600 new pages first touched on node 0 use it up, and the timed round
// is the room round they bring: the last full round's victims and the new
// pages' nodes, not the table.
class NoRoomView : public HalfAndHalfView {
 public:
  std::vector<NodeFree> Free() override { return {{0, kPage}, {1, 8 * kGiB}}; }
};

void BM_RoomRound(benchmark::State& state) {
  const size_t pages = static_cast<size_t>(state.range(0));
  Topology topo = TwoTiers();
  topo.nodes[0].memory_bytes = kGiB;
  // No shift detector: the new pages would read as a shift (nothing else
  // is sampled between the two rounds), which makes a full round.
  EngineOptions opt;
  opt.address_space = kPid;
  opt.footprint_pages = pages;
  opt.shift_z = 0;
  absl::StatusOr<std::unique_ptr<PolicyEngine>> made =
      PolicyEngine::Create(topo, PlacementConfig(), opt);
  if (!made.ok()) std::abort();
  std::unique_ptr<PolicyEngine> engine = std::move(*made);
  NoRoomView view;
  engine->Start(0);
  uint64_t t = kSec;
  uint64_t next_new = 2 * pages;  // even pages past the table's: node 0
  // A first round places the pages: the next has a share to arm the room.
  engine->Ingest(Samples(pages, pages * 4, t - kSec / 2));
  engine->RunRound(view, t);
  t += kSec;
  for (auto _ : state) {
    state.PauseTiming();
    engine->Ingest(Samples(pages, pages * 4, t - kSec / 2));
    engine->RunRound(view, t);  // the full round, untimed
    std::vector<Sample> fresh;
    for (int i = 0; i < 10600; ++i, next_new += 2) {
      Sample s;
      s.vaddr = kBase + next_new * kPage;
      s.time_ns = t + kSec / 8;
      s.pid = kPid;
      s.period = 1;
      fresh.push_back(s);
    }
    engine->Ingest(fresh);
    const uint64_t at = engine->next_round_ns();
    state.ResumeTiming();
    RoundReport r = engine->RunRound(view, at);
    if (!r.room_round) {
      state.SkipWithError("the new pages brought no room round");
      break;
    }
    benchmark::DoNotOptimize(r);
    state.counters["demoted"] = static_cast<double>(r.decision.demoted_pages);
    t += kSec;
  }
}
BENCHMARK(BM_RoomRound)
    ->Arg(64 << 10)
    ->Arg(256 << 10)
    ->Arg(1 << 20)
    ->Iterations(5)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_RoundLocality(benchmark::State& state) {
  Rounds(state, /*locality=*/true);
}
BENCHMARK(BM_RoundLocality)
    ->Arg(64 << 10)
    ->Arg(256 << 10)
    ->Arg(1 << 20)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_Ingest(benchmark::State& state) {
  const size_t pages = static_cast<size_t>(state.range(0));
  const Topology topo = TwoTiers();
  std::unique_ptr<PolicyEngine> engine = MakeEngine(topo, pages);
  engine->Start(0);
  const std::vector<Sample> samples = Samples(pages, 4096, kSec / 2);
  for (auto _ : state) engine->Ingest(samples);
  state.SetItemsProcessed(state.iterations() *
                          static_cast<int64_t>(samples.size()));
}
BENCHMARK(BM_Ingest)->Arg(64 << 10)->Arg(1 << 20);

// The same after a round that moved pages (half the pages are on the slow
// node and get promoted): every sample also looks its entry up in the
// moved entries' map (the yield and regret statistics, engine.h). With
// regret (one map of directions in place of the promoted set, the same one
// lookup), three interleaved runs each, -c opt: 64k entries 10.0-15.3M
// samples/s before, 9.2-12.5M after; 1M entries 7.3-10.0M and 7.2-8.3M
// (noise on these shared cores; BM_Ingest in the same runs 25-34M both).
void BM_IngestAfterMoves(benchmark::State& state) {
  const size_t pages = static_cast<size_t>(state.range(0));
  const Topology topo = TwoTiers();
  std::unique_ptr<PolicyEngine> engine = MakeEngine(topo, pages);
  HalfAndHalfView view;
  engine->Start(0);
  const std::vector<Sample> samples = Samples(pages, 4096, kSec / 2);
  engine->Ingest(Samples(pages, pages * 4, kSec / 2));
  const RoundReport r = engine->RunRound(view, kSec);
  for (auto _ : state) engine->Ingest(samples);
  state.SetItemsProcessed(state.iterations() *
                          static_cast<int64_t>(samples.size()));
  state.counters["moved_entries"] =
      static_cast<double>(r.decision.promoted_pages + r.decision.demoted_pages);
}
BENCHMARK(BM_IngestAfterMoves)->Arg(64 << 10)->Arg(1 << 20);

}  // namespace
}  // namespace hotpage
