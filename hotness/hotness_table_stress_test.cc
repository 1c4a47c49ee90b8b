// Concurrency stress for HotnessTable: writers, epoch advances, eviction
// and scans at once. Meant for `bazel test --config=tsan //hotness/...`
// (it also runs, faster, in the plain build). Links nothing uninstrumented
// that synchronises: no TBB, no absl::Mutex.

#include <atomic>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "absl/types/span.h"
#include "gtest/gtest.h"
#include "hotness/hotness_table.h"
#include "hotness/scanner.h"

namespace hotpage {
namespace {

constexpr int kWriters = 3;
constexpr uint64_t kSecond = 1'000'000'000;

AccessSample Sample(uint64_t page, int node, uint64_t time_ns) {
  AccessSample s;
  s.address_space = 42;
  s.vaddr = page << 12;
  s.node = static_cast<int8_t>(node);
  s.time_ns = time_ns;
  s.sample_period = 997;
  return s;
}

std::unique_ptr<HotnessTable> MakeTable(size_t capacity,
                                        uint64_t epoch_samples) {
  HotnessTableOptions o;
  o.capacity = capacity;
  o.epoch_samples = epoch_samples;
  return std::move(HotnessTable::Create(o)).value();
}

// Runs `writer(thread_index)` on kWriters threads while a scanner thread
// steps through the table (and looks pages up) until they finish. Returns
// the scan passes completed while a writer was still running (the writers
// start once the scanner has, so on a loaded host too this is above 0).
template <typename Writer>
uint64_t RunWithScanner(HotnessTable& table, Writer writer) {
  std::atomic<bool> done{false};
  std::atomic<bool> scanning{false};
  std::atomic<int> writers_left{kWriters};
  std::atomic<uint64_t> passes{0};
  std::thread scanner([&] {
    scanning.store(true, std::memory_order_relaxed);  // a start flag only
    HotnessScanner scan(&table, ScanOptions{.top_k = 8, .z = 1.96});
    auto tier = [](const PageKey& k) {
      return k.page % 2 ? Tier::kSlow : Tier::kFast;
    };
    // relaxed: a stop flag; the join below orders everything else.
    while (!done.load(std::memory_order_relaxed)) {
      if (scan.Step(97, tier)) {
        if (writers_left.load(std::memory_order_relaxed) > 0)
          passes.fetch_add(1, std::memory_order_relaxed);
        const ScanResult& r = scan.last_result();
        for (const PageEstimate& e : r.hottest_not_fast) {
          EXPECT_LE(e.rate.lo_per_sec, e.rate.per_sec);
          EXPECT_LE(e.rate.per_sec, e.rate.hi_per_sec);
        }
      }
      table.Lookup(PageKey{42, 1, PageKind::k4K});
    }
  });
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w)
    writers.emplace_back([&, w] {
      while (!scanning.load(std::memory_order_relaxed))
        std::this_thread::yield();
      writer(w);
      writers_left.fetch_sub(1, std::memory_order_relaxed);
    });
  for (auto& t : writers) t.join();
  done.store(true, std::memory_order_relaxed);
  scanner.join();
  return passes.load(std::memory_order_relaxed);
}

uint64_t SumOfCounts(HotnessTable& t, uint64_t* entries, uint64_t* duplicates) {
  uint64_t sum = 0;
  std::set<uint64_t> seen;
  *entries = *duplicates = 0;
  for (size_t i = 0; i < t.capacity(); ++i) {
    EntryView e;
    if (!t.ReadSlot(i, &e, false)) continue;
    sum += e.count;
    ++*entries;
    if (!seen.insert(e.key.Pack()).second) ++*duplicates;
  }
  return sum;
}

// No eviction, no decay: every sample is counted exactly once, every page
// is in the table exactly once, while a scanner reads concurrently.
TEST(HotnessTableStressTest, ConcurrentWritersCountExactly) {
  constexpr uint64_t kPages = 3000;
  constexpr int kBatches = 1000;
  constexpr int kBatch = 64;
  auto table = MakeTable(1 << 15, 0);
  std::vector<std::map<uint64_t, uint64_t>> expected(kWriters);
  const uint64_t passes = RunWithScanner(*table, [&](int w) {
    std::mt19937_64 rng(100 + w);
    std::vector<AccessSample> batch(kBatch);
    for (int b = 0; b < kBatches; ++b) {
      for (AccessSample& s : batch) {
        // Skewed: low pages are hot, so writers collide on them.
        const uint64_t page = (rng() % kPages) % (1 + rng() % kPages);
        s = Sample(page, w % 2, kSecond + b);
        ++expected[w][page];
      }
      table->Ingest(absl::MakeConstSpan(batch));
    }
  });
  EXPECT_GT(passes, 0u)
      << "the scanner never finished a pass during the writes";
  std::map<uint64_t, uint64_t> total;
  for (const auto& m : expected) {
    for (const auto& [page, n] : m) total[page] += n;
  }
  uint64_t entries, duplicates;
  EXPECT_EQ(SumOfCounts(*table, &entries, &duplicates),
            uint64_t{kWriters} * kBatches * kBatch);
  EXPECT_EQ(duplicates, 0u);
  EXPECT_EQ(entries, total.size());
  for (const auto& [page, n] : total) {
    auto e = table->Lookup(PageKey{42, page, PageKind::k4K});
    ASSERT_TRUE(e.has_value()) << "page " << page << " lost";
    ASSERT_EQ(e->count, n) << "page " << page;
  }
  const HotnessTable::Stats st = table->stats();
  EXPECT_EQ(st.displaced, 0u);
  EXPECT_EQ(st.dropped, 0u);
  EXPECT_EQ(st.inserted, total.size());
}

// A small table under churn: displacement races with counting, and no
// sample is lost or counted twice (held + displaced + dropped = ingested).
TEST(HotnessTableStressTest, EvictionConservesEverySample) {
  constexpr int kBatches = 1000;
  constexpr int kBatch = 64;
  auto table = MakeTable(256, 0);
  const uint64_t passes = RunWithScanner(*table, [&](int w) {
    std::mt19937_64 rng(200 + w);
    std::vector<AccessSample> batch(kBatch);
    for (int b = 0; b < kBatches; ++b) {
      for (int i = 0; i < kBatch; ++i) {
        // Half the samples on 32 pages all writers share, half on 20k.
        const uint64_t page = i % 2 ? rng() % 32 : 100 + rng() % 20000;
        batch[i] = Sample(page, static_cast<int>(rng() % 2), kSecond + b);
      }
      table->Ingest(absl::MakeConstSpan(batch));
    }
  });
  EXPECT_GT(passes, 0u)
      << "the scanner never finished a pass during the writes";
  const HotnessTable::Stats st = table->stats();
  uint64_t entries, duplicates;
  const uint64_t held = SumOfCounts(*table, &entries, &duplicates);
  EXPECT_GT(st.displaced, 1000u);
  EXPECT_EQ(held + st.displaced_weight + st.dropped_weight,
            uint64_t{kWriters} * kBatches * kBatch)
      << "held " << held << " displaced " << st.displaced_weight << " dropped "
      << st.dropped_weight;
  EXPECT_LE(entries, table->capacity());
}

// Everything at once: writers, sample-count epochs, a thread advancing
// epochs by hand, eviction and scans. The hot pages, sampled in every
// batch, must be in the table at the end with their recent counts.
TEST(HotnessTableStressTest, DecayEvictionAndScansTogether) {
  constexpr int kHot = 16;
  constexpr int kBatches = 800;
  auto table = MakeTable(512, /*epoch_samples=*/10000);
  std::atomic<bool> stop{false};
  std::thread epochs([&] {
    uint64_t t = kSecond;
    while (!stop.load(std::memory_order_relaxed)) {
      table->AdvanceEpoch(t += 1000);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  const uint64_t passes = RunWithScanner(*table, [&](int w) {
    std::mt19937_64 rng(300 + w);
    std::vector<AccessSample> batch;
    for (int b = 0; b < kBatches; ++b) {
      batch.clear();
      for (int h = 0; h < kHot; ++h) {
        batch.push_back(Sample(h, w, kSecond + b));
        batch.push_back(Sample(h, w, kSecond + b));
      }
      for (int c = 0; c < 32; ++c)
        batch.push_back(Sample(1000 + rng() % 1000000, w, kSecond + b));
      std::shuffle(batch.begin(), batch.end(), rng);
      table->Ingest(absl::MakeConstSpan(batch));
    }
  });
  stop.store(true, std::memory_order_relaxed);
  epochs.join();
  // On a loaded host the epoch thread can run many times between the last
  // batch and `stop`, halving the hot counts to 0 (a scan lists only pages
  // with a count); one more hot batch after decay stopped makes the final
  // scan's expectation independent of that timing.
  {
    std::vector<AccessSample> last;
    for (int h = 0; h < kHot; ++h)
      last.push_back(Sample(h, 0, kSecond + kBatches));
    table->Ingest(absl::MakeConstSpan(last));
  }
  EXPECT_GT(passes, 0u)
      << "the scanner never finished a pass during the writes";
  const HotnessTable::Stats st = table->stats();
  EXPECT_GT(st.displaced, 0u);
  EXPECT_GE(st.epoch, uint64_t{kWriters} * kBatches * 64 / 10000);
  for (int h = 0; h < kHot; ++h) {
    auto e =
        table->Lookup(PageKey{42, static_cast<uint64_t>(h), PageKind::k4K});
    ASSERT_TRUE(e.has_value()) << "hot page " << h << " was lost";
  }
  // And a final scan classifies them: all of them, counted, on some node.
  HotnessScanner scan(table.get(), ScanOptions{.top_k = kHot, .z = 1.96});
  while (!scan.Step(1000, [](const PageKey& k) {
    return k.page < kHot ? Tier::kSlow : Tier::kFast;
  })) {
  }
  const ScanResult& r = scan.last_result();
  std::set<uint64_t> hot;
  for (const PageEstimate& e : r.hottest_not_fast) {
    hot.insert(e.entry.key.page);
    EXPECT_GE(e.entry.node, 0);
  }
  EXPECT_EQ(hot.size(), static_cast<size_t>(kHot));
}

}  // namespace
}  // namespace hotpage
