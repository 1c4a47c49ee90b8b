#include "policy/placement_types.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hotpage {

const char* PlacementReasonName(PlacementReason r) {
  switch (r) {
    case PlacementReason::kPromote:
      return "promote";
    case PlacementReason::kDemote:
      return "demote";
  }
  return "?";
}

void ProjectQueuedMoves(absl::Span<const NodeQueued> queued,
                        std::vector<NodeFree>* free) {
  for (NodeFree& f : *free) {
    for (const NodeQueued& q : queued) {
      if (q.node != f.node) continue;
      const int64_t projected = static_cast<int64_t>(f.free_bytes) -
                                static_cast<int64_t>(q.in_bytes) +
                                static_cast<int64_t>(q.out_bytes);
      f.free_bytes = projected > 0 ? static_cast<uint64_t>(projected) : 0;
    }
  }
}

const char* PlacementTriggerName(PlacementTrigger t) {
  switch (t) {
    case PlacementTrigger::kRoom:
      return "room";
    case PlacementTrigger::kSwap:
      return "swap";
    case PlacementTrigger::kWatermark:
      return "watermark";
    case PlacementTrigger::kLocality:
      return "locality";
    case PlacementTrigger::kBandwidth:
      return "bandwidth";
    case PlacementTrigger::kReclaim:
      return "reclaim";
  }
  return "?";
}

const char* SkipReasonName(SkipReason r) {
  switch (r) {
    case SkipReason::kHeld:
      return "held";
    case SkipReason::kBindForbidden:
      return "bind_forbidden";
    case SkipReason::kOutsidePreferredMany:
      return "outside_preferred_many";
    case SkipReason::kNotEnoughEvidence:
      return "not_enough_evidence";
    case SkipReason::kNotHotterThanVictim:
      return "not_hotter_than_victim";
    case SkipReason::kTargetBackedOff:
      return "target_backed_off";
    case SkipReason::kNoRoom:
      return "no_room";
    case SkipReason::kBudget:
      return "budget";
    case SkipReason::kWrongTier:
      return "wrong_tier";
    case SkipReason::kUnknownNode:
      return "unknown_node";
    case SkipReason::kInvalidPage:
      return "invalid_page";
    case SkipReason::kDuplicate:
      return "duplicate";
    case SkipReason::kNotWorthTheCost:
      return "not_worth_the_cost";
    case SkipReason::kInterleaveRatio:
      return "interleave_ratio";
    case SkipReason::kHugePreferredFull:
      return "huge_preferred_full";
    case SkipReason::kBandwidth:
      return "bandwidth";
    case SkipReason::kCount:
      break;
  }
  return "?";
}

uint64_t SkipCounts::total() const {
  uint64_t t = 0;
  for (uint64_t p : pages) t += p;
  return t;
}

std::string SkipCountsString(const SkipCounts& c) {
  std::string out;
  for (size_t i = 0; i < kNumSkipReasons; ++i) {
    if (c.pages[i] == 0) continue;
    absl::StrAppend(&out, out.empty() ? "" : ",",
                    SkipReasonName(static_cast<SkipReason>(i)), ":",
                    c.pages[i]);
  }
  return out;
}

std::string DecisionToString(const PlacementDecision& d) {
  std::string out;
  for (const PlannedMove& m : d.moves) {
    absl::StrAppendFormat(&out, "%s 0x%x %u %d->%d %s rate=%g [%g,%g]",
                          PlacementReasonName(m.reason), m.vaddr, m.page_bytes,
                          m.from_node, m.to_node,
                          PlacementTriggerName(m.trigger), m.rate, m.rate_lo,
                          m.rate_hi);
    if (m.paired_vaddr != 0)
      absl::StrAppendFormat(&out, " for 0x%x", m.paired_vaddr);
    if (m.entry_bytes != 0)
      absl::StrAppendFormat(&out, " part of 0x%x %u", m.entry_vaddr(),
                            m.entry_bytes);
    out += "\n";
  }
  auto counts = [&](const char* what, const SkipCounts& c) {
    absl::StrAppend(&out, what, ": ", SkipCountsString(c), "\n");
  };
  counts("promote_skipped", d.promote_skipped);
  counts("demote_skipped", d.demote_skipped);
  absl::StrAppend(&out, "promoted=", d.promoted_pages,
                  " demoted=", d.demoted_pages,
                  " fallback_targets=", d.fallback_targets);
  if (d.locality_pages != 0 || d.locality_skipped.total() != 0) {
    absl::StrAppend(&out, " locality=", d.locality_pages, "\n");
    counts("locality_skipped", d.locality_skipped);
  } else {
    out += "\n";
  }
  if (d.shed_pages != 0 || d.shed_skipped.total() != 0) {
    absl::StrAppendFormat(&out, "shed=%u rate=%g\n", d.shed_pages,
                          d.shed_rate_per_sec);
    counts("shed_skipped", d.shed_skipped);
  }
  return out;
}

}  // namespace hotpage
