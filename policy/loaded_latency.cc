#include "policy/loaded_latency.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hotpage {

double LoadedLatencyFactor(double utilisation) {
  if (!(utilisation > 0)) return 1.0;  // also NaN
  const double u = std::min(utilisation, kMaxUtilisation);
  return 1.0 + kQueueingCoefficient * u / (1.0 - u);
}

double LoadedLatencyNs(double idle_latency_ns, double utilisation) {
  return idle_latency_ns * LoadedLatencyFactor(utilisation);
}

double DemandBytesPerSec(double accesses, uint64_t interval_ns) {
  if (interval_ns == 0 || !(accesses > 0)) return 0;
  return accesses * kCacheLineBytes * 1e9 / static_cast<double>(interval_ns);
}

double Utilisation(double demand_bytes_per_sec, double peak_bytes_per_sec) {
  if (!(peak_bytes_per_sec > 0) || !(demand_bytes_per_sec > 0)) return 0;
  return demand_bytes_per_sec / peak_bytes_per_sec;
}

double UtilisationForFactor(double factor) {
  if (!(factor > 1)) return 0;
  // 1 + a u / (1 - u) = f  =>  u = (f - 1) / (a + f - 1).
  const double x = factor - 1.0;
  return std::min(x / (kQueueingCoefficient + x), kMaxUtilisation);
}

double MarginalLatencyFactor(double utilisation, bool below_cap) {
  if (!(utilisation > 0)) return 1.0;  // also NaN
  if (utilisation >= kMaxUtilisation && !below_cap)
    return LoadedLatencyFactor(utilisation);  // flat: M = L
  const double u = std::min(utilisation, kMaxUtilisation);
  const double v = 1.0 - u;
  return 1.0 + kQueueingCoefficient * u * (2.0 - u) / (v * v);
}

double UtilisationForMarginalFactor(double factor) {
  if (!(factor > 1)) return 0;
  // a (1 - v^2) / v^2 = f - 1  =>  v = sqrt(a / (a + f - 1)), u = 1 - v.
  const double v =
      std::sqrt(kQueueingCoefficient / (kQueueingCoefficient + factor - 1.0));
  return std::min(1.0 - v, kMaxUtilisation);
}

LoadedLatencyModel LoadedLatencyModel::FromTopology(const Topology& topology) {
  LoadedLatencyModel m;
  std::vector<const NodeInfo*> sorted;
  for (const NodeInfo& n : topology.nodes) sorted.push_back(&n);
  std::sort(sorted.begin(), sorted.end(),
            [](const NodeInfo* a, const NodeInfo* b) { return a->id < b->id; });
  for (const NodeInfo* n : sorted) {
    NodeLatency l;
    l.node = n->id;
    const bool fast = !n->tier.has_value() || *n->tier == 0;
    l.idle_latency_ns = fast ? kDefaultFastLatencyNs : kDefaultSlowLatencyNs;
    l.peak_bytes_per_sec =
        fast ? kDefaultFastBytesPerSec : kDefaultSlowBytesPerSec;
    if (n->hmat.read_latency_ns && *n->hmat.read_latency_ns > 0)
      l.idle_latency_ns = static_cast<double>(*n->hmat.read_latency_ns);
    if (n->hmat.read_bandwidth_mbps && *n->hmat.read_bandwidth_mbps > 0) {
      // The kernel reports HMAT bandwidth in MB/s (10^6 bytes).
      l.peak_bytes_per_sec =
          static_cast<double>(*n->hmat.read_bandwidth_mbps) * 1e6;
    }
    l.from_hmat = n->hmat.complete();
    l.home_node = n->id;
    if (!n->has_cpus() && !n->hmat.initiators.empty())
      l.home_node = n->hmat.initiators.front();
    m.nodes_.push_back(l);
  }
  const size_t k = m.nodes_.size();
  m.distance_.assign(k * k, 0);
  for (size_t i = 0; i < k; ++i) {
    for (size_t j = 0; j < k; ++j) {
      m.distance_[i * k + j] =
          topology.Distance(m.nodes_[i].node, m.nodes_[j].node).value_or(0);
    }
  }
  return m;
}

int LoadedLatencyModel::IndexOf(int node) const {
  auto it = std::lower_bound(
      nodes_.begin(), nodes_.end(), node,
      [](const NodeLatency& l, int id) { return l.node < id; });
  if (it == nodes_.end() || it->node != node) return -1;
  return static_cast<int>(it - nodes_.begin());
}

const NodeLatency* LoadedLatencyModel::Find(int node) const {
  const int i = IndexOf(node);
  return i < 0 ? nullptr : &nodes_[i];
}

double LoadedLatencyModel::IdleLatencyNs(int node) const {
  const NodeLatency* l = Find(node);
  return l ? l->idle_latency_ns : 0;
}

double LoadedLatencyModel::PeakBytesPerSec(int node) const {
  const NodeLatency* l = Find(node);
  return l ? l->peak_bytes_per_sec : 0;
}

double LoadedLatencyModel::LatencyNs(int node,
                                     double demand_bytes_per_sec) const {
  const NodeLatency* l = Find(node);
  if (l == nullptr) return 0;
  return LoadedLatencyNs(
      l->idle_latency_ns,
      Utilisation(demand_bytes_per_sec, l->peak_bytes_per_sec));
}

double LoadedLatencyModel::DemandAtLatency(int node, double latency_ns) const {
  const NodeLatency* l = Find(node);
  if (l == nullptr || !(l->idle_latency_ns > 0) || !(l->peak_bytes_per_sec > 0))
    return 0;
  return l->peak_bytes_per_sec *
         UtilisationForFactor(latency_ns / l->idle_latency_ns);
}

LatencyBalance BalanceLatencies(const LoadedLatencyModel& model,
                                absl::Span<const NodeDemand> donors,
                                absl::Span<const NodeDemand> receivers) {
  LatencyBalance out;
  out.shed.reserve(donors.size());
  for (const NodeDemand& d : donors) out.shed.push_back({d.node, 0});
  if (donors.empty() || receivers.empty()) return out;
  // The bracket: no level below the fastest receiver's latency lets it
  // take anything, none above the slowest donor's makes it give anything.
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (const NodeDemand& r : receivers)
    lo = std::min(lo, model.LatencyNs(r.node, r.bytes_per_sec));
  for (const NodeDemand& d : donors)
    hi = std::max(hi, model.LatencyNs(d.node, d.bytes_per_sec));
  out.latency_ns = hi;
  if (!(hi > lo)) return out;
  auto shed = [&](double level) {
    double s = 0;
    for (const NodeDemand& d : donors)
      s +=
          std::max(0.0, d.bytes_per_sec - model.DemandAtLatency(d.node, level));
    return s;
  };
  auto absorb = [&](double level) {
    double a = 0;
    for (const NodeDemand& r : receivers)
      a +=
          std::max(0.0, model.DemandAtLatency(r.node, level) - r.bytes_per_sec);
    return a;
  };
  // shed - absorb falls with the level: bisect to 1e-9 of the bracket (60
  // halvings).
  for (int i = 0; i < 60; ++i) {
    const double mid = lo + (hi - lo) / 2;
    if (shed(mid) > absorb(mid)) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  out.latency_ns = hi;
  const double given = shed(hi);
  out.moved_bytes_per_sec = std::min(given, absorb(hi));
  if (!(given > 0)) return out;
  const double scale = out.moved_bytes_per_sec / given;
  for (size_t i = 0; i < donors.size(); ++i) {
    out.shed[i].bytes_per_sec =
        scale * std::max(0.0, donors[i].bytes_per_sec -
                                  model.DemandAtLatency(donors[i].node, hi));
  }
  return out;
}

double LoadedLatencyModel::MarginalLatencyNs(int node,
                                             double demand_bytes_per_sec,
                                             bool below_cap) const {
  const NodeLatency* l = Find(node);
  if (l == nullptr) return 0;
  return l->idle_latency_ns *
         MarginalLatencyFactor(
             Utilisation(demand_bytes_per_sec, l->peak_bytes_per_sec),
             below_cap);
}

double LoadedLatencyModel::DemandAtMarginal(int node,
                                            double marginal_ns) const {
  const NodeLatency* l = Find(node);
  if (l == nullptr || !(l->idle_latency_ns > 0) || !(l->peak_bytes_per_sec > 0))
    return 0;
  return l->peak_bytes_per_sec *
         UtilisationForMarginalFactor(marginal_ns / l->idle_latency_ns);
}

double TotalLatencyNsPerSec(const LoadedLatencyModel& model,
                            absl::Span<const NodeDemand> nodes) {
  double total = 0;
  for (const NodeDemand& n : nodes) {
    if (n.bytes_per_sec > 0)
      total += n.bytes_per_sec * model.LatencyNs(n.node, n.bytes_per_sec);
  }
  return total;
}

LatencyBalance BalanceMarginalLatencies(
    const LoadedLatencyModel& model, absl::Span<const NodeDemand> donors,
    absl::Span<const NodeDemand> receivers) {
  LatencyBalance out;
  out.shed.reserve(donors.size());
  out.absorbed.reserve(receivers.size());
  for (const NodeDemand& d : donors) out.shed.push_back({d.node, 0});
  for (const NodeDemand& r : receivers) out.absorbed.push_back({r.node, 0});
  if (donors.empty() || receivers.empty()) return out;

  // What the receivers take at a marginal level (water-filling), and what
  // the donors give in the convex part of their curves. A receiver at or
  // above the cap runs on the flat part of its curve: it takes any amount
  // at its marginal (= loaded) latency there, bounded here by all the
  // donors have.
  double donated = 0;
  for (const NodeDemand& d : donors) donated += std::max(0.0, d.bytes_per_sec);
  auto absorb_one = [&](const NodeDemand& r, double level) {
    const double cap = model.PeakBytesPerSec(r.node) * kMaxUtilisation;
    if (cap > 0 && r.bytes_per_sec >= cap) {
      return level >= model.MarginalLatencyNs(r.node, r.bytes_per_sec) ? donated
                                                                       : 0.0;
    }
    return std::max(0.0,
                    model.DemandAtMarginal(r.node, level) - r.bytes_per_sec);
  };
  auto absorb = [&](double level) {
    double a = 0;
    for (const NodeDemand& r : receivers) a += absorb_one(r, level);
    return a;
  };
  auto shed = [&](double level) {
    double s = 0;
    for (const NodeDemand& d : donors)
      s += std::max(0.0,
                    d.bytes_per_sec - model.DemandAtMarginal(d.node, level));
    return s;
  };
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (const NodeDemand& r : receivers)
    lo = std::min(lo, model.MarginalLatencyNs(r.node, r.bytes_per_sec));
  for (const NodeDemand& d : donors) {
    hi = std::max(hi, model.MarginalLatencyNs(d.node, d.bytes_per_sec,
                                              /*below_cap=*/true));
  }
  if (!(hi > lo)) return out;  // no donor is dearer than every receiver
  const double lo0 = lo;
  // The receivers' demands once they have taken `moved` (water-filled:
  // the level at which they absorb it; bisection over [lo0, top]).
  // `taken`: what each receiver takes (exactly, not as a difference of
  // the demands, so a receiver taking everything compares equal to it).
  auto receive = [&](double moved, double top, std::vector<NodeDemand>* after,
                     std::vector<NodeDemand>* taken) {
    double a = lo0, b = top;
    for (int i = 0; i < 60; ++i) {
      const double mid = a + (b - a) / 2;
      if (absorb(mid) < moved) {
        a = mid;
      } else {
        b = mid;
      }
    }
    const double total = absorb(b);
    const double scale = total > 0 ? std::min(1.0, moved / total) : 0;
    after->clear();
    taken->clear();
    for (const NodeDemand& r : receivers) {
      const double t = scale * absorb_one(r, b);
      taken->push_back({r.node, t});
      after->push_back({r.node, r.bytes_per_sec + t});
    }
  };
  auto total_of = [&](absl::Span<const NodeDemand> d,
                      absl::Span<const NodeDemand> r) {
    return TotalLatencyNsPerSec(model, d) + TotalLatencyNsPerSec(model, r);
  };

  // Candidate 0: nothing moves.
  double best = total_of(donors, receivers);

  // Candidate 1: equal marginal latencies (bisection to 1e-9 of the
  // bracket: 60 halvings; shed - absorb falls with the level).
  const double top = hi;
  for (int i = 0; i < 60; ++i) {
    const double mid = lo + (hi - lo) / 2;
    if (shed(mid) > absorb(mid)) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  {
    const double given = shed(hi);
    const double moved = std::min(given, absorb(hi));
    if (given > 0 && moved > 0) {
      const double scale = moved / given;
      std::vector<NodeDemand> d_after, r_after, cut, taken;
      for (const NodeDemand& d : donors) {
        const double s =
            scale *
            std::max(0.0, d.bytes_per_sec - model.DemandAtMarginal(d.node, hi));
        cut.push_back({d.node, s});
        d_after.push_back({d.node, d.bytes_per_sec - s});
      }
      receive(moved, top, &r_after, &taken);
      const double t = total_of(d_after, r_after);
      if (t < best) {
        best = t;
        out.latency_ns = hi;
        out.moved_bytes_per_sec = moved;
        out.shed = cut;
        out.absorbed = taken;
      }
    }
  }

  // Candidate 2: only saturated donors' excess over the cap, whose cost is
  // linear (marginal 5 L0), the dearest donor first, while the receivers'
  // marginal stays below it.
  {
    std::vector<size_t> order;
    for (size_t i = 0; i < donors.size(); ++i) {
      const double cap =
          model.PeakBytesPerSec(donors[i].node) * kMaxUtilisation;
      if (donors[i].bytes_per_sec > cap && cap > 0) order.push_back(i);
    }
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return model.IdleLatencyNs(donors[a].node) >
             model.IdleLatencyNs(donors[b].node);
    });
    double moved = 0;
    std::vector<NodeDemand> cut = out.shed,
                            d_after(donors.begin(), donors.end());
    for (NodeDemand& c : cut) c.bytes_per_sec = 0;
    for (size_t i : order) {
      const double flat = model.MarginalLatencyNs(
          donors[i].node, donors[i].bytes_per_sec);  // 5 L0
      const double excess =
          donors[i].bytes_per_sec -
          model.PeakBytesPerSec(donors[i].node) * kMaxUtilisation;
      const double take = std::min(excess, absorb(flat) - moved);
      if (!(take > 0)) continue;
      cut[i].bytes_per_sec = take;
      d_after[i].bytes_per_sec -= take;
      moved += take;
    }
    if (moved > 0) {
      std::vector<NodeDemand> r_after, taken;
      receive(moved, top, &r_after, &taken);
      const double t = total_of(d_after, r_after);
      if (t < best) {
        best = t;
        out.latency_ns = 0;
        out.moved_bytes_per_sec = moved;
        out.shed = cut;
        out.absorbed = taken;
      }
    }
  }
  return out;
}

double LoadedLatencyModel::RemotePenaltyNs(int cpu_node, int mem_node) const {
  if (cpu_node < 0) return 0;
  const int c = IndexOf(cpu_node), m = IndexOf(mem_node);
  if (c < 0 || m < 0) return 0;
  const int h = IndexOf(nodes_[m].home_node);
  if (h < 0) return 0;
  const size_t k = nodes_.size();
  const int from_cpu = distance_[c * k + m];
  const int from_home = distance_[h * k + m];
  if (from_cpu <= 0 || from_home <= 0 || from_cpu <= from_home) return 0;
  return nodes_[m].idle_latency_ns *
         (static_cast<double>(from_cpu) / from_home - 1.0);
}

}  // namespace hotpage
