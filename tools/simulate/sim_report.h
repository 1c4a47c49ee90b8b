// What `hotpage simulate` prints and writes: the comparison table (stdout)
// and the JSON report (--report FILE.json).
//
// The JSON report, per policy, the totals and every interval:
//   fast_share       sampled accesses served by the fastest tier / all
//   of_oracle        fast_share / the oracle's (null without an oracle)
//   avg_latency_ns   modelled mean access latency, loaded (sim_policy.h:
//                    each node's latency at its utilisation in the
//                    interval, plus the remote-package penalty)
//   avg_idle_latency_ns  the same accesses at their nodes' idle latency
//   promoted_pages, demoted_pages, bytes_migrated, pingpongs,
//   migration_ms     (modelled time spent migrating), oracle_moves
// plus the run's setup (trace, pid, footprint, machine and capacities,
// interval, options) and each policy's details. Byte-identical across runs
// of the same inputs: no wall times, keys in a fixed order, doubles
// rounded to 6 decimals before %.6g, nothing from hash-map iteration.

#ifndef HOTPAGE_TOOLS_SIMULATE_SIM_REPORT_H_
#define HOTPAGE_TOOLS_SIMULATE_SIM_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tools/simulate/sim_driver.h"
#include "tools/simulate/sim_machine.h"

namespace hotpage {

struct SimRunInfo {
  std::string trace;         // as given on the command line
  std::string trace_format;  // "hpt", "perf.data"
  uint32_t pid = 0;
  uint64_t trace_samples = 0;  // all pids
  uint64_t pids_in_trace = 0;
  uint64_t out_of_order = 0;  // arrived before an earlier-timed sample
  uint64_t late_samples = 0;  // beyond the reordering window
  std::string topology;       // preset name or file
  std::string capacity;       // "ratio 1:4" or "fast-capacity 65536 bytes"
  uint64_t interval_ms = 0;
  uint64_t rate_limit_mbps = 0;
  std::string engine_flags;  // the hotpage policy's; empty: attach's defaults
  std::string source = "trace";  // the hotpage policy's (sim_fault_source.h)
  bool kernel_demotion = false;  // SimulateOptions::kernel_demotion
  uint64_t memtis_cooling_samples = 0;
  const SimMachine* machine = nullptr;
};

// The comparison table, one row per policy (oracle first when present):
// policy, fast-tier share, % of oracle, avg loaded latency ns, promoted,
// demoted, MB migrated, ping-pongs.
std::string ComparisonTable(const Simulation& sim);

std::string ReportJson(const SimRunInfo& info, const Simulation& sim);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_SIMULATE_SIM_REPORT_H_
