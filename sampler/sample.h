// Sample: one memory access observed by a sampler (PEBS, IBS, a software
// event, DAMON) or read back from a trace. Every source produces this one
// type; every consumer (hotness table, trace writer, simulator) reads it.
//
// The record is a fixed-size POD of 64 bytes (one cache line) so that rings
// of them are copied with memcpy and never allocate. Fields the source
// cannot provide are 0 (paddr, weight) or kUnknown (level, tlb).

#ifndef HOTPAGE_SAMPLER_SAMPLE_H_
#define HOTPAGE_SAMPLER_SAMPLE_H_

#include <cstdint>
#include <type_traits>

namespace hotpage {

// Where the access was served, decoded from perf's data_src.
enum class MemLevel : uint8_t {
  kUnknown = 0,
  kL1 = 1,
  kL2 = 2,
  kL3 = 3,
  kLfb = 4,  // line fill buffer (miss already in flight)
  kLocalDram = 5,
  kRemoteDram = 6,   // another node's DRAM (mem_remote, or REM_RAM1/2)
  kRemoteCache = 7,  // another package's cache (REM_CCE1/2)
  kCxl = 8,          // CXL- or PMEM-like memory (LVLNUM_CXL, LVLNUM_PMEM)
  kIo = 9,
};
inline constexpr int kNumMemLevels = 10;
const char* MemLevelName(MemLevel level);

enum class TlbOutcome : uint8_t {
  kUnknown = 0,
  kL1Hit = 1,
  kL2Hit = 2,
  kMiss = 3,  // page walk (hardware walker or OS)
  // A hit whose level the PMU does not say: Intel PEBS reports every hit
  // that did not miss the second-level TLB as TLB_HIT|TLB_L1|TLB_L2
  // (pebs_set_tlb_lock() in arch/x86/events/intel/ds.c).
  kHit = 4,
};
const char* TlbOutcomeName(TlbOutcome tlb);

// Which sampler produced a sample.
enum class SampleSource : uint8_t {
  kUnknown = 0,
  kPebsLoad = 1,
  kPebsStore = 2,
  kIbsOp = 3,
  kPageFault = 4,
  kDamon = 5,
  // Imported from a perf.data file: a PMU or other event. An import of the
  // software page-fault events is kPageFault (PerfEventSampleSource() in
  // sampler/perf/perf_data_reader.h).
  kPerfData = 6,
};
const char* SampleSourceName(SampleSource source);

// Whether a sample of this source stands for `period` accesses, so that
// samples x period / time estimates a page's access rate. PMU samples do
// (one per `period` counted loads or ops), and so do their recordings
// (kPerfData: perf.data imports of PMU events; kUnknown: traces written
// that way by hand or by a generator). A fault (kPageFault: page, NUMA
// hint and write faults, also imported from perf.data) is raised at most
// once per page per re-arm (a kernel scan pass, a soft-dirty clear, an
// unmap) however often the page is accessed, and DAMON's
// nr_accesses counts the sampling intervals that saw an access: their
// rates bound a page's access rate from below, for a hot page by orders of
// magnitude (one hint fault a second for thousands of accesses).
constexpr bool SamplesCountAccesses(SampleSource source) {
  return source != SampleSource::kPageFault && source != SampleSource::kDamon;
}

struct Sample {
  uint64_t time_ns = 0;   // perf clock (CLOCK_MONOTONIC unless configured)
  uint64_t vaddr = 0;     // virtual data address; never 0 once accepted
  uint64_t paddr = 0;     // physical address, 0 when unknown
  uint64_t data_src = 0;  // raw perf_mem_data_src
  uint64_t period = 0;    // effective sample period when this was taken
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint32_t cpu = 0;
  uint32_t weight = 0;  // load latency in cycles, 0 when unknown
  MemLevel level = MemLevel::kUnknown;
  TlbOutcome tlb = TlbOutcome::kUnknown;
  SampleSource source = SampleSource::kUnknown;
  uint8_t flags = 0;      // kSampleStore, kSampleRegion
  uint32_t reserved = 0;  // keeps the record at 64 bytes; always 0
};
static_assert(sizeof(Sample) == 64, "Sample is one cache line");
static_assert(std::is_trivially_copyable_v<Sample>);

inline constexpr uint8_t kSampleStore = 1 << 0;  // the access was a store
// The sample is region-level evidence for a chunk of address space, not one
// access at vaddr (DAMON: see sampler/damon_source.h for what it means).
inline constexpr uint8_t kSampleRegion = 1 << 1;

struct DecodedDataSrc {
  MemLevel level = MemLevel::kUnknown;
  TlbOutcome tlb = TlbOutcome::kUnknown;
  bool is_store = false;
};

// Decodes perf_mem_data_src (linux/perf_event.h). Prefers the newer
// mem_lvl_num/mem_remote fields (Linux 4.14+) and falls back to the old
// mem_lvl bit set. Pure; no allocation; safe on any 64-bit value.
// Rules beyond the field names, from the kernel's encoders:
//  - mem_lvl MISS without HIT: mem_lvl_num names the level that missed,
//    not where the data came from (Intel dse 0x00 "unknown L3 miss" is
//    LVL_MISS|LVLNUM_L3 in arch/x86/events/intel/ds.c): level unknown.
//  - TLB_HIT with both TLB_L1 and TLB_L2: a hit at an unreported level
//    (TlbOutcome::kHit), not an STLB hit.
//  - remote with HOPS_0 ("remote core, same node"): AMD Zen 4's near-CCX
//    cache (IBS_DATA_SRC_EXT_NEAR_CCX_CACHE in arch/x86/events/amd/ibs.c:
//    REM_CCE1|ANY_CACHE|REM|HOPS(0)) is this package's cache: kL3, not
//    kRemoteCache.
DecodedDataSrc DecodeDataSrc(uint64_t data_src);

}  // namespace hotpage

#endif  // HOTPAGE_SAMPLER_SAMPLE_H_
