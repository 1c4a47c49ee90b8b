#include "tools/simulate/sim_migration.h"

#include <algorithm>
#include <cerrno>

#include "migrator/move_requests.h"
#include "migrator/process_handle.h"

namespace hotpage {
namespace {

uint64_t LaterNs(uint64_t now_ns, absl::Duration d) {
  // Truncated to whole ns, at least 1 ns later: the cursor always advances.
  return now_ns + static_cast<uint64_t>(
                      std::max<int64_t>(absl::ToInt64Nanoseconds(d), 1));
}

}  // namespace

SimMigration::SimMigration(const MigratorOptions& options,
                           const MigrationCost& cost, SimulatedMemory* memory,
                           pid_t pid, uint64_t start_ns,
                           const Interposer& interpose)
    : clock_(SimTime(start_ns)),
      mover_(memory, &clock_, cost),
      migrator_(options, ProcessHandle::ForSimulation(pid),
                interpose ? interpose(&mover_) : &mover_, &clock_),
      cursor_ns_(start_ns) {}

size_t SimMigration::Submit(absl::Span<const MoveRequest> requests,
                            uint64_t now_ns) {
  clock_.Set(SimTime(now_ns));
  const size_t n = migrator_.Submit(requests);
  if (n > 0 && idle_) {
    idle_ = false;
    cursor_ns_ = std::max(cursor_ns_, now_ns);
  }
  return n;
}

void SimMigration::RunUntil(uint64_t now_ns) {
  while (!idle_ && cursor_ns_ <= now_ns) Step();
}

void SimMigration::Step() {
  using Next = MigratorRound::Next;
  clock_.Set(SimTime(cursor_ns_));
  const MigratorRound r = migrator_.RunOnce();
  ++rounds_;
  // The round's move call, if any, advanced the clock by its modelled time.
  const uint64_t end_ns = SimNs(clock_.Now());
  switch (r.next) {
    case Next::kMore:
      cursor_ns_ = end_ns;
      break;
    case Next::kWaitLimit:
      cursor_ns_ = LaterNs(end_ns, r.wait);
      break;
    case Next::kWaitForWork:
      if (r.wait == absl::InfiniteDuration()) {
        idle_ = true;
        cursor_ns_ = end_ns;
      } else {
        cursor_ns_ = LaterNs(end_ns, r.wait);
      }
      break;
    case Next::kDone:
      idle_ = true;
      break;
  }
}

bool SimMigration::IsHeld(uint64_t vaddr, uint64_t now_ns) const {
  return migrator_.IsHeld(vaddr, SimTime(now_ns));
}

std::vector<NodeQueued> SimMigration::QueuedMoves() const {
  return hotpage::QueuedMoves(migrator_);
}

std::vector<int> SimMigration::BackedOffNodes(uint64_t now_ns) const {
  return migrator_.BackedOffNodes(SimTime(now_ns));
}

size_t SimMigration::ReleaseHolds(uint64_t now_ns) {
  return migrator_.ReleaseHolds(SimTime(now_ns));
}

SimMigrationStats SimMigration::stats() const {
  const MigratorStats m = migrator_.Snapshot();
  auto failed = [&](int err) -> uint64_t {
    auto it = m.failed_pages_by_errno.find(err);
    return it == m.failed_pages_by_errno.end() ? 0 : it->second;
  };
  SimMigrationStats s;
  s.submitted = m.submitted;
  s.dropped_queue_full = m.dropped_queue_full;
  s.dropped_invalid = m.dropped_invalid;
  s.dropped_node_backoff = m.dropped_node_backoff;
  s.skipped_node_backoff = m.skipped_node_backoff;
  s.skipped_held = m.skipped_held;
  s.skipped_stale = m.skipped_stale;
  s.already_on_target = m.already_on_target;
  s.failed_enoent = failed(ENOENT);
  s.failed_enomem = failed(ENOMEM);
  s.query_calls = m.query_calls;
  s.move_calls = m.move_calls;
  s.pingpong_pages = m.pingpong_pages;
  s.queue_depth = m.queue_depth + m.in_flight;
  const SimulatedMoverCounters& c = mover_.counters();
  s.promoted_pages = c.promoted_pages;
  s.demoted_pages = c.demoted_pages;
  s.lateral_pages = c.lateral_pages;
  s.moved_bytes = c.moved_bytes;
  return s;
}

}  // namespace hotpage
