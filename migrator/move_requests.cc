#include "migrator/move_requests.h"

namespace hotpage {

void AppendMoveRequests(const PlacementDecision& decision, absl::Time hot_since,
                        std::vector<MoveRequest>* out) {
  for (const bool demotions : {true, false}) {
    for (const PlannedMove& m : decision.moves) {
      const bool promote = m.reason == PlacementReason::kPromote;
      if (promote == demotions) continue;
      for (uint64_t off = 0; off < m.page_bytes; off += kBasePageBytes) {
        MoveRequest r;
        r.vaddr = m.vaddr + off;
        r.page_bytes = kBasePageBytes;
        r.from_node = -1;
        r.planned_from = static_cast<int16_t>(m.from_node);
        r.to_node = m.to_node;
        r.reason = promote ? MoveReason::kPromote : MoveReason::kDemote;
        r.hot_since = hot_since;
        out->push_back(r);
      }
    }
  }
}

std::vector<NodeQueued> QueuedMoves(const Migrator& migrator) {
  std::vector<NodeQueued> out;
  for (const auto& [node, b] : migrator.QueuedBytesByNode())
    out.push_back({node, b.in, b.out});
  return out;
}

}  // namespace hotpage
