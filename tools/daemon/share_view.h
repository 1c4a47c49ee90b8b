// FairShareView: how the daemon holds one process to its share of the fast
// tier without touching the engine.
//
// The engine (policy/engine.h) promotes only into a node with room above
// its high watermark and demotes from a node below its low watermark until
// its projected free memory reaches the high watermark (policy/placement.h,
// rule 1). This view wraps the process's real MemoryView and reports, for
// each fast node, no more free memory than the process's target allows:
//
//   reported_free(n) = min(real_free(n), max(0, high(n) + target(n) - mine(n)))
//
// where mine(n) is the process's bytes on n (from the ranges the same
// round got, Ranges() before Free(): numa_maps as the LiveMemoryView last
// read it, with its migrator's moves since counted in, within the bounds
// of tools/live_memory_view.h) and target(n) the process's
// fast-tier target (SetTarget, from FairShares) split over the fast nodes in
// proportion to their memory. So the process promotes while it is under its
// target, stops at it, and once it is more than (high - low) above it (2%
// of the node by default: the kernel's own kind of hysteresis) demotes its
// coldest pages back down to it. Its pages are the only ones its engine
// moves, so a process never demotes another's pages: room for one comes
// from the others' targets shrinking. A process at or under its target
// sees at least the node's low watermark free: when the node is short
// (below low), the watermark demotion (rule 1) is for those above their
// targets, not for the pages a process within its share was given room
// for. Slow nodes are reported as they are.
//
// Stopping: with SetStopFlag, the view says Interrupted() once the flag is
// set (the member is being stopped), and QueryNodes answers -EINTR without
// asking the kernel, so the engine's round in progress ends at its next
// query call (at most EngineOptions::placement_query_batch_pages pages)
// with no decision (policy/engine.h, MemoryView::Interrupted) instead of
// querying every tracked page first.
//
// What the process holds now (Fast()): the reading of the last Ranges()
// plus what its migrator moved onto the fast tier since, less what it
// moved off (SetFastMoved). The daemon compares it with the fast tier's
// free memory read now, which the moves done since the reading have
// already changed: with the reading alone, each promotion done since it
// was missing from both (daemon_fair_vm_test: h's reading said 54 MiB
// while it held 77, the free room was already gone, so the daemon shared
// out 23 MiB less than there was and cut h's target below what it held;
// its engine demoted 10 MiB of its hot set, and it swung around the
// test's 90% line). Moves still queued are in neither figure, so they
// need no correction: they change both when they are done.
//
// Threading: SetTarget() and Fast() are called from the daemon's thread,
// everything else from the process's loop thread; the target is an
// atomic (relaxed: a round may see the previous target, which is as good
// as one round earlier); the reading is under a lock.

#ifndef HOTPAGE_TOOLS_DAEMON_SHARE_VIEW_H_
#define HOTPAGE_TOOLS_DAEMON_SHARE_VIEW_H_

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "policy/engine.h"
#include "policy/placement.h"
#include "policy/topology.h"
#include "tools/base/mutex.h"

namespace hotpage {

class FairShareView : public MemoryView {
 public:
  static constexpr uint64_t kNoTarget = UINT64_MAX;

  // `inner`, `topology` and `config` must outlive the view.
  FairShareView(MemoryView* inner, const Topology* topology,
                const PlacementConfig* config);

  void SetTarget(uint64_t fast_bytes) {
    target_.store(fast_bytes, std::memory_order_relaxed);
  }
  uint64_t target() const { return target_.load(std::memory_order_relaxed); }
  // Optional, before the loop runs: the bytes the process's migrator has
  // moved onto the fast tier so far less those it moved off it
  // (cumulative; Migrator::MovedBytesOf over the fast nodes). Called at
  // each Ranges() and by Fast(), from either thread.
  void SetFastMoved(std::function<int64_t()> net_moved_onto_fast) {
    fast_moved_ = std::move(net_moved_onto_fast);
  }
  // The process's bytes on the fast tier at the last Ranges() and the
  // moves since.
  struct FastNow {
    uint64_t read_bytes = 0;  // at the last Ranges()
    // Net bytes its migrator moved onto the fast tier since (negative:
    // off it); 0 without SetFastMoved.
    int64_t moved_since = 0;
  };
  FastNow Fast() const ABSL_LOCKS_EXCLUDED(mu_);

  // Before the loop runs (the flag must outlive the view); null: none.
  void SetStopFlag(const std::atomic<bool>* stop) { stop_ = stop; }

  int QueryNodes(absl::Span<const uint64_t> pages,
                 absl::Span<int> status) override {
    if (Interrupted()) return -EINTR;
    return inner_->QueryNodes(pages, status);
  }
  bool Interrupted() override {
    // Relaxed: the flag carries no data.
    return stop_ != nullptr && stop_->load(std::memory_order_relaxed);
  }
  // A target is set: the reported shortage is this process's share to give
  // back (MemoryView::HoldsToAShare).
  bool HoldsToAShare() override { return target() != kNoTarget; }
  std::vector<NumaMapsRange> Ranges() override;
  std::vector<NodeFree> Free() override;
  std::vector<NodeQueued> QueuedMoves() override {
    return inner_->QueuedMoves();
  }
  std::vector<int> BackedOffNodes() override {
    return inner_->BackedOffNodes();
  }
  bool IsHeld(uint64_t vaddr) override { return inner_->IsHeld(vaddr); }
  size_t ReleaseHolds() override { return inner_->ReleaseHolds(); }
  std::vector<uint64_t> HugeChunks() override { return inner_->HugeChunks(); }

 private:
  MemoryView* const inner_;
  const Topology* const topology_;
  const PlacementConfig* const config_;
  std::vector<int> fast_nodes_;
  uint64_t fast_capacity_ = 0;
  std::vector<uint64_t> mine_;  // bytes per node id, from the last Ranges()
  std::atomic<uint64_t> target_{kNoTarget};
  std::function<int64_t()> fast_moved_;
  mutable Mutex mu_;
  uint64_t fast_read_ ABSL_GUARDED_BY(mu_) = 0;
  // fast_moved_() just before that reading: a move done while numa_maps
  // was read may count twice (at most one migrator batch, 4 MiB), never
  // be missed, so the figure errs on the side of what the process holds.
  int64_t moved_at_read_ ABSL_GUARDED_BY(mu_) = 0;
  const std::atomic<bool>* stop_ = nullptr;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_DAEMON_SHARE_VIEW_H_
