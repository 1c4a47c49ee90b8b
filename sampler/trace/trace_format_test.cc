// Unit tests of the .hpt building blocks: the columnar sample codec (every
// edge value, worst-case size bound, malformed input), the header and the
// stats payload.

#include "sampler/trace/trace_format.h"

#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sampler/trace/trace_testing.h"

namespace hotpage {
namespace {

using testing_internal::EdgeSamples;
using testing_internal::SameSample;
using trace_internal::DecodeSamples;
using trace_internal::EncodeSamples;
using trace_internal::MaxEncodedSamplesBytes;

const std::vector<uint8_t> kZero = {0};

std::vector<uint8_t> Encode(const std::vector<Sample>& s, SampleEncoding e) {
  std::vector<uint8_t> out(MaxEncodedSamplesBytes(s.size(), e));
  out.resize(EncodeSamples(s.data(), s.size(), e, out.data()));
  return out;
}

class SampleCodecTest : public ::testing::TestWithParam<SampleEncoding> {};

TEST_P(SampleCodecTest, EdgeValuesRoundTrip) {
  const std::vector<Sample> in = EdgeSamples(5000);
  const std::vector<uint8_t> bytes = Encode(in, GetParam());
  std::vector<Sample> out(in.size());
  ASSERT_EQ(DecodeSamples(bytes.data(), bytes.size(), in.size(), GetParam(),
                          out.data()),
            nullptr);
  for (size_t i = 0; i < in.size(); ++i)
    ASSERT_TRUE(SameSample(in[i], out[i])) << i;
}

TEST_P(SampleCodecTest, WorstCaseFitsTheBound) {
  // All-ones fields and alternating extremes make the longest varints and
  // deltas: the encoder must stay within MaxEncodedSamplesBytes.
  std::vector<Sample> in(64);
  for (size_t i = 0; i < in.size(); ++i) {
    Sample& s = in[i];
    const uint64_t v = (i % 2) ? ~uint64_t{0} : uint64_t{1} << 63;
    s.time_ns = s.vaddr = s.paddr = s.data_src = s.period = v;
    s.pid = s.tid = s.cpu = s.weight = s.reserved = 0xffffffffu;
  }
  std::vector<uint8_t> buf(MaxEncodedSamplesBytes(in.size(), GetParam()) + 64,
                           0xAA);
  const size_t n = EncodeSamples(in.data(), in.size(), GetParam(), buf.data());
  EXPECT_LE(n, MaxEncodedSamplesBytes(in.size(), GetParam()));
  for (size_t i = MaxEncodedSamplesBytes(in.size(), GetParam()); i < buf.size();
       ++i) {
    ASSERT_EQ(buf[i], 0xAA) << "wrote past the bound at " << i;
  }
}

TEST_P(SampleCodecTest, EveryShorterOrLongerInputIsRejected) {
  const std::vector<Sample> in = EdgeSamples(40, 11);
  std::vector<uint8_t> bytes = Encode(in, GetParam());
  std::vector<Sample> out(in.size());
  for (size_t len = 0; len < bytes.size(); ++len) {
    std::vector<uint8_t> cut(bytes.begin(),
                             bytes.begin() + len);  // exact-size allocation
    EXPECT_NE(DecodeSamples(cut.data(), cut.size(), in.size(), GetParam(),
                            out.data()),
              nullptr)
        << "len=" << len;
  }
  bytes.push_back(0);
  EXPECT_NE(DecodeSamples(bytes.data(), bytes.size(), in.size(), GetParam(),
                          out.data()),
            nullptr);
}

INSTANTIATE_TEST_SUITE_P(Encodings, SampleCodecTest,
                         ::testing::Values(SampleEncoding::kRaw,
                                           SampleEncoding::kColumnar),
                         [](const auto& info) {
                           return info.param == SampleEncoding::kRaw
                                      ? "Raw"
                                      : "Columnar";
                         });

// One columnar sample whose first columns are given as raw bytes; the
// rest are zeros.
const char* DecodeOne(const std::vector<uint8_t>& time,
                      const std::vector<uint8_t>& cpu,
                      const std::vector<uint8_t>& vpage = {0},
                      const std::vector<uint8_t>& voff = {0},
                      const std::vector<uint8_t>& paddr = {0},
                      Sample* out = nullptr) {
  std::vector<uint8_t> b = time;
  for (const auto* col : {&cpu, &kZero, &kZero, &vpage, &voff, &paddr}) {
    b.insert(b.end(), col->begin(), col->end());
  }
  // weight data_src period: 0; level tlb source flags; reserved 0.
  for (int i = 0; i < 3 + 4 + 1; ++i) b.push_back(0);
  Sample s;
  return DecodeSamples(b.data(), b.size(), 1, SampleEncoding::kColumnar,
                       out ? out : &s);
}

TEST(ColumnarTest, VarintLimits) {
  const std::vector<uint8_t> zero = {0};
  EXPECT_EQ(DecodeOne(zero, zero), nullptr);
  // Ten bytes with bit 63 set (zigzag max) is the longest legal varint.
  std::vector<uint8_t> max64(9, 0xff);
  max64.push_back(0x01);
  EXPECT_EQ(DecodeOne(max64, zero), nullptr);
  // A tenth byte with more than bit 63, or an eleventh byte: rejected.
  std::vector<uint8_t> over = max64;
  over.back() = 0x02;
  EXPECT_NE(DecodeOne(over, zero), nullptr);
  std::vector<uint8_t> eleven(10, 0x80);
  eleven.push_back(0);
  EXPECT_NE(DecodeOne(eleven, zero), nullptr);
  // Non-minimal but in-range encodings are accepted (zero as 0x80 0x00).
  EXPECT_EQ(DecodeOne({0x80, 0x00}, zero), nullptr);
  // A 32-bit column holding 2^32: rejected; 2^32-1: accepted.
  EXPECT_NE(DecodeOne(zero, {0x80, 0x80, 0x80, 0x80, 0x10}), nullptr);
  EXPECT_EQ(DecodeOne(zero, {0xff, 0xff, 0xff, 0xff, 0x0f}), nullptr);
}

TEST(ColumnarTest, PagesAndOffsets) {
  const std::vector<uint8_t> zero = {0};
  Sample s;
  // vpage zigzag(3) = 6 -> page 3; voff 0x7ff; ppage 2 -> page 1, poff 0x10.
  ASSERT_EQ(DecodeOne(zero, zero, {6}, {0xff, 0x0f}, {2, 0x10}, &s), nullptr);
  EXPECT_EQ(s.vaddr, 0x37ffu);
  EXPECT_EQ(s.paddr, 0x1000u | (0x10 ^ 0x7ff));
  // Offsets beyond the page, pages beyond 52 bits: rejected.
  EXPECT_NE(DecodeOne(zero, zero, {0}, {0x80, 0x20}), nullptr);
  EXPECT_NE(DecodeOne(zero, zero, {0}, {0}, {2, 0x80, 0x20}), nullptr);
  // ppage = 2^52 + 1 (page 2^52) is one too many; 2^52 is the last page.
  std::vector<uint8_t> last = {0x80, 0x80, 0x80, 0x80, 0x80,
                               0x80, 0x80, 0x08, 0};
  EXPECT_EQ(DecodeOne(zero, zero, {0}, {0}, last, &s), nullptr);
  EXPECT_EQ(s.paddr >> 12, (uint64_t{1} << 52) - 1);
  last[0] = 0x81;
  EXPECT_NE(DecodeOne(zero, zero, {0}, {0}, last), nullptr);
  // vpage delta reaching 2^52: rejected (zigzag(2^52) = 2^53).
  const std::vector<uint8_t> big = {0x80, 0x80, 0x80, 0x80,
                                    0x80, 0x80, 0x80, 0x10};
  EXPECT_NE(DecodeOne(zero, zero, big), nullptr);
  // A paddr column without its offset entry: short.
  EXPECT_NE(DecodeOne(zero, zero, {0}, {0}, {2}), nullptr);
}

TEST(HeaderTest, RoundTripAndCaps) {
  TraceHeader h = testing_internal::TestHeader();
  std::string bytes, error;
  ASSERT_TRUE(trace_internal::EncodeHeader(h, &bytes, &error)) << error;
  trace_internal::Preamble pre;
  ASSERT_TRUE(trace_internal::DecodePreamble(
      reinterpret_cast<const uint8_t*>(bytes.data()), &pre));
  EXPECT_EQ(pre.version_major, kTraceVersionMajor);
  EXPECT_EQ(pre.body_size, bytes.size() - kTracePreambleBytes);
  const auto* body =
      reinterpret_cast<const uint8_t*>(bytes.data()) + kTracePreambleBytes;
  EXPECT_EQ(
      trace_internal::HeaderCrc(reinterpret_cast<const uint8_t*>(bytes.data()),
                                body, pre.body_size),
      pre.crc);
  TraceHeader back;
  ASSERT_EQ(trace_internal::DecodeHeaderBody(pre, body, &back), nullptr);
  EXPECT_EQ(back.sample_period, h.sample_period);
  EXPECT_EQ(back.start_realtime_ns, h.start_realtime_ns);
  EXPECT_EQ(back.start_clock_ns, h.start_clock_ns);
  EXPECT_EQ(back.source, h.source);
  EXPECT_EQ(back.event_config, h.event_config);
  EXPECT_EQ(back.topology_json, h.topology_json);

  h.source.assign(kMaxSourceBytes + 1, 'x');
  EXPECT_FALSE(trace_internal::EncodeHeader(h, &bytes, &error));
  EXPECT_NE(error.find("source name"), std::string::npos) << error;
  h = testing_internal::TestHeader();
  h.topology_json.assign(kMaxTopologyBytes + 1, ' ');
  EXPECT_FALSE(trace_internal::EncodeHeader(h, &bytes, &error));
  EXPECT_NE(error.find("topology"), std::string::npos) << error;
}

TEST(HeaderTest, StringLengthBeyondBodyIsRejected) {
  trace_internal::Preamble pre;
  pre.version_major = 1;
  std::vector<uint8_t> body(24 + 4, 0);
  body[24] = 0xff;  // source length 255 with no bytes behind it
  pre.body_size = static_cast<uint32_t>(body.size());
  TraceHeader h;
  EXPECT_STREQ(trace_internal::DecodeHeaderBody(pre, body.data(), &h),
               "bad source string in header");
}

TEST(StatsTest, RoundTripAndValidation) {
  std::vector<CpuCounters> in = {
      {0, 1, 2, 3, 4}, {5, ~uint64_t{0}, 0, 0, 9}, {kUnknownCpu, 7, 0, 0, 0}};
  std::string bytes;
  trace_internal::EncodeStats(12345, in, &bytes);
  ASSERT_EQ(bytes.size(), 8 + 3 * kStatsEntryBytes);
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  uint64_t before = 0;
  std::vector<CpuCounters> out;
  ASSERT_EQ(trace_internal::DecodeStats(p, bytes.size(), 3, &before, &out),
            nullptr);
  EXPECT_EQ(before, 12345u);
  EXPECT_EQ(out, in);
  EXPECT_NE(trace_internal::DecodeStats(p, bytes.size(), 2, &before, &out),
            nullptr);
  EXPECT_NE(trace_internal::DecodeStats(p, bytes.size() - 1, 3, &before, &out),
            nullptr);
  std::swap(in[0], in[1]);  // not rising
  trace_internal::EncodeStats(0, in, &bytes);
  EXPECT_STREQ(trace_internal::DecodeStats(
                   reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                   3, &before, &out),
               "CPU entries not in rising order");
}

TEST(SourceNameTest, RoundTrip) {
  for (SampleSource s : {SampleSource::kPebsLoad, SampleSource::kPebsStore,
                         SampleSource::kIbsOp, SampleSource::kPageFault,
                         SampleSource::kDamon, SampleSource::kPerfData}) {
    EXPECT_EQ(SampleSourceFromName(SampleSourceName(s)), s)
        << SampleSourceName(s);
  }
  EXPECT_EQ(SampleSourceFromName("cxl-hmu"), SampleSource::kUnknown);
  EXPECT_EQ(SampleSourceFromName("unknown"), SampleSource::kUnknown);
}

}  // namespace
}  // namespace hotpage
