#include "hotness/hotness_table.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <new>

#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tools/base/status_macros.h"

namespace hotpage {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kMaxCapacity = size_t{1} << 34;  // 256 GiB of entries
// An entry this many epochs behind has decayed to zero; a scan rewrites it
// at the current epoch so that the 12-bit stamp never wraps around.
constexpr int kNormalizeLag = internal::kCountBits;
// Victim choices retried when another writer changes the chosen entry
// first; then the sample is dropped (and counted) rather than spin.
constexpr int kDisplaceAttempts = 4;

}  // namespace

// ---------------------------------------------------------------------------
// Table: construction.

HotnessTableOptions HotnessTableOptions::ForFastTier(uint64_t fast_tier_bytes) {
  HotnessTableOptions o;
  o.capacity =
      std::max<uint64_t>(2 * (fast_tier_bytes >> 12), HotnessTable::kSetSlots);
  return o;
}

absl::StatusOr<std::unique_ptr<HotnessTable>> HotnessTable::Create(
    const HotnessTableOptions& options) {
  if (options.capacity == 0 || options.capacity > kMaxCapacity) {
    return absl::InvalidArgumentError(
        absl::StrCat("hotness table capacity ", options.capacity,
                     ": must be between 1 and 2^34 entries; pick it from the "
                     "fast tier's size "
                     "(HotnessTableOptions::ForFastTier)"));
  }
  if (options.epoch_samples != 0 && options.epoch_ns != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "hotness table epochs: both epoch_samples=", options.epoch_samples,
        " and epoch_ns=", options.epoch_ns, " are set; set one of them"));
  }
  const size_t capacity = std::max(std::bit_ceil(options.capacity), kSetSlots);
  const size_t bytes = capacity * sizeof(Slot);
  // mmap so that the table can be 2 MiB aligned and backed by transparent
  // huge pages: at millions of entries every update is a TLB miss too.
  const size_t map_bytes = bytes >= kHugePage ? bytes + kHugePage : bytes;
  void* base = mmap(nullptr, map_bytes, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) {
    return ErrnoStatus(errno, absl::StrCat("mmap ", map_bytes,
                                           " bytes for a hotness table of ",
                                           capacity, " entries"));
  }
  auto addr = reinterpret_cast<uintptr_t>(base);
  if (bytes >= kHugePage) {
    addr = (addr + kHugePage - 1) & ~(kHugePage - 1);
    // Advisory: without THP the table still works, only slower.
    madvise(reinterpret_cast<void*>(addr), bytes, MADV_HUGEPAGE);
  }
  // Constructing the slots touches every page now, not in the first
  // writer's time.
  Slot* slots = new (reinterpret_cast<void*>(addr)) Slot[capacity];
  return std::unique_ptr<HotnessTable>(
      new HotnessTable(options, capacity, slots, base, map_bytes));
}

HotnessTable::HotnessTable(const HotnessTableOptions& options, size_t capacity,
                           Slot* slots, void* map_base, size_t map_bytes)
    : options_(options),
      capacity_(capacity),
      set_mask_(capacity / kSetSlots - 1),
      slots_(slots),
      map_base_(map_base),
      map_bytes_(map_bytes) {
  next_epoch_at_.store(options_.epoch_samples, std::memory_order_relaxed);
}

HotnessTable::~HotnessTable() {
  // Slot is trivially destructible (two std::atomic<uint64_t>).
  munmap(map_base_, map_bytes_);
}

void HotnessTable::Clear() {
  // relaxed throughout: Clear() runs alone (its contract); whoever uses the
  // table next synchronises with this thread by other means (a join, a
  // barrier).
  for (size_t i = 0; i < capacity_; ++i) {
    slots_[i].key.store(0, std::memory_order_relaxed);
    slots_[i].state.store(0, std::memory_order_relaxed);
  }
  for (auto* c :
       {&samples_, &weight_, &period_sum_, &rejected_, &inserted_, &displaced_,
        &displaced_weight_, &dropped_, &dropped_weight_, &latest_ns_,
        &first_ns_, &epoch_start_ns_, &last_epoch_len_ns_}) {
    c->store(0, std::memory_order_relaxed);
  }
  epoch_.store(0, std::memory_order_relaxed);
  next_epoch_at_.store(options_.epoch_samples, std::memory_order_relaxed);
}

void HotnessTable::CopyFrom(const HotnessTable& from) {
  // relaxed throughout: CopyFrom() runs alone (its contract), as Clear().
  uint64_t lost = 0;
  for (size_t i = 0; i < from.capacity_; ++i) {
    const uint64_t k = from.slots_[i].key.load(std::memory_order_relaxed);
    if (k == 0 || (k & PageKey::kReservedBit) != 0) continue;
    const uint64_t h = internal::MixKey(k);
    Slot* set = SetOf(h);
    bool placed = false;
    for (unsigned j = 0; j < kSetSlots && !placed; ++j) {
      Slot& slot = set[(h + j) & (kSetSlots - 1)];
      if (slot.key.load(std::memory_order_relaxed) != 0) continue;
      slot.key.store(k, std::memory_order_relaxed);
      slot.state.store(from.slots_[i].state.load(std::memory_order_relaxed),
                       std::memory_order_relaxed);
      placed = true;
    }
    lost += !placed;
  }
  const std::pair<std::atomic<uint64_t>*, const std::atomic<uint64_t>*>
      counters[] = {{&samples_, &from.samples_},
                    {&weight_, &from.weight_},
                    {&period_sum_, &from.period_sum_},
                    {&rejected_, &from.rejected_},
                    {&inserted_, &from.inserted_},
                    {&displaced_, &from.displaced_},
                    {&displaced_weight_, &from.displaced_weight_},
                    {&dropped_, &from.dropped_},
                    {&dropped_weight_, &from.dropped_weight_},
                    {&latest_ns_, &from.latest_ns_},
                    {&first_ns_, &from.first_ns_},
                    {&next_epoch_at_, &from.next_epoch_at_},
                    {&epoch_start_ns_, &from.epoch_start_ns_},
                    {&last_epoch_len_ns_, &from.last_epoch_len_ns_}};
  for (const auto& [to, f] : counters) {
    to->store(f->load(std::memory_order_relaxed), std::memory_order_relaxed);
  }
  dropped_.fetch_add(lost, std::memory_order_relaxed);
  epoch_.store(from.epoch_.load(std::memory_order_relaxed),
               std::memory_order_relaxed);
}

// ---------------------------------------------------------------------------
// Table: ingest.
//
// Protocol for one slot {key, state}:
//
//  * Insert: CAS the key from 0 to K. The state is still 0, a valid "no
//    samples" state for whichever key wins, so nothing is published with
//    the key: relaxed.
//  * Count: a writer that found K reads the state, computes FastDelta()
//    and adds it (one locked add); if the sample needs the full update
//    (first sample, new epoch, home unknown, heavy sample, high count) it
//    CASes ApplySample()'s result instead, which also decides re-homing.
//    The add is blind: a writer racing on the same entry can leave a
//    wrong tick (the next sample sets it) or count a foreign sample
//    against a home that just moved; counts themselves are exact.
//  * Displace K_old by K_new: CAS the key from K_old to K_old|reserved (one
//    displacer wins; writers stop matching K_old), exchange the state for
//    K_new's first state (the value it returns is K_old's final count,
//    reported as displaced), then store the key K_new.
//
// Writers never wait: a reserved key is neither a match nor a victim, so
// a sample for it goes to another slot of its set (which can leave a
// short-lived duplicate entry: later samples reach the first copy in probe
// order, the other decays and is displaced first).
//
// Attribution: a writer that matched K_old just before the reservation
// and adds just after the exchange credits its sample to K_new, a window
// of a few instructions. No sample is ever lost or counted twice: counts
// held + displaced + dropped = ingested, exactly, below saturation (tested
// under TSan).
// Readers (scans, Lookup) validate: they read the state with acquire,
// then re-read the key; the displacer's exchange is a release, so a state
// that belongs to K_new comes with the reserved or new key.

struct HotnessTable::BatchStats {
  uint64_t weight = 0;
  uint64_t period_sum = 0;
  uint64_t rejected = 0;
  uint64_t inserted = 0;
  uint64_t displaced = 0;
  uint64_t displaced_weight = 0;
  uint64_t dropped = 0;
  uint64_t dropped_weight = 0;
};

void HotnessTable::Ingest(absl::Span<const AccessSample> batch) {
  if (batch.empty()) return;
  // The batch's time span, from its ends: a ring drain is in time order
  // per CPU, and the rate window needs no more precision (a min/max over
  // every sample measured 3% of the ingest rate).
  IngestPart(batch, std::min(batch.front().time_ns, batch.back().time_ns),
             std::max(batch.front().time_ns, batch.back().time_ns));
}

void HotnessTable::IngestPart(absl::Span<const AccessSample> batch,
                              uint64_t min_ns, uint64_t max_ns) {
  if (batch.empty()) return;
  // relaxed: the epoch publishes nothing but itself. A writer holding a
  // stale epoch takes the CAS path for entries already in the new epoch,
  // and DecayTo() never moves an entry's epoch backwards; the next batch
  // sees the new epoch.
  const uint32_t epoch =
      epoch_.load(std::memory_order_relaxed) & internal::kEpochMask;
  BatchStats st;
  uint64_t weight = 0;
  uint64_t period_sum = 0;
  uint64_t keys[kChunk];
  Slot* sets[kChunk];
  uint8_t starts[kChunk];
  for (size_t base = 0; base < batch.size(); base += kChunk) {
    const size_t n = std::min(kChunk, batch.size() - base);
    const AccessSample* s = batch.data() + base;
    // Pass 1: hash the chunk and prefetch both lines of each sample's set,
    // so that the chunk's cache misses are in flight together. The batch
    // totals are summed here too: pass 2 must not store to memory between
    // its locked adds (each locked instruction drains the store buffer).
    for (size_t i = 0; i < n; ++i) {
      const AccessSample& x = s[i];
      const uint64_t key = PageKey::PackSample(x);
      const uint64_t h = internal::MixKey(key);
      Slot* set = SetOf(h);
      keys[i] = key;
      sets[i] = set;
      starts[i] = static_cast<uint8_t>(h & (kSetSlots - 1));
      internal::PrefetchForWrite(set);
      internal::PrefetchForWrite(set + kSetSlots / 2);
      weight += x.weight;
      period_sum += x.sample_period;
    }
    // Pass 2: the common case, one locked add per sample. Anything else
    // (new page, first sample, new epoch, full set, bad key) is deferred
    // to pass 3: this loop makes no calls, so it keeps its values in
    // registers (a spill is a store, and every store before a locked add
    // delays it; measured 10-20%).
    uint8_t slow[kChunk];
    size_t slow_n = 0;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t key = keys[i];
      Slot* const set = sets[i];
      Slot* found = nullptr;
      for (unsigned j = 0; j < kSetSlots; ++j) {
        Slot& slot = set[(starts[i] + j) & (kSetSlots - 1)];
        // acquire: pairs with a displacer's release store of the key, so
        // that a writer of the new key reads the new entry's state.
        const uint64_t k = slot.key.load(std::memory_order_acquire);
        if (k == key) {
          found = &slot;
          break;
        }
        if (k == 0) break;
      }
      if (ABSL_PREDICT_TRUE(found != nullptr && key != 0)) {
        const AccessSample& x = s[i];
        // relaxed: the value only feeds FastDelta; a stale value can only
        // misplace the tick (see internal::FastDelta).
        const uint64_t state = found->state.load(std::memory_order_relaxed);
        const uint64_t delta = internal::FastDelta(
            state, epoch, x.node, x.weight, internal::TickOf(x.time_ns));
        if (ABSL_PREDICT_TRUE(delta != 0)) {
          // relaxed: a count needs atomicity only; no other memory is
          // published with it. (As an RMW it also continues the release
          // sequence of the slot's last displacement, which readers rely
          // on.)
          found->state.fetch_add(delta, std::memory_order_relaxed);
          continue;
        }
      }
      slow[slow_n++] = static_cast<uint8_t>(i);
    }
    // Pass 3: the rest, in order.
    for (size_t j = 0; j < slow_n; ++j) {
      const size_t i = slow[j];
      const AccessSample& x = s[i];
      if (keys[i] == 0) {
        ++st.rejected;
        continue;
      }
      UpdateOne(keys[i], sets[i], starts[i], epoch, x.node, x.weight,
                internal::TickOf(x.time_ns), st);
    }
  }
  st.weight = weight;
  st.period_sum = period_sum;
  FinishBatch(st, batch.size(), min_ns, max_ns);
}

void HotnessTable::UpdateState(Slot& slot, uint32_t epoch, int node,
                               uint32_t weight, uint32_t tick) {
  // relaxed: the value only feeds FastDelta / ApplySample; a stale value
  // makes the CAS in UpdateStateSlow fail, or (fast path) can only misplace
  // the tick.
  const uint64_t s = slot.state.load(std::memory_order_relaxed);
  const uint64_t delta = internal::FastDelta(s, epoch, node, weight, tick);
  if (ABSL_PREDICT_TRUE(delta != 0)) {
    // relaxed: a count needs atomicity only; no other memory is published
    // with it. (As an RMW it also continues the release sequence of the
    // slot's last displacement, which readers rely on.)
    slot.state.fetch_add(delta, std::memory_order_relaxed);
    return;
  }
  UpdateStateSlow(slot, s, epoch, node, weight, tick);
}

// Out of line (and everything below): the fast path must keep its values
// in registers, because a spill is a store, and a store between two locked
// adds makes the second wait for it (measured: 10-20%).
void HotnessTable::UpdateStateSlow(Slot& slot, uint64_t s, uint32_t epoch,
                                   int node, uint32_t weight, uint32_t tick) {
  // relaxed, as in UpdateState; a failed CAS reloads `s` and recomputes.
  while (!slot.state.compare_exchange_weak(
      s, internal::ApplySample(s, epoch, node, weight, tick),
      std::memory_order_relaxed, std::memory_order_relaxed)) {
  }
}

bool HotnessTable::TryInsert(Slot& slot, uint64_t key, uint32_t epoch, int node,
                             uint32_t weight, uint32_t tick, BatchStats& st) {
  uint64_t k = 0;
  // acquire on failure, like a probe's load. Nothing is published with a new
  // key (see the protocol), so success needs no release; it is acquire too
  // because a failure order may not be stronger than the success order
  // (gcc's -Winvalid-memory-model; on x86 the CAS is a full barrier anyway).
  if (slot.key.compare_exchange_strong(k, key, std::memory_order_acquire,
                                       std::memory_order_acquire)) {
    ++st.inserted;
    // The state is almost surely still 0: try the first state directly,
    // without a dependent load.
    uint64_t expect = 0;
    if (!slot.state.compare_exchange_strong(
            expect, internal::ApplySample(0, epoch, node, weight, tick),
            std::memory_order_relaxed, std::memory_order_relaxed)) {
      UpdateStateSlow(slot, expect, epoch, node, weight, tick);
    }
    return true;
  }
  if (k == key) {
    UpdateState(slot, epoch, node, weight, tick);
    return true;
  }
  return false;
}

void HotnessTable::UpdateOne(uint64_t key, Slot* set, unsigned start,
                             uint32_t epoch, int node, uint32_t weight,
                             uint32_t tick, BatchStats& st) {
  for (unsigned j = 0; j < kSetSlots; ++j) {
    Slot& slot = set[(start + j) & (kSetSlots - 1)];
    // acquire: pairs with a displacer's release store of the key, so that a
    // writer of the new key reads the new entry's state, not the old one.
    const uint64_t k = slot.key.load(std::memory_order_acquire);
    if (k == key) {
      UpdateState(slot, epoch, node, weight, tick);
      return;
    }
    if (k == 0 && TryInsert(slot, key, epoch, node, weight, tick, st)) return;
  }
  Displace(key, set, epoch, node, weight, tick, st);
}

void HotnessTable::Displace(uint64_t key, Slot* set, uint32_t epoch, int node,
                            uint32_t weight, uint32_t tick, BatchStats& st) {
  for (int attempt = 0; attempt < kDisplaceAttempts; ++attempt) {
    // The victim: the entry with the lowest decayed count, the longest
    // unseen among equals. Counts act as CLOCK's reference counters, aged
    // by the epochs instead of by the hand.
    Slot* victim = nullptr;
    uint64_t victim_key = 0;
    uint32_t best_count = ~uint32_t{0};
    uint32_t best_age = 0;
    for (unsigned j = 0; j < kSetSlots; ++j) {
      Slot& slot = set[j];
      // acquire: as in a probe (see UpdateOne).
      const uint64_t k = slot.key.load(std::memory_order_acquire);
      if (k == key) {  // inserted meanwhile by another writer
        UpdateState(slot, epoch, node, weight, tick);
        return;
      }
      if (k == 0 || (k & PageKey::kReservedBit)) continue;
      // relaxed: only picks the victim; a stale count makes a worse choice,
      // never a wrong result (the reservation below is what is checked).
      const internal::DecodedState d = internal::DecayTo(
          internal::Decode(slot.state.load(std::memory_order_relaxed)), epoch);
      const uint32_t age = (tick - d.tick) & internal::kTickMask;
      if (d.count < best_count || (d.count == best_count && age > best_age)) {
        victim = &slot;
        victim_key = k;
        best_count = d.count;
        best_age = age;
      }
    }
    if (victim == nullptr) break;
    // acquire on success: the exchange below must not become visible
    // before the reservation; relaxed on failure (we choose again).
    uint64_t expect = victim_key;
    if (!victim->key.compare_exchange_strong(
            expect, victim_key | PageKey::kReservedBit,
            std::memory_order_acquire, std::memory_order_relaxed)) {
      continue;  // another displacer took it, or it changed: choose again
    }
    // release: a reader that acquires the new state re-reads the key and
    // sees the reservation (or K_new), never K_old with K_new's state.
    const uint64_t old = victim->state.exchange(
        internal::ApplySample(0, epoch, node, weight, tick),
        std::memory_order_release);
    // release: a writer that sees K_new also sees K_new's state.
    victim->key.store(key, std::memory_order_release);
    ++st.displaced;
    st.displaced_weight += old & internal::kCountMask;
    return;
  }
  ++st.dropped;
  st.dropped_weight += weight;
}

void HotnessTable::FinishBatch(const BatchStats& st, size_t samples,
                               uint64_t min_ns, uint64_t max_ns) {
  // The statistics are relaxed adds, once per batch: they are totals that
  // publish no other memory, and one add per batch keeps the shared line
  // cold (a per-sample add would bounce it between writers).
  const uint64_t total =
      samples_.fetch_add(samples, std::memory_order_relaxed) + samples;
  weight_.fetch_add(st.weight, std::memory_order_relaxed);
  period_sum_.fetch_add(st.period_sum, std::memory_order_relaxed);
  if (st.rejected) rejected_.fetch_add(st.rejected, std::memory_order_relaxed);
  if (st.inserted) inserted_.fetch_add(st.inserted, std::memory_order_relaxed);
  if (st.displaced) {
    displaced_.fetch_add(st.displaced, std::memory_order_relaxed);
    displaced_weight_.fetch_add(st.displaced_weight, std::memory_order_relaxed);
  }
  if (st.dropped) {
    dropped_.fetch_add(st.dropped, std::memory_order_relaxed);
    dropped_weight_.fetch_add(st.dropped_weight, std::memory_order_relaxed);
  }
  // Sample-clock bounds (relaxed max/min: used only for rate windows).
  uint64_t latest = latest_ns_.load(std::memory_order_relaxed);
  while (max_ns > latest && !latest_ns_.compare_exchange_weak(
                                latest, max_ns, std::memory_order_relaxed)) {
  }
  uint64_t first = first_ns_.load(std::memory_order_relaxed);
  while ((first == 0 || min_ns < first) && min_ns != 0 &&
         !first_ns_.compare_exchange_weak(first, min_ns,
                                          std::memory_order_relaxed)) {
  }
  // Epochs. The thread whose CAS moves the boundary starts the epochs
  // (relaxed: the boundary, like the epoch, publishes nothing else).
  if (options_.epoch_samples != 0) {
    const uint64_t len = options_.epoch_samples;
    uint64_t next = next_epoch_at_.load(std::memory_order_relaxed);
    while (total >= next) {
      const uint64_t k = (total - next) / len + 1;
      if (next_epoch_at_.compare_exchange_weak(next, next + k * len,
                                               std::memory_order_relaxed)) {
        StartEpochs(static_cast<uint32_t>(k), max_ns);
        break;
      }
    }
  } else if (options_.epoch_ns != 0 && max_ns != 0) {
    const uint64_t len = options_.epoch_ns;
    uint64_t next = next_epoch_at_.load(std::memory_order_relaxed);
    if (next == 0) {
      // First batch: epochs are aligned to multiples of epoch_ns.
      const uint64_t start = min_ns / len * len;
      if (next_epoch_at_.compare_exchange_strong(next, start + len,
                                                 std::memory_order_relaxed)) {
        epoch_start_ns_.store(start, std::memory_order_relaxed);
        next = start + len;
      }
    }
    while (max_ns >= next) {
      const uint64_t k = (max_ns - next) / len + 1;
      if (next_epoch_at_.compare_exchange_weak(next, next + k * len,
                                               std::memory_order_relaxed)) {
        StartEpochs(static_cast<uint32_t>(k), next + (k - 1) * len);
        last_epoch_len_ns_.store(len, std::memory_order_relaxed);
        break;
      }
    }
  }
}

void HotnessTable::StartEpochs(uint32_t count, uint64_t start_ns) {
  // relaxed: see Ingest().
  epoch_.fetch_add(count, std::memory_order_relaxed);
  const uint64_t prev =
      epoch_start_ns_.exchange(start_ns, std::memory_order_relaxed);
  if (prev != 0 && start_ns > prev) {
    last_epoch_len_ns_.store((start_ns - prev) / count,
                             std::memory_order_relaxed);
  }
}

void HotnessTable::AdvanceEpoch(uint64_t now_ns) { StartEpochs(1, now_ns); }

// ---------------------------------------------------------------------------
// Table: readers.

bool HotnessTable::ViewOf(const Slot& slot, uint64_t expect_key, EntryView* out,
                          uint64_t* raw_state) const {
  // acquire, then the key must not have changed: see the protocol above.
  const uint64_t s = slot.state.load(std::memory_order_acquire);
  if (slot.key.load(std::memory_order_relaxed) != expect_key) return false;
  // relaxed: the epoch and the clock below stand alone (see Ingest()); a
  // slightly old value shows the entry as of a moment ago.
  const uint32_t epoch =
      epoch_.load(std::memory_order_relaxed) & internal::kEpochMask;
  const internal::DecodedState d =
      internal::DecayTo(internal::Decode(s), epoch);
  out->key = PageKey::Unpack(expect_key);
  out->count = d.count;
  out->foreign = d.foreign;
  if (d.home == internal::kUnknownNode) {
    out->node = -1;
    out->sharing = Sharing::kUnknown;
  } else {
    out->node = static_cast<int>(d.home);
    const bool shared =
        d.foreign >= 2 && (d.foreign >= internal::kForeignSticky ||
                           uint64_t{d.foreign} * 8 >= d.count);
    out->sharing = shared ? Sharing::kShared : Sharing::kPrivate;
  }
  const uint64_t now_tick =
      latest_ns_.load(std::memory_order_relaxed) >> internal::kTickNsShift;
  uint64_t age = (now_tick - d.tick) & internal::kTickMask;
  // A tick up to 64 ticks (1 s) ahead of the table's clock is from a batch
  // still being ingested: age 0.
  if (age > internal::kTickMask - 64) age = 0;
  out->last_seen_ns =
      now_tick >= age ? (now_tick - age) << internal::kTickNsShift : 0;
  *raw_state = s;
  return true;
}

std::optional<EntryView> HotnessTable::Lookup(const PageKey& key) const {
  const uint64_t packed = key.Pack();
  if (packed == 0) return std::nullopt;
  const uint64_t h = internal::MixKey(packed);
  const Slot* set = SetOf(h);
  for (unsigned j = 0; j < kSetSlots; ++j) {
    const Slot& slot = set[(h + j) & (kSetSlots - 1)];
    // acquire: as in a writer's probe; ViewOf() then validates the state.
    const uint64_t k = slot.key.load(std::memory_order_acquire);
    if (k == 0) break;
    EntryView view;
    uint64_t raw;
    if (k == packed && ViewOf(slot, k, &view, &raw)) return view;
  }
  return std::nullopt;
}

bool HotnessTable::ReadSlot(size_t index, EntryView* out, bool normalize) {
  Slot& slot = slots_[index];
  // acquire: as in a writer's probe; ViewOf() then validates the state.
  const uint64_t k = slot.key.load(std::memory_order_acquire);
  if (k == 0 || (k & PageKey::kReservedBit)) return false;
  uint64_t raw;
  if (!ViewOf(slot, k, out, &raw)) return false;
  if (normalize) {
    const uint32_t epoch =
        epoch_.load(std::memory_order_relaxed) & internal::kEpochMask;
    internal::DecodedState d = internal::Decode(raw);
    if (internal::EpochLag(epoch, d.epoch) >= kNormalizeLag) {
      // relaxed: rewrites the same entry's own (decayed) state; if a writer
      // got there first the CAS fails and nothing is lost.
      slot.state.compare_exchange_strong(
          raw, internal::Encode(internal::DecayTo(d, epoch)),
          std::memory_order_relaxed);
    }
  }
  return true;
}

void HotnessTable::ReadSlots(size_t begin, size_t end, bool normalize,
                             std::vector<EntryView>* out) {
  for (size_t i = begin; i < end; ++i) {
    // The empty slots (most of a sparse table) cost one load each here.
    if (slots_[i].key.load(std::memory_order_relaxed) == 0) continue;
    EntryView e;
    if (ReadSlot(i, &e, normalize)) out->push_back(e);
  }
}

// relaxed loads here and in stats(): each is an independent total or
// clock; the snapshot is approximate while writers run.
RateWindow HotnessTable::rate_window() const {
  RateWindow w;
  const uint64_t samples = samples_.load(std::memory_order_relaxed);
  if (samples != 0) {
    w.sample_period =
        static_cast<double>(period_sum_.load(std::memory_order_relaxed)) /
        samples;
  }
  const uint64_t now = latest_ns_.load(std::memory_order_relaxed);
  const uint64_t first = first_ns_.load(std::memory_order_relaxed);
  const uint64_t start = epoch_start_ns_.load(std::memory_order_relaxed);
  const uint64_t len = last_epoch_len_ns_.load(std::memory_order_relaxed);
  const uint64_t since_first = now > first ? now - first : 0;
  uint64_t window = since_first;
  if (len != 0) {
    // Steady-state window of a halving count: t into this epoch + one epoch.
    window = std::min(since_first, (now > start ? now - start : 0) + len);
  }
  w.window_ns = std::max<uint64_t>(window, 1);
  return w;
}

HotnessTable::Stats HotnessTable::stats() const {
  Stats s;
  s.samples = samples_.load(std::memory_order_relaxed);
  s.weight = weight_.load(std::memory_order_relaxed);
  s.rejected = rejected_.load(std::memory_order_relaxed);
  s.inserted = inserted_.load(std::memory_order_relaxed);
  s.displaced = displaced_.load(std::memory_order_relaxed);
  s.displaced_weight = displaced_weight_.load(std::memory_order_relaxed);
  s.dropped = dropped_.load(std::memory_order_relaxed);
  s.dropped_weight = dropped_weight_.load(std::memory_order_relaxed);
  s.epoch = epoch_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace hotpage
