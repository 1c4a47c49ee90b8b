// PingPongTracker: a bounded memory of recent page moves that spots pages
// moved back and forth, and holds them in place for a while.
//
// A "reversal" is a move that sends a page back to the node its previous
// recorded move took it from (A->B then B->A). A page whose reversals
// within `window` exceed `max_reversals` is held for `hold`: IsHeld() says
// so, the migrator refuses moves of it (counted), and the policy engine can
// ask before proposing one. Each page that goes on hold counts once in
// pingpong_pages().
//
// A hold is a judgement made under the workload's current regime: the
// page's evidence could not tell it from its competitors. When the caller
// learns that the regime changed (the policy engine's shift detector,
// policy/engine.h), ReleaseHolds() ends every hold at once, so pages held
// on the fast tier under the old hot set do not stay pinned there for the
// rest of `hold` (on gups_shift 1:8, 49 of the fast tier's 693 pages
// after the second shift). A page that keeps bouncing afterwards is held
// again after max_reversals more reversals.
//
// Memory is fixed: a 4-way set-associative table of `slots` entries (40
// bytes each; 16384 slots = 640 KiB) keyed by page number. When a set is
// full the entry moved least recently is forgotten (held entries last), so
// under a churn of more distinct pages than slots some ping-pong goes
// unseen; it never grows.
//
// Thread-safe: the migrator records from its thread while the policy asks
// IsHeld() from its own; one mutex, held for a few dozen nanoseconds.

#ifndef HOTPAGE_MIGRATOR_PINGPONG_H_
#define HOTPAGE_MIGRATOR_PINGPONG_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "tools/base/mutex.h"

namespace hotpage {

struct PingPongOptions {
  // Held once reversals within `window` exceed this: with 2, the fourth
  // move of A->B->A->B->A holds the page. <= 0 disables holding.
  int max_reversals = 2;
  absl::Duration window = absl::Seconds(60);
  absl::Duration hold = absl::Minutes(5);
  // Table entries; rounded up to a power of two, at least 4.
  size_t slots = 16384;
};

class PingPongTracker {
 public:
  explicit PingPongTracker(const PingPongOptions& options);

  // Records a completed move of the page at `page_addr` from node `from` to
  // node `to`. Returns true if this move put the page on hold.
  bool RecordMove(uint64_t page_addr, int from, int to, absl::Time now)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Puts the page on hold for `hold` from `now` without a move: a page the
  // kernel refused to move (-EACCES: mapped by other processes too), which
  // the policy would otherwise plan again every round (a victim that
  // never leaves: each round's swap then promoted its partner into a full
  // tier). Not counted in pingpong_pages(); ReleaseHolds() ends it like any
  // hold. A no-op with holding disabled (max_reversals <= 0).
  void Hold(uint64_t page_addr, absl::Time now, absl::Duration hold)
      ABSL_LOCKS_EXCLUDED(mu_);

  // True while the page is on hold.
  bool IsHeld(uint64_t page_addr, absl::Time now) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // Ends every hold at `now`: the pages may move again, and each starts a
  // fresh reversal window at `now` (the moves that held it no longer
  // count). Returns how many holds ended. Scans the table (O(slots)).
  size_t ReleaseHolds(absl::Time now) ABSL_LOCKS_EXCLUDED(mu_);

  // Pages put on hold so far (each hold counts once).
  uint64_t pingpong_pages() const ABSL_LOCKS_EXCLUDED(mu_);

  // Pages on hold at `now` (scans the table; for statistics).
  size_t HeldCount(absl::Time now) const ABSL_LOCKS_EXCLUDED(mu_);

  size_t slots() const { return num_slots_; }

 private:
  static constexpr int kWays = 4;
  struct Slot {
    uint64_t key = 0;  // page number + 1; 0 = empty
    int32_t last_from = -1;
    int32_t last_to = -1;
    int32_t reversals = 0;
    absl::Time window_start;
    absl::Time last_move;
    absl::Time held_until = absl::InfinitePast();
  };

  size_t SetIndex(uint64_t key) const;
  const Slot* Find(uint64_t key) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Slot* FindOrEvict(uint64_t key, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const PingPongOptions options_;
  size_t num_slots_ = 0;
  size_t set_mask_ = 0;
  mutable Mutex mu_;
  std::vector<Slot> slots_ ABSL_GUARDED_BY(mu_);
  uint64_t pingpong_pages_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace hotpage

#endif  // HOTPAGE_MIGRATOR_PINGPONG_H_
