// PeriodController: keeps the sampler's own CPU time under a budget by
// adjusting the sample period (samples per event count).
//
// Every control interval the caller reports the CPU time its sampling
// thread used over the wall time elapsed. Above the budget the period grows
// in proportion to the overshoot (at most 4x per step, so one noisy
// interval cannot blind the sampler); well below it (under a quarter) the
// period halves, never below the period the user asked for. Between the two
// it holds, so the period does not oscillate around the budget. Samples
// record the period in force, so counts scale to access estimates whatever
// the controller did.
//
// Pure logic: no clocks, no syscalls; the sampler applies the result with
// PERF_EVENT_IOC_PERIOD.

#ifndef HOTPAGE_SAMPLER_PERF_PERIOD_CONTROLLER_H_
#define HOTPAGE_SAMPLER_PERF_PERIOD_CONTROLLER_H_

#include <cstdint>
#include <functional>

namespace hotpage {

class PeriodController {
 public:
  // `normalize` maps a candidate period to one the source accepts (IBS:
  // low 4 bits clear, at least 0x90); identity when null.
  PeriodController(uint64_t base_period, uint64_t max_period,
                   double budget_fraction,
                   std::function<uint64_t(uint64_t)> normalize = nullptr);

  // Returns the period to use next. cpu_s and wall_s are for one interval.
  uint64_t Update(double cpu_s, double wall_s);

  uint64_t period() const { return period_; }
  double budget_fraction() const { return budget_; }
  double last_usage() const { return last_usage_; }
  uint64_t raises() const { return raises_; }
  uint64_t lowers() const { return lowers_; }

 private:
  uint64_t Normalize(uint64_t p) const;

  uint64_t base_;
  uint64_t max_;
  double budget_;
  std::function<uint64_t(uint64_t)> normalize_;
  uint64_t period_;
  double last_usage_ = 0;
  uint64_t raises_ = 0;
  uint64_t lowers_ = 0;
};

}  // namespace hotpage

#endif  // HOTPAGE_SAMPLER_PERF_PERIOD_CONTROLLER_H_
