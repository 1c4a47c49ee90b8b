// Implementations compared by hotness_table_benchmark, behind one small
// interface so that the benchmark and its smoke test drive them alike.
//
//   hotpage      HotnessTable sized at twice the distinct pages (every page
//                fits), decay armed, accessor tracking on
//   hotpage_1x   HotnessTable sized at the distinct pages: the table runs
//                full and displaces the coldest entries (bounded mode)
//   hotpage_decay  as hotpage, with an epoch every 1M samples: every count
//                is halved 8 times per 8M-sample iteration
//   tbb          tbb::concurrent_hash_map (per-element locks)
//   absl_mutex   absl::flat_hash_map under one absl::Mutex, locked per
//                sample (the one-at-a-time API of a map behind a lock)
//   libcds       libcds MichaelHashMap over MichaelKVList, hazard pointers
//   absl_mutex_batch  the same map, locked once per batch: not one of the
//                peers, but what a single-writer design achieves; it
//                cannot run two writers at once (they take turns)
//   ceiling      single-threaded open addressing with the same sets,
//                hashing, batching and prefetching as hotpage, plain
//                increments, no decay/eviction/accessor tracking
//
// Every implementation consumes the same AccessSample batches and keys pages
// by PageKey::PackSample() hashed with internal::MixKey() (TBB's default
// hash for integers is the identity). Peers' memory is measured with a
// counting allocator; tables report their slot arrays.

#ifndef HOTPAGE_HOTNESS_INGEST_IMPLS_H_
#define HOTPAGE_HOTNESS_INGEST_IMPLS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "hotness/access_sample.h"

namespace hotpage::bench {

enum class Dist { kUniform, kZipf };
const char* DistName(Dist dist);

// `count` samples over `pages` (a power of two) distinct 4 KiB pages in four
// address spaces, uniform or Zipf(0.99) over the pages (Gray et al.'s
// generator, as in YCSB), ranks scattered over the pages by an odd
// multiplier. Half the pages are touched from one node only, half from two.
// Deterministic for a given seed. Sample times advance 50 ns per sample.
std::vector<AccessSample> MakeSamples(Dist dist, uint64_t pages, size_t count,
                                      uint64_t seed);

class IngestImpl {
 public:
  virtual ~IngestImpl() = default;

  // False for the ceiling: only one writer thread may call Ingest().
  virtual bool thread_safe() const { return true; }
  // Empties the structure (untimed), ready for up to `pages` distinct pages.
  virtual void Reset() = 0;
  // Called by each writer thread before its first / after its last Ingest().
  virtual void AttachThread() {}
  virtual void DetachThread() {}
  // Counts every sample of `batch`.
  virtual void Ingest(absl::Span<const AccessSample> batch) = 0;

  struct Summary {
    uint64_t entries = 0;         // distinct pages held
    uint64_t counted_weight = 0;  // sum of the held counts
    uint64_t lost_weight = 0;     // displaced or dropped (tables only)
    uint64_t displaced = 0;       // entries displaced (tables only)
    double memory_bytes = 0;      // structure's memory now
    bool exact = true;            // false: counts decayed (hotpage_decay)
  };
  // After the writers stopped: what the structure holds. counted_weight +
  // lost_weight equals the weight ingested since Reset() (the benchmark
  // checks this on every iteration), or is at most that if !exact.
  virtual Summary Summarize() = 0;
};

// "hotpage", "hotpage_1x", "hotpage_decay", "tbb", "absl_mutex", "libcds",
// "absl_mutex_batch", "ceiling".
std::vector<std::string> ImplNames();
std::unique_ptr<IngestImpl> MakeImpl(const std::string& name, uint64_t pages);

// Shared by the implementation files; not for users.
namespace internal {

// Memory accounting for the peers: per-thread byte counters (no shared
// cache line in the timed region), summed by LiveBytes() after the writers
// stopped.
void AddBytes(int64_t n);
int64_t LiveBytes();

template <typename T, template <typename> class Base>
struct CountingAllocator {
  using value_type = T;
  template <typename U>
  struct rebind {
    using other = CountingAllocator<U, Base>;
  };
  CountingAllocator() = default;
  template <typename U>
  CountingAllocator(const CountingAllocator<U, Base>&) {
  }  // NOLINT: allocator conversion
  T* allocate(size_t n) {
    AddBytes(static_cast<int64_t>(n * sizeof(T)));
    return Base<T>().allocate(n);
  }
  void deallocate(T* p, size_t n) {
    AddBytes(-static_cast<int64_t>(n * sizeof(T)));
    Base<T>().deallocate(p, n);
  }
  template <typename U>
  bool operator==(const CountingAllocator<U, Base>&) const {
    return true;
  }
  template <typename U>
  bool operator!=(const CountingAllocator<U, Base>&) const {
    return false;
  }
};

// The table's key hash, for every peer (TBB's default for integers is the
// identity).
struct MixHash {
  size_t operator()(uint64_t k) const;
};

// In its own file (ingest_impl_cds.cc): libcds and abseil declare TSan's
// annotation functions differently and cannot share a translation unit.
std::unique_ptr<IngestImpl> MakeCdsImpl(uint64_t pages);

}  // namespace internal

}  // namespace hotpage::bench

#endif  // HOTPAGE_HOTNESS_INGEST_IMPLS_H_
