// What the simulator's hotpage policy sees of the trace's accesses: every
// sample (a PMU's view, the default), or only the faults one of attach's
// PMU-less sources would take on them.
//
// `hotpage simulate --source` / `sim_hotset --source`:
//   trace       every sample of the trace (PEBS or IBS, or what the trace
//               recorded);
//   hintfault   `hotpage attach --source hintfault`: the kernel's NUMA
//               scanner in tiering mode, with attach's promotion rate limit
//               of 0 (no fault promotes, so the period never doubles),
//               arms the slow-tier pages (sim_numa_scanner.h); the first
//               access of an armed page is a fault, which the sampler
//               reads; so is a page's first access, its first touch (the
//               page-fault event counts every fault: first_touch_filter.h),
//               unless the trace's pages were present at its start
//               (NumaScannerOptions::present_at_start);
//   writefault  `hotpage attach --source pagefault --write-faults`: the
//               re-arm (sampler/write_fault_rearm.h, the same class attach
//               runs, its clear_refs write a generation counter here)
//               write-protects every page; the first store to a page after
//               a re-arm is a fault, which the sampler reads. Loads never
//               fault.
// A fault reaches the engine as the page-fault sampler delivers it: the
// access's address, CPU and time, SampleSource::kPageFault, period 1, no
// level or latency. The engine's options for the source come from attach's
// (ApplySourceEngineOptions: a hint fault weighs 8 and is placed as it
// arrives). The policy then runs attach's loop (sim_hotpage.h): a poll every
// 50 ms of trace time that hands the faults over, places arrivals and runs
// a round that is due.
//
// The model's limits, stated: the first SAMPLED access of an armed page
// stands for its first access (one sample per `period` accesses, so the
// fault comes up to a period's accesses late), and a page's first sample
// for its first touch; page faults other than these (the kernel's own hint
// faults on pages placed before the trace, file pages mapped again) are not
// in a trace; the scanner's limits are sim_numa_scanner.h's; the faults'
// cost to the workload is not charged.

#ifndef HOTPAGE_TOOLS_SIMULATE_SIM_FAULT_SOURCE_H_
#define HOTPAGE_TOOLS_SIMULATE_SIM_FAULT_SOURCE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sampler/sample.h"
#include "tools/simulate/sim_numa_scanner.h"
#include "tools/simulate/simulated_memory.h"

namespace hotpage {

enum class SimSource { kTrace, kHintFault, kWriteFault };

// "trace", "hintfault", "writefault"; InvalidArgument naming them otherwise.
absl::StatusOr<SimSource> ParseSimSource(absl::string_view name);
const char* SimSourceName(SimSource source);
// The name attach gives the source (its --source, after auto): what
// ApplySourceEngineOptions takes. "trace" for kTrace.
const char* AttachSourceName(SimSource source);

struct SimFaultSourceOptions {
  // hintfault: the scanner (present_at_start from --first-touch-node,
  // scan_ns_per_pte from the trace's header or --scan-ns-per-pte).
  NumaScannerOptions scanner;
};

class SimFaultSource {
 public:
  // nullptr for kTrace. `memory` must outlive the source.
  static std::unique_ptr<SimFaultSource> Create(
      SimSource source, const SimulatedMemory& memory,
      const SimFaultSourceOptions& options);
  virtual ~SimFaultSource() = default;

  // The first sample's time.
  virtual void Start(uint64_t start_ns) = 0;
  // The source's own next event (a scanner pass); UINT64_MAX: none.
  virtual uint64_t next_event_ns() const { return UINT64_MAX; }
  // Does every event due at or before `now_ns`.
  virtual void Advance(uint64_t now_ns) {}
  // The access `s`, served from `node`: whether it faults, i.e. whether
  // the sampler sees it.
  virtual bool Fault(const Sample& s, int node) = 0;
  // attach's loop polled at `now_ns`; `faults_total` is the count of fault
  // samples it has handed over so far (the write re-arm's cost input).
  virtual void Poll(uint64_t now_ns, uint64_t faults_total) {}
  // The source's counters for the policy's Details().
  virtual void AppendDetails(
      std::vector<std::pair<std::string, uint64_t>>* out) const = 0;
};

// The sample the page-fault sampler delivers for the fault at `access`.
Sample FaultSample(const Sample& access);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_SIMULATE_SIM_FAULT_SOURCE_H_
