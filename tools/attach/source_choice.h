// `hotpage attach --source auto`: which sample source runs on this machine,
// and one line saying why.
//
// Two pieces, so that the choice is testable without the hardware:
//   ProbeSourceCapabilities  reads what the machine and the process offer
//                            (PMU, capabilities, sysctls, DAMON, soft-dirty)
//                            into a SourceCapabilities, once, at start;
//   ChooseAutoSource         a pure function of that struct: the source, and
//                            the reason line printed on stderr.
// cmd_attach.cc runs the probe, prints the reason, and starts the chosen
// source as if it had been asked for by name. Tests fill the struct by hand
// (every branch) or probe a FakeTree (tools/base/kernel/fake_tree.h).
//
// The struct is deliberately small: the PMU part is two booleans and a
// reason, so a better PEBS/IBS probe (issue 12) only changes how they are
// filled.

#ifndef HOTPAGE_TOOLS_ATTACH_SOURCE_CHOICE_H_
#define HOTPAGE_TOOLS_ATTACH_SOURCE_CHOICE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {

struct SourceCapabilities {
  // A PMU that samples load addresses: Intel PEBS load latency, AMD IBS op.
  bool pebs = false;
  bool ibs = false;
  std::string no_pmu_reason;  // why neither (for the reason line)
  // Software page-fault perf events may be opened on the target
  // (perf_event_paranoid <= 2, or CAP_PERFMON / CAP_SYS_ADMIN). Hint faults
  // and write faults are read through them too.
  bool page_fault_events = false;
  std::optional<int64_t> perf_event_paranoid;  // for the reason line
  // Effective CAP_SYS_ADMIN: writing kernel.numa_balancing (hint faults)
  // and /sys/kernel/mm/damon/admin (DAMON) needs it.
  bool cap_sys_admin = false;
  // --allow-sysctl-changes: consent to change the two NUMA-balancing
  // sysctls while hotpage runs (numa_balancing_controller.h).
  bool allow_sysctl_changes = false;
  // kernel.numa_balancing (nullopt: absent, no CONFIG_NUMA_BALANCING) and
  // kernel.numa_balancing_promote_rate_limit_MBps (nullopt: absent, before
  // Linux 6.0).
  std::optional<int64_t> numa_balancing;
  std::optional<int64_t> promote_rate_limit_mbps;
  // Clearing the target's soft-dirty bits makes its writes fault:
  // /proc/PID/clear_refs opens for writing and the kernel has
  // CONFIG_MEM_SOFT_DIRTY (sampler/write_fault_rearm.h ProbeSoftDirty).
  bool soft_dirty = false;
  std::string soft_dirty_reason;  // why not
  // /sys/kernel/mm/damon/admin exists (CONFIG_DAMON_SYSFS).
  bool damon_sysfs = false;
};

struct SourceChoice {
  // "pebs", "ibs", "hintfault", "pagefault" or "damon".
  std::string source;
  // With "pagefault": re-arm write faults through soft-dirty (the
  // --write-faults mechanism).
  bool write_faults = false;
  // What was chosen, why, and why each better source was passed over; one
  // line without a newline.
  std::string reason;
};

// Hint faults usable without changing anything: the tiering bit of
// kernel.numa_balancing already set and the promotion rate limit already 0,
// so the kernel senses without promoting (the state the controller would
// set).
bool HintFaultSysctlsAlreadyUsable(const SourceCapabilities& caps);

// The source for --source auto (the order and its reasons are in the .cc).
// FailedPrecondition naming what each source lacks when none can run.
absl::StatusOr<SourceChoice> ChooseAutoSource(const SourceCapabilities& caps);

// Reads the capabilities through `fs` (PMU, CapEff, perf_event_paranoid,
// the NUMA sysctls, DAMON's sysfs). `probe_soft_dirty` answers for the
// target's soft-dirty write faults (live: ProbeSoftDirty() and opening
// /proc/PID/clear_refs; OK or the reason).
SourceCapabilities ProbeSourceCapabilities(
    const KernelFs& fs, bool allow_sysctl_changes,
    absl::FunctionRef<absl::Status()> probe_soft_dirty);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_ATTACH_SOURCE_CHOICE_H_
