#include "tools/attach/attach_loop.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "migrator/move_requests.h"
#include "tools/base/status_macros.h"
#include "tools/round_log.h"

namespace hotpage {

namespace {

// " (EACCES 12, EBUSY 3)" for the summary; "" without failures.
std::string FailedByErrno(const MigratorStats& m) {
  std::string out;
  for (const auto& [err, n] : m.failed_pages_by_errno) {
    absl::StrAppend(&out, out.empty() ? " (" : ", ", ErrnoName(err), " ", n);
  }
  return out.empty() ? out : out + ")";
}

}  // namespace

AttachLoop::AttachLoop(const AttachLoopOptions& options, AttachLoopParts parts)
    : options_(options), parts_(std::move(parts)) {
  stats_.dry_run = options_.dry_run;
  stats_.source = options_.source_name;
  stats_.hintfault = parts_.hintfault;
  stats_.write_faults = parts_.rearm;
  stats_.damon_recovered = parts_.damon_recovered;
  stats_.id = options_.identity;
  if (!parts_.cpu_time) {
    Clock* clock = parts_.clock;
    parts_.cpu_time = [clock] { return clock->ThreadCpuTime(); };
  }
  if (!parts_.wall_ns) {
    parts_.wall_ns = [] { return static_cast<int64_t>(RealtimeNs()); };
  }
  if (parts_.resident_pages) {
    first_touch_ = std::make_unique<FirstTouchFilter>();
    // A huge page's faults are judged by its chunk (first_touch_filter.h).
    first_touch_->SetHugeChunks([engine = parts_.engine](uint64_t vaddr) {
      return engine->InHugeChunk(vaddr);
    });
    sink_ = [this](absl::Span<const Sample> samples) {
      // The filter reads the resident set, once per batch at most: every
      // 10 ms, or when a sample on an unseen page meets an empty budget
      // (FirstTouchFilter::Filter).
      first_touch_->Filter(NowNs(), samples, &kept_, parts_.resident_pages);
      stats_.first_touches_dropped = first_touch_->dropped();
      stats_.resident_growth_pages = first_touch_->growth_pages();
      parts_.engine->Ingest(kept_);
    };
  } else {
    sink_ = [this](absl::Span<const Sample> samples) {
      parts_.engine->Ingest(samples);
    };
  }
}

uint64_t AttachLoop::NowNs() const {
  return static_cast<uint64_t>(absl::ToUnixNanos(parts_.clock->Now()));
}

absl::Duration AttachLoop::CpuTime() const { return parts_.cpu_time(); }

void AttachLoop::PublishStats(bool final) {
  stats_.cpu_seconds = absl::ToDoubleSeconds(CpuTime() - cpu_start_);
  stats_.timestamp_ns = parts_.wall_ns();
  parts_.stats->Publish(stats_, final);
}

absl::Status AttachLoop::Run() {
  if (!options_.dry_run && !parts_.migrator_external) {
    if (absl::Status s = parts_.migrator->Start(); !s.ok()) return s;
  }
  start_ns_ = NowNs();
  parts_.engine->Start(start_ns_);
  if (first_touch_ != nullptr) {
    // The baseline: what the target had before the source started is no
    // growth seen here; what it gained since is (its samples may be queued).
    if (parts_.resident_before_source > 0) {
      first_touch_->NoteResident(start_ns_, parts_.resident_before_source);
    }
    first_touch_->NoteResident(start_ns_, parts_.resident_pages());
  }
  cpu_start_ = CpuTime();
  uint64_t now = start_ns_;
  while (Step(&now)) {
    // New pages first: their promotions reach the migrator before a round
    // that may be due, which then leaves them out.
    if (parts_.engine->ArrivalsPending()) Arrivals(now);
    // A round blocks the loop (no samples are read, no arrivals placed)
    // and shares the CPU with the migrator's copies: while a burst of new
    // pages is still being placed, or their moves copied, it waits
    // (PolicyEngine::RoundWaitsForArrivals), then sees the whole burst.
    if (parts_.engine->RoundDue(now)) {
      if (parts_.engine->RoundWaitsForArrivals(now, MovesQueued())) {
        round_waited_ = true;
      } else {
        if (round_waited_) ++stats_.rounds_waited_for_arrivals;
        round_waited_ = false;
        Round(now);
      }
    }
  }
  Teardown();
  return error_;
}

bool AttachLoop::Step(uint64_t* now_ns) {
  if (absl::Status p = parts_.source->Poll(sink_); !p.ok()) {
    // NotFound: the target exited and the source stopped (DAMON).
    if (!absl::IsNotFound(p)) error_ = p;
    return false;
  }
  // Relaxed: the flag carries no data; the loop only needs to see it soon.
  if (parts_.stop->load(std::memory_order_relaxed)) {
    stop_reason_ = "interrupted";
    return false;
  }
  const uint64_t now = NowNs();
  *now_ns = now;
  if (options_.duration_s > 0 &&
      static_cast<double>(now - start_ns_) >= options_.duration_s * 1e9) {
    stop_reason_ =
        absl::StrCat("--duration ", options_.duration_s, " s reached");
    return false;
  }
  if (!parts_.target_alive()) return false;
  if (parts_.rearm != nullptr) {
    // Every page-fault sample is a fault the target took: the re-arms'
    // cost to it (write_fault_rearm.h).
    absl::StatusOr<bool> r =
        parts_.rearm->MaybeRearm(now, parts_.engine->counters().samples);
    if (!r.ok()) {
      if (absl::IsNotFound(r.status())) return false;  // the process exited
      error_ = r.status();
      stop_reason_ = "--write-faults failed";
      return false;
    }
  }
  if (!options_.dry_run && parts_.migrator->state() == MigratorState::kFailed) {
    error_ = parts_.migrator->status();
    stop_reason_ = "the migrator failed";
    return false;
  }
  return true;
}

void AttachLoop::Round(uint64_t now_ns) {
  if (parts_.before_round) parts_.before_round();
  PolicyEngine& engine = *parts_.engine;
  {
    // The cost of a move for the engine's benefit test: the migrator's
    // thread CPU time over the pages it moved.
    const MigratorStats m = parts_.migrator->Snapshot();
    engine.ObserveMigration(
        m.moved_pages(),
        static_cast<uint64_t>(absl::ToInt64Nanoseconds(m.cpu_time)));
  }
  const absl::Duration cpu_before = CpuTime();
  const RoundReport report = engine.RunRound(*parts_.view, now_ns);
  // The round's CPU, for the budget of the rounds the engine may add
  // (EngineOptions::room_round_cpu_share).
  engine.ObserveRoundCost(static_cast<uint64_t>(absl::ToInt64Nanoseconds(
      std::max(absl::ZeroDuration(), CpuTime() - cpu_before))));
  // The round's wall time (its line's took=): the loop reads no samples
  // meanwhile, and the migrator gets the round's moves only at its end.
  const uint64_t took_ns = NowNs() - now_ns;
  // Stopped mid-round (the view interrupted it, or the flag came while it
  // ran): nothing of it is carried out; the loop ends at its next step.
  // Relaxed: the flag carries no data.
  if (report.interrupted || parts_.stop->load(std::memory_order_relaxed)) {
    return;
  }
  if (parts_.rounds != nullptr && !rounds_failed_) {
    round_line_.clear();
    AppendRoundLine(report, start_ns_, &round_line_);
    if (absl::Status s = parts_.rounds->Append(round_line_); !s.ok()) {
      rounds_failed_ = true;
      *parts_.log << options_.log_prefix << "warning: rounds: " << s.message()
                  << "; no further round is recorded\n";
    }
  }
  const PlacementDecision& d = report.decision;
  const EngineCounters& c = engine.counters();
  stats_.rounds = report.round;
  stats_.early_rounds = c.early_rounds;
  stats_.room_rounds = c.room_rounds;
  stats_.short_window_held_rounds = c.short_window_held_rounds;
  stats_.silences_doubted_rounds = c.silences_doubted_rounds;
  stats_.odds_pair_rounds = c.odds_pair_rounds;
  stats_.arrival_promotions = c.arrival_promotions;
  stats_.refault_protections = c.refault_protections;
  stats_.reclaim_promotions = c.reclaim_promotions;
  stats_.reclaim_returns = c.reclaim_returns;
  // Set by full rounds with reclaim making room (not a room round, nor
  // one the view interrupted): the last such round's.
  if (report.repeat_window_s > 0)
    stats_.repeat_window_s = report.repeat_window_s;
  stats_.reclaim_makes_room = engine.reclaim_makes_room();
  stats_.engine_bytes = engine.MemoryBytes();
  stats_.untracked_victims = c.untracked_victims;
  stats_.horizon_s = report.horizon_s;
  stats_.migration_cost_ns = report.migration_cost_ns;
  stats_.migration_margin_per_sec = report.migration_margin_per_sec;
  stats_.bandwidth_bound_rounds = c.bandwidth_bound_rounds;
  stats_.planned_sheds = c.planned_sheds;
  stats_.hot_pages = report.hot_pages;
  stats_.hot_pages_by_node = report.hot_pages_by_node;
  stats_.active_pages = report.active_pages;
  stats_.samples = c.samples;
  stats_.planned_promotions = c.planned_promotions;
  stats_.planned_demotions = c.planned_demotions;
  stats_.planned_locality += d.locality_bytes / 4096;
  stats_.promoted_entries = c.promoted_entries;
  stats_.yield_hits = c.yield_hits;
  stats_.demoted_entries = c.demoted_entries;
  stats_.regret_hits = c.regret_hits;
  // Demotions first, then promotions (migrator/move_requests.h says why).
  // Found hot at the round's time, on the migrator's clock.
  requests_.clear();
  AppendMoveRequests(d, absl::FromUnixNanos(static_cast<int64_t>(now_ns)),
                     &requests_);
  if (!options_.dry_run && !requests_.empty()) {
    parts_.migrator->Submit(requests_);
  }
  stats_.migrator = parts_.migrator->Snapshot();
  stats_.perf = parts_.source->PerfStats();
  PublishStats(/*final=*/false);
  std::vector<std::string> by_node;
  for (const auto& [node, n] : stats_.hot_pages_by_node) {
    by_node.push_back(absl::StrCat(node, ":", n));
  }
  // The fast tier full of pages the source cannot see (file comment).
  if (options_.source_name == "hintfault" && !blind_full_said_ &&
      !parts_.engine->reclaim_makes_room()) {
    const uint64_t no_room = d.promote_skipped[SkipReason::kNoRoom];
    blind_full_rounds_ =
        d.promoted_pages == 0 && no_room > 0 ? blind_full_rounds_ + 1 : 0;
    if (blind_full_rounds_ >= 3) {
      blind_full_said_ = true;
      *parts_.log << options_.log_prefix
                  << absl::StrFormat(
                         "%d hot pages wait on slower tiers for room on the "
                         "fast tier, which the hint-fault source cannot see "
                         "(the kernel's tiering mode scans no page there): "
                         "room comes only from demoting pages there that "
                         "hotpage never sampled (from 10 s after the start; "
                         "one that faults back is kept). The kernel's reclaim "
                         "can make it instead: with `echo true > "
                         "/sys/kernel/mm/numa/demotion_enabled` before "
                         "attaching, hotpage promotes pages that fault in two "
                         "passes and the kernel's LRU picks what leaves. A "
                         "PMU source (pebs, ibs) or --source damon sees that "
                         "tier.\n",
                         no_room);
    }
  }
  // Why hot pages were not promoted this round (nonzero reasons only).
  std::string skipped = SkipCountsString(d.promote_skipped);
  if (!skipped.empty()) skipped = absl::StrCat(" promote_skipped=", skipped);
  const std::string line = absl::StrFormat(
      "t=%.1fs round=%d samples=%d hot_pages=%d hot_by_node=%s "
      "planned_promote=%d planned_demote=%d promoted=%d demoted=%d "
      "failed=%d%s%s took=%.0fms",
      static_cast<double>(now_ns - start_ns_) / 1e9, stats_.rounds,
      stats_.samples, stats_.hot_pages,
      by_node.empty() ? "-" : absl::StrJoin(by_node, ","), d.promoted_pages,
      d.demoted_pages, stats_.migrator.promoted_pages,
      stats_.migrator.demoted_pages, FailedTotal(stats_.migrator),
      PerfStatusFields(stats_), skipped, static_cast<double>(took_ns) / 1e6);
  if (options_.live_line) {
    *parts_.log << "\r" << line << "   " << std::flush;
  } else if (options_.round_lines) {
    *parts_.log << options_.log_prefix << line << "\n";
  }
}

bool AttachLoop::MovesQueued() const {
  for (const NodeQueued& q : parts_.view->QueuedMoves()) {
    if (q.in_bytes > 0 || q.out_bytes > 0) return true;
  }
  return false;
}

void AttachLoop::Arrivals(uint64_t now_ns) {
  const PlacementDecision d =
      parts_.engine->PlaceArrivals(*parts_.view, now_ns);
  if (d.moves.empty() || options_.dry_run) return;
  requests_.clear();
  AppendMoveRequests(d, absl::FromUnixNanos(static_cast<int64_t>(now_ns)),
                     &requests_);
  parts_.migrator->Submit(requests_);
}

void AttachLoop::Teardown() {
  std::ostream& log = *parts_.log;
  if (options_.live_line) log << "\n";
  // Tear down in every case: the source first (DAMON context), then the
  // migrator (pending moves are abandoned and counted).
  parts_.source->Stop();
  if (NumaBalancingController* hint = parts_.hintfault; hint != nullptr) {
    if (absl::Status s = hint->Stop(); !s.ok()) {
      log << options_.log_prefix << s.message() << "\n";
      if (error_.ok()) error_ = s;
    } else {
      log << options_.log_prefix << hint->restored() << "\n";
    }
  }
  Migrator& migrator = *parts_.migrator;
  if (!options_.dry_run && !parts_.migrator_external) {
    migrator.WaitUntilIdle(absl::Seconds(2));
    migrator.Stop();
  }
  stats_.migrator = migrator.Snapshot();
  stats_.samples = parts_.engine->counters().samples;
  stats_.arrival_promotions = parts_.engine->counters().arrival_promotions;
  stats_.refault_protections = parts_.engine->counters().refault_protections;
  stats_.reclaim_promotions = parts_.engine->counters().reclaim_promotions;
  stats_.reclaim_returns = parts_.engine->counters().reclaim_returns;
  stats_.perf = parts_.source->PerfStats();
  PublishStats(/*final=*/true);
  const double elapsed = static_cast<double>(NowNs() - start_ns_) / 1e9;
  log << options_.log_prefix
      << absl::StrFormat(
             "%s after %.1f s; promoted %d pages (planned by "
             "--locality: %d), demoted %d, failed %d%s, ping-pong %d; %d "
             "samples, %d "
             "rounds; hotpage CPU %.2f s (%.1f%% of one core)\n",
             stop_reason_, elapsed, stats_.migrator.promoted_pages,
             stats_.planned_locality, stats_.migrator.demoted_pages,
             FailedTotal(stats_.migrator), FailedByErrno(stats_.migrator),
             stats_.migrator.pingpong_pages, stats_.samples, stats_.rounds,
             stats_.cpu_seconds,
             elapsed > 0 ? 100.0 * stats_.cpu_seconds / elapsed : 0.0);
  {
    uint64_t total = 0;
    std::string parts;
    for (const PolicyEngine::MemoryPart& p : parts_.engine->MemoryBreakdown()) {
      total += p.bytes;
      absl::StrAppendFormat(&parts, " %s=%.1f", p.name, p.bytes / 1048576.0);
    }
    log << options_.log_prefix
        << absl::StrFormat("engine memory %.1f MiB:%s\n", total / 1048576.0,
                           parts);
  }
  if (const NumaBalancingController* hint = parts_.hintfault; hint != nullptr) {
    const HintFaultStats h = hint->stats();
    log << options_.log_prefix
        << absl::StrFormat(
               "hint faults %d (%.0f/s, system-wide), kernel scan "
               "passes %s, longest gap %.1f s, pages the kernel migrated "
               "itself %d\n",
               h.delta.numa_hint_faults, h.hint_faults_per_sec,
               h.scan_seq_known ? absl::StrCat(h.scan_passes)
                                : std::string("unknown"),
               h.longest_scan_gap_s, h.kernel_migrated_pages);
  }
  if (first_touch_ != nullptr) {
    log << options_.log_prefix
        << absl::StrFormat(
               "first touches: %d fault samples dropped while the resident "
               "set grew by %d pages (4 KiB)\n",
               first_touch_->dropped(), first_touch_->growth_pages());
  }
  if (const WriteFaultRearm* rearm = parts_.rearm; rearm != nullptr) {
    const WriteFaultRearmStats& r = rearm->stats();
    log << options_.log_prefix
        << absl::StrFormat(
               "write faults re-armed %d times (every %.0f ms at the "
               "end), clearing took %.1f ms in all, %.2f ms at most\n",
               r.rearms, static_cast<double>(r.interval_ns) / 1e6,
               static_cast<double>(r.clear_ns_total) / 1e6,
               static_cast<double>(r.clear_ns_max) / 1e6);
  }
}

}  // namespace hotpage
