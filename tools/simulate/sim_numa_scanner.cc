#include "tools/simulate/sim_numa_scanner.h"

#include <algorithm>

namespace hotpage {

NumaScanner::NumaScanner(const SimulatedMemory& memory,
                         const NumaScannerOptions& options)
    : memory_(memory), options_(options) {}

void NumaScanner::Start(uint64_t start_ns) {
  // The mm's numa_next_scan starts scan_delay ahead (task_numa_work()).
  next_scan_ns_ = start_ns + options_.scan_delay_ns;
  scan_period_ns_ = ScanMinNs();  // task_scan_start(): no numa_group
}

uint64_t NumaScanner::Windows() const {
  // task_nr_scan_windows(): the footprint in scan-size windows, rounded up.
  const uint64_t window_pages =
      std::max<uint64_t>(options_.scan_size_bytes / kSimPageBytes, 1);
  return std::max<uint64_t>((pages_.size() + window_pages - 1) / window_pages,
                            1);
}

uint64_t NumaScanner::ScanMinNs() const {
  // task_scan_min(): floor = 1000 ms / (MAX_SCAN_WINDOW 2560 MB / scan size).
  const uint64_t scan_mb =
      std::max<uint64_t>(options_.scan_size_bytes >> 20, 1);
  const uint64_t floor_ns =
      scan_mb < 2560 ? 1000000000 / (2560 / scan_mb) : 1000000000;
  return std::max(floor_ns, options_.scan_period_min_ns / Windows());
}

uint64_t NumaScanner::ScanMaxNs() const {
  return std::max(ScanMinNs(), options_.scan_period_max_ns / Windows());
}

void NumaScanner::Advance(uint64_t now_ns) {
  while (next_scan_ns_ <= now_ns) Scan(next_scan_ns_);
}

void NumaScanner::AddPage(uint64_t vaddr) {
  Page p;
  p.vaddr = vaddr / kSimPageBytes * kSimPageBytes;
  // A page placed before the trace was there for the first pass (the
  // header: present_at_start).
  if (options_.present_at_start && scans_ > 0) {
    p.armed = true;
    p.stamp_ns = first_scan_ns_;
  }
  pages_.push_back(p);
}

bool NumaScanner::Access(uint32_t i, int node) {
  Page& p = pages_[i];
  const bool fault = p.armed && memory_.tier(node) != 0;
  p.armed = false;
  return fault;
}

void NumaScanner::Scan(uint64_t now) {
  // task_numa_work(): the next pass is due one period from now, set before
  // this one runs.
  mm_next_scan_ns_ = now + scan_period_ns_;
  next_scan_ns_ = mm_next_scan_ns_;
  if (scans_++ == 0) first_scan_ns_ = now;
  if (by_addr_.size() != pages_.size()) {
    for (uint32_t i = static_cast<uint32_t>(by_addr_.size()); i < pages_.size();
         ++i)
      by_addr_.push_back(i);
    std::sort(by_addr_.begin(), by_addr_.end(), [&](uint32_t a, uint32_t b) {
      return pages_[a].vaddr < pages_[b].vaddr;
    });
  }
  // `pages` counts the ranges that had a PTE changed, `virtpages` all of
  // them (8x); address-space holes between sampled pages count as ranges
  // without present pages.
  const uint64_t budget = options_.scan_size_bytes / kSimPageBytes;
  const uint64_t virt_budget = 8 * budget;
  auto first =
      std::lower_bound(by_addr_.begin(), by_addr_.end(), scan_offset_page_,
                       [&](uint32_t i, uint64_t page) {
                         return pages_[i].vaddr / kSimPageBytes < page;
                       });
  const uint64_t start_page =
      first == by_addr_.end() ? 0 : pages_[*first].vaddr / kSimPageBytes;
  bool changed = false;
  uint64_t walked = 0;
  for (auto it = first; it != by_addr_.end(); ++it) {
    Page& p = pages_[*it];
    const uint64_t page = p.vaddr / kSimPageBytes;
    const uint64_t span = page - start_page;
    if ((changed && span >= budget) || span >= virt_budget) {
      scan_offset_page_ = page;  // the next pass continues here
      ChargeScan(now, span);
      return;
    }
    walked = span + 1;
    // change_pte_range(): top-tier folios are skipped in tiering-only mode,
    // PROT_NONE PTEs are skipped (an armed page keeps its older stamp).
    const int node = memory_.NodeOf(p.vaddr);
    if (node < 0 || memory_.tier(node) == 0 || p.armed) continue;
    p.armed = true;
    p.stamp_ns = now;  // folio_xchg_access_time()
    changed = true;
    ++pte_updates_;
  }
  // reset_ptenuma_scan(): the end of the address space starts a sequence.
  ++scan_seq_;
  scan_offset_page_ = 0;
  ChargeScan(now, walked);
}

void NumaScanner::ChargeScan(uint64_t now, uint64_t ptes) {
  // task_numa_work(): p->node_stamp += 32 * (the pass's runtime), so the
  // task's next pass (task_tick_numa(): runtime > node_stamp + period)
  // waits 32x the pass beyond the period.
  const uint64_t cost = ptes * options_.scan_ns_per_pte;
  scan_cost_ns_ += cost;
  stamp_ns_ = now + 32 * cost;
  next_scan_ns_ = std::max(mm_next_scan_ns_, stamp_ns_ + scan_period_ns_);
}

void NumaScanner::CountedFault(uint64_t now) {
  // task_numa_placement() runs once per sequence; its
  // update_task_scan_period() finds local + shared == 0 (the header),
  // doubles the period and pushes the next pass out.
  if (task_scan_seq_ == scan_seq_) return;
  task_scan_seq_ = scan_seq_;
  scan_period_ns_ = std::min(ScanMaxNs(), 2 * scan_period_ns_);
  mm_next_scan_ns_ = now + scan_period_ns_;
  next_scan_ns_ = std::max(mm_next_scan_ns_, stamp_ns_ + scan_period_ns_);
  ++period_doublings_;
}

}  // namespace hotpage
