#include "tools/trace_gen/zipf.h"

#include <algorithm>

#include "tools/trace_gen/det_math.h"

namespace hotpage {
namespace trace_gen {

ZipfTable::ZipfTable(uint64_t n, double s) {
  cdf_.resize(n < 1 ? 1 : n);
  double sum = 0;
  for (uint64_t r = 0; r < cdf_.size(); ++r) {
    sum += DetExp(-s * DetLog(static_cast<double>(r + 1)));
    cdf_[r] = sum;
  }
}

uint64_t ZipfTable::Sample(Rng& rng) const {
  const double u = rng.Uniform() * cdf_.back();
  const auto it = std::upper_bound(cdf_.begin(), cdf_.end(), u);
  const uint64_t r = static_cast<uint64_t>(it - cdf_.begin());
  return r < cdf_.size() ? r : cdf_.size() - 1;
}

double ZipfTable::Probability(uint64_t rank) const {
  if (rank >= cdf_.size()) return 0;
  const double w = rank == 0 ? cdf_[0] : cdf_[rank] - cdf_[rank - 1];
  return w / cdf_.back();
}

}  // namespace trace_gen
}  // namespace hotpage
