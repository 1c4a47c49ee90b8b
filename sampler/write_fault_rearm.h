// WriteFaultRearm: access evidence for pages on EVERY node, fast tier
// included, on machines without PEBS or IBS, by making the next write to
// each page of the target fault once.
//
// Why: the page-fault sources see a page only when it faults. NUMA hint
// faults (hintfault/numa_balancing_controller.h) stop once a page is on the top
// tier (tiering mode scans slower tiers only), and the kernel's modes that scan
// top-tier pages also migrate them by themselves. So without a PMU nothing says
// which CPUs keep using a page that is already on fast memory: the input of the
// locality rule (policy/placement.h rule L) and of any shared/private
// judgement about fast-tier pages.
//
// How (Linux 3.11+, CONFIG_MEM_SOFT_DIRTY; checked in the 6.12 sources and
// measured in the tests/vm guest): writing "4" to /proc/PID/clear_refs
// (fs/proc/task_mmu.c clear_refs_write, CLEAR_REFS_SOFT_DIRTY) clears the
// soft-dirty bit of every PTE/PMD of the process and write-protects it. The
// next write to the page is a write-protect fault (do_wp_page reuses the
// page in place and sets soft-dirty again): no page moves, no data is
// copied. arch/x86/mm/fault.c do_user_addr_fault() emits
// perf_sw_event(PERF_COUNT_SW_PAGE_FAULTS, 1, regs, address) for it before
// handle_mm_fault(), so the page-fault sampler (sampler.h) sees it with the
// faulting address and CPU: one sample per written page per re-arm, from
// whichever thread wrote it first. Measured in the guest: after each clear
// a workload writing 2048 hot pages took 2054 minor faults, and none
// without a clear.
//
// Limits, stated: only WRITES are seen (a read-mostly hot page gives no
// evidence this way); a page written by several threads is attributed per
// re-arm to the first writer, so "shared" needs several re-arms (the
// hotness table's foreign count does the rest); THP-mapped ranges fault once
// per 2 MiB.
//
// Cost, and how it is bounded, like the kernel's own NUMA scanner (3% rule
// in task_numa_work):
//  - hotpage's side: clear_refs walks every VMA of the target and flushes
//    its TLB; the time of that write grows with the target's mapped memory.
//  - the target's side: one minor fault per distinct page written per
//    interval. Not measurable from outside; estimated at fault_cost_ns
//    each, from the faults the sampler saw since the last re-arm.
//  The next re-arm is due after max(min_interval, (clear time + faults x
//  fault_cost_ns) / cpu_budget): both sides together stay within
//  cpu_budget of one CPU.
//  - side effect on the target: its soft-dirty bits are reset every interval,
//    so a CRIU incremental dump of it (the only other user of the bits) would
//    see every page as dirty. The user asks for it (`hotpage attach
//    --write-faults`), or `--source auto` chooses it on a machine without
//    PEBS, IBS or permitted hint faults and says so on stderr
//    (tools/attach/source_choice.h).
//
// Kernels without CONFIG_MEM_SOFT_DIRTY accept the "4" and do nothing (no
// fault ever follows): ProbeSoftDirty() checks on hotpage's own memory
// before the user is told write faults are on.
//
// Pid reuse: the file is opened once, at Open(). A /proc/PID file keeps
// referring to the task it was opened for (proc_pid inode -> struct pid):
// once that process is gone the write fails with ESRCH, even if the number
// was reused. The caller checks its ProcessHandle right after Open().
//
// Threading: thread-compatible; attach calls it from its round loop.

#ifndef HOTPAGE_SAMPLER_WRITE_FAULT_REARM_H_
#define HOTPAGE_SAMPLER_WRITE_FAULT_REARM_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace hotpage {

// The one kernel interface the re-arm uses: /proc/PID/clear_refs, opened
// for one process. A fake in tests.
class ClearRefsFile {
 public:
  virtual ~ClearRefsFile() = default;
  // Writes "4" (clear soft-dirty bits). 0 or the errno of the write.
  virtual int ClearSoftDirty() = 0;
};

// Opens /proc/PID/clear_refs O_WRONLY | O_CLOEXEC | O_NOFOLLOW. NotFound if
// the process is gone, PermissionDenied without the rights (the file is
// 0200, owner = the process's uid; root may), Unimplemented when the kernel
// has no clear_refs (CONFIG_PROC_PAGE_MONITOR off).
absl::StatusOr<std::unique_ptr<ClearRefsFile>> OpenClearRefs(pid_t pid);

// Whether clearing soft-dirty bits makes writes fault on this kernel:
// clears this process's own bits, writes one page of its own and looks for
// the minor fault (getrusage RUSAGE_THREAD). OK, or Unimplemented naming
// CONFIG_MEM_SOFT_DIRTY. Costs this process one fault per page it writes
// next, once.
absl::Status ProbeSoftDirty();

struct WriteFaultRearmOptions {
  // Re-arms never come closer than this: bounds the target's fault rate.
  absl::Duration min_interval = absl::Milliseconds(200);
  // Nor closer than (time of the last clear + faults x fault_cost_ns) /
  // cpu_budget: the clears and the faults they cause take at most this
  // share of one CPU. 0.03 like the kernel's scanner.
  double cpu_budget = 0.03;
  // Estimated cost of one write-protect fault to the target: a minor fault
  // that reuses the page in place, ~0.5-1 us natively.
  uint64_t fault_cost_ns = 1000;
  // Monotonic clock in ns (tests inject one).
  std::function<uint64_t()> clock;
};

struct WriteFaultRearmStats {
  uint64_t rearms = 0;          // successful clears
  uint64_t clear_ns_total = 0;  // time spent in the clear_refs writes
  uint64_t clear_ns_max = 0;
  uint64_t faults = 0;       // faults reported by the caller, in all
  uint64_t interval_ns = 0;  // the interval now in force
};

class WriteFaultRearm {
 public:
  // `options.clock` empty: CLOCK_MONOTONIC.
  WriteFaultRearm(std::unique_ptr<ClearRefsFile> file,
                  WriteFaultRearmOptions options);

  // Re-arms if one is due at `now_ns` (the first call always is).
  // `faults_total`: the caller's running count of page-fault samples; what
  // it grew by since the previous re-arm is that re-arm's cost to the
  // target. Returns whether it re-armed. Errors: NotFound when the process is
  // gone (ESRCH: the caller ends the run), otherwise the write's errno as a
  // Status; no further re-arm is attempted before the next interval either way.
  absl::StatusOr<bool> MaybeRearm(uint64_t now_ns, uint64_t faults_total = 0);

  const WriteFaultRearmStats& stats() const { return stats_; }

 private:
  std::unique_ptr<ClearRefsFile> file_;
  WriteFaultRearmOptions options_;
  uint64_t next_due_ns_ = 0;
  uint64_t faults_at_rearm_ = 0;  // faults_total at the previous re-arm
  bool started_ = false;
  WriteFaultRearmStats stats_;
};

// OpenClearRefs(pid), then `same_process()` (the caller's pid-reuse check,
// e.g. ProcessHandle::StillSame() == kSame) to prove the file opened is the
// caller's target's: NotFound if it is not. Does not probe (ProbeSoftDirty
// once per run).
absl::StatusOr<std::unique_ptr<WriteFaultRearm>> StartWriteFaultRearm(
    pid_t pid, absl::FunctionRef<bool()> same_process,
    WriteFaultRearmOptions options = {});

}  // namespace hotpage

#endif  // HOTPAGE_SAMPLER_WRITE_FAULT_REARM_H_
