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
#include "migrator/page_mover.h"
#include "policy/engine.h"
#include "policy/topology.h"
#include "tools/base/kernel_fs.h"

namespace hotpage {

// Free bytes per node now, from /sys/devices/system/node/nodeN/meminfo
// (nodes whose file is missing or malformed are left out: unknown).
std::vector<NodeFree> ReadNodeFree(const KernelFs& fs, const Topology& topology);

// The 2 MiB-aligned chunks of `pid`'s memory backed by transparent huge
// pages, ascending, at most `max_chunks`. From /proc/PID/smaps: a VMA whose
// anonymous memory is all AnonHugePages has every aligned chunk inside it
// counted; a VMA only partly THP-backed has each aligned chunk checked in
// /proc/PID/pagemap (PFN of its first page; needs CAP_SYS_ADMIN, else the
// PFN reads 0 and the chunk is skipped) and /proc/kpageflags (KPF_THP, bit
// 22). Unreadable smaps is an error; unreadable pagemap/kpageflags entries
// skip their chunk.
absl::StatusOr<std::vector<uint64_t>> FindHugeChunks(const KernelFs& fs, pid_t pid,
                                                     size_t max_chunks);

class LiveMemoryView : public MemoryView {
 public:
  // Everything must outlive the view; `migrator` may be null (dry run: no
  // back-off, no holds).
  LiveMemoryView(pid_t pid, PageMover* mover, const KernelFs* fs,
                 const Topology* topology, const Migrator* migrator)
      : pid_(pid), mover_(mover), fs_(fs), topology_(topology), migrator_(migrator) {}

  int QueryNodes(absl::Span<const uint64_t> pages, absl::Span<int> status) override;
  // Unreadable or malformed numa_maps: no ranges (default policy); a
  // malformed maps file only loses the join (anonymous/file names).
  std::vector<NumaMapsRange> Ranges() override;
  std::vector<NodeFree> Free() override { return ReadNodeFree(*fs_, *topology_); }
  std::vector<int> BackedOffNodes() override;
  bool IsHeld(uint64_t vaddr) override;
  // FindHugeChunks (at most kMaxHugeChunks = 128 GiB of THP); errors: none.
  std::vector<uint64_t> HugeChunks() override;
  static constexpr size_t kMaxHugeChunks = 65536;

 private:
  const pid_t pid_;
  PageMover* const mover_;
  const KernelFs* const fs_;
  const Topology* const topology_;
  const Migrator* const migrator_;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_LIVE_MEMORY_VIEW_H_
