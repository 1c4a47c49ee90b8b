#include "tools/daemon/thread_cpu.h"

#include <atomic>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tools/base/clock.h"

namespace hotpage {
namespace {

// Spins until its own CPU clock has advanced by `d`.
void Burn(absl::Duration d) {
  const absl::Duration start = ThreadCpuTime();
  volatile uint64_t x = 0;
  while (ThreadCpuTime() - start < d) x = x + 1;
}

TEST(CpuTimedThreadTest, ReadsABusyThreadsCpuWhileItRunsAndAfter) {
  CpuTimedThread t;
  EXPECT_EQ(t.CpuTime(), absl::ZeroDuration());
  std::atomic<bool> burnt{false};
  std::atomic<bool> release{false};
  t.Start([&] {
    Burn(absl::Milliseconds(60));
    burnt.store(true);
    while (!release.load()) absl::SleepFor(absl::Milliseconds(1));
  });
  while (!burnt.load()) absl::SleepFor(absl::Milliseconds(1));
  // Read from this thread while the other one runs: its own clock, not
  // this thread's (which has burnt almost nothing).
  const absl::Duration running = t.CpuTime();
  EXPECT_GE(running, absl::Milliseconds(60));
  EXPECT_LT(ThreadCpuTime(), absl::Milliseconds(60));
  release.store(true);
  t.Join();
  const absl::Duration ended = t.CpuTime();
  EXPECT_GE(ended, running);
  EXPECT_LT(ended, running + absl::Seconds(1));
}

TEST(CpuTimedThreadTest, AnIdleThreadCostsAlmostNothing) {
  CpuTimedThread t;
  t.Start([] { absl::SleepFor(absl::Milliseconds(50)); });
  t.Join();
  EXPECT_LT(t.CpuTime(), absl::Milliseconds(20));
}

}  // namespace
}  // namespace hotpage
