#include "hotness/hotness_table.h"

#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "absl/types/span.h"
#include "gtest/gtest.h"
#include "hotness/access_sample.h"
#include "hotness/scanner.h"

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

PageKey Key(uint32_t asid, uint64_t page, PageKind kind = PageKind::k4K) {
  return PageKey{asid, page, kind};
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

struct Contents {
  uint64_t sum = 0;
  std::map<uint64_t, uint32_t> counts;  // packed key -> count
  uint64_t duplicates = 0;
};

Contents ReadAll(HotnessTable& t) {
  Contents c;
  for (size_t i = 0; i < t.capacity(); ++i) {
    EntryView e;
    if (!t.ReadSlot(i, &e, /*normalize=*/false)) continue;
    c.sum += e.count;
    if (!c.counts.emplace(e.key.Pack(), e.count).second) ++c.duplicates;
  }
  return c;
}

uint32_t CountOf(const HotnessTable& t, const PageKey& k) {
  auto e = t.Lookup(k);
  return e ? e->count : 0;
}

// ---------------------------------------------------------------------------
// Keys.

TEST(PageKeyTest, PacksAndUnpacks) {
  const PageKey k{4194303, (uint64_t{1} << 39) - 1, PageKind::k4K};
  EXPECT_EQ(PageKey::Unpack(k.Pack()), k);
  const PageKey h{7, 12345, PageKind::k2M};
  EXPECT_EQ(PageKey::Unpack(h.Pack()), h);
  EXPECT_NE(k.Pack(), 0u);
  EXPECT_NE(PageKey({7, 12345, PageKind::k4K}).Pack(),
            h.Pack());  // kind is part of the key
  // Out of range: address space >= 2^22, address >= 2^51.
  EXPECT_EQ(PageKey({1u << 22, 1, PageKind::k4K}).Pack(), 0u);
  EXPECT_EQ(PageKey::PackSample(Sample(1, uint64_t{1} << 39)), 0u);
  auto from =
      PageKey::FromSample(Sample(3, 0x7f12345, -1, 0, 1, PageKind::k2M));
  ASSERT_TRUE(from.has_value());
  EXPECT_EQ(from->page, 0x7f12345u);
  EXPECT_EQ(from->vaddr(), uint64_t{0x7f12345} << 21);
}

// ---------------------------------------------------------------------------
// The state word.

TEST(EntryStateTest, FirstSampleHomesOnItsNode) {
  const internal::DecodedState d =
      internal::Decode(internal::ApplySample(0, 5, 2, 3, 77));
  EXPECT_EQ(d.count, 3u);
  EXPECT_EQ(d.epoch, 5u);
  EXPECT_EQ(d.home, 2u);
  EXPECT_EQ(d.foreign, 0u);
  EXPECT_EQ(d.tick, 77u);
  EXPECT_EQ(internal::Decode(internal::ApplySample(0, 5, -1, 1, 0)).home,
            internal::kUnknownNode);
}

TEST(EntryStateTest, DecayHalvesPerElapsedEpochAndNeverGoesBackwards) {
  internal::DecodedState d;
  d.count = 1000;
  d.foreign = 100;
  d.epoch = 10;
  auto at = [&](uint32_t e) {
    return internal::DecayTo(d, e & internal::kEpochMask);
  };
  EXPECT_EQ(at(10).count, 1000u);
  EXPECT_EQ(at(11).count, 500u);
  EXPECT_EQ(at(11).foreign, 50u);
  EXPECT_EQ(at(13).count, 125u);
  EXPECT_EQ(at(13).epoch, 13u);
  EXPECT_EQ(at(40).count, 0u);    // 30 halvings
  EXPECT_EQ(at(9).count, 1000u);  // stale writer: no decay, epoch kept
  EXPECT_EQ(at(9).epoch, 10u);
  // Across the 8-bit wrap: stamp 254, now 2 (mod 256) is 4 epochs later.
  d.epoch = 254;
  EXPECT_EQ(at(258).count, 1000u >> 4);
  EXPECT_EQ(internal::EpochLag(2, 254), 4);
  EXPECT_EQ(internal::EpochLag(254, 2), -4);
}

TEST(EntryStateTest, ForeignSamplesAndRehoming) {
  // 100 samples, 76 of them from node 1, home still node 0.
  internal::DecodedState d;
  d.count = 100;
  d.foreign = 76;
  d.home = 0;
  const uint64_t s = internal::Encode(d);
  // One more from node 1: 77 of 101 is more than 3/4: node 1 becomes home
  // and the rest (24) are now foreign.
  const internal::DecodedState r =
      internal::Decode(internal::ApplySample(s, 0, 1, 1, 0));
  EXPECT_EQ(r.home, 1u);
  EXPECT_EQ(r.count, 101u);
  EXPECT_EQ(r.foreign, 24u);
  // From node 0 instead: home stays, foreign unchanged.
  const internal::DecodedState h =
      internal::Decode(internal::ApplySample(s, 0, 0, 1, 0));
  EXPECT_EQ(h.home, 0u);
  EXPECT_EQ(h.foreign, 76u);
  // An unknown node counts but votes for nobody.
  EXPECT_EQ(internal::Decode(internal::ApplySample(s, 0, -1, 1, 0)).foreign,
            76u);
}

TEST(EntryStateTest, FastDeltaAgreesWithApplySample) {
  std::mt19937_64 rng(42);
  int fast = 0;
  int rehomed = 0;
  for (int i = 0; i < 200000; ++i) {
    internal::DecodedState d;
    d.count =
        static_cast<uint32_t>(rng() % (rng() % 2 ? 100 : internal::kMaxCount)) +
        1;
    d.foreign = static_cast<uint32_t>(
        rng() % (std::min(d.count, internal::kMaxForeign) + 1));
    d.epoch = static_cast<uint32_t>(rng() % 4);
    d.home = rng() % 8 == 0 ? internal::kUnknownNode
                            : static_cast<uint32_t>(rng() % 4);
    d.tick = static_cast<uint32_t>(rng()) & internal::kTickMask;
    const uint64_t s = internal::Encode(d);
    const uint32_t epoch = static_cast<uint32_t>(rng() % 4);
    const int node = static_cast<int>(rng() % 5) - 1;
    const auto weight = static_cast<uint32_t>(rng() % 5);
    const auto tick = static_cast<uint32_t>(rng()) & internal::kTickMask;
    const uint64_t delta = internal::FastDelta(s, epoch, node, weight, tick);
    if (delta == 0) continue;
    // Re-homing is the full update's job (at an entry's first sample of an
    // epoch); the fast path only counts the foreign sample.
    if (internal::Decode(internal::ApplySample(s, epoch, node, weight, tick))
            .home != d.home) {
      ++rehomed;
      continue;
    }
    ++fast;
    ASSERT_EQ(s + delta, internal::ApplySample(s, epoch, node, weight, tick))
        << "count=" << d.count << " foreign=" << d.foreign << " home=" << d.home
        << " node=" << node << " weight=" << weight;
  }
  EXPECT_GT(fast, 20000);  // the property was exercised
  EXPECT_GT(rehomed, 0);
  // The slow cases: new epoch, first sample, home unknown for a known node.
  internal::DecodedState d;
  d.count = 5;
  d.home = 1;
  EXPECT_EQ(internal::FastDelta(internal::Encode(d), 1, 1, 1, 0), 0u);
  EXPECT_EQ(internal::FastDelta(0, 0, 1, 1, 0), 0u);
  d.home = internal::kUnknownNode;
  EXPECT_EQ(internal::FastDelta(internal::Encode(d), 0, 1, 1, 0), 0u);
}

TEST(EntryStateTest, CountSaturates) {
  internal::DecodedState d;
  d.count = internal::kMaxCount - 1;
  d.home = 0;
  const uint64_t s = internal::Encode(d);
  EXPECT_EQ(internal::FastDelta(s, 0, 0, 5, 0), 0u);
  EXPECT_EQ(internal::Decode(internal::ApplySample(s, 0, 0, 5, 0)).count,
            internal::kMaxCount);
}

// ---------------------------------------------------------------------------
// Counting.

TEST(HotnessTableTest, RejectsBadOptions) {
  HotnessTableOptions o;
  o.capacity = 0;
  EXPECT_FALSE(HotnessTable::Create(o).ok());
  o.capacity = 64;
  o.epoch_samples = 10;
  o.epoch_ns = 10;
  EXPECT_FALSE(HotnessTable::Create(o).ok());
  EXPECT_EQ(HotnessTableOptions::ForFastTier(uint64_t{1} << 30).capacity,
            2u << 18);
}

TEST(HotnessTableTest, CapacityIsAPowerOfTwoOf16ByteEntries) {
  auto t = MakeTable(1000);
  EXPECT_EQ(t->capacity(), 1024u);
  EXPECT_EQ(t->memory_bytes(), 1024u * 16);
  static_assert(HotnessTable::kBytesPerEntry == 16);
}

TEST(HotnessTableTest, ExactCountingSingleThread) {
  auto t = MakeTable(1 << 14);
  std::vector<AccessSample> v;
  std::map<uint64_t, uint32_t> expect;
  for (uint64_t p = 0; p < 3000; ++p) {
    for (uint64_t r = 0; r <= p % 7; ++r) {
      v.push_back(Sample(static_cast<uint32_t>(1 + p % 3), 0x10000 + p,
                         static_cast<int>(p % 2)));
      ++expect[Key(static_cast<uint32_t>(1 + p % 3), 0x10000 + p).Pack()];
    }
  }
  std::shuffle(v.begin(), v.end(), std::mt19937_64(1));
  IngestAll(*t, v);
  const Contents c = ReadAll(*t);
  EXPECT_EQ(c.sum, v.size());
  EXPECT_EQ(c.counts, expect);
  EXPECT_EQ(c.duplicates, 0u);
  const HotnessTable::Stats st = t->stats();
  EXPECT_EQ(st.samples, v.size());
  EXPECT_EQ(st.inserted, 3000u);
  EXPECT_EQ(st.displaced, 0u);
  EXPECT_EQ(st.dropped, 0u);
}

TEST(HotnessTableTest, ExactCountingFromSeveralThreads) {
  constexpr int kThreads = 4;
  constexpr uint64_t kPages = 5000;
  auto t = MakeTable(1 << 15);
  // Every thread samples every page (p % 5 + 1) times, in its own order:
  // the threads race on the same insertions and the same counters.
  std::vector<std::vector<AccessSample>> per_thread(kThreads);
  uint64_t total = 0;
  for (int th = 0; th < kThreads; ++th) {
    for (uint64_t p = 0; p < kPages; ++p) {
      for (uint64_t r = 0; r <= p % 5; ++r)
        per_thread[th].push_back(Sample(9, p, th % 2));
    }
    std::shuffle(per_thread[th].begin(), per_thread[th].end(),
                 std::mt19937_64(th));
    total += per_thread[th].size();
  }
  std::vector<std::thread> threads;
  for (int th = 0; th < kThreads; ++th) {
    threads.emplace_back(
        [&, th] { IngestAll(*t, per_thread[th], 32 + 16 * th); });
  }
  for (auto& th : threads) th.join();
  const Contents c = ReadAll(*t);
  EXPECT_EQ(c.sum, total);
  EXPECT_EQ(c.duplicates, 0u);
  ASSERT_EQ(c.counts.size(), kPages);
  for (uint64_t p = 0; p < kPages; ++p) {
    ASSERT_EQ(CountOf(*t, Key(9, p)), kThreads * (p % 5 + 1)) << "page " << p;
  }
  EXPECT_EQ(t->stats().displaced, 0u);
  EXPECT_EQ(t->stats().inserted, kPages);
}

TEST(HotnessTableTest, CountsRejectedSamples) {
  auto t = MakeTable(64);
  std::vector<AccessSample> v = {Sample(1u << 22, 1),
                                 Sample(1, uint64_t{1} << 40), Sample(1, 1)};
  IngestAll(*t, v);
  EXPECT_EQ(t->stats().rejected, 2u);
  EXPECT_EQ(ReadAll(*t).sum, 1u);
}

TEST(HotnessTableTest, HugePageIsOneEntry) {
  auto t = MakeTable(64);
  std::vector<AccessSample> v;
  for (int i = 0; i < 10; ++i) {
    AccessSample s = Sample(1, 0, 0, kSecond, 1, PageKind::k2M);
    s.vaddr = (uint64_t{5} << 21) + i * 4096;  // ten base pages of one THP
    v.push_back(s);
    AccessSample b = s;
    b.kind = PageKind::k4K;
    v.push_back(b);
  }
  IngestAll(*t, v);
  EXPECT_EQ(CountOf(*t, Key(1, 5, PageKind::k2M)), 10u);
  EXPECT_EQ(CountOf(*t, Key(1, (5 << 9) + 3, PageKind::k4K)), 1u);
  EXPECT_EQ(ReadAll(*t).counts.size(), 11u);
}

// ---------------------------------------------------------------------------
// Decay.

TEST(HotnessTableTest, DecayIsLazyAndHalvesPerEpoch) {
  auto t = MakeTable(256);
  IngestAll(*t, std::vector<AccessSample>(100, Sample(1, 7, 0)));
  IngestAll(*t, std::vector<AccessSample>(40, Sample(1, 8, 0)));
  EXPECT_EQ(CountOf(*t, Key(1, 7)), 100u);
  t->AdvanceEpoch(2 * kSecond);
  EXPECT_EQ(CountOf(*t, Key(1, 7)), 50u);  // a read applies the decay
  t->AdvanceEpoch(3 * kSecond);
  t->AdvanceEpoch(4 * kSecond);
  EXPECT_EQ(CountOf(*t, Key(1, 7)), 12u);
  IngestAll(*t, {Sample(1, 7, 0)});  // a touch applies it and counts
  EXPECT_EQ(CountOf(*t, Key(1, 7)), 13u);
  EXPECT_EQ(CountOf(*t, Key(1, 8)),
            5u);  // idle: decayed on read, never touched
  EXPECT_EQ(t->stats().epoch, 3u);
}

TEST(HotnessTableTest, EpochsBySampleCount) {
  auto t = MakeTable(256, /*epoch_samples=*/100);
  IngestAll(*t, std::vector<AccessSample>(250, Sample(1, 1, 0)), 50);
  EXPECT_EQ(t->epoch(), 2u);
  // The first 100 samples end epoch 0; the next 100 land on 100/2 = 50
  // (150, ending epoch 1); the last 50 land on 150/2 = 75: 125.
  EXPECT_EQ(CountOf(*t, Key(1, 1)), 125u);
}

TEST(HotnessTableTest, EpochsBySampleTime) {
  constexpr uint64_t kMs = 1'000'000;
  auto t = MakeTable(256, 0, /*epoch_ns=*/10 * kMs);
  std::vector<AccessSample> v;
  for (int i = 0; i < 35; ++i)
    v.push_back(Sample(1, 1, 0, 100 * kSecond + i * kMs));
  IngestAll(*t, v, 5);
  EXPECT_EQ(t->epoch(), 3u);  // 35 ms from an aligned start: 3 boundaries
}

TEST(HotnessTableTest, ScansKeepIdleEntriesFromAliasing) {
  // The entry epoch is 8 bits: after 256 epochs an untouched stamp looks
  // current again. A scan rewrites stale entries so that this cannot
  // happen; the control table shows what the scan prevents.
  auto scanned = MakeTable(64);
  auto control = MakeTable(64);
  for (HotnessTable* t : {scanned.get(), control.get()}) {
    IngestAll(*t, std::vector<AccessSample>(100, Sample(1, 3, 0)));
    for (int e = 0; e < 30; ++e) t->AdvanceEpoch(kSecond + e);
  }
  HotnessScanner scanner(scanned.get());
  while (!scanner.Step(16, [](const PageKey&) { return Tier::kSlow; })) {
  }
  for (HotnessTable* t : {scanned.get(), control.get()}) {
    for (int e = 30; e < 256; ++e) t->AdvanceEpoch(kSecond + e);
  }
  EXPECT_EQ(CountOf(*scanned, Key(1, 3)), 0u);
  EXPECT_EQ(CountOf(*control, Key(1, 3)),
            100u);  // aliased: why scans normalise
}

// ---------------------------------------------------------------------------
// Eviction.

TEST(HotnessTableTest, FullSetDisplacesItsColdestEntry) {
  auto t = MakeTable(8);  // one set of 8
  for (uint64_t p = 1; p <= 8; ++p) {
    IngestAll(*t, {Sample(1, p, 0, kSecond, static_cast<uint16_t>(10 * p))});
  }
  EXPECT_EQ(ReadAll(*t).counts.size(), 8u);
  IngestAll(*t, {Sample(1, 100, 0)});
  EXPECT_EQ(t->stats().displaced, 1u);
  EXPECT_EQ(t->stats().displaced_weight, 10u);
  EXPECT_FALSE(t->Lookup(Key(1, 1)).has_value());
  EXPECT_EQ(CountOf(*t, Key(1, 100)), 1u);
  for (uint64_t p = 2; p <= 8; ++p) EXPECT_EQ(CountOf(*t, Key(1, p)), 10 * p);
  // The newcomer is now the coldest: the next new page displaces it.
  IngestAll(*t, {Sample(1, 101, 0)});
  EXPECT_FALSE(t->Lookup(Key(1, 100)).has_value());
  EXPECT_EQ(t->stats().displaced_weight, 11u);
}

TEST(HotnessTableTest, AmongEqualCountsTheLongestUnseenGoes) {
  auto t = MakeTable(8);
  for (uint64_t p = 1; p <= 8; ++p) {
    // Page 5 was seen first (1 s), the others at 2 s.
    IngestAll(*t, {Sample(1, p, 0, p == 5 ? kSecond : 2 * kSecond)});
  }
  IngestAll(*t, {Sample(1, 50, 0, 3 * kSecond)});
  EXPECT_FALSE(t->Lookup(Key(1, 5)).has_value());
  EXPECT_TRUE(t->Lookup(Key(1, 4)).has_value());
}

TEST(HotnessTableTest, EvictionKeepsHotPagesAndConservesCounts) {
  auto t = MakeTable(256);
  std::mt19937_64 rng(3);
  std::vector<AccessSample> v;
  for (int i = 0; i < 100000; ++i) {
    // 30% of samples to 16 hot pages, the rest spread over 100k cold ones.
    const uint64_t page = rng() % 10 < 3 ? rng() % 16 : 1000 + rng() % 100000;
    v.push_back(Sample(2, page, static_cast<int>(rng() % 2)));
  }
  IngestAll(*t, v);
  const HotnessTable::Stats st = t->stats();
  EXPECT_GT(st.displaced, 10000u);
  const Contents c = ReadAll(*t);
  EXPECT_EQ(c.sum + st.displaced_weight + st.dropped_weight, v.size());
  for (uint64_t p = 0; p < 16; ++p) {
    EXPECT_GT(CountOf(*t, Key(2, p)), 1000u) << "hot page " << p << " lost";
  }
}

// A batch handed over in pieces of whole chunks, each with the batch's time
// bounds (IngestPart), counts exactly as the batch in one Ingest: every
// slot, the statistics and the rate window. The batch displaces (a full
// table), mixes nodes and weights, and its times are not in order (its
// middle is earlier than both ends, so the bounds cannot come from a
// piece's ends).
TEST(HotnessTableTest, PiecesOfWholeChunksCountAsTheBatch) {
  std::mt19937_64 rng(5);
  std::vector<AccessSample> v;
  for (int i = 0; i < 5000; ++i) {
    const uint64_t page = rng() % 10 < 3 ? rng() % 16 : 1000 + rng() % 3000;
    const uint64_t t =
        i == 0 || i == 4999 ? 5 * kSecond : kSecond + rng() % (3 * kSecond);
    v.push_back(Sample(2, page, static_cast<int>(rng() % 3) - 1, t,
                       static_cast<uint16_t>(1 + rng() % 3)));
  }
  auto whole = MakeTable(256);
  auto pieces = MakeTable(256);
  whole->Ingest(v);
  const size_t piece = 2 * HotnessTable::kChunk;
  for (size_t i = 0; i < v.size(); i += piece) {
    pieces->IngestPart(
        absl::MakeConstSpan(v.data() + i, std::min(piece, v.size() - i)),
        5 * kSecond, 5 * kSecond);
  }
  const HotnessTable::Stats a = whole->stats();
  const HotnessTable::Stats b = pieces->stats();
  EXPECT_GT(a.displaced, 1000u);
  EXPECT_EQ(a.samples, b.samples);
  EXPECT_EQ(a.weight, b.weight);
  EXPECT_EQ(a.inserted, b.inserted);
  EXPECT_EQ(a.displaced, b.displaced);
  EXPECT_EQ(a.displaced_weight, b.displaced_weight);
  EXPECT_EQ(a.dropped, b.dropped);
  EXPECT_EQ(whole->now_ns(), pieces->now_ns());
  EXPECT_EQ(whole->rate_window().window_ns, pieces->rate_window().window_ns);
  EXPECT_EQ(whole->rate_window().sample_period,
            pieces->rate_window().sample_period);
  for (size_t i = 0; i < whole->capacity(); ++i) {
    EntryView x, y;
    ASSERT_EQ(whole->ReadSlot(i, &x, /*normalize=*/false),
              pieces->ReadSlot(i, &y, /*normalize=*/false));
    EXPECT_EQ(x.key.Pack(), y.key.Pack()) << "slot " << i;
    EXPECT_EQ(x.count, y.count) << "slot " << i;
    EXPECT_EQ(x.node, y.node) << "slot " << i;
    EXPECT_EQ(x.foreign, y.foreign) << "slot " << i;
    EXPECT_EQ(x.sharing, y.sharing) << "slot " << i;
    EXPECT_EQ(x.last_seen_ns, y.last_seen_ns) << "slot " << i;
  }
}

// ---------------------------------------------------------------------------
// Accessor nodes and last seen.

TEST(HotnessTableTest, PrivateSharedAndUnknownPages) {
  auto t = MakeTable(256);
  std::vector<AccessSample> v;
  for (int i = 0; i < 100; ++i) {
    v.push_back(Sample(1, 1, 1));                // only node 1
    v.push_back(Sample(1, 2, i % 2));            // nodes 0 and 1 alike
    v.push_back(Sample(1, 3, -1));               // no node
    v.push_back(Sample(1, 4, i == 50 ? 3 : 2));  // node 2, one stray from 3
  }
  IngestAll(*t, v);
  auto e1 = t->Lookup(Key(1, 1));
  ASSERT_TRUE(e1.has_value());
  EXPECT_EQ(e1->node, 1);
  EXPECT_EQ(e1->sharing, Sharing::kPrivate);
  auto e2 = t->Lookup(Key(1, 2));
  EXPECT_EQ(e2->sharing, Sharing::kShared);
  EXPECT_EQ(e2->foreign, 50u);
  auto e3 = t->Lookup(Key(1, 3));
  EXPECT_EQ(e3->node, -1);
  EXPECT_EQ(e3->sharing, Sharing::kUnknown);
  auto e4 = t->Lookup(Key(1, 4));
  EXPECT_EQ(e4->node, 2);
  EXPECT_EQ(e4->sharing, Sharing::kPrivate);
  EXPECT_EQ(e4->foreign, 1u);
}

TEST(HotnessTableTest, HomeFollowsTheAccessorWhenItMoves) {
  auto t = MakeTable(256);
  IngestAll(*t, std::vector<AccessSample>(40, Sample(1, 9, 0)));
  IngestAll(*t, std::vector<AccessSample>(200, Sample(1, 9, 1)));
  // Within the epoch the home stays (re-homing is left to the full update
  // at the entry's first sample of an epoch); the page reads as shared.
  auto e = t->Lookup(Key(1, 9));
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->node, 0);
  EXPECT_EQ(e->count, 240u);
  EXPECT_EQ(e->foreign, 200u);
  EXPECT_EQ(e->sharing, Sharing::kShared);
  // Next epoch, next sample from node 1: 101 of 121 decayed samples came
  // from node 1, more than 3/4, so it becomes home; node 0's 20 are the
  // foreign ones now.
  t->AdvanceEpoch(2 * kSecond);
  IngestAll(*t, {Sample(1, 9, 1)});
  e = t->Lookup(Key(1, 9));
  EXPECT_EQ(e->node, 1);
  EXPECT_EQ(e->count, 121u);
  EXPECT_EQ(e->foreign, 20u);
  EXPECT_EQ(e->sharing, Sharing::kShared);
  // Node 0's samples decay away: private to node 1.
  for (int i = 0; i < 4; ++i) t->AdvanceEpoch(3 * kSecond + i);
  IngestAll(*t, std::vector<AccessSample>(100, Sample(1, 9, 1)));
  e = t->Lookup(Key(1, 9));
  EXPECT_EQ(e->node, 1);
  EXPECT_EQ(e->count, 107u);
  EXPECT_EQ(e->sharing, Sharing::kPrivate);
}

TEST(HotnessTableTest, LastSeenIsTheLatestSampleToTheTick) {
  auto t = MakeTable(64);
  IngestAll(*t, {Sample(1, 1, 0, 10 * kSecond), Sample(1, 2, 0, 70 * kSecond)});
  IngestAll(*t, {Sample(1, 1, 0, 40 * kSecond)});
  const uint64_t tick_ns = uint64_t{1} << internal::kTickNsShift;
  auto e1 = t->Lookup(Key(1, 1));
  auto e2 = t->Lookup(Key(1, 2));
  EXPECT_LE(e1->last_seen_ns, 40 * kSecond);
  EXPECT_GT(e1->last_seen_ns + tick_ns, 40 * kSecond);
  EXPECT_LE(e2->last_seen_ns, 70 * kSecond);
  EXPECT_GT(e2->last_seen_ns + tick_ns, 70 * kSecond);
  EXPECT_EQ(t->now_ns(), 70 * kSecond);
}

// ---------------------------------------------------------------------------
// The table's rate window (the statistics themselves: rate_stats_test.cc).

TEST(RateWindowTest, SteadyRateWithDecayIsInsideTheInterval) {
  // 1000 samples/s of one page, period 5000 (5M accesses/s), epochs of
  // 100 ms, observed for 1.05 s: the decayed count over the effective
  // window t + L must estimate the rate.
  constexpr uint64_t kMs = 1'000'000;
  auto t = MakeTable(64, 0, 100 * kMs);
  std::vector<AccessSample> v;
  for (int i = 0; i < 1050; ++i) {
    v.push_back(
        Sample(1, 1, 0, 1000 * 100 * kMs + i * kMs, 1, PageKind::k4K, 5000));
  }
  IngestAll(*t, v, 8);
  const RateWindow w = t->rate_window();
  EXPECT_DOUBLE_EQ(w.sample_period, 5000);
  EXPECT_NEAR(static_cast<double>(w.window_ns), 150.0 * kMs, 2.0 * kMs);
  const RateEstimate r = w.Estimate(CountOf(*t, Key(1, 1)), 1.96);
  EXPECT_LE(r.lo_per_sec, 5e6);
  EXPECT_GE(r.hi_per_sec, 5e6);
  EXPECT_NEAR(r.per_sec, 5e6, 0.05 * 5e6);
}

}  // namespace
}  // namespace hotpage
