// Simulation: the replay loop. One stream of time-ordered samples, fanned
// out to every policy (each with its own SimulatedMemory), scored per
// interval.
//
// For each sample at time t:
//   1. if t crosses an interval boundary B (intervals are --interval-ms
//      long, from the first sample's time), every policy first runs what
//      is due before B (Advance(B - 1)), then the interval is closed: each
//      policy's tally, the observer's OnIntervalEnd. Intervals without
//      samples are not listed (their moves count in the next listed one);
//   2. every policy whose next event is due runs it (Advance(t));
//   3. every policy gets the sample (OnSample).
// The hotpage engine's rounds fall on start + k * interval, i.e. exactly
// on the boundaries: a round's moves count in the interval after it.
//
// Samples must come in non-decreasing time; a sample older than its
// predecessor is counted (late_samples) and treated as arriving at the
// predecessor's time (the reader's reordering window, sim_trace.h, makes
// this rare).
//
// Determinism: no clocks, no randomness, no iteration over hash order in
// any output; two runs over the same samples give the same tallies.
//
// Thread-compatible.

#ifndef HOTPAGE_TOOLS_SIMULATE_SIM_DRIVER_H_
#define HOTPAGE_TOOLS_SIMULATE_SIM_DRIVER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/types/span.h"
#include "sampler/sample.h"
#include "tools/simulate/sim_policy.h"

namespace hotpage {

struct IntervalRow {
  uint64_t index = 0;                // (start - first sample time) / interval
  uint64_t start_ns = 0;             // relative to the first sample
  std::vector<PolicyTally> tallies;  // per policy, in policy order
};

class Simulation {
 public:
  // `observer` may be null; it must outlive the simulation.
  Simulation(std::vector<std::unique_ptr<SimPolicy>> policies,
             uint64_t interval_ns, SimObserver* observer = nullptr);

  void Feed(absl::Span<const Sample> samples);
  void Feed(const Sample& s);
  // Closes the last interval. Feed() after Finish() is ignored.
  void Finish();

  const std::vector<std::unique_ptr<SimPolicy>>& policies() const {
    return policies_;
  }
  const std::vector<IntervalRow>& intervals() const { return intervals_; }
  // Per policy, the sum of every interval.
  std::vector<PolicyTally> Totals() const;
  uint64_t samples() const { return samples_; }
  uint64_t late_samples() const { return late_samples_; }
  uint64_t start_ns() const { return start_ns_; }
  uint64_t last_ns() const { return last_ns_; }
  uint64_t interval_ns() const { return interval_ns_; }
  // The index of `name` in policies(), or -1.
  int IndexOf(absl::string_view name) const;

 private:
  void CloseInterval();

  std::vector<std::unique_ptr<SimPolicy>> policies_;
  const uint64_t interval_ns_;
  SimObserver* const observer_;
  bool started_ = false;
  bool finished_ = false;
  uint64_t start_ns_ = 0;
  uint64_t last_ns_ = 0;
  uint64_t current_index_ = 0;
  uint64_t current_samples_ = 0;
  uint64_t samples_ = 0;
  uint64_t late_samples_ = 0;
  std::vector<IntervalRow> intervals_;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_SIMULATE_SIM_DRIVER_H_
