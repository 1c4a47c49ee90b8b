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
// (inherit_event() -> perf_event_alloc(&parent_event->attr, ...), always
// from the original parent); children inherited before it keep the old
// one, and there is no descriptor through which an ioctl could reach them.
// AdaptPeriod() therefore issues the ioctl on its own events (failures are
// counted: period_errors()) and, in per-task mode, RE-OPENS the per-task
// events at the new period when inherited children may be sampling at a
// period too far from it:
//  - when: a sampling event honours its period (not a software event that
//    samples PERIOD: perf_swevent_event() in kernel/events/core.c takes
//    every occurrence of those as a sample of period 1, whatever
//    sample_period says, so page-fault sampling has no period to adapt),
//    the periods in force since the last open span more than
//    kReopenFactor (2x) around the new one, at least kReopenMinIntervalS
//    (10 s; longer for large plans, below) after the last open or
//    attempt, and SamplerConfig::fs is set.
//    Within 2x a stale child costs at most twice what the controller
//    wants, inside the 4x band in which the controller itself holds
//    (period_controller.h); every sample carries its own PERIOD, so the
//    estimates are right either way. A re-open costs one perf_event_open
//    per descriptor of the plan and one ring mapping per CPU: measured on
//    a loaded 2-vCPU VM with software events, 56 us per open and 260 us
//    per 256 KiB ring, so about 3 ms for 3 threads on 8 CPUs and 135 ms
//    for the D3 example (1344 descriptors, 224 rings). The interval
//    therefore also grows with the last re-open's measured CPU time, to
//    keep re-opens under kReopenCpuShare (0.5%) of a core, a quarter of
//    the default 2% budget: 10 s for small plans, 27 s for the D3 one.
//    That CPU time is not billed to the controller (it would raise the
//    period again and feed back).
//  - what: the targets' live tasks are listed again (/proc/PID/task of
//    each target and of each descendant process found through the ppid
//    field of /proc/N/stat, through KernelFs). When each of them already
//    has its own event and no ioctl failed, the ioctl reached every task
//    and nothing is re-opened. Otherwise the whole plan is opened again for
//    those tasks at the new period, into new rings and a new epoll set;
//    tasks that appeared meanwhile are listed and opened in up to
//    kReopenRounds rounds (a task forked before its parent's new event
//    opened is not inherited by it). Then, if the sampler is enabled, the
//    old groups are disabled (IOC_DISABLE reaches their children) and the
//    new ones enabled; accesses in the few microseconds between are not
//    sampled, none is sampled twice. The old rings are drained completely
//    into the sink (every sample delivered once, all before the new rings'
//    samples), their counters kept (Totals(), PerCpu()), then unmapped and
//    their events closed: the last reference to an event goes with the
//    mapping (the vma holds the file), and perf_event_release_kernel()
//    frees its inherited children. The re-open runs inside the next Poll(),
//    which has the sink.
//  - failure (an open fails, EMFILE: old and new coexist for a moment, no
//    task left, tasks still appearing after kReopenRounds): the new events
//    are closed, the old ones keep running at the old period (disabled and
//    re-enabled only if the failure came after the switch), the failure is
//    counted (reopen_failures(), last_reopen_error()) and retried no sooner
//    than kReopenMinIntervalS later.
// period() is the period of the events the sampler opened;
// period_reaches_children() is false from a period change in per-task mode
// (of a plan whose events honour their period) until a re-open (or the
// check that no inherited child exists) succeeded.
// Limit: a descendant whose parent exited is reparented (to init or a
// subreaper), so the ppid walk no longer finds it and a re-open stops
// sampling it.
//
// What the budget measures: SamplerConfig::cpu_budget bounds the CPU time
// the caller reports to AdaptPeriod(), which is the time of the thread
// that polls (record passes CLOCK_THREAD_CPUTIME_ID): decoding and
// delivering samples, proportional to the sample rate. It does not include
// the cost paid in the targets' own context for each sample (the PMI or
// software-event overflow, the PEBS assist, writing the record), which is
// of the same order per sample but is not measured; THROTTLE records
// (Totals().throttle) are the kernel's own signal that it is too high.
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
  // Lists the targets' live tasks when the period changes (per-task mode;
  // see "Period changes" above). Must outlive the Sampler. Null: the
  // sampler never re-opens, and inherited children keep their period.
  const KernelFs* fs = nullptr;
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
  // period when adaptation is on (PERF_EVENT_IOC_PERIOD on every sampling
  // event) and, in per-task mode, schedules a re-open of the events for the
  // next Poll() when inherited children may keep a period too far from it
  // (see the file comment). Returns the period in force.
  uint64_t AdaptPeriod(double cpu_s, double wall_s);

  // Re-open policy (see the file comment for the arithmetic).
  static constexpr double kReopenFactor = 2.0;
  static constexpr double kReopenMinIntervalS = 10.0;
  static constexpr int kReopenRounds = 4;
  static constexpr double kReopenCpuShare = 0.005;

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
  // False from a period change in per-task mode until a re-open (or the
  // check that every live task has its own event) succeeded: until then
  // children inherited before the change may sample at an older period.
  bool period_reaches_children() const { return period_reaches_children_; }
  // Re-opens of the per-task events at a new period that succeeded and that
  // failed (the old events kept running), the last failure's message, and
  // whether one is scheduled for the next Poll().
  uint64_t reopens() const { return reopens_; }
  uint64_t reopen_failures() const { return reopen_failures_; }
  const std::string& last_reopen_error() const { return last_reopen_error_; }
  bool reopen_pending() const { return reopen_pending_; }
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
    // While opening: the events the reader will decode (FinishRings()).
    std::vector<RingEvent> decoders;
    bool all_kept = true;
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
  // Opens the plan's groups for `tasks` on every sampled CPU into that
  // CPU's ring (created, mapped and added to epoll_fd_ by its first event;
  // later events SET_OUTPUT into it). FinishRings() then builds the
  // readers of the rings opened since.
  absl::Status OpenTasks(const std::vector<pid_t>& tasks);
  absl::Status OpenTasksOnCpu(int cpu, const std::vector<pid_t>& tasks);
  void FinishRings();
  // Unmaps rings_, closes events_ and epoll_fd_ (destructor, failed
  // re-open).
  void CloseAll();
  // The targets' live tasks: the threads of each target and of each of
  // its descendant processes (see the file comment), ascending.
  absl::StatusOr<std::vector<pid_t>> LiveTasks() const;
  // Whether a sampling event honours its period (see "Period changes").
  bool PeriodMatters() const;
  // Decides whether inherited children need a re-open (AdaptPeriod).
  void MaybeScheduleReopen();
  // Re-opens every per-task event at the controller's period; returns the
  // samples drained from the old rings into `sink`.
  size_t Reopen(const SampleSink& sink);
  absl::Status ReopenInto(uint64_t period, std::vector<pid_t>* tasks);
  int OpenOne(size_t spec_index, perf_event_attr* attr, pid_t pid, int cpu,
              int group_fd);
  absl::Status SetGroupsEnabled(const std::vector<OpenEvent>& events, bool on);
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
  bool enabled_ = false;    // Enable() succeeded and no Disable() since
  bool reopening_ = false;  // OpenTasks: any task may have exited (ESRCH)
  bool reopen_pending_ = false;
  bool period_ioctl_failed_ = false;  // since the last open
  // The lowest and highest period in force since the last open: what
  // inherited children may sample at.
  uint64_t stale_lo_ = 0;
  uint64_t stale_hi_ = 0;
  double since_open_s_ = 0;       // wall time reported since the last open/try
  double reopen_cpu_s_ = 0;       // this thread's CPU in re-opens, not billed
  double last_reopen_cpu_s_ = 0;  // the last attempt's, for the interval
  uint64_t reopens_ = 0;
  uint64_t reopen_failures_ = 0;
  std::string last_reopen_error_;
  // Counters of rings retired by a re-open, per CPU.
  std::vector<std::pair<int, RingCounters>> retired_;
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

// Rings for page-fault sources whose faults come in bursts: a kernel scan
// pass makes every accessed slow-tier page hint-fault within milliseconds
// (6144 samples in one burst in the test guest), as a write-fault re-arm
// makes every page the process writes, while a policy round may keep the
// reader away from the ring for seconds. The default 256 KiB ring holds
// 4096 samples; these 2 MiB per CPU hold 32768, and one pass may drain all
// of it.
void SizeRingsForFaultBursts(SamplerConfig* config);

// The perf event descriptors `config` opens: tasks x (sum over perf groups
// of the group's CPUs x its size), where tasks is 1 system-wide, else the
// listed threads (or the pids when none are listed), and a group's CPUs are
// config.cpus intersected with its EventSpec::cpus.
size_t DescriptorsNeeded(const SamplerConfig& config, bool system_wide);

// A user-facing explanation of a perf_event_open failure for `spec`.
std::string ExplainOpenError(int err, const EventSpec& spec, bool system_wide);

}  // namespace hotpage

#endif  // HOTPAGE_SAMPLER_PERF_SAMPLER_H_
