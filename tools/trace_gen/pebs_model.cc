#include "tools/trace_gen/pebs_model.h"

#include <linux/perf_event.h>

namespace hotpage {
namespace trace_gen {
namespace {

constexpr uint64_t P(uint64_t value, int shift) { return value << shift; }
constexpr uint64_t kOpLoadHit = P(PERF_MEM_OP_LOAD, PERF_MEM_OP_SHIFT) |
                                P(PERF_MEM_LVL_HIT, PERF_MEM_LVL_SHIFT);

struct ClassOdds {
  double l3;         // of sampled loads: served by L3
  double lfb;        // ... by the fill buffer; the rest by DRAM
  double stlb_miss;  // the access missed the STLB (page walk)
  double store_l1_hit;
};

ClassOdds Odds(AccessClass cls) {
  switch (cls) {
    case AccessClass::kHot:
      return {0.35, 0.05, 0.15, 0.7};
    case AccessClass::kWarm:
      return {0.15, 0.05, 0.40, 0.5};
    case AccessClass::kCold:
      return {0.03, 0.02, 0.85, 0.1};
    case AccessClass::kSequential:
      return {0.10, 0.70, 0.02, 0.9};
  }
  return {0, 0, 0, 0};
}

}  // namespace

uint64_t LoadDataSrc(ServedBy by, bool stlb_miss) {
  uint64_t v = kOpLoadHit | P(PERF_MEM_BLK_NA, PERF_MEM_BLK_SHIFT);
  switch (by) {
    case ServedBy::kL1:
      v |= P(PERF_MEM_LVL_L1, PERF_MEM_LVL_SHIFT) |
           P(PERF_MEM_LVLNUM_L1, PERF_MEM_LVLNUM_SHIFT) |
           P(PERF_MEM_SNOOP_NONE, PERF_MEM_SNOOP_SHIFT);
      break;
    case ServedBy::kL2:
      v |= P(PERF_MEM_LVL_L2, PERF_MEM_LVL_SHIFT) |
           P(PERF_MEM_LVLNUM_L2, PERF_MEM_LVLNUM_SHIFT) |
           P(PERF_MEM_SNOOP_NONE, PERF_MEM_SNOOP_SHIFT);
      break;
    case ServedBy::kLfb:
      v |= P(PERF_MEM_LVL_LFB, PERF_MEM_LVL_SHIFT) |
           P(PERF_MEM_LVLNUM_LFB, PERF_MEM_LVLNUM_SHIFT) |
           P(PERF_MEM_SNOOP_NONE, PERF_MEM_SNOOP_SHIFT);
      break;
    case ServedBy::kL3:
      v |= P(PERF_MEM_LVL_L3, PERF_MEM_LVL_SHIFT) |
           P(PERF_MEM_LVLNUM_L3, PERF_MEM_LVLNUM_SHIFT) |
           P(PERF_MEM_SNOOP_NONE, PERF_MEM_SNOOP_SHIFT);
      break;
    case ServedBy::kDram:
      v |= P(PERF_MEM_LVL_LOC_RAM, PERF_MEM_LVL_SHIFT) |
           P(PERF_MEM_LVLNUM_RAM, PERF_MEM_LVLNUM_SHIFT) |
           P(PERF_MEM_SNOOP_NONE | PERF_MEM_SNOOP_MISS, PERF_MEM_SNOOP_SHIFT);
      break;
  }
  v |= stlb_miss ? P(PERF_MEM_TLB_MISS | PERF_MEM_TLB_L2, PERF_MEM_TLB_SHIFT)
                 : P(PERF_MEM_TLB_HIT | PERF_MEM_TLB_L1 | PERF_MEM_TLB_L2,
                     PERF_MEM_TLB_SHIFT);
  return v;
}

uint64_t StoreDataSrc(bool l1_hit, bool stlb_miss) {
  uint64_t v =
      P(PERF_MEM_OP_STORE, PERF_MEM_OP_SHIFT) |
      P(PERF_MEM_SNOOP_NA, PERF_MEM_SNOOP_SHIFT) |
      P(PERF_MEM_LVL_L1 | (l1_hit ? PERF_MEM_LVL_HIT : PERF_MEM_LVL_MISS),
        PERF_MEM_LVL_SHIFT) |
      P(PERF_MEM_TLB_L2, PERF_MEM_TLB_SHIFT);
  v |= P(stlb_miss ? PERF_MEM_TLB_MISS : PERF_MEM_TLB_HIT, PERF_MEM_TLB_SHIFT);
  return v;
}

uint32_t LoadLatency(ServedBy by, bool stlb_miss, Rng& rng) {
  uint64_t cycles = 0;
  switch (by) {
    case ServedBy::kL1:
      cycles = 5;
      break;
    case ServedBy::kL2:
      cycles = 14;
      break;
    case ServedBy::kLfb:
      cycles = 30 + rng.Below(90);
      break;
    case ServedBy::kL3:
      cycles = 38 + rng.Below(25);
      break;
    case ServedBy::kDram:
      cycles = 180 + rng.Below(100);
      if (rng.Below(16) == 0) cycles += rng.Below(400);
      break;
  }
  if (stlb_miss) cycles += 25 + rng.Below(30);
  return static_cast<uint32_t>(cycles);
}

void FillPebsSample(uint64_t vaddr, AccessClass cls, bool store, Rng& rng,
                    Sample* s) {
  const ClassOdds odds = Odds(cls);
  const bool stlb_miss = rng.Chance(odds.stlb_miss);
  s->vaddr = vaddr;
  s->paddr = 0;  // hotpage does not request PERF_SAMPLE_PHYS_ADDR
  if (store) {
    s->data_src = StoreDataSrc(rng.Chance(odds.store_l1_hit), stlb_miss);
    s->weight = 0;
    s->source = SampleSource::kPebsStore;
  } else {
    const double u = rng.Uniform();
    const ServedBy by = u < odds.l3              ? ServedBy::kL3
                        : u < odds.l3 + odds.lfb ? ServedBy::kLfb
                                                 : ServedBy::kDram;
    s->data_src = LoadDataSrc(by, stlb_miss);
    s->weight = LoadLatency(by, stlb_miss, rng);
    s->source = SampleSource::kPebsLoad;
  }
  // As the ring reader decodes it (sampler/perf/perf_record.cc).
  const DecodedDataSrc d = DecodeDataSrc(s->data_src);
  s->level = d.level;
  s->tlb = d.tlb;
  s->flags = d.is_store ? kSampleStore : 0;
  s->reserved = 0;
}

}  // namespace trace_gen
}  // namespace hotpage
