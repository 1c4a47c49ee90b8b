#include "tools/trace_gen/det_math.h"

#include <cmath>
#include <limits>

namespace hotpage {
namespace trace_gen {
namespace {

constexpr double kLn2 = 0.693147180559945309417232121458176568;
// Cody-Waite split of ln 2: kLn2Hi has trailing zero bits, so k * kLn2Hi is
// exact for |k| < 2^11.
constexpr double kLn2Hi = 6.93147180369123816490e-01;
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr double kInvLn2 = 1.44269504088896338700e+00;
constexpr double kSqrtHalf = 0.707106781186547524400844362104849039;

}  // namespace

double DetLog(double x) {
  if (x < 0 || std::isnan(x)) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0) return -std::numeric_limits<double>::infinity();
  if (std::isinf(x)) return x;
  int e = 0;
  double m = std::frexp(x, &e);  // x = m * 2^e, m in [0.5, 1): exact
  if (m < kSqrtHalf) {
    m *= 2;  // exact
    e -= 1;
  }
  // log(m) = 2 atanh(z), z = (m - 1) / (m + 1), |z| <= 0.1716: the odd
  // series converges by a factor z^2 < 0.03 per term; 24 terms reach
  // z^49 < 1e-37, far below an ulp.
  const double z = (m - 1) / (m + 1);
  const double z2 = z * z;
  double sum = 0;
  double term = z;
  for (int k = 1; k < 49; k += 2) {
    sum = sum + term / k;
    term = term * z2;
  }
  return 2 * sum + static_cast<double>(e) * kLn2;
}

double DetExp(double x) {
  if (std::isnan(x)) return x;
  if (x < -745.2) return 0;
  if (x > 709.78) return std::numeric_limits<double>::infinity();
  const double k = std::floor(x * kInvLn2 + 0.5);
  const double r = (x - k * kLn2Hi) - k * kLn2Lo;  // |r| <= ~0.35
  // Taylor series by Horner's rule: r^23 / 23! < 1e-33.
  double p = 1;
  for (int n = 22; n >= 1; --n) p = 1 + r * p / n;
  return std::ldexp(p, static_cast<int>(k));
}

double DetPow(double x, double y) { return DetExp(y * DetLog(x)); }

}  // namespace trace_gen
}  // namespace hotpage
