#include "tools/simulate/sim_driver.h"

#include <algorithm>

namespace hotpage {

Simulation::Simulation(std::vector<std::unique_ptr<SimPolicy>> policies,
                       uint64_t interval_ns, SimObserver* observer)
    : policies_(std::move(policies)),
      interval_ns_(std::max<uint64_t>(interval_ns, 1)),
      observer_(observer) {
  for (size_t i = 0; i < policies_.size(); ++i) {
    policies_[i]->set_observer(observer_, i);
    policies_[i]->set_interval_ns(interval_ns_);
  }
}

int Simulation::IndexOf(absl::string_view name) const {
  for (size_t i = 0; i < policies_.size(); ++i) {
    if (policies_[i]->name() == name) return static_cast<int>(i);
  }
  return -1;
}

void Simulation::Feed(absl::Span<const Sample> samples) {
  for (const Sample& s : samples) Feed(s);
}

void Simulation::Feed(const Sample& in) {
  if (finished_) return;
  Sample s = in;
  if (!started_) {
    started_ = true;
    start_ns_ = last_ns_ = s.time_ns;
    std::vector<std::string> names;
    for (auto& p : policies_) {
      p->Start(s.time_ns);
      names.push_back(p->name());
    }
    if (observer_ != nullptr) observer_->OnStart(names, start_ns_);
  }
  if (s.time_ns < last_ns_) {
    ++late_samples_;
    s.time_ns = last_ns_;
  }
  last_ns_ = s.time_ns;
  const uint64_t index = (s.time_ns - start_ns_) / interval_ns_;
  if (index != current_index_) {
    if (current_samples_ > 0) {
      const uint64_t boundary = start_ns_ + (current_index_ + 1) * interval_ns_;
      for (auto& p : policies_) {
        if (p->next_event_ns() < boundary) p->Advance(boundary - 1);
      }
      CloseInterval();
    }
    current_index_ = index;
  }
  for (auto& p : policies_) {
    if (p->next_event_ns() <= s.time_ns) p->Advance(s.time_ns);
    p->OnSample(s);
  }
  ++current_samples_;
  ++samples_;
}

void Simulation::CloseInterval() {
  IntervalRow row;
  row.index = current_index_;
  row.start_ns = current_index_ * interval_ns_;
  const uint64_t end = start_ns_ + (current_index_ + 1) * interval_ns_;
  for (auto& p : policies_) row.tallies.push_back(p->EndInterval(end));
  if (observer_ != nullptr) {
    observer_->OnIntervalEnd(row.index, start_ns_ + row.start_ns, end,
                             row.tallies);
  }
  intervals_.push_back(std::move(row));
  current_samples_ = 0;
}

void Simulation::Finish() {
  if (finished_) return;
  finished_ = true;
  if (started_ && current_samples_ > 0) CloseInterval();
}

std::vector<PolicyTally> Simulation::Totals() const {
  std::vector<PolicyTally> out(policies_.size());
  for (const IntervalRow& r : intervals_) {
    for (size_t i = 0; i < r.tallies.size(); ++i) out[i].Add(r.tallies[i]);
  }
  return out;
}

}  // namespace hotpage
