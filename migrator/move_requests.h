// The migrator's requests for one policy round (PlacementDecision ->
// MoveRequest), shared by `hotpage attach` and `hotpage simulate` so that
// both hand the Migrator the same queue.
//
// Order: every demotion of the round first, then the promotions (and
// locality moves), each group in the decision's order. DecideMoves puts a
// swap's demotion right before its promotion, but the Migrator moves one
// target node per call, the oldest request's, over a batch of 1024: with
// the decision's interleaved order a batch's promotions can run before the
// demotions that make their room and fail with ENOMEM, which backs the
// fast node off for 10 s (found by the replay simulator on a workload whose
// new allocations take the free room meanwhile). With the demotions first
// no promotion is attempted before the room it counts on was made.
//
// Each entry becomes 4 KiB requests (a 2 MiB entry that is not one huge
// page is 512 base pages; moving each is correct either way, a THP moves
// whole with its first), from_node -1 (the migrator checks where it is).

#ifndef HOTPAGE_MIGRATOR_MOVE_REQUESTS_H_
#define HOTPAGE_MIGRATOR_MOVE_REQUESTS_H_

#include <vector>

#include "absl/time/time.h"
#include "migrator/migrator.h"
#include "policy/placement.h"

namespace hotpage {

// Appends the round's requests to `out` (see the file comment). Each
// request's planned_from is the move's from_node, for QueuedMoves.
void AppendMoveRequests(const PlacementDecision& decision, absl::Time hot_since,
                        std::vector<MoveRequest>* out);

// The migrator's queued requests as the policy's MemoryView::QueuedMoves
// (policy/engine.h, "Queued moves"): attach's and simulate's views both
// answer with it.
std::vector<NodeQueued> QueuedMoves(const Migrator& migrator);

}  // namespace hotpage

#endif  // HOTPAGE_MIGRATOR_MOVE_REQUESTS_H_
