#include "sampler/perf/ibs_raw.h"

#include <linux/perf_event.h>

#include <cstring>
#include <vector>

#include "gtest/gtest.h"

namespace hotpage {
namespace {

TEST(RawBlockOffset, FixedFieldsBeforeRaw) {
  EXPECT_EQ(RawBlockOffset(PERF_SAMPLE_IP), -1);  // no RAW
  EXPECT_EQ(RawBlockOffset(PERF_SAMPLE_RAW), 0);
  EXPECT_EQ(RawBlockOffset(
                PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |
                PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW | PERF_SAMPLE_DATA_SRC),
            56);
  // Fields after RAW do not move it; variable ones before it make it
  // unknowable without a walk.
  EXPECT_EQ(RawBlockOffset(PERF_SAMPLE_RAW | PERF_SAMPLE_WEIGHT_STRUCT), 0);
  EXPECT_EQ(RawBlockOffset(PERF_SAMPLE_RAW | PERF_SAMPLE_CALLCHAIN), -1);
  EXPECT_EQ(RawBlockOffset(PERF_SAMPLE_RAW | PERF_SAMPLE_READ), -1);
}

std::vector<uint8_t> Block(uint32_t size, const std::vector<uint64_t>& regs) {
  std::vector<uint8_t> b(8 + 8 * regs.size());
  std::memcpy(b.data(), &size, 4);
  const uint32_t caps = 1;
  std::memcpy(b.data() + 4, &caps, 4);
  if (!regs.empty()) std::memcpy(b.data() + 8, regs.data(), 8 * regs.size());
  return b;
}

TEST(ParseIbsOpRaw, ReadsData3AndLinearAddress) {
  std::vector<uint8_t> b =
      Block(4 + 7 * 8, {1, 2, 3, 4, 0x20003, 0x7fff0000, 7});
  IbsOpRegs r;
  ASSERT_TRUE(ParseIbsOpRaw(b.data(), b.size(), 0, &r));
  EXPECT_EQ(r.op_data3, 0x20003u);
  EXPECT_EQ(r.dc_lin_ad, 0x7fff0000u);
}

TEST(ParseIbsOpRaw, RefusesShortOrOverlongBlocks) {
  IbsOpRegs r;
  // Too few registers (a kernel that read only IbsOpCtl..IbsOpData).
  std::vector<uint8_t> short_block = Block(4 + 3 * 8, {1, 2, 3});
  EXPECT_FALSE(ParseIbsOpRaw(short_block.data(), short_block.size(), 0, &r));
  // A size larger than the record.
  std::vector<uint8_t> b = Block(4 + 7 * 8, {1, 2, 3, 4, 5, 6, 7});
  EXPECT_FALSE(ParseIbsOpRaw(b.data(), b.size() - 8, 0, &r));
  uint32_t huge = 0xffffffff;
  std::memcpy(b.data(), &huge, 4);
  EXPECT_FALSE(ParseIbsOpRaw(b.data(), b.size(), 0, &r));
  // Offsets past the end, or unknown.
  EXPECT_FALSE(ParseIbsOpRaw(b.data(), 3, 0, &r));
  EXPECT_FALSE(ParseIbsOpRaw(b.data(), b.size(), -1, &r));
}

TEST(CompleteIbsOpSample, OpKinds) {
  PerfEventLayout l;
  l.sample_type = PERF_SAMPLE_RAW;
  l.source = SampleSource::kIbsOp;
  Sample s;
  std::vector<uint8_t> other = Block(4 + 7 * 8, {0, 0, 0, 0, 0, 0, 0});
  EXPECT_EQ(CompleteIbsOpSample(l, other.data(), other.size(), &s),
            IbsOpKind::kNotMemory);
  // A store whose address is not valid keeps vaddr 0 (the reader then
  // counts it as filtered_zero).
  std::vector<uint8_t> st = Block(4 + 7 * 8, {0, 0, 0, 0, 2, 0x7000, 0});
  s = Sample{};
  EXPECT_EQ(CompleteIbsOpSample(l, st.data(), st.size(), &s),
            IbsOpKind::kMemory);
  EXPECT_EQ(s.vaddr, 0u);
  EXPECT_NE(s.flags & kSampleStore, 0);
  std::vector<uint8_t> bad = Block(4, {});
  EXPECT_EQ(CompleteIbsOpSample(l, bad.data(), bad.size(), &s),
            IbsOpKind::kMalformed);
}

}  // namespace
}  // namespace hotpage
