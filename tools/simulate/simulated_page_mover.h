// SimulatedPageMover: move_pages(2) over a SimulatedMemory, in simulated
// time. With a FakeClock it is the kernel under `hotpage simulate`'s
// Migrator: the simulator runs attach's Migrator class (migrator/migrator.h)
// unchanged, and this PageMover (migrator/page_mover.h) is the one thing
// that differs, as tcmalloc swaps its VirtualAllocator and Clock in tests.
//
//   Query  each page's node from SimulatedMemory::NodeOf (-ENOENT: never
//          touched). Takes no simulated time: a query is ~13x cheaper per
//          page than a move, and the cost model has always left it out.
//   Move   each page moves with SimulatedMemory::Move at the clock's time
//          (the call's start: the memory's ping-pong metric and its move
//          listener see that time). Every status is written - the target
//          node (also for a page already there, as move_pages reports it),
//          -ENOMEM (target full), -ENOENT, -EINVAL (a node without
//          capacity) - and the call returns 0: the simulated kernel never
//          answers -EBUSY, never gives up on a group and has no call-level
//          errors. Then the call takes its modelled time: the clock moves
//          on by MigrationCost::per_call_ns plus the pages'
//          SimulatedMemory::Move costs (at least 1 ns), and the fixed cost
//          is added to the memory's migration time (AddOverheadNs), so
//          SimMemoryCounters::migration_ns is the calls' whole modelled
//          time.
//
// CPU time. The kernel copies pages in the context of the thread that
// calls move_pages, so the clock's thread CPU time advances by the same
// modelled time and the Migrator's CPU budget (MigratorOptions::cpu_budget)
// applies as in attach. An upper bound: part of a call's fixed cost is
// waiting for an RCU grace period, not CPU. At attach's 256 MB/s with the
// default costs the migration uses ~16% of a core, under the 25% budget;
// a higher --rate-limit-mbps makes the budget bind, as it would in attach.
//
// Huge pages. SimulatedMemory knows 4 KiB pages only. A range marked with
// AddHugePage() is a transparent huge page: a Move naming any address in it
// moves its 512 base pages (as the kernel moves a THP whole), and its status
// is -ENOMEM if any of them did not fit (those that did stay moved), else
// the target node if any is there, else the first error (-ENOENT: none was
// ever touched). Query reports the node of the named address.
//
// Counters: what moved, by the tiers of source and target, in 4 KiB pages
// that changed node (a page already on its target does not count).
//
// Thread-compatible, unlike the live movers: the simulation's one thread
// drives the Migrator with RunOnce(), which calls the mover.

#ifndef HOTPAGE_TOOLS_SIMULATE_SIMULATED_PAGE_MOVER_H_
#define HOTPAGE_TOOLS_SIMULATE_SIMULATED_PAGE_MOVER_H_

#include <sys/types.h>

#include <cstdint>

#include "absl/container/flat_hash_set.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "migrator/page_mover.h"
#include "tools/base/clock.h"
#include "tools/simulate/simulated_memory.h"

namespace hotpage {

// Simulated ns <-> the absl::Time of the simulation's FakeClock (an
// arbitrary fixed epoch, FakeClock's default start: only differences
// matter). SimNs(SimTime(ns)) == ns.
inline absl::Time SimTime(uint64_t ns) {
  return absl::UnixEpoch() + absl::Hours(1) +
         absl::Nanoseconds(static_cast<int64_t>(ns));
}
inline uint64_t SimNs(absl::Time t) {
  return static_cast<uint64_t>(absl::ToInt64Nanoseconds(t - SimTime(0)));
}

struct SimulatedMoverCounters {
  uint64_t query_calls = 0;
  uint64_t move_calls = 0;
  // 4 KiB pages that changed node: to a faster tier, a slower one, the same.
  uint64_t promoted_pages = 0;
  uint64_t demoted_pages = 0;
  uint64_t lateral_pages = 0;
  uint64_t moved_bytes = 0;
  uint64_t move_ns = 0;  // modelled time of the move calls
};

class SimulatedPageMover : public PageMover {
 public:
  // `memory` and `clock` must outlive the mover; `clock` is advanced by
  // every Move call.
  SimulatedPageMover(SimulatedMemory* memory, FakeClock* clock,
                     const MigrationCost& cost)
      : memory_(memory), clock_(clock), cost_(cost) {}

  // Marks the 2 MiB range at `vaddr` (2 MiB aligned) as a huge page.
  void AddHugePage(uint64_t vaddr) { huge_.insert(vaddr & ~(kHugeBytes - 1)); }

  // PageMover. `pid` is not checked: the memory is one process's.
  long Query(pid_t pid, absl::Span<const uint64_t> pages,
             absl::Span<int> status) override;
  long Move(pid_t pid, absl::Span<const uint64_t> pages,
            absl::Span<const int> nodes, absl::Span<int> status) override;

  const SimulatedMoverCounters& counters() const { return counters_; }

 private:
  static constexpr uint64_t kHugeBytes = 2u << 20;

  // Moves one 4 KiB page at `now_ns`; adds its cost to *call_ns. Returns
  // its status.
  int MoveBasePage(uint64_t vaddr, int node, uint64_t now_ns,
                   uint64_t* call_ns);

  SimulatedMemory* const memory_;
  FakeClock* const clock_;
  const MigrationCost cost_;
  absl::flat_hash_set<uint64_t> huge_;  // 2 MiB-aligned bases
  SimulatedMoverCounters counters_;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_SIMULATE_SIMULATED_PAGE_MOVER_H_
