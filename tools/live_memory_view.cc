#include "tools/live_memory_view.h"

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "tools/base/kernel/huge_chunks.h"
#include "tools/base/kernel/node_meminfo.h"
#include "tools/base/kernel/numa_maps.h"

namespace hotpage {

std::vector<NodeFree> ReadNodeFree(const KernelFs& fs,
                                   const Topology& topology) {
  std::vector<NodeFree> out;
  for (const NodeInfo& n : topology.nodes) {
    if (std::optional<uint64_t> free = ReadNodeFreeBytes(fs, n.id))
      out.push_back({n.id, *free});
  }
  return out;
}

std::vector<uint64_t> LiveMemoryView::HugeChunks() {
  absl::StatusOr<std::vector<uint64_t>> c =
      FindHugeChunks(*fs_, pid_, kMaxHugeChunks);
  return c.ok() ? std::move(*c) : std::vector<uint64_t>{};
}

int LiveMemoryView::QueryNodes(absl::Span<const uint64_t> pages,
                               absl::Span<int> status) {
  const long rc = mover_->Query(pid_, pages, status);
  return rc < 0 ? static_cast<int>(rc) : 0;
}

std::vector<NumaMapsRange> LiveMemoryView::Ranges() {
  std::vector<NumaMapsRange> ranges;
  absl::StatusOr<std::string> nm =
      fs_->ReadFile(absl::StrCat("/proc/", pid_, "/numa_maps"));
  if (!nm.ok()) return ranges;
  absl::StatusOr<std::vector<NumaMapsRange>> r = ParseNumaMaps(*nm);
  if (!r.ok()) return ranges;
  ranges = std::move(*r);
  if (absl::StatusOr<std::string> mp =
          fs_->ReadFile(absl::StrCat("/proc/", pid_, "/maps"));
      mp.ok()) {
    if (absl::StatusOr<std::vector<MapsRange>> m = ParseProcMaps(*mp); m.ok())
      JoinWithMaps(ranges, *m);
  }
  return ranges;
}

std::vector<NodeQueued> LiveMemoryView::QueuedMoves() {
  return migrator_ == nullptr ? std::vector<NodeQueued>{}
                              : hotpage::QueuedMoves(*migrator_);
}

std::vector<int> LiveMemoryView::BackedOffNodes() {
  return migrator_ == nullptr ? std::vector<int>{}
                              : migrator_->BackedOffNodes();
}

bool LiveMemoryView::IsHeld(uint64_t vaddr) {
  return migrator_ != nullptr && migrator_->IsHeld(vaddr);
}

size_t LiveMemoryView::ReleaseHolds() {
  return migrator_ == nullptr ? 0 : migrator_->ReleaseHolds();
}

}  // namespace hotpage
