// Zipf-distributed ranks for the key-value workload, deterministic on
// every machine (det_math.h, prng.h).

#ifndef HOTPAGE_TOOLS_TRACE_GEN_ZIPF_H_
#define HOTPAGE_TOOLS_TRACE_GEN_ZIPF_H_

#include <cstdint>
#include <vector>

#include "tools/trace_gen/prng.h"

namespace hotpage {
namespace trace_gen {

// Ranks 0..n-1 with P(rank r) proportional to (r + 1)^-s. Sampling is a
// binary search over the cumulative table (n doubles: 1.6 MB for 200k
// ranks), ~40 ns; building it takes ~30 ns per rank.
class ZipfTable {
 public:
  // n >= 1, s >= 0 (s = 0 is uniform).
  ZipfTable(uint64_t n, double s);

  uint64_t Sample(Rng& rng) const;
  double Probability(uint64_t rank) const;
  uint64_t size() const { return cdf_.size(); }

 private:
  std::vector<double> cdf_;  // cdf_[r] = sum of weights of ranks 0..r
};

}  // namespace trace_gen
}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_TRACE_GEN_ZIPF_H_
