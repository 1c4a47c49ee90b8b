// The HeMem model for the replay simulator: HeMem (Raybuck et al., "HeMem:
// Scalable Tiered Memory Management for Big Data Applications and Real
// NVM", SOSP'21), the user-space library that samples loads and stores
// with PEBS and migrates 2 MB pages between DRAM and NVM from a policy
// thread. Its tunables are compile-time #defines (src/pebs.h of the
// HeMem repository); the values below are the paper's.
//
// Mechanism, as the paper (section 3) and its pebs.c describe it:
//
//   sample --> per-page counts: reads and writes (the trace's stores:
//     |        Sample::flags & kSampleStore, or source kPebsStore)
//     |        lazily cooled: count >>= (global_clock - page's clock)
//     |        before it is used; a count reaching the cooling threshold
//     |        advances global_clock, which halves every page's counts
//     v        (lazily, the next time each is looked at)
//   hot when reads >= 8 or writes >= 4; otherwise cold. Every page sits on
//     |        one of four FIFO lists: {fast, slow} x {hot, cold}; a
//     |        sample that changes a page's class moves it between its
//     |        tier's hot and cold lists (make_hot / make_cold)
//     v
//   policy thread, every 10 ms: takes slow-tier hot pages in FIFO order;
//     one that has cooled since it was listed goes to the slow cold list;
//     otherwise it moves to a fast node with a free page, or, if none has
//     one, the fast cold list's first page is demoted to make room (if that
//     list is empty every fast page is hot: the page goes back to the end
//     of the hot list and the run ends). Up to the migration budget per
//     run. Then partial cooling: after a cooling event, up to 8192 pages of
//     each hot list per run whose cooled counts are cold move to their
//     cold list (pebs.c partial_cool_peek_and_move).
//
// Parameters (HememOptions), each with its source:
//   hot_read_threshold 8, hot_write_threshold 4: the paper's thresholds
//     (section 3.2: a page is hot after 8 sampled reads or 4 sampled
//     writes; later forks of the code lower both to 4);
//   cooling_threshold 18: the paper's cooling threshold (section 3.2:
//     when a page's count reaches it, every count is halved; HeMem does
//     it lazily with a global clock, as modelled);
//   period_ns 10 ms: PEBS_KSWAPD_INTERVAL, the policy thread's period;
//   migrate_bytes_per_sec 10 GB/s: the policy thread's migration budget
//     (PEBS_KSWAPD_MIGRATE_RATE, 10 GB); charged here as 10 GB/s, i.e.
//     100 MB = 25600 4 KiB pages per 10 ms run. At the simulator's
//     footprints (thousands to tens of thousands of pages) neither reading
//     ever binds;
//   cooling_pages 8192: COOLING_PAGES, pages partial cooling looks at per
//     list and run.
// None of these is fitted to the bundled traces.
//
// Not modelled:
//   - 2 MB pages: the simulator moves 4 KiB pages; HeMem's counts are per
//     2 MB page, so a 4 KiB page here reaches the thresholds on its own
//     samples only (a finer grain than HeMem's; its samples per page are
//     fewer by the same factor, which the thresholds do not rescale);
//   - sample rate: the thresholds count the trace's samples as HeMem
//     counts its PEBS samples (period 5003-19997 in its evaluation); a
//     trace sampled more densely reaches them sooner. Like HeMem's, the
//     thresholds are absolute and not adapted;
//   - the hot/cold request rings between the sampling and the policy
//     thread: list changes happen at sample time (HeMem applies them at
//     the policy thread's next run, at most 10 ms later), and its limit of
//     128 cold requests per run is not applied;
//   - DMA copies and write-protection during a copy: a move costs what
//     SimulatedMemory's MigrationCost says, at once;
//   - NUMA: HeMem manages one DRAM and one NVM pool. Here every node of
//     the fastest tier is "DRAM" (a promotion goes to the first fast node
//     with a free page) and every other node "NVM" (a demotion goes to the
//     nearest demotion target with room).
//
// Thread-compatible (the simulation's thread).

#ifndef HOTPAGE_TOOLS_SIMULATE_SIM_HEMEM_H_
#define HOTPAGE_TOOLS_SIMULATE_SIM_HEMEM_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tools/simulate/sim_baselines.h"
#include "tools/simulate/sim_policy.h"

namespace hotpage {

struct HememOptions {
  uint32_t hot_read_threshold = 8;      // HeMem section 3.2
  uint32_t hot_write_threshold = 4;     // HeMem section 3.2
  uint32_t cooling_threshold = 18;      // HeMem section 3.2
  uint64_t period_ns = 10000000;        // PEBS_KSWAPD_INTERVAL, 10 ms
  double migrate_bytes_per_sec = 10e9;  // PEBS_KSWAPD_MIGRATE_RATE, 10 GB
  uint32_t cooling_pages = 8192;        // COOLING_PAGES
};

class HememPolicy : public PeriodicPolicy {
 public:
  HememPolicy(std::unique_ptr<SimulatedMemory> memory,
              const HememOptions& options);
  std::vector<std::pair<std::string, uint64_t>> Details() const override;

  // Tests: a page's counts as cooled to the current global clock (0 for a
  // page never sampled), whether it is on a hot list, the clock.
  uint32_t ReadsOf(uint64_t vaddr) const;
  uint32_t WritesOf(uint64_t vaddr) const;
  bool IsHot(uint64_t vaddr) const;
  uint64_t global_clock() const { return global_clock_; }

 protected:
  void Access(const Sample& s, int node) override;

 private:
  static constexpr uint32_t kNil = IndexList::kNil;
  // The four lists: kFast/kSlow + kHot/kCold.
  enum List : uint8_t { kNone = 0, kFastHot, kFastCold, kSlowHot, kSlowCold };
  static constexpr int kLists = 5;
  struct Page {
    uint64_t vaddr = 0;
    uint64_t local_clock = 0;
    uint32_t reads = 0, writes = 0;
    uint32_t prev = kNil, next = kNil;
    List list = kNone;
  };
  // Brings a page's counts to the global clock.
  void Cool(Page& p);
  bool HotCounts(const Page& p) const;
  void Remove(uint32_t i);
  void Enqueue(uint32_t i, List list);  // at the tail
  uint32_t Dequeue(List list);          // from the head; kNil if empty
  List ListFor(int node, bool hot) const;
  // The policy thread's run, every period_ns.
  void Tick(uint64_t now) override;
  void PartialCool(List hot, List cold, uint64_t& remaining);

  const HememOptions options_;
  uint64_t budget_pages_ = 0;  // per run
  SampledPages<Page> pages_;
  IndexList lists_[kLists];  // FIFOs: dequeued at the head
  uint64_t global_clock_ = 0;
  // Pages of each hot list partial cooling still has to look at since the
  // last cooling event (0: no cooling pending).
  uint64_t cool_fast_remaining_ = 0, cool_slow_remaining_ = 0;
  uint64_t reads_ = 0, writes_ = 0, coolings_ = 0, runs_ = 0;
  uint64_t promotions_ = 0, demotions_ = 0, cooled_on_list_ = 0,
           all_fast_hot_ = 0;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_SIMULATE_SIM_HEMEM_H_
