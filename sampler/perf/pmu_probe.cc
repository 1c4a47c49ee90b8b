#include "sampler/perf/pmu_probe.h"

#include "absl/strings/str_cat.h"

namespace hotpage {

PmuProbe ProbePmu(const KernelFs& fs) {
  PmuProbe p;
  for (const char* pmu : {"cpu", "cpu_core"}) {
    const std::string events =
        absl::StrCat(kPmuDevicesDir, "/", pmu, "/events/");
    if (fs.Exists(events + "mem-loads")) {
      p.pebs_pmu = pmu;
      p.pebs_mem_loads_aux = fs.Exists(events + "mem-loads-aux");
      break;
    }
  }
  p.ibs_op = fs.Exists(absl::StrCat(kPmuDevicesDir, "/ibs_op/type"));
  const bool core = fs.Exists(absl::StrCat(kPmuDevicesDir, "/cpu_core/type"));
  const bool atom = fs.Exists(absl::StrCat(kPmuDevicesDir, "/cpu_atom/type"));
  const bool cpu = fs.Exists(absl::StrCat(kPmuDevicesDir, "/cpu/type"));
  p.hybrid = (core || atom) && !cpu;
  p.atom_mem_loads =
      p.hybrid &&
      fs.Exists(absl::StrCat(kPmuDevicesDir, "/cpu_atom/events/mem-loads"));
  p.core_pmu = cpu || core || atom || p.ibs_op;
  return p;
}

}  // namespace hotpage
