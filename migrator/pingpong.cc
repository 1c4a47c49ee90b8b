#include "migrator/pingpong.h"

#include <algorithm>

namespace hotpage {
namespace {

// Pages are keyed by 4 KiB page number; a 2 MiB page by that of its base.
constexpr int kPageShift = 12;

size_t RoundUpPow2(size_t n) {
  size_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

}  // namespace

PingPongTracker::PingPongTracker(const PingPongOptions& options)
    : options_(options) {
  const size_t n = RoundUpPow2(std::max<size_t>(options.slots, kWays));
  num_slots_ = n;
  set_mask_ = n / kWays - 1;
  MutexLock lock(&mu_);
  slots_.resize(n);
}

size_t PingPongTracker::SetIndex(uint64_t key) const {
  // Fibonacci hashing: page numbers are dense, so spread them.
  return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 32) & set_mask_;
}

const PingPongTracker::Slot* PingPongTracker::Find(uint64_t key) const {
  const Slot* set = &slots_[SetIndex(key) * kWays];
  for (int i = 0; i < kWays; ++i) {
    if (set[i].key == key) return &set[i];
  }
  return nullptr;
}

PingPongTracker::Slot* PingPongTracker::FindOrEvict(uint64_t key,
                                                    absl::Time now) {
  Slot* set = &slots_[SetIndex(key) * kWays];
  for (int i = 0; i < kWays; ++i) {
    if (set[i].key == key) return &set[i];
  }
  // Forget, in this order: an empty slot; the page not on hold that moved
  // least recently; the held page whose hold ends first.
  Slot* victim = nullptr;
  for (int i = 0; i < kWays && victim == nullptr; ++i) {
    if (set[i].key == 0) victim = &set[i];
  }
  if (victim == nullptr) {
    for (int j = 0; j < kWays; ++j) {
      if (set[j].held_until > now) continue;
      if (victim == nullptr || set[j].last_move < victim->last_move) {
        victim = &set[j];
      }
    }
  }
  if (victim == nullptr) {
    victim = &set[0];
    for (int j = 1; j < kWays; ++j) {
      if (set[j].held_until < victim->held_until) victim = &set[j];
    }
  }
  *victim = Slot();
  victim->key = key;
  victim->window_start = now;
  return victim;
}

bool PingPongTracker::RecordMove(uint64_t page_addr, int from, int to,
                                 absl::Time now) {
  const uint64_t key = (page_addr >> kPageShift) + 1;
  MutexLock lock(&mu_);
  Slot* s = FindOrEvict(key, now);
  if (now - s->window_start > options_.window) {
    s->window_start = now;
    s->reversals = 0;
  }
  // A reversal: back to where the previous move came from, and the history
  // is consistent (the page is moving from where we last put it).
  if (s->last_to == from && s->last_from == to) ++s->reversals;
  s->last_from = from;
  s->last_to = to;
  s->last_move = now;
  if (options_.max_reversals > 0 && s->reversals > options_.max_reversals &&
      s->held_until <= now) {
    s->held_until = now + options_.hold;
    // A fresh window after the hold: the page gets a clean slate.
    s->reversals = 0;
    s->window_start = s->held_until;
    ++pingpong_pages_;
    return true;
  }
  return false;
}

void PingPongTracker::Hold(uint64_t page_addr, absl::Time now,
                           absl::Duration hold) {
  if (options_.max_reversals <= 0) return;
  const uint64_t key = (page_addr >> kPageShift) + 1;
  MutexLock lock(&mu_);
  Slot* s = FindOrEvict(key, now);
  s->held_until = std::max(s->held_until, now + hold);
}

bool PingPongTracker::IsHeld(uint64_t page_addr, absl::Time now) const {
  const uint64_t key = (page_addr >> kPageShift) + 1;
  MutexLock lock(&mu_);
  const Slot* s = Find(key);
  return s != nullptr && s->held_until > now;
}

size_t PingPongTracker::ReleaseHolds(absl::Time now) {
  MutexLock lock(&mu_);
  size_t n = 0;
  for (Slot& s : slots_) {
    if (s.key == 0 || s.held_until <= now) continue;
    s.held_until = now;
    s.reversals = 0;
    s.window_start = now;
    ++n;
  }
  return n;
}

uint64_t PingPongTracker::pingpong_pages() const {
  MutexLock lock(&mu_);
  return pingpong_pages_;
}

size_t PingPongTracker::HeldCount(absl::Time now) const {
  MutexLock lock(&mu_);
  size_t n = 0;
  for (const Slot& s : slots_) {
    if (s.key != 0 && s.held_until > now) ++n;
  }
  return n;
}

}  // namespace hotpage
