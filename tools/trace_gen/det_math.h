// Deterministic elementary functions for the trace generator.
//
// libm's log/exp/pow are not required to round correctly, and glibc, musl
// and macOS give different last bits for some inputs; a Zipf table built
// with them could then pick different keys on another machine and break
// the byte-identical regeneration of the checked-in traces. These versions
// use only frexp/ldexp/floor (exact) and IEEE-754 +, -, *, / (correctly
// rounded), in a fixed order, so they return the same bits everywhere. The
// target compiles with -ffp-contract=off so that no compiler fuses a
// multiply and an add into an FMA (which rounds once instead of twice).
//
// Accuracy: within a few ulp of the true value over the generator's
// ranges (checked against libm in det_math_test.cc); speed: ~30 ns a call,
// used only to build tables.

#ifndef HOTPAGE_TOOLS_TRACE_GEN_DET_MATH_H_
#define HOTPAGE_TOOLS_TRACE_GEN_DET_MATH_H_

namespace hotpage {
namespace trace_gen {

// Natural logarithm of x > 0 (finite). Returns -inf for 0, NaN for x < 0.
double DetLog(double x);
// e^x; 0 below -745, +inf above 709.8.
double DetExp(double x);
// x^y for x > 0.
double DetPow(double x, double y);

}  // namespace trace_gen
}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_TRACE_GEN_DET_MATH_H_
