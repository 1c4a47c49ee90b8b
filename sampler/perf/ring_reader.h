// RingReader: consumes one perf_event mmap ring buffer.
//
// The ring is the kernel's: a metadata page (struct perf_event_mmap_page)
// followed by a power-of-two data area. The kernel advances data_head as it
// writes records; we advance data_tail as we consume them. The protocol
// (include/uapi/linux/perf_event.h, tools/lib/perf/mmap.c):
//   - load data_head with acquire semantics, so that the record bytes the
//     kernel wrote before publishing the head are visible to us;
//   - read records between our tail and that head; a record may wrap past
//     the end of the data area, and is then copied out in two parts into a
//     fixed scratch buffer (records are at most 64 KiB: header.size is u16);
//   - store data_tail with release semantics, so that our reads of the
//     records happen-before the kernel reuses their space.
//
// Drain() works within a byte budget per call, so that one busy CPU cannot
// starve the other rings a sampler serves, and within the caller's output
// capacity; whatever it does not consume stays for the next call. It never
// allocates per record.
//
// Every record is accounted for: samples accepted, samples filtered (kernel
// address, zero address, other process), malformed, and the kernel's
// PERF_RECORD_LOST / LOST_SAMPLES / THROTTLE / UNTHROTTLE, per ring (one ring
// per CPU, so these are per-CPU counts).
//
// Thread-compatible: one thread drains a given ring.

#ifndef HOTPAGE_SAMPLER_PERF_RING_READER_H_
#define HOTPAGE_SAMPLER_PERF_RING_READER_H_

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sampler/perf/perf_record.h"
#include "sampler/sample.h"

namespace hotpage {

struct RingCounters {
  uint64_t records = 0;       // all records consumed
  uint64_t samples = 0;       // samples handed out
  uint64_t lost = 0;          // sum of PERF_RECORD_LOST.lost
  uint64_t lost_records = 0;  // number of PERF_RECORD_LOST records
  uint64_t lost_samples = 0;  // sum of PERF_RECORD_LOST_SAMPLES.lost
  uint64_t throttle = 0;
  uint64_t unthrottle = 0;
  uint64_t filtered_kernel = 0;  // data address in kernel space
  uint64_t filtered_zero = 0;    // no data address
  uint64_t filtered_pid = 0;     // another process
  uint64_t malformed = 0;        // too short for its sample_type, bad size
  uint64_t unknown_event = 0;    // id matches no event we opened
  uint64_t other = 0;            // COMM, MMAP, EXIT, ... (ignored)
  uint64_t forks_followed = 0;   // child processes added to the filter
  // Records of events whose samples are not memory accesses to keep
  // (RingEvent::keep false: the mem-loads-aux group leader), counted and
  // dropped undecoded.
  uint64_t aux_dropped = 0;
  // IBS op samples of ops that are neither loads nor stores (with cnt_ctl,
  // most dispatched ops): they have no data address by design, so they are
  // neither lost nor filtered.
  uint64_t ibs_non_memory = 0;

  RingCounters& operator+=(const RingCounters& o);
};

// Which processes' samples to keep. Samples carry the thread-group id as
// pid, so all threads of a process (including ones created later) pass.
// With follow_forks, PERF_RECORD_FORK of a new process whose parent passes
// adds the child.
class PidFilter {
 public:
  static PidFilter All() { return PidFilter(); }
  explicit PidFilter(std::vector<uint32_t> tgids, bool follow_forks = true);

  bool accepts_all() const { return all_; }
  bool Accepts(uint32_t pid) const {
    if (all_) return true;
    for (uint32_t p : tgids_) {
      if (p == pid) return true;
    }
    return false;
  }
  // Returns true if the child was added.
  bool OnFork(uint32_t parent, uint32_t child);
  // Forgets a process that exited (its pid may be reused by another);
  // returns true if it was there. No allocation.
  bool Remove(uint32_t tgid);
  const std::vector<uint32_t>& tgids() const { return tgids_; }

 private:
  PidFilter() = default;
  bool all_ = true;
  bool follow_forks_ = false;
  std::vector<uint32_t> tgids_;  // few entries: a linear scan beats hashing
};

// An event whose records may appear in a ring, identified by the kernel's
// event id (PERF_EVENT_IOC_ID). With a single event, id may be 0 and
// IDENTIFIER absent. Each event is decoded with its own layout; IBS op
// events (layout.source kIbsOp) also through ibs_raw.h.
struct RingEvent {
  uint64_t id = 0;
  PerfEventLayout layout;
  // EventSpec::keep_samples: false for an event whose records are not
  // memory accesses (the mem-loads-aux leader); they are counted in
  // RingCounters::aux_dropped and never decoded.
  bool keep = true;
};

class RingReader {
 public:
  // `base` is the start of the mapping (the metadata page); the data area is
  // found from data_offset/data_size (Linux 4.1+), or, when those are 0,
  // follows the first page with `data_size` bytes. Events must all have
  // sample_id_all and, when there is more than one, IDENTIFIER: a record is
  // then matched to its event by id (a record of no listed event is
  // unknown_event). A single event with keep=true decodes every record
  // (its id may be 0).
  RingReader(void* base, size_t page_size, size_t data_size,
             std::vector<RingEvent> events, PidFilter* filter);

  // Consumes records until `byte_budget` bytes were read, `out_cap` samples
  // were produced, or the ring is empty. Returns the number of samples
  // written to out[].
  size_t Drain(Sample* out, size_t out_cap, size_t byte_budget);

  // Bytes the kernel has written that we have not consumed yet.
  uint64_t Pending() const;

  // Bytes consumed so far (data_tail; written only by this reader, so a
  // plain read is enough). Drain's consumption is the difference.
  uint64_t consumed_bytes() const { return meta_->data_tail; }

  const RingCounters& counters() const { return counters_; }

 private:
  const RingEvent* FindEvent(const uint8_t* body, size_t len) const;
  void HandleOther(uint32_t type, const uint8_t* body, size_t len);

  perf_event_mmap_page* meta_;
  const uint8_t* data_;
  uint64_t mask_;
  std::vector<RingEvent> events_;
  int id_offset_ = -1;  // offset of the event id in SAMPLE bodies
  PidFilter* filter_;
  RingCounters counters_;
  alignas(8) uint8_t scratch_[1 << 16];
};

}  // namespace hotpage

#endif  // HOTPAGE_SAMPLER_PERF_RING_READER_H_
