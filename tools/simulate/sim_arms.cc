#include "tools/simulate/sim_arms.h"

#include <algorithm>
#include <cmath>

namespace hotpage {

namespace {

double Weight(uint64_t period_ns, uint64_t tau_ns) {
  return tau_ns == 0 ? 1.0
                     : 1.0 - std::exp(-static_cast<double>(period_ns) /
                                      static_cast<double>(tau_ns));
}

}  // namespace

ArmsPolicy::ArmsPolicy(std::unique_ptr<SimulatedMemory> memory,
                       const ArmsOptions& options)
    : PeriodicPolicy("arms", std::move(memory), options.period_ns),
      options_(options) {
  a_short_ = Weight(options_.period_ns, options_.short_tau_ns);
  a_long_ = Weight(options_.period_ns, options_.long_tau_ns);
  a_ref_ = a_long_;
  budget_pages_ = static_cast<uint64_t>(
      options_.budget_bytes_per_sec * static_cast<double>(options_.period_ns) /
      1e9 / static_cast<double>(kSimPageBytes));
  warmup_periods_ =
      options_.period_ns ? options_.long_tau_ns / options_.period_ns : 0;
}

double ArmsPolicy::ShortRateOf(uint64_t vaddr) const {
  const Page* p = pages_.Find(vaddr);
  return p == nullptr ? 0 : p->short_rate;
}

double ArmsPolicy::LongRateOf(uint64_t vaddr) const {
  const Page* p = pages_.Find(vaddr);
  return p == nullptr ? 0 : p->long_rate;
}

void ArmsPolicy::Access(const Sample& s, int node) {
  Page& p = pages_[pages_.FindOrAdd(s.vaddr).first];
  p.node = node;
  p.accesses +=
      static_cast<double>(s.period ? s.period : options_.default_sample_period);
  ++period_samples_;
  if (memory().is_fast(node)) ++period_fast_;
}

void ArmsPolicy::Tick(uint64_t now) {
  ++ticks_;
  const double seconds = static_cast<double>(options_.period_ns) / 1e9;
  for (Page& p : pages_) {
    const double rate = p.accesses / seconds;
    p.short_rate += a_short_ * (rate - p.short_rate);
    p.long_rate += a_long_ * (rate - p.long_rate);
    p.accesses = 0;
  }
  if (options_.detect_shifts) Detect(now);
  period_samples_ = period_fast_ = 0;
  shift_mode_ = options_.detect_shifts && now < shift_until_ns_;
  if (shift_mode_) ++shift_ticks_;
  Migrate(now);
}

void ArmsPolicy::Detect(uint64_t now) {
  if (period_samples_ == 0) return;
  const double n = static_cast<double>(period_samples_);
  const double x = static_cast<double>(period_fast_) / n;
  if (observed_periods_ == 0) {
    ref_mean_ = x;
    ref_var_ = 0;
  } else {
    if (observed_periods_ >= warmup_periods_) {
      // Binomial noise of x (Agresti-Coull share) bounds sigma from below.
      const double p = (static_cast<double>(period_fast_) + 2) / (n + 4);
      const double sigma =
          std::max(std::sqrt(ref_var_), std::sqrt(p * (1 - p) / n));
      cusum_ =
          std::max(0.0, cusum_ + (ref_mean_ - x) / sigma - options_.cusum_k);
      if (cusum_ > options_.cusum_h) {
        ++detections_;
        cusum_ = 0;
        shift_until_ns_ = now + options_.shift_hold_ns;
      }
    }
    // The reference: exponentially weighted mean and variance.
    const double d = x - ref_mean_;
    ref_mean_ += a_ref_ * d;
    ref_var_ = (1 - a_ref_) * (ref_var_ + a_ref_ * d * d);
  }
  ++observed_periods_;
}

void ArmsPolicy::Migrate(uint64_t now) {
  SimulatedMemory& mem = memory();
  slow_.clear();
  fast_.clear();
  for (uint32_t i = 0; i < pages_.size(); ++i) {
    const int node = pages_[i].node;
    if (node < 0) continue;
    if (mem.is_fast(node)) {
      fast_.push_back(i);
    } else if (Score(pages_[i]) > 0) {
      slow_.push_back(i);
    }
  }
  if (slow_.empty()) return;
  auto hotter = [&](uint32_t a, uint32_t b) {
    const double sa = Score(pages_[a]), sb = Score(pages_[b]);
    return sa != sb ? sa > sb : pages_[a].vaddr < pages_[b].vaddr;
  };
  // At most this many slow pages can move this period (free fast pages,
  // fast pages to swap with, the budget): only those need their order, and
  // as many of the coldest fast pages.
  uint64_t free_fast_pages = 0;
  for (int n : mem.fast_nodes()) free_fast_pages += mem.free_pages(n);
  const size_t want = static_cast<size_t>(std::min<uint64_t>(
      {slow_.size(), fast_.size() + free_fast_pages, budget_pages_ + 1}));
  auto colder = [&](uint32_t a, uint32_t b) { return hotter(b, a); };
  // nth_element then sort of the prefix: linear plus k log k (a heap-based
  // partial_sort was 30% of the run at k ~ 10^4).
  if (want < slow_.size())
    std::nth_element(slow_.begin(), slow_.begin() + want, slow_.end(), hotter);
  slow_.resize(want);
  std::sort(slow_.begin(), slow_.end(), hotter);
  const size_t victims = std::min(want, fast_.size());
  if (victims < fast_.size())
    std::nth_element(fast_.begin(), fast_.begin() + victims, fast_.end(),
                     colder);
  fast_.resize(victims);
  std::sort(fast_.begin(), fast_.end(), colder);
  const double horizon_s = static_cast<double>(options_.horizon_ns) / 1e9;
  const double ratio = options_.benefit_cost_ratio;
  uint64_t used = 0;
  size_t next_cold = 0;
  for (uint32_t h : slow_) {
    Page& hot = pages_[h];
    const int hot_node = hot.node;
    const double hot_rate = Score(hot);
    int free_fast = -1;
    for (int n : mem.fast_nodes()) {
      if (mem.free_pages(n) > 0) {
        free_fast = n;
        break;
      }
    }
    if (free_fast >= 0) {
      // A free fast page: a promotion alone.
      if (used + 1 > budget_pages_) {
        ++budget_stops_;
        return;
      }
      const double benefit =
          hot_rate *
          (mem.read_latency_ns(hot_node) - mem.read_latency_ns(free_fast)) *
          horizon_s;
      const double cost =
          static_cast<double>(mem.MoveCostNs(hot_node, free_fast));
      if (!(benefit > ratio * cost)) {
        ++refused_by_cost_;
        return;
      }
      if (!MovePage(hot, free_fast, now)) return;
      ++promotions_;
      ++used;
      continue;
    }
    // A swap with the coldest fast page not yet used.
    if (next_cold >= fast_.size()) return;
    Page& cold = pages_[fast_[next_cold]];
    const double cold_rate = Score(cold);
    if (cold_rate >= hot_rate) return;
    const int fast_node = cold.node;
    int down = -1;
    for (int to : mem.DemotionTargets(fast_node)) {
      if (mem.free_pages(to) > 0) {
        down = to;
        break;
      }
    }
    if (down < 0) return;
    if (used + 2 > budget_pages_) {
      ++budget_stops_;
      return;
    }
    const double fast_lat = mem.read_latency_ns(fast_node);
    const double benefit =
        (hot_rate * (mem.read_latency_ns(hot_node) - fast_lat) -
         cold_rate * (mem.read_latency_ns(down) - fast_lat)) *
        horizon_s;
    const double cost = static_cast<double>(
        mem.MoveCostNs(fast_node, down) + mem.MoveCostNs(hot_node, fast_node));
    if (!(benefit > ratio * cost)) {
      ++refused_by_cost_;
      return;
    }
    if (!MovePage(cold, down, now)) return;
    ++demotions_;
    ++next_cold;
    if (!MovePage(hot, fast_node, now)) return;
    ++promotions_;
    used += 2;
  }
}

bool ArmsPolicy::MovePage(Page& p, int to, uint64_t now) {
  if (memory().Move(p.vaddr, to, now).status != to) return false;
  p.node = to;
  return true;
}

std::vector<std::pair<std::string, uint64_t>> ArmsPolicy::Details() const {
  return {
      {"ticks", ticks_},
      {"detections", detections_},
      {"ticks_ranked_by_short_average", shift_ticks_},
      {"promotions", promotions_},
      {"demotions", demotions_},
      {"refused_by_cost", refused_by_cost_},
      {"budget_stops", budget_stops_},
  };
}

}  // namespace hotpage
