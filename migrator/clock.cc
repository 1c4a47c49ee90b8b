#include "migrator/clock.h"

#include <time.h>

namespace hotpage {
namespace {

absl::Duration ReadClock(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return absl::DurationFromTimespec(ts);
}

}  // namespace

RealMigratorClock* RealMigratorClock::Get() {
  static RealMigratorClock* clock = new RealMigratorClock();
  return clock;
}

absl::Time RealMigratorClock::Now() {
  return absl::UnixEpoch() + ReadClock(CLOCK_MONOTONIC);
}

absl::Duration RealMigratorClock::ThreadCpuTime() {
  return ReadClock(CLOCK_THREAD_CPUTIME_ID);
}

absl::Time FakeMigratorClock::Now() {
  MutexLock lock(&mu_);
  return now_;
}

absl::Duration FakeMigratorClock::ThreadCpuTime() {
  MutexLock lock(&mu_);
  return cpu_;
}

void FakeMigratorClock::Advance(absl::Duration d) {
  MutexLock lock(&mu_);
  now_ += d;
}

void FakeMigratorClock::AdvanceCpu(absl::Duration d) {
  MutexLock lock(&mu_);
  cpu_ += d;
}


}  // namespace hotpage
