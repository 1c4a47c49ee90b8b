#include "sampler/perf/period_controller.h"

#include <algorithm>
#include <cmath>

namespace hotpage {

PeriodController::PeriodController(uint64_t base_period, uint64_t max_period,
                                   double budget_fraction,
                                   std::function<uint64_t(uint64_t)> normalize)
    : base_(std::max<uint64_t>(base_period, 1)),
      max_(std::max(max_period, base_period)),
      budget_(budget_fraction),
      normalize_(std::move(normalize)),
      period_(Normalize(base_)) {}

uint64_t PeriodController::Normalize(uint64_t p) const {
  p = std::clamp(p, base_, max_);
  return normalize_ ? normalize_(p) : p;
}

uint64_t PeriodController::Update(double cpu_s, double wall_s) {
  if (wall_s <= 0 || budget_ <= 0) return period_;
  last_usage_ = cpu_s / wall_s;
  if (last_usage_ > budget_) {
    double factor = std::min(4.0, last_usage_ / budget_);
    uint64_t next = Normalize(static_cast<uint64_t>(
        std::ceil(static_cast<double>(period_) * factor)));
    if (next > period_) {
      period_ = next;
      ++raises_;
    }
  } else if (last_usage_ < budget_ / 4 && period_ > base_) {
    period_ = Normalize(period_ / 2);
    ++lowers_;
  }
  return period_;
}

}  // namespace hotpage
