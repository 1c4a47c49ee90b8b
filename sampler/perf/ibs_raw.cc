#include "sampler/perf/ibs_raw.h"

#include <linux/perf_event.h>

#include <cstring>
#include <initializer_list>

namespace hotpage {

int RawBlockOffset(uint64_t st) {
  if (!(st & PERF_SAMPLE_RAW)) return -1;
  if (st & (PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN)) return -1;
  int off = 0;
  for (uint64_t bit :
       {uint64_t{PERF_SAMPLE_IDENTIFIER}, uint64_t{PERF_SAMPLE_IP},
        uint64_t{PERF_SAMPLE_TID}, uint64_t{PERF_SAMPLE_TIME},
        uint64_t{PERF_SAMPLE_ADDR}, uint64_t{PERF_SAMPLE_ID},
        uint64_t{PERF_SAMPLE_STREAM_ID}, uint64_t{PERF_SAMPLE_CPU},
        uint64_t{PERF_SAMPLE_PERIOD}}) {
    if (st & bit) off += 8;
  }
  return off;
}

bool ParseIbsOpRaw(const uint8_t* body, size_t len, int offset,
                   IbsOpRegs* out) {
  if (offset < 0 || len < static_cast<size_t>(offset) + 4) return false;
  uint32_t size;
  std::memcpy(&size, body + offset, 4);
  const size_t data = static_cast<size_t>(offset) + 4;  // caps, then regs
  if (size > len - data) return false;
  // caps (u32) + regs up to IbsDcLinAd.
  const size_t need = 4 + 8 * (kIbsRegDcLinAd + 1);
  if (size < need) return false;
  const uint8_t* regs = body + data + 4;
  std::memcpy(&out->op_data3, regs + 8 * kIbsRegOpData3, 8);
  std::memcpy(&out->dc_lin_ad, regs + 8 * kIbsRegDcLinAd, 8);
  return true;
}

IbsOpKind CompleteIbsOpSample(const PerfEventLayout& layout,
                              const uint8_t* body, size_t len, Sample* s) {
  const uint64_t st = layout.sample_type;
  if (st & PERF_SAMPLE_RAW) {
    IbsOpRegs r;
    if (!ParseIbsOpRaw(body, len, RawBlockOffset(st), &r)) {
      return IbsOpKind::kMalformed;
    }
    const bool load = (r.op_data3 & kIbsOpData3LdOp) != 0;
    const bool store = (r.op_data3 & kIbsOpData3StOp) != 0;
    if (!load && !store) return IbsOpKind::kNotMemory;
    if (s->vaddr == 0 && (r.op_data3 & kIbsOpData3DcLinAddrValid)) {
      s->vaddr = r.dc_lin_ad;
    }
    if (store) s->flags |= kSampleStore;
    if (s->weight == 0 && load && (r.op_data3 & kIbsOpData3DcMiss)) {
      s->weight = static_cast<uint32_t>(
          (r.op_data3 >> kIbsOpData3DcMissLatShift) & 0xffff);
    }
    return IbsOpKind::kMemory;
  }
  // 6.1+: perf_ibs_get_mem_op() sets mem_op LOAD or STORE for memory ops;
  // other ops keep PERF_MEM_NA. Only a sample without an address is
  // classified, and only when DATA_SRC was asked for.
  if (s->vaddr == 0 && (st & PERF_SAMPLE_DATA_SRC)) {
    const uint64_t op = (s->data_src >> PERF_MEM_OP_SHIFT) & 0x1f;
    if (!(op & (PERF_MEM_OP_LOAD | PERF_MEM_OP_STORE))) {
      return IbsOpKind::kNotMemory;
    }
  }
  return IbsOpKind::kMemory;
}

}  // namespace hotpage
