#include "sampler/reorder_buffer.h"

#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace hotpage {
namespace {

Sample At(uint64_t t, uint32_t cpu, uint64_t vaddr = 0x1000) {
  Sample s;
  s.time_ns = t;
  s.cpu = cpu;
  s.vaddr = vaddr;
  return s;
}

struct Out {
  std::vector<Sample> got;
  void operator()(absl::Span<const Sample> b) {
    got.insert(got.end(), b.begin(), b.end());
  }
};

TEST(SampleReorderBufferTest, InterleavedRingsComeOutInTimeOrder) {
  // Two rings drained one after the other: cpu 0's 10..50, then cpu 1's 15..55.
  SampleReorderBuffer r;
  Out out;
  std::vector<Sample> batch;
  for (uint64_t t = 10; t <= 50; t += 10) batch.push_back(At(t, 0));
  r.Add(batch, std::ref(out));
  batch.clear();
  for (uint64_t t = 15; t <= 55; t += 10) batch.push_back(At(t, 1));
  r.Add(batch, std::ref(out));
  EXPECT_TRUE(out.got.empty());  // nothing before a release
  r.Release(40, std::ref(out));
  ASSERT_EQ(out.got.size(), 6u);
  for (size_t i = 1; i < out.got.size(); ++i)
    EXPECT_LE(out.got[i - 1].time_ns, out.got[i].time_ns);
  EXPECT_EQ(out.got.back().time_ns, 35u);  // strictly below the watermark
  EXPECT_EQ(r.buffered(), 4u);
  r.Drain(std::ref(out));
  ASSERT_EQ(out.got.size(), 10u);
  for (size_t i = 1; i < out.got.size(); ++i)
    EXPECT_LE(out.got[i - 1].time_ns, out.got[i].time_ns);
  EXPECT_EQ(r.late(), 0u);
  EXPECT_EQ(r.forced(), 0u);
}

TEST(SampleReorderBufferTest, TiesKeepArrivalOrder) {
  SampleReorderBuffer r;
  Out out;
  std::vector<Sample> batch = {At(5, 1, 0xa000), At(3, 0, 0xb000),
                               At(5, 0, 0xc000), At(5, 2, 0xd000)};
  r.Add(batch, std::ref(out));
  r.Drain(std::ref(out));
  ASSERT_EQ(out.got.size(), 4u);
  EXPECT_EQ(out.got[0].vaddr, 0xb000u);
  EXPECT_EQ(out.got[1].vaddr, 0xa000u);
  EXPECT_EQ(out.got[2].vaddr, 0xc000u);
  EXPECT_EQ(out.got[3].vaddr, 0xd000u);
}

TEST(SampleReorderBufferTest, LateSamplesAreKeptAndCounted) {
  SampleReorderBuffer r;
  Out out;
  std::vector<Sample> a = {At(10, 0), At(20, 0)};
  r.Add(a, std::ref(out));
  r.Release(100, std::ref(out));  // emits 10, 20
  std::vector<Sample> b = {At(15, 1), At(30, 1)};
  r.Add(b, std::ref(out));  // 15 is below what was already written
  EXPECT_EQ(r.late(), 1u);
  r.Drain(std::ref(out));
  ASSERT_EQ(out.got.size(), 4u);  // nothing dropped
  EXPECT_EQ(out.got[2].time_ns, 15u);
  EXPECT_EQ(out.got[3].time_ns, 30u);
}

TEST(SampleReorderBufferTest, MemoryBoundEmitsTheOldestHalf) {
  SampleReorderBuffer r(/*max_samples=*/8);
  Out out;
  std::vector<Sample> batch;
  for (uint64_t t = 100; t > 90; --t)
    batch.push_back(At(t, 0));  // 100..91, reversed
  r.Add(batch, std::ref(out));
  EXPECT_EQ(r.forced(), 4u);
  ASSERT_EQ(out.got.size(), 4u);
  EXPECT_EQ(out.got[0].time_ns, 93u);  // the oldest of the first 8 (100..93)
  EXPECT_LE(r.max_buffered(), 8u);
  r.Drain(std::ref(out));
  EXPECT_EQ(out.got.size(), 10u);
  // 92 and 91 arrived after 96 was written: late, but written.
  EXPECT_EQ(r.late(), 2u);
}

// A caller with its own memory bound (the simulator's SampleOrderer) asks
// for at least the n oldest whatever their time; they come out sorted, and
// those the watermark alone would have kept are counted.
TEST(SampleReorderBufferTest, ReleaseAtLeastEmitsTheNOldestAndCountsThem) {
  SampleReorderBuffer r;
  Out out;
  std::vector<Sample> batch;
  for (uint64_t t : {40, 10, 30, 20, 50}) batch.push_back(At(t, 0));
  r.Add(batch, std::ref(out));
  r.ReleaseAtLeast(/*watermark_ns=*/20, 3,
                   std::ref(out));  // 10 by time, 20 and 30 forced
  ASSERT_EQ(out.got.size(), 3u);
  EXPECT_EQ(out.got[0].time_ns, 10u);
  EXPECT_EQ(out.got[2].time_ns, 30u);
  EXPECT_EQ(r.forced(), 2u);
  EXPECT_EQ(r.buffered(), 2u);
  r.ReleaseAtLeast(/*watermark_ns=*/0, 5,
                   std::ref(out));  // more than held: what there is
  EXPECT_EQ(out.got.size(), 5u);
  EXPECT_EQ(out.got[4].time_ns, 50u);
  EXPECT_EQ(r.forced(), 4u);
  // With a watermark above everything nothing is forced.
  batch.clear();
  for (uint64_t t : {70, 60, 80}) batch.push_back(At(t, 0));
  r.Add(batch, std::ref(out));
  r.ReleaseAtLeast(/*watermark_ns=*/100, 2, std::ref(out));
  EXPECT_EQ(out.got.size(), 8u);
  EXPECT_EQ(out.got[5].time_ns, 60u);
  EXPECT_EQ(r.forced(), 4u);
  EXPECT_EQ(r.late(), 0u);
}

// Many rings drained in bursts, released at watermarks no sample can still
// be below (the rule `record` uses): the output is fully sorted and
// nothing is late or lost.
TEST(SampleReorderBufferTest, RandomRoundsWithHonestWatermarksAreSorted) {
  std::mt19937_64 rng(7);
  SampleReorderBuffer r;
  Out out;
  const int kRings = 8;
  std::vector<uint64_t> next(kRings, 0);
  uint64_t now = 0;
  size_t total = 0;
  for (int round = 0; round < 200; ++round) {
    const uint64_t poll_start = now;
    now += 1000 + rng() % 1000;  // events up to `now` are in the rings
    for (int k = 0; k < kRings; ++k) {
      std::vector<Sample> batch;
      while (next[k] + 50 < now) {
        next[k] += 1 + rng() % 100;
        batch.push_back(At(next[k], static_cast<uint32_t>(k)));
      }
      total += batch.size();
      r.Add(batch, std::ref(out));
    }
    r.Release(poll_start, std::ref(out));
  }
  r.Drain(std::ref(out));
  ASSERT_EQ(out.got.size(), total);
  for (size_t i = 1; i < out.got.size(); ++i)
    ASSERT_LE(out.got[i - 1].time_ns, out.got[i].time_ns) << i;
  EXPECT_EQ(r.late(), 0u);
}

}  // namespace
}  // namespace hotpage
