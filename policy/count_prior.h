// CountPrior: an empirical-Bayes prior on the pages' rates, fitted each
// round to the hotness table's own counts, and the posterior interval it
// gives a page of a given count. The engine (policy/engine.h) uses it beside
// the Poisson (Garwood) interval of hotness/rate_stats.h; this file is the
// statistics alone, a function of its inputs.
//
// Why. Every tracked page's decayed count k is Poisson with mean
// lambda = r W / P over the table's common window W (rate_stats.h). The
// Garwood interval bounds lambda from k alone, so with a few samples per
// page (a page sampled about once a second, W = 2-4 s) two pages must
// differ by 5 or more samples before one is provably hotter, however clear
// the population's structure is. But the table holds thousands of pages
// whose counts come from the same kind of process, and their spread shows
// how the rates are distributed: when most pages sit near two rates (a hot
// set and a cold rest), a count of 0 almost surely comes from the cold
// group and a count of 2 from the hot one. Empirical Bayes (Robbins 1956;
// the nonparametric maximum-likelihood prior of Kiefer and Wolfowitz 1956,
// fitted by EM as in Laird 1978) turns that into a posterior interval for
// each page: the prior G is the distribution of lambda that makes the
// observed histogram of counts most likely, and a page's posterior is
// G(lambda) Poisson(k; lambda), normalised.
//
// The fit. G is discrete on kGridPoints values of lambda, log-spaced from
// kMinMean to the Garwood upper limit of kMaxCount (no page of a count the
// fit sees has its mean above that). EM: each iteration gives each grid
// point the posterior mass the pages' counts assign it; Fit() starts from
// uniform weights every time (no state between rounds: a weight EM has
// driven to zero could never come back when the population moves) and runs
// kEmIterations. Counts above kMaxCount are left out of the fit and get no
// posterior interval (their Garwood interval is already narrow: relative
// width ~ 2z / sqrt(k)).
//
// The interval. A page's posterior lower bound at one-sided tail
// a = erfc(z / sqrt 2) / 2 (the tail of the Garwood limits at the same z)
// is the largest grid value with posterior mass below it at most a; the
// upper bound the smallest with mass above it at most a. So "lo(c) > hi(v)"
// still means a pointless swap has posterior probability at most 2a, the
// Garwood test's guarantee, now under the fitted prior instead of none.
//
// The pair test. lo(c) > hi(v) bounds each page's posterior on its own, so
// a swap passes only when the two intervals part, which needs a margin
// even where the pair's joint posterior is clear. Under a hot set at 2.2
// samples a window and a cold rest at 0.1, a count of 1 has the interval
// 0.2-2.6 and a count of 0 0.002-0.5: they overlap, yet the page of count
// 1 is the hotter of the two with posterior probability 0.90. The question
// a swap asks is P(lambda_c <= lambda_v), the posterior probability that
// it is pointless or harmful. lo > hi bounds it by 2a (lambda_c < lo with
// probability at most a, lambda_v > hi at most a, and one of the two holds
// when lambda_c <= lambda_v). ProbNotHotter computes it exactly (the two
// pages' posteriors are independent given the prior: the sum over v's
// grid values of v's mass times c's CDF there), and the engine's swap test
// also passes a pair when it is at most a, the one-sided tail: a tighter
// guarantee than lo > hi's for the pairs it adds. At 2a, measured on the
// tuning set, bytes migrated rose by up to 40% (zipf_kv 1:2 71 -> 100 MB)
// for 0.1 point more than at a: most of the added probability is of ties,
// two pages of the hot group that no count tells apart (a count of 3
// against one of 1: P(not hotter) 0.27), and each such swap moves two hot
// pages for nothing. Tested in count_prior_test
// PairTestPassesWhereTheIntervalsOverlap.
//
// A histogram with no zeros to show (zero_truncated). A page enters the
// table with its first sample, so until the table first halves its counts
// (its first epoch) no tracked page has a count of 0, however cold: the
// pages not sampled yet are not in the histogram at all. Fitted as if the
// histogram were the whole population, the prior must explain the missing
// zeros, and it does so with rates that give few: the cold pages' count of
// 1 is credited to rates near the hot pages' and the two groups blur. On
// stream_mix (tests/traces/stream_mix.hpt) at 0.5 s, 512 streamed pages
// at about 2.4 samples so far and 1024 hot-set pages at 0.3 gave a count
// of 3 against a count of 1 P(not hotter) 0.51: a coin toss between a page
// that is all but surely streamed and one that is all but surely not. The
// zero-truncated fit (the standard correction for a sample that only
// holds what was seen, as in estimating species from the ones caught)
// takes each count k >= 1 with likelihood Poisson(k; lambda) / (1 -
// exp(-lambda)), leaves the zero bin out, and gives the prior of all pages
// back as the fitted weights times 1 / (1 - exp(-lambda)), normalised: a
// rate that is rarely sampled at all weighs the more for each page of it
// that was. Posteriors, bounds and the pair test are then as before. The
// caller says when its histogram is such (the engine: the decayed counts'
// in the table's first epoch, where samples count accesses); a histogram
// with zeros is never fitted so (its zero bin is data). Tested in
// count_prior_test ZeroTruncatedFitSeparatesWhatTheBlurredOneCannot.
//
// Cost: the fit is kGridPoints x (distinct counts) x kEmIterations
// multiply-adds per round (96 x <= 257 x 64: at most 1.6 M, usually a tenth
// of that), independent of the table's size; the histogram is the caller's
// one pass over the counts. The Poisson likelihoods on the fixed grid are
// computed once per object.
//
// Thread-compatible.

#ifndef HOTPAGE_POLICY_COUNT_PRIOR_H_
#define HOTPAGE_POLICY_COUNT_PRIOR_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/types/span.h"
#include "hotness/rate_stats.h"

namespace hotpage {

class CountPrior {
 public:
  static constexpr int kGridPoints = 96;
  static constexpr uint32_t kMaxCount = 256;
  static constexpr int kEmIterations = 64;
  // The smallest mean on the grid, in samples per window: a page sampled
  // once in a thousand windows counts as never.
  static constexpr double kMinMean = 1e-3;

  // Fits G to `histogram` (histogram[k]: pages with count k, k <= kMaxCount;
  // longer spans are cut there). Needs pages at two or more counts:
  // otherwise the prior is cleared (fitted() false). `zero_truncated`: the
  // histogram holds only pages that were sampled, and no count of 0 could
  // be in it (file comment); it is fitted so only if histogram[0] is 0,
  // and needs two counts above 0.
  void Fit(absl::Span<const uint64_t> histogram, double z,
           bool zero_truncated = false);
  // Whether the last fit took the histogram as zero-truncated.
  bool zero_truncated() const { return zero_truncated_; }

  bool fitted() const { return fitted_; }
  // The posterior interval of lambda (samples per window) for a page of
  // count k; nullopt when not fitted or k > kMaxCount.
  std::optional<PoissonBounds> Bounds(uint32_t k) const;
  // The posterior probability that a page of count `kc` is not hotter than
  // an independent page of count `kv`, P(lambda_c <= lambda_v) (a shared
  // grid value counts as not hotter); nullopt when not fitted or a count is
  // above kMaxCount. Bounds' test lo(kc) > hi(kv) at tail a implies this is
  // at most 2a (file comment, "The pair test").
  std::optional<double> ProbNotHotter(uint32_t kc, uint32_t kv) const;
  // The fitted prior: grid values and their weights (sum 1).
  const std::vector<double>& grid() const { return grid_; }
  const std::vector<double>& weights() const { return weights_; }

 private:
  void MakeGrid();

  bool fitted_ = false;
  bool zero_truncated_ = false;
  std::vector<double> grid_;
  // 1 / (1 - exp(-grid_[j])): the zero-truncated fit's factor per grid
  // value (file comment).
  std::vector<double> seen_;
  // like_[k * kGridPoints + j]: Poisson(k; grid_[j]) over its largest value
  // for that k (the posterior's scale cancels).
  std::vector<double> like_;
  std::vector<double> weights_;
  std::vector<double> next_;
  std::vector<uint32_t> present_;      // counts with pages, this fit
  std::vector<PoissonBounds> bounds_;  // by count, after Fit
  // cdf_[k * kGridPoints + j]: the posterior P(lambda <= grid_[j] | k),
  // after Fit.
  std::vector<double> cdf_;
};

}  // namespace hotpage

#endif  // HOTPAGE_POLICY_COUNT_PRIOR_H_
