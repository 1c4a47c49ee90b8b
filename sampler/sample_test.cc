#include "sampler/sample.h"

#include <linux/perf_event.h>

#include "gtest/gtest.h"

namespace hotpage {
namespace {

uint64_t Src(uint64_t op, uint64_t lvl, uint64_t tlb, uint64_t lvl_num = 0,
             bool remote = false) {
  return op << PERF_MEM_OP_SHIFT | lvl << PERF_MEM_LVL_SHIFT |
         tlb << PERF_MEM_TLB_SHIFT | lvl_num << PERF_MEM_LVLNUM_SHIFT |
         uint64_t{remote} << PERF_MEM_REMOTE_SHIFT;
}

TEST(DecodeDataSrc, SoftwareEventsAreUnknown) {
  // Software events report PERF_MEM_NA: NA in every field.
  uint64_t na = Src(PERF_MEM_OP_NA, PERF_MEM_LVL_NA, PERF_MEM_TLB_NA) |
                (uint64_t{PERF_MEM_SNOOP_NA} << PERF_MEM_SNOOP_SHIFT) |
                (uint64_t{PERF_MEM_LOCK_NA} << PERF_MEM_LOCK_SHIFT);
  EXPECT_EQ(
      na, 0x5080021u);  // the kernel's PERF_MEM_NA (include/linux/perf_event.h)
  DecodedDataSrc d = DecodeDataSrc(na);
  EXPECT_EQ(d.level, MemLevel::kUnknown);
  EXPECT_EQ(d.tlb, TlbOutcome::kUnknown);
  EXPECT_FALSE(d.is_store);
  EXPECT_EQ(DecodeDataSrc(0).level, MemLevel::kUnknown);
}

TEST(DecodeDataSrc, OldLevelBits) {
  EXPECT_EQ(
      DecodeDataSrc(Src(PERF_MEM_OP_LOAD, PERF_MEM_LVL_HIT | PERF_MEM_LVL_L1,
                        PERF_MEM_TLB_HIT | PERF_MEM_TLB_L1))
          .level,
      MemLevel::kL1);
  EXPECT_EQ(DecodeDataSrc(Src(PERF_MEM_OP_LOAD,
                              PERF_MEM_LVL_HIT | PERF_MEM_LVL_LOC_RAM, 0))
                .level,
            MemLevel::kLocalDram);
  EXPECT_EQ(DecodeDataSrc(Src(PERF_MEM_OP_LOAD,
                              PERF_MEM_LVL_HIT | PERF_MEM_LVL_REM_RAM1, 0))
                .level,
            MemLevel::kRemoteDram);
  EXPECT_EQ(DecodeDataSrc(Src(PERF_MEM_OP_LOAD,
                              PERF_MEM_LVL_HIT | PERF_MEM_LVL_REM_CCE2, 0))
                .level,
            MemLevel::kRemoteCache);
  EXPECT_EQ(DecodeDataSrc(
                Src(PERF_MEM_OP_LOAD, PERF_MEM_LVL_HIT | PERF_MEM_LVL_LFB, 0))
                .level,
            MemLevel::kLfb);
  // A miss says where it did not come from: unknown.
  EXPECT_EQ(DecodeDataSrc(
                Src(PERF_MEM_OP_LOAD, PERF_MEM_LVL_MISS | PERF_MEM_LVL_L3, 0))
                .level,
            MemLevel::kUnknown);
}

TEST(DecodeDataSrc, NewLevelNumbersWin) {
  EXPECT_EQ(
      DecodeDataSrc(Src(PERF_MEM_OP_LOAD, 0, 0, PERF_MEM_LVLNUM_RAM)).level,
      MemLevel::kLocalDram);
  EXPECT_EQ(
      DecodeDataSrc(Src(PERF_MEM_OP_LOAD, 0, 0, PERF_MEM_LVLNUM_RAM, true))
          .level,
      MemLevel::kRemoteDram);
  EXPECT_EQ(DecodeDataSrc(
                Src(PERF_MEM_OP_LOAD, 0, 0, PERF_MEM_LVLNUM_ANY_CACHE, true))
                .level,
            MemLevel::kRemoteCache);
  EXPECT_EQ(
      DecodeDataSrc(Src(PERF_MEM_OP_LOAD, 0, 0, PERF_MEM_LVLNUM_CXL)).level,
      MemLevel::kCxl);
  EXPECT_EQ(
      DecodeDataSrc(Src(PERF_MEM_OP_LOAD, 0, 0, PERF_MEM_LVLNUM_PMEM)).level,
      MemLevel::kCxl);
  EXPECT_EQ(
      DecodeDataSrc(Src(PERF_MEM_OP_LOAD, 0, 0, PERF_MEM_LVLNUM_L2)).level,
      MemLevel::kL2);
  EXPECT_EQ(
      DecodeDataSrc(Src(PERF_MEM_OP_LOAD, 0, 0, PERF_MEM_LVLNUM_LFB)).level,
      MemLevel::kLfb);
  // New field beats a contradicting old bit.
  EXPECT_EQ(
      DecodeDataSrc(Src(PERF_MEM_OP_LOAD, PERF_MEM_LVL_HIT | PERF_MEM_LVL_L1, 0,
                        PERF_MEM_LVLNUM_RAM))
          .level,
      MemLevel::kLocalDram);
}

TEST(DecodeDataSrc, TlbAndStores) {
  EXPECT_EQ(DecodeDataSrc(
                Src(PERF_MEM_OP_LOAD, 0, PERF_MEM_TLB_HIT | PERF_MEM_TLB_L1))
                .tlb,
            TlbOutcome::kL1Hit);
  EXPECT_EQ(DecodeDataSrc(
                Src(PERF_MEM_OP_LOAD, 0, PERF_MEM_TLB_HIT | PERF_MEM_TLB_L2))
                .tlb,
            TlbOutcome::kL2Hit);
  EXPECT_EQ(DecodeDataSrc(
                Src(PERF_MEM_OP_LOAD, 0, PERF_MEM_TLB_MISS | PERF_MEM_TLB_L2))
                .tlb,
            TlbOutcome::kMiss);
  EXPECT_EQ(DecodeDataSrc(
                Src(PERF_MEM_OP_LOAD, 0, PERF_MEM_TLB_MISS | PERF_MEM_TLB_WK))
                .tlb,
            TlbOutcome::kMiss);
  EXPECT_TRUE(DecodeDataSrc(Src(PERF_MEM_OP_STORE, 0, 0)).is_store);
}

// D11 of the PMU audit, each from the kernel's own encoder.
TEST(DecodeDataSrc, IntelUnknownL3MissIsNotAnL3Hit) {
  // arch/x86/events/intel/ds.c, dse 0x00:
  // P(OP, LOAD) | P(LVL, MISS) | LEVEL(L3) | P(SNOOP, NA) /* 0x00:ukn L3 */
  const uint64_t ukn_l3 =
      Src(PERF_MEM_OP_LOAD, PERF_MEM_LVL_MISS, 0, PERF_MEM_LVLNUM_L3) |
      uint64_t{PERF_MEM_SNOOP_NA} << PERF_MEM_SNOOP_SHIFT;
  EXPECT_EQ(DecodeDataSrc(ukn_l3).level, MemLevel::kUnknown);
  // An L3 hit still is one.
  EXPECT_EQ(
      DecodeDataSrc(Src(PERF_MEM_OP_LOAD, PERF_MEM_LVL_HIT | PERF_MEM_LVL_L3, 0,
                        PERF_MEM_LVLNUM_L3))
          .level,
      MemLevel::kL3);
}

TEST(DecodeDataSrc, IntelTlbHitOfEitherLevelIsNotAnStlbHit) {
  // pebs_set_tlb_lock(): a load that did not miss the STLB is
  // P(TLB, HIT) | P(TLB, L1) | P(TLB, L2); one that missed it
  // P(TLB, MISS) | P(TLB, L2).
  EXPECT_EQ(
      DecodeDataSrc(Src(PERF_MEM_OP_LOAD, 0,
                        PERF_MEM_TLB_HIT | PERF_MEM_TLB_L1 | PERF_MEM_TLB_L2))
          .tlb,
      TlbOutcome::kHit);
  EXPECT_STREQ(TlbOutcomeName(TlbOutcome::kHit), "hit");
  EXPECT_EQ(DecodeDataSrc(
                Src(PERF_MEM_OP_LOAD, 0, PERF_MEM_TLB_MISS | PERF_MEM_TLB_L2))
                .tlb,
            TlbOutcome::kMiss);
}

TEST(DecodeDataSrc, Zen4NearCcxCacheIsThisPackage) {
  // arch/x86/events/amd/ibs.c: IBS_DATA_SRC_EXT_NEAR_CCX_CACHE is
  // L(REM_CCE1) | LN(ANY_CACHE) | REM | HOPS(0); FAR_CCX_CACHE is
  // L(REM_CCE2) | LN(ANY_CACHE) | REM | HOPS(1).
  auto ccx = [](uint64_t cce, uint64_t hops) {
    return Src(PERF_MEM_OP_LOAD, PERF_MEM_LVL_HIT | cce, 0,
               PERF_MEM_LVLNUM_ANY_CACHE, true) |
           hops << PERF_MEM_HOPS_SHIFT;
  };
  EXPECT_EQ(DecodeDataSrc(ccx(PERF_MEM_LVL_REM_CCE1, PERF_MEM_HOPS_0)).level,
            MemLevel::kL3);
  EXPECT_EQ(DecodeDataSrc(ccx(PERF_MEM_LVL_REM_CCE2, PERF_MEM_HOPS_1)).level,
            MemLevel::kRemoteCache);
}

TEST(DecodeDataSrc, AnyValueIsSafe) {
  for (uint64_t v : {~uint64_t{0}, uint64_t{0x8000000000000000},
                     uint64_t{0x123456789abcdef}}) {
    DecodedDataSrc d = DecodeDataSrc(v);
    EXPECT_LT(static_cast<int>(d.level), kNumMemLevels);
  }
}

}  // namespace
}  // namespace hotpage
