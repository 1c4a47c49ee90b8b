// Migrator accounting: what moved, what failed and why, how long pages
// waited, and what the limits cost.
//
// MigratorStats is a plain snapshot value (Migrator::Snapshot() copies it
// under the migrator's locks); LatencyHistogram is the fixed-size
// log2-bucketed histogram behind the hot-to-moved times. Neither is
// thread-safe by itself.

#ifndef HOTPAGE_MIGRATOR_STATS_H_
#define HOTPAGE_MIGRATOR_STATS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "absl/time/time.h"

namespace hotpage {

// Durations in power-of-two microsecond buckets: bucket 0 holds < 1 us,
// bucket i holds [2^(i-1), 2^i) us; the last bucket is open-ended (>= 2^38
// us, about 3 days). Quantiles are bucket upper bounds (at most 2x high),
// capped by the largest value seen. 40 counters, no allocation.
class LatencyHistogram {
 public:
  static constexpr int kBuckets = 40;

  void Record(absl::Duration d);
  void Merge(const LatencyHistogram& other);

  uint64_t count() const { return count_; }
  absl::Duration max() const { return max_; }
  absl::Duration sum() const { return sum_; }
  absl::Duration Mean() const;
  // q in [0, 1]; zero for an empty histogram.
  absl::Duration Quantile(double q) const;
  const std::array<uint64_t, kBuckets>& buckets() const { return buckets_; }

  static int BucketOf(absl::Duration d);
  static absl::Duration BucketUpperBound(int bucket);

 private:
  std::array<uint64_t, kBuckets> buckets_{};
  uint64_t count_ = 0;
  absl::Duration sum_ = absl::ZeroDuration();
  absl::Duration max_ = absl::ZeroDuration();
};

enum class MigratorState {
  kNotStarted,  // constructed; Start() or RunOnce() not called yet
  kRunning,
  kStopped,       // Stop() was called
  kTargetExited,  // the target process exited: work ended cleanly
  kPidReused,     // the pid names another process now: nothing was done to it
  kFailed,        // a permanent error (EPERM, unverifiable target): status()
};
const char* MigratorStateName(MigratorState s);

struct MigratorStats {
  MigratorState state = MigratorState::kNotStarted;

  // Pages moved (status == target node after a move call), by reason.
  uint64_t promoted_pages = 0;
  uint64_t promoted_bytes = 0;
  uint64_t demoted_pages = 0;
  uint64_t demoted_bytes = 0;

  // Requests in.
  uint64_t submitted = 0;             // accepted by Submit()
  uint64_t dropped_queue_full = 0;    // refused: queue at capacity
  uint64_t dropped_invalid = 0;       // refused: bad size/alignment/nodes
  uint64_t dropped_not_running = 0;   // refused: migrator ended
  uint64_t dropped_node_backoff = 0;  // refused: target node backed off
  uint64_t dropped_retry_full = 0;    // an EBUSY retry found no room
  uint64_t abandoned = 0;             // still pending when the migrator ended

  // Requests that needed no move, or were refused on examination.
  uint64_t skipped_held = 0;          // the page is on ping-pong hold
  uint64_t skipped_node_backoff = 0;  // target node backed off meanwhile
  uint64_t skipped_stale = 0;         // not on from_node when queried
  uint64_t already_on_target = 0;     // already on to_node when queried
  // A newer request for the same page was taken with it (a later policy
  // round planned the page again while this one was queued): this one
  // was dropped.
  uint64_t skipped_duplicate = 0;
  uint64_t shared_skipped = 0;  // -EACCES: mapped by other processes too

  // Per-page final failures by errno (EBUSY after its retries, ENOMEM,
  // EFAULT, ENOENT, EACCES, ...; call-level failures count once per page of
  // the call here too).
  std::map<int, uint64_t> failed_pages_by_errno;
  // move_pages(2) calls that failed as a whole, by errno.
  std::map<int, uint64_t> call_errors_by_errno;
  uint64_t retries = 0;            // EBUSY / unreached pages re-queued
  uint64_t retries_exhausted = 0;  // gave up after max_retries

  // Ping-pong guard.
  uint64_t pingpong_pages = 0;  // pages put on hold (each hold once)
  uint64_t held_pages_now = 0;  // on hold at the snapshot

  // Work done.
  uint64_t query_calls = 0;
  uint64_t move_calls = 0;
  uint64_t pages_queried = 0;
  uint64_t pages_attempted = 0;  // named in move calls

  // Time from "hot" (MoveRequest::hot_since, default the Submit() time) to
  // the move call that moved the page returning.
  LatencyHistogram hot_to_moved;

  // Time the migrator waited for the MB/s limit and the CPU budget.
  absl::Duration rate_limit_wait = absl::ZeroDuration();
  absl::Duration cpu_budget_wait = absl::ZeroDuration();
  // CPU time of the migrator's thread spent in rounds (system calls and
  // page copies included).
  absl::Duration cpu_time = absl::ZeroDuration();

  // Occupancy at the snapshot.
  size_t queue_depth = 0;
  size_t queue_capacity = 0;
  size_t in_flight = 0;  // taken from the queue, not finished (retries too)

  uint64_t moved_pages() const { return promoted_pages + demoted_pages; }
  uint64_t moved_bytes() const { return promoted_bytes + demoted_bytes; }
  uint64_t failed_pages() const;
  // Accepted requests that have reached an end: moved, failed, skipped or
  // abandoned. Equals `submitted` when nothing is in flight (each accepted
  // request ends exactly once; dropped_retry_full and retries_exhausted are
  // also in failed_pages_by_errno, shared_skipped also under EACCES).
  uint64_t settled() const;
  uint64_t failed(int err) const;

  // One line, e.g. for logs and the VM test:
  // "state=running promoted=16384 (64.0 MiB) demoted=0 failed={EBUSY:2} ..."
  std::string ToString() const;
};

}  // namespace hotpage

#endif  // HOTPAGE_MIGRATOR_STATS_H_
