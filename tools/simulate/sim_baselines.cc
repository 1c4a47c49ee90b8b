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
}

void TppPolicy::Start(uint64_t start_ns) {
  for (NodeState& n : nodes_) {
    n.rl_start_ns = start_ns;
    n.th_start_ns = start_ns;
  }
  if (options_.scanner) {
    // The mm's numa_next_scan starts scan_delay ahead (task_numa_work()).
    next_scan_ns_ = start_ns + options_.scan_delay_ns;
    scan_period_ns_ = ScanMinNs();  // task_scan_start(): no numa_group
  }
}

uint64_t TppPolicy::ScanMinNs() const {
  // task_nr_scan_windows(): the footprint in scan-size windows, rounded up;
  // task_scan_min(): floor = 1000 ms / (MAX_SCAN_WINDOW 2560 MB / scan size).
  const uint64_t window_pages =
      std::max<uint64_t>(options_.scan_size_bytes / kSimPageBytes, 1);
  const uint64_t windows =
      std::max<uint64_t>((pages_.size() + window_pages - 1) / window_pages, 1);
  const uint64_t scan_mb =
      std::max<uint64_t>(options_.scan_size_bytes >> 20, 1);
  const uint64_t floor_ns =
      scan_mb < 2560 ? 1000000000 / (2560 / scan_mb) : 1000000000;
  return std::max(floor_ns, options_.scan_period_min_ns / windows);
}

uint64_t TppPolicy::ScanMaxNs() const {
  const uint64_t window_pages =
      std::max<uint64_t>(options_.scan_size_bytes / kSimPageBytes, 1);
  const uint64_t windows =
      std::max<uint64_t>((pages_.size() + window_pages - 1) / window_pages, 1);
  return std::max(ScanMinNs(), options_.threshold_period_ns / windows);
}

void TppPolicy::Advance(uint64_t now_ns) {
  while (next_scan_ns_ <= now_ns) Scan(next_scan_ns_);
}

bool TppPolicy::IsArmed(uint64_t vaddr) const {
  const Page* p = pages_.Find(vaddr);
  return p != nullptr && p->armed;
}

void TppPolicy::Scan(uint64_t now) {
  // task_numa_work(): the next pass is due one period from now, set before
  // this one runs.
  mm_next_scan_ns_ = now + scan_period_ns_;
  next_scan_ns_ = mm_next_scan_ns_;
  if (scans_++ == 0) first_scan_ns_ = now;
  if (by_addr_.size() != pages_.size()) {
    for (uint32_t i = static_cast<uint32_t>(by_addr_.size()); i < pages_.size();
         ++i)
      by_addr_.push_back(i);
    std::sort(by_addr_.begin(), by_addr_.end(), [&](uint32_t a, uint32_t b) {
      return pages_[a].vaddr < pages_[b].vaddr;
    });
  }
  // `pages` counts the ranges that had a PTE changed, `virtpages` all of
  // them (8x); address-space holes between sampled pages count as ranges
  // without present pages.
  const uint64_t budget = options_.scan_size_bytes / kSimPageBytes;
  const uint64_t virt_budget = 8 * budget;
  auto first =
      std::lower_bound(by_addr_.begin(), by_addr_.end(), scan_offset_page_,
                       [&](uint32_t i, uint64_t page) {
                         return pages_[i].vaddr / kSimPageBytes < page;
                       });
  const uint64_t start_page =
      first == by_addr_.end() ? 0 : pages_[*first].vaddr / kSimPageBytes;
  bool changed = false;
  uint64_t walked = 0;
  for (auto it = first; it != by_addr_.end(); ++it) {
    Page& p = pages_[*it];
    const uint64_t page = p.vaddr / kSimPageBytes;
    const uint64_t span = page - start_page;
    if ((changed && span >= budget) || span >= virt_budget) {
      scan_offset_page_ = page;  // the next pass continues here
      ChargeScan(now, span);
      return;
    }
    walked = span + 1;
    // change_pte_range(): top-tier folios are skipped in tiering-only mode,
    // PROT_NONE PTEs are skipped (an armed page keeps its older stamp).
    const int node = memory().NodeOf(p.vaddr);
    if (node < 0 || memory().tier(node) == 0 || p.armed) continue;
    p.armed = true;
    p.last_sample_ns = now;  // folio_xchg_access_time()
    changed = true;
    ++pte_updates_;
  }
  // reset_ptenuma_scan(): the end of the address space starts a sequence.
  ++scan_seq_;
  scan_offset_page_ = 0;
  ChargeScan(now, walked);
}

void TppPolicy::ChargeScan(uint64_t now, uint64_t ptes) {
  // task_numa_work(): p->node_stamp += 32 * (the pass's runtime), so the
  // task's next pass (task_tick_numa(): runtime > node_stamp + period)
  // waits 32x the pass beyond the period.
  const uint64_t cost = ptes * options_.scan_ns_per_pte;
  scan_cost_ns_ += cost;
  stamp_ns_ = now + 32 * cost;
  next_scan_ns_ = std::max(mm_next_scan_ns_, stamp_ns_ + scan_period_ns_);
}

void TppPolicy::Placement(uint64_t now) {
  // task_numa_placement() runs once per sequence; its
  // update_task_scan_period() finds local + shared == 0 (every counted
  // fault in tiering mode is a remote, private promotion: the header says
  // why), doubles the period and pushes the next scan out.
  if (task_scan_seq_ == scan_seq_) return;
  task_scan_seq_ = scan_seq_;
  scan_period_ns_ = std::min(ScanMaxNs(), 2 * scan_period_ns_);
  mm_next_scan_ns_ = now + scan_period_ns_;
  next_scan_ns_ = std::max(mm_next_scan_ns_, stamp_ns_ + scan_period_ns_);
  ++period_doublings_;
}

uint32_t TppPolicy::IndexOf(uint64_t vaddr) {
  const auto [i, added] = pages_.FindOrAdd(vaddr);
  // A page placed before the trace was there for the scanner's first pass
  // (header: present_at_start).
  if (added && options_.scanner && options_.present_at_start && scans_ > 0) {
    pages_[i].armed = true;
    pages_[i].last_sample_ns = first_scan_ns_;
  }
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
  if (memory().tier(node) == 0) {
    // Only slow-tier pages are ever armed (a present_at_start page that
    // first touch put on a top tier was not).
    pages_[i].armed = false;
    return;
  }
  if (options_.scanner) {
    // A hint fault only for a page the scanner armed since its last one.
    Page& p = pages_[i];
    if (!p.armed) return;
    p.armed = false;
  }
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
  if (options_.scanner) {
    latency = now - p.last_sample_ns;  // since the scan that armed it
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
    if (options_.scanner) Placement(now);  // a counted fault
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
  if (!options_.scanner) return d;
  d.insert(d.end(), {{"scans", scans_},
                     {"pte_updates", pte_updates_},
                     {"stale_faults", stale_faults_},
                     {"period_doublings", period_doublings_},
                     {"scan_period_ms", scan_period_ns_ / 1000000},
                     {"scan_cost_ms", scan_cost_ns_ / 1000000}});
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
