// TokenBucket: a rate limiter over an injected notion of time.
//
// Tokens accrue at rate_per_sec up to capacity (the burst). The migrator
// keeps two: bytes (the MB/s limit on page migration) and CPU seconds (its
// CPU budget, charged after the fact with what a round really cost, which
// may drive the level below zero: a debt that the next round waits out).
//
// The class is pure: every call takes the current time as an argument, so
// tests state time explicitly and nothing here reads a clock or sleeps.
// Time going backwards is ignored (the level never shrinks by refill).
//
// Thread-compatible: the migrator uses each bucket from its own thread only.

#ifndef HOTPAGE_MIGRATOR_TOKEN_BUCKET_H_
#define HOTPAGE_MIGRATOR_TOKEN_BUCKET_H_

#include "absl/time/time.h"

namespace hotpage {

class TokenBucket {
 public:
  // A bucket that starts full at `now`. rate_per_sec <= 0 means unlimited:
  // every take succeeds and nothing ever waits. capacity must be > 0 when
  // limited.
  TokenBucket(double rate_per_sec, double capacity, absl::Time now);

  bool unlimited() const { return rate_per_sec_ <= 0; }
  double rate_per_sec() const { return rate_per_sec_; }
  double capacity() const { return capacity_; }

  // Changes rate and capacity; the level is kept (clamped to capacity).
  void SetRate(double rate_per_sec, double capacity, absl::Time now);

  // Tokens available at `now` (negative while in debt; +inf if unlimited).
  double Available(absl::Time now);

  // Takes `tokens` if that many are available; false (and nothing taken)
  // otherwise.
  bool TryTake(double tokens, absl::Time now);

  // Takes `tokens` unconditionally; the level may go negative (debt).
  void Take(double tokens, absl::Time now);

  // Returns `tokens` (e.g. reserved for pages that then did not move); the
  // level stays at most capacity.
  void Give(double tokens, absl::Time now);

  // How long until Available() >= tokens; zero if already so. `tokens` is
  // clamped to capacity, so the wait is always finite.
  absl::Duration TimeUntil(double tokens, absl::Time now);

 private:
  void Refill(absl::Time now);

  double rate_per_sec_;
  double capacity_;
  double level_;
  absl::Time last_;
};

}  // namespace hotpage

#endif  // HOTPAGE_MIGRATOR_TOKEN_BUCKET_H_
