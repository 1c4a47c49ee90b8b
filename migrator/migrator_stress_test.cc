// Concurrency stress for the Migrator: submitters, readers and a control
// thread race the migrator thread; afterwards every request is accounted
// exactly once. Meant for `bazel test --config=tsan //migrator/...`, where
// TSan checks the locking (the plain run checks the accounting).

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <random>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "migrator/fake_page_mover.h"
#include "migrator/migrator.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {
namespace {

constexpr uint64_t kBase = 0x7f0000000000;
constexpr size_t kPages = 8192;
constexpr int kSubmitters = 4;
constexpr int kBatchesPerSubmitter = 1500;
constexpr int kPerBatch = 16;

MigratorOptions StressOptions() {
  MigratorOptions o;
  o.queue_capacity = 1024;  // small: drops happen
  o.batch_pages = 128;
  o.rate_limit_bytes_per_sec = 0;
  o.cpu_budget = 0;
  o.retry_delay = absl::Microseconds(200);
  o.max_retries = 2;
  o.enomem_backoff = absl::Milliseconds(2);
  o.pingpong.slots = 1024;
  return o;
}

void SetUpPages(FakePageMover& mover) {
  mover.set_record_calls(false);
  mover.AddPages(kBase, kPages, kBasePageBytes, 1);
  for (size_t i = 0; i < kPages; i += 7) {
    mover.InjectMoveError(kBase + i * kBasePageBytes, EBUSY, 1);
  }
  for (size_t i = 0; i < kPages; i += 13) {
    mover.InjectMoveError(kBase + i * kBasePageBytes, EACCES);
  }
}

void Submitter(Migrator* m, int seed, std::atomic<uint64_t>* offered) {
  std::mt19937 rng(seed);
  std::vector<MoveRequest> batch(kPerBatch);
  for (int b = 0; b < kBatchesPerSubmitter; ++b) {
    for (MoveRequest& r : batch) {
      const uint64_t page = rng() % kPages;
      const bool promote = rng() % 2 == 0;
      r = MoveRequest();
      r.vaddr = kBase + page * kBasePageBytes;
      r.from_node = promote ? 1 : 0;
      r.to_node = promote ? 0 : 1;
      r.reason = promote ? MoveReason::kPromote : MoveReason::kDemote;
      if (rng() % 50 == 0) r.vaddr += 1;  // invalid now and then
    }
    m->Submit(batch);
    offered->fetch_add(batch.size(), std::memory_order_relaxed);
    if (b % 32 == 0) std::this_thread::yield();
  }
}

TEST(MigratorStressTest, RacingSubmittersReadersAndControl) {
  auto fs = KernelFs::Open("/");
  ASSERT_TRUE(fs.ok());
  auto h = ProcessHandle::Attach(getpid(), &*fs);
  ASSERT_TRUE(h.ok()) << h.status();
  FakePageMover mover;
  SetUpPages(mover);
  Migrator m(StressOptions(), std::move(*h), &mover);
  ASSERT_TRUE(m.Start().ok());

  std::atomic<bool> done{false};
  std::atomic<uint64_t> offered{0};
  std::atomic<int> submitters_left{kSubmitters};
  // Reader passes made while a submitter was still submitting; submitters
  // start once the reader has, so on a loaded host too this is above 0.
  std::atomic<bool> reading{false};
  std::atomic<uint64_t> racing_reads{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kSubmitters; ++i) {
    threads.emplace_back([&, i] {
      while (!reading.load(std::memory_order_relaxed))
        std::this_thread::yield();
      Submitter(&m, i + 1, &offered);
      submitters_left.fetch_sub(1, std::memory_order_relaxed);
    });
  }
  std::thread reader([&] {
    reading.store(true, std::memory_order_relaxed);  // a start flag only
    uint64_t n = 0;
    while (!done.load(std::memory_order_relaxed)) {
      if (submitters_left.load(std::memory_order_relaxed) > 0)
        racing_reads.fetch_add(1, std::memory_order_relaxed);
      MigratorStats s = m.Snapshot();
      n += s.moved_pages();
      n += m.IsHeld(kBase + (n % kPages) * kBasePageBytes);
      n += m.IsNodeBackedOff(0);
      n += m.BackedOffNodes().size();
    }
  });
  std::thread control([&] {
    int i = 0;
    while (!done.load(std::memory_order_relaxed)) {
      mover.SetNodeFull(0, i % 4 == 0);
      if (i % 3 == 0) m.ClearNodeBackoff(0);
      m.SetRateLimit(i % 5 == 0 ? 2e9 : 0);
      ++i;
      std::this_thread::sleep_for(std::chrono::microseconds(300));
    }
    mover.SetNodeFull(0, false);
    m.SetRateLimit(0);
  });
  for (std::thread& t : threads) t.join();
  done.store(true);
  reader.join();
  control.join();
  EXPECT_GT(racing_reads.load(), 0u)
      << "the reader never ran beside a submitter";
  ASSERT_TRUE(m.WaitUntilIdle(absl::Seconds(120)));
  m.Stop();

  const MigratorStats s = m.Snapshot();
  const uint64_t total = offered.load();
  EXPECT_EQ(total, uint64_t{kSubmitters} * kBatchesPerSubmitter * kPerBatch);
  EXPECT_EQ(s.submitted + s.dropped_queue_full + s.dropped_invalid +
                s.dropped_node_backoff + s.dropped_not_running,
            total)
      << s.ToString();
  EXPECT_EQ(s.settled(), s.submitted) << s.ToString();
  EXPECT_GT(s.moved_pages(), 0u) << s.ToString();
  EXPECT_GT(s.dropped_invalid, 0u);
  EXPECT_GT(s.failed(EACCES), 0u);
  // Every page is on a real node still.
  EXPECT_EQ(mover.CountOn(0) + mover.CountOn(1), kPages);
  std::printf("stress: %s\n", s.ToString().c_str());
}

TEST(MigratorStressTest, StopRacesSubmitters) {
  auto fs = KernelFs::Open("/");
  ASSERT_TRUE(fs.ok());
  for (int round = 0; round < 5; ++round) {
    auto h = ProcessHandle::Attach(getpid(), &*fs);
    ASSERT_TRUE(h.ok());
    FakePageMover mover;
    SetUpPages(mover);
    Migrator m(StressOptions(), std::move(*h), &mover);
    ASSERT_TRUE(m.Start().ok());
    std::atomic<uint64_t> offered{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 2; ++i) {
      threads.emplace_back(Submitter, &m, round * 10 + i, &offered);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2 + round));
    m.Stop();
    for (std::thread& t : threads) t.join();
    const MigratorStats s = m.Snapshot();
    EXPECT_EQ(s.state, MigratorState::kStopped);
    EXPECT_EQ(s.settled(), s.submitted) << s.ToString();
    EXPECT_EQ(s.submitted + s.dropped_queue_full + s.dropped_invalid +
                  s.dropped_node_backoff + s.dropped_not_running,
              offered.load());
  }
}

}  // namespace
}  // namespace hotpage
