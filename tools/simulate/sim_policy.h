// The replay simulator's policies behind one interface, and what they are
// scored on.
//
// The simulation loop (sim_driver.h) feeds every policy the same samples
// in time order. For each sample it first lets the policy catch up with
// time (Advance: the hotpage engine's rounds and its migrator's calls, the
// memtis model's periodic migration, ...), then hands it the sample
// (OnSample). At every interval boundary it asks each policy for the
// interval's tally (EndInterval).
//
// Scoring (MemoryPolicy, every policy but the oracle): every sample is an
// access. Its page is placed by first touch if new (SimulatedMemory::
// Touch), then the access is served by the node the page is on at that
// moment: "fast" if the node is in the fastest tier. Only then does the
// policy react to it (a TPP hint fault promotes after the access that
// caused it).
//
// Latency (policy/loaded_latency.h). An access costs its node's LOADED
// latency over the interval it falls in, plus the remote-package penalty
// from its CPU's node (SLIT). The node's demand is what the interval's
// samples served from it stand for (sum of Sample::period x 64 B / the
// interval length), its utilisation that demand over its peak (HMAT read
// bandwidth, or the preset's); so the tally's latency is only known when
// the interval ends, and EndInterval computes it. Why the interval itself
// and not the previous one: the queue an access waits in is made of the
// accesses around it, i.e. of the same interval; using the previous
// interval would charge a policy's placement with another placement's
// traffic (and be wrong for the first interval and after every move).
// Policies that react to latency (colloid) measure it themselves, causally.
// Not modelled: migration traffic and other processes' traffic (neither is
// in the trace's samples), write bandwidth, link (UPI, CXL port) queues.
// The tally also keeps the idle latency sum (every access at its node's
// idle latency plus the same remote penalty) for comparison.
//
// Policies: sim_hotpage.h (attach's engine and Migrator),
// sim_baselines.h (first-touch, oracle, tpp, memtis), sim_arms.h (arms),
// sim_hemem.h (hemem), sim_colloid.h (colloid).

#ifndef HOTPAGE_TOOLS_SIMULATE_SIM_POLICY_H_
#define HOTPAGE_TOOLS_SIMULATE_SIM_POLICY_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "policy/loaded_latency.h"
#include "sampler/sample.h"
#include "tools/simulate/simulated_memory.h"

namespace hotpage {

// One policy's numbers over an interval (or, summed, the run).
struct PolicyTally {
  uint64_t samples = 0;
  uint64_t fast_samples = 0;       // served by the fastest tier
  double latency_ns_sum = 0;       // modelled (loaded) access latency, summed
  double idle_latency_ns_sum = 0;  // the same accesses at idle latency
  uint64_t promoted_pages = 0;     // 4 KiB pages moved to a faster tier
  uint64_t demoted_pages = 0;
  uint64_t bytes_migrated = 0;  // every move, lateral ones included
  uint64_t pingpongs = 0;       // returns to a tier left within 60 s
  uint64_t migration_ns = 0;    // modelled time spent migrating
  uint64_t oracle_moves = 0;    // oracle only: pages entering the fast set
                                // (informative; not charged as migration)

  void Add(const PolicyTally& o);
  double fast_share() const {
    return samples ? static_cast<double>(fast_samples) /
                         static_cast<double>(samples)
                   : 0.0;
  }
  double avg_latency_ns() const {
    return samples ? latency_ns_sum / static_cast<double>(samples) : 0.0;
  }
  double avg_idle_latency_ns() const {
    return samples ? idle_latency_ns_sum / static_cast<double>(samples) : 0.0;
  }
};

// Hooks for pictures (the SVG report) and tests. Every call happens on the
// simulation's thread, in simulated-time order per policy. `policy` is the
// policy's index in the simulation.
class SimObserver {
 public:
  virtual ~SimObserver() = default;
  // Before the first sample: the policies' names in report order.
  virtual void OnStart(const std::vector<std::string>& policies,
                       uint64_t start_ns) {}
  // One access (every sample, every memory-backed policy): the node that
  // served it. The oracle reports no accesses (it places by interval).
  virtual void OnAccess(size_t policy, uint64_t time_ns, uint64_t vaddr,
                        int node, bool fast) {}
  // A page moved (4 KiB), under `policy`.
  virtual void OnMove(size_t policy, uint64_t time_ns, uint64_t vaddr, int from,
                      int to) {}
  // An interval ended: its index (since the first sample, of --interval-ms)
  // and every policy's tally for it, in policy order.
  virtual void OnIntervalEnd(uint64_t index, uint64_t start_ns, uint64_t end_ns,
                             const std::vector<PolicyTally>& tallies) {}
};

class SimPolicy {
 public:
  explicit SimPolicy(std::string name) : name_(std::move(name)) {}
  virtual ~SimPolicy() = default;
  SimPolicy(const SimPolicy&) = delete;
  SimPolicy& operator=(const SimPolicy&) = delete;

  const std::string& name() const { return name_; }

  // The time of the first sample, once, before anything else.
  virtual void Start(uint64_t start_ns) {}
  // The earliest time at which the policy has something to do on its own;
  // UINT64_MAX: nothing.
  virtual uint64_t next_event_ns() const { return UINT64_MAX; }
  // Does, in time order, everything due at or before `now_ns`.
  virtual void Advance(uint64_t now_ns) {}
  // One sample (time-ordered, never before the last Advance()).
  virtual void OnSample(const Sample& s) = 0;
  // The tally since the previous call; the interval ends at `end_ns`.
  virtual PolicyTally EndInterval(uint64_t end_ns) = 0;
  // Policy-specific totals for the report, in a fixed order.
  virtual std::vector<std::pair<std::string, uint64_t>> Details() const {
    return {};
  }

  void set_observer(SimObserver* observer, size_t index) {
    observer_ = observer;
    index_ = index;
    ObserverChanged();
  }
  // The length of the scoring intervals (Simulation sets it before
  // Start()); demand per interval is measured over it.
  void set_interval_ns(uint64_t interval_ns) { interval_ns_ = interval_ns; }
  uint64_t interval_ns() const { return interval_ns_; }

 protected:
  virtual void ObserverChanged() {}
  SimObserver* observer_ = nullptr;
  size_t index_ = 0;
  uint64_t interval_ns_ = 1000000000;

 private:
  const std::string name_;
};

// A policy whose pages live in a SimulatedMemory: first touch and scoring
// (the file comment) happen here; subclasses react in Access().
class MemoryPolicy : public SimPolicy {
 public:
  MemoryPolicy(std::string name, std::unique_ptr<SimulatedMemory> memory);

  void OnSample(const Sample& s) final;
  PolicyTally EndInterval(uint64_t end_ns) override;

  SimulatedMemory& memory() { return *memory_; }
  const SimulatedMemory& memory() const { return *memory_; }
  const LoadedLatencyModel& latency_model() const { return latency_; }

 protected:
  // After the access was served from `node` (>= 0; samples whose page
  // could not be placed anywhere are scored as slow and not passed on).
  virtual void Access(const Sample& s, int node) {}
  void ObserverChanged() override;

 private:
  // This interval's accesses per node (by node id), for the loaded
  // latency at its end.
  struct NodeLoad {
    uint64_t samples = 0;
    double accesses = 0;  // sum of the samples' periods
  };

  std::unique_ptr<SimulatedMemory> memory_;
  const LoadedLatencyModel latency_;
  PolicyTally current_;
  std::vector<NodeLoad> load_;
  double penalty_ns_sum_ = 0;  // remote-package penalties, this interval
  SimMemoryCounters last_;
  double slowest_latency_ns_ = 0;
};

// The first-touch baseline: the kernel's default placement, no migration.
class FirstTouchPolicy : public MemoryPolicy {
 public:
  explicit FirstTouchPolicy(std::unique_ptr<SimulatedMemory> memory)
      : MemoryPolicy("first-touch", std::move(memory)) {}
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_SIMULATE_SIM_POLICY_H_
