// PmuProbe: which hardware memory samplers the kernel exposes, read once
// from sysfs (/sys/bus/event_source/devices), for every caller that asks:
// event choice (event_config.h: ChooseEvents, PebsEvents, the error
// messages) and the machine description (policy/topology.h Features,
// `hotpage topology`). One probe, so that the sampler `attach` picks and the
// one `topology` reports cannot disagree.
//
// What it looks at:
//  - Intel PEBS load latency: the core PMU that has events/mem-loads, "cpu"
//    or, on hybrid parts, the P-core PMU "cpu_core" (first match wins);
//    events/mem-loads-aux of THAT PMU says the load event must be grouped
//    behind the aux event (Sapphire Rapids and later).
//  - AMD IBS op: the ibs_op PMU (its type file).
//  - hybrid Intel (Alder Lake and later): the kernel registers cpu_core
//    (P-cores) and cpu_atom (E-cores) instead of "cpu", each with its own
//    dynamic type and a `cpus` file (intel_hybrid_get_attr_cpus() in
//    arch/x86/events/intel/core.c); an event of one is refused with ENOENT
//    on the other's CPUs (x86_pmu_event_init() in arch/x86/events/core.c).
//    cpu_atom's events/mem-loads is its own load-latency alias
//    (EVENT_ATTR_STR_HYBRID(mem-loads, mem_ld_adl, ...)), without aux.
//  - any core PMU at all (cpu, cpu_core, cpu_atom or ibs_op), to tell "no
//    PMU driver / VM without a virtual PMU" from "a PMU without memory
//    sampling".
// libpfm4's CPUID detection is not used here: it answers even where the
// kernel exposes no PMU.
//
// Thread-compatible: a pure function of the tree behind the KernelFs.

#ifndef HOTPAGE_SAMPLER_PERF_PMU_PROBE_H_
#define HOTPAGE_SAMPLER_PERF_PMU_PROBE_H_

#include <optional>
#include <string>

#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {

inline constexpr char kPmuDevicesDir[] = "/sys/bus/event_source/devices";

struct PmuProbe {
  // "cpu" or "cpu_core": the core PMU with events/mem-loads; nullopt: none.
  std::optional<std::string> pebs_pmu;
  bool pebs_mem_loads_aux = false;  // pebs_pmu has events/mem-loads-aux
  bool ibs_op = false;              // the ibs_op PMU exists
  bool core_pmu = false;            // cpu, cpu_core, cpu_atom or ibs_op exists
  // Hybrid Intel: cpu_core or cpu_atom exists (and no "cpu").
  bool hybrid = false;
  // cpu_atom has events/mem-loads (E-core PEBS load latency).
  bool atom_mem_loads = false;

  bool pebs() const { return pebs_pmu.has_value(); }
};

PmuProbe ProbePmu(const KernelFs& fs);

}  // namespace hotpage

#endif  // HOTPAGE_SAMPLER_PERF_PMU_PROBE_H_
