// What the daemon's machine-level parts report once for the machine
// (`hotpage status --json`'s "machine" object and the metrics' machine
// series, daemon_loop.h), apart from any member's numbers: the machine
// sampler's routing counters and its kernel throttle and loss records
// (machine_sampler.h; a member reports none of them, so a sum over
// members never counts them twice), the CPU time of the threads that
// no member's cpu_seconds holds, and where the daemon's own memory goes.

#ifndef HOTPAGE_TOOLS_DAEMON_MACHINE_REPORT_H_
#define HOTPAGE_TOOLS_DAEMON_MACHINE_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hotpage {

// One machine sampler (one per source), totals since the daemon started
// (samplers that closed included).
struct MachineSamplerReport {
  std::string source;         // "pebs", "pagefault+wf", ...
  uint64_t routed = 0;        // samples handed to a member's inbox
  uint64_t unmapped = 0;      // of a pid no live member owns: dropped
  uint64_t inbox_full = 0;    // a member's inbox was full: dropped
  uint64_t reopens = 0;       // per-task fallback: the plan reopened
  uint64_t throttle = 0;      // PERF_RECORD_THROTTLE
  uint64_t unthrottle = 0;    // PERF_RECORD_UNTHROTTLE
  uint64_t lost = 0;          // records lost to a full ring
  uint64_t lost_samples = 0;  // PERF_RECORD_LOST_SAMPLES
  uint64_t events = 0;        // open perf events now
  uint64_t mapped = 0;        // processes routed now

  // Adds `o`'s cumulative counters (routed .. lost_samples); leaves
  // source, events and mapped, which are not sums.
  void AddCounts(const MachineSamplerReport& o) {
    routed += o.routed;
    unmapped += o.unmapped;
    inbox_full += o.inbox_full;
    reopens += o.reopens;
    throttle += o.throttle;
    unthrottle += o.unthrottle;
    lost += o.lost;
    lost_samples += o.lost_samples;
  }
};

// A machine-level thread's CPU time that is in no member's cpu_seconds.
struct MachineThreadReport {
  std::string thread;  // "migrator", "sampler pebs", ...
  double cpu_seconds = 0;
};

// The daemon's own memory policy, as start-up left it (tools/self_memory.h
// SelfMemoryReport): for every thread of the daemon.
struct MachineSelfMemory {
  std::string requested;  // "slow", "local" or a node number
  // "preferred-many", "preferred", "default" (first touch) or "inherited"
  std::string mode;
  std::vector<int> nodes;  // preferred-many's and preferred's nodes
};

struct MachineReport {
  std::vector<MachineSamplerReport> samplers;
  std::vector<MachineThreadReport> threads;
  std::optional<MachineSelfMemory> self_memory;  // "self_memory" when set
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_DAEMON_MACHINE_REPORT_H_
