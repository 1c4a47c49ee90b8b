// What `hotpage attach` reports about a run, and the two file formats it
// reports it in: --stats-json (JSON) and --prom-file (Prometheus text, for
// node_exporter's textfile collector). AttachLoop (attach_loop.h) fills an
// AttachStats every round and hands it to an AttachStatsSink; AttachStatsFiles
// is the sink that rewrites both files atomically (tools/base/atomic_file.h),
// so a reader never sees a torn file.

#ifndef HOTPAGE_TOOLS_ATTACH_ATTACH_STATS_H_
#define HOTPAGE_TOOLS_ATTACH_ATTACH_STATS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>

#include "migrator/stats.h"
#include "sampler/hintfault/numa_balancing_controller.h"
#include "sampler/write_fault_rearm.h"

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

// Everything the stats files report.
struct AttachStats {
  uint64_t rounds = 0;
  uint64_t early_rounds = 0;  // of which brought forward by a shift
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
  uint64_t promoted_entries = 0;  // table entries promoted (yield denominator)
  uint64_t yield_hits = 0;  // samples that hit promoted entries afterwards
  double cpu_seconds = 0;   // the loop thread's CPU time since the start
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

// The --prom-file document.
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
// not written.
class AttachStatsFiles : public AttachStatsSink {
 public:
  AttachStatsFiles(std::optional<std::string> json_path,
                   std::optional<std::string> prom_path, std::ostream* log)
      : json_path_(std::move(json_path)),
        prom_path_(std::move(prom_path)),
        log_(log) {}
  void Publish(const AttachStats& stats, bool final) override;

 private:
  const std::optional<std::string> json_path_;
  const std::optional<std::string> prom_path_;
  std::ostream* const log_;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_ATTACH_ATTACH_STATS_H_
