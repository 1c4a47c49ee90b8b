// NumaBalancingController: takes over the kernel's NUMA balancing so that it
// senses but does not move (page-precise access evidence on machines without
// PEBS or IBS, from the kernel's own NUMA hint faults, while hotpage alone
// decides where pages go), and gives it back: the sysctl take-over and
// restore, the crash-recovery state file, and the watchdog thread.
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
// unrelated to sensing; where it is on, attach leaves the fast tier's
// victims to that reclaim: policy/engine.h, "The kernel's LRU as the fast
// tier's evidence"; the watchdog reads it every check, says when it
// changes, and attach follows: DemotionEnabled()), and the scan knobs
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
// Watchdog: a thread reads /proc/vmstat, the target's scan sequence and CPU
// time, the two sysctls and demotion_enabled every check_interval (attach:
// its round interval) and hands each reading to a
// HintFaultWatchdog (hintfault_watchdog.h), which says when the kernel stops
// scanning, migrates pages itself, or someone else changes a sysctl;
// hotpage does not fight such a change, and still restores the originals at
// the end. Warnings go through the `warn` callback, counts into stats().
//
// The controller produces no samples: the page-fault sampler
// (sampler/perf/sampler.h) run on the target sees the hint faults. The
// state file is the shared crash-recovery format (sampler/recovery_state.h,
// HintFaultState).
//
// Threading: Start/Stop/the destructor on the owner thread; the watchdog
// thread only reads files and updates stats under mu_; stats() from any
// thread. The writer is used only by the owner thread (Start, Stop) while
// the watchdog is not running.

#ifndef HOTPAGE_SAMPLER_HINTFAULT_NUMA_BALANCING_CONTROLLER_H_
#define HOTPAGE_SAMPLER_HINTFAULT_NUMA_BALANCING_CONTROLLER_H_

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
#include "sampler/hintfault/hintfault_watchdog.h"
#include "sampler/recovery_state.h"
#include "tools/base/json_writer.h"
#include "tools/base/kernel/kernel_fs.h"
#include "tools/base/kernel/sysfs_writer.h"
#include "tools/base/mutex.h"
#include "tools/base/state_dir.h"

namespace hotpage {

inline constexpr char kDefaultHintFaultStateDir[] =
    "/run/hotpage";  // = kDefaultStateDir
inline constexpr char kHintFaultLockName[] = "hintfault.lock";
inline constexpr char kHintFaultStateName[] = "hintfault-sysctls";

// One sentence naming what the source changes, for --help and refusals.
std::string DescribeHintFaultSysctlChanges();

// The numa_balancing value to set given the original one: the tiering bit
// (2) plus the original NORMAL bit (1). InvalidArgument for non-numbers.
absl::StatusOr<std::string> WantedNumaBalancing(absl::string_view original);

// --- the controller
// ---------------------------------------------------------------

struct NumaBalancingOptions {
  pid_t pid = 0;                // the target (scan sequence, CPU, numa_maps)
  std::vector<int> slow_nodes;  // for the unscannable-pages check
  std::string state_dir =
      kDefaultHintFaultStateDir;  // a real path (not under the KernelFs root)
  absl::Duration check_interval = absl::Seconds(1);
  int stall_periods = 5;
  // Warnings and notices, one line each without a trailing newline
  // (default: "hotpage: <line>" on stderr).
  std::function<void(const std::string&)> warn;
};

class NumaBalancingController {
 public:
  // Live machine: reads under "/" and writes /proc/sys there.
  static absl::StatusOr<std::unique_ptr<NumaBalancingController>> Start(
      const NumaBalancingOptions& options);
  // Reads through `fs` and writes through `writer`, both rooted at the same
  // tree (tests: a FakeTree and a FakeSysfsLog writer).
  static absl::StatusOr<std::unique_ptr<NumaBalancingController>> Start(
      const NumaBalancingOptions& options, KernelFs fs,
      std::unique_ptr<SysfsWriter> writer);

  // Stops the watchdog and restores the sysctls (see Stop) if not done yet.
  ~NumaBalancingController();
  NumaBalancingController(const NumaBalancingController&) = delete;
  NumaBalancingController& operator=(const NumaBalancingController&) = delete;

  // Stops the watchdog, writes every original value back (also over a value
  // someone else set meanwhile, which the result mentions), removes the
  // state file and releases the lock. If a write fails the state file stays
  // (the next Start retries) and the error says what to set by hand.
  // Idempotent: later calls return the first call's status.
  absl::Status Stop();

  // "kernel.numa_balancing 0 -> 2,
  // kernel.numa_balancing_promote_rate_limit_MBps 65536 -> 0".
  std::string DescribeChanges() const;
  // After a successful Stop: "restored kernel.numa_balancing=0, ...".
  std::string restored() const;
  const std::vector<HintFaultSysctlChange>& changes() const { return changes_; }

  HintFaultStats stats() const ABSL_LOCKS_EXCLUDED(mu_);
  // demotion_enabled as the watchdog last read it (the start, then every
  // check); nullopt before a reading or where unreadable.
  std::optional<bool> DemotionEnabled() const ABSL_LOCKS_EXCLUDED(mu_);
  // The stats as one JSON object value (for attach's --stats-json).
  void AppendJson(JsonWriter* w) const ABSL_LOCKS_EXCLUDED(mu_);

  // One watchdog check now, on the calling thread (tests; the thread calls
  // it every check_interval).
  void CheckNow() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  NumaBalancingController(const NumaBalancingOptions& options, KernelFs fs,
                          std::unique_ptr<SysfsWriter> writer);
  absl::Status Setup();
  absl::Status OpenStateDir();
  absl::Status RecoverStale();
  absl::Status WriteState(const HintFaultState& state);
  void RemoveState();
  std::string LockHolderDescription() const;
  absl::Status RestoreChanges(const std::vector<HintFaultSysctlChange>& changes,
                              std::string* done);
  void CountUnscannable();
  void Run();
  void Warn(const std::string& line) const;
  HintFaultObservation Observe() const;

  const NumaBalancingOptions options_;
  const KernelFs fs_;
  const std::unique_ptr<SysfsWriter> writer_;
  std::optional<StateDir> state_dir_;           // opened and locked by Setup
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

#endif  // HOTPAGE_SAMPLER_HINTFAULT_NUMA_BALANCING_CONTROLLER_H_
