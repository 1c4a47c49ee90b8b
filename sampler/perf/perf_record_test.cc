#include "sampler/perf/perf_record.h"

#include <cstring>
#include <vector>

#include "gtest/gtest.h"

namespace hotpage {
namespace {

std::vector<uint8_t> Bytes(const std::vector<uint64_t>& words) {
  std::vector<uint8_t> b(words.size() * 8);
  std::memcpy(b.data(), words.data(), b.size());
  return b;
}

TEST(DecodeSample, PageFaultLayout) {
  PerfEventLayout l;
  l.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
                  PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
  l.source = SampleSource::kPageFault;
  auto b = Bytes({uint64_t{8} << 32 | 7, 1000, 0xdead000, 3, 1});
  Sample s;
  uint64_t id;
  ASSERT_TRUE(DecodeSample(l, b.data(), b.size(), &s, &id));
  EXPECT_EQ(s.pid, 7u);
  EXPECT_EQ(s.tid, 8u);
  EXPECT_EQ(s.time_ns, 1000u);
  EXPECT_EQ(s.vaddr, 0xdead000u);
  EXPECT_EQ(s.cpu, 3u);
  EXPECT_EQ(s.period, 1u);
  EXPECT_EQ(s.source, SampleSource::kPageFault);
  EXPECT_EQ(id, 0u);
  // Every truncation fails cleanly.
  for (size_t len = 0; len < b.size(); ++len) {
    EXPECT_FALSE(DecodeSample(l, b.data(), len, &s, &id)) << len;
  }
}

TEST(DecodeSample, VariableLengthFieldsAreSkippedCorrectly) {
  PerfEventLayout l;
  l.sample_type = PERF_SAMPLE_ID | PERF_SAMPLE_TID | PERF_SAMPLE_ADDR |
                  PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |
                  PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER |
                  PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT |
                  PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION |
                  PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_PHYS_ADDR;
  l.read_format =
      PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED;
  l.branch_sample_type = PERF_SAMPLE_BRANCH_HW_INDEX;
  l.sample_regs_user = 0b1011;  // 3 registers
  l.sample_regs_intr = 0b1;     // 1 register
  l.fixed_period = 4000;
  std::vector<uint64_t> w = {
      uint64_t{5} << 32 | 5,  // TID
      0x7f00,                 // ADDR
      0xabc,                  // ID
      2,
      111,
      10,
      1,
      20,
      2,  // READ: nr=2, time_enabled, {value,id} x2
      3,
      1,
      2,
      3,  // CALLCHAIN: nr=3
      uint64_t{0xAAAA} << 32 | 12,
      0xBBBBBBBBBBBBBBBBull,  // RAW: size 12 (+4 = 16 bytes)
      1,
      0xFF,
      1,
      2,
      3,  // BRANCH_STACK: nr=1, hw_idx, 1 entry (3 words)
      2,
      1,
      2,
      3,  // REGS_USER: abi=2 + 3 regs
      16,
      9,
      9,
      16,    // STACK_USER: size=16, 2 words, dyn_size
      1234,  // WEIGHT
      uint64_t{PERF_MEM_OP_STORE} << PERF_MEM_OP_SHIFT,  // DATA_SRC
      0,                                                 // TRANSACTION
      2,
      7,        // REGS_INTR: abi + 1 reg
      0x99000,  // PHYS_ADDR
  };
  auto b = Bytes(w);
  Sample s;
  uint64_t id;
  ASSERT_TRUE(DecodeSample(l, b.data(), b.size(), &s, &id));
  EXPECT_EQ(id, 0xabcu);
  EXPECT_EQ(s.vaddr, 0x7f00u);
  EXPECT_EQ(s.weight, 1234u);
  EXPECT_EQ(s.paddr, 0x99000u);
  EXPECT_EQ(s.period, 4000u);  // from the attr: no PERIOD field
  EXPECT_TRUE(s.flags & kSampleStore);
  for (size_t len = 0; len < b.size(); len += 8) {
    EXPECT_FALSE(DecodeSample(l, b.data(), len, &s, &id)) << len;
  }
}

TEST(DecodeSample, HostileCountsDoNotOverflow) {
  PerfEventLayout l;
  l.sample_type = PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_ADDR;
  auto b = Bytes({0x7000, ~uint64_t{0}, 1, 2});
  Sample s;
  uint64_t id;
  EXPECT_FALSE(DecodeSample(l, b.data(), b.size(), &s, &id));
  l.sample_type = PERF_SAMPLE_RAW;
  auto r = Bytes({0xffffffff});
  EXPECT_FALSE(DecodeSample(l, r.data(), r.size(), &s, &id));
}

TEST(SampleIdOffset, FollowsTheKernelsRules) {
  EXPECT_EQ(SampleIdOffset(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP), 0);
  EXPECT_EQ(SampleIdOffset(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ID),
            16);
  EXPECT_EQ(SampleIdOffset(PERF_SAMPLE_IP | PERF_SAMPLE_TIME |
                           PERF_SAMPLE_ADDR | PERF_SAMPLE_ID),
            24);
  EXPECT_EQ(SampleIdOffset(PERF_SAMPLE_IP), -1);
}

TEST(DecodeSampleIdTrailer, ReadsTheTailOfARecord) {
  PerfEventLayout l;
  l.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                  PERF_SAMPLE_IDENTIFIER |
                  PERF_SAMPLE_ADDR;  // ADDR is not part of sample_id
  l.sample_id_all = true;
  EXPECT_EQ(SampleIdTrailerSize(l), 32u);
  // LOST {id, lost} + trailer {tid, time, cpu, identifier}
  auto b = Bytes({7, 5, uint64_t{2} << 32 | 1, 999, 3, 7});
  SampleId sid;
  ASSERT_TRUE(DecodeSampleIdTrailer(l, b.data(), b.size(), &sid));
  EXPECT_EQ(sid.pid, 1u);
  EXPECT_EQ(sid.tid, 2u);
  EXPECT_EQ(sid.time, 999u);
  EXPECT_EQ(sid.cpu, 3u);
  EXPECT_TRUE(sid.has_cpu);
  EXPECT_EQ(sid.id, 7u);
  EXPECT_FALSE(DecodeSampleIdTrailer(l, b.data(), 16, &sid));
  l.sample_id_all = false;
  EXPECT_FALSE(DecodeSampleIdTrailer(l, b.data(), b.size(), &sid));
}

}  // namespace
}  // namespace hotpage
