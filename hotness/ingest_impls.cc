#include "hotness/ingest_impls.h"

#include <sys/mman.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <mutex>
#include <random>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "hotness/hotness_table.h"
#include "oneapi/tbb/concurrent_hash_map.h"
#include "oneapi/tbb/tbb_allocator.h"

namespace hotpage::bench {

// ---------------------------------------------------------------------------
// Memory accounting for the peers: a per-thread byte counter (no shared
// cache line in the timed region), summed after the writers stop.

namespace {

struct ByteCounter {
  std::atomic<int64_t> bytes{0};
};

std::mutex counters_mu;
std::vector<ByteCounter*>& Counters() {
  static auto* counters = new std::vector<ByteCounter*>();
  return *counters;
}

ByteCounter* ThisThreadCounter() {
  thread_local ByteCounter* counter = [] {
    auto* c = new ByteCounter();  // never freed: threads come and go
    std::lock_guard<std::mutex> lock(counters_mu);
    Counters().push_back(c);
    return c;
  }();
  return counter;
}

}  // namespace

namespace internal {

void AddBytes(int64_t n) {
  ByteCounter* c = ThisThreadCounter();
  // Only this thread writes its counter; relaxed load+store, no lock prefix.
  c->bytes.store(c->bytes.load(std::memory_order_relaxed) + n,
                 std::memory_order_relaxed);
}

size_t MixHash::operator()(uint64_t k) const {
  return ::hotpage::internal::MixKey(k);
}

int64_t LiveBytes() {
  std::lock_guard<std::mutex> lock(counters_mu);
  int64_t total = 0;
  for (ByteCounter* c : Counters())
    total += c->bytes.load(std::memory_order_relaxed);
  return total;
}

}  // namespace internal

namespace {

using internal::CountingAllocator;
using internal::LiveBytes;
using internal::MixHash;

using ::hotpage::internal::MixKey;

// ---------------------------------------------------------------------------
// Samples.

// Gray et al., "Quickly generating billion-record synthetic databases"
// (SIGMOD'94), the Zipfian generator YCSB uses: rank 0 is the hottest.
class ZipfGenerator {
 public:
  ZipfGenerator(uint64_t n, double theta) : n_(n) {
    for (uint64_t i = 1; i <= n; ++i)
      zetan_ += 1.0 / std::pow(static_cast<double>(i), theta);
    const double zeta2 = 1.0 + std::pow(0.5, theta);
    alpha_ = 1.0 / (1.0 - theta);
    eta_ = (1.0 - std::pow(2.0 / n, 1.0 - theta)) / (1.0 - zeta2 / zetan_);
    half_pow_theta_ = 1.0 + std::pow(0.5, theta);
  }
  uint64_t Next(double u) const {
    const double uz = u * zetan_;
    if (uz < 1.0) return 0;
    if (uz < half_pow_theta_) return 1;
    const auto r =
        static_cast<uint64_t>(n_ * std::pow(eta_ * u - eta_ + 1.0, alpha_));
    return r < n_ ? r : n_ - 1;
  }

 private:
  uint64_t n_;
  double zetan_ = 0;
  double alpha_ = 0;
  double eta_ = 0;
  double half_pow_theta_ = 0;
};

// ---------------------------------------------------------------------------
// hotpage.

class HotpageImpl : public IngestImpl {
 public:
  // `epoch_samples`: 64M arms decay without firing it within an 8M-sample
  // iteration (the epoch bookkeeping runs on every batch and every update
  // compares epochs, and the counts can be checked exactly); 1M halves
  // every count 8 times per iteration.
  HotpageImpl(uint64_t pages, uint64_t capacity_factor, uint64_t epoch_samples)
      : decays_(epoch_samples < (uint64_t{1} << 26)) {
    HotnessTableOptions o;
    o.capacity = pages * capacity_factor;
    o.epoch_samples = epoch_samples;
    table_ = std::move(HotnessTable::Create(o)).value();
  }
  void Reset() override { table_->Clear(); }
  void Ingest(absl::Span<const AccessSample> batch) override {
    table_->Ingest(batch);
  }
  Summary Summarize() override {
    Summary s;
    for (size_t i = 0; i < table_->capacity(); ++i) {
      EntryView e;
      if (!table_->ReadSlot(i, &e, /*normalize=*/false)) continue;
      ++s.entries;
      s.counted_weight += e.count;
    }
    const HotnessTable::Stats st = table_->stats();
    s.lost_weight = st.displaced_weight + st.dropped_weight;
    s.displaced = st.displaced;
    s.memory_bytes = static_cast<double>(table_->memory_bytes());
    s.exact = !decays_;
    return s;
  }

 private:
  const bool decays_;
  std::unique_ptr<HotnessTable> table_;
};

// ---------------------------------------------------------------------------
// The ceiling: hotpage's layout and batching without atomics, decay,
// accessor tracking or eviction. Not thread-safe.

class CeilingImpl : public IngestImpl {
 public:
  explicit CeilingImpl(uint64_t pages) : capacity_(std::bit_ceil(pages * 2)) {
    bytes_ = capacity_ * sizeof(Slot);
    constexpr size_t kHuge = size_t{2} << 20;
    map_bytes_ = bytes_ + kHuge;
    map_ = mmap(nullptr, map_bytes_, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map_ == MAP_FAILED) std::abort();
    auto addr = (reinterpret_cast<uintptr_t>(map_) + kHuge - 1) & ~(kHuge - 1);
    madvise(reinterpret_cast<void*>(addr), bytes_, MADV_HUGEPAGE);
    slots_ = reinterpret_cast<Slot*>(addr);
    set_mask_ = capacity_ / kSet - 1;
    std::memset(static_cast<void*>(slots_), 0, bytes_);
  }
  ~CeilingImpl() override { munmap(map_, map_bytes_); }
  bool thread_safe() const override { return false; }
  void Reset() override {
    std::memset(static_cast<void*>(slots_), 0, bytes_);
    dropped_ = 0;
  }
  void Ingest(absl::Span<const AccessSample> batch) override {
    constexpr size_t kChunk = HotnessTable::kChunk;
    uint64_t keys[kChunk];
    Slot* sets[kChunk];
    uint8_t starts[kChunk];
    for (size_t base = 0; base < batch.size(); base += kChunk) {
      const size_t n = std::min(kChunk, batch.size() - base);
      const AccessSample* s = batch.data() + base;
      for (size_t i = 0; i < n; ++i) {
        const uint64_t key = PageKey::PackSample(s[i]);
        const uint64_t h = MixKey(key);
        Slot* set = slots_ + ((h >> 3) & set_mask_) * kSet;
        keys[i] = key;
        sets[i] = set;
        starts[i] = static_cast<uint8_t>(h & (kSet - 1));
        ::hotpage::internal::PrefetchForWrite(set);
        ::hotpage::internal::PrefetchForWrite(set + kSet / 2);
      }
      for (size_t i = 0; i < n; ++i) {
        Slot* set = sets[i];
        const uint64_t key = keys[i];
        const uint32_t w = s[i].weight;
        bool done = false;
        for (unsigned j = 0; j < kSet; ++j) {
          Slot& slot = set[(starts[i] + j) & (kSet - 1)];
          if (slot.key == key) {
            slot.count += w;
            done = true;
            break;
          }
          if (slot.key == 0) {
            slot.key = key;
            slot.count = w;
            done = true;
            break;
          }
        }
        if (!done) dropped_ += w;
      }
    }
  }
  Summary Summarize() override {
    Summary s;
    for (size_t i = 0; i < capacity_; ++i) {
      if (slots_[i].key == 0) continue;
      ++s.entries;
      s.counted_weight += slots_[i].count;
    }
    s.lost_weight = dropped_;
    s.memory_bytes = static_cast<double>(bytes_);
    return s;
  }

 private:
  static constexpr size_t kSet = HotnessTable::kSetSlots;
  struct Slot {
    uint64_t key;
    uint64_t count;
  };
  static_assert(sizeof(Slot) == 16);
  size_t capacity_;
  size_t bytes_;
  size_t map_bytes_;
  void* map_;
  Slot* slots_;
  uint64_t set_mask_;
  uint64_t dropped_ = 0;
};

// ---------------------------------------------------------------------------
// tbb::concurrent_hash_map.

class TbbImpl : public IngestImpl {
 public:
  explicit TbbImpl(uint64_t pages) : pages_(pages) { Reset(); }
  void Reset() override {
    map_.reset();
    map_ = std::make_unique<Map>(pages_);  // pre-sized buckets
  }
  void Ingest(absl::Span<const AccessSample> batch) override {
    for (const AccessSample& s : batch) {
      const uint64_t key = PageKey::PackSample(s);
      Map::accessor a;  // write lock on the element
      map_->insert(a, key);
      a->second += s.weight;
    }
  }
  Summary Summarize() override {
    Summary s;
    for (const auto& [k, v] : *map_) {
      ++s.entries;
      s.counted_weight += v;
    }
    s.memory_bytes = static_cast<double>(LiveBytes());
    return s;
  }

 private:
  struct HashCompare {
    size_t hash(uint64_t k) const { return MixKey(k); }
    bool equal(uint64_t a, uint64_t b) const { return a == b; }
  };
  using Map = tbb::concurrent_hash_map<
      uint64_t, uint64_t, HashCompare,
      CountingAllocator<std::pair<const uint64_t, uint64_t>,
                        tbb::tbb_allocator>>;
  uint64_t pages_;
  std::unique_ptr<Map> map_;
};

// ---------------------------------------------------------------------------
// absl::flat_hash_map under an absl::Mutex.

// `per_batch`: one lock per Ingest() call instead of one per sample.
class AbslMutexImpl : public IngestImpl {
 public:
  AbslMutexImpl(uint64_t pages, bool per_batch)
      : pages_(pages), per_batch_(per_batch) {
    Reset();
  }
  void Reset() override {
    absl::MutexLock lock(&mu_);
    map_.reset();
    map_ = std::make_unique<Map>();
    map_->reserve(pages_);
  }
  void Ingest(absl::Span<const AccessSample> batch) override {
    if (per_batch_) {
      absl::MutexLock lock(&mu_);
      Map& m = *map_;
      for (const AccessSample& s : batch) m[PageKey::PackSample(s)] += s.weight;
      return;
    }
    for (const AccessSample& s : batch) {
      const uint64_t key = PageKey::PackSample(s);
      absl::MutexLock lock(&mu_);
      (*map_)[key] += s.weight;
    }
  }
  Summary Summarize() override {
    absl::MutexLock lock(&mu_);
    Summary s;
    for (const auto& [k, v] : *map_) {
      ++s.entries;
      s.counted_weight += v;
    }
    s.memory_bytes = static_cast<double>(LiveBytes());
    return s;
  }

 private:
  using Map = absl::flat_hash_map<
      uint64_t, uint64_t, MixHash, std::equal_to<uint64_t>,
      CountingAllocator<std::pair<const uint64_t, uint64_t>, std::allocator>>;
  const uint64_t pages_;
  const bool per_batch_;
  absl::Mutex mu_;
  std::unique_ptr<Map> map_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

const char* DistName(Dist dist) {
  return dist == Dist::kZipf ? "zipf" : "uniform";
}

std::vector<AccessSample> MakeSamples(Dist dist, uint64_t pages, size_t count,
                                      uint64_t seed) {
  std::vector<AccessSample> out(count);
  std::mt19937_64 rng(seed);
  std::unique_ptr<ZipfGenerator> zipf;
  if (dist == Dist::kZipf) zipf = std::make_unique<ZipfGenerator>(pages, 0.99);
  const uint64_t mask = pages - 1;
  for (size_t i = 0; i < count; ++i) {
    const uint64_t r = rng();
    const uint64_t rank =
        zipf ? zipf->Next(static_cast<double>(r >> 11) * 0x1.0p-53)
             : (r & mask);
    const uint64_t p =
        (rank * 0x9E3779B97F4A7C15ULL) & mask;  // odd multiplier: a bijection
    AccessSample& s = out[i];
    s.address_space = 100 + static_cast<uint32_t>(p & 3);
    s.vaddr = 0x7f0000000000ULL + (p >> 2) * 4096 +
              (r >> 52);  // any byte in the page
    const int node =
        (p & 4) ? static_cast<int>(i & 1) : static_cast<int>(p & 1);
    s.node = static_cast<int8_t>(node);
    s.cpu = static_cast<uint16_t>(node);
    s.time_ns = 1'000'000'000ULL + i * 50;
    s.sample_period = 4001;
    s.weight = 1;
    s.kind = PageKind::k4K;
  }
  return out;
}

std::vector<std::string> ImplNames() {
  return {"hotpage",    "hotpage_1x", "hotpage_decay",    "tbb",
          "absl_mutex", "libcds",     "absl_mutex_batch", "ceiling"};
}

std::unique_ptr<IngestImpl> MakeImpl(const std::string& name, uint64_t pages) {
  if (name == "hotpage") {
    return std::make_unique<HotpageImpl>(pages, 2, uint64_t{1} << 26);
  }
  if (name == "hotpage_1x") {
    return std::make_unique<HotpageImpl>(pages, 1, uint64_t{1} << 26);
  }
  if (name == "hotpage_decay") {
    return std::make_unique<HotpageImpl>(pages, 2, uint64_t{1} << 20);
  }
  if (name == "tbb") return std::make_unique<TbbImpl>(pages);
  if (name == "absl_mutex")
    return std::make_unique<AbslMutexImpl>(pages, false);
  if (name == "absl_mutex_batch") {
    return std::make_unique<AbslMutexImpl>(pages, true);
  }
  if (name == "libcds") return internal::MakeCdsImpl(pages);
  if (name == "ceiling") return std::make_unique<CeilingImpl>(pages);
  return nullptr;
}

}  // namespace hotpage::bench
