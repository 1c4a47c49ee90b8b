// Migrator: moves pages of one target process between NUMA nodes, on its
// own thread, within a rate limit and a CPU budget, accounting for every
// page.
//
// Data flow: the policy engine decides moves and Submit()s them (any
// thread). A bounded queue holds them (full: the request is refused and
// counted, so a stalled migrator costs no memory). The migrator thread
// works in rounds; each round:
//   1. takes up to batch_pages requests (EBUSY retries that are due first);
//   2. drops pages on ping-pong hold and pages bound for a node that
//      answered ENOMEM (counted);
//   3. checks the target is still the same process (ProcessHandle:
//      pidfd + start time) and asks where the new pages are, with one
//      move_pages(nodes=NULL) call: unmapped (-EFAULT) and untouched
//      (-ENOENT) pages are dropped, pages already on their target or no
//      longer on from_node need no move;
//   4. picks the target node of the oldest request and moves as many pages
//      bound there as the byte token bucket allows, with one move_pages
//      call (the target re-checked just before it); one node per call lets
//      a call-level ENOMEM name its node;
//   5. reads per-page results: moved pages are accounted (by reason, bytes,
//      hot-to-moved time) and recorded for ping-pong detection; -EBUSY (and
//      pages the kernel did not reach) retry after retry_delay, doubling,
//      at most max_retries times; -ENOMEM backs the node off; -EFAULT /
//      -ENOENT drop; -EACCES (shared) is skipped and counted.
// Between rounds it sleeps on the rate limit, the CPU budget (its thread's
// CPU time, page copies included), the next due retry, or new work.
//
// Batch size. Every move call pays a fixed cost on all CPUs
// (lru_cache_disable(): an expedited RCU grace period and a drain of each
// CPU's LRU caches) plus the system call, then an mmap_lock round trip per
// page and, since Linux 6.3, one TLB flush per batch of up to 512 pages
// (migrate_pages_batch). This migrator adds per-batch costs of its own (the
// /proc/PID/stat checks, one query call). Measured (migrator/README.md):
// on this machine's kernel the call costs ~70 us + ~0.35 us per page
// without the copy, saturating at 1024 (4096 is no faster); in the TCG guest
// the fixed cost is ~3.6 ms, batch 1 runs at 0.4-9% of batch 1024, 64 at
// 20-80%, 4096 at 102-126%. 1024 pages per call (4 MiB) keeps the fixed
// share small; 4096 would be 16 MiB at once (64 ms of the default 256 MB/s)
// with four times as many pages isolated from the LRU at a time.
//
// Huge pages: a request with page_bytes = 2 MiB names the base address of a
// transparent huge page; the kernel moves the whole 2 MiB unit (moving any
// 4 KiB part of a THP moves all of it), and it is charged 2 MiB. If the range
// turned out to be 4 KiB pages only the first moves: the caller must know
// the page size (smaps, pagemap).
//
// Ending. Stop() ends the thread (pending work is abandoned and counted).
// The target exiting (ESRCH, the pidfd, or a call error - EINVAL for a
// zombie - after which the target is found gone) ends the work cleanly:
// state() == kTargetExited, status() OK. The pid naming another process
// ends it before any call on the new process: kPidReused. EPERM ends it:
// kFailed with a message naming CAP_SYS_NICE. After that Submit() refuses.
//
// Time. Every time the migrator reads (rate limit, CPU budget, retry delays,
// back-offs, ping-pong windows, hot-to-moved) comes from the injected Clock
// (tools/base/clock.h). `hotpage simulate` runs this class unchanged, one
// round at a time with RunOnce(), over a FakeClock and a PageMover that
// moves pages in simulated memory (tools/simulate/sim_migration.h); it sets
// the clock to each event's time, so the clock may go backwards between
// calls (a Submit() at a policy round that falls inside a move call's
// modelled time): the token buckets ignore time going backwards, and
// back-offs and holds are compared with whatever time is asked about.
//
// Threading. Submit(), Snapshot(), IsHeld(), ReleaseHolds(), node back-off
// calls, SetRateLimit() and WaitUntilIdle() are thread-safe. Locks: queue_mu_
// (queue, state, submit-side counters), stats_mu_ (worker counters),
// node_mu_ (back-offs) and the ping-pong tracker's own; queue_mu_ and
// stats_mu_ are never held together, node_mu_ and the tracker's are leaves
// (taken under either). Locks are std::mutex (tools/base/mutex.h) so TSan sees
// them. Round-private state (work list, retries, token buckets) belongs to the
// worker thread, or to the RunOnce() caller in synchronous mode.

#ifndef HOTPAGE_MIGRATOR_MIGRATOR_H_
#define HOTPAGE_MIGRATOR_MIGRATOR_H_

#include <sys/types.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "migrator/page_mover.h"
#include "migrator/pingpong.h"
#include "migrator/process_handle.h"
#include "migrator/stats.h"
#include "migrator/token_bucket.h"
#include "tools/base/clock.h"
#include "tools/base/mutex.h"

namespace hotpage {

inline constexpr uint32_t kBasePageBytes = 4096;
inline constexpr uint32_t kHugePageBytes = 2u << 20;

enum class MoveReason : uint8_t { kPromote, kDemote };

struct MoveRequest {
  uint64_t vaddr = 0;                    // aligned to page_bytes, not 0
  uint32_t page_bytes = kBasePageBytes;  // kBasePageBytes or kHugePageBytes
  int from_node = -1;  // where the policy saw it; -1: do not check
  int to_node = -1;    // >= 0, != from_node
  MoveReason reason = MoveReason::kPromote;
  // Where the policy planned it from, for accounting only
  // (QueuedBytesByNode): unlike from_node it is never checked, so a page
  // that moved meanwhile is still moved. -1: not known. (In the padding
  // after `reason`: the request stays 40 bytes.)
  int16_t planned_from = -1;
  // When the page was found hot (or cold); InfinitePast: at Submit().
  absl::Time hot_since = absl::InfinitePast();
};

// The window over which MigratorOptions::cpu_budget is averaged (the CPU
// token bucket's depth is the budget times this).
inline constexpr absl::Duration kMigratorCpuWindow = absl::Seconds(1);

struct MigratorOptions {
  // Requests waiting for the migrator thread; more are refused.
  size_t queue_capacity = 65536;
  // Pages per move_pages call (and per placement query); 1..65536.
  size_t batch_pages = 1024;
  // Migration rate limit in bytes per second; <= 0: unlimited. 256 MB/s is
  // about 2-3% of one DDR5 channel and keeps migration out of the way.
  double rate_limit_bytes_per_sec = 256e6;
  // Token bucket depth; 0: the largest of 50 ms of the rate, one batch of
  // 4 KiB pages (calls stay full) and 2 MiB (a huge page can always move).
  // Set explicitly: at least 2 MiB.
  double burst_bytes = 0;
  // Share of one CPU the migrator thread may use (0.25 = a quarter of a
  // core, averaged over ~1 s: a burst may take a whole core for a quarter
  // of a second, then the thread waits the debt out); <= 0: unlimited.
  // The window is a second, not 100 ms, so that a hot set found at once
  // (attach's first round) moves at once: under emulation (50-150 us a
  // page) 6144 pages took 1.1 s at a quarter core and 100 ms deep, the
  // largest part of the time to 90% after start in tests/compare.
  double cpu_budget = 0.25;
  // -EBUSY pages are retried after retry_delay, 2x, 4x, ...; then failed.
  int max_retries = 3;
  absl::Duration retry_delay = absl::Milliseconds(20);
  // Pages waiting for a retry; 0: queue_capacity.
  size_t retry_capacity = 0;
  // After -ENOMEM from a node, no moves to it for a while or until
  // ClearNodeBackoff(): enomem_backoff_first, doubled for each further
  // back-off of the node in a row, at most enomem_backoff. In a row: no
  // page moved to the node since the last one, which ended less than
  // enomem_backoff ago. So one ENOMEM (another process's allocation took
  // the room between the round's look at free memory and the move, and
  // the next round's demotions make it again) costs a second of
  // promotions, not ten; a node that keeps refusing is tried at 1, 2, 4,
  // 8, 10, 10 ... s. ZeroDuration enomem_backoff: only ClearNodeBackoff()
  // ends a back-off.
  absl::Duration enomem_backoff_first = absl::Seconds(1);
  absl::Duration enomem_backoff = absl::Seconds(10);
  PingPongOptions pingpong;
  // Pages in the moved-page log (Migrator::MovedSince), allocated once
  // (16 bytes each: 1 MiB at the default); 0: no log. 65536 pages is 256
  // MiB of 4 KiB moves, a second of the default rate limit: a reader
  // that drains it once a round (LiveMemoryView, 1 s rounds) loses
  // nothing at that rate, and one that loses pages learns it.
  size_t moved_log_pages = 65536;
};

// One page the migrator moved (the moved-page log, Migrator::MovedSince).
struct MovedPage {
  uint64_t vaddr = 0;
  uint32_t page_bytes = 0;
  int16_t from_node = -1;  // where its query found it; -1: not known
  int16_t to_node = -1;
};

// What one round did and what the thread should do next (RunOnce()).
struct MigratorRound {
  enum class Next {
    kMore,         // more work is ready: run again now
    kWaitForWork,  // idle until a Submit() or `wait` (next retry due)
    kWaitLimit,    // rate limit or CPU budget: wait `wait`
    kDone,         // the migrator ended (state() says why)
  };
  Next next = Next::kMore;
  absl::Duration wait = absl::ZeroDuration();  // Infinite: no retry pending
  size_t pages_moved = 0;
};

class Migrator {
 public:
  // `mover` and `clock` must outlive the migrator; `clock` null: the real
  // clock. The target's KernelFs must outlive it too.
  Migrator(const MigratorOptions& options, ProcessHandle target,
           PageMover* mover, Clock* clock = nullptr);
  ~Migrator();  // Stop()
  Migrator(const Migrator&) = delete;
  Migrator& operator=(const Migrator&) = delete;

  // Starts the thread. FailedPrecondition if started, stopped or run
  // synchronously before.
  absl::Status Start() ABSL_LOCKS_EXCLUDED(queue_mu_);

  // Ends the thread and abandons pending work (counted). Idempotent. Does
  // not change a terminal state (kTargetExited, kPidReused, kFailed).
  void Stop() ABSL_LOCKS_EXCLUDED(queue_mu_);

  // Queues requests; returns how many were accepted. Refusals are counted:
  // invalid, node backed off, queue full, migrator ended. Never blocks on
  // the migrator's work (only on the queue lock) and never allocates.
  size_t Submit(absl::Span<const MoveRequest> requests)
      ABSL_LOCKS_EXCLUDED(queue_mu_);
  bool Submit(const MoveRequest& request) ABSL_LOCKS_EXCLUDED(queue_mu_) {
    return Submit(absl::MakeConstSpan(&request, 1)) == 1;
  }

  // Waits until every accepted request is finished (moved, failed, dropped)
  // or the migrator ended. False on timeout.
  bool WaitUntilIdle(absl::Duration timeout) ABSL_LOCKS_EXCLUDED(queue_mu_);

  MigratorStats Snapshot() const
      ABSL_LOCKS_EXCLUDED(queue_mu_, stats_mu_, node_mu_);
  MigratorState state() const ABSL_LOCKS_EXCLUDED(queue_mu_);
  // OK unless kPidReused or kFailed; then what happened and what to do.
  absl::Status status() const ABSL_LOCKS_EXCLUDED(queue_mu_);

  // Ping-pong hold: true if moves of the page at `vaddr` are refused now
  // (at `now`: the simulator asks at its event's time).
  bool IsHeld(uint64_t vaddr) const { return IsHeld(vaddr, clock_->Now()); }
  bool IsHeld(uint64_t vaddr, absl::Time now) const;
  // Ends every ping-pong hold (PingPongTracker::ReleaseHolds): the policy
  // learned that the workload changed. Returns how many ended.
  size_t ReleaseHolds() { return ReleaseHolds(clock_->Now()); }
  size_t ReleaseHolds(absl::Time now);

  // ENOMEM back-off per target node. BackedOffNodes(): ascending ids.
  bool IsNodeBackedOff(int node) const ABSL_LOCKS_EXCLUDED(node_mu_);
  std::vector<int> BackedOffNodes() const ABSL_LOCKS_EXCLUDED(node_mu_) {
    return BackedOffNodes(clock_->Now());
  }
  std::vector<int> BackedOffNodes(absl::Time now) const
      ABSL_LOCKS_EXCLUDED(node_mu_);
  // E.g. when the node's free memory rose above a watermark.
  void ClearNodeBackoff(int node) ABSL_LOCKS_EXCLUDED(node_mu_);

  // Changes the MB/s limit (<= 0: unlimited); applied at the next round.
  void SetRateLimit(double bytes_per_sec) ABSL_LOCKS_EXCLUDED(queue_mu_);

  // Bytes of the pages it has moved so far onto any of `nodes` (`in`) and
  // off any of them (`out`), whatever the reason (a move between two of
  // `nodes` counts in both); moved pages only, not queued or failed ones.
  // Monotonic. For a caller that read where the pages were at some moment
  // (numa_maps) and needs the figure now: add in - out since that moment.
  // Thread-safe and cheap (one lock, a few map lookups; no stats copy).
  struct MovedBytes {
    uint64_t in = 0;
    uint64_t out = 0;
  };
  MovedBytes MovedBytesOf(absl::Span<const int> nodes) const
      ABSL_LOCKS_EXCLUDED(stats_mu_);

  // The moved-page log: every page moved gets the next sequence number
  // (the first 0) and a slot in a ring of MigratorOptions::moved_log_pages.
  // MovedSince copies the pages numbered `seq` and later that the ring
  // still holds into `out` (cleared first; reserve moved_log_pages in it
  // and it never allocates), oldest first, and returns the number the next
  // move will get: the `seq` of the next call. `*lost` says whether some
  // page numbered `seq` or later was overwritten before this call (or
  // there is no log): a reader keeping per-address counts current
  // (tools/live_memory_view.h) must then read them afresh. Thread-safe;
  // O(pages copied) under the stats lock.
  uint64_t MovedSince(uint64_t seq, std::vector<MovedPage>* out,
                      bool* lost) const ABSL_LOCKS_EXCLUDED(stats_mu_);
  // The number the next moved page will get (pages moved so far).
  uint64_t MovedCount() const ABSL_LOCKS_EXCLUDED(stats_mu_) {
    MutexLock lock(&stats_mu_);
    return moved_seq_;
  }

  // Bytes of the requests accepted and not yet done, by node: bound onto it
  // (`in`) and off it (`out`). Counted: the queue, by from_node, else by
  // planned_from (a request with neither counts onto its target only), and
  // the batch the worker has taken (taken_by_node_, as of its last take or
  // round end, by where its query found each page; a page moved in the
  // round counts until the round ends, which errs toward less room), and
  // the pages waiting for an EBUSY retry (as of the same moment: a retry is
  // a move still to come, possibly seconds later after its doublings).
  // Not counted: what failed for good. For a caller that reads free
  // memory while moves it asked for are still to come (a policy round
  // before the last round's moves are done: a move_pages copy costs 50-150
  // us a page under emulation, and a round's budget is a second of the rate
  // limit). Ascending node ids; nodes with nothing counted are left out.
  // O(queued requests + nodes) under the queue lock; allocates the result.
  std::vector<std::pair<int, MovedBytes>> QueuedBytesByNode() const
      ABSL_LOCKS_EXCLUDED(queue_mu_);

  // Synchronous mode, for tests and the simulator: runs one round on the
  // calling thread. Not with Start().
  MigratorRound RunOnce();

  const MigratorOptions& options() const { return options_; }
  const ProcessHandle& target() const { return target_; }

 private:
  struct Entry {
    MoveRequest req;
    absl::Time not_before;  // retries: not before this
    int attempts = 0;       // retries so far
    int actual_from = -1;   // node the last query saw
    bool queried = false;
    bool maybe_moved = false;  // a group that failed may have moved it
  };
  struct LaterFirst {
    bool operator()(const Entry& a, const Entry& b) const {
      return a.not_before > b.not_before;
    }
  };
  static constexpr int kErrnoSlots = 256;  // larger errnos count in the last
  struct Counters {
    uint64_t promoted_pages = 0, promoted_bytes = 0;
    uint64_t demoted_pages = 0, demoted_bytes = 0;
    uint64_t skipped_node_backoff = 0, dropped_retry_full = 0;
    uint64_t skipped_held = 0, skipped_stale = 0, already_on_target = 0;
    uint64_t shared_skipped = 0, skipped_duplicate = 0;
    std::array<uint64_t, kErrnoSlots> failed{};
    std::array<uint64_t, kErrnoSlots> call_errors{};
    uint64_t retries = 0, retries_exhausted = 0;
    uint64_t query_calls = 0, move_calls = 0;
    uint64_t pages_queried = 0, pages_attempted = 0;
    LatencyHistogram hot_to_moved;
    absl::Duration rate_limit_wait = absl::ZeroDuration();
    absl::Duration cpu_budget_wait = absl::ZeroDuration();
    absl::Duration cpu_time = absl::ZeroDuration();
    // Bytes moved onto / off each node (by node id): MovedBytesOf.
    std::map<int, uint64_t> moved_in_bytes, moved_out_bytes;
  };

  void ThreadMain();
  MigratorRound RunRound();
  MigratorRound DoRound(absl::Time now);
  bool Running() const ABSL_LOCKS_EXCLUDED(queue_mu_);
  void TakeWork(absl::Time now) ABSL_LOCKS_EXCLUDED(queue_mu_);
  void Admit(absl::Time now) ABSL_LOCKS_EXCLUDED(stats_mu_);
  // False (and the migrator ended) unless the target is still the same.
  bool CheckTarget() ABSL_LOCKS_EXCLUDED(queue_mu_);
  // After a call-level error `rc` (not ESRCH/EPERM): CheckTarget(), and
  // count the error if the target is gone (the call's pages are then
  // abandoned, not failed).
  bool TargetStillThere(long rc) ABSL_LOCKS_EXCLUDED(queue_mu_, stats_mu_);
  // Queries unqueried entries; false if the migrator ended.
  bool QueryPlacement(absl::Time now) ABSL_LOCKS_EXCLUDED(stats_mu_);
  // Moves the first `n` entries of `group` (indices into work_).
  bool MoveGroup(const std::vector<size_t>& group, size_t n, int node,
                 size_t* moved) ABSL_LOCKS_EXCLUDED(stats_mu_);
  void Moved(const Entry& e, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(stats_mu_);
  void Retry(Entry e, int err, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(stats_mu_);
  void Fail(int err) ABSL_EXCLUSIVE_LOCKS_REQUIRED(stats_mu_);
  void BackOffNode(int node, absl::Time now) ABSL_LOCKS_EXCLUDED(node_mu_);
  // A page moved to `node`: its next back-off is a first one again.
  void NodeTookPages(int node) ABSL_LOCKS_EXCLUDED(node_mu_);
  bool NodeBackedOffAt(int node, absl::Time now) const
      ABSL_LOCKS_EXCLUDED(node_mu_);
  // Ends the migrator in `state`; abandons pending work.
  MigratorRound End(MigratorState state, absl::Status status)
      ABSL_LOCKS_EXCLUDED(queue_mu_);
  // For a whole move_pages call that failed: ESRCH ends the work cleanly
  // (target exited), EPERM ends it with an error naming the capabilities.
  // Returns true if the migrator ended.
  bool EndOnCallError(long rc) ABSL_LOCKS_EXCLUDED(queue_mu_);
  void PublishInFlight() ABSL_LOCKS_EXCLUDED(queue_mu_);
  // taken_by_node_ from work_ and retry_ (the worker's, or the RunOnce
  // caller's).
  void TallyTaken() ABSL_EXCLUSIVE_LOCKS_REQUIRED(queue_mu_);
  // Drops from work_ every request for a page that a newer request in it
  // also names (a later policy round planned the page again while the
  // first was queued); returns how many. In one move_pages call the
  // kernel answers the second -EBUSY (the page is isolated for the first),
  // a retry for nothing.
  size_t DropDuplicates() ABSL_EXCLUSIVE_LOCKS_REQUIRED(queue_mu_);
  static bool Valid(const MoveRequest& r);

  const MigratorOptions options_;
  ProcessHandle target_;
  PageMover* const mover_;
  Clock* const clock_;
  PingPongTracker pingpong_;

  // Queue and lifecycle.
  mutable Mutex queue_mu_;
  // Signalled on new work, Stop(), a rate change, progress and the end;
  // waited on with queue_mu_ by the worker and WaitUntilIdle().
  CondVar cv_;
  std::vector<MoveRequest> ring_ ABSL_GUARDED_BY(queue_mu_);
  size_t head_ ABSL_GUARDED_BY(queue_mu_) = 0;
  size_t size_ ABSL_GUARDED_BY(queue_mu_) = 0;
  size_t in_flight_ ABSL_GUARDED_BY(queue_mu_) = 0;
  bool stop_requested_ ABSL_GUARDED_BY(queue_mu_) = false;
  bool threaded_ ABSL_GUARDED_BY(queue_mu_) = false;
  bool rate_changed_ ABSL_GUARDED_BY(queue_mu_) = false;
  double new_rate_ ABSL_GUARDED_BY(queue_mu_) = 0;
  MigratorState state_ ABSL_GUARDED_BY(queue_mu_) = MigratorState::kNotStarted;
  absl::Status status_ ABSL_GUARDED_BY(queue_mu_);
  uint64_t submitted_ ABSL_GUARDED_BY(queue_mu_) = 0;
  uint64_t dropped_queue_full_ ABSL_GUARDED_BY(queue_mu_) = 0;
  uint64_t dropped_invalid_ ABSL_GUARDED_BY(queue_mu_) = 0;
  uint64_t dropped_not_running_ ABSL_GUARDED_BY(queue_mu_) = 0;
  uint64_t dropped_node_backoff_ ABSL_GUARDED_BY(queue_mu_) = 0;
  uint64_t abandoned_ ABSL_GUARDED_BY(queue_mu_) = 0;
  // The bytes of work_ by node id (QueuedBytesByNode), tallied under the
  // queue lock whenever work_ changes hands.
  std::vector<MovedBytes> taken_by_node_ ABSL_GUARDED_BY(queue_mu_);
  std::thread worker_;

  // Worker counters.
  mutable Mutex stats_mu_;
  Counters counters_ ABSL_GUARDED_BY(stats_mu_);
  // The moved-page log (MovedSince): moved_seq_ pages logged so far, page
  // k in moved_log_[k % size].
  std::vector<MovedPage> moved_log_ ABSL_GUARDED_BY(stats_mu_);
  uint64_t moved_seq_ ABSL_GUARDED_BY(stats_mu_) = 0;

  // ENOMEM back-offs: node -> until (InfiniteFuture: until cleared) and
  // the last one's length, the base of the next in a row; zero once a page
  // moved to the node since (NodeTookPages), so the next is a first one
  // (MigratorOptions::enomem_backoff_first).
  struct NodeBackoff {
    absl::Time until;
    absl::Duration length;
  };
  mutable Mutex node_mu_;
  absl::flat_hash_map<int, NodeBackoff> backoff_ ABSL_GUARDED_BY(node_mu_);

  // Round-private: the worker thread's (or the RunOnce() caller's).
  std::vector<Entry> work_;
  // A min-heap on not_before (std::push_heap / pop_heap with LaterFirst): a
  // vector, so TallyTaken can read every entry.
  std::vector<Entry> retry_;
  size_t retry_capacity_;
  TokenBucket bytes_bucket_;
  TokenBucket cpu_bucket_;
  // Scratch space, sized once: rounds do not allocate.
  std::vector<uint64_t> addrs_;
  std::vector<int> nodes_;
  std::vector<int> status_buf_;
  std::vector<size_t> group_;
  std::vector<size_t> index_;
  std::vector<char> flags_;
  // TakeWork's duplicate check: (vaddr, page bytes, index in work_).
  std::vector<std::tuple<uint64_t, uint64_t, size_t>> by_page_;
};

}  // namespace hotpage

#endif  // HOTPAGE_MIGRATOR_MIGRATOR_H_
