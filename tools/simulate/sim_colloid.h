// colloid: Colloid (Vuppalapati and Agarwal, "Tiered Memory Management:
// Access Latency is the Key!", SOSP'24) on top of a hotness ranking, as a
// simulator peer. Colloid places pages so as to balance the tiers' LOADED
// access latencies instead of packing the hottest pages on the fastest
// tier: under bandwidth contention it stops promoting and moves hot pages
// to the slow tier. Its code (github.com/host-architecture/colloid)
// integrates with HeMem, TPP and MEMTIS; this model runs on a count
// ranking like the memtis model's (sim_baselines.h), i.e. colloid-memtis.
// Every parameter below is the paper's or its code's; none is tuned to
// the bundled traces.
//
// Measurement (paper section 4.1; colloid-mon). Colloid reads each tier's
// CHA occupancy and inserts, smooths both with an EWMA of weight 1/32
// (EWMA_EXP 5) and takes their ratio as the tier's loaded latency (Little's
// law). Its HeMem integration spin-polls the counters (SPINPOLL), so the
// EWMA's time constant (32 polls) is far below the 500 ms quantum. Here
// the counters come from the simulation: every poll_period_ns (1 ms:
// 32 ms of smoothing, still far below the quantum; polling every 10 ms,
// the memtis integration's SAMPLE_INTERVAL_MS, with 1/32 lags 320 ms and
// made this model overshoot by a whole quantum) each node's inserts since
// the last poll (the sum of its samples' periods) are smoothed with weight
// 1/32; the node's latency is policy/loaded_latency.h at the smoothed
// rate, its occupancy smoothed inserts x latency, summed over each side's
// nodes. (Smoothing the rate before the curve, not the latency after it:
// a 1 ms poll holds a handful of samples, and the convex curve of a noisy
// rate would read high.) A side without inserts yet reads as its idle
// latency (colloid-mon's MIN_*_LAT floors). The remote-package penalty is
// not measured (CHA counters see the local package's traffic); the two
// sides are the fastest tier and all others.
//
// Placement (paper section 4.2, Algorithm 1; the memtis integration). Every
// quantum (500 ms, MIGRATION_QUANTUM_MS, = memtis' migration period):
//   p      = smoothed fast-tier inserts / all inserts (share of accesses
//            the fast tier serves);
//   L_D, L_A the fast ("default") and the slow ("alternate") tiers'
//            smoothed latencies;
//   if |L_D - L_A| <= delta (5%, COLLOID_DELTA_PERCENT) of L_D: no move;
//   else binary search on p: if L_D < L_A, p_lo = p (p_hi back to 1 when
//   p_hi <= p_lo), else p_hi = p (p_lo back to 0 when p_lo >= p_hi); when
//   p_hi - p_lo < epsilon (1%, COLLOID_EPSILON_PERCENT) the far bound is
//   reset (1 or 0) so that a changed workload can move p again; the target
//   is (p_lo + p_hi) / 2 and delta_p = |target - p|.
//   L_D < L_A: promote slow-tier pages, hottest first, each whose access
//     probability (its count / all counts) fits in what is left of
//     delta_p, to the accessing CPU's node if it has room (memtis' 2%
//     free watermark), else another fast node; a full fast tier makes
//     room by demoting a page colder than the candidate, the coldest of
//     the CPU's node first (the host's capacity demotion).
//   L_D > L_A: demote fast-tier pages, hottest first, each whose
//     probability fits in what is left of delta_p (to the node's
//     demotion target).
// The ranking: per-page sample counts, halved every cooling_samples
// samples (the memtis model's cooling, scaled to the trace by
// MemtisCoolingSamples).
// A property of the algorithm, kept: a page whose probability exceeds
// delta_p never moves, so on a light load colloid stops promoting once
// (1 - p) / 2 is below the hottest slow page's probability (within about
// 1% of the accesses for many small pages; sim_colloid_test).
//
// Thread-compatible, like every SimPolicy.

#ifndef HOTPAGE_TOOLS_SIMULATE_SIM_COLLOID_H_
#define HOTPAGE_TOOLS_SIMULATE_SIM_COLLOID_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tools/simulate/sim_baselines.h"
#include "tools/simulate/sim_policy.h"

namespace hotpage {

struct ColloidOptions {
  uint64_t poll_period_ns = 1000000;   // 1 ms: see the file comment
  double ewma_weight = 1.0 / 32;       // EWMA_EXP 5
  uint64_t quantum_ns = 500000000;     // MIGRATION_QUANTUM_MS 500
  double delta = 0.05;                 // COLLOID_DELTA_PERCENT 5
  double epsilon = 0.01;               // COLLOID_EPSILON_PERCENT 1
  uint64_t cooling_samples = 2000000;  // the ranking's (memtis model)
  double free_watermark = 0.02;        // memtis' fast-tier free share
};

class ColloidPolicy : public MemoryPolicy {
 public:
  ColloidPolicy(std::unique_ptr<SimulatedMemory> memory,
                const ColloidOptions& options);
  void Start(uint64_t start_ns) override;
  uint64_t next_event_ns() const override;
  void Advance(uint64_t now_ns) override;
  std::vector<std::pair<std::string, uint64_t>> Details() const override;

  // The smoothed loaded latencies of the fast and the slow side (tests).
  double fast_latency_ns() const;
  double slow_latency_ns() const;

 protected:
  void Access(const Sample& s, int node) override;

 private:
  struct Page {
    uint64_t vaddr = 0;
    uint32_t count = 0;
    uint32_t cpu = 0;
  };
  struct Side {            // the fast tier, or all slower ones
    double occupancy = 0;  // sum of smoothed inserts x latency
    double inserts = 0;    // sum of smoothed inserts
    double idle_ns = 0;    // the lowest idle latency of its nodes
  };
  void Poll();
  void Quantum(uint64_t now);
  void Promote(double budget, uint64_t now);
  void Demote(double budget, uint64_t now);
  static double LatencyOf(const Side& s);

  const ColloidOptions options_;
  SampledPages<Page> pages_;
  std::vector<double> poll_accesses_;      // by node id, since the last poll
  std::vector<double> smoothed_accesses_;  // by node id, EWMA per poll
  Side fast_, slow_;
  double p_lo_ = 0, p_hi_ = 1;
  uint64_t total_count_ = 0;  // sum of pages_' counts
  uint64_t since_cooling_ = 0;
  uint64_t next_poll_ns_ = UINT64_MAX;
  uint64_t next_quantum_ns_ = UINT64_MAX;
  std::vector<uint32_t> order_;                 // scratch
  std::vector<std::vector<uint32_t>> victims_;  // by node id; scratch
  std::vector<size_t> next_victim_;             // by node id; scratch
  uint64_t polls_ = 0, quanta_ = 0, balanced_ = 0, promote_quanta_ = 0,
           demote_quanta_ = 0, promotions_ = 0, demotions_ = 0,
           capacity_demotions_ = 0, coolings_ = 0;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_SIMULATE_SIM_COLLOID_H_
