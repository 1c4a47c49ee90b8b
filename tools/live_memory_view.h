// The policy engine's view of a live process (policy/engine.h MemoryView):
// page nodes from move_pages(2) queries, per-range policies from
// /proc/PID/numa_maps joined with /proc/PID/maps, free memory from each
// node's meminfo, and the migrator's back-off and ping-pong holds.
// `hotpage attach` uses it; tests drive it with a FakePageMover and a fake
// tree (tools/engine_equivalence_test.cc).

#ifndef HOTPAGE_TOOLS_LIVE_MEMORY_VIEW_H_
#define HOTPAGE_TOOLS_LIVE_MEMORY_VIEW_H_

#include <sys/types.h>

#include <vector>

#include "absl/status/statusor.h"
#include "migrator/migrator.h"
#include "migrator/move_requests.h"
#include "migrator/page_mover.h"
#include "policy/engine.h"
#include "policy/topology.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {

// Free bytes per node of `topology` now, from ReadNodeFreeBytes
// (tools/base/kernel/node_meminfo.h; nodes whose meminfo is missing or
// malformed are left out: unknown).
std::vector<NodeFree> ReadNodeFree(const KernelFs& fs,
                                   const Topology& topology);

class LiveMemoryView : public MemoryView {
 public:
  // Everything must outlive the view; `migrator` may be null (dry run: no
  // back-off, no holds).
  LiveMemoryView(pid_t pid, PageMover* mover, const KernelFs* fs,
                 const Topology* topology, Migrator* migrator)
      : pid_(pid),
        mover_(mover),
        fs_(fs),
        topology_(topology),
        migrator_(migrator) {}

  int QueryNodes(absl::Span<const uint64_t> pages,
                 absl::Span<int> status) override;
  // Unreadable or malformed numa_maps: no ranges (default policy); a
  // malformed maps file only loses the join (anonymous/file names).
  std::vector<NumaMapsRange> Ranges() override;
  std::vector<NodeFree> Free() override {
    return ReadNodeFree(*fs_, *topology_);
  }
  // The migrator's queued moves (migrator/move_requests.h); none without
  // one.
  std::vector<NodeQueued> QueuedMoves() override;
  std::vector<int> BackedOffNodes() override;
  bool IsHeld(uint64_t vaddr) override;
  size_t ReleaseHolds() override;
  // FindHugeChunks (tools/base/kernel/huge_chunks.h), at most
  // kMaxHugeChunks = 128 GiB of THP; errors: none.
  std::vector<uint64_t> HugeChunks() override;
  static constexpr size_t kMaxHugeChunks = 65536;

 private:
  const pid_t pid_;
  PageMover* const mover_;
  const KernelFs* const fs_;
  const Topology* const topology_;
  Migrator* const migrator_;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_LIVE_MEMORY_VIEW_H_
