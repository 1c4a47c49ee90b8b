// The "hotpage" policy of the replay simulator: `hotpage attach`'s decision
// loop, unchanged, over simulated memory.
//
// The same PolicyEngine (policy/engine.h) attach builds, with attach's
// defaults (PlacementConfig{}, EngineOptions{} with the interval of
// --interval-ms, one round per interval starting one interval after the
// first sample), fed the samples in batches as attach's sampler poll feeds
// them. Each round runs on the SimulatedMemory as its MemoryView (page
// nodes from the map, free memory from the capacities, ping-pong holds and
// ENOMEM back-offs from the Migrator), and its moves go, as the 4 KiB
// MoveRequests cmd_attach.cc builds (AppendMoveRequests: the round's
// demotions first), to attach's Migrator class with attach's
// MigratorOptions (--rate-limit-mbps, 256 MB/s by default), run in
// simulated time by a SimMigration (sim_migration.h) over the same memory.
// tools/engine_equivalence_test checks that this view and attach's
// LiveMemoryView make the engine decide the same moves, and that the two
// Migrators make the same move_pages calls.
//
// Rounds fall on start + k * interval in trace time; every one runs, also
// across gaps in the trace (attach's loop runs a round whenever one is due
// too), and the Migrator's rounds between them run at their own simulated
// times.
//
// With a fault source (HotpagePolicyOptions::source, sim_fault_source.h)
// the engine sees only the faults that source would take, and the policy
// runs attach's loop as tools/attach/attach_loop.cc does: a poll every
// kPollNs (50 ms, the sampler's poll timeout) of trace time hands the
// faults since the last poll to the engine, lets the write re-arm run,
// places the pages that arrived (PolicyEngine::PlaceArrivals, hint faults)
// and then runs a round that is due unless it waits for arrivals
// (RoundWaitsForArrivals). A round thus runs at the first poll at or after
// its time. With the hint-fault source the faults pass attach's
// FirstTouchFilter first (sampler/hintfault/first_touch_filter.h), fed the
// simulated process's resident set: the pages first touched so far (none
// grow when the trace's pages were present at its start).

#ifndef HOTPAGE_TOOLS_SIMULATE_SIM_HOTPAGE_H_
#define HOTPAGE_TOOLS_SIMULATE_SIM_HOTPAGE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "migrator/migrator.h"
#include "policy/engine.h"
#include "policy/placement.h"
#include "sampler/hintfault/first_touch_filter.h"
#include "tools/simulate/sim_fault_source.h"
#include "tools/simulate/sim_migration.h"
#include "tools/simulate/sim_policy.h"
#include "tools/simulate/simulated_memory.h"

namespace hotpage {

struct HotpagePolicyOptions {
  // attach's defaults, or the engine flags (tools/engine_flags.h). With any
  // rule or --promote-to set, Details() adds
  // planned_promotions_to_node_N (4 KiB pages promoted into node N, by the
  // rounds' decisions), locality_pages (rule L's moves) and
  // huge_preferred_full (rule H's skips: huge pages whose preferred nodes
  // could not take them, each a 2 MiB page). locality_pages counts 4 KiB.
  PlacementConfig placement;
  EngineOptions engine;      // interval_ns from --interval-ms
  MigratorOptions migrator;  // rate_limit_bytes_per_sec from --rate-limit-mbps
  MigrationCost cost;
  // What the engine sees of the trace (sim_fault_source.h): every sample,
  // or one PMU-less source's faults. With a fault source the engine options
  // take that source's settings from attach's (ApplySourceEngineOptions)
  // and Details() adds the source's counters.
  SimSource source = SimSource::kTrace;
  // The kernel demotes on reclaim (the policy's memory must reclaim too:
  // SimulatedMemoryOptions::reclaim_demotes); passed to
  // ApplySourceEngineOptions.
  bool kernel_demotion = false;
  SimFaultSourceOptions fault;
  // The hint-fault source's faults pass attach's first-touch filter (the
  // header). false: every fault reaches the engine, as before the filter
  // (tests, to show what it changes).
  bool first_touch_filter = true;
};

class HotpagePolicy : public MemoryPolicy {
 public:
  // `topology` (the scaled machine) must outlive the policy.
  static absl::StatusOr<std::unique_ptr<HotpagePolicy>> Create(
      const Topology& topology, std::unique_ptr<SimulatedMemory> memory,
      const HotpagePolicyOptions& options);

  void Start(uint64_t start_ns) override;
  uint64_t next_event_ns() const override;
  void Advance(uint64_t now_ns) override;
  std::vector<std::pair<std::string, uint64_t>> Details() const override;

  PolicyEngine& engine() { return *engine_; }
  SimMigration& migration() { return *migration_; }
  // Called after every round with its report (tests, pictures).
  void set_round_listener(std::function<void(const RoundReport&)> l) {
    round_listener_ = std::move(l);
  }

 protected:
  void Access(const Sample& s, int node) override;

 private:
  HotpagePolicy(std::unique_ptr<SimulatedMemory> memory,
                std::unique_ptr<PolicyEngine> engine,
                const HotpagePolicyOptions& options);
  // Hands the batch to the engine at `now_ns` (through the first-touch
  // filter, if any).
  void Flush(uint64_t now_ns);
  // The simulated process's resident set for the filter (4 KiB pages; 0:
  // unknown).
  uint64_t ResidentPages();
  void Round(uint64_t t);
  // With a fault source: one poll of attach's loop at `t` (the header).
  void Poll(uint64_t t);

  const HotpagePolicyOptions options_;
  std::unique_ptr<PolicyEngine> engine_;
  std::unique_ptr<SimMigration> migration_;
  std::unique_ptr<SimFaultSource> fault_;          // null: every sample
  std::unique_ptr<FirstTouchFilter> first_touch_;  // hint faults only
  std::vector<Sample> kept_;                       // what the filter passed
  uint64_t next_poll_ns_ = UINT64_MAX;
  uint64_t rounds_waited_ = 0;  // polls at which a due round waited
  std::vector<Sample> batch_;
  std::vector<MoveRequest> requests_;
  std::function<void(const RoundReport&)> round_listener_;
  uint64_t decided_promotions_ = 0, decided_demotions_ = 0;
  uint64_t unit_requests_ = 0;
  // The last round's benefit-against-cost inputs (Details).
  uint64_t horizon_ms_ = 0;
  // The last round's repeat window with reclaim making room (the engine's
  // RoundReport::repeat_window_s), in ms.
  uint64_t repeat_window_ms_ = 0;
  uint64_t migration_cost_ns_ = 0;
  // Only with a non-default placement (the engine flags), so that the
  // default run's report stays as it was: planned promotions by target
  // node (4 KiB pages; rule W/P/--promote-to), rule L's moves, rule H's
  // skips.
  bool flag_details_ = false;
  std::map<int, uint64_t> planned_promotions_to_;
  uint64_t locality_pages_ = 0, huge_preferred_full_ = 0;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_SIMULATE_SIM_HOTPAGE_H_
