// The event plan as JSON: what `hotpage record|attach --print-events`
// prints, so that anyone can see which perf events hotpage would open, on
// which CPUs, in which groups, and how many descriptors that takes, without
// opening anything.
//
// Pure functions of an EventGroup (event_config.h) and the context the
// command knows (source, online CPUs, number of tasks, RLIMIT_NOFILE):
// tested without a kernel.
//
// Output (keys in this order):
//   {"source": "pebs", "why": "...", "encoder": "sysfs", "plan_note": "...",
//    "encoder_note": "...", "cpu_model": "...", "libpfm_pmu": "skx",
//    "per_task": true, "tasks": 1,
//    "fds_needed": 48, "rlimit_nofile": 1024,
//    "events": [{"name": "cpu_core/mem-loads-aux/", "pmu": "cpu_core",
//                "type": 8, "config": 33283, "config1": 0, "config2": 0,
//                "sample_period": 1073741824,
//                "sample_type": ["IP", "TID", ...], "precise_ip": 2,
//                "cpus": [0, 1, ...], "group": 0, "leader": true,
//                "per_task": true, "keep_samples": false}, ...]}
// `cpus` is the resolved list: the event's own CPUs (its PMU's, on hybrid
// parts) within the online ones, else every online CPU. `group` is the
// index of the event's perf group in order of appearance; `leader` whether
// it leads that group (every event of an ungrouped plan leads its own).
// fds_needed = sum over events of |cpus| x tasks (per task: one descriptor
// per event, CPU and target thread; system-wide: tasks = 1).

#ifndef HOTPAGE_SAMPLER_PERF_EVENT_PLAN_JSON_H_
#define HOTPAGE_SAMPLER_PERF_EVENT_PLAN_JSON_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sampler/perf/event_config.h"

namespace hotpage {

struct EventPlanContext {
  std::string source;            // "pebs", "ibs", "pagefault"
  std::string why;               // why this source (ChooseEvents)
  bool per_task = true;          // per-task events (else system-wide)
  size_t tasks = 1;              // target threads per CPU (per task)
  std::vector<int> online_cpus;  // CPUs sampled when an event has no list
  std::optional<uint64_t> rlimit_nofile;  // the soft limit, when known
  std::string encoder_note;               // e.g. why libpfm4 was not used
  // --sysfs-root: the CPU the tree's /proc/cpuinfo describes
  // (DescribeCpuModel) and the libpfm4 PMU it maps to (LibpfmPmuForCpu);
  // empty when unknown or on the live machine.
  std::string cpu_model;
  std::string libpfm_pmu;
};

// PERF_SAMPLE_* names without the prefix, lowest bit first ("IP", "TID",
// ...); unknown bits as "BIT<n>".
std::vector<std::string> SampleTypeNames(uint64_t sample_type);

// The CPUs `e` is opened on: its own list within `online`, else `online`.
std::vector<int> ResolvedCpus(const EventSpec& e,
                              const std::vector<int>& online);

// Descriptors the plan opens: sum of |ResolvedCpus| x tasks.
uint64_t FdsNeeded(const EventGroup& g, const std::vector<int>& online,
                   size_t tasks);

std::string EventPlanToJson(const EventGroup& g, const EventPlanContext& ctx);

}  // namespace hotpage

#endif  // HOTPAGE_SAMPLER_PERF_EVENT_PLAN_JSON_H_
