#include "migrator/token_bucket.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hotpage {

TokenBucket::TokenBucket(double rate_per_sec, double capacity, absl::Time now)
    : rate_per_sec_(rate_per_sec),
      capacity_(rate_per_sec > 0 ? std::max(capacity, 1e-9) : 0),
      level_(capacity_),
      last_(now) {}

void TokenBucket::SetRate(double rate_per_sec, double capacity,
                          absl::Time now) {
  Refill(now);
  const bool was_unlimited = unlimited();
  rate_per_sec_ = rate_per_sec;
  capacity_ = rate_per_sec > 0 ? std::max(capacity, 1e-9) : 0;
  level_ = was_unlimited ? capacity_ : std::min(level_, capacity_);
}

void TokenBucket::Refill(absl::Time now) {
  if (now <= last_) return;
  if (!unlimited()) {
    const double dt = absl::ToDoubleSeconds(now - last_);
    level_ = std::min(capacity_, level_ + dt * rate_per_sec_);
  }
  last_ = now;
}

double TokenBucket::Available(absl::Time now) {
  if (unlimited()) return std::numeric_limits<double>::infinity();
  Refill(now);
  return level_;
}

bool TokenBucket::TryTake(double tokens, absl::Time now) {
  if (unlimited()) return true;
  Refill(now);
  if (level_ < tokens) return false;
  level_ -= tokens;
  return true;
}

void TokenBucket::Take(double tokens, absl::Time now) {
  if (unlimited()) return;
  Refill(now);
  level_ -= tokens;
}

void TokenBucket::Give(double tokens, absl::Time now) {
  if (unlimited()) return;
  Refill(now);
  level_ = std::min(capacity_, level_ + tokens);
}

absl::Duration TokenBucket::TimeUntil(double tokens, absl::Time now) {
  if (unlimited()) return absl::ZeroDuration();
  Refill(now);
  const double want = std::min(tokens, capacity_);
  if (level_ >= want) return absl::ZeroDuration();
  // Round up to the next microsecond so that waiting exactly this long is
  // always enough.
  const double seconds = (want - level_) / rate_per_sec_;
  return absl::Microseconds(std::ceil(seconds * 1e6));
}

}  // namespace hotpage
