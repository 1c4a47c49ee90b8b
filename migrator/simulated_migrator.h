// SimulatedMigrator: the Migrator's semantics (migrator/migrator.h) in
// simulated time, over a SimulatedMemory. The replay simulator's hotpage
// policy hands it the engine's moves exactly as `hotpage attach` hands
// them to the Migrator thread, so the two differ only where the kernel
// would.
//
// What it keeps from the Migrator, with the same MigratorOptions:
//  - a bounded FIFO queue (queue_capacity requests; more are refused and
//    counted, as are invalid requests and targets on ENOMEM back-off);
//    requests still queued at the next policy round stay queued, and the
//    round may decide the same page again (the duplicate is found already
//    on its target when its turn comes, as the live query finds it);
//  - rounds: take up to batch_pages requests, drop pages on ping-pong hold
//    (PingPongTracker with options.pingpong) and targets backed off, query
//    where the pages are (never touched: dropped as -ENOENT; already on the
//    target: done; from_node >= 0 and elsewhere: stale), then move the
//    pages bound for the oldest request's node, one call;
//  - the MB/s limit: a TokenBucket of MigratorBurstBytes() depth; a round
//    waits for min(the group's bytes, the depth) tokens, then moves what the
//    tokens cover; tokens of pages that did not move are given back;
//  - per-page -ENOMEM backs the node off for enomem_backoff.
// What it models instead of measuring: each call takes
// cost.per_call_ns + the pages' SimulatedMemory::Move costs of simulated
// time, during which the migrator does nothing else (the Migrator's thread
// blocks in move_pages). Not modelled: the CPU budget (the simulated
// migrator's CPU time is its calls' modelled time, far below 25% of a core
// at 256 MB/s), -EBUSY retries (the simulated kernel never refuses a page
// for being busy), pid reuse.
//
// Time: RunUntil(t) performs, in order, every round that starts at or
// before t; NextEventNs() says when the next one starts (UINT64_MAX while
// idle). A Submit() at time s wakes an idle migrator at s.
//
// Thread-compatible: the simulation's one thread.

#ifndef HOTPAGE_MIGRATOR_SIMULATED_MIGRATOR_H_
#define HOTPAGE_MIGRATOR_SIMULATED_MIGRATOR_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <vector>

#include "absl/types/span.h"
#include "migrator/migrator.h"
#include "migrator/pingpong.h"
#include "tools/simulate/simulated_memory.h"
#include "migrator/token_bucket.h"

namespace hotpage {

struct SimulatedMigratorStats {
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
  uint64_t promoted_pages = 0, demoted_pages = 0, lateral_pages = 0;
  uint64_t moved_bytes = 0;
  uint64_t move_calls = 0;
  uint64_t rounds = 0;
  uint64_t rate_limit_waits = 0;
  uint64_t pingpong_pages = 0;  // pages put on hold
  size_t queue_depth = 0;       // now
};

class SimulatedMigrator : public MoveGate {
 public:
  // `memory` must outlive the migrator. The bucket starts full at
  // `start_ns`.
  SimulatedMigrator(const MigratorOptions& options, const MigrationCost& cost,
                    SimulatedMemory* memory, uint64_t start_ns);

  // Queues requests at `now_ns`; returns how many were accepted (see the
  // file comment for refusals).
  size_t Submit(absl::Span<const MoveRequest> requests, uint64_t now_ns);

  // Runs every round that starts at or before `now_ns`.
  void RunUntil(uint64_t now_ns);
  uint64_t NextEventNs() const { return idle_ ? UINT64_MAX : cursor_ns_; }
  bool idle() const { return idle_; }

  // MoveGate (what attach's LiveMemoryView asks the Migrator).
  bool IsHeld(uint64_t vaddr, uint64_t now_ns) const override;
  std::vector<int> BackedOffNodes(uint64_t now_ns) const override;

  SimulatedMigratorStats stats() const;
  const MigratorOptions& options() const { return options_; }

 private:
  struct Entry {
    MoveRequest req;
    bool queried = false;
    int actual_from = -1;
  };
  // One Migrator round at cursor_ns_; advances cursor_ns_ or goes idle.
  void Step();
  static bool Valid(const MoveRequest& r);
  bool BackedOff(int node, uint64_t now_ns) const;

  const MigratorOptions options_;
  const MigrationCost cost_;
  SimulatedMemory* const memory_;
  PingPongTracker pingpong_;
  TokenBucket bucket_;
  std::deque<MoveRequest> queue_;
  std::vector<Entry> work_;
  std::map<int, uint64_t> backoff_until_ns_;  // node -> until
  uint64_t cursor_ns_ = 0;
  bool idle_ = true;
  SimulatedMigratorStats stats_;
  std::vector<size_t> group_;  // scratch, sized once
  std::vector<char> done_;
};

// Simulated ns -> the absl::Time the token bucket and the ping-pong tracker
// take (an arbitrary fixed epoch: only differences matter).
absl::Time SimTime(uint64_t ns);

}  // namespace hotpage

#endif  // HOTPAGE_MIGRATOR_SIMULATED_MIGRATOR_H_
