#include "tools/simulate/sim_hotpage.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "migrator/move_requests.h"
#include "tools/attach/attach_engine.h"

namespace hotpage {
namespace {

// Samples handed to the engine at once: about one sampler poll's worth, at
// most kBatch samples or kBatchNs of trace time (attach polls its samplers
// with a 50 ms timeout: tools/attach/live_sources.cc), so the engine's
// shift detector sees samples as often as attach's does.
constexpr size_t kBatch = 4096;
constexpr uint64_t kBatchNs = 50000000;
// A fault source's poll (the header): the sampler's poll timeout.
constexpr uint64_t kPollNs = 50000000;

}  // namespace

absl::StatusOr<std::unique_ptr<HotpagePolicy>> HotpagePolicy::Create(
    const Topology& topology, std::unique_ptr<SimulatedMemory> memory,
    const HotpagePolicyOptions& options) {
  EngineOptions engine_options = options.engine;
  if (options.source != SimSource::kTrace)
    ApplySourceEngineOptions(AttachSourceName(options.source),
                             options.kernel_demotion, &engine_options);
  absl::StatusOr<std::unique_ptr<PolicyEngine>> engine =
      PolicyEngine::Create(topology, options.placement, engine_options);
  if (!engine.ok()) return engine.status();
  return std::unique_ptr<HotpagePolicy>(
      new HotpagePolicy(std::move(memory), std::move(*engine), options));
}

HotpagePolicy::HotpagePolicy(std::unique_ptr<SimulatedMemory> memory,
                             std::unique_ptr<PolicyEngine> engine,
                             const HotpagePolicyOptions& options)
    : MemoryPolicy("hotpage", std::move(memory)),
      options_(options),
      engine_(std::move(engine)) {
  batch_.reserve(kBatch);
  fault_ =
      SimFaultSource::Create(options_.source, this->memory(), options_.fault);
  if (options_.source == SimSource::kHintFault && options_.first_touch_filter) {
    // As attach's loop (tools/attach/attach_loop.cc), huge chunks included.
    first_touch_ = std::make_unique<FirstTouchFilter>();
    first_touch_->SetHugeChunks([engine = engine_.get()](uint64_t vaddr) {
      return engine->InHugeChunk(vaddr);
    });
  }
  const PlacementConfig& c = options_.placement;
  flag_details_ = !c.promote_to.empty() ||
                  c.weights.source != WeightsConfig::Source::kNone ||
                  c.package_aware || c.locality || c.huge_strict_preferred ||
                  c.interleave_tolerance >= 0;
}

void HotpagePolicy::Start(uint64_t start_ns) {
  engine_->Start(start_ns);
  migration_ = std::make_unique<SimMigration>(
      options_.migrator, options_.cost, &memory(),
      static_cast<pid_t>(options_.engine.address_space), start_ns);
  memory().set_gate(migration_.get());
  if (fault_) {
    fault_->Start(start_ns);
    next_poll_ns_ = start_ns;
  }
  if (first_touch_) first_touch_->NoteResident(start_ns, ResidentPages());
}

uint64_t HotpagePolicy::ResidentPages() {
  // A process's resident set is never empty (its text and stack: one page
  // stands for them), and 0 tells the filter it is unknown. Pages present
  // at the trace's start were resident before it: the set does not grow.
  if (options_.fault.scanner.present_at_start) return 0;
  return 1 + memory().pages();
}

uint64_t HotpagePolicy::next_event_ns() const {
  if (fault_) {
    return std::min(
        {next_poll_ns_, fault_->next_event_ns(), migration_->NextEventNs()});
  }
  return std::min(engine_->next_round_ns(), migration_->NextEventNs());
}

void HotpagePolicy::Access(const Sample& s, int node) {
  if (fault_) {
    // Handed over at the next poll.
    if (fault_->Fault(s, node)) batch_.push_back(FaultSample(s));
    return;
  }
  batch_.push_back(s);
  if (batch_.size() >= kBatch || s.time_ns - batch_.front().time_ns >= kBatchNs)
    Flush(s.time_ns);
}

void HotpagePolicy::Flush(uint64_t now_ns) {
  if (batch_.empty()) return;
  if (first_touch_) {
    first_touch_->Filter(now_ns, batch_, &kept_,
                         [this] { return ResidentPages(); });
    engine_->Ingest(kept_);
  } else {
    engine_->Ingest(batch_);
  }
  batch_.clear();
}

void HotpagePolicy::Advance(uint64_t now_ns) {
  while (fault_) {
    const uint64_t scan = fault_->next_event_ns();
    const uint64_t call = migration_->NextEventNs();
    const uint64_t poll = next_poll_ns_;
    if (std::min({scan, call, poll}) > now_ns) return;
    if (scan <= std::min(call, poll)) {
      fault_->Advance(scan);
    } else if (call < poll) {
      migration_->RunUntil(std::min(poll - 1, now_ns));
    } else {
      Poll(poll);
    }
  }
  for (;;) {
    const uint64_t round = engine_->next_round_ns();
    const uint64_t call = migration_->NextEventNs();
    if (std::min(round, call) > now_ns) return;
    if (call < round) {
      // Migrator rounds that start strictly before the policy round (one
      // starting at its time runs after it, with its new requests queued).
      migration_->RunUntil(std::min(round - 1, now_ns));
    } else {
      Round(round);
    }
  }
}

void HotpagePolicy::Poll(uint64_t t) {
  next_poll_ns_ = t + kPollNs;
  memory().set_now(t);
  Flush(t);
  fault_->Poll(t, engine_->counters().samples);
  if (engine_->ArrivalsPending()) {
    const PlacementDecision d = engine_->PlaceArrivals(memory(), t);
    for (const PlannedMove& m : d.moves) {
      decided_promotions_ += m.page_bytes / kBasePageBytes;
      planned_promotions_to_[m.to_node] += m.page_bytes / kBasePageBytes;
    }
    requests_.clear();
    AppendMoveRequests(d, SimTime(t), &requests_);
    unit_requests_ += requests_.size();
    if (!requests_.empty()) migration_->Submit(requests_, t);
  }
  if (!engine_->RoundDue(t)) return;
  if (engine_->RoundWaitsForArrivals(t)) {
    ++rounds_waited_;
    return;
  }
  Round(t);
}

void HotpagePolicy::Round(uint64_t t) {
  Flush(t);  // every sample before t (the loop never feeds later ones)
  memory().set_now(t);
  // The cost of a move, as attach measures it: the migrator's time over
  // the pages it moved (here the modelled time).
  const SimMemoryCounters& mc = memory().counters();
  engine_->ObserveMigration(
      mc.promoted_pages + mc.demoted_pages + mc.lateral_pages, mc.migration_ns);
  const RoundReport report = engine_->RunRound(memory(), t);
  requests_.clear();
  for (const PlannedMove& m : report.decision.moves) {
    const bool promote = m.reason == PlacementReason::kPromote;
    (promote ? decided_promotions_ : decided_demotions_) +=
        m.page_bytes / kBasePageBytes;
    if (promote && m.trigger != PlacementTrigger::kLocality)
      planned_promotions_to_[m.to_node] += m.page_bytes / kBasePageBytes;
  }
  locality_pages_ += report.decision.locality_bytes / kBasePageBytes;
  huge_preferred_full_ +=
      report.decision.promote_skipped[SkipReason::kHugePreferredFull];
  // As cmd_attach.cc: 4 KiB requests, the round's demotions first.
  AppendMoveRequests(report.decision, SimTime(t), &requests_);
  unit_requests_ += requests_.size();
  if (!requests_.empty()) migration_->Submit(requests_, t);
  horizon_ms_ = static_cast<uint64_t>(report.horizon_s * 1e3);
  if (report.repeat_window_s > 0)
    repeat_window_ms_ = static_cast<uint64_t>(report.repeat_window_s * 1e3);
  migration_cost_ns_ = static_cast<uint64_t>(report.migration_cost_ns);
  if (round_listener_) round_listener_(report);
}

std::vector<std::pair<std::string, uint64_t>> HotpagePolicy::Details() const {
  const SimMigrationStats m =
      migration_ ? migration_->stats() : SimMigrationStats{};
  const EngineCounters& c = engine_->counters();
  std::vector<std::pair<std::string, uint64_t>> out = {
      {"rounds", c.rounds},
      {"early_rounds", c.early_rounds},
      {"room_rounds", c.room_rounds},
      {"change_window_rounds", c.change_window_rounds},
      {"released_holds", c.released_holds},
      {"short_window_held_rounds", c.short_window_held_rounds},
      {"silences_doubted_rounds", c.silences_doubted_rounds},
      {"odds_pair_rounds", c.odds_pair_rounds},
      {"bandwidth_bound_rounds", c.bandwidth_bound_rounds},
      {"bandwidth_shed_rounds", c.bandwidth_shed_rounds},
      {"planned_sheds", c.planned_sheds},
      {"short_window_candidates", c.short_window_candidates},
      {"long_window_victims", c.long_window_victims},
      {"horizon_ms", horizon_ms_},
      {"migration_cost_ns", migration_cost_ns_},
      {"planned_promotions", c.planned_promotions},
      {"planned_demotions", c.planned_demotions},
      {"promoted_entries", c.promoted_entries},
      {"yield_hits", c.yield_hits},
      {"demoted_entries", c.demoted_entries},
      {"regret_hits", c.regret_hits},
      {"requests_submitted", m.submitted},
      {"dropped_queue_full", m.dropped_queue_full},
      {"dropped_node_backoff", m.dropped_node_backoff + m.skipped_node_backoff},
      {"skipped_held", m.skipped_held},
      {"already_on_target", m.already_on_target},
      {"failed_enoent", m.failed_enoent},
      {"failed_enomem", m.failed_enomem},
      {"move_calls", m.move_calls},
      {"held_pages", m.pingpong_pages},
      {"queued_at_end", m.queue_depth},
  };
  if (fault_) {
    out.push_back({"arrival_promotions", c.arrival_promotions});
    out.push_back({"refault_protections", c.refault_protections});
    out.push_back({"reclaim_promotions", c.reclaim_promotions});
    out.push_back({"reclaim_returns", c.reclaim_returns});
    if (engine_->reclaim_makes_room()) {
      out.push_back({"repeat_window_cuts", c.repeat_window_cuts});
      out.push_back({"repeat_window_ms", repeat_window_ms_});
    }
    out.push_back({"polls_round_waited", rounds_waited_});
    fault_->AppendDetails(&out);
    if (first_touch_) {
      out.push_back({"first_touches_dropped", first_touch_->dropped()});
      out.push_back({"resident_growth_pages", first_touch_->growth_pages()});
    }
  }
  if (flag_details_) {
    for (const auto& [node, pages] : planned_promotions_to_)
      out.push_back({absl::StrCat("planned_promotions_to_node_", node), pages});
    out.push_back({"locality_pages", locality_pages_});
    out.push_back({"huge_preferred_full", huge_preferred_full_});
  }
  return out;
}

}  // namespace hotpage
