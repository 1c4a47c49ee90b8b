// SimulatedMemory: a tiered memory in a map, for `hotpage simulate` (the
// replay simulator) and for tests: what move_pages(2) and the nodes'
// meminfo are to `hotpage attach`.
//
// How the pieces fit:
//
//   trace sample --Touch()--> first-touch placement (the kernel's default
//        |                     local allocation, spilling by SLIT distance)
//        v
//   page -> node map  <--Move()-- a policy's migration (for the hotpage
//        |                        policy attach's Migrator, through a
//        |                        SimulatedPageMover: sim_migration.h; the
//        |                        baselines move directly), capacity
//        |                        enforced (-ENOMEM), cost and ping-pong
//        |                        accounted
//        v
//   MemoryView (policy/engine.h): QueryNodes from the map, Free() from the
//   capacities, holds and back-offs from an optional MoveGate (the
//   Migrator's ping-pong tracker and ENOMEM back-off, asked at the view's
//   time).
//
// Nodes and capacities. The nodes are a Topology's memory nodes; each has
// a capacity in 4 KiB pages given by the caller (the simulator scales the
// machine to the trace's footprint: ScaleMachine() in sim_machine.h), never
// exceeded: a first touch spills to the next node, a move fails like
// move_pages' per-page -ENOMEM. The Topology the engine sees should carry
// the same capacities as memory_bytes (its watermarks are fractions of
// them); ScaleMachine() returns both (SimMachine::topology and
// SimMachine::capacities).
//
// First touch (Touch): the node of the sampling CPU if it has memory and
// room; otherwise the nearest node with room by SLIT distance from it (ties
// to the lower id), as the kernel's zonelist fallback under the default
// local policy. A CPU the topology does not know (or kUnknownCpu) counts
// as the first node of the fastest tier. "Room" for an allocation means
// free pages above the node's low watermark (first_touch_reserve_fraction
// of it: the page allocator's fast path skips a zone below WMARK_LOW and
// falls back to the next, mm/page_alloc.c get_page_from_freelist()), while
// a migration may use the node to the last page (it allocates with the min
// watermark, which the simulation takes as 0).
//
// Cost model (documented in MigrationCost): each moved 4 KiB page costs
// per_page_ns (unmap, remap, TLB flush share) plus its copy, 4096 bytes at
// the smaller of the source's and the target's read bandwidth (HMAT, else
// derived from SLIT distance); callers add per-call costs (a move_pages
// call's fixed cost) with AddOverheadNs().
//
// Reclaim that demotes (SimulatedMemoryOptions::reclaim_demotes, the
// kernel's /sys/kernel/mm/numa/demotion_enabled): every node keeps its pages
// in a least-recently-touched list (each Touch is an access: a sample
// stands for accesses, as the tpp model's LRU; the kernel approximates
// recency with accessed bits). A move into a node with no free page first
// reclaims there, and a move that leaves the node below its low watermark
// (first_touch_reserve_fraction of it, at least a page) reclaims after it:
// the node's least recently touched pages go to its demotion targets until
// its free memory reaches the promo watermark, three times the low one (as
// kswapd in tiering mode balances a node to WMARK_PROMO, mm/vmscan.c
// pgdat_balanced(); watermark_scale_factor 10 and min taken as 0: low 0.1%,
// high 0.2%, promo 0.3%). First touch does not reclaim (the allocator's fast
// path falls back to the next node at the low watermark). A moved page
// joins the target's list as its most recent. Off: a move into a full node
// fails (-ENOMEM), as move_pages does where reclaim cannot demote.
//
// Ping-pong (the report's metric): a move that brings a page back to a tier
// it left at most pingpong_window_ns earlier counts once. This differs from
// PingPongTracker's hold rule (more than max_reversals reversals); the hold
// belongs to the migrator that enforces it.
//
// Memory: one hash-map entry (16 bytes of state) per page ever touched:
// bounded by the footprint, never by the trace's length.
//
// Thread-compatible: one thread drives a simulation.

#ifndef HOTPAGE_TOOLS_SIMULATE_SIMULATED_MEMORY_H_
#define HOTPAGE_TOOLS_SIMULATE_SIMULATED_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "policy/engine.h"
#include "policy/topology.h"
#include "tools/simulate/index_list.h"

namespace hotpage {

inline constexpr uint64_t kSimPageBytes = 4096;

// Where a migration's time goes. Defaults: per_page_ns is the kernel's
// work per migrated base page besides the copy (isolate, unmap, remap, its
// share of the batched TLB flush), about 2 us on current servers;
// per_call_ns is a move_pages(2) call's fixed cost, ~70 us measured on this
// project's host (migrator/README.md), charged by SimulatedPageMover only
// (the kernel's own migration paths, used by the tpp and memtis models,
// make no system call).
struct MigrationCost {
  uint64_t per_page_ns = 2000;
  uint64_t per_call_ns = 70000;
};

struct SimNodeCapacity {
  int node = -1;
  uint64_t pages = 0;  // 4 KiB pages; 0: the node takes no pages
};

struct SimulatedMemoryOptions {
  // One entry per topology node that takes pages; nodes not listed have
  // capacity 0.
  std::vector<SimNodeCapacity> capacities;
  MigrationCost cost;
  uint64_t pingpong_window_ns = 60000000000;  // 60 s, as PingPongOptions
  // Free pages first touch leaves on a node, as a fraction of it (rounded
  // down): the kernel's low watermark less its min, watermark_scale_factor
  // 10 / 10000 (mm/page_alloc.c __setup_per_zone_wmarks()).
  double first_touch_reserve_fraction = 0.001;
  // Pages expected (the footprint): the page map is sized once.
  size_t expected_pages = 0;
  // >= 0: first touch prefers this node instead of the sampling CPU's (then
  // falls back from it as usual), as an mbind(MPOL_PREFERRED) before the
  // first touch would: a trace whose pages started on a slow node
  // (tests/compare's workload is placed there).
  int first_touch_node = -1;
  // Ranges() reports the touched pages as anonymous default-policy ranges
  // (runs of pages less than 2 MiB apart, like the VMAs a process maps),
  // with their pages per node, as numa_maps would: for the engine's sweep
  // of pages it never sampled (EngineOptions::sweep_untracked_fast). Off:
  // no ranges (a trace records no VMAs; every other rule sees none).
  bool report_ranges = false;
  // The kernel demotes on reclaim (the file comment, "Reclaim that
  // demotes").
  bool reclaim_demotes = false;
};

// What a policy may not do now, asked at a simulated time (SimMigration
// answers from the Migrator's IsHeld / BackedOffNodes, as attach's
// LiveMemoryView asks the live Migrator), and the holds a policy ends
// (Migrator::ReleaseHolds).
class MoveGate {
 public:
  virtual ~MoveGate() = default;
  virtual bool IsHeld(uint64_t vaddr, uint64_t now_ns) const = 0;
  virtual std::vector<int> BackedOffNodes(uint64_t now_ns) const = 0;
  virtual size_t ReleaseHolds(uint64_t now_ns) = 0;
  // The moves accepted and not yet done (MemoryView::QueuedMoves).
  virtual std::vector<NodeQueued> QueuedMoves() const { return {}; }
};

// Running totals. Promotions and demotions compare the tier ranks of the
// source and the target; moves within a tier count as lateral.
struct SimMemoryCounters {
  uint64_t touched_pages = 0;     // first touches placed
  uint64_t spilled_pages = 0;     // ... not on their preferred node
  uint64_t unplaced_samples = 0;  // every node full (cannot happen with
                                  // the simulator's slack; counted)
  uint64_t promoted_pages = 0;
  uint64_t demoted_pages = 0;
  uint64_t lateral_pages = 0;
  uint64_t bytes_migrated = 0;
  uint64_t pingpongs = 0;
  uint64_t failed_enomem = 0;      // moves refused: target full
  uint64_t migration_ns = 0;       // modelled time spent migrating
  uint64_t reclaim_runs = 0;       // reclaims of a node (reclaim_demotes)
  uint64_t reclaim_demotions = 0;  // pages they demoted (in demoted_pages)
};

class SimulatedMemory : public MemoryView {
 public:
  // `topology` must outlive the memory. Errors: a capacity for a node the
  // topology lacks, no node with capacity.
  static absl::StatusOr<std::unique_ptr<SimulatedMemory>> Create(
      const Topology& topology, const SimulatedMemoryOptions& options);

  // The node of the page holding `vaddr`, placing it by first touch if it
  // has none yet (see the file comment). -ENOMEM if every node is full.
  // Allocation-free once the map holds expected_pages.
  int Touch(uint64_t vaddr, uint32_t cpu, uint64_t now_ns);

  // The node of the page holding `vaddr`, or -ENOENT (never touched).
  int NodeOf(uint64_t vaddr) const;

  struct MoveResult {
    int status = 0;        // the target node, or -errno (-ENOENT, -ENOMEM,
                           // -EINVAL for a node with no capacity)
    uint64_t cost_ns = 0;  // modelled time of this page's migration
  };
  // Moves the page holding `vaddr` to `to_node` at `now_ns`. A page
  // already there is a success that costs nothing (as move_pages reports
  // it).
  MoveResult Move(uint64_t vaddr, int to_node, uint64_t now_ns);

  // Adds modelled time not tied to a page (a system call's fixed cost).
  void AddOverheadNs(uint64_t ns) { counters_.migration_ns += ns; }

  // Called after every successful move that changed a page's node.
  using MoveListener =
      std::function<void(uint64_t now_ns, uint64_t vaddr, int from, int to)>;
  void set_move_listener(MoveListener l) { listener_ = std::move(l); }

  // The view's clock (holds and back-offs are asked about "now") and gate.
  void set_now(uint64_t now_ns) { now_ns_ = now_ns; }
  void set_gate(MoveGate* gate) { gate_ = gate; }

  // Per node. Unknown nodes: capacity 0, not fast, tier -1.
  uint64_t capacity_pages(int node) const;
  uint64_t used_pages(int node) const;
  uint64_t free_pages(int node) const;
  bool is_fast(int node) const;
  int tier(int node) const;  // rank, 0 = fastest; -1 unknown
  double read_latency_ns(int node) const;
  double bandwidth_bytes_per_sec(int node) const;
  // What Move() charges for one page from `from` to `to` (MigrationCost:
  // per_page_ns plus the copy at the smaller bandwidth); 0 for an unknown
  // node. For policies that weigh a move's cost before making it.
  uint64_t MoveCostNs(int from, int to) const;
  // Nodes with capacity, ascending id; and those of the fastest tier.
  const std::vector<int>& nodes() const { return nodes_; }
  const std::vector<int>& fast_nodes() const { return fast_nodes_; }
  // The node of `cpu` (-1 if none has it).
  int NodeOfCpu(uint32_t cpu) const;
  // Where the kernel's demotion would send a page from `node` (nodes of the
  // next slower tier, nearest first; memory-tiers.c node_demotion[]).
  const std::vector<int>& DemotionTargets(int node) const;

  const SimMemoryCounters& counters() const { return counters_; }
  size_t pages() const { return pages_.size(); }
  const Topology& topology() const { return topology_; }

  // Every page and its node, ascending address (tests, small memories).
  std::vector<std::pair<uint64_t, int>> Snapshot() const;

  // MemoryView.
  int QueryNodes(absl::Span<const uint64_t> pages,
                 absl::Span<int> status) override;
  std::vector<NumaMapsRange> Ranges() override;
  std::vector<NodeFree> Free() override;
  std::vector<NodeQueued> QueuedMoves() override;
  std::vector<int> BackedOffNodes() override;
  bool IsHeld(uint64_t vaddr) override;
  size_t ReleaseHolds() override;

 private:
  struct PageState {
    int16_t node = -1;
    int16_t left_tier = -1;          // tier of the last move's source
    uint32_t lru = IndexList::kNil;  // lru_pages_ index (reclaim_demotes)
    uint64_t left_ns = 0;            // when it left that tier
  };
  // A page on its node's list (reclaim_demotes).
  struct LruPage {
    uint64_t page = 0;  // page number
    uint32_t prev = IndexList::kNil, next = IndexList::kNil;
  };
  struct NodeState {
    uint64_t capacity = 0;
    uint64_t used = 0;
    uint64_t reserve = 0;  // left free by first touch
    int tier = -1;
    double latency_ns = 0;
    double bandwidth = 0;       // bytes per second
    std::vector<int> fallback;  // first-touch order from this node
    std::vector<int> demotion;  // demotion targets
    IndexList lru;              // least (head) .. most recently touched
  };

  SimulatedMemory(const Topology& topology,
                  const SimulatedMemoryOptions& options);
  const NodeState* Find(int node) const;
  NodeState* Find(int node);
  // reclaim_demotes: puts `page` at the tail of `node`'s list (taking it
  // off the list of `from`, -1: none), giving it a record if it has none.
  void MarkRecent(PageState& page, uint64_t page_number, int from, int node);
  // reclaim_demotes: demotes `node`'s least recently touched pages until
  // its free memory reaches the promo watermark.
  void Reclaim(int node, uint64_t now_ns);
  // Move() without reclaim.
  MoveResult MoveNow(PageState& page, uint64_t page_number, int to_node,
                     uint64_t now_ns);

  const Topology& topology_;
  const SimulatedMemoryOptions options_;
  std::vector<NodeState> node_state_;  // by node id
  std::vector<int> nodes_;
  std::vector<int> fast_nodes_;
  std::vector<int16_t> node_of_cpu_;
  absl::flat_hash_map<uint64_t, PageState> pages_;  // by page number
  std::vector<uint64_t> sorted_pages_;  // Ranges(): page numbers, ascending
  std::vector<LruPage> lru_pages_;      // reclaim_demotes: by PageState::lru
  bool reclaiming_ = false;
  SimMemoryCounters counters_;
  MoveListener listener_;
  MoveGate* gate_ = nullptr;
  uint64_t now_ns_ = 0;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_SIMULATE_SIMULATED_MEMORY_H_
