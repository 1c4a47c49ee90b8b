// MachineSampler: the daemon's one perf sampler set for the machine. It
// opens ONE Sampler (sampler/perf/sampler.h) for every process the daemon
// manages with a given source, and routes each sample by pid to the inbox
// of the member (one process of one workload, with its own engine) that
// owns the process.
//
// Why system-wide rings with a pid -> member map (issue 14 §1): the
// descriptor counts of the three ways to sample W workloads of T threads
// each, as opened on the fake perf kernel over the machine profiles
// (machine_sampler_test.cc, DescriptorPlanTest, which asserts them; both
// profiles have 4 CPUs; "pebs" on sapphire_rapids is the {mem-loads-aux,
// mem-loads} group, 2 events per CPU; "ibs" on zen4_6_8 one ibs_op event
// per CPU; perf events only, each Sampler adds one epoll descriptor):
//
// clang-format off
//   profile          events/CPU   W  T   per task  per cgroup  system-wide
//   sapphire_rapids  2            2  3      48        16            8
//   sapphire_rapids  2            8  3     192        64            8
//   zen4_6_8         1            2  3      24         8            4
//   zen4_6_8         1            8  3      96        32            4
// clang-format on
//
// Per task costs tasks x CPUs x events (perf_event_open() with pid=TID and
// inherit); per cgroup (PERF_FLAG_PID_CGROUP: "pid == -1 || cpu == -1" is
// EINVAL in perf_event_open(), kernel/events/core.c, so one event per CPU
// per cgroup) costs W x CPUs x events; system-wide costs CPUs x events
// whatever W. Both of the last two need perf_allow_cpu() (CAP_PERFMON or
// perf_event_paranoid <= 0), since a cgroup event lives in the CPU
// context too. System-wide is never more and is W times fewer, and it is
// also the only one that covers workloads selected by name or pid (not by
// cgroup), so the daemon opens system-wide rings. Where it is not
// permitted it falls back to per-task events over the mapped processes'
// threads (logged once), reopened when the set of processes changes.
//
// The map: a sorted vector of (pid, start time, member) rebuilt on the
// control path (Subscribe, Unsubscribe, Reconcile) and looked up by binary
// search on the hot path (no allocation, no hashing). Samples whose pid is
// not mapped (a process of no workload, one not mapped yet, or a pid the
// last Reconcile found reused or gone) are dropped and counted; they never
// reach an engine. Reconcile (each daemon round) keeps only entries whose
// (pid, start time) the selection still sees, so a pid reused by another
// process stops being routed to the old member at the next round even
// before that member ends; and a member acts on its process only through
// a pidfd pinned to it (migrator/process_handle.h), so samples routed in
// the window before that round cannot move another process's pages.
//
// Inboxes: sized by the member's footprint (InboxSamplesFor: a write-fault
// re-arm faults each resident page at most once, and a perf ring drained
// every 50 ms holds far fewer), filled by the routing thread, drained by
// the member's loop (RoutedAttachSource); resized by the member at its
// round boundaries when its process grows (RoutedAttachSource::
// ResizeInbox: the buffers are allocated outside the lock, swapped under
// it). A full inbox drops and counts, never allocates.
//
// Counters: the sampler's routing counters and its rings' throttle and
// loss records belong to the machine, not to a member: a member's source
// reports none of them (RoutedAttachSource::PerfStats is nullopt), so a
// sum over members never counts them twice, and MachineSamplerSet::
// Report gives them once per sampler (machine_report.h), with the routing
// thread's CPU time (which is in no member's cpu_seconds).
//
// Threading: Subscribe/Unsubscribe/Reconcile from any thread (the daemon's
// and members' threads); PollOnce from one thread at a time (the routing
// thread that Start() runs, or a test's thread with the fake perf kernel,
// which is thread-compatible only).

#ifndef HOTPAGE_TOOLS_DAEMON_MACHINE_SAMPLER_H_
#define HOTPAGE_TOOLS_DAEMON_MACHINE_SAMPLER_H_

#include <sys/types.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sampler/perf/perf_event_system.h"
#include "sampler/perf/sampler.h"
#include "sampler/sample.h"
#include "tools/attach/attach_loop.h"
#include "tools/base/kernel/kernel_fs.h"
#include "tools/base/mutex.h"
#include "tools/daemon/machine_report.h"
#include "tools/daemon/thread_cpu.h"
#include "tools/daemon/workload_select.h"

namespace hotpage {

// One member's samples, between the routing thread and the member's loop.
class SampleInbox {
 public:
  // At most 2 MiB: one write-fault re-arm of an 80 MiB hot set faults
  // 20480 pages within milliseconds (the rings attach --write-faults uses
  // hold 32768 samples per CPU).
  static constexpr size_t kInboxSamples = 32768;
  // At least 256 KiB: a perf ring drained every 50 ms at PEBS's worst case
  // (~20k samples/s per CPU, event_config.h) holds ~1000 samples per CPU.
  static constexpr size_t kMinInboxSamples = 4096;
  // The capacity for a process of `footprint_pages` resident 4 KiB pages
  // (0: unknown, the largest): one sample per page, within [kMin, kInbox].
  static size_t InboxSamplesFor(uint64_t footprint_pages);

  explicit SampleInbox(size_t capacity = kInboxSamples);
  // Routing thread. Returns false (and counts) when full.
  bool Push(const Sample& s) ABSL_LOCKS_EXCLUDED(mu_);
  // The member's thread (the one that drains), between drains: the
  // capacity becomes `capacity` (the samples held are kept, up to it).
  // Allocates outside the lock; Push never allocates.
  void Resize(size_t capacity) ABSL_LOCKS_EXCLUDED(mu_);
  size_t capacity() const ABSL_LOCKS_EXCLUDED(mu_);
  void Wake() ABSL_LOCKS_EXCLUDED(mu_);
  // Member's thread: waits up to `timeout` for samples, then hands them to
  // `sink` in one batch (copied out first; the lock is not held in sink).
  size_t Drain(absl::Duration timeout, const SampleSink& sink)
      ABSL_LOCKS_EXCLUDED(mu_);
  uint64_t dropped_full() const { return dropped_full_.load(); }
  uint64_t received() const { return received_.load(); }

 private:
  mutable Mutex mu_;
  CondVar cv_;
  std::unique_ptr<Sample[]> buf_ ABSL_GUARDED_BY(mu_);
  size_t capacity_ ABSL_GUARDED_BY(mu_);
  size_t n_ ABSL_GUARDED_BY(mu_) = 0;
  std::unique_ptr<Sample[]> out_;  // the member thread's copy (capacity_)
  // Relaxed: counters for the status, no ordering with the samples.
  std::atomic<uint64_t> dropped_full_{0};
  std::atomic<uint64_t> received_{0};
};

struct MachineSamplerCounters {
  uint64_t routed = 0;    // samples handed to a member's inbox
  uint64_t unmapped = 0;  // pid of no (live, current) member: dropped
  uint64_t inbox_full = 0;
  uint64_t reopens = 0;  // per-task fallback: the plan reopened
};

class MachineSampler {
 public:
  // `base` holds the events, CPUs and ring sizes; its pids, threads, all
  // and system_wide are set here. `fs` is read for the threads of the
  // mapped processes in the per-task fallback. Opens nothing until the
  // first Subscribe (a sampler needs a target in per-task mode; system-wide
  // opens at once).
  static absl::StatusOr<std::unique_ptr<MachineSampler>> Create(
      SamplerConfig base, const KernelFs* fs, PerfEventSystem* sys,
      std::ostream* log);
  ~MachineSampler();  // Stop()
  MachineSampler(const MachineSampler&) = delete;
  MachineSampler& operator=(const MachineSampler&) = delete;

  // Routes the samples of process (pid, start time) to the returned inbox
  // from now on. A later Subscribe of the same pid with another start
  // time (a reused pid) replaces the entry.
  // The inbox holds `inbox_samples` samples (SampleInbox::InboxSamplesFor).
  absl::StatusOr<std::shared_ptr<SampleInbox>> Subscribe(
      const ProcessKey& key, size_t inbox_samples = SampleInbox::kInboxSamples)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Stops routing to `inbox` (its member ended). Other entries stay.
  void Unsubscribe(const ProcessKey& key, const SampleInbox* inbox)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Keeps only the entries whose (pid, start time) is in `live` (the
  // daemon's selection this round, sorted or not).
  void Reconcile(const std::vector<ProcessKey>& live) ABSL_LOCKS_EXCLUDED(mu_);

  // One pass: polls the rings (up to timeout_ms) and routes what they
  // hold. Reopens the per-task plan first when the mapped set changed.
  absl::Status PollOnce(int timeout_ms) ABSL_LOCKS_EXCLUDED(mu_);
  // PollOnce(50) on a thread of its own until Stop(); errors are logged.
  void Start();
  void Stop();

  bool system_wide() const { return system_wide_; }
  // The sampler's open event descriptors (0 before the first open).
  size_t num_events() const ABSL_LOCKS_EXCLUDED(mu_);
  size_t mapped() const ABSL_LOCKS_EXCLUDED(mu_);
  MachineSamplerCounters counters() const ABSL_LOCKS_EXCLUDED(mu_);
  std::optional<PerfSourceStats> PerfStats() const ABSL_LOCKS_EXCLUDED(mu_);
  // The routing thread's CPU time (zero without Start()).
  absl::Duration ThreadCpuTime() const { return thread_.CpuTime(); }

 private:
  struct Entry {
    pid_t pid;
    uint64_t start_time_ticks;
    std::shared_ptr<SampleInbox> inbox;
  };
  MachineSampler(SamplerConfig base, const KernelFs* fs, PerfEventSystem* sys,
                 std::ostream* log);
  absl::Status OpenPollLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(poll_mu_)
      ABSL_LOCKS_EXCLUDED(mu_);
  void PublishLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(poll_mu_)
      ABSL_LOCKS_EXCLUDED(mu_);
  void SortLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  SampleInbox* FindLocked(uint32_t pid) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Route(absl::Span<const Sample> batch) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(poll_mu_);

  const SamplerConfig base_;
  const KernelFs* const fs_;
  PerfEventSystem* const sys_;
  std::ostream* const log_;
  bool system_wide_ = true;

  // The polling side: the sampler and the members to wake after a pass.
  // Held across Poll (up to its timeout); the control path never takes it.
  Mutex poll_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  std::unique_ptr<Sampler> sampler_ ABSL_GUARDED_BY(poll_mu_);
  std::array<SampleInbox*, 64> touched_ ABSL_GUARDED_BY(poll_mu_) = {};
  size_t num_touched_ ABSL_GUARDED_BY(poll_mu_) = 0;

  // The map and what the control path reads; taken per batch on the hot
  // path (no allocation under it).
  mutable Mutex mu_;
  std::vector<Entry> map_ ABSL_GUARDED_BY(mu_);  // sorted by pid
  bool plan_stale_ ABSL_GUARDED_BY(mu_) = true;
  MachineSamplerCounters counters_ ABSL_GUARDED_BY(mu_);
  PerfSourceStats perf_stats_ ABSL_GUARDED_BY(mu_);
  size_t num_events_ ABSL_GUARDED_BY(mu_) = 0;

  std::atomic<bool> stop_{false};
  CpuTimedThread thread_;
};

// An AttachSource over a member's inbox (what SamplerAttachSource is for a
// sampler of its own): each Poll waits up to 50 ms. The subscription ends
// with the source (Unsubscribe in the destructor); the source keeps its
// machine sampler alive.
class RoutedAttachSource : public AttachSource {
 public:
  RoutedAttachSource(std::shared_ptr<MachineSampler> machine, ProcessKey key,
                     std::shared_ptr<SampleInbox> inbox)
      : machine_(std::move(machine)), key_(key), inbox_(std::move(inbox)) {}
  ~RoutedAttachSource() override;
  absl::Status Poll(const SampleSink& sink) override;
  void Stop() override {}
  // None: the rings' throttle and loss records are the machine sampler's,
  // shared by every member (reported once: MachineSamplerSet::Report).
  std::optional<PerfSourceStats> PerfStats() const override {
    return std::nullopt;
  }
  // From the member's thread between polls (its round boundary): the
  // inbox is sized for `footprint_pages` (SampleInbox::InboxSamplesFor);
  // a no-op when that is its size already.
  void ResizeInbox(uint64_t footprint_pages);
  const SampleInbox& inbox() const { return *inbox_; }

 private:
  const std::shared_ptr<MachineSampler> machine_;
  const ProcessKey key_;
  const std::shared_ptr<SampleInbox> inbox_;
};

// The daemon's sampler set: one MachineSampler per distinct perf source
// ("pebs", "pagefault" with write faults, ...), opened when the first
// member asks for it and closed when no member uses it any more (at the
// next Reconcile). Thread-safe.
class MachineSamplerSet {
 public:
  // `fs`: "/" (or a test tree) for the event plan and the CPUs. With
  // `run_threads` each sampler polls on a thread of its own; without,
  // PollAll() does it (tests over the fake perf kernel).
  MachineSamplerSet(const KernelFs* fs, PerfEventSystem* sys, std::ostream* log,
                    bool run_threads = true);
  ~MachineSamplerSet();

  // A source for process `key` fed by the machine sampler of (`source`,
  // `write_faults`); `name` gets the source's name for the stats.
  // `footprint_pages` sizes its inbox (0: unknown, the largest).
  absl::StatusOr<std::unique_ptr<RoutedAttachSource>> Attach(
      const std::string& source, bool write_faults, const ProcessKey& key,
      std::string* name, uint64_t footprint_pages = 0) ABSL_LOCKS_EXCLUDED(mu_);
  // The daemon's selection this round (DaemonParts::on_selection): each
  // sampler's map keeps only these processes; samplers nobody uses close.
  void Reconcile(const std::vector<ProcessKey>& live) ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status PollAll(int timeout_ms) ABSL_LOCKS_EXCLUDED(mu_);
  size_t samplers() const ABSL_LOCKS_EXCLUDED(mu_);
  size_t num_events() const ABSL_LOCKS_EXCLUDED(mu_);
  // Appends one MachineSamplerReport per source ever opened (totals since
  // the set was made: a sampler closed by Reconcile keeps counting in its
  // source's row) and, with run_threads, one MachineThreadReport per
  // source ("sampler SOURCE": its routing threads' CPU time).
  void Report(MachineReport* out) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Retired {
    MachineSamplerReport totals;
    double cpu_seconds = 0;
  };
  // What `m` has counted so far, as a row of `id`.
  static MachineSamplerReport RowOf(const std::string& id,
                                    const MachineSampler& m);

  const KernelFs* const fs_;
  PerfEventSystem* const sys_;
  std::ostream* const log_;
  const bool run_threads_;
  mutable Mutex mu_;
  std::map<std::string, std::shared_ptr<MachineSampler>> samplers_
      ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> names_ ABSL_GUARDED_BY(mu_);
  // Samplers that closed, by id: their counts and thread CPU.
  std::map<std::string, Retired> retired_ ABSL_GUARDED_BY(mu_);
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_DAEMON_MACHINE_SAMPLER_H_
