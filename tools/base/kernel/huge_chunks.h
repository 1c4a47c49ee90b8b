// Where a process's transparent huge pages are: /proc/PID/smaps, then
// /proc/PID/pagemap and /proc/kpageflags for the VMAs smaps cannot settle,
// all read through KernelFs so tests can fake them (a pagemap written as a
// sparse file in a FakeTree).
//
// Used by attach's memory view (tools/live_memory_view.h) so that the policy
// engine moves a 2 MiB page as one unit. Cost: one smaps read per round plus
// two 8-byte reads per 2 MiB chunk of a partly THP-backed VMA, unless the
// machine has no anonymous THP at all (NoAnonHugePages: one /proc/vmstat
// read). The smaps read walks every page table of the process: 13-87 ms a
// round for a 256 MiB process in the TCG guest of tests/compare, where
// no THP existed.

#ifndef HOTPAGE_TOOLS_BASE_KERNEL_HUGE_CHUNKS_H_
#define HOTPAGE_TOOLS_BASE_KERNEL_HUGE_CHUNKS_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {

// Whether /proc/vmstat says the machine has no anonymous PMD-size THP
// (nr_anon_transparent_hugepages 0). Exact: the counter moves by a whole
// huge page (512 base pages), more than any per-CPU batching threshold
// (at most 125), so every change reaches the global count at once.
// Unreadable, or the field missing: false (unknown).
bool NoAnonHugePages(const KernelFs& fs);

// The 2 MiB-aligned chunks of `pid`'s memory backed by transparent huge
// pages, ascending, at most `max_chunks`. From /proc/PID/smaps: a VMA whose
// anonymous memory is all AnonHugePages has every aligned chunk inside it
// counted; a VMA only partly THP-backed has each aligned chunk checked in
// /proc/PID/pagemap (PFN of its first page; needs CAP_SYS_ADMIN, else the
// PFN reads 0 and the chunk is skipped) and /proc/kpageflags (KPF_THP, bit
// 22). Unreadable smaps is an error; unreadable pagemap/kpageflags entries
// skip their chunk. With NoAnonHugePages: none, without reading smaps.
absl::StatusOr<std::vector<uint64_t>> FindHugeChunks(const KernelFs& fs,
                                                     pid_t pid,
                                                     size_t max_chunks);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_BASE_KERNEL_HUGE_CHUNKS_H_
