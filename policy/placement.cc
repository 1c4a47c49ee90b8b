#include "policy/placement.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "policy/count_prior.h"
#include "tools/base/status_macros.h"

namespace hotpage {
namespace {

// 4 KiB pages of a PageHeat (a 2 MiB page moves as 512).
double PagesOf(const PageHeat& p) {
  return static_cast<double>(std::max<uint32_t>(p.page_bytes / 4096, 1));
}

bool Contains(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

bool ValidPage(const PageHeat& p) {
  if (p.page_bytes < 4096 || (p.page_bytes & (p.page_bytes - 1)) != 0)
    return false;
  if (p.vaddr % p.page_bytes != 0) return false;
  if (std::isnan(p.rate) || std::isnan(p.rate_lo) || std::isnan(p.rate_hi) ||
      std::isnan(p.long_hi) || std::isnan(p.long_prior_lo) ||
      std::isnan(p.long_prior_hi))
    return false;
  return true;
}

// Pointers to the valid pages of `in`; each invalid one is counted in
// `skip` as kInvalidPage.
std::vector<const PageHeat*> ValidPages(absl::Span<const PageHeat> in,
                                        SkipCounts& skip) {
  std::vector<const PageHeat*> out;
  out.reserve(in.size());
  for (const PageHeat& p : in) {
    if (ValidPage(p)) {
      out.push_back(&p);
    } else {
      ++skip[SkipReason::kInvalidPage];
    }
  }
  return out;
}

// Total orders (every field takes part), so the sorted order does not
// depend on the input order.
auto HeatKey(const PageHeat& p) {
  return std::make_tuple(p.vaddr, p.page_bytes, p.current_node, p.accessor_node,
                         p.shared);
}
bool HotterFirst(const PageHeat& a, const PageHeat& b) {
  if (a.rate_lo != b.rate_lo) return a.rate_lo > b.rate_lo;
  if (a.rate != b.rate) return a.rate > b.rate;
  if (a.rate_hi != b.rate_hi) return a.rate_hi > b.rate_hi;
  return HeatKey(a) < HeatKey(b);
}
// The swap test: one model's bounds against the same model's (PageHeat).
bool ProvablyHotter(const PageHeat& c, const PageHeat& v) {
  return c.rate_lo > v.rate_hi || c.prior_lo > v.prior_hi ||
         c.long_prior_lo > v.long_prior_hi;
}
// Victims: the lowest of the Poisson, the long window's and the long
// window prior's upper bounds first (PageHeat::long_hi, long_prior_hi), or,
// for a victim that has not shown it cooled (rank_by_long_window), the
// lower of the long window's two.
// Adding the decayed count prior's (prior_hi) always was measured on the
// tuning set and lost (tools/simulate/README.md): in a steady phase the
// prior of the decayed counts ranks a hot page that drew no sample lately
// among the cold. With PlacementInput::victims_by_prior (the engine's change
// window) it takes part: its counts are then the new regime's alone, and the
// long window's premise (a rate that held over it) is what the change broke.
double ColdKey(const PageHeat& v, bool by_prior) {
  // Nothing shows the page cooled: its long window, the most evidence
  // (policy/engine.h, "The long window ranks a victim"). The engine sets
  // it only outside the change window.
  if (v.rank_by_long_window && !by_prior)
    return std::min(v.long_hi, v.long_prior_hi);
  const double h = std::min({v.rate_hi, v.long_hi, v.long_prior_hi});
  return by_prior ? std::min(h, v.prior_hi) : h;
}
// A candidate's highest lower bound (any model's).
double HotKey(const PageHeat& c) {
  return std::max({c.rate_lo, c.prior_lo, c.long_prior_lo});
}
bool ColderFirst(const PageHeat& a, const PageHeat& b, bool by_prior) {
  const double ha = ColdKey(a, by_prior);
  const double hb = ColdKey(b, by_prior);
  if (ha != hb) return ha < hb;
  // Ties (a prior fitted to few pages can give every count one bound): the
  // Poisson and long window bounds' order (the long window's alone for a
  // victim that ranks by it).
  auto tie_key = [by_prior](const PageHeat& v) {
    return v.rank_by_long_window && !by_prior ? v.long_hi
                                              : std::min(v.rate_hi, v.long_hi);
  };
  const double la = tie_key(a);
  const double lb = tie_key(b);
  if (la != lb) return la < lb;
  if (a.rate_hi != b.rate_hi) return a.rate_hi < b.rate_hi;
  if (a.rate != b.rate) return a.rate < b.rate;
  if (a.rate_lo != b.rate_lo) return a.rate_lo < b.rate_lo;
  return HeatKey(a) < HeatKey(b);
}

constexpr int kFarDistance = 1 << 20;
constexpr uint32_t kHugePageBytes = uint32_t{2} << 20;

bool IsInterleave(const NumaMapsRange* r) {
  return r != nullptr && !r->nodes.empty() &&
         (r->mode == MempolicyMode::kInterleave ||
          r->mode == MempolicyMode::kWeightedInterleave);
}

// Outcome of trying to demote one victim.
enum class DemoteResult {
  kOk,
  kPermanent,  // cannot move this round (held, bind, tier, back-off)
  kNoRoom,     // every allowed target is full for now
};

class Engine final : public PlacementContext {
 public:
  Engine(const PlacementInput& in, const PlacementConfig& config,
         TargetStrategy& strategy)
      : in_(in), config_(config), topo_(*in.topology), strategy_(strategy) {}

  PlacementDecision Run();

  // PlacementContext.
  const Topology& topology() const override { return topo_; }
  std::optional<uint64_t> FreeBytes(int node) const override {
    const NodeState* n = Find(node);
    if (n == nullptr || !n->known) return std::nullopt;
    return static_cast<uint64_t>(n->free);
  }
  bool HasRoomToPromote(int node, uint64_t bytes) const override {
    const NodeState* n = Find(node);
    return n != nullptr && n->known && !n->backed_off &&
           n->free - static_cast<int64_t>(bytes) >=
               static_cast<int64_t>(n->high);
  }
  bool BackedOff(int node) const override {
    const NodeState* n = Find(node);
    return n != nullptr && n->backed_off;
  }
  int Distance(int from, int to) const override {
    const NodeState* a = Find(from);
    const NodeState* b = Find(to);
    if (a == nullptr || b == nullptr) return kFarDistance;
    return distance_[a->index * nodes_.size() + b->index];
  }

 private:
  struct NodeState {
    int id = -1;
    size_t index = 0;
    std::optional<int> rank;
    bool known = false;
    int64_t free = 0;  // projected
    // Bytes this round's promotions take out of the node. The migrator
    // moves every other move first (migrator/move_requests.h), so a
    // demotion into the node cannot use them: its room is free less these.
    int64_t promoted_out = 0;
    uint64_t free_before = 0;
    uint64_t low = 0, high = 0;
    bool backed_off = false;
    bool below_low = false;
    bool has_lower = false;         // a slower tier exists below it
    std::vector<uint32_t> victims;  // indices into victims_, coldest first
    size_t cursor = 0;              // victims before it are used up
  };
  enum class VictimState : uint8_t { kAvailable, kUsed };

  const NodeState* Find(int id) const {
    if (id < 0 || static_cast<size_t>(id) >= index_of_.size()) return nullptr;
    int i = index_of_[id];
    return i < 0 ? nullptr : &nodes_[i];
  }
  NodeState* Find(int id) {
    return const_cast<NodeState*>(static_cast<const Engine*>(this)->Find(id));
  }

  void Setup();
  const NumaMapsRange* RangeOf(uint64_t vaddr) const {
    return FindRange(sorted_ranges_, vaddr);
  }
  bool Held(const PageHeat& p) const {
    return in_.is_held && in_.is_held(p.vaddr);
  }
  bool BudgetAllows(uint64_t bytes, size_t moves) const {
    return spent_bytes_ + bytes <= config_.max_move_bytes &&
           decision_.moves.size() + moves <= config_.max_moves;
  }
  void WatermarkDemotions();
  void Promotions();
  void LocalityMoves();
  void LocalityOne(const PageHeat& p);
  bool RatioRuleApplies(const NumaMapsRange* r) const {
    return config_.interleave_tolerance >= 0 && IsInterleave(r);
  }
  // Rule I: whether moving `bytes` of range `r` from `from` to `to` keeps
  // both nodes' shares within the tolerance; *deficit is `to`'s share
  // shortfall after the move (larger: more wanted).
  bool RatioAllows(const NumaMapsRange& r, int from, int to, uint64_t bytes,
                   double* deficit) const;
  // Filters `order` by RatioAllows and sorts it by deficit (stable).
  void ApplyRatioRule(const NumaMapsRange& r, const PageHeat& p,
                      std::vector<int>& order) const;
  void TrackRange(uint64_t vaddr, int from, int to, int64_t bytes);
  void PromoteOne(const PageHeat& c);
  bool TrySwap(const PageHeat& c, int target, SkipReason* why);
  // Demotes `v` (a victim, or a rule B page) to its first allowed
  // target with room. within_preferred_many: a `prefer (many)` range's
  // pages go only to its nodes (rule B).
  DemoteResult TryDemote(const PageHeat& v, PlacementTrigger trigger,
                         uint64_t paired, SkipReason* why,
                         bool within_preferred_many = false);
  void BandwidthSheds();
  // Rule B: what the promotion into `target` decided since moves[mark] adds
  // to its access rate, off its headroom.
  void ChargePromotion(size_t mark, int target);
  void AddMove(const PageHeat& p, int to, PlacementReason reason,
               PlacementTrigger trigger, uint64_t paired);
  void AddPart(const PageHeat& p, uint32_t offset, uint32_t bytes, int to,
               PlacementReason reason, PlacementTrigger trigger,
               uint64_t paired);
  // Rule W's split of a divisible page over several targets (true: done).
  bool PromoteSplit(const PageHeat& c, const NumaMapsRange* range,
                    const std::vector<int>& order);
  void UndoMovesTo(size_t moves_size);
  void Finish();

  const PlacementInput& in_;
  const PlacementConfig& config_;
  const Topology& topo_;
  TargetStrategy& strategy_;

  std::vector<NodeState> nodes_;
  std::vector<int> index_of_;  // node id -> index in nodes_, -1
  std::vector<int> distance_;  // nodes_.size()^2
  std::vector<const NumaMapsRange*> sorted_ranges_;
  std::vector<int> promote_mask_;  // sorted node ids
  std::vector<PageHeat> victims_;  // sorted coldest first, valid only
  std::vector<VictimState> victim_state_;
  // Victims TrySwap may still pass over this round (rule e): the victims'
  // count, so that a round stays linear in them.
  size_t pass_over_left_ = 0;
  absl::flat_hash_set<uint64_t> moved_;
  uint64_t spent_bytes_ = 0;
  double max_demoted_hi_ = -std::numeric_limits<double>::infinity();
  // Rule B: the access rate promotions may still add (net) this round, by
  // node index; empty: no limit anywhere.
  std::vector<double> promote_left_;
  double max_demoted_prior_hi_ = -std::numeric_limits<double>::infinity();
  double max_demoted_long_prior_hi_ = -std::numeric_limits<double>::infinity();
  // The same bar for the priors' pair form (PageHeat::prior_count): the
  // largest count demoted so far under each prior (a posterior is
  // stochastically increasing in the count, so a candidate hotter than that
  // page is hotter than every page demoted), -1 when none, kNoPairBar when
  // a demoted page had no count under that prior.
  static constexpr int64_t kNoPairBar = std::numeric_limits<int64_t>::max();
  int64_t max_demoted_prior_count_ = -1;
  int64_t max_demoted_long_prior_count_ = -1;
  // The swap test (rule 2e): the bounds of one model against the same
  // model's, or one prior's pair form.
  bool Hotter(const PageHeat& c, const PageHeat& v) const;
  // Rule 2b: `c` hotter than every page demoted so far in the round.
  bool AboveTheBar(const PageHeat& c) const;
  // P(lambda_c <= lambda_v) <= pair_tail under `prior` (counts, kv may be
  // a bar: -1 passes, kNoPairBar fails).
  bool PairHotter(const CountPrior* prior, int32_t kc, int64_t kv) const;
  // Rule I: planned byte changes per (interleaved range, node).
  absl::flat_hash_map<std::pair<const NumaMapsRange*, int>, int64_t>
      range_delta_;
  std::vector<int> allowed_, order_, filtered_;  // scratch
  std::vector<std::pair<int, uint32_t>> parts_;  // scratch
  PlacementDecision decision_;
};

void Engine::Setup() {
  int max_id = -1;
  for (const NodeInfo& n : topo_.nodes) max_id = std::max(max_id, n.id);
  index_of_.assign(max_id + 1, -1);
  nodes_.reserve(topo_.nodes.size());
  for (const NodeInfo& n : topo_.nodes) {
    if (n.id < 0 || index_of_[n.id] >= 0) continue;
    NodeState s;
    s.id = n.id;
    s.index = nodes_.size();
    s.rank = n.tier;
    NodeWatermarks wm = WatermarksFor(config_, topo_, n.id);
    s.low = wm.low_bytes;
    s.high = std::max(wm.high_bytes, wm.low_bytes);
    index_of_[n.id] = static_cast<int>(nodes_.size());
    nodes_.push_back(std::move(s));
  }
  for (NodeState& a : nodes_) {
    for (const NodeState& b : nodes_) {
      if (a.rank && b.rank && *b.rank > *a.rank) a.has_lower = true;
    }
  }
  const size_t n = nodes_.size();
  distance_.assign(n * n, kFarDistance);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      if (std::optional<int> d = topo_.Distance(nodes_[i].id, nodes_[j].id)) {
        distance_[i * n + j] = *d;
      }
    }
  }
  // Free bytes: a node listed twice takes its smallest value (conservative
  // and independent of order).
  for (const NodeFree& f : in_.free) {
    NodeState* s = Find(f.node);
    if (s == nullptr) continue;
    uint64_t v =
        s->known ? std::min(s->free_before, f.free_bytes) : f.free_bytes;
    s->known = true;
    s->free_before = v;
    s->free = static_cast<int64_t>(
        std::min<uint64_t>(v, std::numeric_limits<int64_t>::max() / 2));
  }
  for (int b : in_.backed_off_nodes) {
    if (NodeState* s = Find(b)) s->backed_off = true;
  }
  if (!in_.promote_headroom.empty()) {
    promote_left_.assign(nodes_.size(),
                         std::numeric_limits<double>::infinity());
    for (const NodeShed& h : in_.promote_headroom) {
      if (const NodeState* s = Find(h.node))
        promote_left_[s->index] = std::max(0.0, h.rate_per_sec);
    }
  }

  sorted_ranges_.reserve(in_.ranges.size());
  for (const NumaMapsRange& r : in_.ranges) sorted_ranges_.push_back(&r);
  std::sort(sorted_ranges_.begin(), sorted_ranges_.end(),
            [](const NumaMapsRange* a, const NumaMapsRange* b) {
              return std::tie(a->start, a->end) < std::tie(b->start, b->end);
            });

  // The promotion mask: --promote-to, else the fastest tier.
  promote_mask_ =
      config_.promote_to.empty() ? topo_.FastNodes() : config_.promote_to;
  std::sort(promote_mask_.begin(), promote_mask_.end());
  promote_mask_.erase(std::unique(promote_mask_.begin(), promote_mask_.end()),
                      promote_mask_.end());

  // Victims: valid, sorted coldest first, deduplicated, grouped by node.
  victims_.reserve(in_.victims.size());
  for (const PageHeat& v : in_.victims) {
    if (ValidPage(v)) {
      victims_.push_back(v);
    } else {
      ++decision_.demote_skipped[SkipReason::kInvalidPage];
    }
  }
  std::sort(
      victims_.begin(), victims_.end(),
      [by_prior = in_.victims_by_prior](const PageHeat& a, const PageHeat& b) {
        return ColderFirst(a, b, by_prior);
      });
  victim_state_.assign(victims_.size(), VictimState::kAvailable);
  pass_over_left_ = victims_.size();
  absl::flat_hash_set<uint64_t> seen;
  seen.reserve(victims_.size());
  for (uint32_t i = 0; i < victims_.size(); ++i) {
    const PageHeat& v = victims_[i];
    if (!seen.insert(v.vaddr).second) {
      victim_state_[i] = VictimState::kUsed;
      ++decision_.demote_skipped[SkipReason::kDuplicate];
      continue;
    }
    NodeState* s = Find(v.current_node);
    if (s == nullptr || !s->rank) {
      victim_state_[i] = VictimState::kUsed;
      ++decision_.demote_skipped[SkipReason::kUnknownNode];
      continue;
    }
    s->victims.push_back(i);
  }
}

void Engine::AddMove(const PageHeat& p, int to, PlacementReason reason,
                     PlacementTrigger trigger, uint64_t paired) {
  AddPart(p, 0, p.page_bytes, to, reason, trigger, paired);
}

// [p.vaddr + offset, + bytes) of `p` to `to`; the whole page when bytes is
// p.page_bytes.
void Engine::AddPart(const PageHeat& p, uint32_t offset, uint32_t bytes, int to,
                     PlacementReason reason, PlacementTrigger trigger,
                     uint64_t paired) {
  PlannedMove m;
  m.vaddr = p.vaddr + offset;
  m.page_bytes = bytes;
  m.entry_bytes = bytes == p.page_bytes ? 0 : p.page_bytes;
  m.from_node = p.current_node;
  m.to_node = to;
  m.reason = reason;
  m.trigger = trigger;
  m.rate = p.rate;
  m.rate_lo = p.rate_lo;
  m.rate_hi = p.rate_hi;
  m.paired_vaddr = paired;
  Find(p.current_node)->free += bytes;
  Find(to)->free -= bytes;
  if (reason == PlacementReason::kPromote)
    Find(p.current_node)->promoted_out += bytes;
  TrackRange(m.vaddr, p.current_node, to, bytes);
  spent_bytes_ += bytes;
  moved_.insert(p.vaddr);
  decision_.moves.push_back(m);
}

// Rolls back moves (and their free-byte and budget effects) past
// `moves_size`. Used when a swap cannot be completed.
void Engine::UndoMovesTo(size_t moves_size) {
  while (decision_.moves.size() > moves_size) {
    const PlannedMove& m = decision_.moves.back();
    Find(m.from_node)->free -= m.page_bytes;
    Find(m.to_node)->free += m.page_bytes;
    if (m.reason == PlacementReason::kPromote)
      Find(m.from_node)->promoted_out -= m.page_bytes;
    TrackRange(m.vaddr, m.from_node, m.to_node,
               -static_cast<int64_t>(m.page_bytes));
    spent_bytes_ -= m.page_bytes;
    moved_.erase(m.entry_vaddr());
    decision_.moves.pop_back();
  }
}

DemoteResult Engine::TryDemote(const PageHeat& v, PlacementTrigger trigger,
                               uint64_t paired, SkipReason* why,
                               bool within_preferred_many) {
  if (moved_.contains(v.vaddr)) {
    *why = SkipReason::kDuplicate;
    return DemoteResult::kPermanent;
  }
  if (Held(v)) {
    *why = SkipReason::kHeld;
    return DemoteResult::kPermanent;
  }
  const NodeState& src = *Find(v.current_node);
  const NumaMapsRange* range = RangeOf(v.vaddr);
  const bool prefer_many = within_preferred_many && range != nullptr &&
                           range->mode == MempolicyMode::kPreferredMany &&
                           !range->nodes.empty();
  allowed_.clear();
  bool any_lower = false, any_bound = false, any_masked = false;
  for (const NodeState& n : nodes_) {
    if (!n.rank || *n.rank <= *src.rank) continue;
    any_lower = true;
    if (range != nullptr && range->Forbids(n.id)) continue;
    any_bound = true;
    if (prefer_many && !Contains(range->nodes, n.id)) continue;
    any_masked = true;
    if (n.backed_off) continue;
    allowed_.push_back(n.id);
  }
  if (allowed_.empty()) {
    *why = !any_lower    ? SkipReason::kWrongTier
           : !any_bound  ? SkipReason::kBindForbidden
           : !any_masked ? SkipReason::kOutsidePreferredMany
                         : SkipReason::kTargetBackedOff;
    return DemoteResult::kPermanent;
  }
  order_.clear();
  strategy_.RankDemotionTargets(v, range, allowed_, *this, order_);
  if (RatioRuleApplies(range)) {
    ApplyRatioRule(*range, v, order_);
    if (order_.empty()) {
      *why = SkipReason::kInterleaveRatio;
      return DemoteResult::kPermanent;
    }
  }
  for (int t : order_) {
    if (!std::binary_search(allowed_.begin(), allowed_.end(), t)) continue;
    const NodeState& dst = *Find(t);
    // Room that is there when the demotion runs: not what this round's
    // promotions out of the node will free (they run after it).
    if (!dst.known ||
        dst.free - dst.promoted_out - static_cast<int64_t>(v.page_bytes) <
            static_cast<int64_t>(dst.low)) {
      continue;
    }
    if (!BudgetAllows(v.page_bytes, 1)) {
      *why = SkipReason::kBudget;
      return DemoteResult::kNoRoom;
    }
    AddMove(v, t, PlacementReason::kDemote, trigger, paired);
    ++decision_.demoted_pages;
    decision_.demoted_bytes += v.page_bytes;
    max_demoted_hi_ = std::max(max_demoted_hi_, v.rate_hi);
    max_demoted_prior_hi_ = std::max(max_demoted_prior_hi_, v.prior_hi);
    max_demoted_long_prior_hi_ =
        std::max(max_demoted_long_prior_hi_, v.long_prior_hi);
    max_demoted_prior_count_ =
        std::max<int64_t>(max_demoted_prior_count_,
                          v.prior_count < 0 ? kNoPairBar : v.prior_count);
    max_demoted_long_prior_count_ = std::max<int64_t>(
        max_demoted_long_prior_count_,
        v.long_prior_count < 0 ? kNoPairBar : v.long_prior_count);
    return DemoteResult::kOk;
  }
  *why = SkipReason::kNoRoom;
  return DemoteResult::kNoRoom;
}

void Engine::WatermarkDemotions() {
  for (NodeState& n : nodes_) {
    if (!n.known || !n.has_lower || n.free >= static_cast<int64_t>(n.low))
      continue;
    n.below_low = true;
    for (size_t k = n.cursor; k < n.victims.size(); ++k) {
      if (n.free >= static_cast<int64_t>(n.high)) break;
      const uint32_t vi = n.victims[k];
      if (victim_state_[vi] != VictimState::kAvailable) continue;
      if (!in_.watermark_demotions && !victims_[vi].untracked) continue;
      SkipReason why = SkipReason::kCount;
      DemoteResult r =
          TryDemote(victims_[vi], PlacementTrigger::kWatermark, 0, &why);
      if (r == DemoteResult::kOk) {
        victim_state_[vi] = VictimState::kUsed;
        continue;
      }
      ++decision_.demote_skipped[why];
      if (r == DemoteResult::kPermanent) victim_state_[vi] = VictimState::kUsed;
      if (why == SkipReason::kBudget) return;
    }
  }
}

// Demotes the coldest available victims on `target` that `c` provably
// beats until their bytes cover `c`, then promotes `c`; all or nothing.
bool Engine::TrySwap(const PageHeat& c, int target, SkipReason* why) {
  NodeState& t = *Find(target);
  const size_t mark = decision_.moves.size();
  const size_t mark_demoted_pages = decision_.demoted_pages;
  const uint64_t mark_demoted_bytes = decision_.demoted_bytes;
  const double mark_hi = max_demoted_hi_;
  const double mark_prior_hi = max_demoted_prior_hi_;
  const double mark_long_prior_hi = max_demoted_long_prior_hi_;
  const int64_t mark_prior_count = max_demoted_prior_count_;
  const int64_t mark_long_prior_count = max_demoted_long_prior_count_;
  // No victim goes into the room the candidate leaves on its node: the
  // migrator moves the victims first (see NodeState::promoted_out), so
  // that room is not there yet when they move. Between two full nodes (a
  // middle tier) such a swap met ENOMEM on the victim's move and then on
  // the candidate's.
  uint64_t freed = 0;
  bool any_victim = false;
  *why = SkipReason::kNoRoom;
  while (t.cursor < t.victims.size() &&
         victim_state_[t.victims[t.cursor]] != VictimState::kAvailable) {
    ++t.cursor;
  }
  std::vector<uint32_t> used;
  for (size_t k = t.cursor; k < t.victims.size() && freed < c.page_bytes; ++k) {
    const uint32_t vi = t.victims[k];
    if (victim_state_[vi] != VictimState::kAvailable) continue;
    const PageHeat& v = victims_[vi];
    if (v.vaddr == c.vaddr) {  // listed as both: inconsistent input
      ++decision_.demote_skipped[SkipReason::kDuplicate];
      victim_state_[vi] = VictimState::kUsed;
      continue;
    }
    any_victim = true;
    // Victims are coldest first by their upper bounds: if this one is not
    // provably colder, none after it is likely to be. But the order takes
    // the lowest of a victim's upper bounds and the test one model at a
    // time: a victim whose lowest upper bound is below the candidate's
    // highest lower bound may be beaten by no single model while a later
    // one is (one colder by the long prior only, before one colder by the
    // Poisson bound only), so it is passed over, not the end of the list
    // (it stays available for other candidates). At most as many victims
    // as the list holds are passed over in a round: each candidate would
    // otherwise scan again every victim no single model beats, a round
    // quadratic in them (the daemon's members under emulation spent seconds
    // a round there, and a SIGTERM waited up to 15 s for one to end).
    if (!Hotter(c, v)) {
      *why = SkipReason::kNotHotterThanVictim;
      if (pass_over_left_ > 0 && ColdKey(v, in_.victims_by_prior) < HotKey(c)) {
        --pass_over_left_;
        ++decision_.passed_over_victims;
        continue;
      }
      break;
    }
    // Benefit against cost: the pair's two moves must pay (victims are
    // coldest first, so none after this one would).
    if (!(c.rate - v.rate > 2 * in_.migration_margin_per_sec * PagesOf(c))) {
      *why = SkipReason::kNotWorthTheCost;
      break;
    }
    // Budget for this victim and the promotion itself.
    if (!BudgetAllows(v.page_bytes + c.page_bytes, 2)) {
      *why = SkipReason::kBudget;
      break;
    }
    SkipReason vwhy = SkipReason::kCount;
    DemoteResult r = TryDemote(v, PlacementTrigger::kSwap, c.vaddr, &vwhy);
    if (r == DemoteResult::kOk) {
      used.push_back(vi);
      freed += v.page_bytes;
    } else if (r == DemoteResult::kPermanent) {
      ++decision_.demote_skipped[vwhy];
      victim_state_[vi] = VictimState::kUsed;
    } else {
      *why = vwhy;  // no room below (or budget): stop here
      break;
    }
  }
  if (freed >= c.page_bytes && !t.backed_off && t.known &&
      BudgetAllows(c.page_bytes, 1)) {
    for (uint32_t vi : used) victim_state_[vi] = VictimState::kUsed;
    AddMove(c, target, PlacementReason::kPromote, PlacementTrigger::kSwap,
            decision_.moves[mark].vaddr);
    return true;
  }
  UndoMovesTo(mark);
  decision_.demoted_pages = mark_demoted_pages;
  decision_.demoted_bytes = mark_demoted_bytes;
  max_demoted_hi_ = mark_hi;
  max_demoted_prior_hi_ = mark_prior_hi;
  max_demoted_long_prior_hi_ = mark_long_prior_hi;
  max_demoted_prior_count_ = mark_prior_count;
  max_demoted_long_prior_count_ = mark_long_prior_count;
  if (!any_victim) *why = SkipReason::kNoRoom;
  return false;
}

bool Engine::PairHotter(const CountPrior* prior, int32_t kc, int64_t kv) const {
  if (prior == nullptr || kc < 0 || kv == kNoPairBar) return false;
  if (kv < 0) return true;
  const std::optional<double> p = prior->ProbNotHotter(
      static_cast<uint32_t>(kc), static_cast<uint32_t>(kv));
  return p && *p <= in_.pair_tail;
}

bool Engine::Hotter(const PageHeat& c, const PageHeat& v) const {
  return ProvablyHotter(c, v) ||
         (v.prior_count >= 0 &&
          PairHotter(in_.prior, c.prior_count, v.prior_count)) ||
         (v.long_prior_count >= 0 &&
          PairHotter(in_.long_prior, c.long_prior_count, v.long_prior_count));
}

bool Engine::AboveTheBar(const PageHeat& c) const {
  return c.rate_lo > max_demoted_hi_ || c.prior_lo > max_demoted_prior_hi_ ||
         c.long_prior_lo > max_demoted_long_prior_hi_ ||
         PairHotter(in_.prior, c.prior_count, max_demoted_prior_count_) ||
         PairHotter(in_.long_prior, c.long_prior_count,
                    max_demoted_long_prior_count_);
}

void Engine::PromoteOne(const PageHeat& c) {
  SkipCounts& skip = decision_.promote_skipped;
  if (moved_.contains(c.vaddr)) {
    ++skip[SkipReason::kDuplicate];
    return;
  }
  const NodeState* cur = Find(c.current_node);
  if (cur == nullptr || !cur->rank) {
    ++skip[SkipReason::kUnknownNode];
    return;
  }
  if (Held(c)) {
    ++skip[SkipReason::kHeld];
    return;
  }
  if (!(std::max({c.rate_lo, c.prior_lo, c.long_prior_lo}) >
        config_.min_promote_rate_lo_per_sec) ||
      !AboveTheBar(c)) {
    ++skip[SkipReason::kNotEnoughEvidence];
    return;
  }
  if (!(c.rate > in_.migration_margin_per_sec * PagesOf(c))) {
    ++skip[SkipReason::kNotWorthTheCost];
    return;
  }
  if (!BudgetAllows(c.page_bytes, 1)) {
    ++skip[SkipReason::kBudget];
    return;
  }
  const size_t mark = decision_.moves.size();
  const NumaMapsRange* range = RangeOf(c.vaddr);
  const bool prefer_many = range != nullptr &&
                           range->mode == MempolicyMode::kPreferredMany &&
                           !range->nodes.empty();
  // Narrow step by step so the first empty step names the reason.
  allowed_.clear();
  bool faster = false, bound = false, masked = false, up = false;
  for (const NodeState& n : nodes_) {  // ascending id
    if (!n.rank || *n.rank >= *cur->rank) continue;
    faster = true;
    if (range != nullptr && range->Forbids(n.id)) continue;
    bound = true;
    if (!std::binary_search(promote_mask_.begin(), promote_mask_.end(), n.id))
      continue;
    if (prefer_many && !Contains(range->nodes, n.id)) continue;
    masked = true;
    if (n.backed_off) continue;
    up = true;
    if (!n.known) continue;  // free memory unknown: never a target
    allowed_.push_back(n.id);
  }
  if (allowed_.empty()) {
    ++skip[!faster   ? SkipReason::kWrongTier
           : !bound  ? SkipReason::kBindForbidden
           : !masked ? SkipReason::kOutsidePreferredMany
           : !up     ? SkipReason::kTargetBackedOff
                     : SkipReason::kNoRoom];
    return;
  }
  order_.clear();
  strategy_.RankPromotionTargets(c, range, allowed_, *this, order_);
  // Keep only allowed nodes, first occurrence each: a strategy cannot
  // widen the set.
  std::vector<int>& order = filtered_;
  order.clear();
  for (int t : order_) {
    if (std::binary_search(allowed_.begin(), allowed_.end(), t) &&
        !Contains(order, t)) {
      order.push_back(t);
    }
  }
  if (order.empty()) {
    ++skip[SkipReason::kNoRoom];
    return;
  }
  // Rule I: only targets that keep the interleave ratio, most wanted first.
  if (RatioRuleApplies(range)) {
    ApplyRatioRule(*range, c, order);
    if (order.empty()) {
      ++skip[SkipReason::kInterleaveRatio];
      return;
    }
  }
  // Rule B: only targets whose bandwidth headroom takes the page's rate (a
  // swap's victims give some back: ChargePromotion).
  if (!promote_left_.empty()) {
    order.erase(std::remove_if(order.begin(), order.end(),
                               [&](int t) {
                                 return c.rate > promote_left_[Find(t)->index];
                               }),
                order.end());
    if (order.empty()) {
      ++skip[SkipReason::kBandwidth];
      return;
    }
  }
  // Rule H: a huge page goes only to its preferred node(s), in their order.
  bool huge_strict = false;
  if (config_.huge_strict_preferred && c.page_bytes >= kHugePageBytes) {
    const std::vector<int>* preferred = nullptr;
    if (range != nullptr && !range->nodes.empty() &&
        (range->mode == MempolicyMode::kPreferred ||
         range->mode == MempolicyMode::kPreferredMany)) {
      preferred = &range->nodes;
    } else if (!config_.promote_to.empty()) {
      preferred = &config_.promote_to;
    }
    if (preferred != nullptr) {
      huge_strict = true;
      std::vector<int> kept;
      if (range != nullptr && range->mode == MempolicyMode::kPreferred) {
        // `prefer`: the preferred node first, over the CPU-local one.
        for (int p : *preferred) {
          if (Contains(order, p) && !Contains(kept, p)) kept.push_back(p);
        }
      } else {
        for (int t : order) {
          if (Contains(*preferred, t)) kept.push_back(t);
        }
      }
      order = std::move(kept);
      if (order.empty()) {
        ++skip[SkipReason::kHugePreferredFull];
        return;
      }
    }
  }
  // Rule W on a divisible page: its base pages split by weight.
  if (PromoteSplit(c, range, order)) return;
  // Room first, in strategy order.
  for (size_t i = 0; i < order.size(); ++i) {
    if (HasRoomToPromote(order[i], c.page_bytes)) {
      AddMove(c, order[i], PlacementReason::kPromote, PlacementTrigger::kRoom,
              0);
      ++decision_.promoted_pages;
      decision_.promoted_bytes += c.page_bytes;
      if (i > 0) ++decision_.fallback_targets;
      strategy_.Promoted(c, order[i]);
      ChargePromotion(mark, order[i]);
      return;
    }
  }
  // Then displacement, in the same order. The most telling reason wins:
  // evidence over room over budget.
  SkipReason reason = SkipReason::kNoRoom;
  for (size_t i = 0; i < order.size(); ++i) {
    SkipReason why = SkipReason::kNoRoom;
    if (TrySwap(c, order[i], &why)) {
      ++decision_.promoted_pages;
      decision_.promoted_bytes += c.page_bytes;
      if (i > 0) ++decision_.fallback_targets;
      strategy_.Promoted(c, order[i]);
      ChargePromotion(mark, order[i]);
      return;
    }
    if (why == SkipReason::kNotHotterThanVictim ||
        why == SkipReason::kNotWorthTheCost ||
        (why == SkipReason::kBudget && reason == SkipReason::kNoRoom)) {
      reason = why;
    }
  }
  // Nothing to displace anywhere: with reclaim that demotes, the first
  // target takes the page and its reclaim the room (a huge page the rule H
  // keeps to its preferred nodes goes there too).
  if (reason == SkipReason::kNoRoom && in_.reclaim_makes_room && c.repeated) {
    if (!BudgetAllows(c.page_bytes, 1)) {
      ++skip[SkipReason::kBudget];
      return;
    }
    AddMove(c, order[0], PlacementReason::kPromote, PlacementTrigger::kReclaim,
            0);
    ++decision_.promoted_pages;
    decision_.promoted_bytes += c.page_bytes;
    ++decision_.reclaim_pages;
    strategy_.Promoted(c, order[0]);
    ChargePromotion(mark, order[0]);
    return;
  }
  if (huge_strict && reason == SkipReason::kNoRoom)
    reason = SkipReason::kHugePreferredFull;
  ++skip[reason];
}

bool Engine::PromoteSplit(const PageHeat& c, const NumaMapsRange* range,
                          const std::vector<int>& order) {
  // Rule I keeps a range's byte shares per node with whole moves; a page
  // of an interleaved range is not split.
  if (!c.divisible || order.size() < 2 || RatioRuleApplies(range) ||
      !BudgetAllows(c.page_bytes, order.size())) {
    return false;
  }
  if (!strategy_.SplitPromotion(c, order, *this, parts_)) return false;
  // A strategy cannot widen the set or overfill a node: check its parts.
  uint64_t total = 0;
  for (const auto& [node, pages] : parts_) {
    if (pages == 0 || !Contains(order, node) ||
        !HasRoomToPromote(node, uint64_t{pages} * 4096)) {
      return false;
    }
    total += pages;
  }
  if (total * 4096 != c.page_bytes) return false;
  uint32_t offset = 0;
  for (const auto& [node, pages] : parts_) {
    const uint32_t bytes = pages * 4096;
    const size_t mark = decision_.moves.size();
    AddPart(c, offset, bytes, node, PlacementReason::kPromote,
            PlacementTrigger::kRoom, 0);
    ChargePromotion(mark, node);  // rule B: this part's share of the rate
    offset += bytes;
  }
  ++decision_.promoted_pages;
  decision_.promoted_bytes += c.page_bytes;
  return true;
}

void Engine::ChargePromotion(size_t mark, int target) {
  if (promote_left_.empty()) return;
  double added = 0;
  for (size_t i = mark; i < decision_.moves.size(); ++i) {
    const PlannedMove& m = decision_.moves[i];
    // A part of a split entry carries the entry's rate: charge its share.
    const double rate = m.entry_bytes == 0
                            ? m.rate
                            : m.rate * m.page_bytes / double(m.entry_bytes);
    added += m.reason == PlacementReason::kPromote ? rate : -rate;
  }
  promote_left_[Find(target)->index] -= added;
}

// Rule B: hot pages off the nodes whose loaded latency is above the next
// tier's, the densest (rate per 4 KiB) first, so the rate is met with the
// fewest bytes; a page hotter than what is left to shed on its node is
// skipped (Colloid's "fits in what is left of delta_p"), so the shed never
// overshoots the balance. Hotter by its upper bound, and each page shed is
// charged its upper bound: the balance lies where the slower tier's curve
// turns steep (policy/loaded_latency.h), so shedding too much costs far
// more than too little, which the next round's shed makes up. Charged its
// point rate, the first round of stream_mix 1:8 (0.25 s of samples, a few
// per page) shed 3.6 GB/s by the estimates and put the CXL node at 1250 ns
// for the rest of the second (547 ns on average against colloid's 222);
// with the bound: stream_mix 1:8 204.1 -> 200.5 ns, stream_grow 1:4 228.7
// -> 212.5 ns (below colloid's 216.3), stream_mix 1:2 185.6 -> 189.6 and
// stream_grow 1:2 171.2 -> 174.3 (still the best), the rest unchanged. Targets
// as for any demotion (bind, back-off, the target's low watermark, rule I), and
// a `prefer (many)` range's pages only to its nodes: unlike a watermark
// demotion nothing forces this move.
void Engine::BandwidthSheds() {
  if (in_.bandwidth_shed.empty() || in_.shed_candidates.empty()) return;
  std::vector<double> left(nodes_.size(), 0);
  bool any = false;
  for (const NodeShed& n : in_.bandwidth_shed) {
    NodeState* s = Find(n.node);
    if (s == nullptr || !(n.rate_per_sec > 0)) continue;
    left[s->index] += n.rate_per_sec;
    any = true;
  }
  if (!any) return;
  SkipCounts& skip = decision_.shed_skipped;
  std::vector<const PageHeat*> pages = ValidPages(in_.shed_candidates, skip);
  std::sort(pages.begin(), pages.end(),
            [](const PageHeat* a, const PageHeat* b) {
              const double da = a->rate / PagesOf(*a);
              const double db = b->rate / PagesOf(*b);
              if (da != db) return da > db;
              return HotterFirst(*a, *b);
            });
  absl::flat_hash_set<uint64_t> seen;
  seen.reserve(pages.size());
  for (const PageHeat* p : pages) {
    if (!seen.insert(p->vaddr).second) {
      ++skip[SkipReason::kDuplicate];
      continue;
    }
    const NodeState* n = Find(p->current_node);
    if (n == nullptr || !n->rank) {
      ++skip[SkipReason::kUnknownNode];
      continue;
    }
    double& rest = left[n->index];
    if (!(rest > 0) || !(p->rate > 0)) continue;  // not asked / sheds nothing
    // Charged at its upper bound (rule B's comment above).
    const double charge = std::max(p->rate, p->rate_hi);
    if (charge > rest) {
      ++skip[SkipReason::kBandwidth];
      continue;
    }
    SkipReason why = SkipReason::kCount;
    const DemoteResult r =
        TryDemote(*p, PlacementTrigger::kBandwidth, 0, &why, true);
    if (r != DemoteResult::kOk) {
      ++skip[why];
      if (why == SkipReason::kBudget) return;
      continue;
    }
    rest -= charge;
    ++decision_.shed_pages;
    decision_.shed_bytes += p->page_bytes;
    decision_.shed_rate_per_sec += p->rate;
  }
}

void Engine::TrackRange(uint64_t vaddr, int from, int to, int64_t bytes) {
  if (config_.interleave_tolerance < 0) return;
  const NumaMapsRange* r = RangeOf(vaddr);
  if (!IsInterleave(r)) return;
  range_delta_[{r, from}] -= bytes;
  range_delta_[{r, to}] += bytes;
}

bool Engine::RatioAllows(const NumaMapsRange& r, int from, int to,
                         uint64_t bytes, double* deficit) const {
  *deficit = 0;
  double total = 0;
  for (const auto& [node, pages] : r.pages_on_node) {
    total += static_cast<double>(pages) * static_cast<double>(r.page_size);
  }
  if (total <= 0) return true;  // nothing known: no ratio to keep
  auto bytes_on = [&](int node) {
    double b = 0;
    for (const auto& [n, pages] : r.pages_on_node) {
      if (n == node)
        b += static_cast<double>(pages) * static_cast<double>(r.page_size);
    }
    auto it = range_delta_.find(std::make_pair(&r, node));
    if (it != range_delta_.end()) b += static_cast<double>(it->second);
    return b;
  };
  // The policy's shares: equal for interleave, node weights (kernel's
  // weighted_interleave/nodeN, default 1) for weighted interleave.
  auto weight = [&](int node) -> double {
    if (r.mode != MempolicyMode::kWeightedInterleave) return 1;
    const NodeInfo* n = topo_.FindNode(node);
    return n != nullptr && n->weight && *n->weight > 0 ? *n->weight : 1;
  };
  double sum_w = 0;
  for (int n : r.nodes) sum_w += weight(n);
  auto share = [&](int node) {
    return Contains(r.nodes, node) ? weight(node) / sum_w : 0.0;
  };
  constexpr double kEps = 1e-9;
  const double tol = config_.interleave_tolerance;
  const double b = static_cast<double>(bytes);
  const double to_after = (bytes_on(to) + b) / total;
  const double from_after = (bytes_on(from) - b) / total;
  *deficit = share(to) - to_after;
  return to_after <= share(to) + tol + kEps &&
         (!Contains(r.nodes, from) || from_after >= share(from) - tol - kEps);
}

void Engine::ApplyRatioRule(const NumaMapsRange& r, const PageHeat& p,
                            std::vector<int>& order) const {
  std::vector<std::pair<double, int>> kept;  // (-deficit, node) in order
  for (int t : order) {
    double deficit = 0;
    if (RatioAllows(r, p.current_node, t, p.page_bytes, &deficit))
      kept.emplace_back(-deficit, t);
  }
  std::stable_sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    return a.first < b.first;
  });
  order.clear();
  for (const auto& k : kept) order.push_back(k.second);
}

void Engine::LocalityMoves() {
  if (!config_.locality) return;
  std::vector<const PageHeat*> pages =
      ValidPages(in_.hot_on_fast, decision_.locality_skipped);
  std::sort(
      pages.begin(), pages.end(),
      [](const PageHeat* a, const PageHeat* b) { return HotterFirst(*a, *b); });
  absl::flat_hash_set<uint64_t> seen;
  seen.reserve(pages.size());
  for (const PageHeat* p : pages) {
    if (!seen.insert(p->vaddr).second) {
      ++decision_.locality_skipped[SkipReason::kDuplicate];
      continue;
    }
    LocalityOne(*p);
  }
}

// Rule L: a private hot page on another node of its tier than its
// accessor's goes to the accessor's node, into free room only.
void Engine::LocalityOne(const PageHeat& p) {
  // Shared pages, unknown accessors and pages already local are not
  // locality candidates at all (not counted).
  if (p.shared || p.accessor_node < 0 || p.accessor_node == p.current_node)
    return;
  SkipCounts& skip = decision_.locality_skipped;
  const NodeState* cur = Find(p.current_node);
  const NodeState* dst = Find(p.accessor_node);
  if (cur == nullptr || !cur->rank || dst == nullptr) {
    ++skip[SkipReason::kUnknownNode];
    return;
  }
  if (moved_.contains(p.vaddr)) {
    ++skip[SkipReason::kDuplicate];
    return;
  }
  if (!dst->rank || *dst->rank != *cur->rank) {
    ++skip[SkipReason::kWrongTier];  // a tier change is rule 2's business
    return;
  }
  if (Held(p)) {
    ++skip[SkipReason::kHeld];
    return;
  }
  if (!(p.rate_lo > config_.min_promote_rate_lo_per_sec) ||
      p.samples < config_.locality_min_samples) {
    ++skip[SkipReason::kNotEnoughEvidence];
    return;
  }
  const NumaMapsRange* range = RangeOf(p.vaddr);
  if (range != nullptr && range->Forbids(dst->id)) {
    ++skip[SkipReason::kBindForbidden];
    return;
  }
  const bool prefer_many = range != nullptr &&
                           range->mode == MempolicyMode::kPreferredMany &&
                           !range->nodes.empty();
  if (!std::binary_search(promote_mask_.begin(), promote_mask_.end(),
                          dst->id) ||
      (prefer_many && !Contains(range->nodes, dst->id))) {
    ++skip[SkipReason::kOutsidePreferredMany];
    return;
  }
  if (dst->backed_off) {
    ++skip[SkipReason::kTargetBackedOff];
    return;
  }
  if (RatioRuleApplies(range)) {
    double deficit = 0;
    if (!RatioAllows(*range, p.current_node, dst->id, p.page_bytes, &deficit)) {
      ++skip[SkipReason::kInterleaveRatio];
      return;
    }
  }
  if (!HasRoomToPromote(dst->id, p.page_bytes)) {
    ++skip[SkipReason::kNoRoom];
    return;
  }
  if (!BudgetAllows(p.page_bytes, 1)) {
    ++skip[SkipReason::kBudget];
    return;
  }
  AddMove(p, dst->id, PlacementReason::kPromote, PlacementTrigger::kLocality,
          0);
  ++decision_.locality_pages;
  decision_.locality_bytes += p.page_bytes;
}

void Engine::Promotions() {
  std::vector<const PageHeat*> cands =
      ValidPages(in_.candidates, decision_.promote_skipped);
  std::sort(
      cands.begin(), cands.end(),
      [](const PageHeat* a, const PageHeat* b) { return HotterFirst(*a, *b); });
  absl::flat_hash_set<uint64_t> seen;
  seen.reserve(cands.size());
  for (const PageHeat* c : cands) {
    if (!seen.insert(c->vaddr).second) {
      ++decision_.promote_skipped[SkipReason::kDuplicate];
      continue;
    }
    PromoteOne(*c);
  }
}

void Engine::Finish() {
  decision_.nodes.reserve(nodes_.size());
  for (const NodeState& n : nodes_) {
    NodePlan p;
    p.node = n.id;
    if (n.known) p.free_before = n.free_before;
    p.free_after =
        n.known ? static_cast<uint64_t>(std::max<int64_t>(n.free, 0)) : 0;
    p.low_bytes = n.low;
    p.high_bytes = n.high;
    p.backed_off = n.backed_off;
    p.below_low = n.below_low;
    decision_.nodes.push_back(p);
  }
  std::sort(
      decision_.nodes.begin(), decision_.nodes.end(),
      [](const NodePlan& a, const NodePlan& b) { return a.node < b.node; });
}

PlacementDecision Engine::Run() {
  Setup();
  strategy_.BeginRound(*this);
  WatermarkDemotions();
  BandwidthSheds();
  Promotions();
  LocalityMoves();
  Finish();
  return std::move(decision_);
}

}  // namespace

const NumaMapsRange* FindRange(absl::Span<const NumaMapsRange* const> sorted,
                               uint64_t vaddr) {
  auto it = std::upper_bound(
      sorted.begin(), sorted.end(), vaddr,
      [](uint64_t a, const NumaMapsRange* r) { return a < r->start; });
  if (it == sorted.begin()) return nullptr;
  const NumaMapsRange* r = *(it - 1);
  // end == 0 (not joined with maps): up to the next range's start, which
  // upper_bound already guarantees.
  if (r->end != 0 && vaddr >= r->end) return nullptr;
  return r;
}

NodeWatermarks WatermarksFor(const PlacementConfig& config,
                             const Topology& topology, int node) {
  // The last override for a node wins.
  for (auto it = config.watermarks.rbegin(); it != config.watermarks.rend();
       ++it) {
    if (it->node == node) return *it;
  }
  NodeWatermarks wm;
  wm.node = node;
  if (const NodeInfo* n = topology.FindNode(node)) {
    const double bytes = static_cast<double>(n->memory_bytes);
    wm.low_bytes = static_cast<uint64_t>(bytes * config.low_watermark_fraction);
    wm.high_bytes =
        static_cast<uint64_t>(bytes * config.high_watermark_fraction);
  }
  return wm;
}

std::vector<NodeWatermarks> KernelFloorWatermarks(
    const PlacementConfig& config, const Topology& topology,
    absl::Span<const NodeFloor> floors) {
  std::vector<NodeWatermarks> out;
  for (const NodeInfo& n : topology.nodes) {
    const bool given =
        std::any_of(config.watermarks.begin(), config.watermarks.end(),
                    [&n](const NodeWatermarks& w) { return w.node == n.id; });
    if (given) continue;
    uint64_t floor = 0;
    for (const NodeFloor& f : floors) {
      if (f.node == n.id) floor = std::max(floor, f.bytes);
    }
    const NodeWatermarks wm = WatermarksFor(config, topology, n.id);
    if (floor <= wm.low_bytes) continue;
    const uint64_t gap = wm.high_bytes - wm.low_bytes;
    out.push_back(
        {n.id, floor, floor > UINT64_MAX - gap ? UINT64_MAX : floor + gap});
  }
  return out;
}

absl::Status ValidatePlacementConfig(const PlacementConfig& config,
                                     const Topology& topology) {
  for (int n : config.promote_to) {
    if (topology.FindNode(n) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "promote_to: node ", n,
          " is not an online memory node; see `hotpage topology`"));
    }
  }
  auto fraction_ok = [](double f) { return f >= 0 && f <= 1; };
  if (!fraction_ok(config.low_watermark_fraction) ||
      !fraction_ok(config.high_watermark_fraction) ||
      config.low_watermark_fraction > config.high_watermark_fraction) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "watermark fractions low=%g high=%g: need 0 <= low <= high <= 1",
        config.low_watermark_fraction, config.high_watermark_fraction));
  }
  if (!(config.interleave_tolerance <= 1)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "keep_interleave: tolerance %g: need a fraction <= 1 (negative: off)",
        config.interleave_tolerance));
  }
  if (config.weights.source != WeightsConfig::Source::kNone) {
    if (absl::StatusOr<std::vector<NodeWeight>> w =
            ResolveWeights(config.weights, topology);
        !w.ok()) {
      return absl::Status(w.status().code(),
                          absl::StrCat("weights: ", w.status().message()));
    }
  }
  for (const NodeWatermarks& w : config.watermarks) {
    if (topology.FindNode(w.node) == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("watermark for node ", w.node, ": no such online node"));
    }
    if (w.low_bytes > w.high_bytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("watermark for node ", w.node, ": low ", w.low_bytes,
                       " > high ", w.high_bytes));
    }
  }
  return absl::OkStatus();
}

PlacementDecision DecideMoves(const PlacementInput& input,
                              const PlacementConfig& config,
                              TargetStrategy& strategy) {
  if (input.topology == nullptr) return {};
  Engine engine(input, config, strategy);
  return engine.Run();
}

PlacementDecision DecideMoves(const PlacementInput& input,
                              const PlacementConfig& config) {
  if (input.topology != nullptr) {
    absl::StatusOr<std::unique_ptr<TargetStrategy>> strategy =
        MakeTargetStrategy(config, *input.topology);
    if (strategy.ok()) return DecideMoves(input, config, **strategy);
  }
  NearestTargetStrategy strategy;
  return DecideMoves(input, config, strategy);
}

}  // namespace hotpage
