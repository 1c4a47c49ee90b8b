// The statistics that turn a hotness count into an access rate with a
// confidence interval: PoissonInterval (the Garwood interval of a count),
// RateWindow (the sample period and effective window that scale a count to
// accesses per second) and RateEstimate (the result). HotnessTable
// (hotness_table.h) reports its RateWindow; HotnessScanner (scanner.h)
// attaches a RateEstimate to every page it lists. Functions of their
// arguments only, thread-safe (PoissonInterval keeps a per-thread cache of
// the small-count limits at the last z).
//
// ## The statistics
//
// A page that is accessed at a steady rate of `a` events per second, sampled
// once every `P` events (the PMU sample period), yields samples as a Poisson
// process of rate a / P (each event is independently "the P-th" with
// probability about 1/P, and sampling skid does not change which page is
// counted). Over a window of W seconds its count k is therefore Poisson with
// mean a * W / P, and
//
//     rate estimate   a_hat = k * P / W
//     interval        [L(k), U(k)] * P / W
//
// where [L(k), U(k)] is the two-sided Poisson (Garwood) interval at normal
// quantile z: L(k) solves P(X >= k; L) = alpha/2 and U(k) solves
// P(X <= k; U) = alpha/2, with alpha/2 = erfc(z / sqrt(2)) / 2 (z = 1.96 for
// 95%). For k <= 20 the limits are found exactly by bisection on the Poisson
// CDF; above that Byar's approximation
//     L(k) = k (1 - 1/(9k) - z/(3 sqrt(k)))^3
//     U(k) = (k+1) (1 - 1/(9(k+1)) + z/(3 sqrt(k+1)))^3
// is within 0.05% of the exact limits (checked at z = 1.96). Roughly, k samples
// give k +- z sqrt(k).
//
// Decay: counts halve at every epoch boundary, so the stored count is the
// exponentially weighted sum C = n_0 + n_1/2 + n_2/4 + ... (n_j = samples j
// epochs ago). For a steady rate r and epochs of length L, with t elapsed in
// the current epoch, E[C] = r (t + L/2 + L/4 + ...) = r (t + L): the table
// therefore uses the effective window W = t + L (capped at the time since
// the first sample). Var[C] = r (t + L/4 + L/16 + ...) = r (t + L/3) lies
// between 1/3 and 1 times E[C], so treating C as Poisson over-estimates its
// spread: the intervals are conservative (wider than needed), never too
// narrow. Integer halving floors odd counts (a bias below one sample per
// epoch). Pages younger than W have their rate under-estimated, which only
// delays their promotion. Weighted samples (weight > 1) are not Poisson;
// the intervals assume weight 1.
//
// Deciding a move: promote candidate c over victim v only when
// lo(c) > hi(v) (ShouldPromote). If c and v were equally hot, that needs
// lo(c) above the true rate or hi(v) below it, so a pointless swap has
// probability at most alpha (5% at z = 1.96, union bound); for large counts
// it needs k_c - k_v > 2 z sqrt(k), i.e. sqrt(2) z = 2.8 standard
// deviations of the difference: about 0.3%. A real difference is acted on
// once the counts differ by about z (sqrt(k_c) + sqrt(k_v)).

#ifndef HOTPAGE_HOTNESS_RATE_STATS_H_
#define HOTPAGE_HOTNESS_RATE_STATS_H_

#include <cstdint>

namespace hotpage {

struct PoissonBounds {
  double lo = 0;
  double hi = 0;
};

// Two-sided Poisson confidence interval for the mean, given `k` observed
// events, at normal quantile `z` (1.96: 95%). See the file comment.
PoissonBounds PoissonInterval(double k, double z);

struct RateEstimate {
  double per_sec = 0;     // point estimate, events (accesses) per second
  double lo_per_sec = 0;  // lower confidence bound
  double hi_per_sec = 0;  // upper confidence bound
};

// What turns a count into a rate: the effective sample period and the
// effective window of the decayed counts (see the file comment).
struct RateWindow {
  double sample_period = 1;  // mean PMU events per sample over all ingested
  uint64_t window_ns = 1;    // effective window W of a decayed count, >= 1

  RateEstimate Estimate(uint32_t count, double z) const;
};

}  // namespace hotpage

#endif  // HOTPAGE_HOTNESS_RATE_STATS_H_
