// A policy engine's rounds as JSON Lines (`hotpage attach --rounds FILE`,
// `hotpage simulate --rounds FILE`): what each round saw and decided, and
// why; the evidence behind a run's stats or a row of the simulator's table.
// The moves are the round's plan (PlacementDecision), not their outcome:
// attach's migrator may still fail or skip one (its stats count those).
//
// One line per round (policy/engine.h RoundReport), in the rounds' order:
//   {"t_s": 2.25, "round": 9, "early": true, "room_round": false,
//    "change_window_s": 0.5, "change_unconfirmed": false,
//    "fast_share": 0.78, "fast_share_baseline": 0.89,
//    "bandwidth_bound": false, "fast_loaded_latency_ns": 121,
//    "next_loaded_latency_ns": 416, "horizon_s": 14.8,
//    "migration_cost_ns": 4832, "short_window_held": false,
//    "silences_doubted": false, "prior_zero_truncated": false,
//    "promoted_pages": 3, "demoted_pages": 24, "shed_pages": 0,
//    "promote_skipped": {"not_enough_evidence": 484},
//    "moves": [["0x7f3600042000", 4096, 2, 0, "promote", "swap",
//               "0x7f3a00001000"], ...]}
// t_s is seconds since `start_ns` (the trace's first sample; attach's
// start). A move is
// [vaddr, page bytes, from node, to node, reason, trigger, paired vaddr or
// null] with
// the names of policy/placement_types.h (PlacementReasonName,
// PlacementTriggerName; the skip reasons' SkipReasonName); a swap's
// promotion names the victim it displaced. Numbers are JsonWriter's
// (json_writer.h): exact, and the same bytes for the same run.
#ifndef HOTPAGE_TOOLS_ROUND_LOG_H_
#define HOTPAGE_TOOLS_ROUND_LOG_H_

#include <cstdint>
#include <string>

#include "policy/engine.h"

namespace hotpage {

// Appends `r` as one line (with its '\n') to `out`.
void AppendRoundLine(const RoundReport& r, uint64_t start_ns, std::string* out);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_ROUND_LOG_H_
