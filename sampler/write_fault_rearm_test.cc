#include "sampler/write_fault_rearm.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace hotpage {
namespace {

// Plays the kernel: counts clears, each taking `cost_ns` of the fake clock,
// and answers with `next_errno`.
struct FakeKernel {
  uint64_t now_ns = 0;
  uint64_t cost_ns = 1000;
  int next_errno = 0;
  std::vector<uint64_t> clears_at;  // fake time of each write
};

class FakeClearRefs : public ClearRefsFile {
 public:
  explicit FakeClearRefs(FakeKernel* k) : k_(k) {}
  int ClearSoftDirty() override {
    k_->clears_at.push_back(k_->now_ns);
    k_->now_ns += k_->cost_ns;
    return k_->next_errno;
  }

 private:
  FakeKernel* k_;
};

WriteFaultRearm Make(FakeKernel* k, absl::Duration min_interval,
                     double budget) {
  WriteFaultRearmOptions o;
  o.min_interval = min_interval;
  o.cpu_budget = budget;
  o.clock = [k] { return k->now_ns; };
  return WriteFaultRearm(std::make_unique<FakeClearRefs>(k), o);
}

TEST(WriteFaultRearmTest, FirstCallRearmsThenWaitsMinInterval) {
  FakeKernel k;
  WriteFaultRearm r = Make(&k, absl::Milliseconds(200), 0.03);
  ASSERT_TRUE(*r.MaybeRearm(0));
  EXPECT_FALSE(*r.MaybeRearm(100'000'000));
  EXPECT_FALSE(*r.MaybeRearm(199'999'999));
  EXPECT_TRUE(*r.MaybeRearm(200'000'000));
  EXPECT_EQ(k.clears_at.size(), 2u);
  EXPECT_EQ(r.stats().rearms, 2u);
  EXPECT_EQ(r.stats().clear_ns_total, 2000u);
  EXPECT_EQ(r.stats().interval_ns, 200'000'000u);
}

TEST(WriteFaultRearmTest, IntervalStretchesToKeepClearsWithinTheCpuBudget) {
  FakeKernel k;
  k.cost_ns = 30'000'000;  // a 30 ms clear (a big process)
  WriteFaultRearm r = Make(&k, absl::Milliseconds(200), 0.03);
  ASSERT_TRUE(*r.MaybeRearm(0));
  // 30 ms / 3% = 1 s, not 200 ms.
  EXPECT_EQ(r.stats().interval_ns, 1'000'000'000u);
  EXPECT_FALSE(*r.MaybeRearm(999'999'999));
  EXPECT_TRUE(*r.MaybeRearm(1'000'000'000));
  // The process shrank: back to the floor.
  k.cost_ns = 1000;
  EXPECT_TRUE(*r.MaybeRearm(2'000'000'000));
  EXPECT_EQ(r.stats().interval_ns, 200'000'000u);
  EXPECT_EQ(r.stats().clear_ns_max, 30'000'000u);
  // Over the run the clears used at most the budget of the elapsed time.
  EXPECT_LE(static_cast<double>(r.stats().clear_ns_total),
            0.03 * 2'200'000'000.0 + 1000);
}

TEST(WriteFaultRearmTest, TheTargetsFaultsCountAgainstTheBudget) {
  FakeKernel k;
  k.cost_ns = 1'000'000;  // 1 ms clear
  WriteFaultRearm r = Make(&k, absl::Milliseconds(200), 0.03);
  ASSERT_TRUE(*r.MaybeRearm(0, 0));
  EXPECT_EQ(r.stats().interval_ns, 200'000'000u);  // 1 ms / 3% = 33 ms < floor
  // 1M pages written since: 1M x 1 us + 1 ms = 1.001 s of CPU -> 33.4 s.
  ASSERT_TRUE(*r.MaybeRearm(200'000'000, 1'000'000));
  EXPECT_EQ(r.stats().interval_ns, 33'366'666'666u);
  EXPECT_EQ(r.stats().faults, 1'000'000u);
  // Totals are cumulative: the same total again is no new fault.
  EXPECT_FALSE(*r.MaybeRearm(30'000'000'000, 1'000'000));
  ASSERT_TRUE(*r.MaybeRearm(33'566'666'666, 1'000'000));
  EXPECT_EQ(r.stats().interval_ns, 200'000'000u);
  EXPECT_EQ(r.stats().faults, 1'000'000u);
}

TEST(WriteFaultRearmTest, ExitedProcessIsNotFoundAndNotCounted) {
  FakeKernel k;
  WriteFaultRearm r = Make(&k, absl::Milliseconds(200), 0.03);
  k.next_errno = ESRCH;
  absl::StatusOr<bool> s = r.MaybeRearm(0);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::IsNotFound(s.status())) << s.status();
  EXPECT_EQ(r.stats().rearms, 0u);
  // No retry storm: the next attempt waits for the interval.
  EXPECT_FALSE(*r.MaybeRearm(1));
}

TEST(WriteFaultRearmTest, OtherErrorsNameTheErrno) {
  FakeKernel k;
  WriteFaultRearm r = Make(&k, absl::Milliseconds(200), 0.03);
  k.next_errno = EPERM;
  absl::StatusOr<bool> s = r.MaybeRearm(0);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::IsPermissionDenied(s.status())) << s.status();
  EXPECT_NE(s.status().message().find("EPERM"), std::string::npos)
      << s.status();
}

TEST(WriteFaultRearmTest, BadBudgetFallsBackToThreePercent) {
  FakeKernel k;
  k.cost_ns = 3'000'000;
  WriteFaultRearm r = Make(&k, absl::ZeroDuration(), 0);
  ASSERT_TRUE(*r.MaybeRearm(0));
  EXPECT_EQ(r.stats().interval_ns, 100'000'000u);
}

TEST(WriteFaultRearmTest, StartChecksTheProcessAfterOpening) {
  EXPECT_TRUE(absl::IsNotFound(
      StartWriteFaultRearm(getpid(), [] { return false; }).status()));
  absl::StatusOr<std::unique_ptr<WriteFaultRearm>> r =
      StartWriteFaultRearm(getpid(), [] { return true; });
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(*(*r)->MaybeRearm(0));
}

TEST(WriteFaultRearmTest, OpenClearRefsErrors) {
  EXPECT_TRUE(absl::IsInvalidArgument(OpenClearRefs(0).status()));
  // A pid that cannot exist (above PID_MAX_LIMIT).
  EXPECT_TRUE(absl::IsNotFound(OpenClearRefs(1 << 23).status()));
}

// The live file on ourselves: writes to our own pages keep working after a
// clear (the write-protect fault reuses the page in place).
TEST(WriteFaultRearmTest, LiveClearOnSelfKeepsMemoryIntact) {
  absl::StatusOr<std::unique_ptr<ClearRefsFile>> f = OpenClearRefs(getpid());
  ASSERT_TRUE(f.ok()) << f.status();
  std::vector<int> data(1 << 16, 7);
  ASSERT_EQ((*f)->ClearSoftDirty(), 0);
  for (int& v : data) v += 1;
  for (int v : data) ASSERT_EQ(v, 8);
}

// The probe against an independent reading: bit 55 of /proc/self/pagemap
// is the PTE's soft-dirty bit, always 0 on a kernel without soft-dirty
// tracking and 1 right after a write on one with it.
TEST(WriteFaultRearmTest, ProbeAgreesWithThePagemapSoftDirtyBit) {
  static volatile char page[4096] __attribute__((aligned(4096)));
  page[0] = 1;
  int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  uint64_t entry = 0;
  const off_t off =
      static_cast<off_t>(reinterpret_cast<uintptr_t>(&page[0]) / 4096 * 8);
  ASSERT_EQ(pread(fd, &entry, 8, off), 8);
  close(fd);
  const bool soft_dirty_bit = (entry >> 55) & 1;
  const absl::Status probe = ProbeSoftDirty();
  EXPECT_EQ(probe.ok(), soft_dirty_bit)
      << probe << " pagemap entry " << std::hex << entry;
  if (!probe.ok()) {
    EXPECT_TRUE(absl::IsUnimplemented(probe)) << probe;
    EXPECT_NE(probe.message().find("CONFIG_MEM_SOFT_DIRTY"), std::string::npos)
        << probe;
  }
}

}  // namespace
}  // namespace hotpage
