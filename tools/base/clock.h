// MonotonicNs(): CLOCK_MONOTONIC in nanoseconds, the one clock hotpage's
// control paths (rounds, re-arm intervals, watchdogs) measure time with.
// Never goes backwards; unrelated to wall time; not for the sample path
// (samples carry the kernel's perf clock).

#ifndef HOTPAGE_TOOLS_BASE_CLOCK_H_
#define HOTPAGE_TOOLS_BASE_CLOCK_H_

#include <time.h>

#include <cstdint>

namespace hotpage {

inline uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_BASE_CLOCK_H_
