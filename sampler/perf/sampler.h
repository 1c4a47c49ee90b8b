// Sampler: opens an EventGroup on every CPU, maps one ring per CPU, and
// delivers decoded, filtered samples in batches.
//
// Rings: one per CPU, always. Two ways to fill them:
//  - per task (the default when the source allows it: PEBS, page faults):
//    for each target pid and CPU, an event with pid=PID, cpu=CPU and
//    inherit=1, so the kernel itself restricts sampling to the target and
//    to every thread or child it creates later; the events of further pids
//    on a CPU are redirected into that CPU's ring (PERF_EVENT_IOC_SET_OUTPUT).
//    Cost: events = pids x CPUs x group size, but no sample of another
//    process is ever taken, and it works with perf_event_paranoid <= 2.
//  - system-wide (--all, IBS, which has no per-task mode, or when forced):
//    pid=-1 per CPU, and the ring reader keeps only the target processes
//    (thread-group ids, plus children seen in PERF_RECORD_FORK). Cost:
//    samples of other processes are taken and thrown away, and it needs
//    CAP_PERFMON or perf_event_paranoid <= 0; gain: a fixed CPUs x group
//    number of events whatever the number of targets.
// Either way a busy CPU cannot starve the others: each Poll() drains the
// rings round-robin, each within a byte budget.
//
// Wake-ups: events use a watermark (a quarter of the ring by default), so
// the thread sleeps in epoll_wait until there is a batch worth reading or
// the caller's timeout passes; it never spins.
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
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "sampler/perf/event_config.h"
#include "sampler/perf/perf_event_system.h"
#include "sampler/perf/period_controller.h"
#include "sampler/perf/ring_reader.h"

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
  bool all = false;             // every process (system-wide, no filter)
  bool system_wide = false;     // force system-wide rings with a pid filter
  std::vector<int> cpus;        // CPUs to sample (online CPUs)
  size_t ring_data_pages = 64;  // per CPU; power of two (256 KiB)
  size_t wakeup_bytes = 0;      // 0: a quarter of the ring
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
  size_t num_events() const { return fds_.size(); }

 private:
  struct Ring {
    int cpu = -1;
    int fd = -1;
    void* base = nullptr;
    size_t bytes = 0;
    std::unique_ptr<RingReader> reader;
  };

  Sampler(SamplerConfig config, PerfEventSystem* sys);
  absl::Status OpenAll();
  size_t DrainRound(const SampleSink& sink, size_t budget, bool* more);

  SamplerConfig config_;
  PerfEventSystem* sys_;
  bool system_wide_ = false;
  bool last_poll_complete_ = false;
  PidFilter filter_;
  std::vector<int> fds_;           // every event fd
  std::vector<int> sampling_fds_;  // fds whose period adapts
  std::vector<int> leader_fds_;    // fds to enable/disable
  std::vector<Ring> rings_;
  int epoll_fd_ = -1;
  std::optional<PeriodController> controller_;
  static constexpr size_t kBatch = 1024;
  std::unique_ptr<Sample[]> batch_;
};

// Online CPUs from /sys/devices/system/cpu/online.
absl::StatusOr<std::vector<int>> OnlineCpus(const KernelFs& fs);

// The thread ids of process `pid` (/proc/PID/task), ascending.
absl::StatusOr<std::vector<pid_t>> ListThreads(const KernelFs& fs, pid_t pid);

// Per-task mode (neither `all` nor `system_wide`): fills config->threads
// with the existing threads of config->pids (a pid whose threads cannot be
// listed stands for itself). Past kMaxPerTaskEvents threads x CPUs it
// switches to system-wide rings with the pid filter instead. Call after
// pids and cpus are set.
inline constexpr size_t kMaxPerTaskEvents = 8192;
void IncludeExistingThreads(const KernelFs& fs, SamplerConfig* config);

// A user-facing explanation of a perf_event_open failure for `spec`.
std::string ExplainOpenError(int err, const EventSpec& spec, bool system_wide);

}  // namespace hotpage

#endif  // HOTPAGE_SAMPLER_PERF_SAMPLER_H_
