#include "tools/live_memory_view.h"

#include <algorithm>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "tools/base/kernel/huge_chunks.h"
#include "tools/base/kernel/node_meminfo.h"
#include "tools/base/kernel/numa_maps.h"
#include "tools/base/kernel/proc_stat.h"

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

LiveMemoryView::LiveMemoryView(pid_t pid, PageMover* mover, const KernelFs* fs,
                               const Topology* topology, Migrator* migrator,
                               RangesRefresh refresh, Clock* clock)
    : pid_(pid),
      mover_(mover),
      fs_(fs),
      topology_(topology),
      migrator_(migrator),
      refresh_(refresh),
      clock_(clock != nullptr ? clock : RealClock::Get()) {
  if (migrator_ != nullptr)
    moved_.reserve(migrator_->options().moved_log_pages);
}

void LiveMemoryView::ReadNumaMaps(const std::string* maps) {
  ++ranges_stats_.full_reads;
  have_ranges_ = false;
  ranges_.clear();
  // Before the read: a move done while numa_maps is read is counted again
  // at the next call (twice), never missed (the file comment).
  if (migrator_ != nullptr) moved_seq_ = migrator_->MovedCount();
  absl::StatusOr<std::string> nm =
      fs_->ReadFile(absl::StrCat("/proc/", pid_, "/numa_maps"));
  if (!nm.ok()) return;
  absl::StatusOr<std::vector<NumaMapsRange>> r = ParseNumaMaps(*nm);
  if (!r.ok()) return;
  ranges_ = std::move(*r);
  if (maps != nullptr) {
    if (absl::StatusOr<std::vector<MapsRange>> m = ParseProcMaps(*maps); m.ok())
      JoinWithMaps(ranges_, *m);
  }
  // The kernel prints VMAs in address order; ApplyMoves relies on it.
  const auto by_start = [](const NumaMapsRange& a, const NumaMapsRange& b) {
    return a.start < b.start;
  };
  if (!std::is_sorted(ranges_.begin(), ranges_.end(), by_start))
    std::sort(ranges_.begin(), ranges_.end(), by_start);
  have_ranges_ = true;
}

bool LiveMemoryView::ApplyMoves() {
  if (migrator_ == nullptr) return true;
  bool lost = false;
  moved_seq_ = migrator_->MovedSince(moved_seq_, &moved_, &lost);
  if (lost) return false;
  for (const MovedPage& m : moved_) {
    auto it = std::upper_bound(
        ranges_.begin(), ranges_.end(), m.vaddr,
        [](uint64_t a, const NumaMapsRange& r) { return a < r.start; });
    if (it == ranges_.begin()) continue;
    NumaMapsRange& r = *(it - 1);
    // A page outside every range read (its VMA is new: maps changed, and
    // the next call reads numa_maps) or in a range without an end.
    if (m.vaddr >= r.end) continue;
    const uint64_t pages = std::max<uint64_t>(
        1, m.page_bytes / std::max<uint64_t>(1, r.page_size));
    bool onto = false;
    for (auto& [node, n] : r.pages_on_node) {
      if (node == m.from_node) n -= std::min(n, pages);
      if (node == m.to_node) {
        n += pages;
        onto = true;
      }
    }
    // At most one entry per node: grows to the node count, once.
    if (!onto) r.pages_on_node.emplace_back(m.to_node, pages);
    ++ranges_stats_.moves_applied;
  }
  return true;
}

std::vector<NumaMapsRange> LiveMemoryView::Ranges() {
  absl::StatusOr<std::string> maps =
      fs_->ReadFile(absl::StrCat("/proc/", pid_, "/maps"));
  std::optional<uint64_t> rss;
  if (absl::StatusOr<std::string> statm =
          fs_->ReadFile(absl::StrCat("/proc/", pid_, "/statm"));
      statm.ok())
    rss = ParseStatmResident(*statm);
  const absl::Time now = clock_->Now();
  const bool rss_moved =
      !rss || static_cast<double>(*rss > rss_at_read_ ? *rss - rss_at_read_
                                                      : rss_at_read_ - *rss) >
                  refresh_.rss_change * static_cast<double>(rss_at_read_);
  const bool fresh = have_ranges_ && maps.ok() && *maps == maps_at_read_ &&
                     !rss_moved && now >= read_at_ &&
                     now - read_at_ < refresh_.max_age;
  if (fresh && ApplyMoves()) {
    ++ranges_stats_.cached_reads;
    return ranges_;
  }
  ReadNumaMaps(maps.ok() ? &*maps : nullptr);
  maps_at_read_ = maps.ok() ? std::move(*maps) : std::string();
  rss_at_read_ = rss.value_or(0);
  read_at_ = now;
  return ranges_;
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
