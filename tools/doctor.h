// `hotpage doctor`: what works on this machine for hotpage, what does not,
// and why, one fact at a time, each with its fix.
//
// Diagnose() is a pure function of a KernelFs (the live "/" or a tree given
// with --sysfs-root) and a few values the command reads from the live
// process and injects (DoctorEnv: the descriptor limit, the real uid/gid,
// the live soft-dirty probe, the mempolicy probe). Unit tests run it on
// FakeTree trees of machines this one is not (doctor_test.cc: no PMU, PEBS,
// IBS, hybrid, DAMON busy, NUMA balancing in tiering mode).
//
// It asks the same functions the sampling commands ask, so that the doctor
// cannot disagree with them:
//   - ChooseAutoSource over ProbeSourceCapabilities (tools/attach/
//     source_choice.h): the source `attach --source auto` takes, and why;
//   - ChooseEvents (sampler/perf/event_config.h): the perf events of that
//     source (its EventSpec pmu, cpus, group), whose count per CPU sets the
//     descriptors a run needs;
//   - DiscoverTopology (policy/topology.h) for the memory-policy modes, as
//     `hotpage topology` reports them.
// What only the doctor reads (per-PMU CPU masks, DAMON's kdamond states,
// the target's credentials) it reads here, through the same KernelFs.
//
// The facts' names are stable (scripts and the VM test look them up); the
// wording of values and fixes is for people.

#ifndef HOTPAGE_TOOLS_DOCTOR_H_
#define HOTPAGE_TOOLS_DOCTOR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "policy/topology.h"
#include "tools/base/kernel/kernel_fs.h"
#include "tools/base/parse.h"  // ParseKernelRelease

namespace hotpage {

struct DoctorFact {
  std::string name;   // "source", "pmu.cpu_core", "cap_perfmon", ...
  bool ok = true;     // it works (or: nothing hotpage needs is missing)
  std::string value;  // what was found, and what it allows
  std::string fix;    // what to do when !ok; may be empty when ok
};

// What Diagnose cannot read from the tree.
struct DoctorEnv {
  // --source: auto, pebs, ibs, pagefault, hintfault or damon.
  std::string source = "auto";
  // --pid: the target whose move_pages permission and thread count matter.
  std::optional<int64_t> pid;
  // RLIMIT_NOFILE of this process.
  uint64_t nofile_soft = 1024;
  uint64_t nofile_hard = 4096;
  // Real uid and gid of this process (move_pages' ptrace check compares
  // them: __ptrace_may_access() in kernel/ptrace.c with
  // PTRACE_MODE_REALCREDS).
  uint32_t uid = 0;
  uint32_t gid = 0;
  // Live only: ProbeSoftDirty()'s answer (sampler/write_fault_rearm.h).
  // nullopt: decide from the tree (/proc/self/clear_refs and the kernel
  // config /boot/config-RELEASE).
  std::optional<absl::Status> soft_dirty_probe;
  // Live only: asks set_mempolicy; null infers from the release.
  MempolicyProbe* mempolicy_probe = nullptr;
};

struct DoctorReport {
  std::vector<DoctorFact> facts;
  std::string source;      // the source that would run ("" if none)
  bool source_ok = false;  // it can run: `hotpage doctor` exits 0
  const DoctorFact* Find(const std::string& name) const;
};

// InvalidArgument for an unknown env.source; everything the machine lacks
// is a fact, not an error.
absl::StatusOr<DoctorReport> Diagnose(const KernelFs& fs, const DoctorEnv& env);

// One line per fact: "ok  NAME: VALUE" or "no  NAME: VALUE -- fix: FIX".
std::string DoctorToText(const DoctorReport& report);
// {"source": ..., "source_ok": ..., "facts": [{name, ok, value, fix}...]}.
std::string DoctorToJson(const DoctorReport& report);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_DOCTOR_H_
