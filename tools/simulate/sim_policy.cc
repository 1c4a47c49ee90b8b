#include "tools/simulate/sim_policy.h"

#include <algorithm>

namespace hotpage {

void PolicyTally::Add(const PolicyTally& o) {
  samples += o.samples;
  fast_samples += o.fast_samples;
  latency_ns_sum += o.latency_ns_sum;
  idle_latency_ns_sum += o.idle_latency_ns_sum;
  promoted_pages += o.promoted_pages;
  demoted_pages += o.demoted_pages;
  bytes_migrated += o.bytes_migrated;
  pingpongs += o.pingpongs;
  migration_ns += o.migration_ns;
  oracle_moves += o.oracle_moves;
}

MemoryPolicy::MemoryPolicy(std::string name,
                           std::unique_ptr<SimulatedMemory> memory)
    : SimPolicy(std::move(name)),
      memory_(std::move(memory)),
      latency_(LoadedLatencyModel::FromTopology(memory_->topology())) {
  int max_id = 0;
  for (int n : memory_->nodes()) {
    slowest_latency_ns_ =
        std::max(slowest_latency_ns_, memory_->read_latency_ns(n));
    max_id = std::max(max_id, n);
  }
  load_.resize(max_id + 1);
}

void MemoryPolicy::ObserverChanged() {
  if (observer_ == nullptr) {
    memory_->set_move_listener(nullptr);
    return;
  }
  SimObserver* o = observer_;
  const size_t index = index_;
  memory_->set_move_listener(
      [o, index](uint64_t t, uint64_t vaddr, int from, int to) {
        o->OnMove(index, t, vaddr, from, to);
      });
}

void MemoryPolicy::OnSample(const Sample& s) {
  const int node = memory_->Touch(s.vaddr, s.cpu, s.time_ns);
  ++current_.samples;
  if (node < 0) {
    current_.latency_ns_sum += slowest_latency_ns_;
    current_.idle_latency_ns_sum += slowest_latency_ns_;
    return;
  }
  const bool fast = memory_->is_fast(node);
  current_.fast_samples += fast ? 1 : 0;
  // The loaded part is added at EndInterval; a period of 0 (unknown)
  // counts as one access.
  NodeLoad& l = load_[node];
  ++l.samples;
  l.accesses += static_cast<double>(std::max<uint64_t>(s.period, 1));
  const double penalty =
      latency_.RemotePenaltyNs(memory_->NodeOfCpu(s.cpu), node);
  penalty_ns_sum_ += penalty;
  current_.idle_latency_ns_sum += memory_->read_latency_ns(node) + penalty;
  if (observer_ != nullptr)
    observer_->OnAccess(index_, s.time_ns, s.vaddr, node, fast);
  Access(s, node);
}

PolicyTally MemoryPolicy::EndInterval(uint64_t end_ns) {
  const SimMemoryCounters& c = memory_->counters();
  PolicyTally t = current_;
  t.latency_ns_sum += penalty_ns_sum_;
  for (int n : memory_->nodes()) {
    NodeLoad& l = load_[n];
    if (l.samples == 0) continue;
    // The idle latency as everywhere in the simulator (the memory's: HMAT
    // or derived), the peak as the model has it (HMAT or its default).
    const double u = Utilisation(DemandBytesPerSec(l.accesses, interval_ns_),
                                 latency_.PeakBytesPerSec(n));
    t.latency_ns_sum += static_cast<double>(l.samples) *
                        LoadedLatencyNs(memory_->read_latency_ns(n), u);
    l = NodeLoad{};
  }
  penalty_ns_sum_ = 0;
  t.promoted_pages = c.promoted_pages - last_.promoted_pages;
  t.demoted_pages = c.demoted_pages - last_.demoted_pages;
  t.bytes_migrated = c.bytes_migrated - last_.bytes_migrated;
  t.pingpongs = c.pingpongs - last_.pingpongs;
  t.migration_ns = c.migration_ns - last_.migration_ns;
  last_ = c;
  current_ = PolicyTally{};
  return t;
}

}  // namespace hotpage
