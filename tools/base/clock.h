// The one clock API of hotpage.
//
// Two kinds of use, one file:
//  - Free functions for code that only measures: MonotonicNs() (and
//    MonotonicSeconds()), CLOCK_MONOTONIC, the clock every control path
//    (rounds, re-arm intervals, watchdogs, progress lines) measures time
//    with; RealtimeNs() for the one place wall time is recorded (a trace
//    header's start); ThreadCpuTime() / ThreadCpuSeconds(), the calling
//    thread's CPU time (user + system; the kernel copies migrated pages in
//    the context of the thread that calls move_pages(2), so it includes the
//    copying); ProcessCpuTime(), every thread's.
//  - The Clock interface for code whose behaviour depends on time (rate
//    limits, CPU budgets, retry delays, back-offs, ping-pong windows,
//    hot-to-moved latencies, attach rounds): it takes a Clock* so that tests
//    and the simulator drive it with FakeClock instead of sleeping.
//    RealClock reads the same clocks as the free functions, so a time taken
//    with MonotonicNs() and one taken with RealClock::Now() are comparable
//    (RealClock::Now() == FromMonotonicNs(MonotonicNs()) at that instant).
//
// absl::Time is used only as a typed time point: its epoch is meaningless
// (CLOCK_MONOTONIC counts from boot). None of this is for the sample path:
// samples carry the kernel's perf clock.

#ifndef HOTPAGE_TOOLS_BASE_CLOCK_H_
#define HOTPAGE_TOOLS_BASE_CLOCK_H_

#include <time.h>

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "tools/base/mutex.h"

namespace hotpage {

namespace clock_internal {
inline timespec Read(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return ts;
}
inline uint64_t ToNs(const timespec& ts) {
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<uint64_t>(ts.tv_nsec);
}
}  // namespace clock_internal

// CLOCK_MONOTONIC in nanoseconds. Never goes backwards; unrelated to wall
// time.
inline uint64_t MonotonicNs() {
  return clock_internal::ToNs(clock_internal::Read(CLOCK_MONOTONIC));
}
inline double MonotonicSeconds() {
  return static_cast<double>(MonotonicNs()) * 1e-9;
}

// CLOCK_REALTIME in nanoseconds since the Unix epoch (wall time: may step).
inline uint64_t RealtimeNs() {
  return clock_internal::ToNs(clock_internal::Read(CLOCK_REALTIME));
}

// The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID).
inline absl::Duration ThreadCpuTime() {
  return absl::DurationFromTimespec(
      clock_internal::Read(CLOCK_THREAD_CPUTIME_ID));
}
inline double ThreadCpuSeconds() {
  return absl::ToDoubleSeconds(ThreadCpuTime());
}

// The whole process's CPU time, every thread's (CLOCK_PROCESS_CPUTIME_ID;
// threads that ended still count).
inline absl::Duration ProcessCpuTime() {
  return absl::DurationFromTimespec(
      clock_internal::Read(CLOCK_PROCESS_CPUTIME_ID));
}

// A CLOCK_MONOTONIC reading as the absl::Time that RealClock::Now() would
// have returned at that instant.
inline absl::Time FromMonotonicNs(uint64_t ns) {
  return absl::UnixEpoch() + absl::Nanoseconds(static_cast<int64_t>(ns));
}

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic time. Thread-safe.
  virtual absl::Time Now() = 0;
  // CPU time the calling thread has used so far. Thread-safe.
  virtual absl::Duration ThreadCpuTime() = 0;
};

// The live clock. Stateless; Get() returns a process-wide instance.
class RealClock : public Clock {
 public:
  static RealClock* Get() {
    static RealClock* clock = new RealClock();
    return clock;
  }
  absl::Time Now() override { return FromMonotonicNs(MonotonicNs()); }
  absl::Duration ThreadCpuTime() override { return hotpage::ThreadCpuTime(); }
};

// A clock that moves only when told. Thread-safe. The CPU time it reports
// is shared by all threads (tests run the code under test on one thread).
class FakeClock : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::UnixEpoch() + absl::Hours(1))
      : now_(start) {}

  absl::Time Now() override ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    return now_;
  }
  absl::Duration ThreadCpuTime() override ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    return cpu_;
  }

  void Advance(absl::Duration d) ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    now_ += d;
  }
  // Sets the time; it may go backwards (the simulator sets each event's
  // time), which callers of Clock tolerate only where they say so.
  void Set(absl::Time t) ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    now_ = t;
  }
  void AdvanceCpu(absl::Duration d) ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    cpu_ += d;
  }

 private:
  mutable Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
  absl::Duration cpu_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_BASE_CLOCK_H_
