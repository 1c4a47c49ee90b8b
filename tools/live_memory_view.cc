#include "tools/live_memory_view.h"

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "policy/numa_maps.h"
#include "tools/base/parse.h"

namespace hotpage {

std::vector<NodeFree> ReadNodeFree(const KernelFs& fs, const Topology& topology) {
  std::vector<NodeFree> out;
  for (const NodeInfo& n : topology.nodes) {
    absl::StatusOr<std::string> m =
        fs.ReadFile(absl::StrCat("/sys/devices/system/node/node", n.id, "/meminfo"));
    if (!m.ok()) continue;
    if (std::optional<uint64_t> free = ParseNodeMeminfo(*m, "MemFree")) out.push_back({n.id, *free});
  }
  return out;
}

int LiveMemoryView::QueryNodes(absl::Span<const uint64_t> pages, absl::Span<int> status) {
  const long rc = mover_->Query(pid_, pages, status);
  return rc < 0 ? static_cast<int>(rc) : 0;
}

std::vector<NumaMapsRange> LiveMemoryView::Ranges() {
  std::vector<NumaMapsRange> ranges;
  absl::StatusOr<std::string> nm = fs_->ReadFile(absl::StrCat("/proc/", pid_, "/numa_maps"));
  if (!nm.ok()) return ranges;
  absl::StatusOr<std::vector<NumaMapsRange>> r = ParseNumaMaps(*nm);
  if (!r.ok()) return ranges;
  ranges = std::move(*r);
  if (absl::StatusOr<std::string> mp = fs_->ReadFile(absl::StrCat("/proc/", pid_, "/maps")); mp.ok()) {
    if (absl::StatusOr<std::vector<MapsRange>> m = ParseProcMaps(*mp); m.ok()) JoinWithMaps(ranges, *m);
  }
  return ranges;
}

std::vector<int> LiveMemoryView::BackedOffNodes() {
  return migrator_ == nullptr ? std::vector<int>{} : migrator_->BackedOffNodes();
}

bool LiveMemoryView::IsHeld(uint64_t vaddr) {
  return migrator_ != nullptr && migrator_->IsHeld(vaddr);
}

}  // namespace hotpage
