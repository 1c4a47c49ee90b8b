#include "tools/simulate/sim_colloid.h"

#include <algorithm>
#include <cmath>

#include "policy/loaded_latency.h"

namespace hotpage {

ColloidPolicy::ColloidPolicy(std::unique_ptr<SimulatedMemory> memory,
                             const ColloidOptions& options)
    : MemoryPolicy("colloid", std::move(memory)), options_(options) {
  const SimulatedMemory& mem = this->memory();
  int max_id = 0;
  fast_.idle_ns = slow_.idle_ns = 0;
  for (int n : mem.nodes()) {
    max_id = std::max(max_id, n);
    Side& side = mem.is_fast(n) ? fast_ : slow_;
    const double idle = mem.read_latency_ns(n);
    if (side.idle_ns == 0 || idle < side.idle_ns) side.idle_ns = idle;
  }
  poll_accesses_.assign(max_id + 1, 0);
  victims_.resize(max_id + 1);
  next_victim_.assign(max_id + 1, 0);
  smoothed_accesses_.assign(max_id + 1, 0);
}

void ColloidPolicy::Start(uint64_t start_ns) {
  next_poll_ns_ = start_ns + options_.poll_period_ns;
  next_quantum_ns_ = start_ns + options_.quantum_ns;
}

uint64_t ColloidPolicy::next_event_ns() const {
  return std::min(next_poll_ns_, next_quantum_ns_);
}

void ColloidPolicy::Advance(uint64_t now_ns) {
  // Polls before a quantum due at the same time: it acts on the latest
  // measurement.
  while (next_event_ns() <= now_ns) {
    if (next_poll_ns_ <= next_quantum_ns_) {
      Poll();
      next_poll_ns_ += options_.poll_period_ns;
    } else {
      Quantum(next_quantum_ns_);
      next_quantum_ns_ += options_.quantum_ns;
    }
  }
}

double ColloidPolicy::LatencyOf(const Side& s) {
  if (!(s.inserts > 0)) return s.idle_ns;
  return std::max(s.occupancy / s.inserts, s.idle_ns);
}

double ColloidPolicy::fast_latency_ns() const { return LatencyOf(fast_); }
double ColloidPolicy::slow_latency_ns() const { return LatencyOf(slow_); }

void ColloidPolicy::Poll() {
  ++polls_;
  const SimulatedMemory& mem = memory();
  const double w = options_.ewma_weight;
  fast_ = Side{0, 0, fast_.idle_ns};
  slow_ = Side{0, 0, slow_.idle_ns};
  for (int n : mem.nodes()) {
    // The node's smoothed inserts per poll, then Little's law on them.
    double& rate = smoothed_accesses_[n];
    rate += w * (poll_accesses_[n] - rate);
    poll_accesses_[n] = 0;
    if (!(rate > 0)) continue;
    const double u =
        Utilisation(DemandBytesPerSec(rate, options_.poll_period_ns),
                    latency_model().PeakBytesPerSec(n));
    Side& side = mem.is_fast(n) ? fast_ : slow_;
    side.occupancy += rate * LoadedLatencyNs(mem.read_latency_ns(n), u);
    side.inserts += rate;
  }
}

void ColloidPolicy::Quantum(uint64_t now) {
  ++quanta_;
  const double total = fast_.inserts + slow_.inserts;
  if (!(total > 0) || total_count_ == 0) return;
  const double ld = LatencyOf(fast_), la = LatencyOf(slow_);
  if (std::fabs(ld - la) <= options_.delta * ld) {
    ++balanced_;
    return;
  }
  const double p = fast_.inserts / total;
  const bool fast_lower = ld < la;
  if (fast_lower) {
    p_lo_ = p;
    if (p_hi_ <= p_lo_) p_hi_ = 1;
  } else {
    p_hi_ = p;
    if (p_lo_ >= p_hi_) p_lo_ = 0;
  }
  if (p_hi_ - p_lo_ < options_.epsilon) {
    if (fast_lower) {
      p_hi_ = 1;
    } else {
      p_lo_ = 0;
    }
  }
  const double delta_p = std::fabs((p_lo_ + p_hi_) / 2 - p);
  const double budget = delta_p * static_cast<double>(total_count_);
  if (fast_lower) {
    ++promote_quanta_;
    Promote(budget, now);
  } else {
    ++demote_quanta_;
    Demote(budget, now);
  }
}

void ColloidPolicy::Promote(double budget, uint64_t now) {
  SimulatedMemory& mem = memory();
  order_.clear();
  for (auto& v : victims_) v.clear();
  for (uint32_t i = 0; i < pages_.size(); ++i) {
    const int node = mem.NodeOf(pages_[i].vaddr);
    if (node < 0) continue;
    if (mem.is_fast(node)) {
      victims_[node].push_back(i);
    } else if (pages_[i].count > 0) {
      order_.push_back(i);
    }
  }
  auto hotter = [&](uint32_t a, uint32_t b) {
    return pages_[a].count != pages_[b].count
               ? pages_[a].count > pages_[b].count
               : pages_[a].vaddr < pages_[b].vaddr;
  };
  std::sort(order_.begin(), order_.end(), hotter);
  for (auto& v : victims_) {
    std::sort(v.begin(), v.end(),
              [&](uint32_t a, uint32_t b) { return hotter(b, a); });
  }
  std::fill(next_victim_.begin(), next_victim_.end(), 0);
  auto room = [&](int n) {
    const uint64_t w = static_cast<uint64_t>(
        static_cast<double>(mem.capacity_pages(n)) * options_.free_watermark);
    const uint64_t f = mem.free_pages(n);
    return f > w ? f - w : 0;
  };
  auto target_for = [&](const Page& pg) {
    const int local = mem.NodeOfCpu(pg.cpu);
    if (local >= 0 && mem.is_fast(local) && room(local) > 0) return local;
    for (int n : mem.fast_nodes()) {
      if (room(n) > 0) return n;
    }
    return -1;
  };
  // Demotes the coldest page of fast node `n` if colder than `count`.
  auto make_room = [&](int n, uint32_t count) {
    std::vector<uint32_t>& list = victims_[n];
    size_t& v = next_victim_[n];
    while (v < list.size() && pages_[list[v]].count < count) {
      const uint64_t vaddr = pages_[list[v++]].vaddr;
      if (mem.NodeOf(vaddr) != n) continue;
      for (int to : mem.DemotionTargets(n)) {
        if (mem.Move(vaddr, to, now).status == to) {
          ++capacity_demotions_;
          return true;
        }
      }
    }
    return false;
  };
  double left = budget;
  for (uint32_t i : order_) {
    const Page& pg = pages_[i];
    const double c = static_cast<double>(pg.count);
    if (c > left) continue;
    int target = target_for(pg);
    // A full fast tier: demote a colder page (the host's capacity
    // demotion), from the accessing CPU's node first, then try again.
    // (Room means free pages above the watermark: it may take several.)
    if (target < 0) {
      const int local = mem.NodeOfCpu(pg.cpu);
      if (local >= 0 && mem.is_fast(local)) {
        while (target < 0 && make_room(local, pg.count))
          target = target_for(pg);
      }
      for (int n : mem.fast_nodes()) {
        if (n == local) continue;
        while (target < 0 && make_room(n, pg.count)) target = target_for(pg);
      }
    }
    if (target < 0) break;
    if (mem.Move(pg.vaddr, target, now).status == target) {
      ++promotions_;
      left -= c;
    }
  }
}

void ColloidPolicy::Demote(double budget, uint64_t now) {
  SimulatedMemory& mem = memory();
  order_.clear();
  for (uint32_t i = 0; i < pages_.size(); ++i) {
    const int node = mem.NodeOf(pages_[i].vaddr);
    if (node >= 0 && mem.is_fast(node) && pages_[i].count > 0)
      order_.push_back(i);
  }
  std::sort(order_.begin(), order_.end(), [&](uint32_t a, uint32_t b) {
    return pages_[a].count != pages_[b].count
               ? pages_[a].count > pages_[b].count
               : pages_[a].vaddr < pages_[b].vaddr;
  });
  double left = budget;
  for (uint32_t i : order_) {
    const Page& pg = pages_[i];
    const double c = static_cast<double>(pg.count);
    if (c > left) continue;
    const int from = mem.NodeOf(pg.vaddr);
    for (int to : mem.DemotionTargets(from)) {
      if (mem.Move(pg.vaddr, to, now).status == to) {
        ++demotions_;
        left -= c;
        break;
      }
    }
  }
}

void ColloidPolicy::Access(const Sample& s, int node) {
  poll_accesses_[node] += static_cast<double>(std::max<uint64_t>(s.period, 1));
  Page& p = pages_[pages_.FindOrAdd(s.vaddr).first];
  if (p.count < UINT32_MAX) {
    ++p.count;
    ++total_count_;
  }
  p.cpu = s.cpu;
  if (++since_cooling_ >= options_.cooling_samples) {
    ++coolings_;
    since_cooling_ = 0;
    total_count_ = 0;
    for (Page& q : pages_) {
      q.count >>= 1;
      total_count_ += q.count;
    }
  }
}

std::vector<std::pair<std::string, uint64_t>> ColloidPolicy::Details() const {
  return {
      {"polls", polls_},
      {"quanta", quanta_},
      {"quanta_balanced", balanced_},
      {"quanta_promoting", promote_quanta_},
      {"quanta_demoting", demote_quanta_},
      {"promotions", promotions_},
      {"demotions", demotions_},
      {"capacity_demotions", capacity_demotions_},
      {"coolings", coolings_},
      {"fast_latency_ns", static_cast<uint64_t>(LatencyOf(fast_) + 0.5)},
      {"slow_latency_ns", static_cast<uint64_t>(LatencyOf(slow_) + 0.5)},
  };
}

}  // namespace hotpage
