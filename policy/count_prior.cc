#include "policy/count_prior.h"

#include <algorithm>
#include <cmath>

namespace hotpage {

void CountPrior::MakeGrid() {
  grid_.resize(kGridPoints);
  const double top = PoissonInterval(kMaxCount, 3.0).hi;
  const double step = std::log(top / kMinMean) / (kGridPoints - 1);
  for (int j = 0; j < kGridPoints; ++j)
    grid_[j] = kMinMean * std::exp(step * j);
  like_.assign(static_cast<size_t>(kMaxCount + 1) * kGridPoints, 0);
  for (uint32_t k = 0; k <= kMaxCount; ++k) {
    double* row = &like_[static_cast<size_t>(k) * kGridPoints];
    double best = -INFINITY;
    for (int j = 0; j < kGridPoints; ++j) {
      row[j] = k * std::log(grid_[j]) - grid_[j];  // lgamma(k+1) cancels
      best = std::max(best, row[j]);
    }
    for (int j = 0; j < kGridPoints; ++j) row[j] = std::exp(row[j] - best);
  }
  seen_.resize(kGridPoints);
  for (int j = 0; j < kGridPoints; ++j) seen_[j] = 1.0 / -std::expm1(-grid_[j]);
}

void CountPrior::Fit(absl::Span<const uint64_t> histogram, double z,
                     bool zero_truncated) {
  if (grid_.empty()) MakeGrid();
  fitted_ = false;
  zero_truncated_ = false;
  present_.clear();
  double total = 0;
  const size_t n = std::min<size_t>(histogram.size(), kMaxCount + 1);
  for (size_t k = 0; k < n; ++k) {
    if (histogram[k] == 0) continue;
    present_.push_back(static_cast<uint32_t>(k));
    total += static_cast<double>(histogram[k]);
  }
  if (present_.size() < 2) return;
  // A zero bin is data: such a histogram is fitted as it is.
  const bool truncated = zero_truncated && present_.front() != 0;
  weights_.assign(kGridPoints, 1.0 / kGridPoints);
  next_.resize(kGridPoints);
  // EM on the likelihood of each count: Poisson, or for a zero-truncated
  // histogram Poisson over the probability of a count above 0 (seen_).
  for (int it = 0; it < kEmIterations; ++it) {
    std::fill(next_.begin(), next_.end(), 0.0);
    for (uint32_t k : present_) {
      const double* row = &like_[static_cast<size_t>(k) * kGridPoints];
      double denom = 0;
      if (truncated) {
        for (int j = 0; j < kGridPoints; ++j)
          denom += weights_[j] * row[j] * seen_[j];
      } else {
        for (int j = 0; j < kGridPoints; ++j) denom += weights_[j] * row[j];
      }
      if (!(denom > 0)) continue;
      const double scale = static_cast<double>(histogram[k]) / denom;
      if (truncated) {
        for (int j = 0; j < kGridPoints; ++j)
          next_[j] += scale * weights_[j] * row[j] * seen_[j];
      } else {
        for (int j = 0; j < kGridPoints; ++j)
          next_[j] += scale * weights_[j] * row[j];
      }
    }
    for (int j = 0; j < kGridPoints; ++j) weights_[j] = next_[j] / total;
  }
  if (truncated) {
    // The fitted weights are the rates of the pages seen; the prior of all
    // pages weighs each rate by 1 / P(seen) (file comment).
    double sum = 0;
    for (int j = 0; j < kGridPoints; ++j) sum += weights_[j] *= seen_[j];
    for (int j = 0; j < kGridPoints; ++j) weights_[j] /= sum;
    zero_truncated_ = true;
  }
  // The posterior bounds of every count the fit covers.
  const double tail = 0.5 * std::erfc(z / std::sqrt(2.0));
  bounds_.assign(kMaxCount + 1, PoissonBounds{});
  for (uint32_t k = 0; k <= kMaxCount; ++k) {
    const double* row = &like_[static_cast<size_t>(k) * kGridPoints];
    double denom = 0;
    for (int j = 0; j < kGridPoints; ++j) denom += weights_[j] * row[j];
    PoissonBounds& b = bounds_[k];
    if (!(denom > 0)) {
      b = PoissonInterval(k, z);
      continue;
    }
    // lo: the largest grid value with posterior mass below it <= tail.
    double below = 0;
    int lo = 0;
    for (int j = 0; j < kGridPoints; ++j) {
      if (below > tail * denom) break;
      lo = j;
      below += weights_[j] * row[j];
    }
    double above = 0;
    int hi = kGridPoints - 1;
    for (int j = kGridPoints - 1; j >= 0; --j) {
      if (above > tail * denom) break;
      hi = j;
      above += weights_[j] * row[j];
    }
    b.lo = grid_[lo];
    b.hi = grid_[hi];
  }
  // Every count's posterior CDF (the pair test).
  cdf_.resize(static_cast<size_t>(kMaxCount + 1) * kGridPoints);
  for (uint32_t k = 0; k <= kMaxCount; ++k) {
    const double* row = &like_[static_cast<size_t>(k) * kGridPoints];
    double* cdf = &cdf_[static_cast<size_t>(k) * kGridPoints];
    double denom = 0;
    for (int j = 0; j < kGridPoints; ++j) denom += weights_[j] * row[j];
    double sum = 0;
    for (int j = 0; j < kGridPoints; ++j) {
      sum += weights_[j] * row[j];
      // No mass at all (a count far from every weight): no posterior,
      // NaN (ProbNotHotter gives none, as Bounds falls back to Garwood's).
      cdf[j] = denom > 0 ? sum / denom : std::nan("");
    }
  }
  fitted_ = true;
}

std::optional<PoissonBounds> CountPrior::Bounds(uint32_t k) const {
  if (!fitted_ || k > kMaxCount) return std::nullopt;
  return bounds_[k];
}

std::optional<double> CountPrior::ProbNotHotter(uint32_t kc,
                                                uint32_t kv) const {
  if (!fitted_ || kc > kMaxCount || kv > kMaxCount) return std::nullopt;
  const double* c = &cdf_[static_cast<size_t>(kc) * kGridPoints];
  const double* v = &cdf_[static_cast<size_t>(kv) * kGridPoints];
  if (std::isnan(c[0]) || std::isnan(v[0])) return std::nullopt;
  // sum_j P(lambda_v = g_j) P(lambda_c <= g_j).
  double p = 0, prev = 0;
  for (int j = 0; j < kGridPoints; ++j) {
    p += (v[j] - prev) * c[j];
    prev = v[j];
  }
  return std::min(1.0, std::max(0.0, p));
}

}  // namespace hotpage
