#include "tools/round_log.h"

#include "absl/strings/str_format.h"
#include "tools/base/json_writer.h"

namespace hotpage {
namespace {

std::string Hex(uint64_t v) { return absl::StrFormat("0x%x", v); }

}  // namespace

void AppendRoundLine(const RoundReport& r, uint64_t start_ns,
                     std::string* out) {
  JsonWriter w;  // compact: one line
  w.BeginObject();
  w.Key("t_s");
  w.Double(r.time_ns >= start_ns
               ? static_cast<double>(r.time_ns - start_ns) / 1e9
               : -static_cast<double>(start_ns - r.time_ns) / 1e9);
  w.Key("round");
  w.Uint(r.round);
  w.Key("early");
  w.Bool(r.early);
  w.Key("room_round");
  w.Bool(r.room_round);
  w.Key("change_window_s");
  w.Double(r.change_window_s);
  w.Key("change_unconfirmed");
  w.Bool(r.change_unconfirmed);
  w.Key("fast_share");
  w.Double(r.fast_share);
  w.Key("fast_share_baseline");
  w.Double(r.fast_share_baseline);
  w.Key("bandwidth_bound");
  w.Bool(r.bandwidth_bound);
  w.Key("fast_loaded_latency_ns");
  w.Double(r.fast_loaded_latency_ns);
  w.Key("next_loaded_latency_ns");
  w.Double(r.next_loaded_latency_ns);
  w.Key("horizon_s");
  w.Double(r.horizon_s);
  w.Key("migration_cost_ns");
  w.Double(r.migration_cost_ns);
  w.Key("short_window_held");
  w.Bool(r.short_window_held);
  w.Key("silences_doubted");
  w.Bool(r.silences_doubted);
  w.Key("prior_zero_truncated");
  w.Bool(r.prior_zero_truncated);
  const PlacementDecision& d = r.decision;
  w.Key("promoted_pages");
  w.Uint(d.promoted_pages);
  w.Key("demoted_pages");
  w.Uint(d.demoted_pages);
  w.Key("shed_pages");
  w.Uint(d.shed_pages);
  w.Key("promote_skipped");
  w.BeginObject();
  for (size_t i = 0; i < kNumSkipReasons; ++i) {
    if (d.promote_skipped.pages[i] == 0) continue;
    w.Key(SkipReasonName(static_cast<SkipReason>(i)));
    w.Uint(d.promote_skipped.pages[i]);
  }
  w.EndObject();
  w.Key("moves");
  w.BeginArray();
  for (const PlannedMove& m : d.moves) {
    w.BeginArray();
    w.String(Hex(m.vaddr));
    w.Uint(m.page_bytes);
    w.Int(m.from_node);
    w.Int(m.to_node);
    w.String(PlacementReasonName(m.reason));
    w.String(PlacementTriggerName(m.trigger));
    if (m.paired_vaddr != 0) {
      w.String(Hex(m.paired_vaddr));
    } else {
      w.Null();
    }
    w.EndArray();
  }
  w.EndArray();
  w.EndObject();
  out->append(w.str());
  out->push_back('\n');
}

}  // namespace hotpage
