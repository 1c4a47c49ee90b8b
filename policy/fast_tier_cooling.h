// FastTierCooling: did the fast tier's pages cool over one round? The
// engine's test that a fall of the fast share is a change of the hot set and
// not the fast tier filling up (policy/engine.h, "A change is confirmed by
// the fast tier's pages cooling"). A function of its inputs: the engine adds
// each fast-tier page's long-window count before the round and the samples
// it drew in the round, then asks.
//
// The model. Each page's rate is estimated from its long window,
// r = (count before the round - 1) / window: the first sample is what made
// the page known (a page enters the table at its first sample), not
// evidence of a rate, and counting it gave a cold page first touched a
// second ago a rate it never shows. Under "nothing cooled" the round's
// samples of a page are Poisson(r dt). Two statistics, each compared with
// its standard deviation under that model:
//  - zeros: pages with at least two samples before the round that drew none
//    in it, against the sum of exp(-r dt) (variance: the sum of p (1 - p)).
//    A few very hot pages cannot hide the others' silence. A page takes
//    part from its second sample, so that sample selected it too: after
//    the first, its count y = count - 1 is a Poisson count known to be at
//    least 1, and the unbiased estimate of its mean is 0 at y = 1 and y
//    from 2 (the sum over y >= 2 of y P(y) / P(y >= 1) is the mean). So a
//    page with two samples predicts none (p = 1: a zero is no news, a
//    sample counts against a cooling); from three, r as above. Taking the
//    second sample for a rate (r = 1 / window) made cold pages sampled
//    twice by chance predict samples they never draw: while first touches
//    filled the fast tier (`hotpage_trace_gen packages` with seeds 21-30,
//    not bundled, at 1:2) the fill's detections were confirmed as changes
//    in 5 of 10 runs (zeros z 3.8 and 4.1 in two), the change window stayed
//    open to 11 s, and those runs scored 85.8-86.5% of the oracle against
//    87.6-88.3% for the others; now 87.3-88.3% in all ten
//    (tools/simulate/README.md).
//  - samples: all pages' samples in the round against the sum of r dt
//    (Poisson: variance the same; r is unbiased here, every page taking
//    part from its first sample). Every page with more than its first
//    sample takes part, however few: a scan's pages, each sampled once or
//    twice a pass, are too cold for a zero to be news, but thousands of them
//    falling silent together are.
// Cooled() when either falls short by more than z standard deviations (at
// least one). Two tests at z double the false-alarm rate of one (at the
// shift detector's z = 3.09, 0.1% each).
//
// Cost: only the round of a first detection pays it, one Add per fast-tier
// entry: 0.27 ms for 32k entries and 5.4 ms for 512k (9-10 ns an entry, the
// exp() most of it; fast_tier_cooling_benchmark, -c opt), against 40 ms and
// 370 ms for the whole round at 64k and 1M live entries
// (attach_round_benchmark BM_Round).
//
// Thread-compatible.

#ifndef HOTPAGE_POLICY_FAST_TIER_COOLING_H_
#define HOTPAGE_POLICY_FAST_TIER_COOLING_H_

#include <algorithm>
#include <cmath>

namespace hotpage {

class FastTierCooling {
 public:
  // `long_window_s`: the long window's effective length; `round_s`: the
  // round's length. Both > 0, else every Add is ignored.
  FastTierCooling(double long_window_s, double round_s)
      : long_window_s_(long_window_s), round_s_(round_s) {}

  // One fast-tier page: its long-window count before the round (in
  // samples; weighted counts are fine) and its samples in the round.
  void Add(double long_count_before, double round_samples) {
    if (!(long_window_s_ > 0) || !(round_s_ > 0) || long_count_before < 1)
      return;
    const double mean = (long_count_before - 1) / long_window_s_ * round_s_;
    samples_expected_ += mean;
    samples_observed_ += round_samples;
    if (long_count_before >= 2) {
      // Taken by its second sample: its rate's unbiased estimate (the file
      // comment) is 0 with no third sample.
      const double p = long_count_before >= 3 ? std::exp(-mean) : 1.0;
      zeros_expected_ += p;
      zeros_var_ += p * (1 - p);
      zeros_observed_ += round_samples > 0 ? 0 : 1;
    }
  }

  // The shortfalls in standard deviations (positive: fewer samples, more
  // zeros than the rates predict).
  double ZerosZ() const {
    return (zeros_observed_ - zeros_expected_) /
           std::sqrt(std::max(zeros_var_, 1.0));
  }
  double SamplesZ() const {
    return (samples_expected_ - samples_observed_) /
           std::sqrt(std::max(samples_expected_, 1.0));
  }
  bool Cooled(double z) const { return ZerosZ() > z || SamplesZ() > z; }

 private:
  double long_window_s_;
  double round_s_;
  double zeros_expected_ = 0, zeros_var_ = 0, zeros_observed_ = 0;
  double samples_expected_ = 0, samples_observed_ = 0;
};

}  // namespace hotpage

#endif  // HOTPAGE_POLICY_FAST_TIER_COOLING_H_
