// What `hotpage attach` reports about a run, and the two file formats it
// reports it in: --stats-json (JSON) and --prom-file (Prometheus text, for
// node_exporter's textfile collector; also served by --metrics-listen,
// tools/base/metrics_server.h). AttachLoop (attach_loop.h) fills an
// AttachStats every round and hands it to an AttachStatsSink;
// AttachStatsFiles is the sink that rewrites both files atomically
// (tools/base/atomic_file.h), so a reader never sees a torn file, and keeps
// the last Prometheus text for the endpoint.
//
// Both formats say who they are about (AttachIdentity): the JSON has pid,
// comm, workload, cgroup, version and the time the stats were taken; every
// Prometheus series carries the labels workload, pid and cgroup, so the
// files of two attaches (two processes) never hold the same series, and
// node_exporter's textfile collector can read them from one directory side
// by side. The Prometheus text carries every metric of the JSON
// (attach_stats_test.cc checks it field by field); strings are labels of
// hotpage_info, booleans gauges of 0 or 1, milliseconds and nanoseconds
// seconds, as Prometheus names units. The text is written by the shared
// PromText (tools/base/prom_text.h), as the daemon's is.

#ifndef HOTPAGE_TOOLS_ATTACH_ATTACH_STATS_H_
#define HOTPAGE_TOOLS_ATTACH_ATTACH_STATS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "migrator/stats.h"
#include "sampler/hintfault/numa_balancing_controller.h"
#include "sampler/write_fault_rearm.h"
#include "tools/base/kernel/kernel_fs.h"
#include "tools/base/mutex.h"

namespace hotpage {

// The perf sampler's kernel-side signals (RingCounters, ring_reader.h).
// throttle: PERF_RECORD_THROTTLE records, each one event stopped for the
// rest of a tick because it went over perf_event_max_sample_rate / HZ
// samples (__perf_event_account_interrupt() in kernel/events/core.c);
// unthrottle: PERF_RECORD_UNTHROTTLE, the event running again. A throttled
// event loses samples without any LOST record, so a rising count means the
// period is too short for the kernel's limit.
struct PerfSourceStats {
  uint64_t throttle = 0;
  uint64_t unthrottle = 0;
  uint64_t lost = 0;          // records lost to a full ring (PERF_RECORD_LOST)
  uint64_t lost_samples = 0;  // PERF_RECORD_LOST_SAMPLES
  // PERF_EVENT_IOC_PERIOD calls the kernel refused (Sampler::period_errors).
  uint64_t period_errors = 0;
  // Re-opens of the per-task events at a new period, so that inherited
  // threads and children take it (Sampler::reopens), and the ones that
  // failed and left the old events sampling (Sampler::reopen_failures).
  uint64_t period_reopens = 0;
  uint64_t period_reopen_failures = 0;
};

// Who the stats are about. Fixed for a run.
struct AttachIdentity {
  int64_t pid = 0;
  std::string comm;      // /proc/PID/comm at the start
  std::string workload;  // --workload, else comm
  // The process's cgroup v2 path (the "0::" line of /proc/PID/cgroup)
  // without its leading '/': "system.slice/x.service"; "" on a machine
  // without cgroup v2, and "" for the root cgroup.
  std::string cgroup;
  std::string version;  // VersionNumber() (tools/version.h): "0.1.0"
};

// Reads comm and cgroup of `pid` through `fs` (procfs; nothing under
// /sys/fs/cgroup is opened). `workload`: --workload, or unset for comm.
// `version`: the binary's VersionNumber(). A file that cannot be read (the
// process just exited) leaves its field empty; the workload is then
// "pid-PID".
AttachIdentity ReadAttachIdentity(const KernelFs& fs, int64_t pid,
                                  const std::optional<std::string>& workload,
                                  absl::string_view version);

// Checks a --workload name: 1 to 128 bytes, printable ASCII (it becomes a
// label value and part of log lines).
absl::Status ValidateWorkloadName(absl::string_view name);

// Everything the stats files report.
struct AttachStats {
  AttachIdentity id;
  // When the stats were taken: CLOCK_REALTIME in ns since the Unix epoch
  // (wall time; the JSON gives it as RFC 3339 UTC and as Unix seconds).
  int64_t timestamp_ns = 0;
  uint64_t rounds = 0;
  uint64_t early_rounds = 0;  // of which brought forward (shift, start, burst)
  // Of those, brought forward by new pages that used up the room the last
  // round left on a fast node: they only demote (policy/engine.h, "New
  // pages use up the room").
  uint64_t room_rounds = 0;
  // Rounds whose candidates were ranked without the short window: the last
  // rounds' swaps displaced pages that then drew more samples than the
  // pages promoted (policy/engine.h, "Swaps that do not pay").
  uint64_t short_window_held_rounds = 0;
  // Rounds that took the victims' recency bounds at the family-wise tail:
  // the pages the last rounds' swaps displaced for their silence then drew
  // more samples than their bounds allowed (policy/engine.h, "Silences
  // that do not hold").
  uint64_t silences_doubted_rounds = 0;
  // Rounds whose swap test took the odds (a posterior of up to 1/2 on a
  // candidate not being hotter): a slower tier was saturated (policy/
  // engine.h, "The odds suffice while a slower tier is saturated").
  uint64_t odds_pair_rounds = 0;
  // --source hintfault: pages promoted as they arrived, between rounds
  // (policy/engine.h, "Arrivals"), and the rounds that waited for a burst
  // of arrivals to be placed before they ran ("A round waits while
  // arrivals are placed").
  uint64_t arrival_promotions = 0;
  uint64_t rounds_waited_for_arrivals = 0;
  // --source hintfault: fault samples dropped as possible first touches
  // while the process's resident set grew, and that growth in 4 KiB pages
  // (sampler/hintfault/first_touch_filter.h).
  uint64_t first_touches_dropped = 0;
  uint64_t resident_growth_pages = 0;
  // --source hintfault: pages hotpage demoted that faulted back within the
  // long window, then no victim for one (policy/engine.h, "A demotion a
  // fault undoes").
  uint64_t refault_protections = 0;
  // Pages promoted into a full fast node whose reclaim demotes (hint
  // faults with demotion_enabled: policy/engine.h, "The kernel's LRU as the
  // fast tier's evidence").
  uint64_t reclaim_promotions = 0;
  // Of them, pages back on the slow tier within the long window (the
  // kernel demoted them), and the window in which two faults make a page a
  // candidate for such a promotion as the last round set it from their
  // ages (policy/engine.h, "The repeat window follows the LRU's
  // characteristic time"; 0 without reclaim making room).
  uint64_t reclaim_returns = 0;
  double repeat_window_s = 0;
  // The policy engine's own memory (PolicyEngine::MemoryBreakdown: its
  // hotness table and per-page state), as of the last round.
  uint64_t engine_bytes = 0;
  // The engine leaves the fast tier's victims to the kernel's reclaim now
  // (EngineOptions::reclaim_makes_room: hint faults where demotion_enabled
  // is true, followed while attach runs).
  bool reclaim_makes_room = false;
  // Fast-tier pages the table never sampled, offered as the coldest
  // victims (EngineOptions::sweep_untracked_fast), summed over rounds.
  uint64_t untracked_victims = 0;
  // The last round's benefit against cost (policy/engine.h): the learned
  // horizon, the measured cost of one 4 KiB move, the resulting margin.
  double horizon_s = 0;
  double migration_cost_ns = 0;
  double migration_margin_per_sec = 0;
  // The bandwidth rule (policy/engine.h): rounds that held promotions, and
  // 4 KiB pages shed off the fast tier to balance the loaded latencies.
  uint64_t bandwidth_bound_rounds = 0;
  uint64_t planned_sheds = 0;
  uint64_t samples = 0;
  uint64_t hot_pages = 0;  // 4 KiB pages at or above the round's hot threshold
  std::map<int, uint64_t> hot_pages_by_node;
  uint64_t active_pages = 0;  // sampled since the previous round (engine.h)
  uint64_t planned_promotions = 0;  // pages (4 KiB) the policy chose to promote
  uint64_t planned_demotions = 0;
  uint64_t planned_locality = 0;  // pages (4 KiB) moved by --locality in a tier
  // Whether the moves paid off (EngineCounters): samples on promoted
  // entries while on the fast tier, per promotion, and on demoted entries
  // while off it, per demotion.
  uint64_t promoted_entries = 0;  // yield denominator
  uint64_t yield_hits = 0;
  uint64_t demoted_entries = 0;  // regret denominator
  uint64_t regret_hits = 0;
  // CPU time since the loop started: every hotpage thread's (the process
  // CPU clock) for `hotpage attach`; AttachLoopParts::cpu_time says.
  double cpu_seconds = 0;
  MigratorStats migrator;
  bool dry_run = false;
  std::string source;  // the sample source's name: pebs, damon, ...
  // --source hintfault: its watchdog's stats.
  const NumaBalancingController* hintfault = nullptr;
  // --write-faults: re-arm stats.
  const WriteFaultRearm* write_faults = nullptr;
  // --source damon: the stale kdamond DamonSource::Start removed, if any.
  std::string damon_recovered;
  // Perf sources (pebs, ibs, pagefault, hintfault): throttle and loss
  // records so far; unset for other sources.
  std::optional<PerfSourceStats> perf;
};

// The status line's perf part: " throttled=N unthrottled=N lost=N" for a
// perf source, empty otherwise.
std::string PerfStatusFields(const AttachStats& s);

// Pages move_pages failed to move, over every errno.
uint64_t FailedTotal(const MigratorStats& m);

// The --stats-json document (indented, ends with a newline).
std::string AttachStatsJson(const AttachStats& s);

// The --prom-file document: every metric of the JSON, each series labelled
// by workload, pid and cgroup.
std::string AttachStatsProm(const AttachStats& s);

// Where the loop publishes its stats: after every round, and once more at
// the end (after the migrator stopped). Called on the loop's thread.
class AttachStatsSink {
 public:
  virtual ~AttachStatsSink() = default;
  virtual void Publish(const AttachStats& stats, bool final) = 0;
};

// Rewrites --stats-json and --prom-file atomically on every Publish. A
// failed write after a round is reported on `log` ("hotpage attach: " and
// the error) and the run goes on; at the end it is ignored. Unset paths are
// not written. With `keep_prom`, the Prometheus text of the last Publish is
// kept for LatestProm() (the --metrics-listen endpoint's thread reads it;
// the loop only swaps a string under a mutex, so a slow client never holds
// up a round).
class AttachStatsFiles : public AttachStatsSink {
 public:
  AttachStatsFiles(std::optional<std::string> json_path,
                   std::optional<std::string> prom_path, std::ostream* log,
                   bool keep_prom = false)
      : json_path_(std::move(json_path)),
        prom_path_(std::move(prom_path)),
        log_(log),
        keep_prom_(keep_prom) {}
  void Publish(const AttachStats& stats, bool final) override;

  // The last Prometheus text published ("" before the first round). Any
  // thread.
  std::string LatestProm() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const std::optional<std::string> json_path_;
  const std::optional<std::string> prom_path_;
  std::ostream* const log_;
  const bool keep_prom_;
  mutable Mutex mu_;
  std::string latest_prom_ ABSL_GUARDED_BY(mu_);
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_ATTACH_ATTACH_STATS_H_
