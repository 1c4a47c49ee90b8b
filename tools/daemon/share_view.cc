#include "tools/daemon/share_view.h"

#include <algorithm>

namespace hotpage {

FairShareView::FairShareView(MemoryView* inner, const Topology* topology,
                             const PlacementConfig* config)
    : inner_(inner),
      topology_(topology),
      config_(config),
      fast_nodes_(topology->FastNodes()) {
  for (int n : fast_nodes_) {
    if (const NodeInfo* info = topology->FindNode(n)) {
      fast_capacity_ += info->memory_bytes;
    }
  }
}

std::vector<NumaMapsRange> FairShareView::Ranges() {
  const int64_t moved = fast_moved_ ? fast_moved_() : 0;
  std::vector<NumaMapsRange> ranges = inner_->Ranges();
  std::fill(mine_.begin(), mine_.end(), 0);
  uint64_t fast = 0;
  for (const NumaMapsRange& r : ranges) {
    for (const auto& [node, pages] : r.pages_on_node) {
      if (node < 0 || node >= 4096) continue;
      if (static_cast<size_t>(node) >= mine_.size()) mine_.resize(node + 1);
      const uint64_t bytes = pages * r.page_size;
      mine_[node] += bytes;
      if (std::find(fast_nodes_.begin(), fast_nodes_.end(), node) !=
          fast_nodes_.end()) {
        fast += bytes;
      }
    }
  }
  MutexLock l(&mu_);
  fast_read_ = fast;
  moved_at_read_ = moved;
  return ranges;
}

FairShareView::FastNow FairShareView::Fast() const {
  FastNow f;
  int64_t at = 0;
  {
    MutexLock l(&mu_);
    f.read_bytes = fast_read_;
    at = moved_at_read_;
  }
  // After the copy: the counters only grow, so a reading taken meanwhile
  // leaves this pair consistent (the older reading, the moves since it).
  if (fast_moved_) f.moved_since = fast_moved_() - at;
  return f;
}

std::vector<NodeFree> FairShareView::Free() {
  std::vector<NodeFree> free = inner_->Free();
  const uint64_t target = target_.load(std::memory_order_relaxed);
  if (target == kNoTarget || fast_capacity_ == 0) return free;
  for (NodeFree& f : free) {
    if (std::find(fast_nodes_.begin(), fast_nodes_.end(), f.node) ==
        fast_nodes_.end()) {
      continue;
    }
    const NodeInfo* info = topology_->FindNode(f.node);
    if (info == nullptr) continue;
    // This node's part of the target, in proportion to its memory.
    const uint64_t node_target = static_cast<uint64_t>(
        static_cast<long double>(target) * info->memory_bytes / fast_capacity_);
    const uint64_t mine =
        static_cast<size_t>(f.node) < mine_.size() ? mine_[f.node] : 0;
    const NodeWatermarks wm = WatermarksFor(*config_, *topology_, f.node);
    const long double allowed = static_cast<long double>(wm.high_bytes) +
                                static_cast<long double>(node_target) -
                                static_cast<long double>(mine);
    const uint64_t cap = allowed <= 0 ? 0 : static_cast<uint64_t>(allowed);
    f.free_bytes = std::min(f.free_bytes, cap);
    // Within its share the process is not the one to make room: with the
    // node below its low watermark, its engine would demote its own
    // coldest pages (rule 1), the hot set it was given room for, while the
    // room is the share of those above their targets, whose views report
    // the node short. So no less than the low watermark here (never room
    // to promote into: that needs the high one).
    if (mine <= node_target)
      f.free_bytes = std::max(f.free_bytes, wm.low_bytes);
  }
  return free;
}

}  // namespace hotpage
