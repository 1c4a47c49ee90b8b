// DaemonLoop: `hotpage daemon`'s supervisor. Every round it selects the
// processes of each configured workload (workload_select.h), starts a
// member for each new one and retires the members of processes that left,
// recomputes the fast-tier shares (fair_share.h) and hands each member its
// target and its part of the global migration budget, and publishes the
// status (the socket's JSON) and the metrics (Prometheus text, labelled by
// workload, pid and cgroup).
//
// How the pieces fit:
//
// clang-format off
//   DaemonLoop::Tick (the daemon's thread, every interval)
//     SelectProcesses -> Reconcile per workload -> MemberFactory -> thread
//     member snapshots -> ShareInput per workload -> FairShares -> targets
//     -> DaemonMember::SetFastTarget (split over the workload's processes)
//     -> DaemonMember::SetRateLimit (rate_limit x rate_share / sum, split)
//   each DaemonMember::Run (its own thread): an AttachLoop over its process
//     (tools/attach/attach_loop.h) whose MemoryView is a FairShareView
//     (share_view.h), so the engine itself keeps the process to its target
// clang-format on
//
// A member is one process: its own engine (hotness table), view and
// Migrator (its queue, pinned to the process), as `hotpage attach` builds
// them; the live members share the machine's one perf sampler per source
// (machine_sampler.h: system-wide rings, samples routed by pid) and one
// migrator thread (migrator_pool.h: the budget shared by weight). A
// workload's hotness lives in its members, so a reload that keeps a
// workload (same name) keeps its members and their tables; their rules
// change between rounds (DaemonMember::Reconfigure). A workload whose
// selector or source changed is restarted; a workload that is gone is
// stopped.
//
// Members are made by an injected MemberFactory: the live one
// (live_member.h) over the kernel, a scripted one in tests. A factory
// error (the process exited, the pid was reused before the member could
// pin it, a source that cannot open) is logged once per process and the
// process is not retried until it is selected anew.
//
// CPU: each member's cpu_seconds is its loop thread and its migrator's
// rounds; the machine-level threads (the machine samplers' routing
// threads, the migrator pool's thread outside members' rounds) are in
// none of them and are reported once for the machine (DaemonParts::
// machine). The daemon's cpu_seconds is the sum of both: every member's
// (ended ones included) plus the machine threads' (cmd_daemon lists the
// supervisor's thread, the migrator pool's own time and each sampler's
// thread, and with DaemonParts::process_cpu_s the unlisted rest as
// "other", so the total is the process's CPU time).
//
// Threading: Tick(), Reload() and Stop() run on the daemon's thread.
// StatusJson() and MetricsProm() may be called from any thread (the status
// socket's): they read a copy published under mu_ at the end of each tick.

#ifndef HOTPAGE_TOOLS_DAEMON_DAEMON_LOOP_H_
#define HOTPAGE_TOOLS_DAEMON_DAEMON_LOOP_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tools/base/json_writer.h"
#include "tools/base/kernel/kernel_fs.h"
#include "tools/base/mutex.h"
#include "tools/base/prom_text.h"
#include "tools/daemon/daemon_config.h"
#include "tools/daemon/machine_report.h"
#include "tools/daemon/workload_select.h"

namespace hotpage {

// A member's fast-tier target when the tier is not short: none.
inline constexpr uint64_t kNoFastTarget = UINT64_MAX;

// What a member reports (a copy; any thread).
struct MemberSnapshot {
  uint64_t fast_bytes = 0;  // on the fast tier at its last round
  // Net bytes its migrator moved onto the fast tier since that reading
  // (negative: off it). fast_bytes plus this is what it holds now
  // (FairShareView::Fast), the figure the shares compare with the free
  // memory read now.
  int64_t fast_moved_bytes = 0;
  uint64_t hot_bytes = 0;  // its hot set (hot pages x 4 KiB)
  // Of its hot set, the bytes not on the fast tier at its last round (hot
  // pages on slower nodes x 4 KiB): what it still wants moved up.
  uint64_t hot_slow_bytes = 0;
  uint64_t samples = 0;  // since it started
  uint64_t rounds = 0;
  uint64_t promoted_pages = 0;
  uint64_t demoted_pages = 0;
  uint64_t failed_pages = 0;
  uint64_t promoted_entries = 0;  // yield denominator
  uint64_t yield_hits = 0;
  uint64_t demoted_entries = 0;  // regret denominator
  uint64_t regret_hits = 0;
  // Hint faults: fault samples dropped as possible first touches
  // (sampler/hintfault/first_touch_filter.h).
  uint64_t first_touches_dropped = 0;
  // Its loop thread and its migrator's rounds (on the pool's thread when
  // pooled: MigratorPool::Cpu's in_members); not the machine threads'.
  double cpu_seconds = 0;
  std::string source;
  // The member's rounds file (WorkloadConfig::rounds); empty: none.
  std::string rounds_file;
};

class DaemonMember {
 public:
  virtual ~DaemonMember() = default;
  // Runs until *stop or the process ends (blocking; on the member's own
  // thread). Returns what ended it: OK for a clean end.
  virtual absl::Status Run(const std::atomic<bool>* stop) = 0;
  // From the daemon's thread, while Run runs. kNoFastTarget: none.
  virtual void SetFastTarget(uint64_t bytes) = 0;
  virtual void SetRateLimit(double bytes_per_sec) = 0;
  // New rules for the member's engine, applied before its next round.
  // FailedPrecondition when they need a new engine (the daemon restarts
  // the member then).
  virtual absl::Status Reconfigure(const WorkloadConfig& w) = 0;
  virtual MemberSnapshot Snapshot() const = 0;
};

using MemberFactory =
    std::function<absl::StatusOr<std::unique_ptr<DaemonMember>>(
        const WorkloadConfig& workload, const SelectedProcess& process)>;

// The fast tier's free memory against the engines' watermarks
// (policy/placement.h), summed over its nodes.
struct FastTierFree {
  // Free bytes above each node's high watermark: room to promote into.
  uint64_t room_bytes = 0;
  // For each node below its low watermark, how far below its high one it
  // is (what the engines' watermark demotion, rule 1, would free). The
  // shares take it from what the workloads hold, so the room comes from
  // the workloads above their shares, the colder first, not from every
  // member's own coldest pages (FairShareView: a member within its target
  // is not asked to restore the watermark).
  uint64_t short_bytes = 0;
};

// Adds one fast node's free memory `free` against its watermarks (`low`,
// `high`: policy/placement.h WatermarksFor) to `f`. `refused`: a migrator is
// backed off from the node because the kernel answered ENOMEM there. The kernel
// keeps its own reserve (its zones' min watermarks and lowmem reserves), which
// on a small node lies above the fractions' low watermark: on the daemon
// guests' 512 MiB node allocations failed at ~18.75 MiB free against a low
// watermark of 10 MiB, so the tier never read as short, no workload made room,
// and the promotions failed again each time the back-off ended
// (daemon_vm_test's b stuck 1 MiB under its floor's line for 90 s, 2120
// pages failed). The daemon now raises `low` to the kernel's floor read from
// /proc/zoneinfo (tools/kernel_floor.h; 21-23 MiB there), so such a node reads
// as short before the kernel refuses; `refused` stays for what zoneinfo does
// not show (a watermark boost, a reserved high-atomic pageblock, no readable
// zoneinfo): a refused node below its high watermark is short by the
// distance to it, as one below its low watermark is.
void AddNodeFree(uint64_t free, uint64_t low, uint64_t high, bool refused,
                 FastTierFree& f);

struct DaemonParts {
  const KernelFs* fs = nullptr;  // /proc for the selection
  MemberFactory factory;
  uint64_t fast_capacity_bytes = 0;  // the fast tier's memory
  // Optional: the fast tier's free memory now, one reading of every fast
  // node (FastTierFree). With it, the capacity shared out is what the
  // workloads hold plus the room (memory of processes the daemon does not
  // manage is not theirs to share), at most fast_capacity_bytes, less the
  // shortfall; percent floors and caps are of fast_capacity_bytes either
  // way.
  std::function<FastTierFree()> fast_free;
  pid_t self = 0;  // never selected
  // Optional: every process selected this round, after its member was
  // started (the machine sampler's pid map keeps only these:
  // MachineSamplerSet::Reconcile in machine_sampler.h).
  std::function<void(const std::vector<ProcessKey>&)> on_selection;
  std::ostream* log = nullptr;
  // Seconds since the daemon started (for the status); injected for tests.
  std::function<double()> uptime_s;
  // Optional: the machine-level parts' counters and thread CPU
  // (machine_report.h: the machine samplers, the migrator pool's own
  // time), published once for the machine, never per member.
  std::function<MachineReport()> machine;
  // Optional: the whole process's CPU seconds (CLOCK_PROCESS_CPUTIME_ID).
  // What neither the members nor the machine report lists (the status and
  // metrics servers, the signal thread, the re-arm threads) is then
  // published as the machine thread "other", so the daemon's total is the
  // process's.
  std::function<double()> process_cpu_s;
  // The daemon's own label value (the `daemon` label of the machine-level
  // series, which have no workload label): unique per daemon on a host
  // (cmd_daemon: its socket path, which two daemons never share).
  std::string instance;
  // Optional: the daemon's stop flag (the signal thread sets it). Tick()
  // checks it between workloads and between the members it starts, and
  // returns at once when it is set, so a stop is never held up by a
  // round of starts.
  const std::atomic<bool>* stop = nullptr;
};

class DaemonLoop {
 public:
  DaemonLoop(DaemonConfig config, DaemonParts parts);
  ~DaemonLoop();  // Stop()
  DaemonLoop(const DaemonLoop&) = delete;
  DaemonLoop& operator=(const DaemonLoop&) = delete;

  // One supervisor round (see the file comment).
  void Tick();
  // Replaces the config; see the file comment for what is kept.
  void Reload(DaemonConfig config);
  // Stops every member and joins its thread.
  void Stop();

  const DaemonConfig& config() const { return config_; }
  size_t members() const;

  // The status document (`hotpage status --json`) and the metrics.
  std::string StatusJson() const ABSL_LOCKS_EXCLUDED(mu_);
  std::string MetricsProm() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Running {
    std::string workload;
    SelectedProcess process;
    std::unique_ptr<DaemonMember> member;
    std::atomic<bool> stop{false};
    std::atomic<bool> done{false};
    absl::Status result;  // written by the thread before done
    std::thread thread;
    uint64_t target = kNoFastTarget;
    // Its sampled access rate, for the shares (ApplyShares, daemon thread
    // only): samples at the last tick (0 at the start: MemberSnapshot
    // counts from it), and an exponentially weighted mean of the samples
    // per tick (negative until ApplyShares has seen it once).
    uint64_t last_samples = 0;
    double samples_per_tick = -1;
  };
  struct WorkloadState {
    std::vector<SelectedProcess> selected;  // last selection
    std::set<ProcessKey> failed;            // factory refused; not retried
    // Totals of members that ended, so counters never go down.
    MemberSnapshot retired;
  };
  struct Published {
    std::string status;
    std::string metrics;
  };

  void StartMember(const WorkloadConfig& w, const SelectedProcess& p);
  void StopMember(Running* r);
  // Whether the process `k` names still runs (its pid's start time): a
  // process that left the selection either ended or left the workload.
  bool ProcessLives(const ProcessKey& k) const;
  void ReapFinished();
  void ApplyShares();
  void Publish() ABSL_LOCKS_EXCLUDED(mu_);
  // The machine's part of the status (top-level "cpu_seconds" and the
  // "machine" object) and its series; `live_member_cpu`: the running
  // members' cpu_seconds.
  void PublishMachine(double live_member_cpu, JsonWriter* j,
                      PromText* prom) const;
  bool Stopping() const {
    // Relaxed: the flag carries no data.
    return parts_.stop != nullptr &&
           parts_.stop->load(std::memory_order_relaxed);
  }
  const WorkloadConfig* FindWorkload(const std::string& name) const;

  DaemonConfig config_;
  DaemonParts parts_;
  std::vector<std::unique_ptr<Running>> running_;
  std::map<std::string, WorkloadState> state_;
  uint64_t ticks_ = 0;
  // CPU seconds of every member that ended (so the daemon's total never
  // goes down, whatever a reload removes).
  double retired_cpu_seconds_ = 0;
  std::string last_error_;
  mutable Mutex mu_;
  Published published_ ABSL_GUARDED_BY(mu_);
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_DAEMON_DAEMON_LOOP_H_
