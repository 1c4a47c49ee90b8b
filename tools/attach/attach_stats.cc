#include "tools/attach/attach_stats.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "tools/base/atomic_file.h"
#include "tools/base/json_writer.h"
#include "tools/base/status_macros.h"

namespace hotpage {

uint64_t FailedTotal(const MigratorStats& m) {
  uint64_t total = 0;
  for (const auto& [err, n] : m.failed_pages_by_errno) total += n;
  return total;
}

std::string AttachStatsJson(const AttachStats& s) {
  JsonWriter w(2);
  w.BeginObject();
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
  std::string out;
  auto metric = [&](const char* name, const char* help,
                    const std::string& body) {
    absl::StrAppend(&out, "# HELP hotpage_", name, " ", help,
                    "\n# TYPE hotpage_", name, " ",
                    absl::string_view(name).size() > 6 &&
                            absl::string_view(name).substr(
                                absl::string_view(name).size() - 6) == "_total"
                        ? "counter"
                        : "gauge",
                    "\n", body);
  };
  metric("promoted_pages_total", "Pages moved to a faster tier.",
         absl::StrCat("hotpage_promoted_pages_total ",
                      s.migrator.promoted_pages, "\n"));
  metric("demoted_pages_total", "Pages moved to a slower tier.",
         absl::StrCat("hotpage_demoted_pages_total ", s.migrator.demoted_pages,
                      "\n"));
  std::string failed;
  for (const auto& [err, n] : s.migrator.failed_pages_by_errno) {
    absl::StrAppend(&failed, "hotpage_failed_pages_total{errno=\"",
                    ErrnoName(err), "\"} ", n, "\n");
  }
  metric("failed_pages_total", "Pages move_pages failed to move, by errno.",
         failed);
  metric("pingpong_pages_total", "Pages put on hold for moving back and forth.",
         absl::StrCat("hotpage_pingpong_pages_total ",
                      s.migrator.pingpong_pages, "\n"));
  metric("samples_total", "Samples ingested.",
         absl::StrCat("hotpage_samples_total ", s.samples, "\n"));
  metric("hot_pages", "4 KiB pages at or above the hot threshold.",
         absl::StrCat("hotpage_hot_pages ", s.hot_pages, "\n"));
  std::string by_node;
  for (const auto& [node, n] : s.hot_pages_by_node) {
    absl::StrAppend(&by_node, "hotpage_hot_pages_by_node{node=\"", node, "\"} ",
                    n, "\n");
  }
  metric("hot_pages_by_node", "Hot 4 KiB pages per NUMA node.", by_node);
  metric("promotion_yield",
         "Samples on promoted pages after promotion, per promoted page.",
         absl::StrFormat(
             "hotpage_promotion_yield %g\n",
             s.promoted_entries
                 ? static_cast<double>(s.yield_hits) / s.promoted_entries
                 : 0.0));
  if (s.perf.has_value()) {
    metric(
        "perf_throttle_total",
        "PERF_RECORD_THROTTLE records: an event stopped for the rest of a "
        "tick over perf_event_max_sample_rate.",
        absl::StrCat("hotpage_perf_throttle_total ", s.perf->throttle, "\n"));
    metric("perf_unthrottle_total",
           "PERF_RECORD_UNTHROTTLE records: a throttled event running again.",
           absl::StrCat("hotpage_perf_unthrottle_total ", s.perf->unthrottle,
                        "\n"));
    metric("perf_period_reopens_total",
           "Per-task events re-opened at a new period so that inherited "
           "threads and children take it.",
           absl::StrCat("hotpage_perf_period_reopens_total ",
                        s.perf->period_reopens, "\n"));
    metric("perf_period_reopen_failures_total",
           "Re-opens at a new period that failed; the old events kept "
           "sampling.",
           absl::StrCat("hotpage_perf_period_reopen_failures_total ",
                        s.perf->period_reopen_failures, "\n"));
  }
  return out;
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
  if (prom_path_) {
    absl::Status s = WriteFileAtomically(*prom_path_, AttachStatsProm(stats));
    if (!s.ok() && !final) *log_ << "hotpage attach: " << s.message() << "\n";
  }
}

}  // namespace hotpage
