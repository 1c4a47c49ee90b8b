#include "tools/simulate/simulated_page_mover.h"

#include <algorithm>
#include <cerrno>

namespace hotpage {

long SimulatedPageMover::Query(pid_t pid, absl::Span<const uint64_t> pages,
                               absl::Span<int> status) {
  ++counters_.query_calls;
  for (size_t i = 0; i < pages.size() && i < status.size(); ++i) {
    status[i] = memory_->NodeOf(pages[i]);
  }
  return 0;
}

int SimulatedPageMover::MoveBasePage(uint64_t vaddr, int node, uint64_t now_ns,
                                     uint64_t* call_ns) {
  const int before = memory_->NodeOf(vaddr);
  if (before < 0) return before;  // -ENOENT
  const SimulatedMemory::MoveResult r = memory_->Move(vaddr, node, now_ns);
  *call_ns += r.cost_ns;
  if (r.status == node && before != node) {
    const int from_tier = memory_->tier(before), to_tier = memory_->tier(node);
    ++(to_tier < from_tier   ? counters_.promoted_pages
       : to_tier > from_tier ? counters_.demoted_pages
                             : counters_.lateral_pages);
    counters_.moved_bytes += kSimPageBytes;
  }
  return r.status;
}

long SimulatedPageMover::Move(pid_t pid, absl::Span<const uint64_t> pages,
                              absl::Span<const int> nodes,
                              absl::Span<int> status) {
  ++counters_.move_calls;
  const uint64_t now_ns = SimNs(clock_->Now());
  uint64_t call_ns = cost_.per_call_ns;
  memory_->AddOverheadNs(cost_.per_call_ns);
  const size_t n = std::min({pages.size(), nodes.size(), status.size()});
  for (size_t i = 0; i < n; ++i) {
    const int node = nodes[i];
    const uint64_t base = pages[i] & ~(kHugeBytes - 1);
    if (huge_.empty() || !huge_.contains(base)) {
      status[i] = MoveBasePage(pages[i], node, now_ns, &call_ns);
      continue;
    }
    // A huge page moves whole: its 512 base pages.
    bool any = false, enomem = false;
    int err = -ENOENT;  // the first error other than "never touched"
    for (uint64_t off = 0; off < kHugeBytes; off += kSimPageBytes) {
      const int s = MoveBasePage(base + off, node, now_ns, &call_ns);
      any |= s == node;
      enomem |= s == -ENOMEM;
      if (s < 0 && s != -ENOENT && err == -ENOENT) err = s;
    }
    status[i] = enomem ? -ENOMEM : any ? node : err;
  }
  counters_.move_ns += call_ns;
  // The call's modelled time passes, on the clock and as the calling
  // thread's CPU time (the file comment).
  const absl::Duration d =
      absl::Nanoseconds(static_cast<int64_t>(std::max<uint64_t>(call_ns, 1)));
  clock_->Advance(d);
  clock_->AdvanceCpu(d);
  return 0;
}

}  // namespace hotpage
