#include "sampler/perf/ring_reader.h"

#include <algorithm>
#include <cstring>

#include "sampler/perf/ibs_raw.h"

namespace hotpage {

RingCounters& RingCounters::operator+=(const RingCounters& o) {
  records += o.records;
  samples += o.samples;
  lost += o.lost;
  lost_records += o.lost_records;
  lost_samples += o.lost_samples;
  throttle += o.throttle;
  unthrottle += o.unthrottle;
  filtered_kernel += o.filtered_kernel;
  filtered_zero += o.filtered_zero;
  filtered_pid += o.filtered_pid;
  malformed += o.malformed;
  unknown_event += o.unknown_event;
  other += o.other;
  forks_followed += o.forks_followed;
  aux_dropped += o.aux_dropped;
  ibs_non_memory += o.ibs_non_memory;
  return *this;
}

PidFilter::PidFilter(std::vector<uint32_t> tgids, bool follow_forks)
    : all_(false), follow_forks_(follow_forks), tgids_(std::move(tgids)) {}

bool PidFilter::OnFork(uint32_t parent, uint32_t child) {
  if (all_ || !follow_forks_ || parent == child) return false;
  if (!Accepts(parent) || Accepts(child)) return false;
  tgids_.push_back(child);  // once per fork, not per sample
  return true;
}

bool PidFilter::Remove(uint32_t tgid) {
  for (size_t i = 0; i < tgids_.size(); ++i) {
    if (tgids_[i] == tgid) {
      tgids_[i] = tgids_.back();
      tgids_.pop_back();
      return true;
    }
  }
  return false;
}

RingReader::RingReader(void* base, size_t page_size, size_t data_size,
                       std::vector<RingEvent> events, PidFilter* filter)
    : meta_(static_cast<perf_event_mmap_page*>(base)),
      events_(std::move(events)),
      filter_(filter) {
  uint64_t offset = meta_->data_offset ? meta_->data_offset : page_size;
  uint64_t size = meta_->data_size ? meta_->data_size : data_size;
  data_ = static_cast<const uint8_t*>(base) + offset;
  mask_ = size - 1;
  if (!events_.empty())
    id_offset_ = SampleIdOffset(events_[0].layout.sample_type);
  // Sorted by id: FindEvent's binary search (per-task rings list pids x
  // group size events).
  std::sort(events_.begin(), events_.end(),
            [](const RingEvent& a, const RingEvent& b) { return a.id < b.id; });
}

uint64_t RingReader::Pending() const {
  // Acquire: pairs with the kernel's store of data_head after the records.
  uint64_t head = __atomic_load_n(&meta_->data_head, __ATOMIC_ACQUIRE);
  return head - meta_->data_tail;
}

const RingEvent* RingReader::FindEvent(const uint8_t* body, size_t len) const {
  if (events_.size() == 1 && events_[0].keep) return &events_[0];
  if (id_offset_ < 0 || len < static_cast<size_t>(id_offset_) + 8)
    return nullptr;
  uint64_t id;
  std::memcpy(&id, body + id_offset_, 8);
  auto it =
      std::lower_bound(events_.begin(), events_.end(), id,
                       [](const RingEvent& e, uint64_t v) { return e.id < v; });
  if (it == events_.end() || it->id != id) return nullptr;
  return &*it;
}

void RingReader::HandleOther(uint32_t type, const uint8_t* body, size_t len) {
  uint64_t v[2];
  switch (type) {
    case PERF_RECORD_LOST:  // {u64 id; u64 lost; sample_id}
      if (len >= 16) {
        std::memcpy(v, body, 16);
        counters_.lost += v[1];
        ++counters_.lost_records;
      } else {
        ++counters_.malformed;
      }
      break;
    case PERF_RECORD_LOST_SAMPLES:  // {u64 lost; sample_id}
      if (len >= 8) {
        std::memcpy(v, body, 8);
        counters_.lost_samples += v[0];
      } else {
        ++counters_.malformed;
      }
      break;
    case PERF_RECORD_THROTTLE:
      ++counters_.throttle;
      break;
    case PERF_RECORD_UNTHROTTLE:
      ++counters_.unthrottle;
      break;
    case PERF_RECORD_FORK:  // {u32 pid, ppid, tid, ptid; u64 time; sample_id}
      if (len >= 16 && filter_ != nullptr) {
        uint32_t f[4];
        std::memcpy(f, body, 16);
        // A new process (pid == tid), not a new thread of an existing one.
        if (f[0] == f[2] && filter_->OnFork(f[1], f[0]))
          ++counters_.forks_followed;
      }
      ++counters_.other;
      break;
    default:
      ++counters_.other;
      break;
  }
}

size_t RingReader::Drain(Sample* out, size_t out_cap, size_t byte_budget) {
  // Acquire: the records up to head are fully written (see the header).
  const uint64_t head = __atomic_load_n(&meta_->data_head, __ATOMIC_ACQUIRE);
  // data_tail is written only by us; a plain read is enough.
  uint64_t tail = meta_->data_tail;
  const uint64_t start = tail;
  size_t n = 0;
  while (tail < head && n < out_cap && tail - start < byte_budget) {
    const uint64_t off = tail & mask_;
    perf_event_header hdr;
    // Records are 8-byte aligned and the area is a power of two >= 8, so
    // the 8-byte header itself never wraps.
    std::memcpy(&hdr, data_ + off, sizeof(hdr));
    if (hdr.size < sizeof(hdr) || hdr.size > head - tail) {
      // A corrupt ring: drop everything up to head rather than loop.
      ++counters_.malformed;
      tail = head;
      break;
    }
    const uint8_t* rec = data_ + off;
    if (off + hdr.size > mask_ + 1) {
      // Wrapped: reassemble into the scratch buffer.
      const size_t first = mask_ + 1 - off;
      std::memcpy(scratch_, data_ + off, first);
      std::memcpy(scratch_ + first, data_, hdr.size - first);
      rec = scratch_;
    }
    const uint8_t* body = rec + sizeof(hdr);
    const size_t len = hdr.size - sizeof(hdr);
    ++counters_.records;
    if (hdr.type == PERF_RECORD_SAMPLE) {
      const RingEvent* ev = FindEvent(body, len);
      uint64_t id;
      Sample* s = &out[n];
      IbsOpKind ibs = IbsOpKind::kMemory;
      if (ev == nullptr) {
        ++counters_.unknown_event;
      } else if (!ev->keep) {
        ++counters_.aux_dropped;
      } else if (!DecodeSample(ev->layout, body, len, s, &id)) {
        ++counters_.malformed;
      } else if (ev->layout.source == SampleSource::kIbsOp &&
                 (ibs = CompleteIbsOpSample(ev->layout, body, len, s)) !=
                     IbsOpKind::kMemory) {
        if (ibs == IbsOpKind::kNotMemory) {
          ++counters_.ibs_non_memory;
        } else {
          ++counters_.malformed;
        }
      } else if (s->vaddr == 0) {
        ++counters_.filtered_zero;
      } else if (s->vaddr > kMaxUserAddress) {
        ++counters_.filtered_kernel;
      } else if (filter_ != nullptr && !filter_->Accepts(s->pid)) {
        ++counters_.filtered_pid;
      } else {
        ++counters_.samples;
        ++n;
      }
    } else {
      HandleOther(hdr.type, body, len);
    }
    tail += hdr.size;
  }
  // Release: our reads of the consumed records happen-before the kernel
  // sees the space as free and overwrites it.
  __atomic_store_n(&meta_->data_tail, tail, __ATOMIC_RELEASE);
  return n;
}

}  // namespace hotpage
