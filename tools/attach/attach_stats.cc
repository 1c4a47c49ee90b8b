#include "tools/attach/attach_stats.h"

#include <initializer_list>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "tools/base/atomic_file.h"
#include "tools/base/json_writer.h"
#include "tools/base/kernel/proc_cgroup.h"
#include "tools/base/prom_text.h"
#include "tools/base/status_macros.h"

namespace hotpage {

absl::Status ValidateWorkloadName(absl::string_view name) {
  if (name.empty() || name.size() > 128) {
    return absl::InvalidArgumentError(
        absl::StrCat("--workload: '", name, "' must be 1 to 128 characters"));
  }
  for (char c : name) {
    if (c < 0x20 || c > 0x7e) {
      return absl::InvalidArgumentError(
          "--workload: only printable ASCII characters are allowed");
    }
  }
  return absl::OkStatus();
}

AttachIdentity ReadAttachIdentity(const KernelFs& fs, int64_t pid,
                                  const std::optional<std::string>& workload,
                                  absl::string_view version) {
  AttachIdentity id;
  id.pid = pid;
  id.version = std::string(version);
  if (absl::StatusOr<std::string> comm =
          fs.ReadFile(absl::StrCat("/proc/", pid, "/comm"));
      comm.ok()) {
    id.comm = std::string(absl::StripSuffix(*comm, "\n"));
  }
  if (absl::StatusOr<std::string> cg =
          fs.ReadFile(absl::StrCat("/proc/", pid, "/cgroup"));
      cg.ok()) {
    id.cgroup = CgroupV2Path(*cg).value_or("");
  }
  if (workload.has_value()) {
    id.workload = *workload;
  } else {
    id.workload = id.comm.empty() ? absl::StrCat("pid-", pid) : id.comm;
  }
  return id;
}

uint64_t FailedTotal(const MigratorStats& m) {
  uint64_t total = 0;
  for (const auto& [err, n] : m.failed_pages_by_errno) total += n;
  return total;
}

std::string AttachStatsJson(const AttachStats& s) {
  JsonWriter w(2);
  w.BeginObject();
  w.Key("pid");
  w.Int(s.id.pid);
  w.Key("comm");
  w.String(s.id.comm);
  w.Key("workload");
  w.String(s.id.workload);
  w.Key("cgroup");
  w.String(s.id.cgroup);
  w.Key("version");
  w.String(s.id.version);
  // RFC 3339 in UTC with milliseconds, and the same instant as Unix seconds.
  const absl::Time t = absl::FromUnixNanos(s.timestamp_ns);
  w.Key("timestamp");
  w.String(absl::FormatTime("%Y-%m-%d%ET%H:%M:%E3SZ", t, absl::UTCTimeZone()));
  w.Key("timestamp_unix_s");
  w.Double(static_cast<double>(absl::ToUnixMillis(t)) / 1e3);
  w.Key("promoted_pages");
  w.Uint(s.migrator.promoted_pages);
  w.Key("demoted_pages");
  w.Uint(s.migrator.demoted_pages);
  w.Key("promoted_bytes");
  w.Uint(s.migrator.promoted_bytes);
  w.Key("demoted_bytes");
  w.Uint(s.migrator.demoted_bytes);
  w.Key("failed_pages");
  w.BeginObject();
  for (const auto& [err, n] : s.migrator.failed_pages_by_errno) {
    w.Key(ErrnoName(err));
    w.Uint(n);
  }
  w.EndObject();
  w.Key("failed_pages_total");
  w.Uint(FailedTotal(s.migrator));
  w.Key("pingpong_pages");
  w.Uint(s.migrator.pingpong_pages);
  w.Key("samples");
  w.Uint(s.samples);
  w.Key("hot_pages");
  w.Uint(s.hot_pages);
  w.Key("hot_pages_by_node");
  w.BeginObject();
  for (const auto& [node, n] : s.hot_pages_by_node) {
    w.Key(absl::StrCat(node));
    w.Uint(n);
  }
  w.EndObject();
  w.Key("promotion_yield");
  w.Double(s.promoted_entries ? static_cast<double>(s.yield_hits) /
                                    static_cast<double>(s.promoted_entries)
                              : 0.0);
  w.Key("demotion_regret");
  w.Double(s.demoted_entries ? static_cast<double>(s.regret_hits) /
                                   static_cast<double>(s.demoted_entries)
                             : 0.0);
  w.Key("yield_samples");
  w.Uint(s.yield_hits);
  w.Key("regret_samples");
  w.Uint(s.regret_hits);
  w.Key("hot_to_moved_ms");
  w.BeginObject();
  w.Key("count");
  w.Uint(s.migrator.hot_to_moved.count());
  w.Key("p50");
  w.Double(absl::ToDoubleMilliseconds(s.migrator.hot_to_moved.Quantile(0.5)));
  w.Key("p99");
  w.Double(absl::ToDoubleMilliseconds(s.migrator.hot_to_moved.Quantile(0.99)));
  w.Key("max");
  w.Double(absl::ToDoubleMilliseconds(s.migrator.hot_to_moved.max()));
  w.EndObject();
  w.Key("rate_limit_wait_s");
  w.Double(absl::ToDoubleSeconds(s.migrator.rate_limit_wait));
  w.Key("cpu_budget_wait_s");
  w.Double(absl::ToDoubleSeconds(s.migrator.cpu_budget_wait));
  w.Key("planned_promotions");
  w.Uint(s.planned_promotions);
  w.Key("planned_demotions");
  w.Uint(s.planned_demotions);
  w.Key("planned_locality");
  w.Uint(s.planned_locality);
  w.Key("rounds");
  w.Uint(s.rounds);
  w.Key("early_rounds");
  w.Uint(s.early_rounds);
  w.Key("room_rounds");
  w.Uint(s.room_rounds);
  w.Key("short_window_held_rounds");
  w.Uint(s.short_window_held_rounds);
  w.Key("silences_doubted_rounds");
  w.Uint(s.silences_doubted_rounds);
  w.Key("odds_pair_rounds");
  w.Uint(s.odds_pair_rounds);
  w.Key("arrival_promotions");
  w.Uint(s.arrival_promotions);
  w.Key("rounds_waited_for_arrivals");
  w.Uint(s.rounds_waited_for_arrivals);
  w.Key("first_touches_dropped");
  w.Uint(s.first_touches_dropped);
  w.Key("resident_growth_pages");
  w.Uint(s.resident_growth_pages);
  w.Key("refault_protections");
  w.Uint(s.refault_protections);
  w.Key("reclaim_promotions");
  w.Uint(s.reclaim_promotions);
  w.Key("reclaim_returns");
  w.Uint(s.reclaim_returns);
  w.Key("repeat_window_s");
  w.Double(s.repeat_window_s);
  w.Key("engine_bytes");
  w.Uint(s.engine_bytes);
  w.Key("reclaim_makes_room");
  w.Bool(s.reclaim_makes_room);
  w.Key("untracked_victims");
  w.Uint(s.untracked_victims);
  w.Key("horizon_s");
  w.Double(s.horizon_s);
  w.Key("migration_cost_ns");
  w.Double(s.migration_cost_ns);
  w.Key("migration_margin_per_sec");
  w.Double(s.migration_margin_per_sec);
  w.Key("bandwidth_bound_rounds");
  w.Uint(s.bandwidth_bound_rounds);
  w.Key("planned_sheds");
  w.Uint(s.planned_sheds);
  w.Key("dry_run");
  w.Bool(s.dry_run);
  w.Key("source");
  w.String(s.source);
  w.Key("cpu_seconds");
  w.Double(s.cpu_seconds);
  if (!s.damon_recovered.empty()) {
    w.Key("damon");
    w.BeginObject();
    w.Key("recovered");
    w.String(s.damon_recovered);
    w.EndObject();
  }
  if (s.perf.has_value()) {
    w.Key("perf");
    w.BeginObject();
    w.Key("throttle");
    w.Uint(s.perf->throttle);
    w.Key("unthrottle");
    w.Uint(s.perf->unthrottle);
    w.Key("lost");
    w.Uint(s.perf->lost);
    w.Key("lost_samples");
    w.Uint(s.perf->lost_samples);
    w.Key("period_errors");
    w.Uint(s.perf->period_errors);
    w.Key("period_reopens");
    w.Uint(s.perf->period_reopens);
    w.Key("period_reopen_failures");
    w.Uint(s.perf->period_reopen_failures);
    w.EndObject();
  }
  if (s.write_faults != nullptr) {
    const WriteFaultRearmStats& r = s.write_faults->stats();
    w.Key("write_faults");
    w.BeginObject();
    w.Key("rearms");
    w.Uint(r.rearms);
    w.Key("clear_ms_total");
    w.Double(static_cast<double>(r.clear_ns_total) / 1e6);
    w.Key("clear_ms_max");
    w.Double(static_cast<double>(r.clear_ns_max) / 1e6);
    w.Key("interval_ms");
    w.Double(static_cast<double>(r.interval_ns) / 1e6);
    w.EndObject();
  }
  if (s.hintfault != nullptr) {
    w.Key("hintfault");
    s.hintfault->AppendJson(&w);
  }
  w.EndObject();
  return w.str() + "\n";
}

std::string AttachStatsProm(const AttachStats& s) {
  PromText p;
  const std::string who = PromLabels({{"workload", s.id.workload},
                                      {"pid", absl::StrCat(s.id.pid)},
                                      {"cgroup", s.id.cgroup}});
  // One family with one series labelled `who`.
  auto one = [&](const char* name, const char* type, const char* help,
                 auto value) {
    p.Add(p.Declare({name, type, help}), who, value);
  };
  auto flag = [](bool b) { return uint64_t{b ? 1u : 0u}; };
  auto secs = [](absl::Duration d) { return absl::ToDoubleSeconds(d); };

  p.Add(p.Declare({"hotpage_info", "gauge",
                   "Always 1; the labels say what runs: the process's comm, "
                   "the sample source and hotpage's version."}),
        PromAddLabels(who, {{"comm", s.id.comm},
                            {"source", s.source},
                            {"version", s.id.version}}),
        uint64_t{1});
  one("hotpage_stats_timestamp_seconds", "gauge",
      "When these stats were taken (CLOCK_REALTIME, Unix seconds).",
      static_cast<double>(s.timestamp_ns / 1000000) / 1e3);
  one("hotpage_promoted_pages_total", "counter",
      "Pages moved to a faster tier.", s.migrator.promoted_pages);
  one("hotpage_demoted_pages_total", "counter", "Pages moved to a slower tier.",
      s.migrator.demoted_pages);
  one("hotpage_promoted_bytes_total", "counter",
      "Bytes moved to a faster tier.", s.migrator.promoted_bytes);
  one("hotpage_demoted_bytes_total", "counter", "Bytes moved to a slower tier.",
      s.migrator.demoted_bytes);
  const size_t failed =
      p.Declare({"hotpage_failed_pages_total", "counter",
                 "Pages move_pages failed to move, by errno."});
  for (const auto& [err, n] : s.migrator.failed_pages_by_errno) {
    p.Add(failed, PromAddLabels(who, {{"errno", ErrnoName(err)}}), n);
  }
  one("hotpage_pingpong_pages_total", "counter",
      "Pages put on hold for moving back and forth.",
      s.migrator.pingpong_pages);
  one("hotpage_samples_total", "counter", "Samples ingested.", s.samples);
  one("hotpage_hot_pages", "gauge",
      "4 KiB pages at or above the hot threshold.", s.hot_pages);
  const size_t by_node = p.Declare(
      {"hotpage_hot_pages_by_node", "gauge", "Hot 4 KiB pages per NUMA node."});
  for (const auto& [node, n] : s.hot_pages_by_node) {
    p.Add(by_node, PromAddLabels(who, {{"node", absl::StrCat(node)}}), n);
  }
  one("hotpage_promotion_yield", "gauge",
      "Samples on promoted pages after promotion, per promoted page.",
      s.promoted_entries ? static_cast<double>(s.yield_hits) /
                               static_cast<double>(s.promoted_entries)
                         : 0.0);
  one("hotpage_demotion_regret", "gauge",
      "Samples on demoted pages after demotion, while on a slower tier, per "
      "demoted page (bandwidth sheds not counted).",
      s.demoted_entries ? static_cast<double>(s.regret_hits) /
                              static_cast<double>(s.demoted_entries)
                        : 0.0);
  one("hotpage_yield_samples_total", "counter",
      "Samples on promoted pages while on the fast tier.", s.yield_hits);
  one("hotpage_regret_samples_total", "counter",
      "Samples on demoted pages while on a slower tier.", s.regret_hits);
  const LatencyHistogram& h = s.migrator.hot_to_moved;
  const size_t lat =
      p.Declare({"hotpage_hot_to_moved_seconds", "summary",
                 "From found hot to moved (quantiles are the upper bounds of "
                 "power-of-two buckets)."});
  p.AddSuffixed(lat, "", PromAddLabels(who, {{"quantile", "0.5"}}),
                PromValue(secs(h.Quantile(0.5))));
  p.AddSuffixed(lat, "", PromAddLabels(who, {{"quantile", "0.99"}}),
                PromValue(secs(h.Quantile(0.99))));
  p.AddSuffixed(lat, "_sum", who, PromValue(secs(h.sum())));
  p.AddSuffixed(lat, "_count", who, absl::StrCat(h.count()));
  one("hotpage_hot_to_moved_max_seconds", "gauge",
      "The longest time from found hot to moved.", secs(h.max()));
  one("hotpage_rate_limit_wait_seconds_total", "counter",
      "Time the migrator waited for the migration rate limit.",
      secs(s.migrator.rate_limit_wait));
  one("hotpage_cpu_budget_wait_seconds_total", "counter",
      "Time the migrator waited for its CPU budget.",
      secs(s.migrator.cpu_budget_wait));
  one("hotpage_planned_promotions_total", "counter",
      "4 KiB pages the policy chose to promote.", s.planned_promotions);
  one("hotpage_planned_demotions_total", "counter",
      "4 KiB pages the policy chose to demote.", s.planned_demotions);
  one("hotpage_planned_locality_pages_total", "counter",
      "4 KiB pages --locality chose to move within a tier.",
      s.planned_locality);
  one("hotpage_rounds_total", "counter", "Policy rounds run.", s.rounds);
  one("hotpage_early_rounds_total", "counter",
      "Rounds brought forward: by a shift of the hot set, the start, or a "
      "burst of samples on pages the last round did not place.",
      s.early_rounds);
  one("hotpage_room_rounds_total", "counter",
      "Of the early rounds, those brought forward by new pages that used up "
      "the room the last round left on a fast node; they only demote.",
      s.room_rounds);
  one("hotpage_short_window_held_rounds_total", "counter",
      "Rounds that ranked candidates without their samples since the last "
      "round: the last rounds' swaps displaced pages that then drew more "
      "samples than the pages promoted.",
      s.short_window_held_rounds);
  one("hotpage_silences_doubted_rounds_total", "counter",
      "Rounds that took the victims' silences at the family-wise level: the "
      "pages the last rounds' swaps displaced for their silence then drew "
      "more samples than their bounds allowed.",
      s.silences_doubted_rounds);
  one("hotpage_odds_pair_rounds_total", "counter",
      "Rounds whose swap test took the odds (a candidate more likely hotter "
      "than its victim than not): a slower tier was saturated.",
      s.odds_pair_rounds);
  one("hotpage_arrival_promotions_total", "counter",
      "Pages promoted as they arrived, between rounds (hint faults: the "
      "kernel's tiering mode scans slow-tier pages only).",
      s.arrival_promotions);
  one("hotpage_rounds_waited_for_arrivals_total", "counter",
      "Rounds that waited, at most half an interval, while a burst of "
      "arriving pages was being placed.",
      s.rounds_waited_for_arrivals);
  one("hotpage_first_touches_dropped_total", "counter",
      "Fault samples dropped as possible first touches while the process's "
      "resident set grew (hint faults: the page-fault event counts both).",
      s.first_touches_dropped);
  one("hotpage_resident_growth_pages_total", "counter",
      "Growth of the process's resident set seen by the first-touch filter, "
      "in 4 KiB pages (hint faults).",
      s.resident_growth_pages);
  one("hotpage_refault_protections_total", "counter",
      "Demoted pages that faulted back within the long window (10 s), each "
      "then kept from being a victim for one (hint faults: the only evidence "
      "of a page on the fast tier).",
      s.refault_protections);
  one("hotpage_reclaim_promotions_total", "counter",
      "4 KiB pages promoted into a full fast node whose reclaim demotes "
      "(demotion_enabled): the kernel's LRU chose what left.",
      s.reclaim_promotions);
  one("hotpage_reclaim_returns_total", "counter",
      "Of those, pages back on the slow tier within the long window (10 s): "
      "the kernel's reclaim demoted them.",
      s.reclaim_returns);
  one("hotpage_repeat_window_seconds", "gauge",
      "The window in which two hint faults make a page a candidate for a "
      "promotion left to reclaim, cut by the returns' ages (0: reclaim does "
      "not make room).",
      s.repeat_window_s);
  one("hotpage_engine_bytes", "gauge",
      "The policy engine's own memory: its hotness table and per-page "
      "state (capacities, as of the last round).",
      s.engine_bytes);
  one("hotpage_reclaim_makes_room", "gauge",
      "1: the fast tier's victims are left to the kernel's reclaim (hint "
      "faults where demotion_enabled is true, followed as it changes).",
      flag(s.reclaim_makes_room));
  one("hotpage_untracked_victims_total", "counter",
      "4 KiB pages on the fast tier never sampled, offered as the coldest "
      "victims (sources that see every access: pebs, ibs, damon).",
      s.untracked_victims);
  one("hotpage_bandwidth_bound_rounds_total", "counter",
      "Rounds whose fast tier's loaded latency was above the next tier's.",
      s.bandwidth_bound_rounds);
  one("hotpage_planned_sheds_total", "counter",
      "4 KiB hot pages the bandwidth rule chose to move off a saturated "
      "fast tier.",
      s.planned_sheds);
  one("hotpage_horizon_seconds", "gauge",
      "The last round's learned benefit horizon.", s.horizon_s);
  one("hotpage_migration_cost_seconds", "gauge",
      "The measured cost of moving one 4 KiB page.", s.migration_cost_ns / 1e9);
  one("hotpage_migration_margin_per_second", "gauge",
      "The last round's benefit margin per second (0: no move gated; no "
      "cost measured yet, or fault or DAMON samples).",
      s.migration_margin_per_sec);
  one("hotpage_dry_run", "gauge", "1: deciding without moving (--dry-run).",
      flag(s.dry_run));
  one("hotpage_cpu_seconds_total", "counter",
      "CPU time of every hotpage thread since the loop started.",
      s.cpu_seconds);
  if (!s.damon_recovered.empty()) {
    one("hotpage_damon_recovered", "gauge",
        "1: a kdamond left by a killed hotpage was removed at the start.",
        uint64_t{1});
  }
  if (s.perf.has_value()) {
    one("hotpage_perf_throttle_total", "counter",
        "PERF_RECORD_THROTTLE records: an event stopped for the rest of a "
        "tick over perf_event_max_sample_rate.",
        s.perf->throttle);
    one("hotpage_perf_unthrottle_total", "counter",
        "PERF_RECORD_UNTHROTTLE records: a throttled event running again.",
        s.perf->unthrottle);
    one("hotpage_perf_lost_total", "counter",
        "Records lost to a full ring (PERF_RECORD_LOST).", s.perf->lost);
    one("hotpage_perf_lost_samples_total", "counter",
        "Samples the kernel dropped (PERF_RECORD_LOST_SAMPLES).",
        s.perf->lost_samples);
    one("hotpage_perf_period_errors_total", "counter",
        "PERF_EVENT_IOC_PERIOD calls the kernel refused.",
        s.perf->period_errors);
    one("hotpage_perf_period_reopens_total", "counter",
        "Per-task events re-opened at a new period so that inherited "
        "threads and children take it.",
        s.perf->period_reopens);
    one("hotpage_perf_period_reopen_failures_total", "counter",
        "Re-opens at a new period that failed; the old events kept "
        "sampling.",
        s.perf->period_reopen_failures);
  }
  if (s.write_faults != nullptr) {
    const WriteFaultRearmStats& r = s.write_faults->stats();
    one("hotpage_write_fault_rearms_total", "counter",
        "Write faults re-armed (clear_refs writes).", r.rearms);
    one("hotpage_write_fault_clear_seconds_total", "counter",
        "Time spent writing clear_refs.",
        static_cast<double>(r.clear_ns_total) / 1e9);
    one("hotpage_write_fault_clear_max_seconds", "gauge",
        "The longest clear_refs write.",
        static_cast<double>(r.clear_ns_max) / 1e9);
    one("hotpage_write_fault_interval_seconds", "gauge",
        "The re-arm interval in force.",
        static_cast<double>(r.interval_ns) / 1e9);
  }
  if (s.hintfault != nullptr) {
    const HintFaultStats hf = s.hintfault->stats();
    one("hotpage_hintfault_numa_pte_updates_total", "counter",
        "numa_pte_updates since the start (/proc/vmstat, system-wide).",
        hf.delta.numa_pte_updates);
    one("hotpage_hintfault_numa_hint_faults_total", "counter",
        "numa_hint_faults since the start (system-wide).",
        hf.delta.numa_hint_faults);
    one("hotpage_hintfault_numa_hint_faults_local_total", "counter",
        "numa_hint_faults_local since the start (system-wide).",
        hf.delta.numa_hint_faults_local);
    one("hotpage_hintfault_pgpromote_candidate_total", "counter",
        "pgpromote_candidate since the start (system-wide).",
        hf.delta.pgpromote_candidate);
    one("hotpage_hintfault_pgpromote_success_total", "counter",
        "pgpromote_success since the start (system-wide).",
        hf.delta.pgpromote_success);
    one("hotpage_hintfault_numa_pages_migrated_total", "counter",
        "numa_pages_migrated since the start (system-wide).",
        hf.delta.numa_pages_migrated);
    one("hotpage_hintfault_kernel_migrated_pages_total", "counter",
        "Pages the kernel migrated itself while hotpage ran.",
        hf.kernel_migrated_pages);
    one("hotpage_hintfault_hint_faults_per_second", "gauge",
        "Hint faults per second since the start (system-wide).",
        hf.hint_faults_per_sec);
    if (hf.scan_seq_known) {
      one("hotpage_hintfault_scan_passes_total", "counter",
          "The kernel's NUMA scan passes over the process.", hf.scan_passes);
    }
    one("hotpage_hintfault_longest_scan_gap_seconds", "gauge",
        "The longest time without scan progress.", hf.longest_scan_gap_s);
    one("hotpage_hintfault_scan_stalled", "gauge",
        "1: the kernel's scanner is stalled now.", flag(hf.scan_stalled));
    one("hotpage_hintfault_stall_episodes_total", "counter",
        "Times the kernel's scanner stalled.", hf.stall_episodes);
    one("hotpage_hintfault_sysctl_overrides_total", "counter",
        "Times a changed sysctl was changed back by someone else.",
        hf.sysctl_overrides);
    if (hf.demotion_known) {
      one("hotpage_hintfault_demotion_enabled", "gauge",
          "1: the kernel demotes on reclaim (demotion_enabled), as last read.",
          flag(hf.demotion_enabled));
    }
    one("hotpage_hintfault_demotion_changes_total", "counter",
        "Times demotion_enabled changed while hotpage ran.",
        hf.demotion_changes);
    one("hotpage_hintfault_unscannable_slow_pages", "gauge",
        "Slower-tier pages the kernel never scans (explicit policies).",
        hf.unscannable_slow_pages);
    one("hotpage_hintfault_target_minor_faults_total", "counter",
        "The process's minor faults since the start.", hf.target_minor_faults);
    one("hotpage_hintfault_watchdog_cpu_seconds_total", "counter",
        "CPU time of the hint-fault watchdog.", hf.watchdog_cpu_seconds);
    one("hotpage_hintfault_recovered", "gauge",
        "1: sysctls left by a killed hotpage were restored at the start.",
        flag(!hf.recovered.empty()));
  }
  return p.Text();
}

std::string PerfStatusFields(const AttachStats& s) {
  if (!s.perf.has_value()) return "";
  return absl::StrCat(" throttled=", s.perf->throttle,
                      " unthrottled=", s.perf->unthrottle,
                      " lost=", s.perf->lost + s.perf->lost_samples);
}

void AttachStatsFiles::Publish(const AttachStats& stats, bool final) {
  if (json_path_) {
    absl::Status s = WriteFileAtomically(*json_path_, AttachStatsJson(stats));
    if (!s.ok() && !final) *log_ << "hotpage attach: " << s.message() << "\n";
  }
  if (!prom_path_ && !keep_prom_) return;
  std::string prom = AttachStatsProm(stats);
  if (prom_path_) {
    absl::Status s = WriteFileAtomically(*prom_path_, prom);
    if (!s.ok() && !final) *log_ << "hotpage attach: " << s.message() << "\n";
  }
  if (keep_prom_) {
    MutexLock l(&mu_);
    latest_prom_.swap(prom);
  }
}

std::string AttachStatsFiles::LatestProm() const {
  MutexLock l(&mu_);
  return latest_prom_;
}

}  // namespace hotpage
