// HotnessScanner over a real table: the lists, the histogram and its
// Memtis-style threshold, the hottest-on-fast option, decay at scan time;
// and ShouldPromote's interval test.

#include "hotness/scanner.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/types/span.h"
#include "gtest/gtest.h"
#include "hotness/access_sample.h"
#include "hotness/hotness_table.h"
#include "hotness/rate_stats.h"

namespace hotpage {
namespace {

constexpr uint64_t kSecond = 1'000'000'000;

AccessSample Sample(uint32_t asid, uint64_t page, int node = -1,
                    uint64_t time_ns = kSecond, uint16_t weight = 1,
                    PageKind kind = PageKind::k4K, uint32_t period = 1) {
  AccessSample s;
  s.address_space = asid;
  s.vaddr = (page << PageShift(kind)) + 123;
  s.node = static_cast<int8_t>(node);
  s.time_ns = time_ns;
  s.weight = weight;
  s.kind = kind;
  s.sample_period = period;
  return s;
}

std::unique_ptr<HotnessTable> MakeTable(size_t capacity,
                                        uint64_t epoch_samples = 0,
                                        uint64_t epoch_ns = 0) {
  HotnessTableOptions o;
  o.capacity = capacity;
  o.epoch_samples = epoch_samples;
  o.epoch_ns = epoch_ns;
  auto t = HotnessTable::Create(o);
  EXPECT_TRUE(t.ok()) << t.status();
  return std::move(t).value();
}

void IngestAll(HotnessTable& t, const std::vector<AccessSample>& v,
               size_t batch = 64) {
  for (size_t i = 0; i < v.size(); i += batch) {
    t.Ingest(absl::MakeConstSpan(v.data() + i, std::min(batch, v.size() - i)));
  }
}

TEST(ShouldPromoteTest, NeedsTheCandidatesLowerBoundAboveTheVictimsUpperBound) {
  RateWindow w;
  w.window_ns = kSecond;
  auto est = [&](uint32_t k) {
    return PageEstimate{EntryView{}, w.Estimate(k, 1.96)};
  };
  EXPECT_TRUE(ShouldPromote(est(400), est(300)));   // 361 > 334
  EXPECT_FALSE(ShouldPromote(est(330), est(300)));  // within the noise
  EXPECT_FALSE(ShouldPromote(est(300), est(400)));
  EXPECT_TRUE(ShouldPromote(est(12), est(0)));  // 6.2 > 3.7
  EXPECT_FALSE(ShouldPromote(est(5), est(0)));
}

TEST(Log2HistogramTest, BinsAndMemtisThreshold) {
  EXPECT_EQ(Log2Histogram::BinOf(0), 0);
  EXPECT_EQ(Log2Histogram::BinOf(1), 1);
  EXPECT_EQ(Log2Histogram::BinOf(3), 2);
  EXPECT_EQ(Log2Histogram::BinOf(4), 3);
  EXPECT_EQ(Log2Histogram::BinOf(internal::kMaxCount), 21);
  Log2Histogram h;
  for (int i = 0; i < 10; ++i) h.Add(100, 1);  // bin 7: 64..127
  for (int i = 0; i < 20; ++i) h.Add(10, 1);   // bin 4: 8..15
  for (int i = 0; i < 100; ++i) h.Add(1, 1);   // bin 1
  h.Add(1000, 512);                            // a huge page, bin 10
  EXPECT_EQ(h.total_pages(), 642u);
  EXPECT_EQ(h.ThresholdForCapacity(511), 1024u);  // not even the THP fits: none
  EXPECT_EQ(Log2Histogram().ThresholdForCapacity(100), 1u);
  // Only the THP fits: any threshold in 128..512 selects it alone; the
  // smallest such bin floor is 128 (bins 8 and 9 are empty).
  EXPECT_EQ(h.ThresholdForCapacity(512), 128u);
  EXPECT_EQ(h.ThresholdForCapacity(521), 128u);
  EXPECT_EQ(h.ThresholdForCapacity(522), 16u);  // + the ten pages at 100
  EXPECT_EQ(h.ThresholdForCapacity(600), 2u);   // + the twenty at 10
  EXPECT_EQ(h.ThresholdForCapacity(642), 1u);   // everything
}

TEST(HotnessScannerTest, ListsHottestSlowAndColdestFastWithBounds) {
  auto t = MakeTable(4096);
  std::vector<AccessSample> v;
  for (uint64_t p = 0; p < 1000; ++p) {
    v.push_back(Sample(1, p, 0, kSecond, static_cast<uint16_t>(p + 1),
                       PageKind::k4K, 100));
  }
  v.push_back(
      Sample(1, 5000, 0, 2 * kSecond, 1, PageKind::k4K, 100));  // now = 2 s
  IngestAll(*t, v);
  HotnessScanner scanner(t.get(), ScanOptions{.top_k = 5, .z = 1.96});
  auto tier = [](const PageKey& k) {
    if (k.page == 5000) return Tier::kUnknown;
    return k.page % 2 == 0 ? Tier::kFast : Tier::kSlow;
  };
  ASSERT_EQ(t->stats().displaced, 0u);
  int calls = 1;
  while (!scanner.Step(100, tier)) ++calls;
  EXPECT_EQ(calls, 41);  // 4096 slots, 100 per call
  const ScanResult& r = scanner.last_result();
  EXPECT_EQ(r.pass, 1u);
  EXPECT_EQ(r.live_entries, 1001u);
  ASSERT_EQ(r.hottest_not_fast.size(), 5u);
  ASSERT_EQ(r.coldest_on_fast.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(r.hottest_not_fast[i].entry.key.page, 999u - 2 * i);
    EXPECT_EQ(r.coldest_on_fast[i].entry.key.page, 2u * i);
  }
  // Window 1 s (first to last sample), period 100: page 999 (1000
  // samples) runs at 100k accesses/s.
  const PageEstimate& top = r.hottest_not_fast[0];
  EXPECT_EQ(top.entry.count, 1000u);
  EXPECT_DOUBLE_EQ(top.rate.per_sec, 100000);
  EXPECT_LT(top.rate.lo_per_sec, top.rate.per_sec);
  EXPECT_GT(top.rate.hi_per_sec, top.rate.per_sec);
  EXPECT_TRUE(ShouldPromote(r.hottest_not_fast[0], r.coldest_on_fast[0]));
  // The histogram covers every live entry; 1000 pages hold counts 1..1000.
  EXPECT_EQ(r.histogram.total_pages(), 1001u);
  EXPECT_EQ(r.histogram.pages(10), 1000u - 511u);  // counts 512..1000
  EXPECT_EQ(r.HotThreshold(489), 512u);  // exactly the pages of bin 10 fit
  // The next pass starts over.
  EXPECT_FALSE(scanner.Step(100, tier));
  EXPECT_EQ(scanner.cursor(), 100u);
}

// The round's way (engine.cc): the live entries read once
// (HotnessTable::ReadSlots), then a pass over them. The same lists, in the
// same order (ties included: many pages share a count), histogram and live
// count as a pass of Step() over the table; each listed page carries where
// it was found (its slot, or its index in the entries).
TEST(HotnessScannerTest, PassOverTheEntriesReadListsAsStepDoes) {
  auto t = MakeTable(4096);
  std::vector<AccessSample> v;
  for (uint64_t p = 0; p < 1500; ++p) {
    v.push_back(Sample(1, p, 0, kSecond + p, static_cast<uint16_t>(p % 7 + 1),
                       PageKind::k4K, 100));
  }
  IngestAll(*t, v);
  auto tier = [](const PageKey& k) {
    return k.page % 5 == 0   ? Tier::kUnknown
           : k.page % 2 == 0 ? Tier::kFast
                             : Tier::kSlow;
  };
  const ScanOptions opt{.top_k = 64, .z = 1.96, .hottest_on_fast = true};
  HotnessScanner by_step(t.get(), opt);
  while (!by_step.Step(300, tier)) {
  }
  std::vector<EntryView> entries;
  t->ReadSlots(0, 1000, /*normalize=*/true, &entries);
  t->ReadSlots(1000, t->capacity(), /*normalize=*/true, &entries);
  ASSERT_EQ(entries.size(), by_step.last_result().live_entries);
  ASSERT_GT(entries.size(), 1400u);  // a few displaced from full sets
  std::vector<Tier> tiers;
  for (const EntryView& e : entries) tiers.push_back(tier(e.key));
  HotnessScanner by_pass(t.get(), opt);
  by_pass.Pass(entries, tiers);
  const ScanResult& a = by_step.last_result();
  const ScanResult& b = by_pass.last_result();
  EXPECT_EQ(b.pass, 1u);
  EXPECT_EQ(b.live_entries, a.live_entries);
  for (int bin = 0; bin < Log2Histogram::kBins; ++bin)
    EXPECT_EQ(b.histogram.pages(bin), a.histogram.pages(bin)) << bin;
  auto same = [&](const std::vector<PageEstimate>& x,
                  const std::vector<PageEstimate>& y) {
    ASSERT_EQ(x.size(), 64u);
    ASSERT_EQ(y.size(), x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_EQ(y[i].entry.key.Pack(), x[i].entry.key.Pack()) << i;
      EXPECT_EQ(y[i].rate.hi_per_sec, x[i].rate.hi_per_sec) << i;
      // Step: the slot; Pass: the index in `entries`.
      EntryView at_slot;
      ASSERT_TRUE(t->ReadSlot(x[i].index, &at_slot, /*normalize=*/false));
      EXPECT_EQ(at_slot.key.Pack(), x[i].entry.key.Pack()) << i;
      ASSERT_LT(y[i].index, entries.size());
      EXPECT_EQ(entries[y[i].index].key.Pack(), y[i].entry.key.Pack()) << i;
    }
  };
  same(a.hottest_not_fast, b.hottest_not_fast);
  same(a.coldest_on_fast, b.coldest_on_fast);
  same(a.hottest_on_fast, b.hottest_on_fast);
}

TEST(HotnessScannerTest, ListsHottestOnFastOnlyWhenAsked) {
  auto t = MakeTable(4096);
  std::vector<AccessSample> v;
  for (uint64_t page = 0; page < 100; ++page) {
    for (uint64_t n = 0; n <= page; ++n) v.push_back(Sample(1, page, 0));
  }
  IngestAll(*t, v);
  auto tier = [](const PageKey& k) {
    return k.page % 2 == 0 ? Tier::kFast : Tier::kSlow;
  };
  HotnessScanner off(t.get(), ScanOptions{.top_k = 3});
  while (!off.Step(1024, tier)) {
  }
  EXPECT_TRUE(off.last_result().hottest_on_fast.empty());
  HotnessScanner on(t.get(), ScanOptions{.top_k = 3, .hottest_on_fast = true});
  while (!on.Step(1024, tier)) {
  }
  const ScanResult& r = on.last_result();
  ASSERT_EQ(r.hottest_on_fast.size(), 3u);
  EXPECT_EQ(r.hottest_on_fast[0].entry.key.page, 98u);
  EXPECT_EQ(r.hottest_on_fast[1].entry.key.page, 96u);
  EXPECT_EQ(r.hottest_on_fast[2].entry.key.page, 94u);
  // The other lists are unchanged by the option.
  EXPECT_EQ(r.hottest_not_fast[0].entry.key.page, 99u);
  EXPECT_EQ(r.coldest_on_fast[0].entry.key.page, 0u);
}

TEST(HotnessScannerTest, SeesDecayOnlyAtScanTime) {
  auto t = MakeTable(64);
  IngestAll(*t, std::vector<AccessSample>(64, Sample(1, 1, 0)));
  t->AdvanceEpoch(kSecond);
  t->AdvanceEpoch(kSecond);
  HotnessScanner scanner(t.get(), ScanOptions{.top_k = 1});
  ASSERT_TRUE(scanner.Step(64, [](const PageKey&) { return Tier::kSlow; }));
  EXPECT_EQ(scanner.last_result().hottest_not_fast.at(0).entry.count, 16u);
}

}  // namespace
}  // namespace hotpage
