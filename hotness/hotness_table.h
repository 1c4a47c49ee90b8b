// The hotness table: what every sampler thread writes into and what the
// migrator's policy reads to decide which pages to move.
//
// How the pieces fit:
//
// clang-format off
//   sampler threads                              migrator (policy)
//        | Ingest(batch)                             | Step(budget, tier_of)
//        v                                           v
//   HotnessTable                                HotnessScanner
//     16-byte entries: decayed count,             per completed pass: log2
//     epoch, home node + foreign count,           histogram, Memtis-style
//     last-seen tick                              threshold, K hottest not on
//                                                 the fast tier, K coldest on
//                                                 it, each with a rate interval
// clang-format on
//
// * HotnessTable: a fixed-capacity, lock-free, open-addressing table keyed by
//   (address space, virtual page, 4K/2M). Writers never block and never
//   allocate: insertion is a compare-and-swap on the key; a count update is
//   normally one locked add on the entry's 64-bit state word (a
//   compare-and-swap when the entry needs decay or a new home). When a
//   page's set is full, the coldest entry of the set is displaced (a
//   CLOCK-like choice whose "reference bits" are the decayed counts). Counts
//   halve once per elapsed epoch, applied lazily when an entry is touched or
//   scanned.
// * HotnessScanner (scanner.h): the policy's incremental reader. Each
//   Step() visits a budget of slots, so a pass over a large table is spread
//   over many calls and never stalls the migrator; a completed pass
//   publishes a ScanResult.
// * PoissonInterval / RateWindow (rate_stats.h): the statistics that turn a
//   count into an access rate with a confidence interval; ShouldPromote
//   (scanner.h) compares two such intervals.
//
// Files: rate_stats.h (the statistics, at the bottom), this file (the
// table), scanner.h (HotnessScanner, the histogram and ShouldPromote, on
// top of the table). rate_stats.h explains the statistics behind the
// rates (windows, intervals, and what ShouldPromote's test guarantees).
//
// ## Threading
//
// Ingest() and AdvanceEpoch() may be called from any number of threads at
// once; Lookup() and ReadSlot() too. A HotnessScanner belongs to one thread:
// the policy engine's (policy/engine.h), which in `hotpage attach` is also
// the one thread that ingests (tools/attach/attach_loop.h says why), never
// the migrator's, which only moves pages. Any number of scanners may run
// alongside the writers.
// Clear() requires that nothing else uses the table.
//
// ## Measured (hotness_table_benchmark, AMD EPYC 2-vCPU VM, one run)
//
// One writer, Msamples/s: 82 (uniform over 64K pages), 115 (Zipf 0.99,
// 64K), 30 (uniform, 4M), 65 (Zipf, 4M). That is 2.3x, 4.2x, 5.9x and 6.4x
// the best peer (tbb::concurrent_hash_map, absl::flat_hash_map under a
// mutex, libcds MichaelHashMap), and 71%, 66%, 62% and 72% of a non-atomic
// table with the same layout and batching. Two writers scale 2.0x on
// uniform pages; on Zipf pages 1.2-1.4x (the hottest lines move between
// the cores). The 16-byte entry is the whole per-page cost. README.md has
// the table.

#ifndef HOTPAGE_HOTNESS_HOTNESS_TABLE_H_
#define HOTPAGE_HOTNESS_HOTNESS_TABLE_H_

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hotness/access_sample.h"
#include "hotness/rate_stats.h"

namespace hotpage {

// ---------------------------------------------------------------------------
// Entry state: one 64-bit word per entry, updated by compare-and-swap.
// Exposed for tests; not part of the policy's API.
namespace internal {

// One 64-bit state word per entry:
//
//   bits  0-20  count    samples (weighted) in the decayed window, <= kMaxCount
//   bits 21-28  epoch    epoch of the last decay, mod 256
//   bits 29-42  foreign  of those, samples from nodes other than `home`
//                        (sticky from 8192: then the page is shared)
//   bits 43-48  home     the node whose CPUs access the page most; 63 = unknown
//   bits 49-63  tick     last seen, in 2^24 ns (16.8 ms) units, mod 2^15
//                        (ages are exact up to 9.1 minutes)
//
// The common update (same epoch, home known, far from saturation) changes
// count, foreign and tick only, and by amounts that do not depend on what
// concurrent writers add to count and foreign: one fetch_add of
// FastDelta() applies it. A locked add is the cheapest update x86 has; a
// load-compute-CAS chain (or any plain store between locked operations)
// halves the throughput, measured here. Everything else (first sample,
// epoch change, re-homing, saturation) goes through ApplySample() and a
// compare-and-swap.
//
// The tick is the top field, so a tick delta computed from a stale tick
// (two writers racing) can only leave a wrong tick, never carry into
// another field; the next sample sets the tick right again.
inline constexpr int kCountBits = 21;
inline constexpr int kEpochShift = 21;
inline constexpr int kEpochBits = 8;
inline constexpr int kForeignShift = 29;
inline constexpr int kForeignBits = 14;
inline constexpr int kHomeShift = 43;
inline constexpr int kHomeBits = 6;
inline constexpr int kTickShift = 49;
inline constexpr int kTickBits = 15;
inline constexpr int kTickNsShift = 24;

inline constexpr uint32_t kCountMask = (1u << kCountBits) - 1;
inline constexpr uint32_t kEpochMask = (1u << kEpochBits) - 1;
inline constexpr uint32_t kForeignMask = (1u << kForeignBits) - 1;
inline constexpr uint32_t kHomeMask = (1u << kHomeBits) - 1;
inline constexpr uint32_t kTickMask = (1u << kTickBits) - 1;
inline constexpr uint32_t kMaxCount = kCountMask;
inline constexpr uint32_t kMaxForeign = kForeignMask;
inline constexpr uint32_t kUnknownNode = kHomeMask;  // nodes 0..62 are tracked
inline constexpr int kMaxNodes = static_cast<int>(kUnknownNode);

// The fast path stops at the top bit of the count field, so that even 1024
// writers that all passed the check at once with the largest fast weight
// cannot carry into the next field (and the check is one bit test).
// Heavier samples (pre-merged records) take the CAS path. The foreign
// count is sticky at its top bit instead: 8192 foreign samples in the
// window make a page shared whatever its count, so it stops counting there
// (a hot shared page would otherwise leave the fast path for good).
inline constexpr uint32_t kMaxFastWeight = 3;
inline constexpr uint32_t kFastCountLimit = 1u << (kCountBits - 1);
inline constexpr uint32_t kFastForeignLimit = 1u << (kForeignBits - 1);
inline constexpr uint32_t kForeignSticky = kFastForeignLimit;
static_assert(kFastCountLimit + 1024 * kMaxFastWeight <= kMaxCount);
static_assert(kFastForeignLimit + 1024 * kMaxFastWeight <= kMaxForeign);

struct DecodedState {
  uint32_t count = 0;
  uint32_t epoch = 0;
  uint32_t foreign = 0;
  uint32_t home = 0;
  uint32_t tick = 0;
};

constexpr DecodedState Decode(uint64_t s) {
  DecodedState d;
  d.count = static_cast<uint32_t>(s) & kCountMask;
  d.epoch = static_cast<uint32_t>(s >> kEpochShift) & kEpochMask;
  d.foreign = static_cast<uint32_t>(s >> kForeignShift) & kForeignMask;
  d.home = static_cast<uint32_t>(s >> kHomeShift) & kHomeMask;
  d.tick = static_cast<uint32_t>(s >> kTickShift) & kTickMask;
  return d;
}

constexpr uint64_t Encode(const DecodedState& d) {
  return uint64_t{d.count} | uint64_t{d.epoch} << kEpochShift |
         uint64_t{d.foreign} << kForeignShift | uint64_t{d.home} << kHomeShift |
         uint64_t{d.tick} << kTickShift;
}

constexpr uint32_t TickOf(uint64_t time_ns) {
  return static_cast<uint32_t>(time_ns >> kTickNsShift) & kTickMask;
}

constexpr uint32_t NodeField(int node) {
  return static_cast<unsigned>(node) < static_cast<unsigned>(kMaxNodes)
             ? static_cast<uint32_t>(node)
             : kUnknownNode;
}

// Epochs elapsed from `stamp` to `now`, both mod 256, as a signed number in
// [-128, 127]. Negative means the writer's view of the epoch is older than
// the entry's (it loaded the epoch before another thread advanced it).
constexpr int EpochLag(uint32_t now, uint32_t stamp) {
  return static_cast<int32_t>((now - stamp) << (32 - kEpochBits)) >>
         (32 - kEpochBits);
}

// Applies the halvings due between the entry's epoch and `epoch` (mod 256).
constexpr DecodedState DecayTo(DecodedState d, uint32_t epoch) {
  if (d.epoch == epoch) return d;
  if (d.count == 0 && d.foreign == 0) {
    d.epoch = epoch;  // nothing to decay: adopt the current epoch
    return d;
  }
  const int lag = EpochLag(epoch, d.epoch);
  if (lag <= 0) return d;  // stale writer: never move an entry backwards
  d.count = lag >= kCountBits ? 0 : d.count >> lag;
  d.foreign = lag >= kForeignBits ? 0 : d.foreign >> lag;
  d.epoch = epoch;
  return d;
}

// The page moves home to another node once 3/4 of its recent samples come
// from elsewhere (hysteresis: a page shared half and half keeps its home
// and is reported shared). Checked by ApplySample only, i.e. at an entry's
// first sample of each epoch: a page whose accessor moved is reported
// shared (its foreign count is high) until then.
constexpr bool ShouldRehome(uint32_t count, uint32_t foreign) {
  return count >= 8 && foreign > count - (count >> 2);
}

// The full update: the state after one sample of `weight` from `node`
// (-1 or >= 63: unknown) at `tick`, by a writer whose epoch is `epoch`
// (mod 256).
constexpr uint64_t ApplySample(uint64_t s, uint32_t epoch, int node,
                               uint32_t weight, uint32_t tick) {
  DecodedState d = DecayTo(Decode(s), epoch);
  const uint32_t n = NodeField(node);
  const uint32_t count =
      d.count + weight > kMaxCount ? kMaxCount : d.count + weight;
  if (d.count == 0) {
    // New or fully decayed: the page homes on this sample's node.
    d.home = n;
    d.foreign = 0;
  } else if (n != kUnknownNode) {
    if (d.home == kUnknownNode) {
      d.home = n;
    } else if (n != d.home) {
      if (d.foreign < kForeignSticky) {
        d.foreign =
            d.foreign + weight > kMaxForeign ? kMaxForeign : d.foreign + weight;
      }
      if (ShouldRehome(count, d.foreign)) {
        d.home =
            n;  // the old home's samples (and any third node's) are now foreign
        d.foreign =
            count - d.foreign > kMaxForeign ? kMaxForeign : count - d.foreign;
      }
    }
  }
  d.count = count;
  d.tick = tick & kTickMask;
  return Encode(d);
}

// The fetch_add delta that applies the same update as ApplySample() when
// the sample needs no decay, no re-homing and no saturation; 0 when it
// does (then the caller uses ApplySample() and a CAS). The conditions are
// combined into one rarely taken branch.
constexpr uint64_t FastDelta(uint64_t s, uint32_t epoch, int node,
                             uint32_t weight, uint32_t tick) {
  const auto home = static_cast<uint32_t>(s >> kHomeShift) & kHomeMask;
  const uint32_t n = NodeField(node);
  // Everything below is bitwise, not short-circuit, and as short as it can
  // be: whether a sample is foreign is a coin flip for a shared page, and
  // this runs for every sample (measured: each operation here costs about
  // 1% of the ingest rate; the re-homing test, moved to ApplySample, cost
  // 10%).
  const bool is_foreign = (n != kUnknownNode) & (n != home);
  const bool counts_foreign =
      is_foreign & (((s >> kForeignShift) & kForeignSticky) == 0);
  // Epoch and count in one test: count is the lowest field, so the count
  // bits of s - 1 are count - 1, whose top fast bit is set for a count of 0
  // or a high count, and (count >= 1) the epoch bits of s - 1 are those of
  // s, which the XOR compares with the current epoch.
  constexpr uint64_t kEpochField = uint64_t{kEpochMask} << kEpochShift;
  const uint64_t slow = (((s - 1) ^ (uint64_t{epoch} << kEpochShift)) &
                         (kEpochField | kFastCountLimit)) |
                        (weight > kMaxFastWeight) |             // heavy
                        (is_foreign & (home == kUnknownNode));  // no home yet
  if (slow) return 0;
  const uint64_t tick_delta =
      (tick - static_cast<uint32_t>(s >> kTickShift)) & kTickMask;
  return weight +
         ((uint64_t{weight} << kForeignShift) &
          (0 - uint64_t{counts_foreign})) +
         (tick_delta << kTickShift);
}

// Murmur3's 64-bit finalizer: keys differ mostly in their low (page) bits.
constexpr uint64_t MixKey(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

// Prefetch for writing (PREFETCHW where the CPU has it: the line arrives
// exclusive, so the following locked add does not need a second coherence
// transaction). Shared with the benchmark's ceiling.
inline void PrefetchForWrite(const void* p) {
#if defined(__x86_64__)
  // PREFETCHW: AMD since K6-2, Intel since Broadwell (a NOP before that).
  asm volatile("prefetchw %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p, 1, 3);
#endif
}

}  // namespace internal

// The table's key hash, for other structures over the same keys (the
// policy engine's count of new pages).
using internal::MixKey;

// ---------------------------------------------------------------------------
// Table.

enum class Sharing : uint8_t {
  kUnknown = 0,  // no sample carried a node
  kPrivate = 1,  // (nearly) all recent samples came from the home node
  kShared = 2,   // at least 2 recent samples, and at least 1/8 of them
                 // (or 8192), came from other nodes
};

// A consistent, decayed view of one entry.
struct EntryView {
  PageKey key;
  uint32_t count = 0;    // decayed to the table's current epoch
  int node = -1;         // home: the dominant accessor node, -1 if unknown
  uint32_t foreign = 0;  // of `count`, samples from other nodes (decayed)
  Sharing sharing = Sharing::kUnknown;
  uint64_t last_seen_ns = 0;  // start of the 16.8 ms tick of the latest sample
};

// The resolution of EntryView::last_seen_ns: the latest sample of an entry
// fell in [last_seen_ns, last_seen_ns + kLastSeenTickNs). A tick is 2^24 ns
// (16.8 ms), the unit the table stores last-seen times in.
inline constexpr uint64_t kLastSeenTickNs = uint64_t{1}
                                            << internal::kTickNsShift;

struct HotnessTableOptions {
  // Number of entries, rounded up to a power of two (at least 8). Memory is
  // 16 bytes per entry, allocated and touched once at Create().
  size_t capacity = size_t{1} << 21;  // 32 MiB: 8 GiB of 4 KiB pages, twice
  // Epoch length in samples (all writers together) or in sample time; at
  // most one of the two, neither = only AdvanceEpoch() starts epochs.
  uint64_t epoch_samples = 0;
  uint64_t epoch_ns = 0;

  // Capacity for a fast tier of `fast_tier_bytes`: twice its 4 KiB pages,
  // so that the best candidates outside it are tracked too.
  static HotnessTableOptions ForFastTier(uint64_t fast_tier_bytes);
};

// Bounded, lock-free, decaying hotness table. See the file comment.
//
// Layout: 16-byte entries {key, state} in 8-way sets of two cache lines. A
// key hashes to a set and a starting slot in it and probes the set's 8
// slots cyclically; slots never become empty again once filled (a
// displacement replaces the key in place), so a probe stops at the first
// empty slot. A set is 128 bytes, 128-byte aligned: one adjacent-line pair.
// When all 8 slots hold other pages, the coldest is displaced: a CLOCK-like
// choice whose reference counters are the decayed counts, aged by epochs.
//
// Batching: Ingest() hashes a chunk of 32 samples, prefetches their sets,
// then updates them, so the cache misses of one chunk overlap (at millions
// of pages, every update would otherwise wait ~100 ns on memory).
//
// Update: normally one locked add on the entry's state (internal::
// FastDelta), no load-compute-CAS chain; see hotness_table.cc for the
// protocol and the memory orders.
class HotnessTable {
 public:
  static constexpr size_t kSetSlots = 8;
  static constexpr size_t kChunk = 32;  // samples hashed + prefetched at once

  struct Slot {
    // PageKey::Pack(), 0 = empty; PageKey::kReservedBit set while the
    // entry is being displaced.
    std::atomic<uint64_t> key{0};
    std::atomic<uint64_t> state{0};  // internal:: state word
  };
  static_assert(sizeof(Slot) == 16, "the design's budget: 16 bytes per entry");
  static constexpr size_t kBytesPerEntry = sizeof(Slot);

  struct Stats {
    uint64_t samples = 0;    // records handed to Ingest()
    uint64_t weight = 0;     // their total weight
    uint64_t rejected = 0;   // key out of range (asid >= 2^22, vaddr >= 2^51)
    uint64_t inserted = 0;   // entries created in empty slots
    uint64_t displaced = 0;  // entries evicted to make room
    uint64_t displaced_weight = 0;  // their (undecayed) counts at eviction
    uint64_t dropped = 0;  // samples with no slot (set busy displacing)
    uint64_t dropped_weight = 0;
    uint32_t epoch = 0;
  };

  static absl::StatusOr<std::unique_ptr<HotnessTable>> Create(
      const HotnessTableOptions& options);
  ~HotnessTable();
  HotnessTable(const HotnessTable&) = delete;
  HotnessTable& operator=(const HotnessTable&) = delete;

  // Counts every sample of `batch`. Lock-free, never allocates; any number
  // of threads at once. Larger batches overlap more cache misses; a ring
  // drain (tens to hundreds of samples) is the intended size.
  void Ingest(absl::Span<const AccessSample> batch);
  // Counts `part`, one piece of a larger batch whose sample times lie in
  // [min_ns, max_ns] (the bounds Ingest() takes from the batch's first and
  // last samples), so that a caller need not hold the whole batch at once.
  // Pieces of a multiple of kChunk samples (any size for the last), handed
  // over in order each with the whole batch's bounds, count exactly as
  // Ingest() of the batch: the same chunks in the same order, the same
  // rate-window bounds, the same statistics (sums), as long as no epoch
  // starts meanwhile: with epoch_samples or epoch_ns one may start at a
  // piece's end instead of the batch's (as a concurrent AdvanceEpoch may).
  void IngestPart(absl::Span<const AccessSample> part, uint64_t min_ns,
                  uint64_t max_ns);

  // Starts a new epoch now (`now_ns`: sample-clock time, for rate windows).
  void AdvanceEpoch(uint64_t now_ns);

  // The entry of `key`, decayed to the current epoch, if it is tracked.
  std::optional<EntryView> Lookup(const PageKey& key) const;

  // Reads slot `index` (< capacity()): false if it holds no live entry.
  // With `normalize`, an entry 20+ epochs behind (its counts are zero) is
  // rewritten at the current epoch so that its 8-bit epoch cannot wrap;
  // scanners do this, and a full pass every 100 epochs keeps every stamp
  // unambiguous.
  bool ReadSlot(size_t index, EntryView* out, bool normalize);

  // Appends to `out` the live entries of slots [begin, end) (end <=
  // capacity()), in slot order, as ReadSlot() reads each: one call for a
  // pass over many slots, most of them empty in a table sized for the
  // whole fast tier. Allocates only when `out` must grow.
  void ReadSlots(size_t begin, size_t end, bool normalize,
                 std::vector<EntryView>* out);

  // The window and period that turn counts into rates, as of now.
  RateWindow rate_window() const;

  Stats stats() const;
  uint32_t epoch() const { return epoch_.load(std::memory_order_relaxed); }
  // Latest sample time seen (the table's "now").
  uint64_t now_ns() const { return latest_ns_.load(std::memory_order_relaxed); }
  size_t capacity() const { return capacity_; }
  size_t memory_bytes() const { return capacity_ * sizeof(Slot); }

  // Empties the table and its statistics. Not thread-safe: nothing else may
  // use the table meanwhile. Touches every slot (used between benchmark
  // iterations and tests).
  void Clear();

  // Copies every entry of `from` (keys and states as they are, decayed
  // lazily as ever) and its epoch, clock and statistics into this table,
  // which must be empty and no smaller than `from`: a resize. An entry
  // whose set here is full (rare: this table is at least as large) is
  // dropped and counted in dropped. Not thread-safe: nothing else may use
  // either table meanwhile.
  void CopyFrom(const HotnessTable& from);

 private:
  struct BatchStats;

  HotnessTable(const HotnessTableOptions& options, size_t capacity, Slot* slots,
               void* map_base, size_t map_bytes);

  // Bits 3+ of the hash pick the set, bits 0-2 the starting slot in it.
  Slot* SetOf(uint64_t hash) const {
    return slots_ + ((hash >> 3) & set_mask_) * kSetSlots;
  }
  [[gnu::noinline]] void UpdateOne(uint64_t key, Slot* set, unsigned start,
                                   uint32_t epoch, int node, uint32_t weight,
                                   uint32_t tick, BatchStats& stats);
  void UpdateState(Slot& slot, uint32_t epoch, int node, uint32_t weight,
                   uint32_t tick);
  [[gnu::noinline]] void UpdateStateSlow(Slot& slot, uint64_t s, uint32_t epoch,
                                         int node, uint32_t weight,
                                         uint32_t tick);
  [[gnu::noinline]] bool TryInsert(Slot& slot, uint64_t key, uint32_t epoch,
                                   int node, uint32_t weight, uint32_t tick,
                                   BatchStats& stats);
  [[gnu::noinline]] void Displace(uint64_t key, Slot* set, uint32_t epoch,
                                  int node, uint32_t weight, uint32_t tick,
                                  BatchStats& stats);
  void FinishBatch(const BatchStats& stats, size_t samples, uint64_t min_ns,
                   uint64_t max_ns);
  void StartEpochs(uint32_t count, uint64_t start_ns);
  bool ViewOf(const Slot& slot, uint64_t expect_key, EntryView* out,
              uint64_t* raw_state) const;

  const HotnessTableOptions options_;
  const size_t capacity_;
  const uint64_t set_mask_;  // sets - 1
  Slot* const slots_;        // capacity_ slots, 2 MiB aligned, in map_base_
  void* const map_base_;     // the mmap() holding slots_
  const size_t map_bytes_;

  // Read by every batch: on its own cache line, apart from the counters
  // that every batch writes.
  alignas(64) std::atomic<uint32_t> epoch_{0};

  alignas(64) std::atomic<uint64_t> samples_{0};
  std::atomic<uint64_t> weight_{0};
  std::atomic<uint64_t> period_sum_{0};
  std::atomic<uint64_t> rejected_{0};
  std::atomic<uint64_t> inserted_{0};
  std::atomic<uint64_t> displaced_{0};
  std::atomic<uint64_t> displaced_weight_{0};
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> dropped_weight_{0};
  std::atomic<uint64_t> latest_ns_{0};
  std::atomic<uint64_t> first_ns_{0};
  std::atomic<uint64_t> next_epoch_at_{0};   // samples_ value, or sample time
  std::atomic<uint64_t> epoch_start_ns_{0};  // when the current epoch began
  std::atomic<uint64_t> last_epoch_len_ns_{0};
};

}  // namespace hotpage

#endif  // HOTPAGE_HOTNESS_HOTNESS_TABLE_H_
