#include "tools/attach/source_choice.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "sampler/hintfault/numa_balancing_controller.h"
#include "sampler/perf/event_config.h"
#include "sampler/recovery_state.h"
#include "tools/base/kernel/capabilities.h"

namespace hotpage {
namespace {

constexpr char kDamonAdmin[] = "/sys/kernel/mm/damon/admin";

// Why perf page-fault events cannot be opened; empty when they can.
std::string NoPageFaultEvents(const SourceCapabilities& c) {
  if (c.page_fault_events) return "";
  if (!c.perf_event_paranoid) {
    return "perf events are unavailable (no "
           "/proc/sys/kernel/perf_event_paranoid: CONFIG_PERF_EVENTS off)";
  }
  return absl::StrCat("perf_event_paranoid is ", *c.perf_event_paranoid,
                      " and the process lacks CAP_PERFMON, so page-fault "
                      "events cannot be opened");
}

// Why hint faults cannot be used; empty when they can.
std::string NoHintFaults(const SourceCapabilities& c) {
  if (!c.page_fault_events) return NoPageFaultEvents(c);
  if (!c.numa_balancing) {
    return "no kernel.numa_balancing (a kernel without "
           "CONFIG_NUMA_BALANCING)";
  }
  if (!c.promote_rate_limit_mbps) {
    return "no kernel.numa_balancing_promote_rate_limit_MBps (Linux 6.0+; "
           "without it the kernel would promote every hint-faulted page "
           "itself)";
  }
  if (!c.cap_sys_admin) {
    return "managing kernel.numa_balancing needs root (CAP_SYS_ADMIN)";
  }
  if (!c.allow_sysctl_changes && !HintFaultSysctlsAlreadyUsable(c)) {
    const absl::StatusOr<std::string> wanted =
        WantedNumaBalancing(absl::StrCat(*c.numa_balancing));
    return absl::StrCat(
        "they need kernel.numa_balancing ", *c.numa_balancing, " -> ",
        wanted.ok() ? *wanted : "2",
        " and kernel.numa_balancing_promote_rate_limit_MBps ",
        *c.promote_rate_limit_mbps,
        " -> 0 while hotpage runs: pass --allow-sysctl-changes to allow it");
  }
  return "";
}

// Why write faults cannot be used; empty when they can.
std::string NoWriteFaults(const SourceCapabilities& c) {
  if (!c.page_fault_events) return NoPageFaultEvents(c);
  if (!c.soft_dirty) {
    return c.soft_dirty_reason.empty() ? "soft-dirty bits unavailable"
                                       : c.soft_dirty_reason;
  }
  return "";
}

// Why DAMON cannot be used; empty when it can.
std::string NoDamon(const SourceCapabilities& c) {
  if (!c.damon_sysfs) {
    return "no /sys/kernel/mm/damon/admin (a kernel without "
           "CONFIG_DAMON_SYSFS)";
  }
  if (!c.cap_sys_admin) return "DAMON needs root (CAP_SYS_ADMIN)";
  return "";
}

std::string NoPmu(const SourceCapabilities& c) {
  return c.no_pmu_reason.empty() ? "no PMU with PEBS or IBS" : c.no_pmu_reason;
}

}  // namespace

bool HintFaultSysctlsAlreadyUsable(const SourceCapabilities& caps) {
  // NUMA_BALANCING_MEMORY_TIERING is bit 1 (value 2) of the sysctl
  // (include/linux/sched/sysctl.h); rate limit 0: numa_promotion_rate_limit
  // refuses every promotion (numa_balancing_controller.h).
  return caps.numa_balancing && (*caps.numa_balancing & 2) != 0 &&
         caps.promote_rate_limit_mbps && *caps.promote_rate_limit_mbps == 0;
}

// The order, best evidence first:
//  1. PEBS, then IBS: the hardware samples load addresses on every tier,
//     with the CPU, and changes nothing in the process or the kernel.
//  2. NUMA hint faults, where permitted (root, and the consent of
//     --allow-sysctl-changes or the sysctls already in the state the
//     controller sets): page-precise, reads and writes alike, on the slower
//     tiers, which is what promotion decides on. In tests/compare (the
//     6.12 guest, README there) they migrated exactly the hot sets' pages
//     (1.00x) and caught every switch. Ahead of write faults because they
//     see reads: a hot set that is only read is invisible to write faults.
//  3. Write faults through soft-dirty (--write-faults): page-precise, every
//     tier, no sysctl; writes only, and the process's soft-dirty bits are
//     reset every interval (CRIU's incremental dumps would see every page
//     dirty; the reason line says so). Also 1.00x in tests/compare.
//  4. Page faults alone: page-precise but first touches only (new pages,
//     re-faults after reclaim): pages already resident are not seen, so
//     hotpage promotes little (0 pages of a pre-touched hot set in
//     tests/compare) but never on guesswork.
//  5. DAMON last: its evidence is 2 MiB regions, and in tests/compare
//     hotpage on DAMON migrated 3.54x (clusters) and 4.00x (interleaved)
//     the hot sets' pages: every cold page sharing a region with a hot one
//     went to fast memory, displacing pages that were hot. Chosen only
//     when no page-fault event can be opened; `--source damon` asks for it.
absl::StatusOr<SourceChoice> ChooseAutoSource(const SourceCapabilities& c) {
  SourceChoice out;
  if (c.pebs) {
    out.source = "pebs";
    out.reason =
        "--source auto: pebs (Intel PEBS load latency: hardware samples of "
        "load addresses on every tier)";
    return out;
  }
  if (c.ibs) {
    out.source = "ibs";
    out.reason =
        "--source auto: ibs (AMD IBS op: hardware samples of load addresses "
        "on every tier)";
    return out;
  }
  std::vector<std::string> passed = {absl::StrCat("no PEBS/IBS: ", NoPmu(c))};
  const std::string no_hint = NoHintFaults(c);
  if (no_hint.empty()) {
    out.source = "hintfault";
    out.reason = absl::StrCat(
        "--source auto: hintfault (the kernel's NUMA hint faults: "
        "page-precise, reads and writes, on the slower tiers; ",
        c.allow_sysctl_changes
            ? "--allow-sysctl-changes given"
            : "the sysctls are already as it needs them, nothing to change",
        "); ", absl::StrJoin(passed, "; "));
    return out;
  }
  passed.push_back(absl::StrCat("no hint faults: ", no_hint));
  const std::string no_write = NoWriteFaults(c);
  if (no_write.empty()) {
    out.source = "pagefault";
    out.write_faults = true;
    out.reason = absl::StrCat(
        "--source auto: pagefault with --write-faults (soft-dirty write "
        "faults: page-precise, every tier, writes only; resets the "
        "process's soft-dirty bits every interval); ",
        absl::StrJoin(passed, "; "));
    return out;
  }
  if (c.page_fault_events) {
    passed.push_back(absl::StrCat("no write faults: ", no_write));
    out.source = "pagefault";
    out.reason = absl::StrCat(
        "--source auto: pagefault (page-precise but first touches only: "
        "pages already resident are not seen); ",
        absl::StrJoin(passed, "; "),
        "; preferred to DAMON, whose 2 MiB regions made hotpage migrate "
        "3.5-4x the hot set's pages (tests/compare): ask for it with "
        "--source damon");
    return out;
  }
  passed.push_back(absl::StrCat("no page faults: ", NoPageFaultEvents(c)));
  const std::string no_damon = NoDamon(c);
  if (no_damon.empty()) {
    out.source = "damon";
    out.reason = absl::StrCat(
        "--source auto: damon (2 MiB region evidence: may promote several "
        "times the hot set); ",
        absl::StrJoin(passed, "; "));
    return out;
  }
  passed.push_back(absl::StrCat("no DAMON: ", no_damon));
  return absl::FailedPreconditionError(
      absl::StrCat("--source auto: no sample source can run here: ",
                   absl::StrJoin(passed, "; ")));
}

SourceCapabilities ProbeSourceCapabilities(
    const KernelFs& fs, bool allow_sysctl_changes,
    absl::FunctionRef<absl::Status()> probe_soft_dirty) {
  SourceCapabilities c;
  const SamplerAvailability a = ProbeAvailability(fs);
  c.pebs = a.pebs;
  c.ibs = a.ibs;
  if (!a.core_pmu) {
    c.no_pmu_reason = a.hypervisor ? "this is a VM without a virtual PMU"
                                   : "no hardware PMU driver is loaded";
  } else {
    c.no_pmu_reason = "the CPU PMU has neither PEBS mem-loads nor AMD ibs_op";
  }
  c.perf_event_paranoid = a.paranoid;
  // The sampler's page-fault events are per task and exclude the kernel
  // (event_config.h SamplingOptions::user_only): perf_event_open allows
  // them without CAP_PERFMON up to perf_event_paranoid 2 (kernel
  // profiling needs <= 1, CPU-wide events <= 0;
  // Documentation/admin-guide/perf-security.rst). Debian's 3 refuses every
  // unprivileged event.
  c.page_fault_events = a.paranoid && (a.cap_perfmon || *a.paranoid <= 2);
  c.cap_sys_admin = HasCapability(EffectiveCapabilities(fs), kCapSysAdmin);
  c.allow_sysctl_changes = allow_sysctl_changes;
  if (absl::StatusOr<int64_t> v = fs.ReadInt(kNumaBalancingSysctl); v.ok())
    c.numa_balancing = *v;
  if (absl::StatusOr<int64_t> v = fs.ReadInt(kPromoteRateLimitSysctl); v.ok())
    c.promote_rate_limit_mbps = *v;
  c.damon_sysfs = fs.Exists(kDamonAdmin);
  // The soft-dirty probe touches the live process (one fault, a clear of
  // hotpage's own bits, the target's clear_refs opened): only when the
  // choice can get that far.
  if (!c.pebs && !c.ibs) {
    const absl::Status s = probe_soft_dirty();
    c.soft_dirty = s.ok();
    if (!s.ok()) c.soft_dirty_reason = std::string(s.message());
  } else {
    c.soft_dirty_reason = "not probed (a PMU sampler is available)";
  }
  return c;
}

}  // namespace hotpage
