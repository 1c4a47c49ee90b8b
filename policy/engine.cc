#include "policy/engine.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <optional>
#include <utility>

#include "policy/fast_tier_cooling.h"
#include "tools/base/status_macros.h"

namespace hotpage {

namespace {

// The table's options (EngineOptions::max_table_entries says how).
HotnessTableOptions TableOptionsFor(uint64_t fast_bytes,
                                    const EngineOptions& options) {
  HotnessTableOptions topt = HotnessTableOptions::ForFastTier(fast_bytes);
  const size_t by_footprint =
      options.footprint_pages + options.footprint_pages / 4;
  if (options.table_by_footprint && options.footprint_pages > 0) {
    topt.capacity = std::min<size_t>(
        topt.capacity,
        std::max(by_footprint, EngineOptions::kMinFootprintTableEntries));
  } else {
    topt.capacity = std::max<size_t>(topt.capacity, by_footprint);
  }
  topt.capacity = std::min<size_t>(topt.capacity, options.max_table_entries);
  return topt;
}

template <typename T>
uint64_t VectorBytes(const std::vector<T>& v) {
  return v.capacity() * sizeof(T);
}
template <typename M>
uint64_t MapBytes(const M& m) {
  // A Swiss table: one slot and one control byte per capacity, plus a
  // group's worth of cloned control bytes.
  return m.capacity() == 0
             ? 0
             : m.capacity() * (sizeof(typename M::value_type) + 1) + 16;
}

}  // namespace

std::vector<PolicyEngine::MemoryPart> PolicyEngine::MemoryBreakdown() const {
  std::vector<MemoryPart> parts = {
      {"table", table_->memory_bytes()},
      {"entries", VectorBytes(entries_)},
      {"keys", MapBytes(keys_)},
      {"round_samples",
       VectorBytes(round_samples_) + VectorBytes(long_counts_now_)},
      {"lists", VectorBytes(candidates_) + VectorBytes(victims_) +
                    VectorBytes(hot_on_fast_) + VectorBytes(shed_candidates_)},
      {"since_change", MapBytes(since_change_)},
      {"promoted", MapBytes(moved_by_rounds_) + MapBytes(promoted_at_)},
      {"demotions", MapBytes(demoted_at_) + MapBytes(protected_until_) +
                        MapBytes(reclaim_held_until_) +
                        MapBytes(demoted_keys_)},
      {"locality", MapBytes(shared_seen_) + MapBytes(private_evidence_) +
                       VectorBytes(private_samples_)},
      {"arrivals", MapBytes(arrived_) + VectorBytes(arrival_pages_) +
                       VectorBytes(arrival_nodes_) +
                       VectorBytes(arrival_accessors_) +
                       VectorBytes(arrival_heat_) +
                       VectorBytes(unknown_demand_) + VectorBytes(repeats_)},
      {"room", VectorBytes(room_victims_) + VectorBytes(room_keys_) +
                   VectorBytes(room_pages_new_) +
                   VectorBytes(room_counts_new_) +
                   VectorBytes(room_accessors_new_) +
                   VectorBytes(room_nodes_new_) + VectorBytes(room_pages_) +
                   VectorBytes(room_seen_bits_) + VectorBytes(moved_scratch_)},
      {"scratch", VectorBytes(batch_) + VectorBytes(sweep_pages_) +
                      VectorBytes(sweep_status_) + VectorBytes(query_pages_) +
                      VectorBytes(query_status_) + VectorBytes(swap_pairs_) +
                      MapBytes(huge_chunks_) + VectorBytes(decayed_histogram_) +
                      VectorBytes(prior_histogram_) +
                      VectorBytes(long_histogram_)},
  };
  std::sort(parts.begin(), parts.end(),
            [](const MemoryPart& a, const MemoryPart& b) {
              return a.bytes > b.bytes;
            });
  return parts;
}

uint64_t PolicyEngine::MemoryBytes() const {
  uint64_t total = 0;
  for (const MemoryPart& p : MemoryBreakdown()) total += p.bytes;
  return total;
}

absl::StatusOr<std::unique_ptr<PolicyEngine>> PolicyEngine::Create(
    const Topology& topology, const PlacementConfig& config,
    const EngineOptions& options) {
  if (options.interval_ns == 0) {
    return absl::InvalidArgumentError("the round interval must be positive");
  }
  if (options.sample_weight == 0) {
    return absl::InvalidArgumentError("sample_weight must be positive");
  }
  if (options.epoch_rounds == 0) {
    return absl::InvalidArgumentError("epoch_rounds must be positive");
  }
  if (!(options.shift_z >= 0 && options.shift_z < 10)) {
    return absl::InvalidArgumentError("shift_z must be in [0, 10)");
  }
  if (!(options.z > 0 && options.z < 10)) {
    return absl::InvalidArgumentError(
        "the rate intervals' z must be in (0, 10)");
  }
  HOTPAGE_RETURN_IF_ERROR(ValidatePlacementConfig(config, topology));
  HOTPAGE_ASSIGN_OR_RETURN(std::unique_ptr<TargetStrategy> strategy,
                           MakeTargetStrategy(config, topology));
  uint64_t fast_bytes = 0;
  for (int n : topology.FastNodes()) {
    if (const NodeInfo* info = topology.FindNode(n))
      fast_bytes += info->memory_bytes;
  }
  HOTPAGE_ASSIGN_OR_RETURN(
      std::unique_ptr<HotnessTable> table,
      HotnessTable::Create(TableOptionsFor(fast_bytes, options)));
  return std::unique_ptr<PolicyEngine>(
      new PolicyEngine(topology, config, options, std::move(strategy),
                       std::move(table), fast_bytes));
}

namespace {

// The shift detector's long window: the fast share's baseline is an
// exponential average over 10 s of rounds (ARMS' long window), and the
// change window closes at the latest this long after its change point.
constexpr uint64_t kShareBaselineNs = 10000000000;

// The novelty test's floor on its baseline (engine.h, "A shift to pages
// never sampled"): a run whose every sample falls on known pages would
// have a baseline of 0 and never be testable (n p0 >= 5); at 1/64 a window
// is testable from 320 samples. The bundled traces score the same with
// 1/16 and 1/256.
constexpr double kMinNovelShare = 1.0 / 64;
// Colloid's delta (SOSP'24): the dead band of the bandwidth rule (engine.h).
constexpr double kColloidDelta = 0.05;
// The room rule's count of distinct new pages (UseRoom): a bit map of this
// many bits (128 KiB), allocated at the first round that arms a room.
constexpr uint64_t kRoomSketchBits = uint64_t{1} << 20;

// A fall of the fast tier's share (engine.h, "Reaction to change"): the
// window's `fast` of `known` samples against a reference share p0 that is
// itself an estimate, of variance v0 p0 (1 - p0) (v0: the sum of w_i^2 / n_i
// over the windows it weighs by w_i; 1 / n for n samples). nullopt: not
// testable. Where the normal approximation of the binomial holds at p0
// (n min(p0, 1 - p0) >= 5) it is the score test against p0 as before. A
// reference at or near 1 or 0 (a first window whose every known sample was
// on the fast tier) makes that test impossible however far the share falls,
// so there the two samples are compared (the two-proportion test): the share
// pooled over the window and the reference's 1 / v0 samples, the variance of
// the difference p (1 - p) (1 / n + v0), testable when n min(p, 1 - p) >= 5.
std::optional<bool> ShareFell(double p0, double v0, uint64_t fast,
                              uint64_t known, double z) {
  if (z <= 0 || p0 < 0 || known == 0) return std::nullopt;
  const double n = static_cast<double>(known);
  const double k = static_cast<double>(fast);
  const double drop = p0 * n - k;
  if (n * std::min(p0, 1 - p0) >= 5)
    return drop > z * std::sqrt(n * p0 * (1 - p0));
  if (!(v0 > 0)) return std::nullopt;
  const double p = (p0 / v0 + k) / (1 / v0 + n);
  if (n * std::min(p, 1 - p) < 5) return std::nullopt;
  return drop > z * std::sqrt(n * p * (1 - p) * (1 + n * v0));
}

// Samples of pages of unknown node held for the round (AttributeUnknownDemand):
// 64K x 24 B, allocated once.
constexpr size_t kMaxUnknownDemand = size_t{1} << 16;

// The idle read-latency gap between the fastest tier and the next (mean of
// each tier's nodes with memory), from the loaded-latency model (HMAT, else
// its per-tier defaults), so that the benefit test and the bandwidth rule
// price latency alike; 0 if there is one tier.
double LatencyGapNs(const Topology& t, const LoadedLatencyModel& model) {
  if (t.tiers.size() < 2) return 0;
  auto mean = [&](const MemoryTier& tier) {
    double sum = 0;
    int count = 0;
    for (int id : tier.nodes) {
      const NodeInfo* n = t.FindNode(id);
      if (n == nullptr || n->memory_bytes == 0) continue;
      sum += model.IdleLatencyNs(id);
      ++count;
    }
    return count == 0 ? 0.0 : sum / count;
  };
  return std::max(0.0, mean(t.tiers[1]) - mean(t.tiers[0]));
}

ScanOptions ScanOptionsFor(const PlacementConfig& config,
                           const EngineOptions& options) {
  ScanOptions s;
  size_t k = options.top_k;
  if (k == 0) {
    k = static_cast<size_t>(config.max_move_bytes / 4096);
    k = std::clamp<size_t>(k, 256, 65536);
  }
  s.top_k = k;
  s.z = options.z;
  s.hottest_on_fast = config.locality;
  return s;
}

}  // namespace

PolicyEngine::PolicyEngine(const Topology& topology,
                           const PlacementConfig& config,
                           const EngineOptions& options,
                           std::unique_ptr<TargetStrategy> strategy,
                           std::unique_ptr<HotnessTable> table,
                           uint64_t fast_bytes)
    : topology_(topology),
      config_(config),
      options_(options),
      strategy_(std::move(strategy)),
      table_(std::move(table)),
      scanner_(std::in_place, table_.get(), ScanOptionsFor(config, options)),
      fast_bytes_(fast_bytes),
      fast_nodes_(topology.FastNodes()),
      node_of_cpu_(4096, -1),
      zero_count_hi_(PoissonInterval(0, ScanOptionsFor(config, options).z).hi),
      repeat_window_ns_(options.long_window_ns),
      repeat_bar_(std::exp(-1.0)) {
  for (int n : fast_nodes_) {
    if (n >= 0 && n < 4096) {
      if (static_cast<size_t>(n) >= is_fast_.size()) is_fast_.resize(n + 1);
      is_fast_[n] = true;
    }
  }
  for (const NodeInfo& n : topology_.nodes) {
    for (int c : n.cpus) {
      if (c >= 0 && c < static_cast<int>(node_of_cpu_.size())) {
        node_of_cpu_[c] = static_cast<int8_t>(n.id);
      }
    }
  }
  batch_.reserve(kIngestPieceSamples);
  latency_model_ = LoadedLatencyModel::FromTopology(topology_);
  latency_gap_ns_ = LatencyGapNs(topology_, latency_model_);
  int max_node = 0;
  for (const NodeInfo& n : topology_.nodes) max_node = std::max(max_node, n.id);
  window_accesses_.assign(std::min(max_node + 1, 4096), 0.0);
  if (topology_.tiers.size() >= 2) next_tier_nodes_ = topology_.tiers[1].nodes;
  unknown_demand_.reserve(kMaxUnknownDemand);
  if (ReclaimMakesRoom()) repeats_.reserve(kMaxUnknownDemand);
}

void PolicyEngine::ObserveMigration(uint64_t moved_pages, uint64_t spent_ns) {
  if (moved_pages < observed_pages_) return;
  observed_pages_ = moved_pages;
  observed_ns_ = std::max(observed_ns_, spent_ns);
}

absl::Status PolicyEngine::Reconfigure(const PlacementConfig& config) {
  const ScanOptions now = ScanOptionsFor(config_, options_);
  const ScanOptions next = ScanOptionsFor(config, options_);
  if (now.top_k != next.top_k || now.hottest_on_fast != next.hottest_on_fast) {
    return absl::FailedPreconditionError(
        "the change alters the scanner (locality or the move budget): the "
        "engine must be recreated");
  }
  HOTPAGE_RETURN_IF_ERROR(ValidatePlacementConfig(config, topology_));
  HOTPAGE_ASSIGN_OR_RETURN(std::unique_ptr<TargetStrategy> strategy,
                           MakeTargetStrategy(config, topology_));
  config_ = config;
  strategy_ = std::move(strategy);
  return absl::OkStatus();
}

absl::StatusOr<bool> PolicyEngine::GrowTable(uint64_t footprint_pages) {
  if (!options_.table_by_footprint || footprint_pages == 0) return false;
  EngineOptions o = options_;
  o.footprint_pages = footprint_pages;
  const HotnessTableOptions topt = TableOptionsFor(fast_bytes_, o);
  // Create rounds up to a power of two: grow only to a larger table.
  if (std::bit_ceil(topt.capacity) <= table_->capacity()) return false;
  HOTPAGE_ASSIGN_OR_RETURN(std::unique_ptr<HotnessTable> grown,
                           HotnessTable::Create(topt));
  grown->CopyFrom(*table_);
  scanner_.reset();  // bound to the old table
  table_ = std::move(grown);
  scanner_.emplace(table_.get(), ScanOptionsFor(config_, options_));
  options_.footprint_pages = footprint_pages;
  return true;
}

void PolicyEngine::Start(uint64_t now_ns) {
  start_ns_ = now_ns;
  next_round_ns_ = next_scheduled_ns_ = now_ns + options_.interval_ns;
  next_epoch_ns_ = now_ns + options_.epoch_rounds * options_.interval_ns;
}

void PolicyEngine::RememberShared(uint64_t now_ns) {
  for (const EntryView& v : entries_) {
    if (v.sharing == Sharing::kShared) shared_seen_[v.key.Pack()] = now_ns;
  }
  // A page that has shown no sharing for a long window is judged by its
  // counts again (its accessors may have changed for good).
  const uint64_t keep =
      options_.long_window_ns > 0 ? options_.long_window_ns : kShareBaselineNs;
  absl::erase_if(shared_seen_, [&](const auto& kv) {
    return now_ns > kv.second && now_ns - kv.second > keep;
  });
}

void PolicyEngine::WeighPrivateEvidence() {
  // engine.h, "Evidence that a page is private". One foreign sample's
  // weight in home samples: log(1 / (2 p1)) / log(2 (1 - p1)), p1 = 1/256.
  constexpr double kP1 = 1.0 / 256;
  static const float kForeignCost =
      static_cast<float>(std::log(1 / (2 * kP1)) / std::log(2 * (1 - kP1)));
  const auto m = static_cast<float>(config_.locality_min_samples);
  const auto w = static_cast<float>(options_.sample_weight);
  const uint32_t lag = table_->epoch() - evidence_epoch_;
  evidence_epoch_ = table_->epoch();
  const uint32_t walk = ++evidence_walk_;
  private_samples_.assign(entries_.size(), 0);
  for (size_t j = 0; j < entries_.size(); ++j) {
    const EntryView& v = entries_[j];
    // Rule L reads the evidence of fast-tier pages only (hot_on_fast): a
    // page starts anew when it arrives there.
    if (v.node < 0 || tiers_[j] != Tier::kFast) continue;
    auto [it, inserted] = private_evidence_.try_emplace(v.key.Pack());
    PrivateEvidence& pe = it->second;
    const uint32_t count_before = inserted || lag >= 32 ? 0 : pe.count >> lag;
    const uint32_t foreign_before =
        inserted || lag >= 32 ? 0 : uint32_t{pe.foreign} >> lag;
    if (v.sharing == Sharing::kShared ||
        (!inserted && pe.home != static_cast<uint32_t>(v.node))) {
      pe.score = -m;
    } else if (v.count >= count_before && v.foreign >= foreign_before) {
      const float foreign = static_cast<float>(v.foreign - foreign_before) / w;
      const float home = std::max(
          0.0f, static_cast<float>(v.count - count_before) / w - foreign);
      pe.score = std::clamp(pe.score + home - kForeignCost * foreign, -m, m);
    }
    pe.count = v.count;
    pe.foreign = static_cast<uint16_t>(v.foreign);
    pe.home = static_cast<uint8_t>(v.node);
    pe.walk = walk;
    if (pe.score > 0) private_samples_[j] = static_cast<uint32_t>(pe.score);
  }
  absl::erase_if(private_evidence_,
                 [walk](const auto& kv) { return kv.second.walk != walk; });
}

bool PolicyEngine::ShareTestable() const {
  return ShareFell(share_baseline_, share_baseline_var_, window_fast_,
                   window_known_, options_.shift_z)
      .has_value();
}

bool PolicyEngine::ShareDropped() const {
  return ShareFell(share_baseline_, share_baseline_var_, window_fast_,
                   window_known_, options_.shift_z)
      .value_or(false);
}

bool PolicyEngine::NoveltyRose() const {
  // Only a source that sees the fast tier's pages has a share to lose (a
  // hint-fault source sees slow pages only: its bursts of new pages are
  // the burst rule's).
  if (options_.shift_z <= 0 || novel_baseline_ < 0 || !(share_baseline_ > 0))
    return false;
  const double n = static_cast<double>(window_novel_ + window_known_);
  const double p0 = std::max(novel_baseline_, kMinNovelShare);
  if (n * std::min(p0, 1 - p0) < 5) return false;
  const double rise = static_cast<double>(window_novel_) - p0 * n;
  return rise > options_.shift_z * std::sqrt(n * p0 * (1 - p0));
}

bool PolicyEngine::NovelRateRose(uint64_t now_ns) const {
  // A source that sees the fast tier has the novelty test (NoveltyRose):
  // its new pages are a shift, which opens a change window.
  if (options_.shift_z <= 0 || share_baseline_ > 0 || now_ns <= last_round_ns_)
    return false;
  // The last window's rate of all samples, over the time since the last
  // round: what new pages alone can reach only when the rate rose.
  const double expected = last_window_per_interval_ *
                          static_cast<double>(now_ns - last_round_ns_) /
                          static_cast<double>(options_.interval_ns);
  const double n = static_cast<double>(window_novel_);
  // The Poisson count's normal approximation needs a few events.
  if (n < kMinBurstSamples) return false;
  return n - expected > options_.shift_z * std::sqrt(std::max(expected, 1.0));
}

void PolicyEngine::CheckShift(uint64_t now_ns) {
  if (options_.shift_z <= 0) return;
  // Counts seen before the earliest time a round may come (the first
  // samples, a burst of new pages) bring the round to that time, not to the
  // next sample after it: they only grow, so they still hold then, and a
  // burst that is over by then (a scan pass's hint faults within 0.1 s of
  // the last round) would otherwise wait for the schedule. The share test
  // is a test: it can revert as samples come, so it is judged on a sample
  // at or after that time.
  if (!sampled_round_) {
    // The start as a change point (file comment of engine.h): the first
    // samples after the start, or after the last round if none had any.
    const uint64_t first = (last_round_ns_ == 0 ? start_ns_ : last_round_ns_) +
                           options_.interval_ns / 4;
    const uint64_t at = std::max(now_ns, first);
    if (next_round_ns_ > at) {
      next_round_ns_ = at;
      early_pending_ = true;
    }
    return;
  }
  const uint64_t at =
      std::max(now_ns, last_round_ns_ + options_.interval_ns / 4);
  if (next_round_ns_ <= at) return;
  // Evidence outpacing rounds (engine.h): at least as many samples on
  // pages the last round did not place as the last round's window had
  // per interval (its samples over its length, times the interval). At
  // the last window's rate that takes a whole interval (at most every
  // sample is new), so it fires only when new evidence comes at 4x that
  // rate or more (at most one round per interval / 4): the kernel's scan
  // pass making every accessed slow page hint-fault at once, a new hot
  // set the last round had not seen. A rate, not a count: an early
  // round's short window would otherwise lower the bar for the next.
  if (last_window_per_interval_ > 0 &&
      static_cast<double>(window_novel_) >= last_window_per_interval_) {
    next_round_ns_ = at;
    burst_pending_ = true;
    return;
  }
  if (now_ns < at) return;
  if (NovelRateRose(now_ns)) {
    next_round_ns_ = now_ns;
    burst_pending_ = true;
    return;
  }
  if (ShareDropped() || NoveltyRose()) {
    next_round_ns_ = now_ns;
    early_pending_ = true;
  }
}

void PolicyEngine::UpdateChangeWindow(bool detected, bool dropped,
                                      uint64_t prev_round_ns, uint64_t now_ns) {
  if (change_ns_ != 0 &&
      (!dropped || now_ns - change_ns_ >= kShareBaselineNs)) {
    change_ns_ = 0;
    since_change_.clear();
  }
  // A second change inside the window (file comment): a detection whose
  // window's share fell below the share since the change point (the same
  // test, that share as the reference) moves the change point here.
  if (change_ns_ != 0 && detected && change_known_ > 0 &&
      ShareFell(static_cast<double>(change_fast_) /
                    static_cast<double>(change_known_),
                1.0 / static_cast<double>(change_known_), window_fast_,
                window_known_, options_.shift_z)
          .value_or(false)) {
    change_ns_ = 0;
    since_change_.clear();
  }
  // The change point: the start of the window in which the drop showed.
  if (change_ns_ == 0 && detected && prev_round_ns != 0 &&
      now_ns > prev_round_ns) {
    change_ns_ = prev_round_ns;
    since_change_.clear();  // filled from this round's samples on
    change_fast_ = change_known_ = 0;
    // On trial until CountRound has seen whether the fast tier cooled
    // (engine.h, "A change is confirmed"); a drop within the baseline's
    // time of a confirmed change point is that change's.
    const bool within_confirmed =
        confirmed_change_ns_ != 0 &&
        now_ns - confirmed_change_ns_ < kShareBaselineNs;
    change_on_trial_ =
        options_.confirm_changes && !rates_bound_accesses_ && !within_confirmed;
    if (!change_on_trial_) confirmed_change_ns_ = change_ns_;
  }
  if (change_ns_ != 0) {
    change_fast_ += window_fast_;
    change_known_ += window_known_;
  }
}

uint32_t PolicyEngine::CountSinceChange(uint64_t key) const {
  auto it = since_change_.find(key);
  return it == since_change_.end() ? 0 : it->second;
}

uint32_t PolicyEngine::RoundSamples(uint64_t key) const {
  auto it = keys_.find(key);
  return it == keys_.end() || !it->second.has_counts() ||
                 it->second.round != counted_round_
             ? 0
             : it->second.samples;
}

double PolicyEngine::EpochDecay(uint64_t last_ns, uint64_t now_ns) const {
  const double tau_s =
      static_cast<double>(options_.epoch_rounds * options_.interval_ns) / 1e9;
  return last_ns != 0 && now_ns > last_ns && tau_s > 0
             ? std::exp(-static_cast<double>(now_ns - last_ns) / 1e9 / tau_s)
             : 1.0;
}

bool PolicyEngine::WeighSwapPayoff(uint64_t now_ns, RoundReport& report) {
  report.swap_payoff_promoted = payoff_promoted_;
  report.swap_payoff_displaced = payoff_displaced_;
  if (swap_pairs_.empty()) return false;
  double promoted = 0;
  double displaced = 0;
  for (const auto& [p, d] : swap_pairs_) {
    promoted += RoundSamples(p);
    displaced += RoundSamples(d);
  }
  swap_pairs_.clear();
  const double w = static_cast<double>(options_.sample_weight);
  const double f = EpochDecay(payoff_ns_, now_ns);
  payoff_promoted_ = payoff_promoted_ * f + promoted / w;
  payoff_displaced_ = payoff_displaced_ * f + displaced / w;
  payoff_ns_ = now_ns;
  report.swap_payoff_promoted = payoff_promoted_;
  report.swap_payoff_displaced = payoff_displaced_;
  // Poisson counts: the difference's variance is their sum.
  const bool held =
      payoff_displaced_ - payoff_promoted_ >
      options_.shift_z * std::sqrt(payoff_displaced_ + payoff_promoted_);
  report.short_window_held = held;
  if (held) ++counters_.short_window_held_rounds;
  return held;
}

void PolicyEngine::WeighSilences(uint64_t now_ns, RoundReport& report) {
  if (!silence_victims_.empty() && now_ns > silence_swaps_ns_) {
    const double w = static_cast<double>(options_.sample_weight);
    const double since_s =
        static_cast<double>(now_ns - silence_swaps_ns_) / 1e9;
    double observed = 0;
    double claimed = 0;
    for (const auto& [key, rate] : silence_victims_) {
      observed += RoundSamples(key) / w;
      claimed += rate * since_s;
    }
    // Decayed over the epoch, as the swaps' payoff.
    const double f = EpochDecay(silence_ns_, now_ns);
    silence_observed_ = silence_observed_ * f + observed;
    silence_claimed_ = silence_claimed_ * f + claimed;
    silence_ns_ = now_ns;
  }
  silence_victims_.clear();
  // Poisson counts: the difference's variance is their sum. At the bounds'
  // own z: their claim is what is tested.
  silences_doubted_ =
      options_.doubt_silences_that_do_not_hold && !rates_bound_accesses_ &&
      silence_observed_ - silence_claimed_ >
          options_.z * std::sqrt(silence_observed_ + silence_claimed_);
  report.silence_observed = silence_observed_;
  report.silence_claimed = silence_claimed_;
  report.silences_doubted = silences_doubted_;
  if (silences_doubted_) ++counters_.silences_doubted_rounds;
}

void PolicyEngine::RememberSwapPairs(const PlacementDecision& d,
                                     uint64_t now_ns) {
  // Silences that do not hold: the victims displaced by this round's swaps
  // that were chosen by their silence.
  // (silence_claims_ is this round's: the victims' loop refills it.)
  silence_victims_.clear();
  for (const PlannedMove& m : d.moves) {
    if (silence_claims_.empty()) break;
    if (m.reason != PlacementReason::kDemote ||
        m.trigger != PlacementTrigger::kSwap)
      continue;
    auto it = silence_claims_.find(m.vaddr);
    if (it != silence_claims_.end()) silence_victims_.push_back(it->second);
  }
  silence_swaps_ns_ = now_ns;
  swap_pairs_.clear();
  if (!options_.hold_short_window_when_swaps_lose || options_.shift_z <= 0 ||
      rates_bound_accesses_)
    return;
  auto key = [this](const PlannedMove& m) {
    return EntryKey(m.entry_vaddr(), std::max(m.page_bytes, m.entry_bytes))
        .Pack();
  };
  demoted_keys_.clear();
  for (const PlannedMove& m : d.moves) {
    if (m.reason == PlacementReason::kDemote &&
        m.trigger == PlacementTrigger::kSwap)
      demoted_keys_.emplace(m.vaddr, key(m));
  }
  for (const PlannedMove& m : d.moves) {
    if (m.reason != PlacementReason::kPromote ||
        m.trigger != PlacementTrigger::kSwap || m.paired_vaddr == 0)
      continue;
    auto it = demoted_keys_.find(m.paired_vaddr);
    if (it != demoted_keys_.end()) swap_pairs_.emplace_back(key(m), it->second);
  }
}

void PolicyEngine::Ingest(absl::Span<const Sample> samples) {
  if (samples.empty()) return;
  batch_.clear();
  // The table counts the converted samples in pieces of kIngestPieceSamples
  // (HotnessTable::IngestPart, with the whole batch's time bounds: exactly
  // as one batch), so batch_ stays at that size whatever the caller hands
  // over: nothing below reads the table.
  const uint64_t min_ns =
      std::min(samples.front().time_ns, samples.back().time_ns);
  const uint64_t max_ns =
      std::max(samples.front().time_ns, samples.back().time_ns);
  // A promoted page sampled again came back to the slow tier (the source
  // sees no other): with reclaim making room, the kernel demoted it.
  const bool watch_returns = ReclaimMakesRoom() && !promoted_at_.empty();
  const bool watch_repeats = ReclaimMakesRoom();
  for (const Sample& s : samples) {
    if (batch_.size() == kIngestPieceSamples) {
      table_->IngestPart(batch_, min_ns, max_ns);
      batch_.clear();
    }
    AccessSample a;
    a.vaddr = s.vaddr;
    a.time_ns = s.time_ns;
    a.address_space = s.pid;
    a.sample_period = static_cast<uint32_t>(
        std::min<uint64_t>(s.period ? s.period : 1, UINT32_MAX));
    a.cpu = static_cast<uint16_t>(s.cpu);
    const bool region = (s.flags & kSampleRegion) != 0;
    a.node = region || s.cpu >= node_of_cpu_.size() ? -1 : node_of_cpu_[s.cpu];
    const bool huge = !region && InHugeChunk(s.vaddr);
    a.kind = region || huge ? PageKind::k2M : PageKind::k4K;
    a.weight = options_.sample_weight;
    // Branch-free: two compares and an or per sample.
    rates_bound_accesses_ |= !SamplesCountAccesses(s.source);
    fault_samples_ |= s.source == SampleSource::kPageFault;
    if (!demoted_at_.empty()) NoteRefault(s.vaddr, s.time_ns);
    batch_.push_back(a);
    const uint64_t key = PageKey::PackSample(a);
    if (key == 0) continue;
    if (watch_returns && promoted_at_.contains(key)) NoteReturn(key, s.time_ns);
    // The entry's last move by a round, if followed: true promoted.
    const auto moved = moved_by_rounds_.empty() ? moved_by_rounds_.end()
                                                : moved_by_rounds_.find(key);
    // One placement lookup serves both tallies. The shift detector counts
    // pages of known node only; the bandwidth demand counts a page of
    // unknown node (new since the last round) at the round, on the node
    // the placement query then finds it on (AttributeUnknownDemand), or,
    // past that list's capacity, where first touch would put it: the
    // sampling CPU's node (the kernel's default local policy).
    int demand_node =
        a.node >= 0 ? a.node : (fast_nodes_.empty() ? -1 : fast_nodes_[0]);
    KeyState* placed = FindPlaced(key);
    if (moved != moved_by_rounds_.end()) {
      // Yield and regret (EngineCounters): where the page is now, if the
      // last query or planned move says; else where its move sent it.
      const bool on_fast =
          placed != nullptr ? IsFastNode(placed->node) : moved->second;
      counters_.yield_hits += moved->second && on_fast;
      counters_.regret_hits += !moved->second && !on_fast;
    }
    if (placed != nullptr) {
      demand_node = placed->node;
      ++window_known_;
      window_fast_ += IsFastNode(placed->node);
      // A second fault within the repeat window, placed as it arrives (the
      // kernel promotes in the fault): reclaim takes the pages one by one
      // over the pass rather than in a round's burst.
      if (watch_repeats && a.kind == PageKind::k4K &&
          repeats_.size() < repeats_.capacity()) {
        if (placed->has_counts() && placed->long_count >= repeat_bar_ &&
            !reclaim_held_until_.contains(key)) {
          repeats_.push_back(key);
        }
      }
    } else {
      ++window_novel_;  // not placed at the last round (CheckShift)
      if (!room_pages_.empty()) UseRoom(key, a.kind, a.node, a.time_ns);
      if (unknown_demand_.size() < unknown_demand_.capacity()) {
        // Counted at the round, where the placement query finds the page.
        unknown_demand_.push_back(
            {key, demand_node, static_cast<double>(a.sample_period)});
        continue;
      }
    }
    if (demand_node >= 0 &&
        static_cast<size_t>(demand_node) < window_accesses_.size()) {
      window_accesses_[demand_node] += static_cast<double>(a.sample_period);
    }
  }
  counters_.samples += samples.size();
  table_->IngestPart(batch_, min_ns, max_ns);
  CheckShift(samples.back().time_ns);
}

void PolicyEngine::RefreshPlacement(MemoryView& view) {
  // The map is updated in place, not rebuilt (absl's clear() frees a large
  // table): the keys found this round are stamped with it; after the
  // queries the rest are no longer placed (stamped with the round before,
  // which the next round's stamp is not) and erased if they have no
  // counts either.
  ++placement_round_;
  QueryPlacement(view);
  absl::erase_if(keys_, [this](auto& kv) {
    KeyState& k = kv.second;
    if (k.placed_round == placement_round_) return false;
    k.placed_round = placement_round_ - 1;
    return !k.has_counts();
  });
}

void PolicyEngine::QueryPlacement(MemoryView& view) {
  nodes_.assign(entries_.size(), -1);
  size_t budget = options_.max_placement_pages_per_round;
  const size_t batch =
      std::max<size_t>(1, options_.placement_query_batch_pages);
  // Keys [first, end) of entries_ go into one query call (EngineOptions:
  // batched, whole keys, within the round's page budget).
  size_t first = 0;
  while (first < entries_.size()) {
    if (view.Interrupted()) return;
    query_pages_.clear();
    size_t end = first;
    for (; end < entries_.size(); ++end) {
      const PageKey& k = entries_[end].key;
      const uint64_t n = BasePages(k.kind);
      if (budget < n) break;
      if (!query_pages_.empty() && query_pages_.size() + n > batch) break;
      budget -= n;
      for (uint64_t i = 0; i < n; ++i)
        query_pages_.push_back(k.vaddr() + i * 4096);
    }
    if (end == first) return;  // the budget is spent
    query_status_.assign(query_pages_.size(), -1);
    if (view.QueryNodes(query_pages_, absl::MakeSpan(query_status_)) >= 0) {
      size_t at = 0;
      for (size_t j = first; j < end; ++j) {
        const PageKey& k = entries_[j].key;
        const uint64_t n = BasePages(k.kind);
        const int* st = query_status_.data() + at;
        at += n;
        if (n == 1) {
          if (st[0] >= 0) {
            KeyState& placed = keys_[k.Pack()];
            placed.node = st[0];
            placed.placed_round = placement_round_;
            nodes_[j] = st[0];
          }
          continue;
        }
        // The node of the majority of the entry's pages; ties to the lower
        // id.
        std::map<int, int> votes;
        for (uint64_t i = 0; i < n; ++i) {
          if (st[i] >= 0) ++votes[st[i]];
        }
        if (votes.empty()) continue;
        auto best = std::max_element(
            votes.begin(), votes.end(),
            [](const auto& a, const auto& b) { return a.second < b.second; });
        KeyState& placed = keys_[k.Pack()];
        placed.node = best->first;
        placed.placed_round = placement_round_;
        nodes_[j] = best->first;
      }
    }
    first = end;
  }
}

PlacementDecision PolicyEngine::PlaceArrivals(MemoryView& view,
                                              uint64_t now_ns) {
  PlacementDecision none;
  if (!options_.slow_tier_samples) return none;
  if (bandwidth_bound_) {  // promotions held: the round decides
    arrivals_cursor_ = unknown_demand_.size();
    repeats_.clear();
    return none;
  }
  arrival_pages_.clear();
  arrival_accessors_.clear();
  for (; arrivals_cursor_ < unknown_demand_.size(); ++arrivals_cursor_) {
    const UnknownDemand& u = unknown_demand_[arrivals_cursor_];
    const PageKey k = PageKey::Unpack(u.key);
    // A 2 MiB entry (a THP chunk) and a page a round placed wait for the
    // round; a page is planned once between rounds.
    if (k.kind != PageKind::k4K || IsPlaced(u.key)) continue;
    if (!arrived_.insert(u.key).second) continue;
    arrival_pages_.push_back(k.vaddr());
    arrival_accessors_.push_back(u.fallback_node);
  }
  // Second faults (reclaim_makes_room): candidates a promotion left to
  // reclaim may take.
  const size_t first_repeat = arrival_pages_.size();
  for (const uint64_t key : repeats_) {
    if (!arrived_.insert(key).second) continue;
    arrival_pages_.push_back(PageKey::Unpack(key).vaddr());
    arrival_accessors_.push_back(-1);
  }
  repeats_.clear();
  if (arrival_pages_.empty()) return none;
  arrival_nodes_.assign(arrival_pages_.size(), -1);
  if (view.QueryNodes(arrival_pages_, absl::MakeSpan(arrival_nodes_)) < 0)
    return none;
  // One sample over the interval: the short window's evidence of a page
  // first sampled now (its lower bound is what the round would give it).
  const double interval_s = static_cast<double>(options_.interval_ns) / 1e9;
  const double period = static_cast<double>(options_.sample_weight);
  const PoissonBounds one = PoissonInterval(1, options_.z);
  arrival_heat_.clear();
  for (size_t i = 0; i < arrival_pages_.size(); ++i) {
    const int node = arrival_nodes_[i];
    if (node < 0 || IsFastNode(node)) continue;
    PageHeat h;
    h.vaddr = arrival_pages_[i];
    h.current_node = node;
    h.accessor_node = arrival_accessors_[i];
    h.rate = period / interval_s;
    h.rate_lo = one.lo * period / interval_s;
    h.rate_hi = one.hi * period / interval_s;
    h.repeated = i >= first_repeat;
    arrival_heat_.push_back(h);
  }
  if (arrival_heat_.empty()) return none;
  const ViewReading reading = ReadView(view);
  PlacementInput in = InputOver(reading, view);
  in.candidates = arrival_heat_;
  PlacementDecision d = DecideMoves(in, config_, *strategy_);
  ApplyPlannedMoves(d, now_ns);  // promotions only: no victim was offered
  counters_.arrival_promotions += d.promoted_bytes / 4096;
  if (!d.moves.empty()) arrivals_placed_ns_ = now_ns;
  return d;
}

bool PolicyEngine::RoundWaitsForArrivals(uint64_t now_ns,
                                         bool moves_queued) const {
  // A round due for longer than half an interval runs whatever comes.
  if (now_ns >= next_round_ns_ + options_.interval_ns / 2) return false;
  // The storm is still on if this very step placed pages.
  if (arrivals_placed_ns_ == now_ns) return true;
  // Or its moves are still being copied (placed since the last round).
  return moves_queued &&
         arrivals_placed_ns_ != std::numeric_limits<uint64_t>::max() &&
         arrivals_placed_ns_ >= last_round_ns_;
}

void PolicyEngine::RecordPromotion(uint64_t key, uint64_t now_ns) {
  // A change of direction or a new entry counts (the parts of a split
  // entry are one entry's moves).
  if (auto it = moved_by_rounds_.find(key); it != moved_by_rounds_.end()) {
    counters_.promoted_entries += !it->second;
    it->second = true;
  } else if (moved_by_rounds_.size() < options_.max_promoted_tracked) {
    moved_by_rounds_.emplace(key, true);
    ++counters_.promoted_entries;
  }
  if (promoted_at_.size() < options_.max_promoted_tracked)
    promoted_at_.emplace(key, now_ns);
}

RoundReport PolicyEngine::RunRound(MemoryView& view, uint64_t now_ns) {
  RoundReport report;
  report.round = ++counters_.rounds;
  report.time_ns = now_ns;
  // A round the room rule brought forward comes at its time, before the
  // sample after it that would have shown a shift: the shift test is taken
  // on its window here, and a shift makes it a full round.
  if (room_pending_ && now_ns >= last_round_ns_ + options_.interval_ns / 4 &&
      (ShareDropped() || NoveltyRose())) {
    early_pending_ = true;
  }
  report.room_round = room_pending_ && !early_pending_ && !burst_pending_ &&
                      !saturation_pending_ && now_ns < next_scheduled_ns_;
  if (report.room_round) ++counters_.room_rounds;
  room_pending_ = false;
  report.early = (early_pending_ || burst_pending_ || saturation_pending_ ||
                  report.room_round) &&
                 now_ns < next_scheduled_ns_;
  if (report.early) ++counters_.early_rounds;
  last_was_room_round_ = report.room_round;
  if (report.room_round) return RoomRound(view, std::move(report));
  const bool novelty = NoveltyRose();
  if (report.early && burst_pending_ && !early_pending_)
    ++counters_.burst_rounds;
  burst_pending_ = false;
  saturation_pending_ = false;
  {
    const uint64_t from = WindowStartNs(now_ns);
    const double len = now_ns > from
                           ? static_cast<double>(now_ns - from)
                           : static_cast<double>(options_.interval_ns);
    last_window_per_interval_ =
        static_cast<double>(counters_.samples - samples_at_last_round_) *
        static_cast<double>(options_.interval_ns) / len;
    samples_at_last_round_ = counters_.samples;
    // The novelty baseline (engine.h), as the share's, from the first
    // window that followed a placement: before it every page is new.
    if (sampled_round_ && window_novel_ + window_known_ > 0) {
      const double f = static_cast<double>(window_novel_) /
                       static_cast<double>(window_novel_ + window_known_);
      const double a =
          std::min(1.0, len / static_cast<double>(kShareBaselineNs));
      novel_baseline_ =
          novel_baseline_ < 0 ? f : novel_baseline_ + a * (f - novel_baseline_);
    }
    window_novel_ = 0;
  }
  // The change window (file comment), before the round's window is folded
  // into the baseline.
  const uint64_t change_before = change_ns_;
  // An untestable round (too few samples) keeps an open window open.
  UpdateChangeWindow(early_pending_,
                     ShareDropped() || novelty || !ShareTestable(),
                     last_round_ns_, now_ns);
  early_pending_ = false;
  // Next round: the first start + k * interval after now (an early round
  // keeps the schedule).
  if (now_ns >= start_ns_) {
    const uint64_t k = (now_ns - start_ns_) / options_.interval_ns + 1;
    next_round_ns_ = next_scheduled_ns_ = start_ns_ + k * options_.interval_ns;
  } else {
    next_round_ns_ = next_scheduled_ns_ = start_ns_ + options_.interval_ns;
  }
  // The shift detector's window ends here: fold it into the long-run share
  // (an exponential average over 10 s, ARMS' long window).
  report.fast_share_baseline = share_baseline_ < 0 ? 0 : share_baseline_;
  if (window_known_ > 0) {
    const double share =
        static_cast<double>(window_fast_) / static_cast<double>(window_known_);
    report.fast_share = share;
    const double dt = static_cast<double>(now_ns - WindowStartNs(now_ns));
    const double a = std::min(1.0, dt / static_cast<double>(kShareBaselineNs));
    // The baseline's variance (ShareFell): its weights are a on this
    // window and 1 - a on the last baseline's.
    const double n = static_cast<double>(window_known_);
    share_baseline_var_ =
        share_baseline_ < 0
            ? 1 / n
            : (1 - a) * (1 - a) * share_baseline_var_ + a * a / n;
    share_baseline_ = share_baseline_ < 0
                          ? share
                          : share_baseline_ + a * (share - share_baseline_);
  }
  const uint64_t round_known = window_known_;  // for a shed's share
  window_known_ = window_fast_ = 0;
  // Bandwidth: this round's demand is over the time since the last round.
  const uint64_t demand_dt = now_ns > WindowStartNs(now_ns)
                                 ? now_ns - WindowStartNs(now_ns)
                                 : options_.interval_ns;
  const uint64_t prev_round_ns = last_round_ns_;
  last_round_ns_ = now_ns;
  sampled_round_ = sampled_round_ || counters_.samples > 0;

  // The table is read once (every live entry, in slot order): the keys
  // are learnt, their placement is queried, and the scanner's pass sorts
  // the same entries into the lists (HotnessScanner::Pass).
  entries_.clear();
  table_->ReadSlots(0, table_->capacity(), /*normalize=*/true, &entries_);
  RefreshPlacement(view);
  if (view.Interrupted()) {
    // The owner is stopping: no decision from a placement half queried.
    report.interrupted = true;
    return report;
  }
  tiers_.resize(entries_.size());
  for (size_t i = 0; i < entries_.size(); ++i) {
    const int node = nodes_[i];
    tiers_[i] = node < 0           ? Tier::kUnknown
                : IsFastNode(node) ? Tier::kFast
                                   : Tier::kSlow;
  }
  scanner_->Pass(entries_, tiers_);
  const ScanResult& scan = scanner_->last_result();
  report.live_entries = scan.live_entries;
  if (config_.locality) {
    RememberShared(now_ns);
    WeighPrivateEvidence();
  }
  auto to_heat = [&](const PageEstimate& e) {
    PageHeat h;
    h.vaddr = e.entry.key.vaddr();
    h.page_bytes = static_cast<uint32_t>(PageBytes(e.entry.key.kind));
    h.current_node = nodes_[e.index];
    h.accessor_node = e.entry.node;
    h.shared = e.entry.sharing == Sharing::kShared ||
               (config_.locality && shared_seen_.contains(e.entry.key.Pack()));
    h.rate = e.rate.per_sec;
    h.rate_lo = e.rate.lo_per_sec;
    h.rate_hi = e.rate.hi_per_sec;
    // Rule L's evidence (engine.h, "Evidence that a page is private").
    h.samples = config_.locality ? private_samples_[e.index]
                                 : e.entry.count / options_.sample_weight;
    // A 2 MiB entry outside the THP-backed chunks is region evidence over
    // base pages: rule W may split it (a huge page moves whole).
    h.divisible =
        e.entry.key.kind == PageKind::k2M && !huge_chunks_.contains(h.vaddr);
    return h;
  };
  // Recency bound on the victims' rates: a page last sampled in the tick
  // starting at s had no sample in (s + tick, now], and zero samples in
  // that gap bound its current rate by U(0) * P / gap (the Poisson upper
  // limit of a zero count at the scan's z). The decayed count's bound
  // averages over up to t + L seconds, so a page that was hot and stopped
  // keeps a high one for epochs; the smaller of two valid upper bounds is
  // still one (at twice the tail: a union bound).
  const uint64_t table_now = table_->now_ns();
  const double period = scan.window.sample_period;
  // `zero_hi`: U(0), or for a victim VictimZeroHi() (engine.h, "Silences
  // that do not hold").
  auto silence_hi = [&](const PageEstimate& e, double zero_hi) {
    const uint64_t seen_end = e.entry.last_seen_ns + kLastSeenTickNs;
    if (table_now <= seen_end) return std::numeric_limits<double>::infinity();
    const double gap_s = static_cast<double>(table_now - seen_end) / 1e9;
    return zero_hi * period / gap_s;
  };
  auto recency_bound = [&](PageHeat& h, const PageEstimate& e, double zero_hi) {
    h.rate_hi = std::min(h.rate_hi, silence_hi(e, zero_hi));
    h.rate = std::min(h.rate, h.rate_hi);
  };
  // A candidate that stopped (engine.h): its silence since its last sample
  // bounds its rate below what its counts' lower bounds claim, so those
  // bounds (the decayed count's or the short window's, and the count
  // prior's) are capped by it, and its count takes no part in the pair test.
  auto stopped_bound = [&](PageHeat& h, const PageEstimate& e) {
    const double hi = silence_hi(e, zero_count_hi_);
    if (!(hi < h.rate_lo || hi < h.prior_lo)) return;
    h.rate_lo = std::min(h.rate_lo, hi);
    h.prior_lo = std::min(h.prior_lo, hi);
    h.rate = std::min(h.rate, hi);
    h.prior_count = -1;
    ++counters_.stopped_candidates;
  };
  // Every key's count now (the next round's short window), its samples
  // since the previous round into the long and change windows, both
  // priors and the hot pages: one walk over the round's entries.
  report.hot_threshold = scan.HotThreshold(fast_bytes_ / 4096);
  const uint64_t prior_samples = CountRound(now_ns, prev_round_ns, report);
  const bool hold_short_window = WeighSwapPayoff(now_ns, report);
  WeighSilences(now_ns, report);
  // A change point, first or second, ends the holds (file comment), once
  // CountRound has confirmed a first one.
  if (change_ns_ != 0 && change_ns_ != change_before) {
    report.released_holds = view.ReleaseHolds();
    counters_.released_holds += report.released_holds;
  }
  // Free memory, projected past the queued moves (file comment, "Queued
  // moves"): where first touch puts a new page (the bandwidth demand) and
  // the room placement plans against. Read after the ranges, as before (a
  // view may derive its free memory from them: tools/daemon/share_view.h).
  const std::vector<NumaMapsRange> ranges = view.Ranges();
  std::vector<NodeFree> free = view.Free();
  ProjectQueuedMoves(view.QueuedMoves(), &free);
  // Bandwidth (file comment), once the placement is fresh.
  AttributeUnknownDemand(free);
  const BandwidthPlan bandwidth = PlanBandwidth(demand_dt, report);
  report.bandwidth_bound = bandwidth_bound_;
  if (bandwidth_bound_) ++counters_.bandwidth_bound_rounds;
  // A saturated slower tier (file comment): the next round at interval / 4.
  if (bandwidth.next_saturated && !bandwidth_bound_) {
    const uint64_t at = now_ns + options_.interval_ns / 4;
    if (at < next_round_ns_) {
      next_round_ns_ = at;
      saturation_pending_ = true;
    }
  }
  std::vector<PageHeat>& shed_candidates = shed_candidates_;
  CollectShedCandidates(scan, bandwidth, &shed_candidates);
  // The short window (file comment): samples since the previous round.
  const double short_s =
      prev_round_ns == 0 || now_ns <= prev_round_ns
          ? 0
          : static_cast<double>(now_ns - prev_round_ns) / 1e9;
  auto short_window = [&](PageHeat& h, const PageEstimate& e, bool count = true,
                          double min_samples = 1) {
    if (short_s <= 0) return;
    const uint32_t d = round_samples_[e.index];
    if (d == 0) return;
    const double n = static_cast<double>(d / options_.sample_weight);
    if (n < min_samples) return;
    const PoissonBounds b = PoissonInterval(n, options_.z);
    const double lo = b.lo * period / short_s;
    if (lo > h.rate_lo) {
      h.rate_lo = lo;
      h.rate = std::max(h.rate, n * period / short_s);
      h.rate_hi = std::max(h.rate_hi, h.rate);
      if (count) ++counters_.short_window_candidates;
    }
  };
  // The prior's counts and window: the decayed counts over the decayed
  // window, or, with the change window open, the samples since the change
  // point over the time since.
  const bool changed = change_ns_ != 0 && now_ns > change_ns_;
  const double window_s =
      changed ? static_cast<double>(now_ns - change_ns_) / 1e9
              : static_cast<double>(scan.window.window_ns) / 1e9;
  if (changed) {
    report.change_window_s = window_s;
    report.change_window_samples = prior_samples;
    ++counters_.change_window_rounds;
  }
  // Victims rank by their long window (engine.h, "The long window ranks a
  // victim") outside the change window and with no confirmed change
  // within the long window.
  rank_by_long_window_ =
      options_.rank_victims_by_long_window && !rates_bound_accesses_ &&
      !changed &&
      (confirmed_change_ns_ == 0 ||
       now_ns - confirmed_change_ns_ >= options_.long_window_ns);
  auto prior_count = [&](const PageEstimate& e) {
    return changed ? CountSinceChange(e.entry.key.Pack()) : e.entry.count;
  };
  absl::erase_if(reclaim_held_until_,
                 [&](const auto& e) { return e.second <= now_ns; });
  if (ReclaimMakesRoom()) AdaptRepeatWindow(prev_round_ns, now_ns, report);
  std::vector<PageHeat>& candidates = candidates_;
  std::vector<PageHeat>& victims = victims_;
  std::vector<PageHeat>& hot_on_fast = hot_on_fast_;
  candidates.clear();
  victims.clear();
  hot_on_fast.clear();
  for (const PageEstimate& e : scan.hottest_not_fast) {
    // Planned by PlaceArrivals since the last round: queued, not a
    // candidate again.
    if (!arrived_.empty() && arrived_.contains(e.entry.key.Pack())) continue;
    PageHeat heat = to_heat(e);
    // Two samples within the repeat window (the older weighs at least
    // repeat_bar_): what a promotion left to the kernel's reclaim needs,
    // unless that reclaim sent the page back within a long window of the
    // last.
    heat.repeated = long_counts_now_[e.index] >= 1 + repeat_bar_ &&
                    !reclaim_held_until_.contains(e.entry.key.Pack());
    candidates.push_back(heat);
    if (!hold_short_window) short_window(candidates.back(), e);
    ApplyCountPrior(prior_count(e), period, window_s, /*candidate=*/true,
                    candidates.back());
    // The candidate's recent upper bound: the decayed count's, capped by
    // the recency bound (as a victim's).
    PageHeat recent = heat;
    recency_bound(recent, e, zero_count_hi_);
    ApplyLongPrior(long_counts_now_[e.index], period, /*candidate=*/true,
                   recent.rate_hi, candidates.back());
    stopped_bound(candidates.back(), e);
  }
  silence_claims_.clear();
  const bool claim_silences =
      options_.doubt_silences_that_do_not_hold && !rates_bound_accesses_;
  for (const PageEstimate& e : scan.coldest_on_fast) {
    victims.push_back(to_heat(e));
    // Silences that do not hold (engine.h): the rate its silence's bound
    // at the scan's z allows (the claim tested is the per-page bound's,
    // also while silences are doubted), where that bound is below the
    // decayed count's.
    const double silence = silence_hi(e, zero_count_hi_);
    if (claim_silences && silence < victims.back().rate_hi) {
      silence_claims_[victims.back().vaddr] = {e.entry.key.Pack(),
                                               silence / period};
    }
    recency_bound(victims.back(), e, VictimZeroHi());
    ApplyLongWindow(long_counts_now_[e.index], period, victims.back());
    ApplyCountPrior(prior_count(e), period, window_s, /*candidate=*/false,
                    victims.back());
    // The victim's recent lower bound: the decayed count's or the short
    // window's (as a candidate's), the latter from two samples or more: the
    // long count holds the short window's samples, so one sample is the
    // whole evidence of a page first sampled now, and a first touch then
    // looked heated up (engine.h, "A single sample").
    PageHeat recent = victims.back();
    short_window(recent, e, /*count=*/false, /*min_samples=*/2);
    ApplyLongPrior(long_counts_now_[e.index], period, /*candidate=*/false,
                   recent.rate_lo, victims.back());
  }
  for (const PageEstimate& e : scan.hottest_on_fast)
    hot_on_fast.push_back(to_heat(e));

  DropProtectedVictims(now_ns, &victims);
  const std::vector<int> backed_off = view.BackedOffNodes();
  SweepUntracked(view, ranges, free, period, window_s, now_ns, &victims,
                 report);
  PlacementInput in;
  in.topology = &topology_;
  in.watermark_demotions = !fault_samples_ || view.HoldsToAShare();
  in.reclaim_makes_room = ReclaimMakesRoom();
  if (in.reclaim_makes_room) {
    in.watermark_demotions = false;
    victims.clear();
  }
  // Bandwidth-bound: no promotion would lower the average access latency;
  // rule B sheds, and promotions stay within the headroom.
  if (!bandwidth_bound_) in.candidates = candidates;
  in.shed_candidates = shed_candidates;
  in.bandwidth_shed = bandwidth.shed;
  in.promote_headroom = bandwidth.headroom;
  in.victims = victims;
  in.hot_on_fast = hot_on_fast;
  in.ranges = ranges;
  in.free = free;
  in.backed_off_nodes = backed_off;
  in.is_held = [&view](uint64_t vaddr) { return view.IsHeld(vaddr); };
  // Benefit against cost (file comment).
  if (prev_round_ns != 0 && now_ns > prev_round_ns) {
    exposure_s_ += static_cast<double>(promoted_at_.size()) *
                   static_cast<double>(now_ns - prev_round_ns) / 1e9;
  }
  const double prior_s =
      static_cast<double>(options_.epoch_rounds * options_.interval_ns) / 1e9;
  report.horizon_s = (exposure_s_ + prior_s) / static_cast<double>(deaths_ + 1);
  report.migration_cost_ns = observed_pages_ == 0
                                 ? 0
                                 : static_cast<double>(observed_ns_) /
                                       static_cast<double>(observed_pages_);
  // Only rates that count accesses can be priced against the cost (file
  // comment): a fault source's rates would hold back every move.
  report.rates_bound_accesses = rates_bound_accesses_;
  if (report.migration_cost_ns > 0 && latency_gap_ns_ > 0 &&
      !rates_bound_accesses_) {
    report.migration_margin_per_sec =
        report.migration_cost_ns / (latency_gap_ns_ * report.horizon_s);
  }
  in.migration_margin_per_sec = report.migration_margin_per_sec;
  // In the change window the victims rank by the new regime's prior too
  // (file comment).
  in.victims_by_prior = changed;
  // The swap test's pair form (policy/count_prior.h, "The pair test"), for
  // sources whose counts are Poisson in the access rate: a fault source's
  // are capped at one per re-arm or scan pass (rates_bound_accesses_), so a
  // count of 1 against 0 says when the page was last touched against the
  // re-arm, not which is hotter.
  if (options_.pair_test && !rates_bound_accesses_) {
    in.prior = &prior_;
    in.long_prior = &long_prior_;
    in.pair_tail = 0.5 * std::erfc(options_.z / std::sqrt(2.0));
    // The odds suffice while a slower tier is saturated (engine.h).
    if (bandwidth.next_saturated && !bandwidth_bound_) {
      in.pair_tail = 0.5;
      ++counters_.odds_pair_rounds;
    }
    report.pair_test = true;
    report.pair_tail = in.pair_tail;
  }
  report.decision = DecideMoves(in, config_, *strategy_);
  RememberSwapPairs(report.decision, now_ns);
  // What is left of victims_ is the next room round's (file comment).
  DropMovedVictims(report.decision);
  ArmRoom(report);
  if (report.decision.shed_pages > 0) {
    ++counters_.bandwidth_shed_rounds;
    counters_.planned_sheds += report.decision.shed_bytes / 4096;
    // The shed pages' samples leave the fast tier by design: the share the
    // detector expects drops by their share of this round's samples (their
    // short-window counts over the round's samples of known pages), so the
    // shed does not read as a shift.
    double shed_samples = 0;
    for (const PlannedMove& m : report.decision.moves) {
      if (m.trigger != PlacementTrigger::kBandwidth ||
          m.reason == PlacementReason::kPromote)
        continue;
      const uint64_t entry_bytes = std::max(m.page_bytes, m.entry_bytes);
      const uint32_t d = RoundSamples(EntryKey(m.vaddr, entry_bytes).Pack());
      if (d == 0) continue;
      shed_samples += static_cast<double>(d) / options_.sample_weight *
                      static_cast<double>(m.page_bytes) /
                      static_cast<double>(entry_bytes);
    }
    if (share_baseline_ > 0 && round_known > 0) {
      share_baseline_ = std::max(
          0.0,
          share_baseline_ -
              std::min(1.0, shed_samples / static_cast<double>(round_known)));
    }
  }

  ApplyPlannedMoves(report.decision, now_ns);
  prev_epoch_ = table_->epoch();
  // Decay after the round has seen this interval's samples at full weight
  // (halving first would hide a page sampled once per long pass, as hint
  // faults are). Epochs are on the clock, not on the round count.
  if (now_ns >= next_epoch_ns_) {
    table_->AdvanceEpoch(now_ns);
    report.epoch_advanced = true;
    const uint64_t len = options_.epoch_rounds * options_.interval_ns;
    const uint64_t k = (now_ns - start_ns_) / len + 1;
    next_epoch_ns_ = start_ns_ + k * len;
  }
  arrived_.clear();  // every key of the window is placed now
  {
    PlacementDecision decision = std::move(report.decision);
    last_full_ = report;
    report.decision = std::move(decision);
  }
  RefreshHugeChunks(view);
  return report;
}

RoundReport PolicyEngine::RoomRound(MemoryView& view, RoundReport report) {
  // What the loop reports beside the moves: the last full round's figures.
  {
    RoundReport r = last_full_;
    r.round = report.round;
    r.time_ns = report.time_ns;
    r.early = report.early;
    r.room_round = true;
    r.epoch_advanced = false;
    r.change_window_s = 0;
    r.change_window_samples = 0;
    r.released_holds = 0;
    r.untracked_victims = 0;
    r.swept_pages = 0;
    report = std::move(r);
  }
  const uint64_t now_ns = report.time_ns;
  last_room_round_ns_ = now_ns;
  // The schedule holds; the window, baselines and counts are the next full
  // round's.
  next_round_ns_ = next_scheduled_ns_;
  // The last full round's victims, less those sampled since it: their
  // bounds did not see that sample (the table's last-seen tick, one lookup
  // each; a page the table no longer holds, or an untracked one, stays).
  room_victims_.clear();
  const uint64_t table_now = table_->now_ns();
  const double period = scanner_->last_result().window.sample_period;
  for (const PageHeat& h : victims_) {
    const std::optional<EntryView> v =
        table_->Lookup(EntryKey(h.vaddr, h.page_bytes));
    if (v && v->last_seen_ns + kLastSeenTickNs > last_round_ns_) continue;
    room_victims_.push_back(h);
    // Its recency bound (RunRound's) over the gap as it is now: no sample
    // since its last, a longer time.
    if (v && table_now > v->last_seen_ns + kLastSeenTickNs) {
      const double gap_s =
          static_cast<double>(table_now - v->last_seen_ns - kLastSeenTickNs) /
          1e9;
      PageHeat& r = room_victims_.back();
      r.rate_hi = std::min(r.rate_hi, VictimZeroHi() * period / gap_s);
      r.rate = std::min(r.rate, r.rate_hi);
      // The longer gap may now show it cooled.
      if (r.ShowedCooling()) r.rank_by_long_window = false;
    }
  }
  AddNewPageVictims(view, now_ns);
  DropProtectedVictims(now_ns, &room_victims_);
  if (view.Interrupted()) {
    report.interrupted = true;
    return report;
  }
  const ViewReading reading = ReadView(view);
  PlacementInput in = InputOver(reading, view);
  in.victims = room_victims_;  // no candidate: watermark demotions only
  // In the change window the victims rank by the new regime's prior too,
  // as in the full round (their prior bounds are that window's).
  in.victims_by_prior = change_ns_ != 0 && now_ns > change_ns_;
  report.decision = DecideMoves(in, config_, *strategy_);
  ApplyPlannedMoves(report.decision, now_ns);
  DropMovedVictims(report.decision);
  ArmRoom(report);
  return report;
}

void PolicyEngine::AddNewPageVictims(MemoryView& view, uint64_t now_ns) {
  // unknown_demand_ holds a sample's key per sample on a page no round
  // placed (at most kMaxUnknownDemand); a key's samples are adjacent once
  // sorted. A 2 MiB entry waits for the full round.
  room_keys_.clear();
  for (const UnknownDemand& u : unknown_demand_) {
    if (PageKey::Unpack(u.key).kind == PageKind::k4K)
      room_keys_.push_back({u.key, u.fallback_node});
  }
  std::sort(room_keys_.begin(), room_keys_.end());
  room_pages_new_.clear();
  room_counts_new_.clear();
  room_accessors_new_.clear();
  for (size_t i = 0; i < room_keys_.size();) {
    size_t end = i + 1;
    while (end < room_keys_.size() &&
           room_keys_[end].first == room_keys_[i].first) {
      ++end;
    }
    if (!IsPlaced(room_keys_[i].first)) {
      room_pages_new_.push_back(PageKey::Unpack(room_keys_[i].first).vaddr());
      room_counts_new_.push_back(static_cast<uint32_t>(end - i));
      room_accessors_new_.push_back(room_keys_[i].second);
    }
    i = end;
  }
  room_nodes_new_.assign(room_pages_new_.size(), -1);
  const size_t batch =
      std::max<size_t>(1, options_.placement_query_batch_pages);
  for (size_t first = 0; first < room_pages_new_.size(); first += batch) {
    if (view.Interrupted()) return;
    const size_t n = std::min(batch, room_pages_new_.size() - first);
    view.QueryNodes(absl::MakeConstSpan(room_pages_new_).subspan(first, n),
                    absl::MakeSpan(room_nodes_new_).subspan(first, n));
  }
  // The bounds of a full round's victim with these samples and no other
  // (CountRound's windows of a page first sampled since the last round):
  // the decayed count's over the last full round's window, the long
  // window's, both priors'.
  const RateWindow& w = scanner_->last_result().window;
  const double period = w.sample_period;
  // The count prior's window: the decayed one, or in the change window the
  // time since its change point (a new page's samples are all since then).
  const bool changed = change_ns_ != 0 && now_ns > change_ns_;
  const double window_s = changed
                              ? static_cast<double>(now_ns - change_ns_) / 1e9
                              : static_cast<double>(w.window_ns) / 1e9;
  for (size_t i = 0; i < room_pages_new_.size(); ++i) {
    const int node = room_nodes_new_[i];
    if (node < 0 || !IsFastNode(node)) continue;
    const uint32_t count = room_counts_new_[i] * options_.sample_weight;
    const RateEstimate r = w.Estimate(count, options_.z);
    PageHeat h;
    h.vaddr = room_pages_new_[i];
    h.current_node = node;
    h.accessor_node = room_accessors_new_[i];
    h.rate = r.per_sec;
    h.rate_lo = r.lo_per_sec;
    h.rate_hi = r.hi_per_sec;
    h.samples = room_counts_new_[i];
    ApplyLongWindow(room_counts_new_[i], period, h);
    ApplyCountPrior(count, period, window_s, /*candidate=*/false, h);
    ApplyLongPrior(room_counts_new_[i], period, /*candidate=*/false, h.rate_lo,
                   h);
    room_victims_.push_back(h);
  }
}

PageKey PolicyEngine::EntryKey(uint64_t vaddr, uint64_t entry_bytes) const {
  PageKey k;
  k.address_space = options_.address_space;
  k.kind = entry_bytes > 4096 ? PageKind::k2M : PageKind::k4K;
  k.page = vaddr >> PageShift(k.kind);
  return k;
}

PolicyEngine::ViewReading PolicyEngine::ReadView(MemoryView& view) {
  ViewReading r;
  r.ranges = view.Ranges();
  r.free = view.Free();
  ProjectQueuedMoves(view.QueuedMoves(), &r.free);
  r.backed_off = view.BackedOffNodes();
  return r;
}

PlacementInput PolicyEngine::InputOver(const ViewReading& reading,
                                       MemoryView& view) const {
  PlacementInput in;
  in.topology = &topology_;
  in.watermark_demotions =
      (!fault_samples_ || view.HoldsToAShare()) && !ReclaimMakesRoom();
  in.reclaim_makes_room = ReclaimMakesRoom();
  in.ranges = reading.ranges;
  in.free = reading.free;
  in.backed_off_nodes = reading.backed_off;
  in.is_held = [&view](uint64_t vaddr) { return view.IsHeld(vaddr); };
  return in;
}

void PolicyEngine::NoteReturn(uint64_t key, uint64_t time_ns) {
  auto it = promoted_at_.find(key);
  // A sample older than the promotion was taken on the slow tier before it.
  if (time_ns < it->second) return;
  if (time_ns - it->second <= options_.long_window_ns) {
    reclaim_held_until_[key] = time_ns + options_.long_window_ns;
    ++counters_.reclaim_returns;
    // Its age bounds the LRU's characteristic time from above (file
    // comment, "The repeat window follows the LRU's characteristic time").
    round_min_return_age_ns_ =
        std::min(round_min_return_age_ns_, time_ns - it->second);
  }
  // Its life on the fast tier ended (the horizon): the kernel demoted it.
  promoted_at_.erase(it);
  ++deaths_;
}

void PolicyEngine::SetReclaimMakesRoom(bool on) {
  options_.reclaim_makes_room = on;
  // The second faults' queue, as the constructor sizes it in this mode
  // (bounded; a control path, between rounds).
  if (ReclaimMakesRoom() && repeats_.capacity() < kMaxUnknownDemand)
    repeats_.reserve(kMaxUnknownDemand);
}

void PolicyEngine::AdaptRepeatWindow(uint64_t prev_round_ns, uint64_t now_ns,
                                     RoundReport& report) {
  const uint64_t tau = options_.long_window_ns;
  if (tau == 0) return;  // no long count: the bar stays exp(-1)
  const uint64_t floor = std::min(kMinRepeatWindowNs, tau);
  if (round_min_return_age_ns_ != UINT64_MAX) {
    const uint64_t cut = std::max(floor, round_min_return_age_ns_);
    if (cut < repeat_window_ns_) {
      repeat_window_ns_ = cut;
      ++counters_.repeat_window_cuts;
    }
  } else if (prev_round_ns != 0 && now_ns > prev_round_ns) {
    repeat_window_ns_ =
        std::min(tau, repeat_window_ns_ + (now_ns - prev_round_ns));
  }
  round_min_return_age_ns_ = UINT64_MAX;
  repeat_bar_ = std::exp(-static_cast<double>(repeat_window_ns_) /
                         static_cast<double>(tau));
  report.repeat_window_s = static_cast<double>(repeat_window_ns_) / 1e9;
}

void PolicyEngine::NoteRefault(uint64_t vaddr, uint64_t time_ns) {
  auto it = demoted_at_.find(vaddr >> 12);
  if (it == demoted_at_.end()) return;
  if (time_ns >= it->second &&
      time_ns - it->second <= options_.long_window_ns) {
    protected_until_[it->first] = time_ns + options_.long_window_ns;
    ++counters_.refault_protections;
  }
  demoted_at_.erase(it);
}

void PolicyEngine::DropProtectedVictims(uint64_t now_ns,
                                        std::vector<PageHeat>* victims) {
  // Expired entries first (the maps stay within one long window).
  const uint64_t window = options_.long_window_ns;
  absl::erase_if(demoted_at_, [&](const auto& e) {
    return now_ns > e.second && now_ns - e.second > window;
  });
  absl::erase_if(protected_until_,
                 [&](const auto& e) { return e.second <= now_ns; });
  if (protected_until_.empty()) return;
  std::erase_if(*victims, [this](const PageHeat& h) {
    for (uint64_t b = 0; b < h.page_bytes; b += 4096) {
      if (protected_until_.contains((h.vaddr + b) >> 12)) return true;
    }
    return false;
  });
}

void PolicyEngine::RecordDemotion(uint64_t key) {
  if (auto it = moved_by_rounds_.find(key); it != moved_by_rounds_.end()) {
    counters_.demoted_entries += it->second;
    it->second = false;
  } else if (moved_by_rounds_.size() < options_.max_promoted_tracked) {
    moved_by_rounds_.emplace(key, false);
    ++counters_.demoted_entries;
  }
}

void PolicyEngine::ApplyPlannedMoves(const PlacementDecision& d,
                                     uint64_t now_ns) {
  for (const PlannedMove& m : d.moves) {
    const bool promote = m.reason == PlacementReason::kPromote;
    (promote ? counters_.planned_promotions : counters_.planned_demotions) +=
        m.page_bytes / 4096;
    if (m.trigger == PlacementTrigger::kReclaim)
      counters_.reclaim_promotions += m.page_bytes / 4096;
    // The entry's key (a part of a split entry: the whole one).
    const uint64_t key =
        EntryKey(m.vaddr, std::max(m.page_bytes, m.entry_bytes)).Pack();
    // The planned move's target stands for its node until the next round
    // queries it (the shift detector would otherwise count samples on a
    // just-promoted page as slow).
    if (KeyState* placed = FindPlaced(key)) placed->node = m.to_node;
    if (!promote && options_.slow_tier_samples && options_.refault_protects) {
      for (uint64_t b = 0; b < m.page_bytes; b += 4096)
        demoted_at_[(m.vaddr + b) >> 12] = now_ns;
    }
    if (promote) {
      RecordPromotion(key, now_ns);
      continue;
    }
    const bool shed = m.trigger == PlacementTrigger::kBandwidth;
    if (shed) {
      moved_by_rounds_.erase(key);  // hot on purpose: no regret
    } else {
      RecordDemotion(key);
    }
    // A promoted page's life on the fast tier ends (the horizon); a page
    // shed for bandwidth is still hot: censored, not a death.
    if (promoted_at_.erase(key) > 0 && !shed) ++deaths_;
  }
}

void PolicyEngine::DropMovedVictims(const PlacementDecision& d) {
  if (d.moves.empty()) return;
  moved_scratch_.clear();
  for (const PlannedMove& m : d.moves) moved_scratch_.push_back(m.vaddr);
  std::sort(moved_scratch_.begin(), moved_scratch_.end());
  std::erase_if(victims_, [this](const PageHeat& h) {
    return std::binary_search(moved_scratch_.begin(), moved_scratch_.end(),
                              h.vaddr);
  });
}

void PolicyEngine::UseRoom(uint64_t key, PageKind kind, int cpu_node,
                           uint64_t now_ns) {
  if (cpu_node < 0 || static_cast<size_t>(cpu_node) >= room_pages_.size() ||
      room_pages_[cpu_node] <= 0) {
    return;
  }
  // Linear counting (Whang, Vander-Zanden and Taylor, 1990): each page
  // sets one bit of the map; a bit already set is a page seen before (or a
  // collision), and a bit newly set with b set before it stands for
  // 1 / (1 - b / M) new pages in expectation. Fixed memory, no allocation
  // on the sample path; exact in practice for a few thousand pages and
  // within 0.1% at 300k (M = 2^20).
  // The table's own key hash (MurmurHash3's finalizer): every key bit
  // moves the top 20 bits (absl::Hash's low bits, per-process seeded, were
  // 1% off at 300k consecutive pages).
  const uint64_t bit = MixKey(key) >> (64 - std::countr_zero(kRoomSketchBits));
  uint64_t& word = room_seen_bits_[bit >> 6];
  const uint64_t mask = uint64_t{1} << (bit & 63);
  if ((word & mask) != 0) return;
  word |= mask;
  const double stands_for =
      1.0 / (1.0 - static_cast<double>(room_seen_set_) /
                       static_cast<double>(kRoomSketchBits));
  ++room_seen_set_;
  room_pages_[cpu_node] -= static_cast<double>(BasePages(kind)) * stands_for;
  if (room_pages_[cpu_node] > 0) return;
  // As the shift detector's rounds: at most one per interval / 4 after a
  // full round or a room round.
  const uint64_t at =
      std::max(now_ns, std::max(last_round_ns_, last_room_round_ns_) +
                           options_.interval_ns / 4);
  if (at < next_round_ns_) {
    next_round_ns_ = at;
    room_pending_ = true;
  }
}

double PolicyEngine::MeanIdleLatencyNs(const std::vector<int>& nodes) const {
  if (nodes.empty()) return 0;
  double idle = 0;
  for (int n : nodes) idle += latency_model_.IdleLatencyNs(n);
  return idle / static_cast<double>(nodes.size());
}

void PolicyEngine::ArmRoom(const RoundReport& report) {
  room_pages_.clear();
  std::fill(room_seen_bits_.begin(), room_seen_bits_.end(), 0);
  room_seen_set_ = 0;
  // Only a source that sees the fast tier (a share baseline above 0: a
  // hint fault's new page is a slow page, not an allocation), and only
  // where bandwidth does not decide: the rule is about room, and a loaded
  // next tier (its loaded latency above idle by more than Colloid's delta)
  // or a bound fast tier is rule B's to balance.
  // And only where samples count accesses as they happen (PEBS, IBS,
  // traces): a fault source's sample on a page no round placed is as often
  // a page faulting again after a re-arm as a first touch (at attach, every
  // page of the process), and DAMON's regions are no pages; rooms armed on
  // them brought extra demotion rounds of the hot set in the daemon's
  // write-fault guest (engine.h, "A room round reads no table").
  if (!options_.room_rounds || !(share_baseline_ > 0) || bandwidth_bound_ ||
      rates_bound_accesses_)
    return;
  // The CPU budget (EngineOptions::room_round_cpu_share): up to 3 room
  // rounds between two scheduled ones, each costing about what the last
  // room round did (a full round's cost does not count: a room round
  // reads no table).
  if (3.0 * static_cast<double>(last_room_round_cost_ns_) >
      options_.room_round_cpu_share * static_cast<double>(options_.interval_ns))
    return;
  if (!next_tier_nodes_.empty() &&
      report.next_loaded_latency_ns >
          MeanIdleLatencyNs(next_tier_nodes_) * (1 + kColloidDelta)) {
    return;
  }
  for (const NodePlan& np : report.decision.nodes) {
    if (!IsFastNode(np.node) || !np.free_before || np.free_after < 4096)
      continue;
    if (room_pages_.size() <= static_cast<size_t>(np.node))
      room_pages_.resize(static_cast<size_t>(np.node) + 1, -1);
    room_pages_[np.node] = static_cast<double>(np.free_after / 4096);
  }
  if (!room_pages_.empty() && room_seen_bits_.empty())
    room_seen_bits_.assign(kRoomSketchBits / 64, 0);
}

int PolicyEngine::FirstTouchNode(int cpu_node,
                                 absl::Span<const NodeFree> free) const {
  // The kernel's local allocation: the CPU's node while it has room, else
  // the nearest node (SLIT) that does. Room: free memory at or above the
  // low watermark, below which the engine itself demotes.
  int best = -1;
  int best_distance = 0;
  for (const NodeFree& f : free) {
    if (f.free_bytes == 0 ||
        f.free_bytes < WatermarksFor(config_, topology_, f.node).low_bytes)
      continue;
    const std::optional<int> d = cpu_node < 0
                                     ? std::optional<int>(0)
                                     : topology_.Distance(cpu_node, f.node);
    if (!d.has_value()) continue;
    if (best < 0 || *d < best_distance ||
        (*d == best_distance && f.node < best)) {
      best = f.node;
      best_distance = *d;
    }
  }
  return best >= 0 ? best : cpu_node;
}

void PolicyEngine::AttributeUnknownDemand(absl::Span<const NodeFree> free) {
  // A key's samples are adjacent once sorted: a key with one sample in the
  // window stands for the pages not touched yet (file comment, "Pages
  // sampled once").
  std::sort(unknown_demand_.begin(), unknown_demand_.end(),
            [](const UnknownDemand& a, const UnknownDemand& b) {
              return a.key < b.key;
            });
  for (size_t i = 0; i < unknown_demand_.size();) {
    size_t end = i + 1;
    while (end < unknown_demand_.size() &&
           unknown_demand_[end].key == unknown_demand_[i].key) {
      ++end;
    }
    for (size_t j = i; j < end; ++j) {
      const UnknownDemand& u = unknown_demand_[j];
      int node;
      if (end - i == 1) {
        node = FirstTouchNode(u.fallback_node, free);
      } else {
        const KeyState* placed = FindPlaced(u.key);
        node = placed != nullptr ? placed->node : u.fallback_node;
      }
      if (node >= 0 && static_cast<size_t>(node) < window_accesses_.size())
        window_accesses_[node] += u.accesses;
    }
    i = end;
  }
  unknown_demand_.clear();
  repeats_.clear();      // the round ranks them
  arrivals_cursor_ = 0;  // PlaceArrivals reads the next window's
}

PolicyEngine::BandwidthPlan PolicyEngine::PlanBandwidth(uint64_t dt_ns,
                                                        RoundReport& report) {
  BandwidthPlan plan;
  auto demand = [&](int n) {
    const double acc =
        n >= 0 && static_cast<size_t>(n) < window_accesses_.size()
            ? window_accesses_[n]
            : 0;
    return DemandBytesPerSec(acc, dt_ns);
  };
  // Each tier's loaded latency, weighted by its nodes' accesses (the idle
  // mean when it served none).
  auto tier_latency = [&](const std::vector<int>& nodes) {
    double sum = 0, weight = 0;
    for (int n : nodes) {
      const double d = demand(n);
      sum += d * latency_model_.LatencyNs(n, d);
      weight += d;
    }
    return weight > 0 ? sum / weight : MeanIdleLatencyNs(nodes);
  };
  // Each tier's marginal latency (policy/loaded_latency.h, "Marginal
  // balance"), weighted the same way; a fast node past the cap counts at
  // the left limit (what shedding into the convex part costs).
  auto tier_marginal = [&](const std::vector<int>& nodes, bool below_cap) {
    double sum = 0, weight = 0;
    for (int n : nodes) {
      const double d = demand(n);
      sum += d * latency_model_.MarginalLatencyNs(n, d, below_cap);
      weight += d;
    }
    return weight > 0 ? sum / weight : MeanIdleLatencyNs(nodes);
  };
  if (!next_tier_nodes_.empty()) {
    for (int n : next_tier_nodes_) {
      const double peak = latency_model_.PeakBytesPerSec(n);
      if (peak > 0 && demand(n) >= kMaxUtilisation * peak)
        plan.next_saturated = true;
    }
    report.fast_loaded_latency_ns = tier_latency(fast_nodes_);
    report.next_loaded_latency_ns = tier_latency(next_tier_nodes_);
    report.fast_marginal_latency_ns =
        tier_marginal(fast_nodes_, /*below_cap=*/true);
    report.next_marginal_latency_ns =
        tier_marginal(next_tier_nodes_, /*below_cap=*/false);
    const double fast = report.fast_marginal_latency_ns;
    const double next = report.next_marginal_latency_ns;
    std::vector<NodeDemand> fast_demand, next_demand;
    for (int n : fast_nodes_) fast_demand.push_back({n, demand(n)});
    for (int n : next_tier_nodes_) next_demand.push_back({n, demand(n)});
    if (fast > next * (1 + kColloidDelta)) {
      bandwidth_bound_ = true;
      // Shed to the balance of marginal latencies (file comment).
      const LatencyBalance b =
          BalanceMarginalLatencies(latency_model_, fast_demand, next_demand);
      report.shed_demand_bytes_per_sec = b.moved_bytes_per_sec;
      report.balanced_latency_ns = b.latency_ns;
      for (const NodeDemand& d : b.shed) {
        if (d.bytes_per_sec > 0)
          plan.shed.push_back({d.node, d.bytes_per_sec / kCacheLineBytes});
      }
    } else if (fast < next * (1 - kColloidDelta)) {
      bandwidth_bound_ = false;
    }
    if (!bandwidth_bound_) {
      // The headroom of each fast node: what it takes, alone, in the
      // balance the other way (the next tier giving demand to it until the
      // marginal latencies meet), which counts both tiers' loads after
      // the move. Promotions move demand off the slower nodes, so a node
      // that could take all of theirs needs no limit (and an estimate of
      // a young page's rate cannot block it).
      double slower = 0;
      for (size_t n = 0; n < window_accesses_.size(); ++n) {
        if (!IsFastNode(static_cast<int>(n)))
          slower += demand(static_cast<int>(n));
      }
      double total = 0;
      bool limited = false;
      for (const NodeDemand& f : fast_demand) {
        const NodeDemand one[] = {f};
        const LatencyBalance up =
            BalanceMarginalLatencies(latency_model_, next_demand, one);
        const double room = std::max(0.0, up.absorbed[0].bytes_per_sec);
        total += room;
        // (Takes all of it, up to the bisection's rounding.)
        if (room >= slower * (1 - 1e-9)) continue;
        plan.headroom.push_back({f.node, room / kCacheLineBytes});
        limited = true;
      }
      if (limited) report.promote_headroom_bytes_per_sec = total;
    }
  }
  std::fill(window_accesses_.begin(), window_accesses_.end(), 0.0);
  return plan;
}

void PolicyEngine::CollectShedCandidates(const ScanResult& scan,
                                         const BandwidthPlan& plan,
                                         std::vector<PageHeat>* out) {
  out->clear();
  if (plan.shed.empty()) return;
  auto shedding = [&](int node) {
    for (const NodeShed& s : plan.shed) {
      if (s.node == node) return true;
    }
    return false;
  };
  for (size_t j = 0; j < entries_.size(); ++j) {
    const int node = nodes_[j];
    if (node < 0 || !shedding(node)) continue;
    const EntryView& v = entries_[j];
    if (v.count == 0) continue;
    const PageKey& k = v.key;
    const RateEstimate r = scan.window.Estimate(v.count, options_.z);
    PageHeat h;
    h.vaddr = k.vaddr();
    h.page_bytes = static_cast<uint32_t>(PageBytes(k.kind));
    h.current_node = node;
    h.accessor_node = v.node;
    h.shared = v.sharing == Sharing::kShared;
    h.rate = r.per_sec;
    h.rate_lo = r.lo_per_sec;
    h.rate_hi = r.hi_per_sec;
    h.samples = v.count / options_.sample_weight;
    out->push_back(h);
  }
  // The hottest per 4 KiB, as many as the other lists hold (placement sorts
  // them again with its total order).
  auto denser = [](const PageHeat& a, const PageHeat& b) {
    const double da = a.rate / static_cast<double>(a.page_bytes);
    const double db = b.rate / static_cast<double>(b.page_bytes);
    if (da != db) return da > db;
    return a.vaddr < b.vaddr;
  };
  const size_t k = ScanOptionsFor(config_, options_).top_k;
  if (out->size() > k) {
    std::nth_element(out->begin(), out->begin() + static_cast<ptrdiff_t>(k),
                     out->end(), denser);
    out->resize(k);
  }
}

void PolicyEngine::SweepKeyCounts(uint64_t now_ns, uint64_t prev_round_ns) {
  long_window_s_ = 0;
  const bool long_on = options_.long_window_ns != 0;
  const double tau_s = static_cast<double>(options_.long_window_ns) / 1e9;
  const bool decay = long_on && prev_round_ns != 0 && now_ns > prev_round_ns;
  const double f =
      decay
          ? std::exp(-static_cast<double>(now_ns - prev_round_ns) / 1e9 / tau_s)
          : 1.0;
  // A long count below kForget is a sample more than 4.6 time constants
  // old (e^-4.6 = 1%): forgotten, so the map holds only keys with recent
  // samples (or a count at the last counted round).
  constexpr float kForget = 0.01f;
  for (auto it = keys_.begin(); it != keys_.end();) {
    KeyState& c = it->second;
    if (!c.has_counts()) {  // placed, without counts
      ++it;
      continue;
    }
    if (decay && c.long_count >= 0) {
      c.long_count = static_cast<float>(c.long_count * f);
      if (c.long_count < kForget) {
        c.long_count = KeyState::kNoLongCount;
        --long_keys_;
      }
    }
    if (c.long_count < 0 && c.round != counted_round_) {
      if (c.placed_round == placement_round_) {
        c.DropCounts();
        ++it;
      } else {
        keys_.erase(it++);
      }
    } else {
      ++it;
    }
  }
  if (!long_on) return;
  // The effective window: the integral of the weights over the time the
  // engine has run, tau (1 - exp(-T / tau)).
  const double run_s =
      now_ns > start_ns_ ? static_cast<double>(now_ns - start_ns_) / 1e9 : 0;
  long_window_s_ = tau_s * (1 - std::exp(-run_s / tau_s));
}

uint64_t PolicyEngine::CountRound(uint64_t now_ns, uint64_t prev_round_ns,
                                  RoundReport& report) {
  SweepKeyCounts(now_ns, prev_round_ns);
  const bool long_on = options_.long_window_ns != 0;
  const bool long_prior = long_window_s_ > 0;
  const bool changed = change_ns_ != 0;
  // The samples since the previous round: the count now less the previous
  // round's, halved by the epochs between (exact: the table's decay is the
  // same integer halving). A displaced and re-inserted entry undercounts.
  const uint32_t lag = table_->epoch() - prev_epoch_;
  const size_t cap = table_->capacity();
  const uint32_t hot_threshold = report.hot_threshold;
  // Never kNoRound, which marks a key without counts: the round 2^32 - 1
  // counts as round 0 (stamps 2^32 rounds apart alias either way).
  uint32_t round = static_cast<uint32_t>(counters_.rounds);
  if (round == KeyState::kNoRound) round = 0;
  prior_histogram_.assign(CountPrior::kMaxCount + 1, 0);
  long_histogram_.assign(CountPrior::kMaxCount + 1, 0);
  uint64_t prior_samples = 0;
  round_samples_.assign(entries_.size(), 0);
  long_counts_now_.assign(entries_.size(), 0.0f);
  // A change point on trial (engine.h, "A change is confirmed"): the fast
  // tier's pages' samples this round against what their long-window rates
  // predict (FastTierCooling), and the decayed counts' histogram, which the
  // prior is fitted to if the change does not stand.
  const bool trial = changed && change_on_trial_;
  const double dt_s = static_cast<double>(now_ns - prev_round_ns) / 1e9;
  FastTierCooling cooling(long_window_s_, dt_s);
  uint64_t decayed_samples = 0;
  if (trial) decayed_histogram_.assign(CountPrior::kMaxCount + 1, 0);
  size_t fast_entries = 0;
  for (size_t j = 0; j < entries_.size(); ++j) {
    const EntryView& e = entries_[j];
    const uint64_t key = e.key.Pack();
    const uint32_t count = e.count;
    if (nodes_[j] >= 0 && IsFastNode(nodes_[j])) ++fast_entries;
    float long_count = KeyState::kNoLongCount;
    bool long_looked_up = false;
    if (count > 0) {
      // One lookup: the count at the previous round (none if the key had
      // none then) is replaced by the count now, and the long count
      // updated.
      auto [it, inserted] = keys_.try_emplace(key);
      KeyState& kc = it->second;
      if (inserted) kc.placed_round = placement_round_ - 1;  // not placed
      const uint32_t before = !kc.has_counts() || kc.round != counted_round_ ? 0
                              : lag >= 32                                    ? 0
                                          : kc.count >> lag;
      const uint32_t d = count > before ? count - before : 0;
      kc.count = count;
      kc.samples = d;
      kc.round = round;
      round_samples_[j] = d;
      if (d > 0 && long_on) {
        // The long window (file comment): the round's samples, in samples.
        const float n =
            static_cast<float>(d) / static_cast<float>(options_.sample_weight);
        if (kc.long_count >= 0) {
          kc.long_count += n;
        } else if (long_keys_ < cap) {
          kc.long_count = n;
          ++long_keys_;
        }
      }
      long_count = kc.long_count;
      long_looked_up = true;
      // The change window: a sample counts at full weight however many
      // epochs have halved the table since (the window's counts are over
      // its own time, not the decayed window's); at most one entry per
      // table slot (a key past that is left out, as a displaced entry
      // undercounts).
      uint32_t since = 0;
      if (changed) {
        if (auto it = since_change_.find(key); it != since_change_.end()) {
          it->second += d;
          since = it->second;
        } else if (d > 0 && since_change_.size() < cap) {
          since_change_.emplace(key, d);
          since = d;
        }
      }
      // The count prior's population: every tracked key's count (or, in
      // the change window, its samples since the change point), in samples.
      const uint32_t k = (changed ? since : count) / options_.sample_weight;
      if (k <= CountPrior::kMaxCount) ++prior_histogram_[k];
      prior_samples += k;
      if (trial) {
        const uint32_t kd = count / options_.sample_weight;
        if (kd <= CountPrior::kMaxCount) ++decayed_histogram_[kd];
        decayed_samples += kd;
      }
      report.active_pages += BasePages(e.key.kind);
      if (hot_threshold != 0 && count >= hot_threshold) {
        report.hot_pages += BasePages(e.key.kind);
        if (nodes_[j] >= 0)
          report.hot_pages_by_node[nodes_[j]] += BasePages(e.key.kind);
      }
    } else {
      ++prior_histogram_[0];
      if (trial) ++decayed_histogram_[0];
    }
    if (trial && long_window_s_ > 0 && nodes_[j] >= 0 &&
        IsFastNode(nodes_[j])) {
      if (!long_looked_up) {
        auto it = keys_.find(key);
        if (it != keys_.end() && it->second.has_counts())
          long_count = it->second.long_count;
        long_looked_up = true;
      }
      // The long count before this round's samples (FastTierCooling takes
      // off the first sample).
      const double round_samples = static_cast<double>(round_samples_[j]) /
                                   static_cast<double>(options_.sample_weight);
      cooling.Add(
          long_count < 0 ? 0 : static_cast<double>(long_count) - round_samples,
          round_samples);
    }
    if (long_prior) {
      // Every tracked key's long count, rounded to whole samples (the
      // weighted count's variance is below its mean: rounding and the
      // Poisson model are conservative, as in ApplyLongWindow).
      if (!long_looked_up) {
        auto it = keys_.find(key);
        if (it != keys_.end() && it->second.has_counts())
          long_count = it->second.long_count;
      }
      if (long_count >= 0) long_counts_now_[j] = long_count;
      const double c = long_counts_now_[j];
      const auto n = static_cast<uint64_t>(std::lround(c));
      if (n <= CountPrior::kMaxCount) ++long_histogram_[n];
    }
  }
  // Silences that do not hold: the family-wise tail over the fast tier's
  // tracked pages, -ln(a / M) = U(0) + ln M.
  family_zero_hi_ =
      zero_count_hi_ + std::log(std::max<double>(1.0, fast_entries));
  // A key without a count this round has none for the next (its entry is
  // erased at the next sweep unless it has a long count).
  counted_round_ = round;
  if (trial) {
    change_on_trial_ = false;
    if (cooling.Cooled(options_.shift_z)) {
      confirmed_change_ns_ = change_ns_;
    } else {
      change_ns_ = 0;
      since_change_.clear();
      change_fast_ = change_known_ = 0;
      prior_histogram_.swap(decayed_histogram_);
      prior_samples = decayed_samples;
      report.change_unconfirmed = true;
      ++counters_.unconfirmed_changes;
    }
  }
  // A histogram with no zeros to show (engine.h): the decayed counts
  // before the table first halved them, where samples count accesses.
  const bool zero_truncated =
      table_->epoch() == 0 && change_ns_ == 0 && !rates_bound_accesses_;
  prior_.Fit(prior_histogram_, options_.z, zero_truncated);
  report.prior_zero_truncated = prior_.zero_truncated();
  if (long_prior) {
    long_prior_.Fit(long_histogram_, options_.z);
  } else {
    long_prior_.Fit({}, options_.z);  // clears it
  }
  return prior_samples;
}

void PolicyEngine::ApplyLongWindow(double c, double period, PageHeat& h) {
  if (!(long_window_s_ > 0)) return;
  const PoissonBounds b = PoissonInterval(c, options_.z);
  const double hi = b.hi * period / long_window_s_;
  // The long window assumes the rate held over it. A page whose recent rate
  // (the decayed count's point estimate, capped by the recency bound) is
  // above its long-term upper bound has heated up: no long bound for it.
  if (h.rate > hi) return;
  h.long_hi = hi;
  h.long_lo = b.lo * period / long_window_s_;
  // Nothing shows it cooled: the recent upper bound admits the long lower.
  h.rank_by_long_window = rank_by_long_window_ && !h.ShowedCooling();
  if (hi < h.rate_hi) ++counters_.long_window_victims;
}

void PolicyEngine::ApplyLongPrior(double c, double period, bool candidate,
                                  double recent, PageHeat& h) {
  if (!(long_window_s_ > 0) || !long_prior_.fitted()) return;
  // The conservative whole count: down for a lower bound, up for an upper.
  const double n = candidate ? std::floor(c) : std::ceil(c);
  const std::optional<PoissonBounds> b =
      long_prior_.Bounds(static_cast<uint32_t>(n));
  if (!b) return;
  const double scale = period / long_window_s_;
  if (candidate) {
    const double lo = b->lo * scale;
    // Not cooling: the recent window's upper bound must admit the long
    // window's lower one.
    if (recent < lo) return;
    h.long_prior_lo = lo;
    h.long_prior_count = static_cast<int32_t>(n);
    ++counters_.long_prior_candidates;
  } else {
    const double hi = b->hi * scale;
    // Not heating up: the recent windows' lower bound must admit the long
    // window's upper one.
    if (recent > hi) return;
    h.long_prior_hi = hi;
    h.long_prior_count = static_cast<int32_t>(n);
  }
}

void PolicyEngine::SweepUntracked(
    MemoryView& view, absl::Span<const NumaMapsRange> ranges,
    absl::Span<const NodeFree> free, double period, double window_s,
    uint64_t now_ns, std::vector<PageHeat>* victims, RoundReport& report) {
  // Not before the engine has sampled for a long window (10 s): a page
  // sampled less than once in that long is not yet told from one never
  // sampled, and at the start every page is untracked.
  const uint64_t settle =
      std::max(options_.long_window_ns, options_.interval_ns);
  // With reclaim making room the kernel's LRU picks the victims: no sweep.
  if (!options_.sweep_untracked_fast || ReclaimMakesRoom() ||
      now_ns < start_ns_ + settle) {
    return;
  }
  // Only while a fast node is short of its high watermark: room above it
  // takes promotions without a victim.
  bool short_node = false;
  for (const NodeFree& f : free) {
    if (!IsFastNode(f.node)) continue;
    if (f.free_bytes < WatermarksFor(config_, topology_, f.node).high_bytes)
      short_node = true;
  }
  if (!short_node) return;
  // What the table tracks (HotnessTable::Lookup: not only the keys this
  // round's placement queries reached, which stop at
  // max_placement_pages_per_round). A 4 KiB page is tracked by its own key
  // or by its 2 MiB chunk's (DAMON's regions, THP); a THP-backed chunk
  // moves whole and is left to its samples.
  auto is_tracked = [&](uint64_t vaddr) {
    PageKey k;
    k.address_space = options_.address_space;
    k.kind = PageKind::k4K;
    k.page = vaddr >> PageShift(PageKind::k4K);
    if (table_->Lookup(k)) return true;
    k.kind = PageKind::k2M;
    k.page = vaddr >> PageShift(PageKind::k2M);
    return table_->Lookup(k) ||
           huge_chunks_.contains(k.page << PageShift(PageKind::k2M));
  };
  // No sample since the engine started: U(0) over that time, the
  // recency bound's form (RunRound); the long window and the priors as
  // for a tracked page of count 0.
  const double run_s = static_cast<double>(now_ns - start_ns_) / 1e9;
  const auto victim = [&](uint64_t vaddr, int node) {
    PageHeat h;
    h.vaddr = vaddr;
    h.page_bytes = 4096;
    h.current_node = node;
    h.untracked = true;
    h.rate_hi = zero_count_hi_ * period / run_s;
    ApplyLongWindow(0, period, h);
    ApplyCountPrior(0, period, window_s, /*candidate=*/false, h);
    ApplyLongPrior(0, period, /*candidate=*/false, /*recent=*/0, h);
    return h;
  };
  // The ranges holding pages on a fast node (numa_maps' counts), in
  // address order from the cursor, wrapping once.
  std::vector<const NumaMapsRange*> order;
  for (const NumaMapsRange& r : ranges) {
    if (r.end <= r.start || r.huge) continue;
    bool on_fast = false;
    for (const auto& [node, pages] : r.pages_on_node)
      on_fast |= pages > 0 && IsFastNode(node);
    if (on_fast) order.push_back(&r);
  }
  std::sort(order.begin(), order.end(),
            [](const NumaMapsRange* a, const NumaMapsRange* b) {
              return a->start < b->start;
            });
  const auto from = std::partition_point(
      order.begin(), order.end(),
      [&](const NumaMapsRange* r) { return r->end <= sweep_cursor_; });
  std::rotate(order.begin(), from, order.end());
  const size_t want = ScanOptionsFor(config_, options_).top_k;
  size_t budget = options_.sweep_query_pages_per_round;
  const size_t batch =
      std::max<size_t>(1, options_.placement_query_batch_pages);
  uint64_t found = 0, queried = 0;
  auto flush = [&]() {
    if (sweep_pages_.empty()) return;
    sweep_status_.assign(sweep_pages_.size(), -1);
    queried += sweep_pages_.size();
    if (view.QueryNodes(sweep_pages_, absl::MakeSpan(sweep_status_)) >= 0) {
      for (size_t i = 0; i < sweep_pages_.size(); ++i) {
        if (!IsFastNode(sweep_status_[i])) continue;
        victims->push_back(victim(sweep_pages_[i], sweep_status_[i]));
        ++found;
      }
    }
    sweep_pages_.clear();
  };
  uint64_t next = sweep_cursor_;
  bool done = false;
  for (const NumaMapsRange* r : order) {
    // The range holding the cursor resumes there; the others (the ones
    // after it, and those wrapped round to the end) start at their start.
    uint64_t a = r->start < sweep_cursor_ && sweep_cursor_ < r->end
                     ? sweep_cursor_ & ~uint64_t{4095}
                     : r->start;
    for (; a < r->end; a += 4096) {
      if (budget == 0 || found >= want || view.Interrupted()) {
        done = true;
        break;
      }
      if (is_tracked(a)) continue;
      sweep_pages_.push_back(a);
      --budget;
      if (sweep_pages_.size() >= batch) flush();
    }
    next = a;
    if (done) break;
  }
  flush();
  // Past the last range: start over at the next round.
  sweep_cursor_ = done ? next : 0;
  report.untracked_victims = found;
  report.swept_pages = queried;
  counters_.untracked_victims += found;
  counters_.swept_pages += queried;
}

void PolicyEngine::ApplyCountPrior(uint32_t count, double period,
                                   double window_s, bool candidate,
                                   PageHeat& h) const {
  if (!(window_s > 0)) return;
  const std::optional<PoissonBounds> b =
      prior_.Bounds(count / options_.sample_weight);
  if (!b) return;
  const double scale = period / window_s;
  if (candidate) {
    h.prior_lo = b->lo * scale;
  } else {
    h.prior_hi = b->hi * scale;
  }
  h.prior_count = static_cast<int32_t>(count / options_.sample_weight);
}

void PolicyEngine::RefreshHugeChunks(MemoryView& view) {
  huge_chunks_.clear();
  for (uint64_t c : view.HugeChunks())
    huge_chunks_.insert(c & ~((uint64_t{1} << 21) - 1));
}

}  // namespace hotpage
