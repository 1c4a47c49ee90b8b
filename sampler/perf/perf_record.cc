#include "sampler/perf/perf_record.h"

#include <bit>
#include <cstring>
#include <initializer_list>

#include "sampler/perf/perf_data_format.h"

namespace hotpage {
namespace {}  // namespace

PerfEventLayout PerfEventLayout::FromAttr(const perf_event_attr& attr,
                                          SampleSource source) {
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
  for (uint64_t bit :
       {uint64_t{PERF_SAMPLE_IP}, uint64_t{PERF_SAMPLE_TID},
        uint64_t{PERF_SAMPLE_TIME}, uint64_t{PERF_SAMPLE_ADDR}}) {
    if (st & bit) off += 8;
  }
  return off;
}

bool WalkSample(const PerfEventLayout& a, const uint8_t* p, size_t len,
                SampleFields* f) {
  namespace pf = perf_format;
  uint64_t o = 0;  // invariant: o <= len
  auto take = [&](uint64_t* v) {
    if (len - o < 8) return false;
    std::memcpy(v, p + o, 8);
    o += 8;
    return true;
  };
  auto skip = [&](uint64_t n) {
    if (n > len - o) return false;
    o += n;
    return true;
  };
  const uint64_t t = a.sample_type;
  uint64_t v;
  if ((t & pf::kSampleIdentifier) && !take(&f->id)) return false;
  if ((t & pf::kSampleIp) && !take(&v)) return false;
  if (t & pf::kSampleTid) {
    if (!take(&v)) return false;
    f->pid = static_cast<uint32_t>(v);
    f->tid = static_cast<uint32_t>(v >> 32);
  }
  if ((t & pf::kSampleTime) && !take(&f->time)) return false;
  if ((t & pf::kSampleAddr) && !take(&f->addr)) return false;
  if (t & pf::kSampleId) {
    if (!take(&v)) return false;
    if (!(t & pf::kSampleIdentifier)) f->id = v;
  }
  if ((t & pf::kSampleStreamId) && !take(&v)) return false;
  if (t & pf::kSampleCpu) {
    if (!take(&v)) return false;
    f->cpu = static_cast<uint32_t>(v);
  }
  if ((t & pf::kSamplePeriod) && !take(&f->period)) return false;
  if (t & pf::kSampleRead) {
    const uint64_t rf = a.read_format;
    const uint64_t times = 8 * (!!(rf & pf::kFormatTotalTimeEnabled) +
                                !!(rf & pf::kFormatTotalTimeRunning));
    const uint64_t per_value =
        8 * (1 + !!(rf & pf::kFormatId) + !!(rf & pf::kFormatLost));
    if (rf & pf::kFormatGroup) {  // {nr; enabled?; running?; {value; id?;
                                  // lost?}[nr]}
      uint64_t nr;
      if (!take(&nr) || !skip(times)) return false;
      if (nr > (len - o) / per_value || !skip(nr * per_value)) return false;
    } else {  // {value; enabled?; running?; id?; lost?}
      if (!skip(times + per_value)) return false;
    }
  }
  if (t & pf::kSampleCallchain) {  // {nr; ips[nr]}
    uint64_t nr;
    if (!take(&nr) || nr > (len - o) / 8 || !skip(nr * 8)) return false;
  }
  if (t &
      pf::kSampleRaw) {  // {u32 size; data[size]}, padded by the kernel to 8
    if (len - o < 4) return false;
    uint32_t size;
    std::memcpy(&size, p + o, 4);
    o += 4;
    if (!skip(size)) return false;
  }
  if (t &
      pf::kSampleBranchStack) {  // {nr; hw_idx?; entries[nr]; counters[nr]?}
    uint64_t nr;
    if (!take(&nr)) return false;
    if ((a.branch_sample_type & pf::kBranchHwIndex) && !skip(8)) return false;
    if (nr > (len - o) / pf::kBranchEntrySize ||
        !skip(nr * pf::kBranchEntrySize))
      return false;
    if ((a.branch_sample_type & pf::kBranchCounters) &&
        (nr > (len - o) / 8 || !skip(nr * 8))) {
      return false;
    }
  }
  if (t & pf::kSampleRegsUser) {  // {abi; regs[popcount(mask)] if abi}
    if (!take(&v)) return false;
    if (v != 0 &&
        !skip(8 * static_cast<uint64_t>(std::popcount(a.sample_regs_user))))
      return false;
  }
  if (t & pf::kSampleStackUser) {  // {size; data[size]; dyn_size if size}
    uint64_t size;
    if (!take(&size)) return false;
    if (size != 0 && (!skip(size) || !take(&v))) return false;
  }
  if ((t & pf::kSampleWeightType) && !take(&f->weight)) return false;
  if ((t & pf::kSampleDataSrc) && !take(&f->data_src)) return false;
  if ((t & pf::kSampleTransaction) && !take(&v)) return false;
  if (t & pf::kSampleRegsIntr) {
    if (!take(&v)) return false;
    if (v != 0 &&
        !skip(8 * static_cast<uint64_t>(std::popcount(a.sample_regs_intr))))
      return false;
  }
  if ((t & pf::kSamplePhysAddr) && !take(&f->phys)) return false;
  if ((t & pf::kSampleCgroup) && !take(&v)) return false;
  if ((t & pf::kSampleDataPageSize) && !take(&v)) return false;
  if ((t & pf::kSampleCodePageSize) && !take(&v)) return false;
  if (t & pf::kSampleAux) {  // {size; data[size]}
    uint64_t size;
    if (!take(&size) || !skip(size)) return false;
  }
  return true;
}

bool DecodeSample(const PerfEventLayout& layout, const uint8_t* body,
                  size_t len, Sample* out, uint64_t* id) {
  SampleFields f;
  if (!WalkSample(layout, body, len, &f)) return false;
  const uint64_t st = layout.sample_type;
  *id = f.id;
  *out = Sample{};
  out->source = layout.source;
  out->time_ns = f.time;
  out->vaddr = f.addr;
  out->paddr = f.phys;
  out->data_src = f.data_src;
  out->period = (st & PERF_SAMPLE_PERIOD) ? f.period : layout.fixed_period;
  out->pid = f.pid;
  out->tid = f.tid;
  out->cpu = f.cpu;
  // WEIGHT_STRUCT: var1_dw (low u32) is the latency; plain WEIGHT is the
  // latency as a u64, capped.
  out->weight = (st & PERF_SAMPLE_WEIGHT_STRUCT)
                    ? static_cast<uint32_t>(f.weight)
                    : static_cast<uint32_t>(f.weight > UINT32_MAX ? UINT32_MAX
                                                                  : f.weight);
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
  for (uint64_t bit :
       {uint64_t{PERF_SAMPLE_TID}, uint64_t{PERF_SAMPLE_TIME},
        uint64_t{PERF_SAMPLE_ID}, uint64_t{PERF_SAMPLE_STREAM_ID},
        uint64_t{PERF_SAMPLE_CPU}, uint64_t{PERF_SAMPLE_IDENTIFIER}}) {
    if (st & bit) n += 8;
  }
  return n;
}

bool DecodeSampleIdTrailer(const PerfEventLayout& layout, const uint8_t* body,
                           size_t len, SampleId* out) {
  *out = SampleId{};
  const size_t n = SampleIdTrailerSize(layout);
  if (n == 0 || len < n) return false;
  // Every field of the trailer is a u64, read in order (the size check
  // above makes each read safe).
  const uint8_t* q = body + len - n;
  auto next = [&q]() {
    uint64_t v;
    std::memcpy(&v, q, 8);
    q += 8;
    return v;
  };
  const uint64_t st = layout.sample_type;
  if (st & PERF_SAMPLE_TID) {
    const uint64_t v = next();
    out->pid = static_cast<uint32_t>(v);
    out->tid = static_cast<uint32_t>(v >> 32);
  }
  if (st & PERF_SAMPLE_TIME) out->time = next();
  if (st & PERF_SAMPLE_ID) out->id = next();
  if (st & PERF_SAMPLE_STREAM_ID) out->stream_id = next();
  if (st & PERF_SAMPLE_CPU) {
    out->cpu = static_cast<uint32_t>(next());
    out->has_cpu = true;
  }
  if (st & PERF_SAMPLE_IDENTIFIER) out->id = next();
  return true;
}

}  // namespace hotpage
