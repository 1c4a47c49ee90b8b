// Loaded latency: what a memory access costs when the node serving it is
// busy, as a pure function of the node's bandwidth utilisation, plus the
// extra cost of reaching DRAM of the other CPU package.
//
// Why. A placement that puts every hot page on the fastest tier assumes
// that tier stays fastest however much traffic it serves. It does not: a
// memory controller queues requests, and near its peak bandwidth the
// queueing delay dominates. Colloid (Vuppalapati and Agarwal, "Tiered
// Memory Management: Access Latency is the Key!", SOSP'24, section 2)
// measured the default tier's loaded latency reaching 2.5x the alternate
// tier's under moderate contention, and prior systems running up to 2.3x
// slower than the best placement because of it. The engine's bandwidth
// rule (policy/engine) and the replay simulator's scoring
// (tools/simulate) both use this file, so that they agree on what a
// placement costs.
//
// How the pieces fit:
//
//   samples of an interval --DemandBytesPerSec()--> demand per node
//   demand / peak (HMAT read bandwidth) --------> utilisation u
//   u --LoadedLatencyNs()--> the node's latency under that load
//   + RemotePenaltyNs(cpu node, memory node)   (SLIT: the other package)
//
// LoadedLatencyModel gathers the per-node inputs (idle latency, peak
// bandwidth, SLIT distances) from a Topology once; everything else is a
// free function. No clocks, no I/O, no allocation after construction:
// callers measure time and count samples themselves.
//
// Demand. A PEBS-style sample stands for `period` qualifying accesses
// (Sample::period); each is one 64-byte cache line from memory. Over an
// interval of T ns the demand a node served is
//     sum over the samples it served of period * 64 B / T.
// Accesses the sampler does not count (prefetches, writebacks, accesses
// below its latency threshold) are not in it, so this is a lower bound of
// the node's real traffic.
//
// The curve. The queueing delay of a memory controller follows an
// M/D/1-like queue (near-constant service time per line; Pollaczek-
// Khinchine mean wait u / (2 (1 - u)) service times):
//     L(u) = L0 * (1 + a * u' / (1 - u')),   u' = min(u, kMaxUtilisation)
// with L0 the idle latency (HMAT read latency: what Intel MLC reports as
// idle latency), a = S / (2 L0) for a service time S, and u capped at 0.95
// because a demand above the peak cannot be served (the excess waits; the
// cap bounds the model where the queue would have no steady state).
//
// Published points and the fit:
//   P1  u = 0: L = L0 (idle latency, by definition).
//   P2  Colloid SOSP'24 (section 2, figure 2 and text): under contention
//       the default (local DRAM) tier's loaded latency reaches 2.5x the
//       alternate (remote-socket DRAM) tier's, whose idle latency is twice
//       the local one on their Ice Lake testbed (the latency floors of
//       their monitor, colloid-mon: 70 ns local, 140 ns remote). So a
//       saturated tier runs at 2.5 * 2 = 5.0x its idle latency. Taking
//       "saturated" as u = kMaxUtilisation:
//           1 + a * 0.95 / 0.05 = 5.0   =>   a = 4 / 19 = 0.2105
//       (S = 0.421 L0: about 34 ns of a 80 ns DRAM access is the
//       controller's per-line service time, the rest is the fixed path).
//   P3  Consistency, not fitted: loaded latencies measured at peak
//       bandwidth on a two-package server with package-aware weighted
//       interleave, 436 ns (1.33 TB/s) against 545 ns (0.90 TB/s) with
//       global weights (the 2026 package-aware weighted-interleave
//       patches' MLC numbers): several times the ~100 ns idle latency of DDR5,
//       as the curve's 3-5x at u = 0.9-0.95. The idle latency of that machine
//       was not published with them, so they fix no parameter here.
// Resulting shape: 1.05x at u = 0.2, 1.21x at 0.5, 1.49x at 0.7, 1.84x at
// 0.8, 2.89x at 0.9, 5.0x at 0.95 and above: flat until about 60-70% of
// peak, then the knee, the shape of MLC's loaded-latency curves.
// loaded_latency_test checks P1 and P2 within 1% and monotonicity.
//
// Remote package. An access from a CPU of node c to memory node m whose
// HMAT numbers were measured from initiator h (its access0 initiator; m
// itself when it has CPUs) pays the interconnect hop on top of m's loaded
// latency:
//     penalty = L0(m) * (SLIT(c, m) / SLIT(h, m) - 1),  never below 0,
// SLIT being relative latency with 10 = local (ACPI 6.5, 5.2.17). For
// DRAM of the other package at SLIT 21 that is +110%, as the 2x of
// Colloid's local/remote floors above. The hop does not queue at m's
// controller, so it is added, not scaled by L(u); link contention (UPI) is
// not modelled.
//
// Balance (Colloid's rule, SOSP'24 section 3: place pages so that the
// tiers' loaded access latencies are equal). Given each node's demand, the
// demand to move from one group of nodes (the fast tier) to another (the
// next tier) so that both run at one latency L* is found by water-filling
// on the curve's inverse: a node runs at L exactly when it serves
//     D(L) = peak * UtilisationForFactor(L / L0)
// (DemandAtLatency), so at a level L the donors give up
//     shed(L)   = sum over donors of max(0, D_i - D_i(L))
// and the receivers take
//     absorb(L) = sum over receivers of max(0, D_j(L) - D_j);
// shed falls and absorb rises with L, and L* is where they meet
// (BalanceLatencies; bisection between the receivers' lowest and the
// donors' highest current latency). Above kMaxUtilisation the curve is
// flat, so a donor beyond it must first shed down to it before its
// latency falls, and a receiver never takes more than up to it. Remote
// package penalties are not part of the balance (they are a per-access
// cost, not a node's load).
//
// Marginal balance (BalanceMarginalLatencies). Colloid's equal latencies
// are not where the mean access latency is lowest. With demand D_i on node
// i, the accesses' total latency per second is sum_i D_i L_i(D_i), and
// moving a little demand from a node to another changes it by the
// difference of their MARGINAL latencies
//     M(D) = d(D L(D))/dD = L + D dL/dD = L0 (1 + a u (2 - u) / (1 - u)^2),
// which counts, besides the moved accesses' own latency, the queueing
// delay they add to (or take from) every other access of the node. The
// minimum of the total (hence of the mean, the total demand being fixed)
// is where the donors' and the receivers' marginal latencies are equal:
// the same water-filling as above on M's inverse,
//     u(M) = 1 - sqrt(a / (a + M / L0 - 1))
// (closed form: with v = 1 - u, a (1 - v^2) / v^2 = M / L0 - 1). M is
// above L wherever there is load, so the fast tier gives up more than
// Colloid's rule makes it: DRAM at 80 ns beside an idle 250 ns CXL node
// runs at 70% of its peak (M = 250 ns, L = 119 ns), not at Colloid's 91%
// (L = 250 ns). One catch: above kMaxUtilisation the curve is flat, so
// there M = L = 5 L0 and D L(D) is linear with a slope far below M's just
// under the cap (85 L0): the total is not convex, and a marginal balance
// alone can be a local optimum. BalanceMarginalLatencies therefore also
// tries shedding only a saturated donor's excess over the cap (linear
// cost: the receivers take it while their marginal is below the donor's
// 5 L0, the most expensive donor first) and moving nothing, and returns
// the cheapest of the three by the total above (TotalLatencyNsPerSec).
// loaded_latency_test checks it against a brute-force minimum.
//
// Nodes without HMAT data get the defaults below by tier rank (the repo's
// guest topologies, tests/testdata/sysfs: DRAM 80 ns / 20480 MB/s, CXL
// 250 ns / 8192 MB/s).
//
// Thread-compatible: a LoadedLatencyModel is immutable after FromTopology.

#ifndef HOTPAGE_POLICY_LOADED_LATENCY_H_
#define HOTPAGE_POLICY_LOADED_LATENCY_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "policy/topology.h"

namespace hotpage {

inline constexpr double kCacheLineBytes = 64;
// The utilisation at which the curve stops rising (see the file comment).
inline constexpr double kMaxUtilisation = 0.95;
// a in L(u) = L0 (1 + a u / (1 - u)), fitted to Colloid's 2.5x (P2).
inline constexpr double kQueueingCoefficient = 4.0 / 19.0;

// Defaults for nodes without HMAT data: the fastest tier, and every other.
inline constexpr double kDefaultFastLatencyNs = 80;
inline constexpr double kDefaultFastBytesPerSec = 20480e6;
inline constexpr double kDefaultSlowLatencyNs = 250;
inline constexpr double kDefaultSlowBytesPerSec = 8192e6;

// L(u) / L0: 1 at u <= 0, rising to 1 + a * 19 = 5 at kMaxUtilisation and
// above. Monotone non-decreasing.
double LoadedLatencyFactor(double utilisation);

// L(u) = idle_latency_ns * LoadedLatencyFactor(utilisation).
double LoadedLatencyNs(double idle_latency_ns, double utilisation);

// Bytes per second that `accesses` cache-line accesses (the sum of the
// samples' periods) over `interval_ns` represent; 0 for an empty interval.
double DemandBytesPerSec(double accesses, uint64_t interval_ns);

// demand / peak; 0 when the peak is unknown (<= 0).
double Utilisation(double demand_bytes_per_sec, double peak_bytes_per_sec);

// The inverse of LoadedLatencyFactor below its cap: the utilisation at
// which a node runs at `factor` x its idle latency (0 for factor <= 1,
// kMaxUtilisation for factor >= the cap's factor).
double UtilisationForFactor(double factor);

// M(u) / L0, the marginal latency of the file comment: d(D L(D))/dD over
// the idle latency. 1 at u <= 0; 1 + a u (2 - u) / (1 - u)^2 below
// kMaxUtilisation (85 just under it); above it the curve is flat and the
// marginal is LoadedLatencyFactor's 5. `below_cap` makes it the left
// limit (85) at and above the cap instead: the marginal of shedding into
// the convex part, which the water-filling uses.
double MarginalLatencyFactor(double utilisation, bool below_cap = false);

// The inverse of MarginalLatencyFactor below the cap: the utilisation at
// which a node's marginal latency is `factor` x its idle latency (0 for
// factor <= 1, kMaxUtilisation for factor >= the left limit at the cap).
double UtilisationForMarginalFactor(double factor);

// A node's demand, for BalanceLatencies.
struct NodeDemand {
  int node = -1;
  double bytes_per_sec = 0;
};

// The result of BalanceLatencies: the common latency both groups reach,
// and the demand that moves, in total and per donor node (the donors'
// order; each the node's demand above D(L*), scaled so they sum to
// moved_bytes_per_sec).
// BalanceMarginalLatencies fills the same fields; latency_ns is then the
// common MARGINAL latency (0 when it moves nothing or only a saturated
// donor's excess), and `absorbed` says what each receiver takes.
struct LatencyBalance {
  double latency_ns = 0;
  double moved_bytes_per_sec = 0;
  std::vector<NodeDemand> shed;      // one per donor, same order
  std::vector<NodeDemand> absorbed;  // one per receiver (marginal only)
};

struct NodeLatency {
  int node = -1;
  double idle_latency_ns = 0;     // HMAT read latency, or the default
  double peak_bytes_per_sec = 0;  // HMAT read bandwidth, or the default
  int home_node = -1;             // whose view HMAT numbers are from
  bool from_hmat = false;         // both numbers came from HMAT
};

class LoadedLatencyModel {
 public:
  LoadedLatencyModel() = default;
  // Every node of `topology` (memoryless ones included: they may be asked
  // about and answer with the defaults).
  static LoadedLatencyModel FromTopology(const Topology& topology);

  // nullptr for a node the topology lacks.
  const NodeLatency* Find(int node) const;
  // 0 for unknown nodes.
  double IdleLatencyNs(int node) const;
  double PeakBytesPerSec(int node) const;
  // The node's latency when it serves `demand_bytes_per_sec`.
  double LatencyNs(int node, double demand_bytes_per_sec) const;
  // The demand at which `node` runs at `latency_ns` (the inverse of
  // LatencyNs below the cap, file comment): 0 at or below its idle latency,
  // kMaxUtilisation x peak at or above the cap's latency; 0 for an unknown
  // node.
  double DemandAtLatency(int node, double latency_ns) const;
  // The node's marginal latency at `demand_bytes_per_sec` (file comment,
  // "Marginal balance"; `below_cap` as in MarginalLatencyFactor); 0 for an
  // unknown node.
  double MarginalLatencyNs(int node, double demand_bytes_per_sec,
                           bool below_cap = false) const;
  // The demand at which `node`'s marginal latency is `marginal_ns` (the
  // inverse below the cap); 0 for an unknown node.
  double DemandAtMarginal(int node, double marginal_ns) const;
  // The extra latency of an access from a CPU of `cpu_node` (see the file
  // comment); 0 when either node or a distance is unknown, or cpu_node < 0.
  double RemotePenaltyNs(int cpu_node, int mem_node) const;

  const std::vector<NodeLatency>& nodes() const { return nodes_; }

 private:
  std::vector<NodeLatency> nodes_;  // ascending node id
  // SLIT, row-major over nodes_ order; 0 where unknown.
  std::vector<int> distance_;
  int IndexOf(int node) const;
};

// The demand to move from `donors` to `receivers` so that their loaded
// latencies meet (file comment, "Balance"). Nothing moves (moved 0, every
// shed 0) when no donor runs slower than the fastest receiver. Unknown
// nodes count as idle with no capacity. O(iterations x nodes).
LatencyBalance BalanceLatencies(const LoadedLatencyModel& model,
                                absl::Span<const NodeDemand> donors,
                                absl::Span<const NodeDemand> receivers);

// sum over `nodes` of demand x loaded latency, in ns per second (divided
// by the total demand: the mean access latency). Unknown nodes add 0.
double TotalLatencyNsPerSec(const LoadedLatencyModel& model,
                            absl::Span<const NodeDemand> nodes);

// The demand to move from `donors` to `receivers` that minimises the
// total (hence the mean) loaded latency: equal marginal latencies, or a
// saturated donor's excess, or nothing, whichever is cheapest (file
// comment, "Marginal balance"). Nothing moves when no donor's marginal
// latency is above the cheapest receiver's. Unknown nodes count as idle
// with no capacity. O(iterations x nodes).
LatencyBalance BalanceMarginalLatencies(const LoadedLatencyModel& model,
                                        absl::Span<const NodeDemand> donors,
                                        absl::Span<const NodeDemand> receivers);

}  // namespace hotpage

#endif  // HOTPAGE_POLICY_LOADED_LATENCY_H_
