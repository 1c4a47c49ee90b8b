#include "sampler/hintfault/first_touch_filter.h"

#include <cstdint>
#include <functional>
#include <vector>

#include "gtest/gtest.h"

namespace hotpage {
namespace {

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kBase = 0x7f0000000000;

Sample Fault(uint64_t page) {
  Sample s;
  s.vaddr = kBase + page * 4096 + 123;
  s.source = SampleSource::kPageFault;
  return s;
}

std::vector<Sample> Faults(uint64_t first, uint64_t n) {
  std::vector<Sample> out;
  for (uint64_t p = first; p < first + n; ++p) out.push_back(Fault(p));
  return out;
}

TEST(FirstTouchFilterTest, NothingIsDroppedWhileTheResidentSetDoesNotGrow) {
  FirstTouchFilter f;
  std::vector<Sample> kept;
  f.NoteResident(0, 1000);
  f.NoteResident(50 * kMs, 1000);
  EXPECT_EQ(f.Filter(50 * kMs, Faults(0, 100), &kept), 0u);
  EXPECT_EQ(kept.size(), 100u);
  // Shrinking is no growth either.
  f.NoteResident(100 * kMs, 900);
  EXPECT_EQ(f.Filter(100 * kMs, Faults(100, 100), &kept), 0u);
  EXPECT_EQ(kept.size(), 100u);
  EXPECT_EQ(f.dropped(), 0u);
  EXPECT_EQ(f.growth_pages(), 0u);
}

TEST(FirstTouchFilterTest, TheFirstReadingIsTheBaseline) {
  FirstTouchFilter f;
  std::vector<Sample> kept;
  f.NoteResident(0, 50000);  // what the process had before: not growth
  EXPECT_EQ(f.budget(), 0u);
  EXPECT_EQ(f.Filter(0, Faults(0, 10), &kept), 0u);
  EXPECT_EQ(kept.size(), 10u);
}

TEST(FirstTouchFilterTest, AsManyUnseenPagesAreDroppedAsTheProcessGained) {
  FirstTouchFilter f;
  std::vector<Sample> kept;
  f.NoteResident(0, 1000);
  f.NoteResident(50 * kMs, 1030);  // 30 first touches
  // 40 faults on pages never seen: 30 are taken for the first touches.
  EXPECT_EQ(f.Filter(50 * kMs, Faults(0, 40), &kept), 30u);
  ASSERT_EQ(kept.size(), 10u);
  EXPECT_EQ(kept.front().vaddr, Fault(30).vaddr);  // in order
  EXPECT_EQ(f.budget(), 0u);
  EXPECT_EQ(f.dropped(), 30u);
  EXPECT_EQ(f.growth_pages(), 30u);
}

TEST(FirstTouchFilterTest, APageSeenBeforeAlwaysPasses) {
  FirstTouchFilter f;
  std::vector<Sample> kept;
  f.NoteResident(0, 1000);
  f.NoteResident(10 * kMs, 1100);
  // The first touches of pages 0-99: all dropped.
  EXPECT_EQ(f.Filter(10 * kMs, Faults(0, 100), &kept), 100u);
  // The process grows on, and the scanner's pass reaches pages 0-49: their
  // hint faults are second faults, kept although budget remains.
  f.NoteResident(20 * kMs, 1200);
  EXPECT_EQ(f.Filter(1000 * kMs, Faults(0, 50), &kept), 0u);
  EXPECT_EQ(kept.size(), 50u);
  // Pages the filter let through are remembered too.
  f.NoteResident(1010 * kMs, 1000);
  f.NoteResident(1020 * kMs, 1400);
  EXPECT_EQ(f.Filter(1020 * kMs, Faults(0, 50), &kept), 0u);
}

// The first touches made while the caller drained its rings, after its
// last reading: an unseen page meeting an empty budget reads the resident
// set again, once per call.
TEST(FirstTouchFilterTest, AnEmptyBudgetReadsTheResidentSetOncePerCall) {
  FirstTouchFilter f;
  std::vector<Sample> kept;
  f.NoteResident(0, 1000);
  uint64_t resident = 1010;
  int reads = 0;
  const std::function<uint64_t()> read = [&] {
    ++reads;
    return resident;
  };
  EXPECT_EQ(f.Filter(10 * kMs, Faults(0, 15), &kept, read), 10u);
  EXPECT_EQ(reads, 1);  // not again for the 5 left over
  EXPECT_EQ(kept.size(), 5u);
  // Within 10 ms of the last reading, pages seen before do not read it.
  EXPECT_EQ(f.Filter(15 * kMs, Faults(0, 15), &kept, read), 0u);
  EXPECT_EQ(reads, 1);
  // An unseen page with the budget empty does: a process that does not
  // grow, one read, nothing dropped.
  EXPECT_EQ(f.Filter(18 * kMs, Faults(100, 5), &kept, read), 0u);
  EXPECT_EQ(reads, 2);
  // 10 ms after the last reading a call reads it at its start, seen pages
  // or not.
  EXPECT_EQ(f.Filter(28 * kMs, Faults(0, 5), &kept, read), 0u);
  EXPECT_EQ(reads, 3);
}

// Growth is read when it happens, not when the budget next runs out: a
// reading older than 10 ms is taken at a call's start. Here the process
// gains 4096 pages by 500 ms (say, file pages no fault sample stands for)
// while 511 pages of a huge page's budget remain. At 3 s that growth is
// 2.5 s old and lapsed; read only then, it would be fresh budget and drop
// the fault of page B.
TEST(FirstTouchFilterTest, StaleGrowthDoesNotBecomeFreshBudget) {
  FirstTouchFilter f;
  std::vector<Sample> kept;
  uint64_t resident = 1000;
  const std::function<uint64_t()> read = [&] { return resident; };
  f.NoteResident(0, resident);
  resident += 512;
  EXPECT_EQ(f.Filter(10 * kMs, Faults(0, 1), &kept, read), 1u);
  EXPECT_EQ(f.budget(), 511u);
  resident += 4096;
  EXPECT_EQ(f.Filter(500 * kMs, Faults(0, 1), &kept, read), 0u);  // seen
  EXPECT_EQ(f.growth_pages(), 512u + 4096u);
  EXPECT_EQ(f.Filter(3000 * kMs, Faults(7, 1), &kept, read), 0u);
  EXPECT_EQ(kept.size(), 1u);
}

TEST(FirstTouchFilterTest, GrowthLapsesAfterItsWindow) {
  FirstTouchFilterOptions o;
  o.growth_window_ns = 100 * kMs;
  FirstTouchFilter f(o);
  std::vector<Sample> kept;
  f.NoteResident(0, 1000);
  f.NoteResident(10 * kMs, 1512);  // a huge page's first touch: 512 pages
  EXPECT_EQ(f.Filter(20 * kMs, Faults(0, 1), &kept), 1u);
  EXPECT_EQ(f.budget(), 511u);
  // Long after: the hint faults of hot pages pass.
  EXPECT_EQ(f.Filter(500 * kMs, Faults(1000, 20), &kept), 0u);
  EXPECT_EQ(kept.size(), 20u);
  EXPECT_EQ(f.budget(), 0u);
}

// A process growing by transparent huge pages: each first touch adds 512
// pages of budget and one sample. The hint faults that follow come at other
// addresses of the same huge pages: judged by their chunk (known huge once
// the engine refreshed its chunks) they pass; judged by their 4 KiB pages,
// all new, the budget would drop them.
TEST(FirstTouchFilterTest, AHugePagesFaultsAreJudgedByItsChunk) {
  constexpr uint64_t k2M = uint64_t{1} << 21;
  for (bool chunks : {true, false}) {
    FirstTouchFilter f;
    if (chunks) {
      f.SetHugeChunks([](uint64_t vaddr) { return vaddr >= kBase; });
    }
    std::vector<Sample> kept;
    f.NoteResident(0, 1000);
    std::vector<Sample> touches, faults;
    for (uint64_t c = 0; c < 4; ++c) {
      Sample t = Fault(0);
      t.vaddr = kBase + c * k2M;  // the first touch writes the first byte
      touches.push_back(t);
      Sample h = Fault(0);
      h.vaddr = kBase + c * k2M + 37 * 4096 + 8;  // a later access elsewhere
      faults.push_back(h);
    }
    // The first touches come before the chunks are known huge (the
    // predicate is consulted per sample; here it says huge already, and the
    // chunk is new all the same).
    f.NoteResident(10 * kMs, 1000 + 4 * 512);
    EXPECT_EQ(f.Filter(10 * kMs, touches, &kept), 4u);
    EXPECT_EQ(f.budget(), 4u * 511);
    EXPECT_EQ(f.Filter(500 * kMs, faults, &kept), chunks ? 0u : 4u) << chunks;
  }
}

TEST(FirstTouchFilterTest, PagesAreRememberedForOneToTwoGenerations) {
  FirstTouchFilterOptions o;
  o.generation_ns = 1000 * kMs;
  o.growth_window_ns = 100'000 * kMs;  // budget never lapses here
  FirstTouchFilter f(o);
  std::vector<Sample> kept;
  f.NoteResident(0, 1);
  f.NoteResident(0, 100001);
  EXPECT_EQ(f.Filter(0, Faults(0, 10), &kept), 10u);  // generation 0
  // Generation 1: pages 0-9 are in the previous one: they pass.
  EXPECT_EQ(f.Filter(1500 * kMs, Faults(0, 10), &kept), 0u);
  // Generation 2 still has them: they were seen in generation 1.
  EXPECT_EQ(f.Filter(2500 * kMs, Faults(0, 5), &kept), 0u);
  // Generation 4: pages 5-9 were last seen in generation 1: forgotten.
  EXPECT_EQ(f.Filter(3500 * kMs, Faults(100, 1), &kept), 1u);
  EXPECT_EQ(f.Filter(4500 * kMs, Faults(5, 5), &kept), 5u);
}

TEST(FirstTouchFilterTest, OtherSourcesPassAndUnknownResidentIsIgnored) {
  FirstTouchFilter f;
  std::vector<Sample> kept;
  f.NoteResident(0, 1000);
  f.NoteResident(10 * kMs, 0);  // unreadable: no growth, baseline kept
  EXPECT_EQ(f.budget(), 0u);
  f.NoteResident(20 * kMs, 1010);
  std::vector<Sample> in = Faults(0, 20);
  for (Sample& s : in) s.source = SampleSource::kPebsLoad;
  EXPECT_EQ(f.Filter(20 * kMs, in, &kept), 0u);
  EXPECT_EQ(kept.size(), 20u);
  EXPECT_EQ(f.budget(), 10u);
}

TEST(FirstTouchFilterTest, AFullBitmapDropsLessNeverMore) {
  FirstTouchFilterOptions o;
  o.bits_log2 = 10;  // 1024 bits
  FirstTouchFilter f(o);
  std::vector<Sample> kept;
  f.NoteResident(0, 1);
  f.NoteResident(10 * kMs, 100001);
  const size_t dropped = f.Filter(10 * kMs, Faults(0, 100000), &kept);
  EXPECT_LE(dropped, 1024u);  // at most one per bit
  EXPECT_EQ(dropped + kept.size(), 100000u);
}

}  // namespace
}  // namespace hotpage
