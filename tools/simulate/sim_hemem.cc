#include "tools/simulate/sim_hemem.h"

#include <algorithm>

namespace hotpage {

HememPolicy::HememPolicy(std::unique_ptr<SimulatedMemory> memory,
                         const HememOptions& options)
    : PeriodicPolicy("hemem", std::move(memory), options.period_ns),
      options_(options) {
  budget_pages_ = std::max<uint64_t>(
      static_cast<uint64_t>(options_.migrate_bytes_per_sec *
                            static_cast<double>(options_.period_ns) / 1e9 /
                            static_cast<double>(kSimPageBytes)),
      1);
}

uint32_t HememPolicy::ReadsOf(uint64_t vaddr) const {
  const Page* p = pages_.Find(vaddr);
  if (p == nullptr) return 0;
  const uint64_t shift = global_clock_ - p->local_clock;
  return shift >= 32 ? 0 : p->reads >> shift;
}

uint32_t HememPolicy::WritesOf(uint64_t vaddr) const {
  const Page* p = pages_.Find(vaddr);
  if (p == nullptr) return 0;
  const uint64_t shift = global_clock_ - p->local_clock;
  return shift >= 32 ? 0 : p->writes >> shift;
}

bool HememPolicy::IsHot(uint64_t vaddr) const {
  const Page* p = pages_.Find(vaddr);
  return p != nullptr && (p->list == kFastHot || p->list == kSlowHot);
}

void HememPolicy::Cool(Page& p) {
  // pebs.c: accesses[j] >>= (global_clock - local_clock).
  const uint64_t shift = global_clock_ - p.local_clock;
  if (shift >= 32) {
    p.reads = p.writes = 0;
  } else if (shift > 0) {
    p.reads >>= shift;
    p.writes >>= shift;
  }
  p.local_clock = global_clock_;
}

bool HememPolicy::HotCounts(const Page& p) const {
  return p.reads >= options_.hot_read_threshold ||
         p.writes >= options_.hot_write_threshold;
}

void HememPolicy::Remove(uint32_t i) {
  Page& p = pages_[i];
  if (p.list == kNone) return;
  lists_[p.list].Unlink(pages_, i);
  p.list = kNone;
}

void HememPolicy::Enqueue(uint32_t i, List list) {
  Remove(i);
  pages_[i].list = list;
  lists_[list].PushBack(pages_, i);
}

uint32_t HememPolicy::Dequeue(List list) {
  const uint32_t i = lists_[list].head;
  if (i != kNil) Remove(i);
  return i;
}

HememPolicy::List HememPolicy::ListFor(int node, bool hot) const {
  if (memory().is_fast(node)) return hot ? kFastHot : kFastCold;
  return hot ? kSlowHot : kSlowCold;
}

void HememPolicy::Access(const Sample& s, int node) {
  const auto [i, added] = pages_.FindOrAdd(s.vaddr);
  if (added) {
    pages_[i].local_clock = global_clock_;
    // pebs_allocate_page(): a new page starts on its tier's cold list.
    Enqueue(i, ListFor(node, false));
  }
  Page& p = pages_[i];
  Cool(p);
  const bool store =
      (s.flags & kSampleStore) != 0 || s.source == SampleSource::kPebsStore;
  uint32_t& count = store ? p.writes : p.reads;
  if (count < UINT32_MAX) ++count;
  ++(store ? writes_ : reads_);
  // make_hot() / make_cold(): the page changes list within its tier.
  const bool hot = HotCounts(p);
  const bool on_hot = p.list == kFastHot || p.list == kSlowHot;
  if (hot != on_hot) Enqueue(i, ListFor(node, hot));
  // A count reaching the cooling threshold halves every count: lazily,
  // by advancing the global clock.
  if (count >= options_.cooling_threshold) {
    ++global_clock_;
    ++coolings_;
    cool_fast_remaining_ = lists_[kFastHot].size;
    cool_slow_remaining_ = lists_[kSlowHot].size;
  }
}

void HememPolicy::Tick(uint64_t now) {
  ++runs_;
  SimulatedMemory& mem = memory();
  const std::vector<int>& fast = mem.fast_nodes();
  uint64_t moved = 0;
  while (moved < budget_pages_) {
    const uint32_t i = Dequeue(kSlowHot);
    if (i == kNil) break;  // nothing hot on the slow tier
    Page& p = pages_[i];
    Cool(p);
    if (!HotCounts(p)) {
      // Cooled since it was listed.
      Enqueue(i, kSlowCold);
      continue;
    }
    bool promoted = false, stop = false;
    for (int tries = 0; tries < 2 && !promoted && !stop; ++tries) {
      int target = -1;
      for (int n : fast) {
        if (mem.free_pages(n) > 0) {
          target = n;
          break;
        }
      }
      if (target >= 0) {
        if (mem.Move(p.vaddr, target, now).status == target) {
          Enqueue(i, kFastHot);
          ++promotions_;
          ++moved;
          promoted = true;
        } else {
          stop = true;
        }
        continue;
      }
      // No free fast page: demote the fast cold list's first page.
      const uint32_t c = Dequeue(kFastCold);
      if (c == kNil) {
        // Every fast page is hot: back to the hot list, end of this run.
        ++all_fast_hot_;
        stop = true;
        break;
      }
      const int from = mem.NodeOf(pages_[c].vaddr);
      bool demoted = false;
      for (int to : mem.DemotionTargets(from)) {
        if (mem.free_pages(to) == 0) continue;
        if (mem.Move(pages_[c].vaddr, to, now).status == to) {
          demoted = true;
          break;
        }
      }
      if (!demoted) {
        Enqueue(c, kFastCold);
        stop = true;
        break;
      }
      Enqueue(c, kSlowCold);
      ++demotions_;
    }
    if (!promoted) {
      Enqueue(i, kSlowHot);
      break;
    }
  }
  PartialCool(kFastHot, kFastCold, cool_fast_remaining_);
  PartialCool(kSlowHot, kSlowCold, cool_slow_remaining_);
}

void HememPolicy::PartialCool(List hot, List cold, uint64_t& remaining) {
  remaining = std::min(remaining, lists_[hot].size);
  for (uint32_t n = 0; n < options_.cooling_pages && remaining > 0;
       ++n, --remaining) {
    const uint32_t i = Dequeue(hot);
    Page& p = pages_[i];
    Cool(p);
    if (HotCounts(p)) {
      Enqueue(i, hot);
    } else {
      Enqueue(i, cold);
      ++cooled_on_list_;
    }
  }
}

std::vector<std::pair<std::string, uint64_t>> HememPolicy::Details() const {
  return {
      {"read_samples", reads_},
      {"write_samples", writes_},
      {"coolings", coolings_},
      {"runs", runs_},
      {"promotions", promotions_},
      {"demotions", demotions_},
      {"cooled_on_hot_list", cooled_on_list_},
      {"runs_with_every_fast_page_hot", all_fast_hot_},
  };
}

}  // namespace hotpage
