// TraceWriter + TraceReader: round trips, multiple blocks, counters, and
// damage: truncation at every byte, every single-bit flip, version
// mismatches, hostile size fields, trailing garbage.

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "sampler/trace/crc32c.h"
#include "sampler/trace/trace_format.h"
#include "sampler/trace/trace_reader.h"
#include "sampler/trace/trace_testing.h"
#include "sampler/trace/trace_writer.h"

namespace hotpage {
namespace {

using testing_internal::EdgeSamples;
using testing_internal::ReadResult;
using testing_internal::ReadTrace;
using testing_internal::SameSample;
using testing_internal::SyntheticSamples;
using testing_internal::TestHeader;
using testing_internal::WriteTrace;

::testing::AssertionResult Contains(absl::string_view text,
                                    absl::string_view part) {
  if (absl::StrContains(text, part)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "\"" << text << "\" lacks \"" << part << "\"";
}

std::vector<Sample> Synthetic(size_t n, uint64_t seed = 1) {
  SyntheticSamples gen(seed);
  std::vector<Sample> out(n);
  for (Sample& s : out) s = gen.Next();
  return out;
}

void ExpectPrefix(const std::vector<Sample>& prefix,
                  const std::vector<Sample>& all) {
  ASSERT_LE(prefix.size(), all.size());
  for (size_t i = 0; i < prefix.size(); ++i) {
    ASSERT_TRUE(SameSample(prefix[i], all[i])) << "sample " << i << " differs";
  }
}

void ExpectSameHeader(const TraceHeader& a, const TraceHeader& b) {
  EXPECT_EQ(a.sample_period, b.sample_period);
  EXPECT_EQ(a.start_realtime_ns, b.start_realtime_ns);
  EXPECT_EQ(a.start_clock_ns, b.start_clock_ns);
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.event_config, b.event_config);
  EXPECT_EQ(a.topology_json, b.topology_json);
}

// The blocks of a trace as the format describes them, walked independently
// of the reader: where each ends and how many samples it holds.
struct BlockInfo {
  size_t offset;
  size_t end;
  uint8_t type;
  uint32_t count;
};
size_t HeaderSize(const std::string& bytes) {
  uint32_t body;
  std::memcpy(&body, bytes.data() + 12, 4);
  return kTracePreambleBytes + body;
}
std::vector<BlockInfo> Blocks(const std::string& bytes) {
  std::vector<BlockInfo> out;
  size_t off = HeaderSize(bytes);
  while (off + kBlockHeaderBytes <= bytes.size()) {
    BlockHeader h;
    trace_internal::UnpackBlockHeader(
        reinterpret_cast<const uint8_t*>(bytes.data()) + off, &h);
    const size_t end = off + kBlockHeaderBytes + h.stored_size;
    out.push_back({off, end, h.type, h.count});
    off = end;
  }
  EXPECT_EQ(off, bytes.size());
  return out;
}

// Builds one block with a correct checksum.
std::string MakeBlock(uint8_t type, uint8_t codec, uint8_t encoding,
                      uint8_t flags, uint32_t count, const std::string& payload,
                      uint32_t raw_size) {
  BlockHeader h;
  h.type = type;
  h.codec = codec;
  h.encoding = encoding;
  h.flags = flags;
  h.count = count;
  h.raw_size = raw_size;
  h.stored_size = static_cast<uint32_t>(payload.size());
  uint8_t hb[kBlockHeaderBytes];
  trace_internal::PackBlockHeader(h, hb);
  h.crc = trace_internal::BlockCrc(
      hb, reinterpret_cast<const uint8_t*>(payload.data()), payload.size());
  trace_internal::PackBlockHeader(h, hb);
  return std::string(reinterpret_cast<const char*>(hb), sizeof(hb)) + payload;
}

// Re-seals the header checksum after a test edited the header.
void ResealHeader(std::string* bytes) {
  uint32_t body;
  std::memcpy(&body, bytes->data() + 12, 4);
  const auto* p = reinterpret_cast<const uint8_t*>(bytes->data());
  const uint32_t crc =
      trace_internal::HeaderCrc(p, p + kTracePreambleBytes, body);
  std::memcpy(bytes->data() + 16, &crc, 4);
}

struct Config {
  const char* name;
  TraceWriter::Options options;
};

class RoundTripTest : public ::testing::TestWithParam<Config> {};

TEST_P(RoundTripTest, EdgeValues) {
  const std::vector<Sample> in = EdgeSamples(20000);
  absl::StatusOr<std::string> bytes =
      WriteTrace(TestHeader(), in, GetParam().options);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  ReadResult r = ReadTrace(*bytes);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_TRUE(r.complete);
  ExpectSameHeader(r.header, TestHeader());
  EXPECT_EQ(r.header.version_major, kTraceVersionMajor);
  ASSERT_EQ(r.samples.size(), in.size());
  ExpectPrefix(r.samples, in);
}

TEST_P(RoundTripTest, SyntheticStreamInManyBlocks) {
  const std::vector<Sample> in = Synthetic(25000);
  ReadResult r = ReadTrace(*WriteTrace(TestHeader(), in, GetParam().options));
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.samples.size(), in.size());
  ExpectPrefix(r.samples, in);
}

INSTANTIATE_TEST_SUITE_P(
    Options, RoundTripTest,
    ::testing::Values(
        Config{"ColumnarZstd", {}},
        Config{"RawZstd", {.encoding = SampleEncoding::kRaw}},
        Config{"ColumnarStored", {.compress = false}},
        Config{"RawStored",
               {.encoding = SampleEncoding::kRaw, .compress = false}},
        Config{"OnePerBlock", {.samples_per_block = 1}},
        Config{"OddBlocks", {.samples_per_block = 333, .zstd_level = 19}},
        Config{"MaxBlocks", {.samples_per_block = kMaxSamplesPerBlock}}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(TraceTest, BlockBoundariesAreWhereTheyShouldBe) {
  const std::vector<Sample> in = Synthetic(1050);
  const std::string bytes =
      *WriteTrace(TestHeader(), in, {.samples_per_block = 100});
  std::vector<BlockInfo> blocks = Blocks(bytes);
  ASSERT_EQ(blocks.size(),
            11u + 1u);  // 10 full + 1 partial samples blocks, end block
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(blocks[i].type, static_cast<uint8_t>(BlockType::kSamples));
    EXPECT_EQ(blocks[i].count, 100u);
  }
  EXPECT_EQ(blocks[10].count, 50u);
  EXPECT_EQ(blocks[11].type, static_cast<uint8_t>(BlockType::kEnd));

  // The reader hands out one block per Next().
  auto reader = TraceReader::Open(MakeMemorySource(bytes), "x.hpt");
  ASSERT_TRUE(reader.ok()) << reader.status();
  for (int i = 0; i < 11; ++i) {
    auto block = (*reader)->Next();
    ASSERT_TRUE(block.ok()) << block.status();
    EXPECT_EQ(block->size(), i < 10 ? 100u : 50u);
  }
  auto end = (*reader)->Next();
  ASSERT_TRUE(end.ok());
  EXPECT_TRUE(end->empty());
  EXPECT_TRUE((*reader)->complete());
  EXPECT_EQ((*reader)->offset(), bytes.size());
  EXPECT_EQ((*reader)->samples_read(), 1050u);
  // Stays at the end.
  end = (*reader)->Next();
  ASSERT_TRUE(end.ok());
  EXPECT_TRUE(end->empty());
}

// The point of the columnar encoding: smaller files than zstd of the raw
// records, at every zstd level the writer is likely to use.
TEST(TraceTest, ColumnarBeatsPlainZstdOfRawRecords) {
  const std::vector<Sample> in = Synthetic(50000);
  for (int level : {1, 3, 9}) {
    const size_t columnar =
        WriteTrace(TestHeader(), in, {.zstd_level = level})->size();
    const size_t raw =
        WriteTrace(TestHeader(), in,
                   {.encoding = SampleEncoding::kRaw, .zstd_level = level})
            ->size();
    EXPECT_LT(columnar, raw * 0.85) << "level " << level;
    RecordProperty(absl::StrCat("bytes_per_sample_level", level, "_columnar"),
                   absl::StrCat(static_cast<double>(columnar) / in.size()));
    RecordProperty(absl::StrCat("bytes_per_sample_level", level, "_raw"),
                   absl::StrCat(static_cast<double>(raw) / in.size()));
  }
}

TEST(TraceTest, EmptyTraceIsComplete) {
  ReadResult r = ReadTrace(*WriteTrace(TestHeader(), {}, {}));
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_TRUE(r.complete);
  EXPECT_TRUE(r.samples.empty());
}

TEST(TraceTest, CountersRoundTrip) {
  const std::vector<CpuCounters> counters = {{7, 100, 2, 2, 5},
                                             {0, 1, 0, 0, 0},
                                             {kUnknownCpu, 3, 0, 0, 0},
                                             {4095, 0, 9, 8, 0}};
  ReadResult r =
      ReadTrace(*WriteTrace(TestHeader(), Synthetic(10), {}, counters));
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.counters.size(), 4u);
  EXPECT_EQ(r.counters[0], (CpuCounters{0, 1, 0, 0, 0}));
  EXPECT_EQ(r.counters[1], (CpuCounters{7, 100, 2, 2, 5}));
  EXPECT_EQ(r.counters[2], (CpuCounters{4095, 0, 9, 8, 0}));
  EXPECT_EQ(r.counters[3], (CpuCounters{kUnknownCpu, 3, 0, 0, 0}));
}

// A trace written like a recorder would: samples, counter updates and a
// Flush() now and then, then Close().
struct Recorded {
  std::vector<Sample> samples;
  std::string bytes;
};
Recorded RecordSmall(uint32_t samples_per_block = 20, size_t n = 130) {
  Recorded rec;
  rec.samples = Synthetic(n, 3);
  auto w = TraceWriter::Create(
      std::make_unique<StringSink>(&rec.bytes), "small.hpt", TestHeader(),
      {.samples_per_block = samples_per_block, .stats_every_blocks = 2});
  EXPECT_TRUE(w.ok()) << w.status();
  for (size_t i = 0; i < rec.samples.size(); ++i) {
    EXPECT_TRUE((*w)->Append(rec.samples[i]).ok());
    if (i % 17 == 0) {
      EXPECT_TRUE(
          (*w)->AddCounters({static_cast<uint32_t>(i % 3), 1, i % 2, 0, 2})
              .ok());
    }
    if (i == 50) {
      EXPECT_TRUE((*w)->Flush().ok());
    }
  }
  EXPECT_TRUE((*w)->Close().ok());
  return rec;
}

TEST(TraceTest, StatsBlocksInterleaved) {
  Recorded rec = RecordSmall();
  int stats = 0;
  for (const BlockInfo& b : Blocks(rec.bytes)) {
    stats += b.type == static_cast<uint8_t>(BlockType::kStats);
  }
  EXPECT_GE(stats, 2);
  ReadResult r = ReadTrace(rec.bytes);
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.samples.size(), rec.samples.size());
  ExpectPrefix(r.samples, rec.samples);
  uint64_t lost = 0, skipped = 0;
  for (const CpuCounters& c : r.counters) {
    lost += c.lost;
    skipped += c.skipped;
  }
  EXPECT_EQ(lost, 8u);  // i = 0, 17, ..., 119
  EXPECT_EQ(skipped, 16u);
}

// The reader's answer for every prefix of a small multi-block trace: the
// samples of exactly the complete samples blocks inside the prefix, the
// counters of the last complete stats block, then an error naming the file
// and an offset. Never a crash (run this under --config=asan too).
TEST(TraceTest, TruncationAtEveryByteOffset) {
  Recorded rec = RecordSmall();
  const std::vector<BlockInfo> blocks = Blocks(rec.bytes);
  ASSERT_GE(blocks.size(), 8u);
  const size_t header = HeaderSize(rec.bytes);
  for (size_t len = 0; len < rec.bytes.size(); ++len) {
    SCOPED_TRACE(absl::StrCat("prefix of ", len, " bytes"));
    ReadResult r = ReadTrace(rec.bytes.substr(0, len));
    ASSERT_FALSE(r.status.ok());
    EXPECT_FALSE(r.complete);
    EXPECT_TRUE(Contains(r.status.message(), "mem.hpt"));
    if (len < header) {
      EXPECT_TRUE(r.samples.empty());
      if (len > 0) {
        EXPECT_TRUE(Contains(r.status.message(), "truncated header"));
      }
      continue;
    }
    size_t expected = 0;
    size_t stats_samples = 0;
    bool have_stats = false;
    for (const BlockInfo& b : blocks) {
      if (b.end > len) break;
      if (b.type == static_cast<uint8_t>(BlockType::kSamples))
        expected += b.count;
      if (b.type == static_cast<uint8_t>(BlockType::kStats)) {
        have_stats = true;
        stats_samples = expected;
      }
    }
    ASSERT_EQ(r.samples.size(), expected);
    ExpectPrefix(r.samples, rec.samples);
    EXPECT_TRUE(Contains(r.status.message(), "offset"));
    EXPECT_TRUE(Contains(r.status.message(), "truncated"));
    EXPECT_EQ(r.status.code(), absl::StatusCode::kDataLoss);
    EXPECT_EQ(!r.counters.empty(), have_stats && stats_samples > 0);
  }
  // And the whole file is fine.
  ReadResult full = ReadTrace(rec.bytes);
  EXPECT_TRUE(full.status.ok()) << full.status;
  EXPECT_TRUE(full.complete);
}

TEST(TraceTest, TruncationMessageIsClear) {
  Recorded rec = RecordSmall();
  const std::vector<BlockInfo> blocks = Blocks(rec.bytes);
  // Cut in the middle of the fourth block.
  const BlockInfo& b = blocks[3];
  ReadResult r =
      ReadTrace(rec.bytes.substr(0, b.offset + kBlockHeaderBytes + 3));
  EXPECT_TRUE(Contains(
      r.status.message(),
      absl::StrCat(
          "mem.hpt: truncated samples block 3 at offset ", b.offset,
          " (its payload is ", b.end - b.offset - kBlockHeaderBytes,
          " bytes, only 3 remain); the 40 samples before it are intact")));
  // Cut exactly at a block boundary: the end block is missing.
  r = ReadTrace(rec.bytes.substr(0, b.offset));
  EXPECT_TRUE(
      Contains(r.status.message(),
               absl::StrCat("mem.hpt: truncated: the trace ends at offset ",
                            b.offset, " after 3 blocks")));
  EXPECT_TRUE(Contains(r.status.message(), "without its end block"));
}

// CRC-32C detects every single-bit error, so every flip anywhere in the
// file must end in an error, and nothing wrong may be handed out first.
TEST(TraceTest, EveryBitFlipIsDetected) {
  Recorded rec = RecordSmall(/*samples_per_block=*/25, /*n=*/60);
  const std::vector<BlockInfo> blocks = Blocks(rec.bytes);
  const size_t header = HeaderSize(rec.bytes);
  for (size_t byte = 0; byte < rec.bytes.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = rec.bytes;
      bad[byte] ^= static_cast<char>(1 << bit);
      ReadResult r = ReadTrace(bad);
      ASSERT_FALSE(r.status.ok())
          << "flip of bit " << bit << " at " << byte << " undetected";
      ExpectPrefix(r.samples, rec.samples);
      const std::string msg(r.status.message());
      if (byte >= 16 && byte < header) {
        ASSERT_TRUE(Contains(msg, "bad header checksum")) << byte;
      }
      for (size_t k = 0; k < blocks.size(); ++k) {
        const BlockInfo& b = blocks[k];
        // Flips in type/codec/encoding/flags/count/raw_size, the checksum
        // itself or the payload: a checksum mismatch in exactly this block.
        if (byte >= b.offset + 4 && byte < b.end &&
            !(byte >= b.offset + 16 && byte < b.offset + 20)) {
          ASSERT_TRUE(Contains(msg, absl::StrCat("bad checksum in ")))
              << byte << ": " << msg;
          ASSERT_TRUE(Contains(
              msg, absl::StrCat(" block ", k, " at offset ", b.offset, " (")));
        }
      }
    }
  }
}

TEST(TraceTest, NewerMajorVersionIsRejectedClearly) {
  std::string bytes = *WriteTrace(TestHeader(), Synthetic(10), {});
  bytes[8] = 2;  // version_major = 2
  ResealHeader(&bytes);
  ReadResult r = ReadTrace(bytes);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(Contains(r.status.message(),
                       "mem.hpt: hpt format version 2.0 is newer than this "
                       "hotpage reads (1.x)"));
  // Without resealing, a version change is just corruption.
  bytes[16] ^= 1;
  EXPECT_TRUE(Contains(ReadTrace(bytes).status.message(), "checksum"));
}

TEST(TraceTest, VersionZeroIsRejected) {
  std::string bytes = *WriteTrace(TestHeader(), Synthetic(10), {});
  bytes[8] = 0;
  ResealHeader(&bytes);
  EXPECT_TRUE(Contains(ReadTrace(bytes).status.message(),
                       "invalid format version 0.0"));
}

std::string WithExtraHeaderBytes(uint16_t minor) {
  std::string bytes = *WriteTrace(TestHeader(), Synthetic(10), {});
  const size_t header = HeaderSize(bytes);
  bytes.insert(header, "NEWFIELD");
  uint32_t body = static_cast<uint32_t>(header - kTracePreambleBytes + 8);
  std::memcpy(bytes.data() + 12, &body, 4);
  std::memcpy(bytes.data() + 10, &minor, 2);
  ResealHeader(&bytes);
  return bytes;
}

TEST(TraceTest, NewerMinorVersionWithExtraHeaderFieldsIsRead) {
  ReadResult r = ReadTrace(WithExtraHeaderBytes(1));
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.header.version_minor, 1);
  EXPECT_EQ(r.samples.size(), 10u);
  ExpectSameHeader(r.header, TestHeader());
}

TEST(TraceTest, ExtraHeaderBytesInVersion10AreAnError) {
  EXPECT_TRUE(Contains(ReadTrace(WithExtraHeaderBytes(0)).status.message(),
                       "unexpected bytes after the last header field"));
}

TEST(TraceTest, NotATrace) {
  EXPECT_TRUE(Contains(ReadTrace("").status.message(), "empty file"));
  EXPECT_TRUE(Contains(ReadTrace("hello, world, this is text").status.message(),
                       "not an hpt trace (bad magic at offset 0)"));
  std::string perf = "PERFILE2";
  perf.append(200, '\0');
  EXPECT_TRUE(Contains(ReadTrace(perf).status.message(), "hotpage import"));
  EXPECT_TRUE(Contains(ReadTrace(std::string(kTraceMagic, 8)).status.message(),
                       "truncated header"));
}

TEST(TraceTest, HostileHeaderBodySize) {
  std::string bytes = *WriteTrace(TestHeader(), {}, {});
  const uint32_t huge = 0xfffffff0;
  std::memcpy(bytes.data() + 12, &huge, 4);
  EXPECT_TRUE(Contains(ReadTrace(bytes).status.message(), "exceeds the limit"));
  const uint32_t big = kMaxHeaderBodyBytes;  // allowed, but the file is short
  std::memcpy(bytes.data() + 12, &big, 4);
  EXPECT_TRUE(Contains(ReadTrace(bytes).status.message(), "truncated header"));
}

// Splices `block` in before the end block of a 10-sample trace.
std::string WithBlockBeforeEnd(const std::string& block,
                               std::vector<Sample>* samples) {
  *samples = Synthetic(10);
  std::string bytes = *WriteTrace(TestHeader(), *samples, {});
  const std::vector<BlockInfo> blocks = Blocks(bytes);
  bytes.insert(blocks.back().offset, block);
  return bytes;
}

TEST(TraceTest, UnknownSkippableBlockIsSkipped) {
  std::vector<Sample> samples;
  ReadResult r = ReadTrace(WithBlockBeforeEnd(
      MakeBlock(42, 0, 0, kBlockFlagSkippable, 1, "future", 6), &samples));
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.samples.size(), 10u);
}

// Regression, found by hpt_fuzz_test under --config=ubsan: a block with an
// empty payload before any other block made the reader memcpy(nullptr, .., 0)
// into its still-unallocated payload buffer (undefined behaviour).
TEST(TraceTest, RegressionEmptyPayloadAsFirstBlock) {
  std::string bytes = *WriteTrace(TestHeader(), Synthetic(3), {});
  bytes.insert(HeaderSize(bytes),
               MakeBlock(42, 0, 0, kBlockFlagSkippable, 0, "", 0));
  ReadResult r = ReadTrace(bytes);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.samples.size(), 3u);
  // And an empty samples block there is refused, not read.
  bytes = *WriteTrace(TestHeader(), Synthetic(3), {});
  bytes.insert(HeaderSize(bytes), MakeBlock(1, 0, 1, 0, 0, "", 0));
  r = ReadTrace(bytes);
  EXPECT_TRUE(Contains(r.status.message(), "count 0 outside"));
}

TEST(TraceTest, UnknownRequiredBlockIsAnError) {
  std::vector<Sample> samples;
  ReadResult r = ReadTrace(
      WithBlockBeforeEnd(MakeBlock(42, 0, 0, 0, 1, "future", 6), &samples));
  EXPECT_TRUE(Contains(r.status.message(), "unsupported type 42 block"));
  EXPECT_EQ(r.samples.size(), 10u);
}

// Blocks whose checksum is right but whose fields are hostile: crafted, not
// damaged. Each is refused with a message, after the intact samples.
TEST(TraceTest, CraftedBlocksAreRefused) {
  struct Case {
    std::string block;
    const char* message;
  };
  std::string one_raw(64, '\0');
  const Case cases[] = {
      {MakeBlock(1, 0, 0, 0, kMaxSamplesPerBlock + 1, one_raw, 64),
       "count 65537 outside"},
      {MakeBlock(1, 0, 0, 0, 0, "", 0), "count 0 outside"},
      {MakeBlock(1, 0, 0, 0, 2, one_raw, 64), "not 64 bytes per sample"},
      {MakeBlock(1, 0, 9, 0, 1, one_raw, 64), "unknown encoding 9"},
      {MakeBlock(1, 7, 0, 0, 1, one_raw, 64), "unknown codec 7"},
      {MakeBlock(1, 0, 0, 0, 1, one_raw, 65), "size mismatch"},
      {MakeBlock(1, 0, 0, 0, 1, one_raw, kMaxBlockRawBytes + 1),
       "out of bounds"},
      {MakeBlock(1, 1, 0, 0, 1, one_raw, 64 * 4), "zstd payload error"},
      {MakeBlock(1, 0, 0, 0x80, 1, one_raw, 64), "unknown flags"},
      {MakeBlock(2, 0, 0, 0, 0, std::string(8, '\x05'), 8), "it counts"},
      {MakeBlock(2, 0, 0, 0, 1, std::string(8, '\0'), 8),
       "does not match its CPU count"},
  };
  for (const Case& c : cases) {
    std::vector<Sample> samples;
    ReadResult r = ReadTrace(WithBlockBeforeEnd(c.block, &samples));
    EXPECT_TRUE(Contains(r.status.message(), c.message));
    EXPECT_EQ(r.status.code(), absl::StatusCode::kDataLoss);
    ASSERT_EQ(r.samples.size(), 10u);
    ExpectPrefix(r.samples, samples);
  }
}

TEST(TraceTest, HugeDeclaredPayloadIsNotAllocated) {
  std::string bytes = *WriteTrace(TestHeader(), {}, {});
  const std::vector<BlockInfo> blocks = Blocks(bytes);
  const uint32_t stored =
      kMaxBlockRawBytes;  // within the cap, absent from the file
  std::memcpy(bytes.data() + blocks[0].offset + 16, &stored, 4);
  ReadResult r = ReadTrace(bytes);
  EXPECT_TRUE(Contains(r.status.message(), "only 8 remain"));
  EXPECT_LT(r.max_buffer_bytes, 64u << 10);
  const uint32_t over = kMaxBlockRawBytes + 1;
  std::memcpy(bytes.data() + blocks[0].offset + 16, &over, 4);
  EXPECT_TRUE(Contains(ReadTrace(bytes).status.message(), "exceeds the limit"));
}

TEST(TraceTest, DataAfterTheEndBlockIsAnError) {
  std::string bytes = *WriteTrace(TestHeader(), Synthetic(10), {});
  const size_t size = bytes.size();
  bytes += "x";
  ReadResult r = ReadTrace(bytes);
  EXPECT_TRUE(Contains(
      r.status.message(),
      absl::StrCat("unexpected data after the end block, at offset ", size)));
  EXPECT_EQ(r.samples.size(), 10u);
}

TEST(TraceTest, ErrorsAreSticky) {
  Recorded rec = RecordSmall();
  auto reader = TraceReader::Open(
      MakeMemorySource(absl::string_view(rec.bytes).substr(0, 700)), "cut.hpt");
  ASSERT_TRUE(reader.ok()) << reader.status();
  absl::Status first;
  while (true) {
    auto b = (*reader)->Next();
    if (!b.ok()) {
      first = b.status();
      break;
    }
  }
  EXPECT_EQ((*reader)->Next().status(), first);
}

TEST(TraceTest, FilesOnDisk) {
  const std::string dir =
      std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp";
  const std::string path = dir + "/disk.hpt";
  const std::vector<Sample> in = Synthetic(9000);
  {
    auto w = TraceWriter::Create(path, TestHeader());
    ASSERT_TRUE(w.ok()) << w.status();
    ASSERT_TRUE((*w)->Append(in).ok());
    ASSERT_TRUE((*w)->Close().ok());
    EXPECT_EQ((*w)->samples_written(), in.size());
  }
  auto r = TraceReader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<Sample> out;
  while (true) {
    auto b = (*r)->Next();
    ASSERT_TRUE(b.ok()) << b.status();
    if (b->empty()) break;
    out.insert(out.end(), b->begin(), b->end());
  }
  ASSERT_EQ(out.size(), in.size());
  ExpectPrefix(out, in);

  // Truncated on disk: the regular-file size check reports it up front.
  ASSERT_EQ(::truncate(path.c_str(), 3000), 0);
  r = TraceReader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  absl::Status st;
  while (st.ok()) {
    auto b = (*r)->Next();
    if (!b.ok()) st = b.status();
  }
  EXPECT_TRUE(
      Contains(st.message(), path + ": truncated samples block 0 at offset"));

  EXPECT_TRUE(
      Contains(TraceReader::Open(dir + "/missing.hpt").status().message(),
               "open " + dir + "/missing.hpt: ENOENT"));
  EXPECT_TRUE(
      Contains(TraceWriter::Create(dir + "/no/such/dir.hpt", TestHeader())
                   .status()
                   .message(),
               "create " + dir + "/no/such/dir.hpt: ENOENT"));
}

// The checked-in trace (written by //sampler/trace:make_test_traces, read by
// the `hotpage dump` golden test) still reads: the format has not drifted.
TEST(TraceTest, CheckedInTraceStillReads) {
  auto r = TraceReader::Open("sampler/trace/testdata/small.hpt");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->header().version_major, 1);
  EXPECT_EQ((*r)->header().source, "pebs-load");
  EXPECT_EQ((*r)->header().sample_period, 10007u);
  EXPECT_EQ((*r)->header().start_realtime_ns, 1764444000000000000u);
  std::vector<Sample> out;
  while (true) {
    auto b = (*r)->Next();
    ASSERT_TRUE(b.ok()) << b.status();
    if (b->empty()) break;
    out.insert(out.end(), b->begin(), b->end());
  }
  ASSERT_EQ(out.size(), 12u);
  EXPECT_EQ(out[0].pid, 4242u);
  EXPECT_EQ(out[0].time_ns, 1700000000000000u);
  EXPECT_EQ(out[0].vaddr, 0x7f3a00001040u);
  EXPECT_EQ(out[0].paddr, 0x12345040u);
  EXPECT_EQ(out[0].data_src, 0x268100142u);
  EXPECT_EQ(out[0].level, MemLevel::kL1);
  EXPECT_EQ(out[0].period, 10007u);
  EXPECT_EQ(out[3].source, SampleSource::kPebsStore);
  EXPECT_EQ(out[3].flags, kSampleStore);
  EXPECT_EQ(out[11].time_ns, ~uint64_t{0});
  EXPECT_EQ(out[11].vaddr, ~uint64_t{0});
  EXPECT_EQ(out[11].paddr, 1u);
  EXPECT_EQ((*r)->total_counters().lost, 5u);
  EXPECT_EQ((*r)->total_counters().skipped, 3u);
  EXPECT_EQ((*r)->counters().size(), 3u);
}

TEST(TraceTest, WriterRejectsBadOptions) {
  std::string out;
  auto make = [&](TraceWriter::Options o) {
    return TraceWriter::Create(std::make_unique<StringSink>(&out), "o.hpt",
                               TestHeader(), o)
        .status();
  };
  EXPECT_TRUE(Contains(make({.samples_per_block = 0}).message(),
                       "samples_per_block 0 is outside"));
  EXPECT_TRUE(
      Contains(make({.samples_per_block = kMaxSamplesPerBlock + 1}).message(),
               "is outside"));
  EXPECT_TRUE(Contains(make({.zstd_level = 99}).message(), "zstd level 99"));
  TraceHeader h = TestHeader();
  h.event_config.assign(kMaxEventConfigBytes + 1, 'e');
  EXPECT_TRUE(Contains(
      TraceWriter::Create(std::make_unique<StringSink>(&out), "o.hpt", h, {})
          .status()
          .message(),
      "event configuration"));
}

class FailingSink : public ByteSink {
 public:
  explicit FailingSink(size_t ok_bytes) : left_(ok_bytes) {}
  absl::Status Write(const void*, size_t size) override {
    if (size > left_)
      return absl::ResourceExhaustedError("write f.hpt: ENOSPC");
    left_ -= size;
    return absl::OkStatus();
  }
  absl::Status Close() override { return absl::OkStatus(); }

 private:
  size_t left_;
};

TEST(TraceTest, WriteErrorsAreReportedAndSticky) {
  auto w = TraceWriter::Create(std::make_unique<FailingSink>(4096), "f.hpt",
                               TestHeader(), {.samples_per_block = 10});
  ASSERT_TRUE(w.ok());
  absl::Status st;
  const std::vector<Sample> in = EdgeSamples(1000);
  for (const Sample& s : in) {
    st = (*w)->Append(s);
    if (!st.ok()) break;
  }
  EXPECT_TRUE(Contains(st.message(), "ENOSPC"));
  EXPECT_EQ((*w)->Append(in[0]).message(), st.message());
  EXPECT_EQ((*w)->Flush().message(), st.message());
  EXPECT_EQ((*w)->Close().message(), st.message());
}

TEST(TraceTest, TooManyCpusIsAnError) {
  std::string out;
  auto w = TraceWriter::Create(std::make_unique<StringSink>(&out), "c.hpt",
                               TestHeader(), {});
  ASSERT_TRUE(w.ok());
  for (uint32_t cpu = 0; cpu < kMaxStatsEntries; ++cpu) {
    ASSERT_TRUE((*w)->SetCounters({cpu, 1, 0, 0, 0}).ok());
  }
  EXPECT_TRUE(
      Contains((*w)->SetCounters({kMaxStatsEntries, 1, 0, 0, 0}).message(),
               "more than 65536 CPUs"));
  ASSERT_TRUE((*w)->Close().ok());
  ReadResult r = ReadTrace(out);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.counters.size(), kMaxStatsEntries);
}

}  // namespace
}  // namespace hotpage
