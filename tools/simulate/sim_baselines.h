// The replay simulator's baselines: what hotpage is measured against, in
// the same run over the same samples (first-touch is in sim_policy.h).
//
// oracle   For each interval, the hottest pages OF THAT INTERVAL (by sample
//          count, ties to the lower address) fill the tiers fastest first,
//          at no migration cost: an upper bound on the fast-tier share of
//          any policy that places pages once per interval. Its latency is
//          that placement's, loaded as MemoryPolicy scores (each tier's
//          demand over its summed peak bandwidth; the interval's mean
//          period per sample; no remote-package penalty): it bounds the
//          fast-tier share, not the latency (under a saturating stream a
//          latency-balancing placement beats it). It needs one
//          interval of lookahead, kept as per-page counts (bounded by the
//          pages touched in an interval). The pages entering the fast set
//          at each interval are reported as oracle_moves (informative,
//          never charged as migration).
//
// tpp      The kernel's NUMA balancing in memory-tiering mode
//          (numa_balancing=2, TPP) as Linux 6.12 implements it, with its
//          NUMA scanner (TppOptions::scanner = true):
//          - the scanner (kernel/sched/fair.c task_numa_work()): the first
//            pass runs sysctl_numa_balancing_scan_delay (1000 ms) after the
//            trace's first sample (the mm's numa_next_scan starts at
//            now + scan_delay); every pass sets the next one at now +
//            the task's scan period, then walks the address space from
//            where the last pass stopped and arms (change_prot_numa(): the
//            PTE made PROT_NONE) every present page on a slower tier that
//            is not armed already, stamping it with the scan time
//            (mm/mprotect.c change_pte_range(): folio_xchg_access_time()
//            for a non-top-tier folio; top-tier folios are skipped in
//            tiering-only mode, and PTEs already PROT_NONE are skipped, so
//            an armed page keeps its older stamp). A pass covers at most
//            sysctl_numa_balancing_scan_size (256 MB) of ranges it changed
//            and 8x that of address space (`pages`, `virtpages`); reaching
//            the end starts the next sequence (reset_ptenuma_scan()). The
//            simulated address space is the pages sampled so far, as one
//            VMA (6.12 scans a VMA its task did not fault on recently only
//            when nothing else is left, f169c62ff7cd, or after
//            nr_threads sequences: with one VMA it is always scanned);
//          - a hint fault happens only at the first sample of an armed
//            page (a sample is an access), which disarms it
//            (do_numa_page() restores the PTE whatever it decides);
//          - the scan period (task_scan_start()/task_scan_min()/
//            task_scan_max()): it starts at
//            max(sysctl_numa_balancing_scan_period_min / windows, 100 ms),
//            windows = footprint / scan size rounded up, and is bounded by
//            sysctl_numa_balancing_scan_period_max (60 s) / windows.
//            update_task_scan_period() runs at the first counted fault
//            after each new sequence (task_numa_placement()). In tiering
//            mode a fault on a slow-tier page is not counted
//            (task_numa_fault() returns early), so the counted faults are
//            the successful promotions, each remote (numa_migrate_check()
//            sets TNF_FAULT_LOCAL only for a page already on the CPU's
//            node) and private (a slow-tier folio's cpupid holds its access
//            time, so last_cpupid is -1: "first accesses are treated as
//            private"): local + shared == 0, and the period doubles (up to
//            the max) and pushes the next scan to now + period;
//          - should_numa_migrate_memory(): promote at once when the target
//            has free space enough (pgdat_free_space_enough(): free above
//            the promo watermark by max(1 GiB, 1/16 of the node): never
//            for a node of 1 GiB or less); otherwise the hot threshold
//            (numa_promotion_adjust_threshold(): its period starts at 0
//            and the kernel's ms clock starts 300 s below a wrap
//            (INITIAL_JIFFIES), so the first call adjusts at once: 1000 ->
//            1125 ms when few candidates came, then every
//            numa_balancing_scan_period_max_ms), the hint-fault latency
//            (numa_hint_fault_latency(): now - the scan stamp) below it,
//            and numa_promotion_rate_limit();
//          - target, watermark check and kswapd as below.
//
// tpp-ideal The same decisions without the scanner (TppOptions::scanner =
//          false; the model before the calibration against the real
//          kernel, tests/compare/calibrate.sh):
//          - promotion at the hint fault, i.e. at sample time: a sample of
//            a page on a slower tier is the hint fault; the page is a
//            candidate when the time since its previous sample is below
//            the hot threshold (kernel/sched/fair.c
//            should_numa_migrate_memory(): numa_hint_fault_latency() <
//            numa_balancing_hot_threshold_ms, default 1000 ms; the
//            previous sample stands for the scan that armed the fault),
//            or at once while the target has plenty of free memory
//            (pgdat_free_space_enough(): free above the promo watermark by
//            1/16 of the node; the kernel's 1 GiB floor is dropped because
//            the simulated nodes are scaled down);
//          - the threshold adjusts every numa_balancing_scan_period_max_ms
//            (60 s) as numa_promotion_adjust_threshold() does: one step of
//            2/16 of the default down when candidates exceeded the rate
//            limit's budget by 10%, up (to 2x) when below 90% of it;
//
// Both:    - candidates are rate-limited per target node and second
//            (numa_promotion_rate_limit(),
//            numa_balancing_promote_rate_limit_MBps = 65536 by default);
//          - the target is the accessing CPU's node (the first fast node
//            for a CPU the topology lacks); the move happens only if the
//            target stays above its high watermark after it
//            (mm/migrate.c migrate_balanced_pgdat()); otherwise kswapd is
//            woken and the promotion fails;
//          - kswapd: when a promotion into a node failed for room, it
//            demotes the node's least recently sampled pages to its
//            demotion target until free memory reaches the promo
//            watermark (allocations do not wake it: the allocator's fast
//            path falls back to the next node at the low watermark, and
//            SimulatedMemory's first touch does the same) (mm/vmscan.c:
//            pgdat_balanced() checks WMARK_PROMO in tiering mode;
//            shrink_folio_list() -> demote_folio_list()). Watermarks as
//            __setup_per_zone_wmarks() with watermark_scale_factor 10 and min
//            taken as 0: low = 0.1% of the node, high = 0.2%, promo = 0.3% (at
//            least 1, 2, 3 pages).
//          LRU: exact least-recently-sampled order per node (the kernel's
//          LRU approximates recency with accessed bits; samples stand for
//          accesses here).
//          Every parameter is the kernel's default sysctl (no constant is
//          fitted to a trace).
//
// memtis   Memtis (Lee et al., SOSP'23), as its kernel does by
//          default (htmm_* sysfs knobs):
//          - per-page sample counts in a 16-bin log2 histogram
//            (bin 0: count 0; bin b: counts in [2^(b-1), 2^b), capped at 15);
//          - hot threshold: the lowest bin whose pages, with every hotter
//            bin's, fit the fast tier (less its 2% free-space watermark);
//          - cooling: all counts halve every `cooling_samples` samples.
//            Memtis cools every 2M samples at its PEBS period of 199
//            (htmm_cooling_period). Traces come at any sample rate, so the
//            period is scaled to time: cmd_simulate.cc sets it to the
//            trace's samples per 4 s (4 s is about 2M samples at the
//            ~0.5M samples/s Memtis' sampler reaches within its 3% CPU
//            quota, and equals hotpage's own decay: counts halve every 4
//            one-second rounds, so both forget at the same pace);
//          - migration every 500 ms (htmm_promotion_period_in_ms and
//            htmm_demotion_period_in_ms): cold pages (below the threshold)
//            on the fast tier are demoted, coldest first, until every fast
//            node has its 2% free and room for the hot pages waiting on
//            slower tiers; those are then promoted, hottest first, to the
//            accessing CPU's node or another fast node with room above the
//            2% (the demotion watermark of the Memtis-derived mttm
//            kernel: 2% of the fast tier). No rate limit (kmigrated).

#ifndef HOTPAGE_TOOLS_SIMULATE_SIM_BASELINES_H_
#define HOTPAGE_TOOLS_SIMULATE_SIM_BASELINES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "policy/loaded_latency.h"
#include "tools/simulate/index_list.h"
#include "tools/simulate/sim_numa_scanner.h"
#include "tools/simulate/sim_policy.h"

namespace hotpage {

// --- shared by the peer models (here, sim_arms.h, sim_hemem.h) --------------

// A MemoryPolicy that acts every `period_ns` of trace time, as the peers'
// daemon threads and kernel timers do: Tick(t) for t = start + period,
// start + 2 period, ..., in order, each once the trace reaches t.
class PeriodicPolicy : public MemoryPolicy {
 public:
  PeriodicPolicy(std::string name, std::unique_ptr<SimulatedMemory> memory,
                 uint64_t period_ns)
      : MemoryPolicy(std::move(name), std::move(memory)),
        period_ns_(period_ns) {}
  void Start(uint64_t start_ns) final { next_tick_ns_ = start_ns + period_ns_; }
  uint64_t next_event_ns() const final { return next_tick_ns_; }
  void Advance(uint64_t now_ns) final {
    while (next_tick_ns_ <= now_ns) {
      Tick(next_tick_ns_);
      next_tick_ns_ += period_ns_;
    }
  }

 protected:
  // The policy's periodic work at `now_ns`.
  virtual void Tick(uint64_t now_ns) = 0;

 private:
  const uint64_t period_ns_;
  uint64_t next_tick_ns_ = UINT64_MAX;
};

// A peer model's per-page state: one Page per page sampled so far, in
// first-sample order, found by address. Pages are never dropped, so an
// index stays valid for the whole run (lists and scratch vectors hold
// indices). Page needs a `uint64_t vaddr` member, which FindOrAdd sets.
template <typename Page>
class SampledPages {
 public:
  // The index of the page that holds `vaddr`, and whether this call added
  // it (a default Page with the page-aligned vaddr, appended).
  std::pair<uint32_t, bool> FindOrAdd(uint64_t vaddr) {
    const uint64_t page = vaddr / kSimPageBytes;
    auto [it, added] =
        index_.try_emplace(page, static_cast<uint32_t>(pages_.size()));
    if (added) {
      Page p;
      p.vaddr = page * kSimPageBytes;
      pages_.push_back(p);
    }
    return {it->second, added};
  }
  // The page that holds `vaddr`; nullptr if it was never sampled.
  const Page* Find(uint64_t vaddr) const {
    auto it = index_.find(vaddr / kSimPageBytes);
    return it == index_.end() ? nullptr : &pages_[it->second];
  }
  size_t size() const { return pages_.size(); }
  Page& operator[](uint32_t i) { return pages_[i]; }
  const Page& operator[](uint32_t i) const { return pages_[i]; }
  typename std::vector<Page>::iterator begin() { return pages_.begin(); }
  typename std::vector<Page>::iterator end() { return pages_.end(); }

 private:
  std::vector<Page> pages_;
  absl::flat_hash_map<uint64_t, uint32_t> index_;  // page number -> pages_
};

// --- oracle -----------------------------------------------------------------

struct OracleTier {
  uint64_t pages = 0;             // capacity of the tier (all its nodes)
  double latency_ns = 0;          // capacity-weighted mean read latency
  double peak_bytes_per_sec = 0;  // its nodes' peaks (loaded_latency.h)
};
// The tiers of `memory`, fastest first.
std::vector<OracleTier> OracleTiersOf(const SimulatedMemory& memory);

class OraclePolicy : public SimPolicy {
 public:
  explicit OraclePolicy(std::vector<OracleTier> tiers);
  void OnSample(const Sample& s) override;
  PolicyTally EndInterval(uint64_t end_ns) override;

 private:
  const std::vector<OracleTier> tiers_;
  absl::flat_hash_map<uint64_t, uint64_t> counts_;    // page -> samples
  absl::flat_hash_set<uint64_t> fast_set_;            // last interval's
  std::vector<std::pair<uint64_t, uint64_t>> order_;  // scratch
  std::vector<uint64_t> tier_samples_;                // scratch
  uint64_t samples_ = 0;
  double accesses_ = 0;  // the interval's periods, summed
};

// --- tpp
// ----------------------------------------------------------------------

struct TppOptions {
  uint64_t hot_threshold_ns = 1000000000;  // numa_balancing_hot_threshold_ms
  uint64_t promote_rate_limit_mbps =
      65536;  // numa_balancing_promote_rate_limit_MBps
  uint64_t threshold_period_ns =
      60000000000;                 // numa_balancing_scan_period_max_ms
  double watermark_scale = 0.001;  // watermark_scale_factor 10 / 10000
  // true: "tpp", the NUMA scanner and the 6.12 details above; false:
  // "tpp-ideal".
  bool scanner = false;
  uint64_t scan_delay_ns = 1000000000;  // numa_balancing_scan_delay_ms
  uint64_t scan_period_min_ns =
      1000000000;  // numa_balancing_scan_period_min_ms
  // numa_balancing_scan_size_mb
  uint64_t scan_size_bytes = uint64_t{256} << 20;
  // The trace's pages were placed before it began (`--first-touch-node`:
  // hot_set_workload writes its whole area first): a page first sampled
  // after the scanner's first pass was present for that pass, which armed
  // it (an unsampled page made no access that would have disarmed it), so
  // it carries that pass's stamp. A pass covers the whole address space
  // whenever it spans less than the scan size (256 MB); larger traces are
  // approximated by the first pass's time.
  bool present_at_start = false;
  // The machine's cost of changing one PTE in a pass, for the scanner's 3%
  // CPU cap (task_numa_work(): "make sure tasks use at least 32x as much
  // time to run other code than they used here": the task's node_stamp
  // moves 32x the pass's runtime ahead, so its next pass waits that long
  // beyond the period). A pass walks every PTE of the span it covers. 0:
  // not modelled (on a server a 256 MB pass takes milliseconds, far below
  // the 1 s period); under emulation it is ~1000x that, and the cap, not
  // the period, spaces the passes (tests/compare/calibrate.sh measures it
  // in the guest: hot_set_workload's pte_ns).
  uint64_t scan_ns_per_pte = 0;
  // pgdat_free_space_enough()'s floor (scanner only; tpp-ideal drops it).
  uint64_t free_space_floor_bytes = uint64_t{1} << 30;
};

class TppPolicy : public MemoryPolicy {
 public:
  TppPolicy(std::unique_ptr<SimulatedMemory> memory, const TppOptions& options);
  void Start(uint64_t start_ns) override;
  uint64_t next_event_ns() const override {
    return scanner_ ? scanner_->next_scan_ns() : UINT64_MAX;
  }
  void Advance(uint64_t now_ns) override;
  std::vector<std::pair<std::string, uint64_t>> Details() const override;

  // The scanner's state (tests; tpp only).
  uint64_t scan_period_ns() const { return scanner_->scan_period_ns(); }
  uint64_t scan_seq() const { return scanner_->scan_seq(); }
  bool IsArmed(uint64_t vaddr) const;

 protected:
  void Access(const Sample& s, int node) override;

 private:
  static constexpr uint32_t kNil = IndexList::kNil;
  struct Page {
    uint64_t vaddr = 0;
    uint64_t last_sample_ns = 0;  // tpp-ideal
    bool sampled = false;
    int16_t lru_node = -1;  // the list it is on
    uint32_t prev = kNil, next = kNil;
  };
  struct NodeState {
    IndexList lru;  // LRU (head) .. MRU (tail)
    uint64_t low = 0, high = 0, promo = 0;
    // numa_promotion_rate_limit() / numa_promotion_adjust_threshold().
    uint64_t rl_start_ns = 0, rl_base = 0;
    uint64_t th_start_ns = 0, th_base = 0;
    bool th_started = false;    // tpp: the first adjustment happened
    uint64_t threshold_ns = 0;  // 0: the default
    uint64_t candidates = 0;    // PGPROMOTE_CANDIDATE
  };
  uint32_t IndexOf(uint64_t vaddr);
  void Unlink(uint32_t i);
  // Puts page i on `node`'s LRU list as its most recently used page.
  void MarkRecent(uint32_t i, int node);
  void HintFault(const Sample& s, uint32_t i, int node);
  bool FreeSpaceEnough(int node) const;
  uint64_t Threshold(NodeState& n, uint64_t now);
  bool RateLimited(NodeState& n, uint64_t now);
  // Demotes from `node` until its free memory reaches the promo watermark.
  void Kswapd(int node, uint64_t now);
  bool Move(uint32_t i, int to, uint64_t now);

  const TppOptions options_;
  std::vector<NodeState> nodes_;  // by node id
  SampledPages<Page> pages_;
  // tpp: which accesses are hint faults (sim_numa_scanner.h); null for
  // tpp-ideal, where every sample of a slow-tier page is one.
  std::unique_ptr<NumaScanner> scanner_;
  uint64_t rate_limit_pages_ = 0;
  uint64_t hint_faults_ = 0, candidates_ = 0, rate_limited_ = 0,
           unbalanced_ = 0;
  uint64_t promotions_ = 0, kswapd_runs_ = 0, kswapd_demotions_ = 0,
           kswapd_stuck_ = 0;
  uint64_t stale_faults_ = 0;
};

// --- memtis
// -------------------------------------------------------------------

struct MemtisOptions {
  uint64_t migration_period_ns =
      500000000;  // htmm_{promotion,demotion}_period_in_ms
  uint64_t cooling_samples =
      2000000;                   // htmm_cooling_period (scaled by the caller)
  double free_watermark = 0.02;  // free fraction kept on fast nodes
};

class MemtisPolicy : public PeriodicPolicy {
 public:
  static constexpr int kBins = 16;
  MemtisPolicy(std::unique_ptr<SimulatedMemory> memory,
               const MemtisOptions& options);
  std::vector<std::pair<std::string, uint64_t>> Details() const override;

  static int BinOf(uint32_t count);
  // The hot threshold bin for the current histogram (tests).
  int ThresholdBin() const;
  uint32_t CountOf(uint64_t vaddr) const;

 protected:
  void Access(const Sample& s, int node) override;

 private:
  struct Page {
    uint64_t vaddr = 0;
    uint32_t count = 0;
    uint32_t cpu = 0;  // of the latest sample
  };
  void Cool();
  // The migration, every migration_period_ns.
  void Tick(uint64_t now) override;

  const MemtisOptions options_;
  SampledPages<Page> pages_;
  uint64_t hist_[kBins] = {};
  uint64_t since_cooling_ = 0;
  uint64_t fast_capacity_ = 0;
  std::vector<uint32_t> hot_, cold_;  // scratch
  uint64_t coolings_ = 0, migrations_ = 0, promotions_ = 0, demotions_ = 0;
  uint64_t last_threshold_bin_ = 0;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_SIMULATE_SIM_BASELINES_H_
