// The ARMS model for the replay simulator: ARMS (Yadalam, Kanellis, Swift,
// Venkataraman, "ARMS: Adaptive and Robust Memory Tiering System", arXiv
// 2508.04417, 2025), a user-space daemon that samples memory accesses with
// PEBS and places pages without per-workload thresholds. What is known of
// it: two exponentially weighted moving averages (EWMAs) of each page's
// access rate, a short one (1 s) and a long one (10 s), with a recency
// bias that adapts: a CUSUM / Page-Hinkley change detector switches the
// ranking to the short average when the hot set changes; migration only
// when the estimated benefit exceeds 1.5x the estimated cost; a batched
// mover under a bandwidth budget.
//
// Mechanism, as modelled (every `period_ns`, the policy's interval):
//
//   samples --> each page's accesses in the period (a sample stands for
//     |         Sample::period accesses, as PEBS' sample period says)
//     v
//   EWMAs: short += a_s (rate - short), long += a_l (rate - long), with
//     |    a = 1 - exp(-period / tau) for tau = 1 s and 10 s (rates in
//     |    accesses per second)
//     v
//   change detector on the fast tier's share x of the period's samples (a
//     |    hot-set change shows as a drop of x): a one-sided tabular CUSUM
//     |    S = max(0, S + (mu - x) / sigma - k), alarm when S > h, with mu
//     |    and sigma^2 the stream's own EWMA mean and variance at the long
//     |    time constant (sigma at least the binomial noise of x, from the
//     |    Agresti-Coull estimate of the share); after an alarm S restarts
//     |    at 0 and the ranking uses the short average for `shift_hold_ns`
//     v
//   ranking score: the short EWMA while a shift is held, else the long one
//     |
//     v
//   swaps: slow-tier pages hottest first, paired with fast-tier pages
//          coldest first (a free fast page, if any, needs no partner).
//          A move happens only if benefit > 1.5 x cost, where
//            benefit = (rate_hot x (lat(hot's node) - lat(fast node))
//                       - rate_cold x (lat(demotion node) - lat(fast node)))
//                      x horizon
//            cost    = the moved pages' SimulatedMemory::MoveCostNs
//          (MigrationCost: per-page work plus the 4 KiB copy at the
//          smaller bandwidth). The pairs are sorted, so the first pair that
//          fails the test (or a partner no colder than the hot page) ends
//          the period's swaps; so does the migration budget.
//
// Parameters (ArmsOptions), each with its source:
//   short_tau_ns 1 s, long_tau_ns 10 s: the paper's two averages;
//   benefit_cost_ratio 1.5: the paper's migration test;
//   The paper as known here states none of the rest; each is chosen from
//   first principles, never fitted to the bundled traces:
//   period_ns 1 s: the short average's time constant; the ranking cannot
//     change much faster than its fastest average;
//   horizon_ns = period_ns: a move's benefit is counted over the one
//     period the placement is sure to last before the next decision (a
//     lower bound; rates of 1+ samples per second clear the test by far);
//   budget_bytes_per_sec 256 MB/s: hotpage's migrator default, so that
//     both user-space daemons move pages under the same bandwidth (ARMS'
//     mover is "bandwidth-aware"; its budget is not published);
//   cusum_k 0.5, cusum_h 5 (in units of sigma): the textbook tabular CUSUM
//     design (Montgomery, "Introduction to Statistical Quality Control",
//     section 9.1: k = sigma/2 detects a one-sigma shift fastest, h = 5
//     sigma: an in-control average run length of about 930 periods for
//     this one-sided test, Siegmund's approximation);
//   warmup: no test before the reference has seen long_tau / period
//     periods (one long time constant);
//   shift_hold_ns = long_tau_ns: after an alarm the short average ranks
//     until the long average has had one time constant to follow the new
//     hot set;
//   default_sample_period 5003: accesses per sample for a trace whose
//     samples carry no period (ARMS' PEBS load period).
//
// Not modelled:
//   - per-tier latency-vs-bandwidth curves and the iMC bandwidth counters
//     (ARMS estimates loaded latency): latencies are each node's idle read
//     latency (HMAT or the preset's), and the budget is fixed;
//   - 2 MB pages: 4 KiB pages, as everywhere in the simulator;
//   - the mover's batching into move_pages(2) calls and their fixed cost:
//     pages move directly through SimulatedMemory::Move, as the tpp and
//     memtis models do;
//   - ARMS' exact detector inputs (the paper's "hot-change detector"): the
//     fast tier's share of samples is the stream modelled here.
//
// Thread-compatible (the simulation's thread).

#ifndef HOTPAGE_TOOLS_SIMULATE_SIM_ARMS_H_
#define HOTPAGE_TOOLS_SIMULATE_SIM_ARMS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tools/simulate/sim_baselines.h"
#include "tools/simulate/sim_policy.h"

namespace hotpage {

struct ArmsOptions {
  uint64_t period_ns = 1000000000;        // first principles (header)
  uint64_t short_tau_ns = 1000000000;     // ARMS: 1 s average
  uint64_t long_tau_ns = 10000000000;     // ARMS: 10 s average
  double benefit_cost_ratio = 1.5;        // ARMS: benefit > 1.5x cost
  uint64_t horizon_ns = 1000000000;       // = period_ns (header)
  double budget_bytes_per_sec = 256e6;    // hotpage's migrator default
  double cusum_k = 0.5;                   // Montgomery section 9.1
  double cusum_h = 5.0;                   // Montgomery section 9.1
  uint64_t shift_hold_ns = 10000000000;   // = long_tau_ns (header)
  uint64_t default_sample_period = 5003;  // ARMS' PEBS load period
  bool detect_shifts = true;              // false: long average only (tests)
};

class ArmsPolicy : public PeriodicPolicy {
 public:
  ArmsPolicy(std::unique_ptr<SimulatedMemory> memory,
             const ArmsOptions& options);
  std::vector<std::pair<std::string, uint64_t>> Details() const override;

  // Tests: a page's averages (accesses per second; 0 if never sampled),
  // whether the ranking uses the short average now, alarms so far.
  double ShortRateOf(uint64_t vaddr) const;
  double LongRateOf(uint64_t vaddr) const;
  bool shift_mode() const { return shift_mode_; }
  uint64_t detections() const { return detections_; }

 protected:
  void Access(const Sample& s, int node) override;

 private:
  struct Page {
    uint64_t vaddr = 0;
    double accesses = 0;  // in the current period
    double short_rate = 0, long_rate = 0;
    int node = -1;  // where it is (only this policy moves its pages)
  };
  bool MovePage(Page& p, int to, uint64_t now);
  double Score(const Page& p) const {
    return shift_mode_ ? p.short_rate : p.long_rate;
  }
  void Tick(uint64_t now) override;
  void Detect(uint64_t now);
  void Migrate(uint64_t now);

  const ArmsOptions options_;
  double a_short_ = 0, a_long_ = 0, a_ref_ = 0;  // EWMA weights per period
  uint64_t budget_pages_ = 0;                    // per period
  uint64_t warmup_periods_ = 0;
  SampledPages<Page> pages_;
  // The period's samples and those the fast tier served.
  uint64_t period_samples_ = 0, period_fast_ = 0;
  // Detector state.
  uint64_t observed_periods_ = 0;
  double ref_mean_ = 0, ref_var_ = 0, cusum_ = 0;
  uint64_t shift_until_ns_ = 0;
  bool shift_mode_ = false;
  std::vector<uint32_t> slow_, fast_;  // scratch
  uint64_t ticks_ = 0, detections_ = 0, shift_ticks_ = 0;
  uint64_t promotions_ = 0, demotions_ = 0, refused_by_cost_ = 0,
           budget_stops_ = 0;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_SIMULATE_SIM_ARMS_H_
