#include "tools/simulate/simulated_memory.h"

#include <algorithm>
#include <cerrno>
#include <climits>

#include "absl/strings/str_cat.h"

namespace hotpage {
namespace {

// Without HMAT: DRAM-like numbers scaled by SLIT distance (10 = local).
constexpr double kDefaultLatencyNs = 80;
constexpr double kDefaultBandwidthMbps = 20480;
constexpr double kMiB = 1024.0 * 1024.0;

}  // namespace

absl::StatusOr<std::unique_ptr<SimulatedMemory>> SimulatedMemory::Create(
    const Topology& topology, const SimulatedMemoryOptions& options) {
  bool any = false;
  for (const SimNodeCapacity& c : options.capacities) {
    if (topology.FindNode(c.node) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "simulated memory: node ", c.node, " is not in the topology"));
    }
    if (c.node >= INT16_MAX) {
      return absl::InvalidArgumentError(
          absl::StrCat("simulated memory: node id ", c.node, " too large"));
    }
    any |= c.pages > 0;
  }
  if (!any)
    return absl::InvalidArgumentError(
        "simulated memory: no node has any capacity");
  return std::unique_ptr<SimulatedMemory>(
      new SimulatedMemory(topology, options));
}

SimulatedMemory::SimulatedMemory(const Topology& topology,
                                 const SimulatedMemoryOptions& options)
    : topology_(topology), options_(options) {
  int max_id = 0;
  for (const NodeInfo& n : topology.nodes) max_id = std::max(max_id, n.id);
  node_state_.resize(max_id + 1);
  for (const SimNodeCapacity& c : options.capacities)
    node_state_[c.node].capacity += c.pages;
  for (NodeState& n : node_state_) {
    n.reserve = static_cast<uint64_t>(
        static_cast<double>(n.capacity) *
        std::max(options.first_touch_reserve_fraction, 0.0));
  }
  const std::vector<int> fast = topology.FastNodes();
  for (const NodeInfo& n : topology.nodes) {
    NodeState& s = node_state_[n.id];
    s.tier = n.tier.value_or(-1);
    // Distance to the nearest CPU node: the fallback's scale.
    int dist = 10;
    if (!n.has_cpus()) {
      dist = INT_MAX;
      for (const NodeInfo& c : topology.nodes) {
        if (!c.has_cpus()) continue;
        if (std::optional<int> d = topology.Distance(c.id, n.id))
          dist = std::min(dist, *d);
      }
      if (dist == INT_MAX || dist <= 0) dist = 20;
    }
    s.latency_ns = n.hmat.read_latency_ns
                       ? static_cast<double>(*n.hmat.read_latency_ns)
                       : kDefaultLatencyNs * dist / 10.0;
    s.bandwidth = (n.hmat.read_bandwidth_mbps
                       ? static_cast<double>(*n.hmat.read_bandwidth_mbps)
                       : kDefaultBandwidthMbps * 10.0 / dist) *
                  kMiB;
    if (s.capacity > 0) nodes_.push_back(n.id);
  }
  for (int n : fast) {
    if (Find(n) != nullptr && Find(n)->capacity > 0) fast_nodes_.push_back(n);
  }
  // First-touch fallback: from each node, every node with capacity by
  // distance, ties to the lower id (the zonelist order).
  for (const NodeInfo& from : topology.nodes) {
    std::vector<int> order = nodes_;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      const int da =
          a == from.id ? 0 : topology.Distance(from.id, a).value_or(255);
      const int db =
          b == from.id ? 0 : topology.Distance(from.id, b).value_or(255);
      return da < db;
    });
    node_state_[from.id].fallback = std::move(order);
    // Demotion: the next slower tier that has capacity, nearest first.
    std::vector<int> demote;
    int next_tier = INT_MAX;
    for (int n : nodes_) {
      const int t = node_state_[n].tier;
      if (t > node_state_[from.id].tier && t >= 0)
        next_tier = std::min(next_tier, t);
    }
    for (int n : nodes_) {
      if (node_state_[n].tier == next_tier) demote.push_back(n);
    }
    std::stable_sort(demote.begin(), demote.end(), [&](int a, int b) {
      return topology.Distance(from.id, a).value_or(255) <
             topology.Distance(from.id, b).value_or(255);
    });
    node_state_[from.id].demotion = std::move(demote);
  }
  for (const NodeInfo& n : topology.nodes) {
    for (int c : n.cpus) {
      if (c < 0) continue;
      if (static_cast<size_t>(c) >= node_of_cpu_.size())
        node_of_cpu_.resize(c + 1, -1);
      node_of_cpu_[c] = static_cast<int16_t>(n.id);
    }
  }
  pages_.reserve(options.expected_pages);
}

const SimulatedMemory::NodeState* SimulatedMemory::Find(int node) const {
  if (node < 0 || static_cast<size_t>(node) >= node_state_.size())
    return nullptr;
  return &node_state_[node];
}

SimulatedMemory::NodeState* SimulatedMemory::Find(int node) {
  if (node < 0 || static_cast<size_t>(node) >= node_state_.size())
    return nullptr;
  return &node_state_[node];
}

int SimulatedMemory::NodeOfCpu(uint32_t cpu) const {
  return cpu < node_of_cpu_.size() ? node_of_cpu_[cpu] : -1;
}

int SimulatedMemory::Touch(uint64_t vaddr, uint32_t cpu, uint64_t now_ns) {
  const uint64_t page_number = vaddr / kSimPageBytes;
  auto [it, inserted] = pages_.try_emplace(page_number);
  if (!inserted && it->second.node >= 0) {
    if (options_.reclaim_demotes) {
      MarkRecent(it->second, page_number, it->second.node, it->second.node);
    }
    return it->second.node;
  }
  int preferred = options_.first_touch_node >= 0 ? options_.first_touch_node
                                                 : NodeOfCpu(cpu);
  const NodeState* p = Find(preferred);
  if (p == nullptr || p->capacity == 0) {
    preferred = fast_nodes_.empty() ? nodes_.front() : fast_nodes_.front();
  }
  for (int n : node_state_[preferred].fallback) {
    NodeState& s = node_state_[n];
    if (s.used + s.reserve >= s.capacity) continue;
    ++s.used;
    it->second.node = static_cast<int16_t>(n);
    if (options_.reclaim_demotes) MarkRecent(it->second, page_number, -1, n);
    ++counters_.touched_pages;
    if (n != preferred) ++counters_.spilled_pages;
    return n;
  }
  pages_.erase(it);
  ++counters_.unplaced_samples;
  return -ENOMEM;
}

int SimulatedMemory::NodeOf(uint64_t vaddr) const {
  auto it = pages_.find(vaddr / kSimPageBytes);
  return it == pages_.end() ? -ENOENT : it->second.node;
}

SimulatedMemory::MoveResult SimulatedMemory::Move(uint64_t vaddr, int to_node,
                                                  uint64_t now_ns) {
  const uint64_t page_number = vaddr / kSimPageBytes;
  auto it = pages_.find(page_number);
  if (it == pages_.end()) return {-ENOENT, 0};
  PageState& page = it->second;  // reclaim inserts no page: stays valid
  if (page.node == to_node) return {to_node, 0};
  NodeState* to = Find(to_node);
  if (to == nullptr || to->capacity == 0) return {-EINVAL, 0};
  const bool reclaim = options_.reclaim_demotes && !reclaiming_;
  if (reclaim && to->used >= to->capacity) Reclaim(to_node, now_ns);
  if (to->used >= to->capacity) {
    ++counters_.failed_enomem;
    return {-ENOMEM, 0};
  }
  const MoveResult r = MoveNow(page, page_number, to_node, now_ns);
  if (reclaim && to->capacity - to->used < std::max<uint64_t>(to->reserve, 1))
    Reclaim(to_node, now_ns);
  return r;
}

void SimulatedMemory::MarkRecent(PageState& page, uint64_t page_number,
                                 int from, int node) {
  if (page.lru == IndexList::kNil) {
    page.lru = static_cast<uint32_t>(lru_pages_.size());
    lru_pages_.push_back({page_number});
  } else if (from >= 0) {
    node_state_[from].lru.Unlink(lru_pages_, page.lru);
  }
  node_state_[node].lru.PushBack(lru_pages_, page.lru);
}

void SimulatedMemory::Reclaim(int node, uint64_t now_ns) {
  NodeState& n = node_state_[node];
  if (n.demotion.empty()) return;
  const uint64_t promo = 3 * std::max<uint64_t>(n.reserve, 1);
  ++counters_.reclaim_runs;
  reclaiming_ = true;
  while (n.capacity - n.used < promo && n.lru.head != IndexList::kNil) {
    const uint64_t victim = lru_pages_[n.lru.head].page;
    PageState& p = pages_.find(victim)->second;
    bool moved = false;
    for (int t : n.demotion) {
      if (node_state_[t].used >= node_state_[t].capacity) continue;
      MoveNow(p, victim, t, now_ns);
      moved = true;
      break;
    }
    if (!moved) break;  // nowhere to demote (the kernel would swap)
    ++counters_.reclaim_demotions;
  }
  reclaiming_ = false;
}

SimulatedMemory::MoveResult SimulatedMemory::MoveNow(PageState& page,
                                                     uint64_t page_number,
                                                     int to_node,
                                                     uint64_t now_ns) {
  NodeState* to = &node_state_[to_node];
  NodeState& from = node_state_[page.node];
  const int from_node = page.node;
  --from.used;
  ++to->used;
  page.node = static_cast<int16_t>(to_node);
  const uint64_t cost = MoveCostNs(from_node, to_node);
  counters_.migration_ns += cost;
  counters_.bytes_migrated += kSimPageBytes;
  if (to->tier < from.tier) {
    ++counters_.promoted_pages;
  } else if (to->tier > from.tier) {
    ++counters_.demoted_pages;
  } else {
    ++counters_.lateral_pages;
  }
  if (to->tier != from.tier) {
    if (page.left_tier == to->tier &&
        now_ns - page.left_ns <= options_.pingpong_window_ns) {
      ++counters_.pingpongs;
    }
    page.left_tier = static_cast<int16_t>(from.tier);
    page.left_ns = now_ns;
  }
  if (options_.reclaim_demotes)
    MarkRecent(page, page_number, from_node, to_node);
  if (listener_)
    listener_(now_ns, page_number * kSimPageBytes, from_node, to_node);
  return {to_node, cost};
}

uint64_t SimulatedMemory::MoveCostNs(int from, int to) const {
  const NodeState* a = Find(from);
  const NodeState* b = Find(to);
  if (a == nullptr || b == nullptr) return 0;
  const double bw = std::min(a->bandwidth, b->bandwidth);
  return options_.cost.per_page_ns +
         static_cast<uint64_t>(kSimPageBytes * 1e9 / bw + 0.5);
}

uint64_t SimulatedMemory::capacity_pages(int node) const {
  const NodeState* s = Find(node);
  return s ? s->capacity : 0;
}

uint64_t SimulatedMemory::used_pages(int node) const {
  const NodeState* s = Find(node);
  return s ? s->used : 0;
}

uint64_t SimulatedMemory::free_pages(int node) const {
  const NodeState* s = Find(node);
  return s ? s->capacity - s->used : 0;
}

bool SimulatedMemory::is_fast(int node) const {
  const NodeState* s = Find(node);
  return s != nullptr && s->tier == 0;
}

int SimulatedMemory::tier(int node) const {
  const NodeState* s = Find(node);
  return s ? s->tier : -1;
}

double SimulatedMemory::read_latency_ns(int node) const {
  const NodeState* s = Find(node);
  return s ? s->latency_ns : 0;
}

double SimulatedMemory::bandwidth_bytes_per_sec(int node) const {
  const NodeState* s = Find(node);
  return s ? s->bandwidth : 0;
}

const std::vector<int>& SimulatedMemory::DemotionTargets(int node) const {
  static const std::vector<int> kNone;
  const NodeState* s = Find(node);
  return s ? s->demotion : kNone;
}

std::vector<std::pair<uint64_t, int>> SimulatedMemory::Snapshot() const {
  std::vector<std::pair<uint64_t, int>> out;
  out.reserve(pages_.size());
  for (const auto& [page, st] : pages_)
    out.emplace_back(page * kSimPageBytes, st.node);
  std::sort(out.begin(), out.end());
  return out;
}

int SimulatedMemory::QueryNodes(absl::Span<const uint64_t> pages,
                                absl::Span<int> status) {
  for (size_t i = 0; i < pages.size() && i < status.size(); ++i)
    status[i] = NodeOf(pages[i]);
  return 0;
}

std::vector<NumaMapsRange> SimulatedMemory::Ranges() {
  std::vector<NumaMapsRange> out;
  if (!options_.report_ranges || pages_.empty()) return out;
  if (sorted_pages_.size() != pages_.size()) {
    sorted_pages_.clear();
    for (const auto& [page, state] : pages_) sorted_pages_.push_back(page);
    std::sort(sorted_pages_.begin(), sorted_pages_.end());
  }
  constexpr uint64_t kGapPages = 512;  // 2 MiB: a new range
  std::vector<uint64_t> on_node;
  auto close = [&](uint64_t end_page) {
    NumaMapsRange& r = out.back();
    r.end = end_page * kSimPageBytes;
    for (size_t n = 0; n < on_node.size(); ++n) {
      if (on_node[n] > 0)
        r.pages_on_node.push_back({static_cast<int>(n), on_node[n]});
    }
    on_node.clear();
  };
  uint64_t last = 0;
  for (uint64_t page : sorted_pages_) {
    if (out.empty() || page - last >= kGapPages) {
      if (!out.empty()) close(last + 1);
      NumaMapsRange r;
      r.start = page * kSimPageBytes;
      r.anon = true;
      out.push_back(std::move(r));
    }
    const int node = pages_.at(page).node;
    if (node >= 0) {
      if (on_node.size() <= static_cast<size_t>(node)) on_node.resize(node + 1);
      ++on_node[node];
    }
    last = page;
  }
  close(last + 1);
  return out;
}

std::vector<NodeFree> SimulatedMemory::Free() {
  std::vector<NodeFree> out;
  for (int n : nodes_) out.push_back({n, free_pages(n) * kSimPageBytes});
  return out;
}

std::vector<NodeQueued> SimulatedMemory::QueuedMoves() {
  return gate_ == nullptr ? std::vector<NodeQueued>{} : gate_->QueuedMoves();
}

std::vector<int> SimulatedMemory::BackedOffNodes() {
  return gate_ == nullptr ? std::vector<int>{} : gate_->BackedOffNodes(now_ns_);
}

bool SimulatedMemory::IsHeld(uint64_t vaddr) {
  return gate_ != nullptr && gate_->IsHeld(vaddr, now_ns_);
}

size_t SimulatedMemory::ReleaseHolds() {
  return gate_ == nullptr ? 0 : gate_->ReleaseHolds(now_ns_);
}

}  // namespace hotpage
