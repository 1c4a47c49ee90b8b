#include "sampler/sample.h"

#include <linux/perf_event.h>

namespace hotpage {

const char* MemLevelName(MemLevel level) {
  switch (level) {
    case MemLevel::kUnknown:
      return "unknown";
    case MemLevel::kL1:
      return "L1";
    case MemLevel::kL2:
      return "L2";
    case MemLevel::kL3:
      return "L3";
    case MemLevel::kLfb:
      return "LFB";
    case MemLevel::kLocalDram:
      return "local-dram";
    case MemLevel::kRemoteDram:
      return "remote-dram";
    case MemLevel::kRemoteCache:
      return "remote-cache";
    case MemLevel::kCxl:
      return "cxl";
    case MemLevel::kIo:
      return "io";
  }
  return "unknown";
}

const char* TlbOutcomeName(TlbOutcome tlb) {
  switch (tlb) {
    case TlbOutcome::kUnknown:
      return "unknown";
    case TlbOutcome::kL1Hit:
      return "L1-hit";
    case TlbOutcome::kL2Hit:
      return "L2-hit";
    case TlbOutcome::kMiss:
      return "miss";
    case TlbOutcome::kHit:
      return "hit";
  }
  return "unknown";
}

const char* SampleSourceName(SampleSource source) {
  switch (source) {
    case SampleSource::kUnknown:
      return "unknown";
    case SampleSource::kPebsLoad:
      return "pebs-load";
    case SampleSource::kPebsStore:
      return "pebs-store";
    case SampleSource::kIbsOp:
      return "ibs-op";
    case SampleSource::kPageFault:
      return "pagefault";
    case SampleSource::kDamon:
      return "damon";
    case SampleSource::kPerfData:
      return "perf-data";
  }
  return "unknown";
}

DecodedDataSrc DecodeDataSrc(uint64_t data_src) {
  DecodedDataSrc out;
  const uint64_t op = (data_src >> PERF_MEM_OP_SHIFT) & 0x1f;
  const uint64_t lvl = (data_src >> PERF_MEM_LVL_SHIFT) & 0x3fff;
  const uint64_t tlb = (data_src >> PERF_MEM_TLB_SHIFT) & 0x7f;
  const uint64_t lvl_num = (data_src >> PERF_MEM_LVLNUM_SHIFT) & 0xf;
  const uint64_t hops = (data_src >> PERF_MEM_HOPS_SHIFT) & 0x7;
  // HOPS_0 is "remote core, same node": another core complex of this
  // package, not another package.
  const bool remote =
      ((data_src >> PERF_MEM_REMOTE_SHIFT) & 1) != 0 && hops != PERF_MEM_HOPS_0;
  // A miss without a hit: lvl_num names the level that missed.
  const bool miss_only =
      (lvl & PERF_MEM_LVL_MISS) != 0 && (lvl & PERF_MEM_LVL_HIT) == 0;

  out.is_store = (op & PERF_MEM_OP_STORE) != 0;

  // Newer encoding first. 0 means "not filled in" (old kernels, software
  // events set the whole value to PERF_MEM_NA), NA means "not available".
  switch (miss_only ? uint64_t{PERF_MEM_LVLNUM_NA} : lvl_num) {
    case PERF_MEM_LVLNUM_L1:
      out.level = MemLevel::kL1;
      break;
    case PERF_MEM_LVLNUM_L2:
      out.level = MemLevel::kL2;
      break;
    case PERF_MEM_LVLNUM_L3:
    case PERF_MEM_LVLNUM_L4:
    case PERF_MEM_LVLNUM_ANY_CACHE:
      out.level = remote ? MemLevel::kRemoteCache : MemLevel::kL3;
      break;
    case PERF_MEM_LVLNUM_LFB:
      out.level = MemLevel::kLfb;
      break;
    case PERF_MEM_LVLNUM_RAM:
      out.level = remote ? MemLevel::kRemoteDram : MemLevel::kLocalDram;
      break;
    case PERF_MEM_LVLNUM_CXL:
    case PERF_MEM_LVLNUM_PMEM:
      out.level = MemLevel::kCxl;
      break;
    case PERF_MEM_LVLNUM_IO:
      out.level = MemLevel::kIo;
      break;
    default:
      break;
  }
  // Old bit set: only when the new field said nothing. Only hits name
  // where the data came from; the highest-latency level that hit wins.
  if (out.level == MemLevel::kUnknown && (lvl & PERF_MEM_LVL_HIT) != 0) {
    if (lvl & PERF_MEM_LVL_IO)
      out.level = MemLevel::kIo;
    else if (lvl & (PERF_MEM_LVL_REM_RAM1 | PERF_MEM_LVL_REM_RAM2))
      out.level = MemLevel::kRemoteDram;
    else if (lvl & (PERF_MEM_LVL_REM_CCE1 | PERF_MEM_LVL_REM_CCE2))
      out.level = MemLevel::kRemoteCache;
    else if (lvl & PERF_MEM_LVL_LOC_RAM)
      out.level = MemLevel::kLocalDram;
    else if (lvl & PERF_MEM_LVL_L3)
      out.level = MemLevel::kL3;
    else if (lvl & PERF_MEM_LVL_L2)
      out.level = MemLevel::kL2;
    else if (lvl & PERF_MEM_LVL_LFB)
      out.level = MemLevel::kLfb;
    else if (lvl & PERF_MEM_LVL_L1)
      out.level = MemLevel::kL1;
  }

  if (tlb & (PERF_MEM_TLB_WK | PERF_MEM_TLB_OS) ||
      ((tlb & PERF_MEM_TLB_MISS) && !(tlb & PERF_MEM_TLB_HIT))) {
    out.tlb = TlbOutcome::kMiss;
  } else if (tlb & PERF_MEM_TLB_HIT) {
    const bool l1 = (tlb & PERF_MEM_TLB_L1) != 0;
    const bool l2 = (tlb & PERF_MEM_TLB_L2) != 0;
    out.tlb = l1 && l2 ? TlbOutcome::kHit
              : l2     ? TlbOutcome::kL2Hit
              : l1     ? TlbOutcome::kL1Hit
                       : TlbOutcome::kHit;
  }
  return out;
}

}  // namespace hotpage
