// Fair shares of the fast tier between the daemon's workloads.
//
// Each workload may have a floor (fast memory it keeps however hot the
// others are) and a cap (fast memory it never holds more of), from the
// config (FastShare, bytes or percent of the fast tier). Equilibria
// (Meta, 2024: per-container protected and capped fast-memory shares on
// top of TPP, +52% over TPP under noisy neighbours) showed that without
// them a hot neighbour takes all of the fast tier. The rules, as the issue
// states them:
//   - a workload under its floor is never demoted for another's promotion;
//   - one above its cap is demoted first;
//   - between floor and cap, benefit decides: the fast bytes left after
//     every floor go to the workloads whose next fast byte is worth most
//     (the decision core's estimate: access rate per byte of the pages it
//     would promote), each up to its cap and its demand.
//
// FairShares() turns that into a target per workload each round: the fast
// bytes it may hold. The daemon's round then lets a workload promote while
// it is under its target and takes room from DemotionVictims(): workloads
// above their targets, those above their caps first, never one at or under
// its floor. Pure arithmetic: no I/O, no clock.

#ifndef HOTPAGE_TOOLS_DAEMON_FAIR_SHARE_H_
#define HOTPAGE_TOOLS_DAEMON_FAIR_SHARE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hotpage {

struct ShareInput {
  uint64_t floor_bytes = 0;         // resolved FastShare; 0: none
  uint64_t cap_bytes = UINT64_MAX;  // resolved; UINT64_MAX: none
  uint64_t fast_bytes = 0;          // on the fast tier now
  uint64_t demand_bytes = 0;        // fast bytes its hot set would use
  double benefit_per_byte = 0;      // value of its next fast byte
};

// Target fast bytes per workload (same order as `in`). Sum <= capacity.
// Floors come first, each up to what the workload wants or holds; if the floors
// alone exceed the capacity (byte floors on a smaller machine than the config
// assumed), they are scaled down in proportion, so every floor keeps the same
// fraction of itself. Then the demands by benefit (the file comment); what is
// still left after every demand stays with the workloads that hold it (each up
// to what it holds and its cap, highest benefit first), so a workload gives up
// fast memory only for another's demand. A target is at most max(demand,
// fast) and the cap.
std::vector<uint64_t> FairShares(uint64_t capacity_bytes,
                                 const std::vector<ShareInput>& in);

// Which workloads may give up fast pages so that `promoter` can promote,
// in the order to take from: those above their cap, by how far; then those
// above their target (and above their floor) by lowest benefit per byte.
// Never the promoter itself, never one at or under its floor, never one at
// or under its target. Empty when the promoter is at or above its target
// (it must make room among its own pages).
std::vector<size_t> DemotionVictims(const std::vector<ShareInput>& in,
                                    const std::vector<uint64_t>& targets,
                                    size_t promoter);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_DAEMON_FAIR_SHARE_H_
