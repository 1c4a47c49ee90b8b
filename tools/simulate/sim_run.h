// One `hotpage simulate` run as a library call: survey the trace (pass 1),
// scale the machine, build the policies, replay the trace through them
// (pass 2). cmd_simulate.cc adds the command line and the output; tests
// call SimulateTrace directly.

#ifndef HOTPAGE_TOOLS_SIMULATE_SIM_RUN_H_
#define HOTPAGE_TOOLS_SIMULATE_SIM_RUN_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "policy/engine.h"
#include "policy/placement.h"
#include "tools/simulate/sim_driver.h"
#include "tools/simulate/sim_fault_source.h"
#include "tools/simulate/sim_machine.h"
#include "tools/simulate/sim_policy.h"
#include "tools/simulate/sim_report.h"

namespace hotpage {

// Every policy, in the order "all" runs and reports them.
std::vector<std::string> AllPolicyNames();

struct SimulateOptions {
  std::string trace;
  std::string topology = "dram+cxl";  // a preset, or a topology JSON file
  CapacitySpec capacity;
  // "all" or one name; a single policy other than the oracle runs with the
  // oracle beside it (for "% of oracle").
  std::string policy = "all";
  uint64_t interval_ms = 1000;
  uint64_t rate_limit_mbps = 256;  // the hotpage policy's migrator
  // The hotpage policy's placement rules (the engine flags, as attach takes
  // them: tools/engine_flags.h); attach's defaults unless set. Checked by
  // CheckSimulatedPlacement and against the topology.
  PlacementConfig placement;
  // The engine flags as given ("--weights 0:3,1:1"), for the report; empty
  // when none was.
  std::string engine_flags;
  std::optional<uint32_t> pid;  // default: the pid with most samples
  // >= 0: first touch places pages on this node (SimulatedMemoryOptions).
  int first_touch_node = -1;
  // The NUMA scanner's cost of changing a PTE (NumaScannerOptions::
  // scan_ns_per_pte: the tpp model's, and the hotpage policy's with
  // source kHintFault); 0: not modelled.
  uint64_t scan_ns_per_pte = 0;
  // What the hotpage policy sees of the trace (sim_fault_source.h).
  SimSource source = SimSource::kTrace;
  // The kernel demotes on reclaim (demotion_enabled) under the hotpage
  // policy: its memory reclaims (SimulatedMemoryOptions::reclaim_demotes)
  // and attach's engine options follow (ApplySourceEngineOptions).
  bool kernel_demotion = false;
  SimObserver* observer = nullptr;
  // Each round of the hotpage policy's engine as it ends, with the
  // replay's start (its first sample's time: `--rounds`,
  // tools/round_log.h); may be null.
  std::function<void(const RoundReport&, uint64_t start_ns)> hotpage_rounds;
  // (pass 1 or 2, bytes read, total bytes); may be null.
  std::function<void(int, uint64_t, uint64_t)> progress;
};

struct SimulateResult {
  SimRunInfo info;
  std::unique_ptr<SimMachine> machine;
  std::unique_ptr<Simulation> sim;
  std::string notes;  // what the user should know (pid choice), one per line
};

// Errors: bad options (unknown policy or preset, unreadable topology file),
// the trace's (missing, not a trace, damaged, empty), a pid without samples.
absl::StatusOr<SimulateResult> SimulateTrace(const SimulateOptions& options);

// Whether the simulator can apply `placement`'s rules. A trace records
// accesses (address, time, CPU), not the process's memory policies
// (numa_maps), and the simulated memory places every page under the default
// policy. So rule I (--keep-interleave), which acts only on interleaved
// ranges, could never act: InvalidArgument saying so. Rule H
// (--huge-strict) takes a huge page's preferred node from its range's
// policy, else from --promote-to: without promote_to, InvalidArgument
// asking for it. Every other rule works from the trace (accessor CPUs) and
// the topology (packages; --weights kernel = NodeInfo::weight, 1 on the
// presets; auto = HMAT read bandwidth).
absl::Status CheckSimulatedPlacement(const PlacementConfig& placement);

// The machine for `topology` (preset name or file).
absl::StatusOr<Topology> LoadTopology(const std::string& topology);

// Memtis' cooling period for a trace of `samples` over `duration_ns`: the
// samples of 4 s (sim_baselines.h says why).
uint64_t MemtisCoolingSamples(uint64_t samples, uint64_t duration_ns);

// The policies named (AllPolicyNames() order), on `machine`; `start_ns` is
// unused until Start(). `machine` must outlive them.
absl::StatusOr<std::vector<std::unique_ptr<SimPolicy>>> BuildPolicies(
    const std::vector<std::string>& names, const SimMachine& machine,
    const SimulateOptions& options, uint64_t memtis_cooling_samples);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_SIMULATE_SIM_RUN_H_
