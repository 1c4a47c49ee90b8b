#include "tools/simulate/sim_baselines.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <map>

namespace hotpage {

// --- oracle -----------------------------------------------------------------

std::vector<OracleTier> OracleTiersOf(const SimulatedMemory& memory) {
  const LoadedLatencyModel model =
      LoadedLatencyModel::FromTopology(memory.topology());
  std::map<int, OracleTier> by_rank;
  std::map<int, double> weighted;
  for (int n : memory.nodes()) {
    OracleTier& t = by_rank[memory.tier(n)];
    t.pages += memory.capacity_pages(n);
    t.peak_bytes_per_sec += model.PeakBytesPerSec(n);
    weighted[memory.tier(n)] += memory.read_latency_ns(n) *
                                static_cast<double>(memory.capacity_pages(n));
  }
  std::vector<OracleTier> out;
  for (auto& [rank, t] : by_rank) {
    t.latency_ns = t.pages ? weighted[rank] / static_cast<double>(t.pages) : 0;
    out.push_back(t);
  }
  return out;
}

OraclePolicy::OraclePolicy(std::vector<OracleTier> tiers)
    : SimPolicy("oracle"), tiers_(std::move(tiers)) {}

void OraclePolicy::OnSample(const Sample& s) {
  ++counts_[s.vaddr / kSimPageBytes];
  ++samples_;
  accesses_ += static_cast<double>(std::max<uint64_t>(s.period, 1));
}

PolicyTally OraclePolicy::EndInterval(uint64_t end_ns) {
  PolicyTally t;
  t.samples = samples_;
  order_.clear();
  order_.reserve(counts_.size());
  for (const auto& [page, n] : counts_) order_.emplace_back(n, page);
  // Hottest first; ties to the lower address (a deterministic fast set).
  std::sort(order_.begin(), order_.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  size_t i = 0;
  absl::flat_hash_set<uint64_t> fast;
  tier_samples_.assign(tiers_.size(), 0);
  for (size_t tier = 0; tier < tiers_.size() && i < order_.size(); ++tier) {
    const bool last = tier + 1 == tiers_.size();
    for (uint64_t room = tiers_[tier].pages;
         i < order_.size() && (last || room > 0); ++i, --room) {
      const auto& [n, page] = order_[i];
      tier_samples_[tier] += n;
      t.idle_latency_ns_sum += tiers_[tier].latency_ns * static_cast<double>(n);
      if (tier == 0) {
        t.fast_samples += n;
        fast.insert(page);
        if (!fast_set_.contains(page)) ++t.oracle_moves;
      }
    }
  }
  const double per_sample =
      samples_ ? accesses_ / static_cast<double>(samples_) : 0;
  for (size_t tier = 0; tier < tiers_.size(); ++tier) {
    const double n = static_cast<double>(tier_samples_[tier]);
    const double u =
        Utilisation(DemandBytesPerSec(n * per_sample, interval_ns_),
                    tiers_[tier].peak_bytes_per_sec);
    t.latency_ns_sum += n * LoadedLatencyNs(tiers_[tier].latency_ns, u);
  }
  fast_set_ = std::move(fast);
  counts_.clear();
  samples_ = 0;
  accesses_ = 0;
  return t;
}

// --- tpp
// ----------------------------------------------------------------------

TppPolicy::TppPolicy(std::unique_ptr<SimulatedMemory> memory,
                     const TppOptions& options)
    : MemoryPolicy(options.scanner ? "tpp" : "tpp-ideal", std::move(memory)),
      options_(options) {
  int max_id = 0;
  for (int n : this->memory().nodes()) max_id = std::max(max_id, n);
  nodes_.resize(max_id + 1);
  for (int n : this->memory().nodes()) {
    NodeState& s = nodes_[n];
    const uint64_t cap = this->memory().capacity_pages(n);
    const uint64_t tmp =
        std::max<uint64_t>(static_cast<uint64_t>(static_cast<double>(cap) *
                                                 options_.watermark_scale),
                           1);
    s.low = tmp;
    s.high = 2 * tmp;
    s.promo = 3 * tmp;
  }
  // numa_balancing_promote_rate_limit_MBps << (20 - PAGE_SHIFT): pages/s.
  rate_limit_pages_ = options_.promote_rate_limit_mbps << (20 - 12);
  if (options_.scanner) {
    NumaScannerOptions o;
    o.scan_delay_ns = options_.scan_delay_ns;
    o.scan_period_min_ns = options_.scan_period_min_ns;
    o.scan_period_max_ns = options_.threshold_period_ns;
    o.scan_size_bytes = options_.scan_size_bytes;
    o.present_at_start = options_.present_at_start;
    o.scan_ns_per_pte = options_.scan_ns_per_pte;
    scanner_ = std::make_unique<NumaScanner>(this->memory(), o);
  }
}

void TppPolicy::Start(uint64_t start_ns) {
  for (NodeState& n : nodes_) {
    n.rl_start_ns = start_ns;
    n.th_start_ns = start_ns;
  }
  if (scanner_) scanner_->Start(start_ns);
}

void TppPolicy::Advance(uint64_t now_ns) {
  if (scanner_) scanner_->Advance(now_ns);
}

bool TppPolicy::IsArmed(uint64_t vaddr) const {
  const Page* p = pages_.Find(vaddr);
  return p != nullptr && scanner_ != nullptr &&
         scanner_->armed(static_cast<uint32_t>(p - &pages_[0]));
}

uint32_t TppPolicy::IndexOf(uint64_t vaddr) {
  const auto [i, added] = pages_.FindOrAdd(vaddr);
  if (added && scanner_) scanner_->AddPage(vaddr);
  return i;
}

void TppPolicy::Unlink(uint32_t i) {
  Page& p = pages_[i];
  if (p.lru_node < 0) return;
  nodes_[p.lru_node].lru.Unlink(pages_, i);
  p.lru_node = -1;
}

void TppPolicy::MarkRecent(uint32_t i, int node) {
  Unlink(i);
  pages_[i].lru_node = static_cast<int16_t>(node);
  nodes_[node].lru.PushBack(pages_, i);
}

bool TppPolicy::Move(uint32_t i, int to, uint64_t now) {
  Page& p = pages_[i];
  const SimulatedMemory::MoveResult r = memory().Move(p.vaddr, to, now);
  if (r.status != to) return false;
  // A migrated folio lands on the target's LRU (kept in recency order:
  // the kernel puts it at the head of its list).
  MarkRecent(i, to);
  return true;
}

void TppPolicy::Access(const Sample& s, int node) {
  const uint32_t i = IndexOf(s.vaddr);
  MarkRecent(i, node);
  // No kswapd here: an allocation that finds its node at the low watermark
  // falls back to the next node in the page allocator's fast path without
  // waking kswapd (SimulatedMemory leaves that band to migrations); kswapd
  // runs when a promotion finds no room (HintFault).
  // tpp: a hint fault only for a page the scanner armed since its last one
  // (an access from the top tier disarms it); tpp-ideal: every sample of a
  // slow-tier page.
  if (scanner_ ? !scanner_->Access(i, node) : memory().tier(node) == 0) return;
  HintFault(s, i, node);
}

bool TppPolicy::FreeSpaceEnough(int node) const {
  const uint64_t cap = memory().capacity_pages(node);
  // pgdat_free_space_enough(): max(1 GiB, present pages / 16) above promo
  // (tpp-ideal drops the 1 GiB floor for scaled-down nodes).
  const uint64_t enough =
      options_.scanner
          ? std::max(options_.free_space_floor_bytes / kSimPageBytes, cap / 16)
          : cap / 16;
  return memory().free_pages(node) > nodes_[node].promo + enough;
}

uint64_t TppPolicy::Threshold(NodeState& n, uint64_t now) {
  // numa_promotion_adjust_threshold().
  const uint64_t def = options_.hot_threshold_ns;
  // tpp: the first call adjusts (nbp_th_start is 0 and the kernel's ms
  // clock starts near a wrap, INITIAL_JIFFIES).
  const bool first = options_.scanner && !n.th_started;
  n.th_started = true;
  if (first || now - n.th_start_ns > options_.threshold_period_ns) {
    n.th_start_ns = now;
    const double ref_cand =
        static_cast<double>(rate_limit_pages_) *
        (static_cast<double>(options_.threshold_period_ns) / 1e9);
    const uint64_t diff = n.candidates - n.th_base;
    const uint64_t unit = def * 2 / 16;
    uint64_t th = n.threshold_ns ? n.threshold_ns : def;
    if (static_cast<double>(diff) > ref_cand * 11 / 10) {
      th = std::max(th - unit, unit);
    } else if (static_cast<double>(diff) < ref_cand * 9 / 10) {
      th = std::min(th + unit, def * 2);
    }
    n.th_base = n.candidates;
    n.threshold_ns = th;
  }
  return n.threshold_ns ? n.threshold_ns : def;
}

bool TppPolicy::RateLimited(NodeState& n, uint64_t now) {
  // numa_promotion_rate_limit(): candidates per target node per second.
  ++n.candidates;
  if (now - n.rl_start_ns > 1000000000) {
    n.rl_start_ns = now;
    n.rl_base = n.candidates;
  }
  return n.candidates - n.rl_base >= rate_limit_pages_;
}

void TppPolicy::HintFault(const Sample& s, uint32_t i, int node) {
  Page& p = pages_[i];
  const uint64_t now = s.time_ns;
  ++hint_faults_;
  uint64_t latency;
  if (scanner_) {
    latency = now - scanner_->armed_at_ns(i);  // since the pass that armed it
  } else {
    latency = p.sampled ? now - p.last_sample_ns : UINT64_MAX;
    p.sampled = true;
    p.last_sample_ns = now;
  }
  int target = memory().NodeOfCpu(s.cpu);
  if (target < 0 || !memory().is_fast(target) ||
      memory().capacity_pages(target) == 0) {
    if (memory().fast_nodes().empty()) return;
    target = memory().fast_nodes().front();
  }
  if (memory().tier(target) >= memory().tier(node)) return;
  NodeState& t = nodes_[target];
  if (FreeSpaceEnough(target)) {
    t.threshold_ns = 0;  // "workload changed, reset hot threshold"
  } else {
    if (latency >= Threshold(t, now)) {
      ++stale_faults_;
      return;
    }
    if (RateLimited(t, now)) {
      ++rate_limited_;
      return;
    }
  }
  ++candidates_;
  // migrate_balanced_pgdat(): the target must stay above its high
  // watermark; otherwise kswapd is woken and this promotion fails.
  if (memory().free_pages(target) < t.high + 1) {
    ++unbalanced_;
    Kswapd(target, now);
    return;
  }
  if (Move(i, target, now)) {
    ++promotions_;
    if (scanner_) scanner_->CountedFault(now);
  }
}

void TppPolicy::Kswapd(int node, uint64_t now) {
  ++kswapd_runs_;
  NodeState& n = nodes_[node];
  const std::vector<int>& targets = memory().DemotionTargets(node);
  while (memory().free_pages(node) < n.promo && n.lru.head != kNil) {
    const uint32_t victim = n.lru.head;
    bool moved = false;
    for (int to : targets) {
      if (memory().free_pages(to) == 0) continue;
      if (Move(victim, to, now)) {
        moved = true;
        break;
      }
    }
    if (!moved) {
      // Nowhere to demote (the kernel would reclaim to swap): stop.
      ++kswapd_stuck_;
      return;
    }
    ++kswapd_demotions_;
  }
}

std::vector<std::pair<std::string, uint64_t>> TppPolicy::Details() const {
  std::vector<std::pair<std::string, uint64_t>> d = {
      {"hint_faults", hint_faults_},
      {"candidates", candidates_},
      {"rate_limited", rate_limited_},
      {"promotions_unbalanced", unbalanced_},
      {"promotions", promotions_},
      {"kswapd_runs", kswapd_runs_},
      {"kswapd_demotions", kswapd_demotions_},
      {"kswapd_stuck", kswapd_stuck_},
  };
  if (!scanner_) return d;
  d.insert(d.end(), {{"scans", scanner_->scans()},
                     {"pte_updates", scanner_->pte_updates()},
                     {"stale_faults", stale_faults_},
                     {"period_doublings", scanner_->period_doublings()},
                     {"scan_period_ms", scanner_->scan_period_ns() / 1000000},
                     {"scan_cost_ms", scanner_->scan_cost_ns() / 1000000}});
  return d;
}

// --- memtis
// -------------------------------------------------------------------

MemtisPolicy::MemtisPolicy(std::unique_ptr<SimulatedMemory> memory,
                           const MemtisOptions& options)
    : PeriodicPolicy("memtis", std::move(memory), options.migration_period_ns),
      options_(options) {
  for (int n : this->memory().fast_nodes())
    fast_capacity_ += this->memory().capacity_pages(n);
}

int MemtisPolicy::BinOf(uint32_t count) {
  return count == 0
             ? 0
             : std::min(kBins - 1, static_cast<int>(std::bit_width(count)));
}

uint32_t MemtisPolicy::CountOf(uint64_t vaddr) const {
  const Page* p = pages_.Find(vaddr);
  return p == nullptr ? 0 : p->count;
}

void MemtisPolicy::Access(const Sample& s, int node) {
  const auto [i, added] = pages_.FindOrAdd(s.vaddr);
  if (added) ++hist_[0];
  Page& p = pages_[i];
  const int before = BinOf(p.count);
  if (p.count < UINT32_MAX) ++p.count;
  p.cpu = s.cpu;
  const int after = BinOf(p.count);
  if (after != before) {
    --hist_[before];
    ++hist_[after];
  }
  if (++since_cooling_ >= options_.cooling_samples) Cool();
}

void MemtisPolicy::Cool() {
  ++coolings_;
  since_cooling_ = 0;
  std::fill(std::begin(hist_), std::end(hist_), 0);
  for (Page& p : pages_) {
    p.count >>= 1;
    ++hist_[BinOf(p.count)];
  }
}

int MemtisPolicy::ThresholdBin() const {
  // Pages that fit: the fast tier less its free-space watermark.
  const uint64_t fit =
      fast_capacity_ -
      static_cast<uint64_t>(static_cast<double>(fast_capacity_) *
                            options_.free_watermark);
  uint64_t above = 0;
  int bin = kBins;  // nothing hot
  for (int b = kBins - 1; b >= 1; --b) {
    if (above + hist_[b] > fit) break;
    above += hist_[b];
    bin = b;
  }
  return bin;
}

void MemtisPolicy::Tick(uint64_t now) {
  ++migrations_;
  const int threshold = ThresholdBin();
  last_threshold_bin_ = static_cast<uint64_t>(threshold);
  SimulatedMemory& mem = memory();
  hot_.clear();
  cold_.clear();
  for (uint32_t i = 0; i < pages_.size(); ++i) {
    const int node = mem.NodeOf(pages_[i].vaddr);
    if (node < 0) continue;
    const bool hot = BinOf(pages_[i].count) >= threshold;
    const bool fast = mem.is_fast(node);
    if (hot && !fast) hot_.push_back(i);
    if (!hot && fast) cold_.push_back(i);
  }
  auto hotter = [&](uint32_t a, uint32_t b) {
    return pages_[a].count != pages_[b].count
               ? pages_[a].count > pages_[b].count
               : pages_[a].vaddr < pages_[b].vaddr;
  };
  std::sort(hot_.begin(), hot_.end(), hotter);
  std::sort(cold_.begin(), cold_.end(),
            [&](uint32_t a, uint32_t b) { return hotter(b, a); });
  const std::vector<int>& fast = mem.fast_nodes();
  auto wmark = [&](int n) {
    return static_cast<uint64_t>(static_cast<double>(mem.capacity_pages(n)) *
                                 options_.free_watermark);
  };
  auto room = [&](int n) {
    const uint64_t f = mem.free_pages(n), w = wmark(n);
    return f > w ? f - w : 0;
  };
  // Demote cold pages, coldest first, until each fast node keeps its
  // watermark and the fast tier has room for every waiting hot page.
  uint64_t total_room = 0;
  for (int n : fast) total_room += room(n);
  for (uint32_t i : cold_) {
    const int node = mem.NodeOf(pages_[i].vaddr);
    const bool below = mem.free_pages(node) < wmark(node);
    if (!below && total_room >= hot_.size()) continue;
    const uint64_t before = room(node);
    for (int to : mem.DemotionTargets(node)) {
      if (mem.Move(pages_[i].vaddr, to, now).status == to) {
        ++demotions_;
        total_room += room(node) - before;
        break;
      }
    }
  }
  // Promote hot pages, hottest first, into room above the watermark: the
  // accessing CPU's node first.
  for (uint32_t i : hot_) {
    int target = mem.NodeOfCpu(pages_[i].cpu);
    if (target < 0 || !mem.is_fast(target) || room(target) == 0) {
      target = -1;
      for (int n : fast) {
        if (room(n) > 0) {
          target = n;
          break;
        }
      }
    }
    if (target < 0) break;
    if (mem.Move(pages_[i].vaddr, target, now).status == target) ++promotions_;
  }
}

std::vector<std::pair<std::string, uint64_t>> MemtisPolicy::Details() const {
  return {
      {"cooling_samples", options_.cooling_samples},
      {"coolings", coolings_},
      {"migrations", migrations_},
      {"promotions", promotions_},
      {"demotions", demotions_},
      {"last_threshold_bin", last_threshold_bin_},
  };
}

}  // namespace hotpage
