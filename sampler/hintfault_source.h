// HintFaultSource: page-precise access evidence on machines without PEBS or
// IBS, from the kernel's own NUMA hint faults, while hotpage alone decides
// where pages go.
//
// How (Linux 6.x, checked in the 6.12 sources and measured in the 6.12 guest
// of tests/vm, see tests/hintfault/README.md):
//  - kernel.numa_balancing = 2 (NUMA_BALANCING_MEMORY_TIERING): the kernel's
//    scanner (task_numa_work -> change_prot_numa) makes PTEs of pages on
//    slower tiers PROT_NONE; top-tier pages are skipped (change_pte_range:
//    `!(mode & NUMA_BALANCING_NORMAL) && node_is_toptier(nid)`). The next
//    touch of such a page is a NUMA hint fault.
//  - Every hint fault is a user page fault: arch/x86/mm/fault.c
//    do_user_addr_fault() emits perf_sw_event(PERF_COUNT_SW_PAGE_FAULTS, 1,
//    regs, address) before handle_mm_fault() reaches do_numa_page(), so the
//    page-fault perf sampler (sampler.h, PageFaultEvents) sees it with the
//    faulting address. The caller runs that sampler on the target.
//  - kernel.numa_balancing_promote_rate_limit_MBps = 0: in
//    should_numa_migrate_memory() numa_promotion_rate_limit() then returns
//    true for every candidate (`nr_cand - start >= 0`), so the kernel senses
//    (pgpromote_candidate grows) but does not promote. EXCEPTION, by design
//    of the kernel: while the fast node has more than max(1 GiB, 1/16 of the
//    node) free above its promotion watermark, pgdat_free_space_enough()
//    returns true first and the kernel promotes every hint-faulted page
//    regardless of the limit. The watchdog reports such migrations.
//  - The scanner skips every VMA whose policy lacks MPOL_F_MOF
//    (task_numa_work: `!vma_policy_mof(vma)`): ranges with an explicit
//    mbind/set_mempolicy policy (numactl --preferred/--membind) never take
//    hint faults unless the policy carries MPOL_F_NUMA_BALANCING. Start()
//    counts such slow-tier pages of the target and warns.
//
// Sysctls, and why only these two: numa_balancing (the mode above; the
// NORMAL bit (1) is kept when the user had it, so DRAM-to-DRAM balancing
// stays as configured: 0 -> 2, 1 -> 3) and the promotion rate limit (0).
// Not touched: /sys/kernel/mm/numa/demotion_enabled (reclaim's fallback,
// unrelated to sensing; hotpage demotes by itself), and the scan knobs
// scan_period_min_ms / scan_size_mb, which are debugfs files since 5.13, not
// sysctls: their defaults scan up to 2.5 GB/s of address space with a 1 s
// period, and the kernel caps scanning at ~3% of the task's CPU time anyway
// (node_stamp += 32 x scan time).
//
// Consent and restore: nothing is written unless the caller got explicit
// consent (`hotpage attach --allow-sysctl-changes`). Start() first takes an
// exclusive flock on STATE_DIR/hintfault.lock (released by the kernel when
// the process dies, even by SIGKILL: the lock, not a pid, says whether the
// holder is alive), writes the original values to STATE_DIR/hintfault-
// sysctls (temp file O_CREAT|O_EXCL|O_NOFOLLOW, fsync, rename; directory
// root-owned-or-ours, mode 0700, never group/other-writable), and only then
// changes the sysctls. Stop() and the destructor restore the originals and
// remove the state file. If a previous hotpage died without restoring (state
// file present, lock free), Start() restores from the file first and says
// so; if another live hotpage holds the lock, Start() refuses and names it.
// Only the two known sysctl paths are ever restored from a state file, with
// decimal values: a corrupt file is refused, not obeyed.
//
// Watchdog: a thread reads /proc/vmstat (numa_pte_updates,
// numa_hint_faults, numa_hint_faults_local, pgpromote_candidate,
// pgpromote_success, numa_pages_migrated), the target's scan sequence
// (/proc/PID/sched `mm->numa_scan_seq`, CONFIG_SCHED_DEBUG) and CPU time
// (/proc/PID/stat), and the two sysctls every check_interval. It warns
// (through the `warn` callback) and records in stats() when
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
//    kernel promotes); hotpage does not fight it, and still restores the
//    originals at the end.
//
// Threading: Start/Stop/the destructor on the owner thread; the watchdog
// thread only reads files and updates stats under mu_; stats() from any
// thread. The writer is used only by the owner thread (Start, Stop) while
// the watchdog is not running.

#ifndef HOTPAGE_SAMPLER_HINTFAULT_SOURCE_H_
#define HOTPAGE_SAMPLER_HINTFAULT_SOURCE_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "tools/base/json_writer.h"
#include "tools/base/kernel/kernel_fs.h"
#include "tools/base/kernel/sysfs_writer.h"
#include "tools/base/mutex.h"
#include "tools/base/state_dir.h"

namespace hotpage {

inline constexpr char kNumaBalancingSysctl[] = "/proc/sys/kernel/numa_balancing";
inline constexpr char kPromoteRateLimitSysctl[] =
    "/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps";
inline constexpr char kDefaultHintFaultStateDir[] = "/run/hotpage";  // = kDefaultStateDir
inline constexpr char kHintFaultLockName[] = "hintfault.lock";
inline constexpr char kHintFaultStateName[] = "hintfault-sysctls";

// "kernel.numa_balancing" for "/proc/sys/kernel/numa_balancing".
std::string SysctlName(absl::string_view proc_sys_path);

// One sentence naming what the source changes, for --help and refusals.
std::string DescribeHintFaultSysctlChanges();

// The numa_balancing value to set given the original one: the tiering bit
// (2) plus the original NORMAL bit (1). InvalidArgument for non-numbers.
absl::StatusOr<std::string> WantedNumaBalancing(absl::string_view original);

// --- state file -------------------------------------------------------------

// What a running source wrote before changing anything:
//   hotpage-hintfault-state 1
//   pid 1234
//   start_time 5678            (field 22 of /proc/PID/stat; for messages)
//   sysctl /proc/sys/kernel/numa_balancing 0 2
//   sysctl /proc/sys/kernel/numa_balancing_promote_rate_limit_MBps 65536 0
// Each sysctl line: path, original value, value hotpage set.
struct HintFaultSysctlChange {
  std::string path;
  std::string original;
  std::string wanted;
};
struct HintFaultState {
  int64_t pid = 0;
  uint64_t start_time_ticks = 0;
  std::vector<HintFaultSysctlChange> changes;
};
std::string FormatHintFaultState(const HintFaultState& state);
// Strict: the header line, a pid, at most one line per KNOWN sysctl path
// (the two above), decimal values of at most 10 digits; anything else is
// an InvalidArgument naming the line. Bounded work for any input.
absl::StatusOr<HintFaultState> ParseHintFaultState(absl::string_view text);

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
// /proc/PID/stat as ParseProcStat (tools/base/kernel/proc_stat.h) reads
// them; nullopt if malformed.
struct ProcCpu {
  uint64_t minflt = 0;
  uint64_t cpu_ticks = 0;
};
std::optional<ProcCpu> ParseProcStatCpu(absl::string_view text);

// `mm->numa_scan_seq : N` from /proc/PID/sched; nullopt if absent.
std::optional<uint64_t> ParseNumaScanSeq(absl::string_view proc_pid_sched);

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
};

struct HintFaultStats {
  // Deltas since Start (system-wide vmstat counters).
  NumaVmstat delta;
  uint64_t scan_passes = 0;           // numa_scan_seq advanced (target's mm)
  bool scan_seq_known = false;        // /proc/PID/sched had numa_scan_seq
  uint64_t target_minor_faults = 0;   // minflt delta: hint faults + others
  double elapsed_s = 0;
  double hint_faults_per_sec = 0;     // delta.numa_hint_faults / elapsed
  double longest_scan_gap_s = 0;      // longest wall time without progress
  bool scan_stalled = false;          // now
  uint64_t stall_episodes = 0;
  uint64_t kernel_migrated_pages = 0; // numa_pages_migrated delta
  uint64_t sysctl_overrides = 0;      // times a changed sysctl was changed back
  uint64_t unscannable_slow_pages = 0;  // at Start, see file comment
  uint64_t checks = 0;
  double watchdog_cpu_seconds = 0;
  std::string recovered;              // what Start restored from a dead run
};

class HintFaultWatchdog {
 public:
  HintFaultWatchdog(HintFaultWatchdogOptions options, std::vector<HintFaultSysctlChange> changes);

  // Folds in one observation; appends the warnings to emit now (each state
  // change is warned once, not every check).
  void Observe(const HintFaultObservation& o, std::vector<std::string>* warnings);
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
  uint64_t progress_ns_ = 0;        // last observed scan progress
  uint64_t progress_cpu_ticks_ = 0; // target CPU then
  uint64_t warned_migrated_ = 0;
  std::vector<bool> overridden_;
};

// --- the source -----------------------------------------------------------------

struct HintFaultOptions {
  pid_t pid = 0;                       // the target (scan sequence, CPU, numa_maps)
  std::vector<int> slow_nodes;         // for the unscannable-pages check
  std::string state_dir = kDefaultHintFaultStateDir;  // a real path (not under the KernelFs root)
  absl::Duration check_interval = absl::Seconds(1);
  int stall_periods = 5;
  // Warnings and notices, one line each without a trailing newline
  // (default: "hotpage: <line>" on stderr).
  std::function<void(const std::string&)> warn;
};

class HintFaultSource {
 public:
  // Live machine: reads under "/" and writes /proc/sys there.
  static absl::StatusOr<std::unique_ptr<HintFaultSource>> Start(const HintFaultOptions& options);
  // Reads through `fs` and writes through `writer`, both rooted at the same
  // tree (tests: a FakeTree and a FakeSysfsLog writer).
  static absl::StatusOr<std::unique_ptr<HintFaultSource>> Start(const HintFaultOptions& options,
                                                                KernelFs fs,
                                                                std::unique_ptr<SysfsWriter> writer);

  // Stops the watchdog and restores the sysctls (see Stop) if not done yet.
  ~HintFaultSource();
  HintFaultSource(const HintFaultSource&) = delete;
  HintFaultSource& operator=(const HintFaultSource&) = delete;

  // Stops the watchdog, writes every original value back (also over a value
  // someone else set meanwhile, which the result mentions), removes the
  // state file and releases the lock. If a write fails the state file stays
  // (the next Start retries) and the error says what to set by hand.
  // Idempotent: later calls return the first call's status.
  absl::Status Stop();

  // "kernel.numa_balancing 0 -> 2, kernel.numa_balancing_promote_rate_limit_MBps 65536 -> 0".
  std::string DescribeChanges() const;
  // After a successful Stop: "restored kernel.numa_balancing=0, ...".
  std::string restored() const;
  const std::vector<HintFaultSysctlChange>& changes() const { return changes_; }

  HintFaultStats stats() const ABSL_LOCKS_EXCLUDED(mu_);
  // The stats as one JSON object value (for attach's --stats-json).
  void AppendJson(JsonWriter* w) const ABSL_LOCKS_EXCLUDED(mu_);

  // One watchdog check now, on the calling thread (tests; the thread calls
  // it every check_interval).
  void CheckNow() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  HintFaultSource(const HintFaultOptions& options, KernelFs fs, std::unique_ptr<SysfsWriter> writer);
  absl::Status Setup();
  absl::Status OpenStateDir();
  absl::Status RecoverStale();
  absl::Status WriteState(const HintFaultState& state);
  void RemoveState();
  std::string LockHolderDescription() const;
  absl::Status RestoreChanges(const std::vector<HintFaultSysctlChange>& changes, std::string* done);
  void CountUnscannable();
  void Run();
  void Warn(const std::string& line) const;
  HintFaultObservation Observe() const;

  const HintFaultOptions options_;
  const KernelFs fs_;
  const std::unique_ptr<SysfsWriter> writer_;
  std::optional<StateDir> state_dir_;  // opened and locked by Setup
  std::vector<HintFaultSysctlChange> changes_;  // applied, in order
  uint64_t scan_period_ms_ = 1000;
  bool stopped_ = false;
  absl::Status stop_status_;
  std::string restored_;
  std::string recovered_;
  uint64_t unscannable_slow_pages_ = 0;

  mutable Mutex mu_;
  CondVar cv_;
  bool stop_thread_ ABSL_GUARDED_BY(mu_) = false;
  std::unique_ptr<HintFaultWatchdog> watchdog_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace hotpage

#endif  // HOTPAGE_SAMPLER_HINTFAULT_SOURCE_H_
