// IBS op samples: what the ring reader needs beyond the generic decoder.
//
// Two kernel generations write IBS op samples differently
// (perf_ibs_handle_irq() in arch/x86/events/amd/ibs.c):
//  - Linux 6.1 and later parse the registers themselves
//    (perf_ibs_parse_ld_st_data(), tip commit 7c10dd0a88b1): ADDR is the
//    data address when IbsOpData3.dc_lin_addr_valid, DATA_SRC names the
//    op (mem_op LOAD or STORE) for loads and stores only; for every other
//    op (most of them with cnt_ctl) DATA_SRC stays PERF_MEM_NA and ADDR 0.
//  - Before 6.1 neither ADDR nor DATA_SRC is filled: the registers are only
//    in the PERF_SAMPLE_RAW block, read in full only when RAW is requested
//    (offset_max = perf_ibs->offset_max). event_config.cc asks for RAW
//    there.
// The RAW block is {u32 size; u32 caps; u64 regs[]}: the kernel's
// perf_ibs_data from its `caps` member on (raw.frag.size = sizeof(u32) +
// ibs_data.size), regs being the op MSRs from MSR_AMD64_IBSOPCTL on:
//   regs[0] IbsOpCtl, [1] IbsOpRip, [2] IbsOpData, [3] IbsOpData2,
//   [4] IbsOpData3, [5] IbsDcLinAd, [6] IbsDcPhysAd,
// then IbsBrTarget and IbsOpData4 when the CPU has them. perf's own decoder
// of this block is tools/perf/util/amd-sample-raw.c. IbsOpData3 bits
// (arch/x86/include/asm/amd-ibs.h, union ibs_op_data3): ld_op 0, st_op 1,
// dc_miss 7, dc_lin_addr_valid 17, dc_miss_lat 32-47.
//
// Hot path: no allocation, bounds-checked reads only.

#ifndef HOTPAGE_SAMPLER_PERF_IBS_RAW_H_
#define HOTPAGE_SAMPLER_PERF_IBS_RAW_H_

#include <cstddef>
#include <cstdint>

#include "sampler/perf/perf_record.h"
#include "sampler/sample.h"

namespace hotpage {

inline constexpr int kIbsRegOpData3 = 4;
inline constexpr int kIbsRegDcLinAd = 5;
inline constexpr uint64_t kIbsOpData3LdOp = uint64_t{1} << 0;
inline constexpr uint64_t kIbsOpData3StOp = uint64_t{1} << 1;
inline constexpr uint64_t kIbsOpData3DcMiss = uint64_t{1} << 7;
inline constexpr uint64_t kIbsOpData3DcLinAddrValid = uint64_t{1} << 17;
inline constexpr int kIbsOpData3DcMissLatShift = 32;

// Offset in a SAMPLE body of the RAW block's u32 size for `sample_type`,
// or -1 when the layout has no RAW or a variable-length field (READ,
// CALLCHAIN) before it. Fields before RAW (perf_output_sample()):
// IDENTIFIER, IP, TID, TIME, ADDR, ID, STREAM_ID, CPU, PERIOD: 8 bytes each.
int RawBlockOffset(uint64_t sample_type);

// The registers of an IBS op RAW block that hotpage reads.
struct IbsOpRegs {
  uint64_t op_data3 = 0;
  uint64_t dc_lin_ad = 0;
};

// Reads IbsOpData3 and IbsDcLinAd from the RAW block at body + offset.
// False when the block does not fit in `len` or is too short to hold them.
bool ParseIbsOpRaw(const uint8_t* body, size_t len, int offset, IbsOpRegs* out);

enum class IbsOpKind : uint8_t {
  kMemory,     // a load or store: *s is complete (its vaddr may still be 0)
  kNotMemory,  // neither load nor store: no data address to expect
  kMalformed,  // RAW requested but the block is unusable
};

// Completes an IBS op sample `s` decoded by DecodeSample() from `body`:
// with RAW, its op kind, data address (when dc_lin_addr_valid), store flag
// and load latency (dc_miss_lat of a load that missed, as 6.1+ puts it in
// WEIGHT) come from the registers; without RAW the op kind comes from
// DATA_SRC's mem_op (6.1+: LOAD or STORE for memory ops, NA otherwise).
IbsOpKind CompleteIbsOpSample(const PerfEventLayout& layout,
                              const uint8_t* body, size_t len, Sample* s);

}  // namespace hotpage

#endif  // HOTPAGE_SAMPLER_PERF_IBS_RAW_H_
