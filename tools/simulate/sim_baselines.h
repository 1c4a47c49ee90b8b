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
//          (numa_balancing=2, TPP), as Linux 6.x implements it:
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
//          - candidates are rate-limited per target node and second
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
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "policy/loaded_latency.h"
#include "tools/simulate/sim_policy.h"

namespace hotpage {

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
};

class TppPolicy : public MemoryPolicy {
 public:
  TppPolicy(std::unique_ptr<SimulatedMemory> memory, const TppOptions& options);
  void Start(uint64_t start_ns) override;
  std::vector<std::pair<std::string, uint64_t>> Details() const override;

 protected:
  void Access(const Sample& s, int node) override;

 private:
  static constexpr uint32_t kNil = UINT32_MAX;
  struct Page {
    uint64_t vaddr = 0;
    uint64_t last_sample_ns = 0;
    bool sampled = false;
    int16_t lru_node = -1;  // the list it is on
    uint32_t prev = kNil, next = kNil;
  };
  struct NodeState {
    uint32_t head = kNil, tail = kNil;  // MRU .. LRU
    uint64_t low = 0, high = 0, promo = 0;
    // numa_promotion_rate_limit() / numa_promotion_adjust_threshold().
    uint64_t rl_start_ns = 0, rl_base = 0;
    uint64_t th_start_ns = 0, th_base = 0;
    uint64_t threshold_ns = 0;  // 0: the default
    uint64_t candidates = 0;    // PGPROMOTE_CANDIDATE
  };
  uint32_t IndexOf(uint64_t vaddr);
  void Unlink(uint32_t i);
  void PushFront(uint32_t i, int node);
  void HintFault(const Sample& s, uint32_t i, int node);
  bool FreeSpaceEnough(int node) const;
  uint64_t Threshold(NodeState& n, uint64_t now);
  bool RateLimited(NodeState& n, uint64_t now);
  // Demotes from `node` until its free memory reaches the promo watermark.
  void Kswapd(int node, uint64_t now);
  bool Move(uint32_t i, int to, uint64_t now);

  const TppOptions options_;
  std::vector<NodeState> nodes_;  // by node id
  std::vector<Page> pages_;
  absl::flat_hash_map<uint64_t, uint32_t> index_;
  uint64_t rate_limit_pages_ = 0;
  uint64_t hint_faults_ = 0, candidates_ = 0, rate_limited_ = 0,
           unbalanced_ = 0;
  uint64_t promotions_ = 0, kswapd_runs_ = 0, kswapd_demotions_ = 0,
           kswapd_stuck_ = 0;
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

class MemtisPolicy : public MemoryPolicy {
 public:
  static constexpr int kBins = 16;
  MemtisPolicy(std::unique_ptr<SimulatedMemory> memory,
               const MemtisOptions& options);
  void Start(uint64_t start_ns) override;
  uint64_t next_event_ns() const override { return next_migration_ns_; }
  void Advance(uint64_t now_ns) override;
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
  void Migrate(uint64_t now);

  const MemtisOptions options_;
  std::vector<Page> pages_;
  absl::flat_hash_map<uint64_t, uint32_t> index_;
  uint64_t hist_[kBins] = {};
  uint64_t since_cooling_ = 0;
  uint64_t next_migration_ns_ = UINT64_MAX;
  uint64_t fast_capacity_ = 0;
  std::vector<uint32_t> hot_, cold_;  // scratch
  uint64_t coolings_ = 0, migrations_ = 0, promotions_ = 0, demotions_ = 0;
  uint64_t last_threshold_bin_ = 0;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_SIMULATE_SIM_BASELINES_H_
