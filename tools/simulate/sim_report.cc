#include "tools/simulate/sim_report.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/base/json_writer.h"

namespace hotpage {
namespace {

double Round6(double v) { return std::round(v * 1e6) / 1e6; }

void WriteTally(JsonWriter& w, const PolicyTally& t,
                const PolicyTally* oracle) {
  w.Key("samples");
  w.Uint(t.samples);
  w.Key("fast_samples");
  w.Uint(t.fast_samples);
  w.Key("fast_share");
  w.Double(Round6(t.fast_share()));
  w.Key("of_oracle");
  if (oracle != nullptr && oracle->fast_samples > 0) {
    w.Double(Round6(t.fast_share() / oracle->fast_share()));
  } else {
    w.Null();
  }
  w.Key("avg_latency_ns");
  w.Double(Round6(t.avg_latency_ns()));
  w.Key("avg_idle_latency_ns");
  w.Double(Round6(t.avg_idle_latency_ns()));
  w.Key("promoted_pages");
  w.Uint(t.promoted_pages);
  w.Key("demoted_pages");
  w.Uint(t.demoted_pages);
  w.Key("bytes_migrated");
  w.Uint(t.bytes_migrated);
  w.Key("pingpongs");
  w.Uint(t.pingpongs);
  w.Key("migration_ms");
  w.Double(Round6(static_cast<double>(t.migration_ns) / 1e6));
  w.Key("oracle_moves");
  w.Uint(t.oracle_moves);
}

std::string Percent(double v) { return absl::StrFormat("%.1f%%", 100.0 * v); }

}  // namespace

std::string ComparisonTable(const Simulation& sim) {
  const std::vector<PolicyTally> totals = sim.Totals();
  const int oracle = sim.IndexOf("oracle");
  std::vector<size_t> order;
  if (oracle >= 0) order.push_back(static_cast<size_t>(oracle));
  for (size_t i = 0; i < totals.size(); ++i) {
    if (static_cast<int>(i) != oracle) order.push_back(i);
  }
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"POLICY", "FAST-TIER SHARE", "% OF ORACLE",
                  "AVG LOADED LATENCY NS", "PROMOTED", "DEMOTED", "MB MIGRATED",
                  "PING-PONGS"});
  for (size_t i : order) {
    const PolicyTally& t = totals[i];
    const bool is_oracle = static_cast<int>(i) == oracle;
    std::string of_oracle = "-";
    if (oracle >= 0 && totals[oracle].fast_samples > 0) {
      of_oracle = Percent(t.fast_share() / totals[oracle].fast_share());
    }
    rows.push_back({
        sim.policies()[i]->name(),
        Percent(t.fast_share()),
        of_oracle,
        absl::StrFormat("%.1f", t.avg_latency_ns()),
        is_oracle ? absl::StrCat("(", t.oracle_moves, ")")
                  : absl::StrCat(t.promoted_pages),
        is_oracle ? "-" : absl::StrCat(t.demoted_pages),
        is_oracle ? "-"
                  : absl::StrFormat(
                        "%.1f", static_cast<double>(t.bytes_migrated) / 1e6),
        is_oracle ? "-" : absl::StrCat(t.pingpongs),
    });
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& r : rows) {
    for (size_t c = 0; c < r.size(); ++c)
      width[c] = std::max(width[c], r[c].size());
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (size_t c = 0; c < r.size(); ++c) {
      // Policy names left-aligned, numbers right-aligned.
      const std::string pad(width[c] - r[c].size(), ' ');
      line += c == 0 ? r[c] + pad : pad + r[c];
      if (c + 1 < r.size()) line += "  ";
    }
    out += line + "\n";
  }
  if (oracle >= 0) {
    out +=
        "oracle: the hottest pages of each interval on the fast tier at no "
        "cost (an upper bound);\n"
        "its PROMOTED column is the pages entering that set (not charged)\n";
  }
  return out;
}

std::string ReportJson(const SimRunInfo& info, const Simulation& sim) {
  JsonWriter w(2);
  w.BeginObject();
  w.Key("trace");
  w.String(info.trace);
  w.Key("trace_format");
  w.String(info.trace_format);
  w.Key("pid");
  w.Uint(info.pid);
  w.Key("pids_in_trace");
  w.Uint(info.pids_in_trace);
  w.Key("trace_samples");
  w.Uint(info.trace_samples);
  w.Key("samples");
  w.Uint(sim.samples());
  w.Key("out_of_order_samples");
  w.Uint(info.out_of_order);
  w.Key("late_samples");
  w.Uint(info.late_samples + sim.late_samples());
  w.Key("duration_ms");
  w.Double(Round6(static_cast<double>(sim.last_ns() - sim.start_ns()) / 1e6));
  w.Key("interval_ms");
  w.Uint(info.interval_ms);
  w.Key("topology");
  w.String(info.topology);
  w.Key("capacity");
  w.String(info.capacity);
  if (info.machine != nullptr) {
    w.Key("footprint_pages");
    w.Uint(info.machine->footprint_pages);
    w.Key("fast_pages");
    w.Uint(info.machine->fast_pages);
    w.Key("nodes");
    w.BeginArray();
    for (const NodeInfo& n : info.machine->topology.nodes) {
      w.BeginObject();
      w.Key("id");
      w.Int(n.id);
      w.Key("tier");
      w.Optional(n.tier);
      w.Key("capacity_pages");
      w.Uint(n.memory_bytes / kSimPageBytes);
      w.Key("read_latency_ns");
      w.Optional(n.hmat.read_latency_ns);
      w.Key("read_bandwidth_mbps");
      w.Optional(n.hmat.read_bandwidth_mbps);
      w.Key("cpus");
      w.Uint(n.cpus.size());
      w.EndObject();
    }
    w.EndArray();
  }
  w.Key("options");
  w.BeginObject();
  w.Key("rate_limit_mbps");
  w.Uint(info.rate_limit_mbps);
  if (!info.engine_flags.empty()) {  // absent with the defaults (goldens)
    w.Key("engine_flags");
    w.String(info.engine_flags);
  }
  if (info.source != "trace") {  // absent with every sample (goldens)
    w.Key("source");
    w.String(info.source);
  }
  if (info.kernel_demotion) {  // absent when off (goldens)
    w.Key("kernel_demotion");
    w.Bool(true);
  }
  w.Key("memtis_cooling_samples");
  w.Uint(info.memtis_cooling_samples);
  w.EndObject();

  const std::vector<PolicyTally> totals = sim.Totals();
  const int oracle_index = sim.IndexOf("oracle");
  const PolicyTally* oracle_total =
      oracle_index >= 0 ? &totals[oracle_index] : nullptr;
  w.Key("policies");
  w.BeginArray();
  for (size_t i = 0; i < sim.policies().size(); ++i) {
    const SimPolicy& p = *sim.policies()[i];
    w.BeginObject();
    w.Key("name");
    w.String(p.name());
    w.Key("total");
    w.BeginObject();
    WriteTally(w, totals[i], oracle_total);
    w.EndObject();
    w.Key("details");
    w.BeginObject();
    for (const auto& [k, v] : p.Details()) {
      w.Key(k);
      w.Uint(v);
    }
    w.EndObject();
    w.Key("intervals");
    w.BeginArray();
    for (const IntervalRow& r : sim.intervals()) {
      w.BeginObject();
      w.Key("index");
      w.Uint(r.index);
      w.Key("start_ms");
      w.Double(Round6(static_cast<double>(r.start_ns) / 1e6));
      WriteTally(w, r.tallies[i],
                 oracle_index >= 0 ? &r.tallies[oracle_index] : nullptr);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.str() + "\n";
}

}  // namespace hotpage
