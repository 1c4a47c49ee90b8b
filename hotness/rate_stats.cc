#include "hotness/rate_stats.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace hotpage {
namespace {

// P(X <= n) for X ~ Poisson(lambda), n small.
double PoissonCdf(int n, double lambda) {
  double term = std::exp(-lambda);
  double sum = term;
  for (int i = 1; i <= n; ++i) {
    term *= lambda / i;
    sum += term;
  }
  return sum;
}

// Exact (Garwood) limits for a small integer count, by bisection on the
// Poisson CDF, which falls monotonically in lambda.
PoissonBounds ExactSmallInterval(int n, double k, double tail) {
  PoissonBounds b;
  if (n > 0) {
    double a = 0, c = k + 50;
    for (int it = 0; it < 100; ++it) {
      const double m = 0.5 * (a + c);
      (1 - PoissonCdf(n - 1, m) < tail ? a : c) = m;
    }
    b.lo = a;
  }
  double a = k, c = k + 60;
  for (int it = 0; it < 100; ++it) {
    const double m = 0.5 * (a + c);
    (PoissonCdf(n, m) > tail ? a : c) = m;
  }
  b.hi = a;
  return b;
}

}  // namespace

PoissonBounds PoissonInterval(double k, double z) {
  PoissonBounds b;
  if (k < 0) return b;
  const double tail = 0.5 * std::erfc(z / std::sqrt(2.0));  // alpha / 2
  const int n = static_cast<int>(k);
  if (k <= 20 && n == k && tail > 0 && tail < 0.5) {
    // The bisection costs ~200 Poisson CDFs; a scan asks for the same 21
    // counts at the same z over and over (it was 2/3 of a replayed round's
    // time), so each thread keeps the last z's limits.
    thread_local double cached_z = std::nan("");
    thread_local PoissonBounds cached[21];
    thread_local bool have[21] = {};
    if (!(cached_z == z)) {
      cached_z = z;
      std::fill(std::begin(have), std::end(have), false);
    }
    if (!have[n]) {
      cached[n] = ExactSmallInterval(n, k, tail);
      have[n] = true;
    }
    return cached[n];
  }
  // Byar's approximation (Wilson-Hilferty cube-root transform of the
  // chi-square quantiles behind the exact limits).
  if (k > 0) {
    const double t = 1 - 1 / (9 * k) - z / (3 * std::sqrt(k));
    b.lo = t > 0 ? k * t * t * t : 0;
  }
  const double k1 = k + 1;
  const double u = 1 - 1 / (9 * k1) + z / (3 * std::sqrt(k1));
  b.hi = k1 * u * u * u;
  return b;
}

RateEstimate RateWindow::Estimate(uint32_t count, double z) const {
  const PoissonBounds b = PoissonInterval(count, z);
  const double scale = sample_period * 1e9 /
                       static_cast<double>(std::max<uint64_t>(window_ns, 1));
  return RateEstimate{count * scale, b.lo * scale, b.hi * scale};
}

}  // namespace hotpage
