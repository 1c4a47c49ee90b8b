// What an Intel PEBS sample of one memory access looks like, as hotpage's
// sampler records it (sampler/sample.h): the perf_mem_data_src encoding the
// kernel builds from the PEBS record (arch/x86/events/intel/ds.c:
// pebs_data_source[], pebs_set_tlb_lock(), precise_store_data()), the load
// latency in cycles (the low 32 bits of WEIGHT_STRUCT) and the decoded
// level/tlb/flags/source fields.
//
// Loads come from `mem-loads,ldlat=30` (MEM_TRANS_RETIRED.LOAD_LATENCY):
// only loads that took 30 cycles or more are counted and sampled, so a
// sampled load was served by the line fill buffer (a miss already in
// flight), the L3, or DRAM, never by L1/L2. Stores come from `mem-stores`
// (precise store sampling): every store counts, the record says only
// whether it hit L1 and whether it missed the STLB, and carries no latency.
//
// Latencies (cycles, a 2-3 GHz server core): L1 5, L2 14, LFB 30-119, L3 38-62,
// local DRAM 180-279 with a 1-in-16 tail of up to 400 more (queueing, refresh),
// plus 25-54 for a page walk on an STLB miss.

#ifndef HOTPAGE_TOOLS_TRACE_GEN_PEBS_MODEL_H_
#define HOTPAGE_TOOLS_TRACE_GEN_PEBS_MODEL_H_

#include <cstdint>

#include "sampler/sample.h"
#include "tools/trace_gen/prng.h"

namespace hotpage {
namespace trace_gen {

// Where a load was served from. Sampled loads of the generator are never
// L1/L2 hits (they are under ldlat); the Lackey converter can sample one
// that waited for a page walk.
enum class ServedBy : uint8_t { kL1, kL2, kLfb, kL3, kDram };

// perf_mem_data_src of a sampled load (local DRAM is "L3 miss, exclusive").
uint64_t LoadDataSrc(ServedBy by, bool stlb_miss);
// perf_mem_data_src of a sampled store.
uint64_t StoreDataSrc(bool l1_hit, bool stlb_miss);
// Load latency in cycles.
uint32_t LoadLatency(ServedBy by, bool stlb_miss, Rng& rng);

// How cache-friendly the workload's access to a page is; sets the odds of
// the level a sampled access was served from.
enum class AccessClass : uint8_t {
  kHot,         // small, intensely used set: often still in L3
  kWarm,        // shared or medium set
  kCold,        // random over a large area: DRAM, STLB misses
  kSequential,  // streaming: prefetched, mostly in the fill buffer
};

// Fills every field of `s` except time_ns, pid, tid, cpu and period from
// an access of class `cls` at `vaddr`.
void FillPebsSample(uint64_t vaddr, AccessClass cls, bool store, Rng& rng,
                    Sample* s);

}  // namespace trace_gen
}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_TRACE_GEN_PEBS_MODEL_H_
