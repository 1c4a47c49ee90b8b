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
//
// Fallback (issue 12): choosing is not opening. A source that looks usable
// can still fail when its events are opened (ENOENT on a hybrid E-core,
// EMFILE, EACCES, ENODATA), so OpenAutoSource() opens the choice through a
// callback and, when that fails, records the failure in
// SourceCapabilities::failed and chooses again: the same order, minus what
// failed. It says on stderr (through `say`) what failed and what it takes
// instead. Privilege is part of the choice: a hardware source whose events
// must be CPU-wide (IBS before 6.2, --all, --system-wide) is passed over
// without CAP_PERFMON when perf_event_paranoid > 0 (perf_allow_cpu() in
// include/linux/perf_event.h), and per-task events above paranoid 2.

#ifndef HOTPAGE_TOOLS_ATTACH_SOURCE_CHOICE_H_
#define HOTPAGE_TOOLS_ATTACH_SOURCE_CHOICE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {

struct SourceCapabilities {
  // A PMU that samples load addresses: Intel PEBS load latency, AMD IBS op.
  bool pebs = false;
  bool ibs = false;
  bool ibs_swfilt = false;    // ibs_op/format/swfilt: it can exclude the kernel
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
  // Whether soft_dirty was probed (it is not when a PMU sampler exists; the
  // fallback probes it when it gets past the PMU).
  bool soft_dirty_probed = true;

  // Privilege and scope of the hardware samplers. CAP_PERFMON (or
  // CAP_SYS_ADMIN, perfmon_capable()) lifts every paranoid restriction.
  bool cap_perfmon = false;
  // The running kernel (/proc/sys/kernel/osrelease); unknown: no
  // version-based rule applies. Per-task IBS needs 6.2
  // (perf_ibs_op.pmu.task_ctx_nr = perf_hw_context; before, the kernel's
  // find_get_context() refuses per-task IBS with EINVAL).
  std::optional<std::pair<int, int>> kernel_version;
  // The run samples CPU-wide (record --all or --system-wide).
  bool system_wide = false;
  // hotpage record: only the perf sources (PEBS, IBS, page faults); hint
  // faults, write faults and DAMON are attach's.
  bool perf_sources_only = false;
  // Sources that failed to open in this run (SourceKey(), then why):
  // ChooseAutoSource passes over them and names them.
  std::vector<std::pair<std::string, std::string>> failed;
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

// A choice's name in SourceCapabilities::failed: its source, or
// "pagefault --write-faults".
std::string SourceKey(const SourceChoice& choice);

// Hint faults usable without changing anything: the tiering bit of
// kernel.numa_balancing already set and the promotion rate limit already 0,
// so the kernel senses without promoting (the state the controller would
// set).
bool HintFaultSysctlsAlreadyUsable(const SourceCapabilities& caps);

// The source for --source auto (the order and its reasons are in the .cc).
// FailedPrecondition naming what each source lacks when none can run.
absl::StatusOr<SourceChoice> ChooseAutoSource(const SourceCapabilities& caps);

// --source auto with fallback, pure over its callbacks: chooses, calls
// `open` with the choice, and on an error adds it to `caps.failed`, calls
// `say` with one line naming what failed and what it takes instead, and
// chooses again, until a source opens (its choice is returned; its reason
// names every failure) or none is left (FailedPrecondition naming every
// failure and every missing piece). `probe_soft_dirty` (may be empty)
// answers for soft-dirty write faults when the capabilities were probed
// with a PMU present (soft_dirty_probed false) and the fallback reaches
// them.
absl::StatusOr<SourceChoice> OpenAutoSource(
    SourceCapabilities caps,
    absl::FunctionRef<absl::Status(const SourceChoice&)> open,
    absl::FunctionRef<void(const std::string&)> say,
    const std::function<absl::Status()>& probe_soft_dirty = nullptr);

// Reads the capabilities through `fs` (PMU, CapEff, perf_event_paranoid,
// osrelease, the NUMA sysctls, DAMON's sysfs). `probe_soft_dirty` answers for
// the target's soft-dirty write faults (live: ProbeSoftDirty() and opening
// /proc/PID/clear_refs; OK or the reason).
SourceCapabilities ProbeSourceCapabilities(
    const KernelFs& fs, bool allow_sysctl_changes,
    absl::FunctionRef<absl::Status()> probe_soft_dirty);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_ATTACH_SOURCE_CHOICE_H_
