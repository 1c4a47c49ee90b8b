// FirstTouchFilter: drops the page-fault samples of the hint-fault source
// that may be a process's first touches of its pages.
//
// Under NUMA balancing's tiering mode hotpage senses the accesses to
// slow-tier pages as the faults on the PROT_NONE PTEs the kernel's scanner
// leaves (numa_balancing_controller.h), read by the page-fault software
// event (sampler/perf). That event counts every fault the task takes, and a
// first touch -- a page the process never had: new anonymous memory, a file
// page not yet mapped -- is one too. Nothing in the sample tells them
// apart: both are minor faults at a user address; x86's error code reports
// the PROT_NONE PTE as not present, as it reports a PTE never filled
// (arch/x86/mm/fault.c: no X86_PF_PROT for either); the event fires in
// do_user_addr_fault before either is resolved, so a physical address is
// known for neither. A first touch is no evidence of heat (a process that
// allocates 192 MiB faults every page of it once), but read as a hint fault
// it is a slow-tier page to promote at once (hint faults are placed as they
// arrive: tools/attach/attach_engine.h). In daemon_hint_vm_test a process
// started after the daemon, whose first touches landed on the slow node, had
// 42-47k pages promoted where the three hot sets have 18,432.
//
// What does tell them apart is the resident set: a first touch adds a page
// to it (512 with a transparent huge page), a hint fault does not. So the
// filter keeps a budget, the growth of the process's resident set (statm)
// over the last `growth_window_ns`, in 4 KiB pages, and remembers the pages
// it saw (a hashed bitmap per generation, two generations). A sample on a
// page not seen in either generation, while budget remains, is taken for a
// first touch: dropped, and a page of the budget spent. Everything else
// passes: a page seen before (its second fault is no first touch, unless
// the page was freed and touched anew), and every sample once the budget is
// spent (the growth is accounted for). Every sample's page is remembered,
// and its 2 MiB chunk too.
//
// Transparent huge pages: a huge page takes its first touch at one address
// and each hint fault after at whichever of its 512 pages is touched first,
// so its 4 KiB pages are not what identifies it. Given the engine's THP-
// backed chunks (SetHugeChunks; refreshed each round), a sample in such a
// chunk is judged by its chunk: seen if any sample in the chunk was. (Its
// first touch came before the chunk was known huge, and is judged by its
// page, which is new.) Without that, while a process grew by huge pages
// every hint fault of every huge page was a page never seen, dropped while
// the budget (512 pages per first touch) lasted.
//
// So at most as many samples are dropped as the process gained pages: a
// process whose resident set does not grow loses nothing (`hotpage attach`
// on a running service), and a hot page whose hint fault was taken for a
// first touch is promoted at its next fault, the scanner's next pass over
// it (numa_balancing_scan_period_min_ms, 1 s, to _max_ms, 60 s). A huge
// page's first touch spends one page of the 512 it adds; the rest of that
// budget lapses with the window. Generations turn every `generation_ns`, so
// a page is remembered for one to two of them: a first touch and the hint
// fault of the scanner's pass after it fall in the same or adjacent ones.
//
// A bitmap, not a set: fixed memory (2 x 2^bits_log2 bits), no allocation
// per sample. A false positive (another page's bit) lets a first touch
// through, as without the filter: at most ~2% of them at 48k pages
// remembered in 2^21 bits (Fibonacci hashing spreads consecutive pages
// without collisions, so a sequential first touch has far fewer). A
// process that first-touches many more pages than the bitmap has bits per
// generation saturates it, and the filter then drops less, never more.
//
// Not thread-safe: one owner, the attach loop's thread.

#ifndef HOTPAGE_SAMPLER_HINTFAULT_FIRST_TOUCH_FILTER_H_
#define HOTPAGE_SAMPLER_HINTFAULT_FIRST_TOUCH_FILTER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "sampler/sample.h"

namespace hotpage {

struct FirstTouchFilterOptions {
  // Bits per generation's bitmap: 2^bits_log2, in [10, 28].
  int bits_log2 = 21;
  // How long growth stays budget: the samples of a first touch may reach the
  // filter after the resident set that counts it was read (the rings are
  // drained every 50 ms; a round blocks them for up to a second).
  uint64_t growth_window_ns = 2'000'000'000;
  // A generation's length.
  uint64_t generation_ns = 30'000'000'000;
};

class FirstTouchFilter {
 public:
  explicit FirstTouchFilter(const FirstTouchFilterOptions& options = {});

  // The process's resident set now, in 4 KiB pages (0: unknown, ignored).
  // Its growth since the previous reading is added to the budget; budget
  // older than growth_window_ns lapses. The first reading sets the baseline
  // and adds nothing: what the process had before the filter started is
  // not growth it saw.
  void NoteResident(uint64_t now_ns, uint64_t resident_pages);

  // Writes the samples that pass to `kept` (cleared first; its capacity is
  // reused, so a caller that keeps the vector allocates only when a batch
  // is larger than any before) and returns how many were dropped.
  //
  // `resident`, if set, reads the resident set now (as NoteResident
  // takes it). It is called at most once per call: at its start if the
  // last reading is kReadEveryNs old (so growth becomes budget when it
  // happened, not when the budget next runs out), else when a sample on an
  // unseen page meets an empty budget: the growth of first touches made
  // while the caller drained its rings (after its last reading) then
  // becomes budget before their samples are judged. (Read only every
  // 10 ms before each batch, a process growing while attach drained let
  // 0.8% of its first touches through in a CI guest, 401 of 49,152.)
  size_t Filter(uint64_t now_ns, absl::Span<const Sample> samples,
                std::vector<Sample>* kept,
                const std::function<uint64_t()>& resident = nullptr);

  // Whether an address lies in a THP-backed 2 MiB chunk (the file comment;
  // empty: none is). Called once per page-fault sample.
  void SetHugeChunks(std::function<bool(uint64_t)> in_huge_chunk) {
    in_huge_chunk_ = std::move(in_huge_chunk);
  }

  // Samples dropped as possible first touches, and the resident growth seen
  // (4 KiB pages), since construction.
  uint64_t dropped() const { return dropped_; }
  uint64_t growth_pages() const { return growth_pages_; }
  // Pages of budget left now (tests).
  uint64_t budget() const { return budget_; }

 private:
  static constexpr uint64_t kReadEveryNs = 10'000'000;
  void MaybeTurn(uint64_t now_ns);
  // Budget older than growth_window_ns lapses.
  void LapseBudget(uint64_t now_ns);
  // The bit of a 4 KiB page number, or of a 2 MiB chunk number (salted
  // apart from the pages).
  size_t Bit(uint64_t key) const;
  bool Seen(size_t bit) const {
    return Test(current_, bit) || Test(previous_, bit);
  }
  void Mark(size_t bit) { current_[bit >> 6] |= uint64_t{1} << (bit & 63); }
  bool Test(const std::vector<uint64_t>& bits, size_t bit) const {
    return (bits[bit >> 6] >> (bit & 63)) & 1;
  }

  const FirstTouchFilterOptions options_;
  std::function<bool(uint64_t)> in_huge_chunk_;
  std::vector<uint64_t> current_, previous_;  // bitmaps, 2^bits_log2 bits
  uint64_t generation_start_ns_ = 0;
  bool started_ = false;
  bool have_resident_ = false;
  uint64_t last_resident_ = 0;
  uint64_t last_read_ns_ = 0;
  uint64_t budget_ = 0;
  uint64_t last_growth_ns_ = 0;
  uint64_t dropped_ = 0;
  uint64_t growth_pages_ = 0;
};

}  // namespace hotpage

#endif  // HOTPAGE_SAMPLER_HINTFAULT_FIRST_TOUCH_FILTER_H_
