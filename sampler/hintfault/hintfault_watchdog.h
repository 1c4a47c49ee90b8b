// HintFaultWatchdog: watches whether the kernel keeps producing NUMA hint
// faults while the NUMA-balancing controller (numa_balancing_controller.h)
// has the kernel in tiering mode with a 0 promotion rate limit, and says so
// when it does not.
//
// Pieces: the parsers of what it reads (/proc/vmstat, /proc/PID/stat,
// /proc/PID/sched), one HintFaultObservation per check, and the pure logic
// (HintFaultWatchdog::Observe) that folds observations into HintFaultStats
// and warnings. No I/O here: the controller reads the files on its watchdog
// thread and calls Observe, so the logic is tested with scripted readings.
//
// It warns once per state change, and records in the stats, when
//  - the kernel completes no scan pass (no progress of numa_scan_seq, or
//    where that is unreadable, of numa_pte_updates and numa_hint_faults) for
//    stall_periods x scan_period_min_ms while the target used at least one
//    scan period of CPU (task_numa_work is driven by the task's own ticks:
//    an idle task is not scanned, and that is no stall). Measured in the
//    TCG guest: change_prot_numa over 192 MiB took ~217 ms, and the 3% rule
//    then spaced passes 5-19 s apart: a real, reported slowdown;
//  - the kernel migrated pages itself (numa_pages_migrated grew) despite
//    the 0 limit (counters are system-wide);
//  - someone else changed one of the two sysctls (hint faults stop or the
//    kernel promotes);
//  - /sys/kernel/mm/numa/demotion_enabled changed: whether the kernel's
//    reclaim demotes, which decides how hotpage makes room on the fast tier
//    (policy/engine.h, "The kernel's LRU as the fast tier's evidence"). Not
//    a file hotpage changes; attach follows it from its next round
//    (FollowKernelDemotion, tools/attach/attach_engine.h).
//
// Threading: thread-compatible; the controller serializes calls under its
// mutex.

#ifndef HOTPAGE_SAMPLER_HINTFAULT_HINTFAULT_WATCHDOG_H_
#define HOTPAGE_SAMPLER_HINTFAULT_HINTFAULT_WATCHDOG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "sampler/recovery_state.h"

namespace hotpage {

// "kernel.numa_balancing" for "/proc/sys/kernel/numa_balancing".
std::string SysctlName(absl::string_view proc_sys_path);

// --- kernel counters --------------------------------------------------------

struct NumaVmstat {
  uint64_t numa_pte_updates = 0;
  uint64_t numa_hint_faults = 0;
  uint64_t numa_hint_faults_local = 0;
  uint64_t pgpromote_candidate = 0;
  uint64_t pgpromote_success = 0;
  uint64_t numa_pages_migrated = 0;
};
// /proc/vmstat ("name value" lines). nullopt when numa_pte_updates or
// numa_hint_faults is missing (kernel without CONFIG_NUMA_BALANCING); the
// others default to 0 (pgpromote_* need 5.18+).
std::optional<NumaVmstat> ParseNumaVmstat(absl::string_view text);

// minflt (field 10) and utime + stime (fields 14, 15, clock ticks) of
// /proc/PID/stat; nullopt if malformed.
struct ProcCpu {
  uint64_t minflt = 0;
  uint64_t cpu_ticks = 0;
};
std::optional<ProcCpu> ParseProcStatCpu(absl::string_view text);

// `mm->numa_scan_seq : N` from /proc/PID/sched; nullopt if absent.
std::optional<uint64_t> ParseNumaScanSeq(absl::string_view proc_pid_sched);

// Whether the kernel demotes on reclaim: the file reads "true" or "false"
// (mm/memory-tiers.c); its store takes kstrtobool's spellings too (1/0,
// y/n, on/off), accepted here. nullopt for anything else. Surrounding
// whitespace is ignored.
inline constexpr char kDemotionEnabledPath[] =
    "/sys/kernel/mm/numa/demotion_enabled";
std::optional<bool> ParseDemotionEnabled(absl::string_view text);

// --- watchdog (pure logic, no I/O) -------------------------------------------

struct HintFaultWatchdogOptions {
  int64_t pid = 0;
  // A stall: no scan progress for stall_periods x scan_period_ms of wall
  // time while the target used at least scan_period_ms of CPU.
  uint64_t scan_period_ms = 1000;
  int stall_periods = 5;
  double clock_ticks_per_sec = 100;
};

// One reading of the kernel, every check interval.
struct HintFaultObservation {
  uint64_t now_ns = 0;
  std::optional<NumaVmstat> vmstat;
  std::optional<uint64_t> scan_seq;
  std::optional<ProcCpu> target;
  // Current value of each changed sysctl (same order as the changes);
  // nullopt where unreadable.
  std::vector<std::optional<std::string>> sysctls;
  // kDemotionEnabledPath; nullopt where unreadable (no such file before
  // Linux 5.15) or malformed.
  std::optional<bool> demotion_enabled;
};

struct HintFaultStats {
  // Deltas since Start (system-wide vmstat counters).
  NumaVmstat delta;
  uint64_t scan_passes = 0;          // numa_scan_seq advanced (target's mm)
  bool scan_seq_known = false;       // /proc/PID/sched had numa_scan_seq
  uint64_t target_minor_faults = 0;  // minflt delta: hint faults + others
  double elapsed_s = 0;
  double hint_faults_per_sec = 0;  // delta.numa_hint_faults / elapsed
  double longest_scan_gap_s = 0;   // longest wall time without progress
  bool scan_stalled = false;       // now
  uint64_t stall_episodes = 0;
  uint64_t kernel_migrated_pages = 0;  // numa_pages_migrated delta
  uint64_t sysctl_overrides = 0;  // times a changed sysctl was changed back
  // demotion_enabled as last read (known: read at least once), and how
  // often it changed since the first reading.
  bool demotion_known = false;
  bool demotion_enabled = false;
  uint64_t demotion_changes = 0;
  uint64_t unscannable_slow_pages = 0;  // at Start, see file comment
  uint64_t checks = 0;
  double watchdog_cpu_seconds = 0;
  std::string recovered;  // what Start restored from a dead run
};

class HintFaultWatchdog {
 public:
  HintFaultWatchdog(HintFaultWatchdogOptions options,
                    std::vector<HintFaultSysctlChange> changes);

  // Folds in one observation; appends the warnings to emit now (each state
  // change is warned once, not every check).
  void Observe(const HintFaultObservation& o,
               std::vector<std::string>* warnings);
  const HintFaultStats& stats() const { return stats_; }
  HintFaultStats& mutable_stats() { return stats_; }

 private:
  const HintFaultWatchdogOptions options_;
  const std::vector<HintFaultSysctlChange> changes_;
  HintFaultStats stats_;
  bool started_ = false;
  uint64_t start_ns_ = 0;
  NumaVmstat base_;
  NumaVmstat last_;
  std::optional<uint64_t> base_seq_, last_seq_;
  std::optional<ProcCpu> base_target_;
  uint64_t progress_ns_ = 0;         // last observed scan progress
  uint64_t progress_cpu_ticks_ = 0;  // target CPU then
  uint64_t warned_migrated_ = 0;
  std::vector<bool> overridden_;
};

}  // namespace hotpage

#endif  // HOTPAGE_SAMPLER_HINTFAULT_HINTFAULT_WATCHDOG_H_
