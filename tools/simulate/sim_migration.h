// SimMigration: attach's Migrator (migrator/migrator.h), driven round by
// round in simulated time over a SimulatedMemory.
//
// The replay simulator's hotpage policy (sim_hotpage.h) hands it the
// engine's moves exactly as `hotpage attach` hands them to the Migrator
// thread, and the Migrator class is the same: its bounded queue and
// validity checks, batching, placement queries, one target node per move
// call, MB/s token bucket, CPU budget, ping-pong holds, ENOMEM back-offs
// and per-page accounting are the ones attach runs, with attach's
// MigratorOptions. Only what is below the Migrator differs:
//   - its PageMover is a SimulatedPageMover (simulated_page_mover.h): pages
//     move in the SimulatedMemory, and each move call takes its modelled
//     time on the clock;
//   - its Clock is a FakeClock that this class sets to each event's time;
//   - its target is ProcessHandle::ForSimulation(pid): it never exits and
//     its pid is never reused.
// tools/engine_equivalence_test checks that attach's path and this one
// make the same move_pages calls.
//
// Time. Attach's Migrator thread loops: run a round (RunOnce()), then sleep
// as the round says. Here the loop is an event cursor: RunUntil(t) runs, in
// order, every round that starts at or before t, each with the clock set to
// its start; the next one starts
//   kMore         when this one ended: after its move call's modelled time,
//                 or at once after a round that only queried or dropped;
//   kWaitLimit    `wait` later (rate limit or CPU budget);
//   kWaitForWork  never until a Submit() wakes it; `wait` later if a retry
//                 is due (the simulated kernel never answers -EBUSY, so no
//                 retry ever is);
//   kDone         never (the migrator ended; a simulated target cannot).
// Submit(requests, t) sets the clock to t first (the Migrator checks
// back-offs at Submit time) and wakes an idle migrator at t. The clock
// therefore goes backwards when a policy round at t falls inside a move
// call that started before t: migrator.h says how the Migrator takes that.
//
// MoveGate: the policy's memory view (SimulatedMemory::IsHeld and
// BackedOffNodes) asks the Migrator's ping-pong holds and back-offs at the
// view's time, as attach's LiveMemoryView asks the live Migrator.
//
// Thread-compatible: the simulation's one thread.

#ifndef HOTPAGE_TOOLS_SIMULATE_SIM_MIGRATION_H_
#define HOTPAGE_TOOLS_SIMULATE_SIM_MIGRATION_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/types/span.h"
#include "migrator/migrator.h"
#include "tools/base/clock.h"
#include "tools/simulate/simulated_memory.h"
#include "tools/simulate/simulated_page_mover.h"

namespace hotpage {

// The report's view of the migration: the Migrator's counters (requests
// in, refusals, failures by errno, calls, holds) and the mover's (pages that
// changed node, by tier).
struct SimMigrationStats {
  uint64_t submitted = 0;
  uint64_t dropped_queue_full = 0;
  uint64_t dropped_invalid = 0;
  uint64_t dropped_node_backoff = 0;  // at Submit()
  uint64_t skipped_node_backoff = 0;  // in a round
  uint64_t skipped_held = 0;
  uint64_t skipped_stale = 0;
  uint64_t already_on_target = 0;
  uint64_t failed_enoent = 0;
  uint64_t failed_enomem = 0;
  uint64_t query_calls = 0;
  uint64_t move_calls = 0;
  uint64_t pingpong_pages = 0;  // pages put on hold
  size_t queue_depth = 0;       // queued or in a round's work, now
  uint64_t promoted_pages = 0, demoted_pages = 0, lateral_pages = 0;
  uint64_t moved_bytes = 0;
};

class SimMigration : public MoveGate {
 public:
  // A test seam: given the simulated mover, returns the PageMover the
  // Migrator calls instead (one that records or alters the calls and
  // forwards them to it). It must outlive the SimMigration.
  using Interposer = std::function<PageMover*(PageMover* simulated)>;

  // `memory` must outlive this. The Migrator's buckets start full at
  // `start_ns`; its calls name `pid` (the simulated process's; the mover
  // does not check it). `interpose`: tests only; null in the simulator.
  SimMigration(const MigratorOptions& options, const MigrationCost& cost,
               SimulatedMemory* memory, pid_t pid, uint64_t start_ns,
               const Interposer& interpose = nullptr);

  // Migrator::Submit() at `now_ns`; returns how many were accepted.
  size_t Submit(absl::Span<const MoveRequest> requests, uint64_t now_ns);

  // Runs every round that starts at or before `now_ns`.
  void RunUntil(uint64_t now_ns);
  // When the next round starts; UINT64_MAX while idle.
  uint64_t NextEventNs() const { return idle_ ? UINT64_MAX : cursor_ns_; }
  bool idle() const { return idle_; }

  // MoveGate.
  bool IsHeld(uint64_t vaddr, uint64_t now_ns) const override;
  std::vector<int> BackedOffNodes(uint64_t now_ns) const override;
  std::vector<NodeQueued> QueuedMoves() const override;
  size_t ReleaseHolds(uint64_t now_ns) override;

  SimMigrationStats stats() const;
  Migrator& migrator() { return migrator_; }
  const SimulatedPageMover& mover() const { return mover_; }
  // Rounds run (RunOnce() calls).
  uint64_t rounds() const { return rounds_; }

 private:
  // One Migrator round at cursor_ns_; moves cursor_ns_ on or goes idle.
  void Step();

  FakeClock clock_;
  SimulatedPageMover mover_;
  Migrator migrator_;  // after clock_ and mover_, which it uses
  uint64_t cursor_ns_;
  bool idle_ = true;
  uint64_t rounds_ = 0;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_SIMULATE_SIM_MIGRATION_H_
