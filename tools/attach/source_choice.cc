#include "tools/attach/source_choice.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
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

// Why `key` failed to open in this run; nullptr if it did not.
const std::string* FailedReason(const SourceCapabilities& c,
                                absl::string_view key) {
  for (const auto& [k, why] : c.failed) {
    if (k == key) return &why;
  }
  return nullptr;
}

// `missing` (why the source cannot run; empty when it can), or the line
// saying it failed to open.
std::string Unusable(const SourceCapabilities& c, absl::string_view key,
                     std::string missing) {
  if (const std::string* f = FailedReason(c, key))
    return absl::StrCat(key, " failed to open: ", *f);
  return missing;
}

// "; " and the passed-over sources, or nothing.
std::string Tail(const std::vector<std::string>& passed) {
  return passed.empty() ? "" : absl::StrCat("; ", absl::StrJoin(passed, "; "));
}

bool PerfmonCapable(const SourceCapabilities& c) {
  return c.cap_perfmon || c.cap_sys_admin;
}

// Per-task IBS: Linux 6.2+ (or an unknown version: the open decides).
bool IbsPerTask(const SourceCapabilities& c) {
  return !c.kernel_version || *c.kernel_version >= std::make_pair(6, 2);
}

// Why the process may not open a hardware sampler's events: CPU-wide events
// need perf_allow_cpu() (paranoid <= 0 or perfmon_capable()), per-task ones
// paranoid <= 2 (Debian's 3 refuses every event) or perfmon_capable().
// Empty when it may, or when the paranoid level is unknown (the open
// decides, and the fallback takes over if it fails).
std::string NoHardwarePrivilege(const SourceCapabilities& c, bool cpu_wide,
                                absl::string_view why_cpu_wide,
                                bool samples_kernel = false) {
  if (PerfmonCapable(c) || !c.perf_event_paranoid) return "";
  const int64_t p = *c.perf_event_paranoid;
  if (cpu_wide && p > 0) {
    return absl::StrCat("its events must be CPU-wide (", why_cpu_wide,
                        "), which needs CAP_PERFMON or perf_event_paranoid "
                        "<= 0, and perf_event_paranoid is ",
                        p);
  }
  // perf_event_open(): an event that does not exclude the kernel needs
  // perf_allow_kernel(), paranoid <= 1 without CAP_PERFMON.
  if (samples_kernel && p > 1) {
    return absl::StrCat(
        "its events sample kernel mode too (no swfilt to "
        "exclude it), which needs CAP_PERFMON or "
        "perf_event_paranoid <= 1, and perf_event_paranoid "
        "is ",
        p);
  }
  if (p > 2) {
    return absl::StrCat("perf_event_paranoid is ", p,
                        " and the process lacks CAP_PERFMON");
  }
  return "";
}

// A present hardware sampler that auto passes over (it failed to open, or
// the process may not open it): adds the line to `passed` and returns true.
bool HardwarePassedOver(const SourceCapabilities& c, absl::string_view key,
                        absl::string_view name, bool cpu_wide,
                        absl::string_view why_cpu_wide,
                        std::vector<std::string>* passed,
                        bool samples_kernel = false) {
  if (const std::string* f = FailedReason(c, key)) {
    passed->push_back(absl::StrCat(key, " failed to open: ", *f));
    return true;
  }
  const std::string np =
      NoHardwarePrivilege(c, cpu_wide, why_cpu_wide, samples_kernel);
  if (!np.empty()) {
    passed->push_back(absl::StrCat("no ", name, ": ", np));
    return true;
  }
  return false;
}

}  // namespace

std::string SourceKey(const SourceChoice& choice) {
  return choice.write_faults ? absl::StrCat(choice.source, " --write-faults")
                             : choice.source;
}

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
// The same order serves the fallback (OpenAutoSource): when a choice fails
// to open, the next one down is tried. PEBS before IBS only because no
// machine has both; a hardware source that failed (hybrid ENOENT, EMFILE,
// ENODATA, EACCES for CPU-wide IBS) still leaves page-precise software
// sources, which need nothing but per-task perf events, before DAMON,
// which needs root. hotpage record (perf_sources_only) has PEBS, IBS and
// page faults only.
absl::StatusOr<SourceChoice> ChooseAutoSource(const SourceCapabilities& c) {
  SourceChoice out;
  std::vector<std::string> passed;
  // The hardware samplers, each when it exists, has not failed to open in
  // this run, and the process may open its events.
  const bool pebs_usable =
      c.pebs && !HardwarePassedOver(c, "pebs", "PEBS", c.system_wide,
                                    "--all or --system-wide", &passed);
  if (pebs_usable) {
    out.source = "pebs";
    out.reason = absl::StrCat(
        "--source auto: pebs (Intel PEBS load latency: hardware samples of "
        "load addresses on every tier)",
        Tail(passed));
    return out;
  }
  const bool ibs_cpu_wide = c.system_wide || !IbsPerTask(c);
  const bool ibs_usable =
      c.ibs && !HardwarePassedOver(
                   c, "ibs", "IBS", ibs_cpu_wide,
                   c.system_wide ? "--all or --system-wide"
                                 : "per-task IBS needs Linux 6.2 or later",
                   &passed, /*samples_kernel=*/!c.ibs_swfilt);
  if (ibs_usable) {
    out.source = "ibs";
    out.reason = absl::StrCat(
        "--source auto: ibs (AMD IBS op: hardware samples of load addresses "
        "on every tier)",
        Tail(passed));
    return out;
  }
  if (!c.pebs && !c.ibs) {
    passed.push_back(absl::StrCat("no PEBS/IBS: ", NoPmu(c)));
  }
  if (c.perf_sources_only) {
    // hotpage record: page faults are the last perf source.
    if (const std::string* f = FailedReason(c, "pagefault")) {
      passed.push_back(absl::StrCat("pagefault failed to open: ", *f));
    } else if (c.page_fault_events) {
      out.source = "pagefault";
      out.reason = absl::StrCat(
          "--source auto: pagefault (software page faults: page-precise but "
          "first touches only: pages already resident are not seen)",
          Tail(passed));
      return out;
    } else {
      passed.push_back(absl::StrCat("no page faults: ", NoPageFaultEvents(c)));
    }
    return absl::FailedPreconditionError(
        absl::StrCat("--source auto: no sample source can run here: ",
                     absl::StrJoin(passed, "; ")));
  }
  const std::string no_hint = Unusable(c, "hintfault", NoHintFaults(c));
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
  passed.push_back(FailedReason(c, "hintfault")
                       ? no_hint
                       : absl::StrCat("no hint faults: ", no_hint));
  const std::string no_write =
      Unusable(c, "pagefault --write-faults", NoWriteFaults(c));
  const bool page_faults_failed = FailedReason(c, "pagefault") != nullptr;
  if (no_write.empty() && !page_faults_failed) {
    out.source = "pagefault";
    out.write_faults = true;
    out.reason = absl::StrCat(
        "--source auto: pagefault with --write-faults (soft-dirty write "
        "faults: page-precise, every tier, writes only; resets the "
        "process's soft-dirty bits every interval); ",
        absl::StrJoin(passed, "; "));
    return out;
  }
  if (c.page_fault_events && !no_write.empty()) {
    passed.push_back(FailedReason(c, "pagefault --write-faults")
                         ? no_write
                         : absl::StrCat("no write faults: ", no_write));
  }
  if (c.page_fault_events && !page_faults_failed) {
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
  if (page_faults_failed) {
    passed.push_back(absl::StrCat("pagefault failed to open: ",
                                  *FailedReason(c, "pagefault")));
  } else {
    passed.push_back(absl::StrCat("no page faults: ", NoPageFaultEvents(c)));
  }
  const std::string no_damon = Unusable(c, "damon", NoDamon(c));
  if (no_damon.empty()) {
    out.source = "damon";
    out.reason = absl::StrCat(
        "--source auto: damon (2 MiB region evidence: may promote several "
        "times the hot set); ",
        absl::StrJoin(passed, "; "));
    return out;
  }
  passed.push_back(FailedReason(c, "damon")
                       ? no_damon
                       : absl::StrCat("no DAMON: ", no_damon));
  return absl::FailedPreconditionError(
      absl::StrCat("--source auto: no sample source can run here: ",
                   absl::StrJoin(passed, "; ")));
}

absl::StatusOr<SourceChoice> OpenAutoSource(
    SourceCapabilities caps,
    absl::FunctionRef<absl::Status(const SourceChoice&)> open,
    absl::FunctionRef<void(const std::string&)> say,
    const std::function<absl::Status()>& probe_soft_dirty) {
  std::string pending;  // the last failure, told with what replaces it
  for (;;) {
    absl::StatusOr<SourceChoice> choice = ChooseAutoSource(caps);
    if (choice.ok() && choice->source != "pebs" && choice->source != "ibs" &&
        !caps.soft_dirty_probed && !caps.perf_sources_only &&
        probe_soft_dirty) {
      // Past the PMU now: soft-dirty write faults come into question.
      const absl::Status s = probe_soft_dirty();
      caps.soft_dirty_probed = true;
      caps.soft_dirty = s.ok();
      caps.soft_dirty_reason = s.ok() ? "" : std::string(s.message());
      choice = ChooseAutoSource(caps);
    }
    if (!pending.empty()) {
      say(choice.ok() ? absl::StrCat(pending, "; taking ", SourceKey(*choice),
                                     " instead")
                      : absl::StrCat(pending, "; no other source can run"));
    }
    if (!choice.ok()) return choice.status();
    const absl::Status s = open(*choice);
    if (s.ok()) return choice;
    caps.failed.emplace_back(SourceKey(*choice), std::string(s.message()));
    pending = absl::StrCat("--source auto: ", SourceKey(*choice),
                           " failed to open: ", s.message());
  }
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
  c.cap_perfmon = a.cap_perfmon;
  c.kernel_version = KernelVersion(fs);  // MAJOR.MINOR is all we need
  // IBS without swfilt cannot exclude kernel mode (perf_ibs_init() refuses
  // the exclude_* bits), so its events sample the kernel too.
  c.ibs_swfilt =
      fs.Exists("/sys/bus/event_source/devices/ibs_op/format/swfilt");
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
    c.soft_dirty_probed = false;
  }
  return c;
}

}  // namespace hotpage
