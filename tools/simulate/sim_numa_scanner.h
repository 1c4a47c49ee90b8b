// NumaScanner: the kernel's NUMA scanner in memory-tiering mode
// (numa_balancing=2), Linux 6.12, over one simulated address space: which
// page accesses are NUMA hint faults.
//
// Two users, one model:
// - the tpp peer (sim_baselines.h), whose promotions happen in those
//   faults;
// - the hotpage policy with `--source hintfault` (sim_fault_source.h),
//   which, as `hotpage attach --source hintfault` does, turns the scanner
//   on with the kernel's promotion rate limit at 0 and reads the faults as
//   its samples.
//
// What it models (kernel/sched/fair.c, mm/mprotect.c; each checked in the
// 6.12 sources):
// - the passes (task_numa_work()): the first runs scan_delay (1000 ms)
//   after Start (the mm's numa_next_scan starts at now + scan_delay); every
//   pass sets the next one at now + the task's scan period, then walks the
//   address space from where the last pass stopped and arms
//   (change_prot_numa(): the PTE made PROT_NONE) every present page on a
//   slower tier that is not armed already, stamping it with the pass's time
//   (change_pte_range(): folio_xchg_access_time() for a non-top-tier folio;
//   top-tier folios are skipped in tiering-only mode, and PTEs already
//   PROT_NONE are skipped, so an armed page keeps its older stamp). A pass
//   covers at most scan_size (256 MB) of ranges it changed and 8x that of
//   address space (`pages`, `virtpages`); reaching the end starts the next
//   sequence (reset_ptenuma_scan()). The address space is the pages the
//   owner added so far, as one VMA (6.12 scans a VMA its task did not fault
//   on recently only when nothing else is left, f169c62ff7cd, or after
//   nr_threads sequences: with one VMA it is always scanned);
// - the faults: an access of an armed page is a hint fault, which disarms
//   it (do_numa_page() restores the PTE whatever it decides); an access
//   served from the top tier disarms without a fault (only slow-tier pages
//   are ever armed; a present_at_start page that first touch put on the top
//   tier was not). The owner's samples stand for the accesses: the first
//   sample of an armed page is its fault;
// - the scan period (task_scan_start()/task_scan_min()/task_scan_max()):
//   it starts at max(scan_period_min / windows, 100 ms), windows = the
//   footprint in scan-size windows rounded up, and is bounded by
//   scan_period_max / windows. update_task_scan_period() runs at the first
//   counted fault after each new sequence (task_numa_placement()), which
//   the owner reports (CountedFault): in tiering mode a fault on a
//   slow-tier page is not counted (task_numa_fault() returns early for a
//   non-top-tier mem_node), so only a promotion inside the fault counts,
//   and it is remote and private (sim_baselines.h, tpp): the period
//   doubles (up to the max) and pushes the next pass to now + period. With
//   the promotion rate limit at 0 no fault promotes, and the period stays;
// - the 3% cap (task_numa_work(): the task's node_stamp moves 32x the
//   pass's runtime ahead, so its next pass waits that long beyond the
//   period), when scan_ns_per_pte (the machine's cost of changing one PTE)
//   is given: a pass walks every PTE of the span it covers.
//
// Not modelled: per-thread periods and runtimes (the trace has one
// thread's samples and no runtimes), VMAs, THP (the simulated memory has
// 4 KiB pages only).
//
// Pages are the owner's: AddPage(vaddr) for each page the owner samples
// for the first time, in the order of the owner's indices (0, 1, ...), so
// that the scanner's index of a page is the owner's. Thread-compatible.

#ifndef HOTPAGE_TOOLS_SIMULATE_SIM_NUMA_SCANNER_H_
#define HOTPAGE_TOOLS_SIMULATE_SIM_NUMA_SCANNER_H_

#include <cstdint>
#include <vector>

#include "tools/simulate/simulated_memory.h"

namespace hotpage {

struct NumaScannerOptions {
  uint64_t scan_delay_ns = 1000000000;        // numa_balancing_scan_delay_ms
  uint64_t scan_period_min_ns = 1000000000;   // ..._scan_period_min_ms
  uint64_t scan_period_max_ns = 60000000000;  // ..._scan_period_max_ms
  uint64_t scan_size_bytes = uint64_t{256} << 20;  // ..._scan_size_mb
  // The trace's pages were placed before it began (`--first-touch-node`:
  // hot_set_workload writes its whole area first): a page first sampled
  // after the first pass was present for that pass, which armed it (an
  // unsampled page made no access that would have disarmed it), so it
  // carries that pass's stamp. A pass covers the whole address space
  // whenever it spans less than the scan size (256 MB); larger traces are
  // approximated by the first pass's time.
  bool present_at_start = false;
  // The cost of changing one PTE, for the 3% cap; 0: not modelled (on a
  // server a 256 MB pass takes milliseconds, far below the 1 s period;
  // under emulation it is ~1000x that: tests/compare/calibrate.sh measures
  // it in the guest, hot_set_workload's pte_ns).
  uint64_t scan_ns_per_pte = 0;
};

class NumaScanner {
 public:
  // `memory` (the owner's) must outlive the scanner.
  NumaScanner(const SimulatedMemory& memory, const NumaScannerOptions& options);

  // The first sample's time: the first pass is due scan_delay after it.
  void Start(uint64_t start_ns);
  // When the next pass is due; UINT64_MAX before Start.
  uint64_t next_scan_ns() const { return next_scan_ns_; }
  // Runs every pass due at or before `now_ns`, in order.
  void Advance(uint64_t now_ns);

  // The owner sampled the page at `vaddr` for the first time; it is the
  // owner's page number size() (the header: indices are the owner's).
  void AddPage(uint64_t vaddr);
  size_t size() const { return pages_.size(); }
  // Page i was accessed and the access served from `node`: whether it was a
  // hint fault (the page was armed; it no longer is). An access served
  // from the top tier disarms the page and is no fault.
  bool Access(uint32_t i, int node);
  // The time of the pass that armed page i (its fault's latency runs from
  // it: numa_hint_fault_latency()). Meaningful while armed and at the
  // fault that disarmed it.
  uint64_t armed_at_ns(uint32_t i) const { return pages_[i].stamp_ns; }
  bool armed(uint32_t i) const { return pages_[i].armed; }
  // A fault task_numa_fault() counts (a promotion inside the fault): the
  // first after each new sequence doubles the period (the header).
  void CountedFault(uint64_t now_ns);

  uint64_t scan_period_ns() const { return scan_period_ns_; }
  uint64_t scan_seq() const { return scan_seq_; }
  uint64_t scans() const { return scans_; }
  uint64_t pte_updates() const { return pte_updates_; }
  uint64_t period_doublings() const { return period_doublings_; }
  uint64_t scan_cost_ns() const { return scan_cost_ns_; }

 private:
  struct Page {
    uint64_t vaddr = 0;
    uint64_t stamp_ns = 0;  // the arming pass's time
    bool armed = false;     // PROT_NONE since the last pass that armed it
  };
  // task_numa_work() at `now`.
  void Scan(uint64_t now);
  // The 3% cap after a pass that walked `ptes` PTEs.
  void ChargeScan(uint64_t now, uint64_t ptes);
  uint64_t Windows() const;
  uint64_t ScanMinNs() const;
  uint64_t ScanMaxNs() const;

  const SimulatedMemory& memory_;
  const NumaScannerOptions options_;
  std::vector<Page> pages_;        // by the owner's index
  std::vector<uint32_t> by_addr_;  // pages_ indices, ascending address
  uint64_t next_scan_ns_ = UINT64_MAX;
  uint64_t first_scan_ns_ = 0;
  uint64_t mm_next_scan_ns_ = 0;  // mm->numa_next_scan
  uint64_t stamp_ns_ = 0;         // the task's node_stamp, as a time
  uint64_t scan_period_ns_ = 0;
  uint64_t scan_seq_ = 0, task_scan_seq_ = 0;
  uint64_t scan_offset_page_ = 0;  // page number the next pass starts at
  uint64_t scans_ = 0, pte_updates_ = 0, period_doublings_ = 0,
           scan_cost_ns_ = 0;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_SIMULATE_SIM_NUMA_SCANNER_H_
