// MigratorClock: where the migrator gets time from.
//
// Rate limits, CPU budgets, retry delays, ENOMEM back-offs, ping-pong
// windows and hot-to-moved latencies all read this clock, so that tests can
// drive them with FakeMigratorClock instead of sleeping. The live clock is
// CLOCK_MONOTONIC (immune to wall-clock steps) for Now() and
// CLOCK_THREAD_CPUTIME_ID for ThreadCpuTime(); absl::Time is used only as a
// typed time point, its epoch is meaningless.

#ifndef HOTPAGE_MIGRATOR_CLOCK_H_
#define HOTPAGE_MIGRATOR_CLOCK_H_

#include "absl/base/thread_annotations.h"
#include "tools/base/mutex.h"
#include "absl/time/time.h"

namespace hotpage {

class MigratorClock {
 public:
  virtual ~MigratorClock() = default;
  // Monotonic time. Thread-safe.
  virtual absl::Time Now() = 0;
  // CPU time (user + system) the calling thread has used so far. The kernel
  // copies migrated pages in the context of the thread that calls
  // move_pages(2), so this includes the copying. Thread-safe.
  virtual absl::Duration ThreadCpuTime() = 0;
};

// The live clock. Stateless; Get() returns a process-wide instance.
class RealMigratorClock : public MigratorClock {
 public:
  static RealMigratorClock* Get();
  absl::Time Now() override;
  absl::Duration ThreadCpuTime() override;
};

// A clock that moves only when told. Thread-safe. The CPU time it reports
// is shared by all threads (tests run the migrator on one thread).
class FakeMigratorClock : public MigratorClock {
 public:
  explicit FakeMigratorClock(absl::Time start = absl::UnixEpoch() +
                                                absl::Hours(1))
      : now_(start) {}

  absl::Time Now() override ABSL_LOCKS_EXCLUDED(mu_);
  absl::Duration ThreadCpuTime() override ABSL_LOCKS_EXCLUDED(mu_);

  void Advance(absl::Duration d) ABSL_LOCKS_EXCLUDED(mu_);
  void AdvanceCpu(absl::Duration d) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
  absl::Duration cpu_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();
};

}  // namespace hotpage

#endif  // HOTPAGE_MIGRATOR_CLOCK_H_
