#include "sampler/perf_record.h"

#include <bit>
#include <cstring>
#include <initializer_list>

namespace hotpage {
namespace {

// Bounds-checked cursor over a record body.
class Cursor {
 public:
  Cursor(const uint8_t* p, size_t len) : p_(p), end_(p + len) {}
  bool U64(uint64_t* v) {
    if (end_ - p_ < 8) return false;
    std::memcpy(v, p_, 8);
    p_ += 8;
    return true;
  }
  bool Skip(uint64_t n) {
    if (static_cast<uint64_t>(end_ - p_) < n) return false;
    p_ += n;
    return true;
  }
  // Reads a count then skips count * unit bytes.
  bool SkipCounted(uint64_t unit, uint64_t extra_fixed = 0) {
    uint64_t n;
    if (!U64(&n)) return false;
    if (n > static_cast<uint64_t>(end_ - p_) / unit) return false;  // no overflow
    return Skip(n * unit + extra_fixed);
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

bool SkipRead(Cursor& c, uint64_t read_format) {
  // struct read_format: {value, [time_enabled], [time_running], [id], [lost]}
  // or, with PERF_FORMAT_GROUP: {nr, [te], [tr], {value, [id], [lost]} * nr}.
  const bool te = read_format & PERF_FORMAT_TOTAL_TIME_ENABLED;
  const bool tr = read_format & PERF_FORMAT_TOTAL_TIME_RUNNING;
  const bool id = read_format & PERF_FORMAT_ID;
  const bool lost = read_format & (1u << 4);  // PERF_FORMAT_LOST (6.0+)
  if (read_format & PERF_FORMAT_GROUP) {
    uint64_t nr;
    if (!c.U64(&nr)) return false;
    if (!c.Skip(8 * (uint64_t{te} + tr))) return false;
    const uint64_t per = 8 * (1 + uint64_t{id} + lost);
    if (nr > (uint64_t{1} << 16)) return false;
    return c.Skip(nr * per);
  }
  return c.Skip(8 * (1 + uint64_t{te} + tr + id + lost));
}

}  // namespace

PerfEventLayout PerfEventLayout::FromAttr(const perf_event_attr& attr, SampleSource source) {
  PerfEventLayout l;
  l.sample_type = attr.sample_type;
  l.read_format = attr.read_format;
  l.branch_sample_type = attr.branch_sample_type;
  l.sample_regs_user = attr.sample_regs_user;
  l.sample_regs_intr = attr.sample_regs_intr;
  l.sample_id_all = attr.sample_id_all;
  l.fixed_period = attr.freq ? 0 : attr.sample_period;
  l.source = source;
  return l;
}

int SampleIdOffset(uint64_t st) {
  if (st & PERF_SAMPLE_IDENTIFIER) return 0;
  if (!(st & PERF_SAMPLE_ID)) return -1;
  int off = 0;
  for (uint64_t bit : {uint64_t{PERF_SAMPLE_IP}, uint64_t{PERF_SAMPLE_TID},
                       uint64_t{PERF_SAMPLE_TIME}, uint64_t{PERF_SAMPLE_ADDR}}) {
    if (st & bit) off += 8;
  }
  return off;
}

bool DecodeSample(const PerfEventLayout& layout, const uint8_t* body, size_t len, Sample* out,
                  uint64_t* id) {
  const uint64_t st = layout.sample_type;
  Cursor c(body, len);
  uint64_t v = 0;
  *id = 0;
  *out = Sample{};
  out->source = layout.source;
  out->period = layout.fixed_period;
  if (st & PERF_SAMPLE_IDENTIFIER) {
    if (!c.U64(id)) return false;
  }
  if (st & PERF_SAMPLE_IP) {
    if (!c.U64(&v)) return false;
  }
  if (st & PERF_SAMPLE_TID) {
    if (!c.U64(&v)) return false;
    out->pid = static_cast<uint32_t>(v);
    out->tid = static_cast<uint32_t>(v >> 32);
  }
  if (st & PERF_SAMPLE_TIME) {
    if (!c.U64(&out->time_ns)) return false;
  }
  if (st & PERF_SAMPLE_ADDR) {
    if (!c.U64(&out->vaddr)) return false;
  }
  if (st & PERF_SAMPLE_ID) {
    if (!c.U64(&v)) return false;
    if (!(st & PERF_SAMPLE_IDENTIFIER)) *id = v;
  }
  if (st & PERF_SAMPLE_STREAM_ID) {
    if (!c.U64(&v)) return false;
  }
  if (st & PERF_SAMPLE_CPU) {
    if (!c.U64(&v)) return false;
    out->cpu = static_cast<uint32_t>(v);
  }
  if (st & PERF_SAMPLE_PERIOD) {
    if (!c.U64(&out->period)) return false;
  }
  if (st & PERF_SAMPLE_READ) {
    if (!SkipRead(c, layout.read_format)) return false;
  }
  if (st & PERF_SAMPLE_CALLCHAIN) {
    if (!c.SkipCounted(8)) return false;
  }
  if (st & PERF_SAMPLE_RAW) {
    // u32 size; char data[size]; the whole is padded to 8 bytes by the
    // kernel (size includes the padding).
    uint32_t raw_size;
    uint64_t w;
    if (!c.U64(&w)) return false;
    raw_size = static_cast<uint32_t>(w);
    // The u32 size and the first 4 data bytes share the u64 just read.
    if (raw_size < 4) return false;
    if (!c.Skip(raw_size - 4)) return false;
  }
  if (st & PERF_SAMPLE_BRANCH_STACK) {
    uint64_t nr;
    if (!c.U64(&nr)) return false;
    if (layout.branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) {
      if (!c.Skip(8)) return false;
    }
    if (nr > (uint64_t{1} << 16)) return false;
    if (!c.Skip(nr * 24)) return false;  // struct perf_branch_entry
  }
  if (st & PERF_SAMPLE_REGS_USER) {
    uint64_t abi;
    if (!c.U64(&abi)) return false;
    if (abi != 0 && !c.Skip(8 * uint64_t(std::popcount(layout.sample_regs_user)))) return false;
  }
  if (st & PERF_SAMPLE_STACK_USER) {
    uint64_t size;
    if (!c.U64(&size)) return false;
    if (size != 0) {
      if (!c.Skip(size)) return false;
      if (!c.U64(&v)) return false;  // dyn_size
    }
  }
  if (st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) {
    if (!c.U64(&v)) return false;
    // WEIGHT_STRUCT: var1_dw (u32) is the latency; var2/var3 are extra
    // (retire latency...). Plain WEIGHT is the latency as a u64.
    out->weight = (st & PERF_SAMPLE_WEIGHT_STRUCT)
                      ? static_cast<uint32_t>(v)
                      : static_cast<uint32_t>(v > UINT32_MAX ? UINT32_MAX : v);
  }
  if (st & PERF_SAMPLE_DATA_SRC) {
    if (!c.U64(&out->data_src)) return false;
  }
  if (st & PERF_SAMPLE_TRANSACTION) {
    if (!c.U64(&v)) return false;
  }
  if (st & PERF_SAMPLE_REGS_INTR) {
    uint64_t abi;
    if (!c.U64(&abi)) return false;
    if (abi != 0 && !c.Skip(8 * uint64_t(std::popcount(layout.sample_regs_intr)))) return false;
  }
  if (st & PERF_SAMPLE_PHYS_ADDR) {
    if (!c.U64(&out->paddr)) return false;
  }
  // AUX, DATA_PAGE_SIZE, CODE_PAGE_SIZE follow; nothing we need.
  if (st & PERF_SAMPLE_DATA_SRC) {
    DecodedDataSrc d = DecodeDataSrc(out->data_src);
    out->level = d.level;
    out->tlb = d.tlb;
    if (d.is_store) out->flags |= kSampleStore;
  }
  return true;
}

size_t SampleIdTrailerSize(const PerfEventLayout& layout) {
  if (!layout.sample_id_all) return 0;
  const uint64_t st = layout.sample_type;
  size_t n = 0;
  for (uint64_t bit : {uint64_t{PERF_SAMPLE_TID}, uint64_t{PERF_SAMPLE_TIME},
                       uint64_t{PERF_SAMPLE_ID}, uint64_t{PERF_SAMPLE_STREAM_ID},
                       uint64_t{PERF_SAMPLE_CPU}, uint64_t{PERF_SAMPLE_IDENTIFIER}}) {
    if (st & bit) n += 8;
  }
  return n;
}

bool DecodeSampleIdTrailer(const PerfEventLayout& layout, const uint8_t* body, size_t len,
                           SampleId* out) {
  *out = SampleId{};
  const size_t n = SampleIdTrailerSize(layout);
  if (n == 0 || len < n) return false;
  Cursor c(body + len - n, n);
  const uint64_t st = layout.sample_type;
  uint64_t v;
  if (st & PERF_SAMPLE_TID) {
    c.U64(&v);
    out->pid = static_cast<uint32_t>(v);
    out->tid = static_cast<uint32_t>(v >> 32);
  }
  if (st & PERF_SAMPLE_TIME) c.U64(&out->time);
  if (st & PERF_SAMPLE_ID) c.U64(&out->id);
  if (st & PERF_SAMPLE_STREAM_ID) c.U64(&out->stream_id);
  if (st & PERF_SAMPLE_CPU) {
    c.U64(&v);
    out->cpu = static_cast<uint32_t>(v);
    out->has_cpu = true;
  }
  if (st & PERF_SAMPLE_IDENTIFIER) c.U64(&out->id);
  return true;
}

}  // namespace hotpage
