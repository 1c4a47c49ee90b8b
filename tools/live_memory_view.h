// The policy engine's view of a live process (policy/engine.h MemoryView):
// page nodes from move_pages(2) queries, per-range policies from
// /proc/PID/numa_maps joined with /proc/PID/maps, free memory from each
// node's meminfo, and the migrator's back-off and ping-pong holds.
// `hotpage attach` uses it; tests drive it with a FakePageMover and a fake
// tree (tools/engine_equivalence_test.cc).
//
// ## Ranges: numa_maps is not read every round
//
// The kernel builds numa_maps by walking every page table of the process
// (fs/proc/task_mmu.c show_numa_map, to count N<node>=<pages>): ~15 ms
// per GiB resident natively, 6-43 ms of a 62-143 ms round in the TCG test
// guests, and a round delays every promotion by its length. /proc/PID/maps
// and statm walk no page table: tools/live_memory_view_benchmark (-c opt,
// a child with 1 and 4 GiB touched in 4 KiB pages, 44 VMAs) measured
// numa_maps with maps 12 ms and 37 ms a call, maps and statm 42-44 us at
// both sizes, a call between reads 45-49 us. So each Ranges() reads maps
// and statm and reads numa_maps only when
//   - nothing is cached (first round, or the last read failed),
//   - maps differs in any byte from the maps of the last full read (a VMA
//     mapped, unmapped, grown, split or merged: mmap, munmap, brk, mremap,
//     mprotect, and mbind or set_mempolicy_home_node over part of a VMA,
//     which splits it), or maps or statm is unreadable,
//   - the resident set (statm) differs from its value at the last full
//     read by more than RangesRefresh::rss_change of it, or
//   - the last full read is RangesRefresh::max_age old (10 s) or the
//     migrator's moved-page log lost pages since it (below).
// Otherwise it returns the last reading with each page the migrator moved
// since (Migrator::MovedSince) counted off its source node and onto its
// target in its range's pages_on_node (a 2 MiB page as 2 MiB / page
// size; a count never goes below 0).
//
// What may then be stale, and by how much:
//   - policies: only a change that leaves maps as it was, mbind(2) over
//     exactly a whole VMA already read (or a set_mempolicy(2) of the task,
//     shown on its default ranges), at most max_age;
//   - counts: pages the process itself faulted in or freed inside VMAs it
//     already had, net at most rss_change of its resident set, and pages
//     anything but this view's migrator moved (NUMA balancing, kswapd
//     demotion, reclaim, another tool), at most max_age; plus the pages
//     the migrator moved while numa_maps was being read, counted twice
//     (at most what it moves in one read: one 4 MiB batch, or the rate
//     limit times the read's length), never missed.
// Why that is safe: the rules read counts only as proportions or as
// "some pages there". Rule I (placement.h) gets every move of ours
// exactly as numa_maps would have shown it at the next read, so a
// round's planned moves are checked against the shares they change;
// pages the process faults into an interleave range land by its policy,
// in its ratio. The untracked sweep (PolicyEngine::SweepUntracked) uses
// the counts only to pick ranges to query page by page: a stale count
// costs query budget or delays a victim by at most max_age, and the
// sweep waits 10 s (the long window) before it starts anyway. The
// daemon's FairShareView sums the counts per node: with our moves
// applied, its "mine" is off only by the process's own faults and frees
// (bounded as above), the figure it already compared with a free memory
// read later. Without a migrator (--dry-run) nothing moves and the
// counts are as stale as the reading, within the same bounds.

#ifndef HOTPAGE_TOOLS_LIVE_MEMORY_VIEW_H_
#define HOTPAGE_TOOLS_LIVE_MEMORY_VIEW_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "migrator/migrator.h"
#include "migrator/move_requests.h"
#include "migrator/page_mover.h"
#include "policy/engine.h"
#include "policy/topology.h"
#include "tools/base/clock.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {

// Free bytes per node of `topology` now, from ReadNodeFreeBytes
// (tools/base/kernel/node_meminfo.h; nodes whose meminfo is missing or
// malformed are left out: unknown).
std::vector<NodeFree> ReadNodeFree(const KernelFs& fs,
                                   const Topology& topology);

// When Ranges() reads numa_maps again (the file comment).
struct RangesRefresh {
  // The longest a reading is used. 10 s: the engine's long window, before
  // which the untracked sweep does not start (EngineOptions), and a
  // tenth of the full reads at 1 s rounds. Zero: every round.
  absl::Duration max_age = absl::Seconds(10);
  // The share of the resident set (statm) by which it may change before
  // numa_maps is read again.
  double rss_change = 1.0 / 16;
};

class LiveMemoryView : public MemoryView {
 public:
  // Everything must outlive the view; `migrator` may be null (dry run: no
  // back-off, no holds, no moves to count); `clock` null: the real clock.
  LiveMemoryView(pid_t pid, PageMover* mover, const KernelFs* fs,
                 const Topology* topology, Migrator* migrator,
                 RangesRefresh refresh = {}, Clock* clock = nullptr);

  int QueryNodes(absl::Span<const uint64_t> pages,
                 absl::Span<int> status) override;
  // Unreadable or malformed numa_maps: no ranges (default policy); a
  // malformed maps file only loses the join (anonymous/file names). Not
  // read every call: the file comment.
  std::vector<NumaMapsRange> Ranges() override;
  // How the Ranges() calls so far were answered.
  struct RangesStats {
    uint64_t full_reads = 0;    // numa_maps read
    uint64_t cached_reads = 0;  // the last reading, with the moves since
    uint64_t moves_applied = 0;
  };
  const RangesStats& ranges_stats() const { return ranges_stats_; }
  std::vector<NodeFree> Free() override {
    return ReadNodeFree(*fs_, *topology_);
  }
  // The migrator's queued moves (migrator/move_requests.h); none without
  // one.
  std::vector<NodeQueued> QueuedMoves() override;
  std::vector<int> BackedOffNodes() override;
  bool IsHeld(uint64_t vaddr) override;
  size_t ReleaseHolds() override;
  // FindHugeChunks (tools/base/kernel/huge_chunks.h), at most
  // kMaxHugeChunks = 128 GiB of THP; errors: none.
  std::vector<uint64_t> HugeChunks() override;
  static constexpr size_t kMaxHugeChunks = 65536;

 private:
  const pid_t pid_;
  PageMover* const mover_;
  const KernelFs* const fs_;
  const Topology* const topology_;
  Migrator* const migrator_;
  const RangesRefresh refresh_;
  Clock* const clock_;

  // Reads numa_maps into ranges_, joined with `maps` (may be null).
  void ReadNumaMaps(const std::string* maps);
  // Counts the moves since moved_seq_ in ranges_; false if the log lost
  // some (then ranges_ must be read afresh).
  bool ApplyMoves();

  // The last reading (in address order) and what it was read with.
  std::vector<NumaMapsRange> ranges_;
  bool have_ranges_ = false;
  std::string maps_at_read_;
  uint64_t rss_at_read_ = 0;
  absl::Time read_at_ = absl::InfinitePast();
  uint64_t moved_seq_ = 0;        // the migrator's log, counted up to
  std::vector<MovedPage> moved_;  // MovedSince's buffer, sized once
  RangesStats ranges_stats_;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_LIVE_MEMORY_VIEW_H_
