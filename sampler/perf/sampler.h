// Sampler: opens an EventGroup's events on the CPUs each may use, maps one
// ring per CPU, and delivers decoded, filtered samples in batches.
//
// Event plan: events with the same EventSpec::group form one perf group
// (leader: the first of that id) when EventGroup::grouped; otherwise every
// event stands alone. Each group opens only on the CPUs in both
// EventSpec::cpus (empty: all) and SamplerConfig::cpus: on hybrid Intel the
// cpu_core group opens on P-core CPUs and the cpu_atom one on E-cores (the
// kernel answers ENOENT elsewhere: x86_pmu_event_init() in
// arch/x86/events/core.c). A CPU gets one ring whatever groups it has; a CPU
// with none gets no ring.
//
// Rings: one per CPU. Two ways to fill them:
//  - per task (the default when the source allows it: PEBS, page faults,
//    IBS from Linux 6.2): for each target task and CPU, an event with
//    pid=TID, cpu=CPU and inherit=1, so the kernel itself restricts
//    sampling to the target and to every thread or child it creates later;
//    the events of further tasks on a CPU are redirected into that CPU's
//    ring (PERF_EVENT_IOC_SET_OUTPUT). Cost: descriptors = tasks x (sum over
//    groups of the group's CPUs x its size), but no sample of another
//    process is ever taken, and it works with perf_event_paranoid <= 2.
//  - system-wide (--all, IBS before 6.2, when forced, or when the
//    descriptors per task do not fit under RLIMIT_NOFILE's hard limit):
//    pid=-1 per CPU, and the ring reader keeps only the target processes
//    (thread-group ids, plus children seen in PERF_RECORD_FORK). Cost:
//    samples of other processes are taken and thrown away, and it needs
//    CAP_PERFMON or perf_event_paranoid <= 0; gain: a fixed number of
//    events whatever the number of targets. reason() says why.
// Either way a busy CPU cannot starve the others: each Poll() drains the
// rings round-robin, each within a byte budget.
//
// Descriptors: Open() computes the plan's need (DescriptorsNeeded) and
// raises RLIMIT_NOFILE's soft limit up to the hard limit when it must
// (fd_limits.h); when even the hard limit is too low it goes system-wide if
// permitted, else fails naming the number needed and the limit.
//
// Exited tasks: when the task owning a ring's polled descriptor exits (and
// every child it passed the event to), perf_poll() answers EPOLLHUP for
// ever (is_event_hup() in kernel/events/core.c), so epoll_wait would never
// sleep again. Poll() then closes that task's events on that ring, polls
// another live task's event of the ring instead, and when no task is left
// drains the ring a last time, unmaps and closes it. Closed events leave
// the period controller's set.
//
// Period changes: PERF_EVENT_IOC_PERIOD reaches only the event it is issued
// on: _perf_event_period() runs event_function_call(event,
// __perf_event_period, ...) for that event alone, where ENABLE/DISABLE go
// through perf_event_for_each_child() (kernel/events/core.c).
// __perf_event_period() also sets the event's attr.sample_period, so
// children inherited after the change copy the new period
// (inherit_event() -> perf_event_alloc(&parent_event->attr, ...)); children
// inherited before it keep the old one. There is no descriptor for an
// inherited child, so no ioctl can reach it, and re-opening would lose the
// children already inherited. The sampler is honest about it instead:
// period() is the period of the events it opened and of children created
// after the last change; every sample carries its own PERIOD, so estimates
// scale right whatever period a child samples at;
// period_reaches_children() turns false once the period changed while
// inherited children may exist; failed ioctls are counted
// (period_errors()), not ignored.
//
// Wake-ups: events use a watermark (a quarter of the ring by default), so
// the thread sleeps in epoll_wait until there is a batch worth reading or
// the caller's timeout passes; it never spins.
//
// System-wide pid filter: before each drain pass the sampler reads every
// ring's FORK and EXIT records (without consuming them) into the one shared
// PidFilter, and drains each ring only up to the head it had before that
// scan. A child's first samples on one CPU's ring are therefore kept even
// when its FORK record sits in another CPU's ring (the FORK record is
// written in copy_process() -> perf_event_fork() before the child can run).
// A target process whose leader's EXIT record was seen leaves the filter
// once every ring has been drained past that record, so a recycled pid is
// not sampled (a process's samples all precede its EXIT record). Limits:
// a leader that exits before its other threads (pthread_exit() in main)
// ends the process's sampling early; at most 64 exits wait at a time (more
// stay in the filter); while newer exits keep arriving, older ones wait
// with them.
//
// Threading: one thread calls Poll()/Flush(); counters may be read from it.
// No allocation per sample: batches are decoded into a fixed buffer.

#ifndef HOTPAGE_SAMPLER_PERF_SAMPLER_H_
#define HOTPAGE_SAMPLER_PERF_SAMPLER_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "sampler/perf/event_config.h"
#include "sampler/perf/fd_limits.h"
#include "sampler/perf/perf_event_system.h"
#include "sampler/perf/period_controller.h"
#include "sampler/perf/ring_reader.h"
#include "tools/base/parse.h"  // ParseKernelRelease

namespace hotpage {

struct SamplerConfig {
  EventGroup events;
  std::vector<pid_t> pids;  // target processes (thread-group ids)
  // Per-task mode: the targets' threads that exist already (ListThreads),
  // each opened as its own task. The kernel's inherit follows only threads
  // and children created after the event opened, so a thread that exists
  // before Open() and is not listed here is never sampled. Empty: the pids
  // themselves (right for a process started by the sampler). A listed
  // thread that exits before its event opens (ESRCH) is skipped.
  std::vector<pid_t> threads;
  bool all = false;          // every process (system-wide, no filter)
  bool system_wide = false;  // force system-wide rings with a pid filter
  // Whether system-wide events would be allowed (CAP_PERFMON or
  // CAP_SYS_ADMIN, or perf_event_paranoid <= 0): then a plan whose
  // per-task descriptors exceed RLIMIT_NOFILE's hard limit goes
  // system-wide instead of failing. Set by IncludeExistingThreads.
  bool system_wide_permitted = false;
  // The running kernel's (major, minor) from /proc/sys/kernel/osrelease;
  // decides per-task IBS (6.2+). Unknown: IBS stays system-wide. Set by
  // IncludeExistingThreads.
  std::optional<std::pair<int, int>> kernel_version;
  // RLIMIT_NOFILE; null: this process's (LinuxFdLimits).
  FdLimits* fd_limits = nullptr;
  std::vector<int> cpus;                    // CPUs to sample (online CPUs)
  size_t ring_data_pages = 64;              // per CPU; power of two (256 KiB)
  size_t wakeup_bytes = 0;                  // 0: a quarter of the ring
  size_t budget_bytes_per_ring = 64 << 10;  // per ring per pass
  // Adaptive period: keep the sampling thread under this share of one core
  // (0 disables adaptation).
  double cpu_budget = 0.02;
  uint64_t max_period = 1ull << 26;
};

using SampleSink = std::function<void(absl::Span<const Sample>)>;

class Sampler {
 public:
  static absl::StatusOr<std::unique_ptr<Sampler>> Open(SamplerConfig config,
                                                       PerfEventSystem* sys);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  absl::Status Enable();
  absl::Status Disable();

  // Waits up to timeout_ms for a ring to reach its watermark, then drains
  // all rings round-robin within their budgets, calling `sink` with batches.
  // A ring whose polled task exited (EPOLLHUP) is handed to another task's
  // event, or drained a last time and closed (see the file comment).
  // Returns the number of samples delivered.
  absl::StatusOr<size_t> Poll(int timeout_ms, const SampleSink& sink);

  // Whether the last Poll() left every ring empty (no ring hit its budget).
  // Then every sample timestamped before that Poll started has been
  // delivered (a sample enters its ring when its event happens): what
  // SampleReorderBuffer's watermark rule needs.
  bool last_poll_complete() const { return last_poll_complete_; }

  // Drains every ring completely (after Disable(), at the end of a run).
  size_t Flush(const SampleSink& sink);

  // Reports CPU time spent in this thread over `wall_s`; adjusts the
  // period when adaptation is on. Returns the period in force.
  uint64_t AdaptPeriod(double cpu_s, double wall_s);

  RingCounters Totals() const;
  std::vector<std::pair<int, RingCounters>> PerCpu() const;
  uint64_t period() const;
  bool system_wide() const { return system_wide_; }
  // Why the rings are system-wide (empty when per task).
  const std::string& reason() const { return reason_; }
  // Open event descriptors (events of exited tasks are closed).
  size_t num_events() const { return events_.size(); }
  // Descriptors the plan needed at Open (DescriptorsNeeded).
  size_t descriptors_needed() const { return descriptors_needed_; }
  // Rings closed because every task writing into them exited, and tasks
  // whose events were closed for that reason (one per task and CPU).
  size_t rings_closed() const { return rings_closed_; }
  size_t tasks_exited() const { return tasks_exited_; }
  // PERF_EVENT_IOC_PERIOD calls that failed, and the last errno.
  uint64_t period_errors() const { return period_errors_; }
  int last_period_errno() const { return last_period_errno_; }
  // False once the period changed while inherited events may exist (per
  // task mode): children created before the change keep the old period.
  bool period_reaches_children() const { return period_reaches_children_; }
  // Events whose precise_ip was lowered after EOPNOTSUPP ("name: 3 -> 2").
  const std::vector<std::string>& precise_fallbacks() const {
    return precise_fallbacks_;
  }

 private:
  struct Ring {
    int cpu = -1;
    int poll_fd = -1;  // the descriptor in epoll (a live task's event)
    void* base = nullptr;
    size_t bytes = 0;
    bool closed = false;  // every writer gone: unmapped
    std::unique_ptr<RingReader> reader;
  };
  struct OpenEvent {
    int fd = -1;
    pid_t pid = -1;  // the task (-1: system-wide)
    size_t ring = 0;
    bool leader = false;    // enabled and disabled (with its group)
    bool sampling = false;  // its period adapts
  };

  Sampler(SamplerConfig config, PerfEventSystem* sys);
  absl::Status OpenAll();
  absl::Status OpenCpu(int cpu, const std::vector<pid_t>& targets, size_t page,
                       size_t data_bytes, size_t wakeup);
  int OpenOne(size_t spec_index, perf_event_attr* attr, pid_t pid, int cpu,
              int group_fd);
  size_t HandleHangup(size_t ring, const SampleSink& sink);
  void ScanTaskRecords();
  size_t DrainRound(const SampleSink& sink, size_t budget, bool* more);

  SamplerConfig config_;
  PerfEventSystem* sys_;
  bool system_wide_ = false;
  std::string reason_;
  bool last_poll_complete_ = false;
  PidFilter filter_;
  std::vector<OpenEvent> events_;
  std::vector<Ring> rings_;
  // Per ring: the head read before the FORK/EXIT scan of this pass (the
  // drain stops there) and the head past which the scan read.
  std::vector<uint64_t> drain_limit_;
  std::vector<uint64_t> scanned_to_;
  // Target processes whose leader exited, removed from the filter once
  // every ring's tail passed exit_barrier_ (fixed capacity: no allocation).
  static constexpr size_t kMaxPendingExits = 64;
  uint32_t pending_exits_[kMaxPendingExits] = {};
  size_t num_pending_exits_ = 0;
  std::vector<uint64_t> exit_barrier_;
  uint64_t forks_followed_ = 0;
  size_t descriptors_needed_ = 0;
  size_t rings_closed_ = 0;
  size_t tasks_exited_ = 0;
  uint64_t period_errors_ = 0;
  int last_period_errno_ = 0;
  bool period_reaches_children_ = true;
  std::vector<uint8_t> precise_ip_;  // per spec, after fallbacks
  std::vector<std::string> precise_fallbacks_;
  int epoll_fd_ = -1;
  std::optional<PeriodController> controller_;
  static constexpr size_t kBatch = 1024;
  std::unique_ptr<Sample[]> batch_;
};

// Online CPUs from /sys/devices/system/cpu/online.
absl::StatusOr<std::vector<int>> OnlineCpus(const KernelFs& fs);

// The thread ids of process `pid` (/proc/PID/task), ascending.
absl::StatusOr<std::vector<pid_t>> ListThreads(const KernelFs& fs, pid_t pid);

// Fills what the sampler needs to know of the machine: the kernel version
// (/proc/sys/kernel/osrelease), whether system-wide events are permitted
// (ProbeAvailability), and in per-task mode (neither `all` nor
// `system_wide`) config->threads with the existing threads of config->pids
// (a pid whose threads cannot be listed stands for itself). Whether the
// per-task plan fits under RLIMIT_NOFILE is decided by Sampler::Open. Call
// after pids and cpus are set.
void IncludeExistingThreads(const KernelFs& fs, SamplerConfig* config);

// The perf event descriptors `config` opens: tasks x (sum over perf groups
// of the group's CPUs x its size), where tasks is 1 system-wide, else the
// listed threads (or the pids when none are listed), and a group's CPUs are
// config.cpus intersected with its EventSpec::cpus.
size_t DescriptorsNeeded(const SamplerConfig& config, bool system_wide);

// A user-facing explanation of a perf_event_open failure for `spec`.
std::string ExplainOpenError(int err, const EventSpec& spec, bool system_wide);

}  // namespace hotpage

#endif  // HOTPAGE_SAMPLER_PERF_SAMPLER_H_
