// The .hpt trace file format: hotpage's own recording of memory-access
// samples, written by `hotpage record` / `hotpage import` (TraceWriter),
// read by `hotpage dump`, the replay simulator and the tests (TraceReader).
//
// Goals: stream on write and on read in constant memory (a trace may hold
// hundreds of millions of samples); a crash or Ctrl-C loses at most the
// unflushed block; a truncated or corrupted file still yields every intact
// block before the damage and then an error naming the offset; reading a
// hostile file never crashes or allocates more than a fixed bound; small:
// about 16 bytes per 64-byte sample, a quarter smaller than zstd of the raw
// records. Numbers below are from trace_benchmark.cc on the synthetic
// PEBS-like stream of trace_testing.h, one core of a loaded 2-vCPU VM.
//
// Layout. All integers are little-endian; "str" is a u32 byte length then
// that many bytes (no terminator, not necessarily UTF-8 for the reader).
//
//   File := Header Block* EndBlock
//
//   Header (the 20-byte preamble is frozen for every format version, so any
//   reader can check the magic, the version and the checksum):
//     off  size  field
//       0     8  magic  "\x89HPT\r\n\x1a\n" (PNG-style: catches text-mode
//                       transfers and `file` identifies it)
//       8     2  version_major  incompatible changes; a reader rejects a
//                               major it does not know, with a clear error
//      10     2  version_minor  compatible additions: new fields appended to
//                               the body, new block types marked skippable
//      12     4  body_size      bytes of body (<= kMaxHeaderBodyBytes)
//      16     4  crc32c         of bytes 0..15 followed by the body
//      20  body_size body, version 1.0:
//              u64 sample_period        as configured (0: adaptive/unknown);
//                                       each Sample has its effective period
//              u64 start_realtime_ns    CLOCK_REALTIME at the start
//              u64 start_clock_ns       the samples' clock (Sample::time_ns,
//                                       perf's clock) read at the same moment,
//                                       0 if unknown: maps time_ns to wall time
//              str source               SampleSourceName() ("pebs-load", ...)
//              str event_config         human-readable perf_event_attr summary
//              str topology_json        `hotpage topology --json` at the start
//            A 1.x reader ignores body bytes after the fields it knows when
//            version_minor > its own; for 1.0 extra bytes are an error.
//
//   Block (24-byte header, then stored_size bytes of payload):
//     off  size  field
//       0     4  magic "HPBK"
//       4     1  type      1 samples, 2 stats, 3 end (BlockType)
//       5     1  codec     0 stored, 1 zstd (BlockCodec); zstd payloads are
//                          zstd frames without zstd's own checksum
//       6     1  encoding  samples: 0 raw records, 1 columnar (SampleEncoding);
//                          stats/end: 0
//       7     1  flags     bit 0: skippable (a reader that does not know the
//                          type skips it); other bits 0
//       8     4  count     samples in a samples block; CPU entries in stats/end
//      12     4  raw_size     payload bytes after decompression
//      16     4  stored_size  payload bytes in the file (<= raw_size)
//      20     4  crc32c    of header bytes 0..19 followed by the stored payload
//                          (crc32c.h says why CRC-32C): checked before the
//                          payload is decompressed or decoded
//
//   Samples payload, encoding 0 (raw): count records of 64 bytes, the fields
//   of Sample in declaration order (sample.h), little-endian. This is the
//   "plain zstd of raw records" baseline; writers use it only on request.
//
//   Samples payload, encoding 1 (columnar, the default): columns, each
//   holding one field (or part of one) of all `count` samples, in this order:
//     time_ns   zigzag(time_ns - previous time_ns) as varint (previous of the
//               first sample is 0; zigzag because per-CPU rings merged in
//               arrival order are not monotonic)
//     cpu, pid, tid                          varint
//     vpage     zigzag((vaddr >> 12) - previous vpage) as varint
//     voff      vaddr & 0xfff as varint
//     ppage     0 when paddr is 0, else (paddr >> 12) + 1, as varint
//     poff      only for samples with paddr != 0: (paddr ^ vaddr) & 0xfff,
//               as varint: 0 in practice, since a physical address has the
//               virtual one's offset in its page (4 KiB or larger)
//     weight, data_src                       varint
//     period    zigzag delta vs previous, varint
//     level, tlb, source, flags              one byte each
//     reserved                               varint
//   varint = LEB128, at most 10 bytes, no bits beyond 64. The columns must
//   fill raw_size exactly. Why columnar: each column's values are alike
//   (small deltas, a handful of pids, repeated data_src and page numbers),
//   which zstd compresses better than interleaved 64-byte records, and
//   there is half as much for zstd to chew on: 15.8 vs 20.8 bytes per
//   sample, written 2.6x faster (10.6M vs 4.0M samples/s), read about as
//   fast (16M vs 17M samples/s); trace_benchmark.cc BM_Write/BM_Read.
//
//   Stats and End payload (codec stored or zstd, like any block):
//     u64 samples_before    samples in all samples blocks before this block
//     count x { u32 cpu, u64 lost, u64 throttled, u64 unthrottled,
//               u64 skipped }            (36 bytes each, cpu strictly rising)
//   Counters are cumulative totals since the start of the recording, so the
//   latest stats block alone gives the totals up to that point: a truncated
//   file still has the counts up to its last intact stats block. cpu
//   0xffffffff (kUnknownCpu) holds counts not attributed to a CPU. The End
//   block is the last block; samples_before must equal the samples read.
//
// Why blocks of 4096 samples (256 KiB as Samples, ~130 KiB encoded, ~65 KiB
// compressed). Measured at zstd-3 (trace_benchmark.cc BM_WriteBlockSize) for
// 256 / 1Ki / 4Ki / 16Ki / 64Ki samples per block: 16.8 / 16.1 / 15.8 /
// 14.9 / 14.1 bytes per sample, written at 6.8 / 9.5 / 11.2 / 8.4 / 8.4M
// samples/s (zstd-3 switches to slower parameters above 128 KiB of input).
// 4096 is the fastest to write, a block's buffers (~0.9 MiB in the writer,
// ~0.5 MiB in the reader) fit in L2, and a crash or cut loses at most 4096
// samples; 16Ki would save 6% of the size at 4x the memory and loss.
// Converters may pick up to kMaxSamplesPerBlock. The recorder's periodic
// Flush() bounds the loss in time as well.

// Caps. Every size field is checked against the constants below before
// anything is allocated; whatever a file says, the reader's buffers never
// exceed two payloads of kMaxBlockRawBytes (stored and decompressed),
// kMaxSamplesPerBlock Samples and two lists of kMaxStatsEntries counters:
// about 23 MiB.

#ifndef HOTPAGE_SAMPLER_TRACE_TRACE_FORMAT_H_
#define HOTPAGE_SAMPLER_TRACE_TRACE_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "sampler/sample.h"

namespace hotpage {

inline constexpr char kTraceMagic[8] = {'\x89', 'H',  'P',    'T',
                                        '\r',   '\n', '\x1a', '\n'};
inline constexpr uint16_t kTraceVersionMajor = 1;
inline constexpr uint16_t kTraceVersionMinor = 0;
inline constexpr size_t kTracePreambleBytes = 20;

inline constexpr uint32_t kMaxHeaderBodyBytes = 16 << 20;
inline constexpr uint32_t kMaxSourceBytes = 256;
inline constexpr uint32_t kMaxEventConfigBytes = 64 << 10;
inline constexpr uint32_t kMaxTopologyBytes = 8 << 20;

inline constexpr char kBlockMagic[4] = {'H', 'P', 'B', 'K'};
inline constexpr size_t kBlockHeaderBytes = 24;

enum class BlockType : uint8_t { kSamples = 1, kStats = 2, kEnd = 3 };
enum class BlockCodec : uint8_t { kStored = 0, kZstd = 1 };
enum class SampleEncoding : uint8_t { kRaw = 0, kColumnar = 1 };
inline constexpr uint8_t kBlockFlagSkippable = 1 << 0;

inline constexpr uint32_t kDefaultSamplesPerBlock = 4096;
inline constexpr uint32_t kMaxSamplesPerBlock = 65536;
inline constexpr uint32_t kMaxBlockRawBytes = 8 << 20;
inline constexpr uint32_t kMaxStatsEntries = 65536;
inline constexpr uint32_t kUnknownCpu = 0xffffffff;
inline constexpr size_t kRawSampleBytes = 64;
inline constexpr size_t kStatsEntryBytes = 36;

// What the header carries. version_* are filled in by the reader; the
// writer always writes kTraceVersionMajor/Minor.
struct TraceHeader {
  uint16_t version_major = kTraceVersionMajor;
  uint16_t version_minor = kTraceVersionMinor;
  uint64_t sample_period = 0;
  uint64_t start_realtime_ns = 0;
  uint64_t start_clock_ns = 0;
  std::string source;         // SampleSourceName(...)
  std::string event_config;   // e.g. "mem-loads ldlat=30 precise_ip=2 ..."
  std::string topology_json;  // TopologyToJson(...)
};

// Per-CPU event counters, cumulative since the start of the recording.
struct CpuCounters {
  uint32_t cpu = 0;
  uint64_t lost = 0;         // PERF_RECORD_LOST + PERF_RECORD_LOST_SAMPLES
  uint64_t throttled = 0;    // PERF_RECORD_THROTTLE
  uint64_t unthrottled = 0;  // PERF_RECORD_UNTHROTTLE
  uint64_t skipped = 0;      // samples dropped by filters (no address, ...)

  bool operator==(const CpuCounters&) const = default;
};

struct BlockHeader {
  uint8_t type = 0;      // BlockType, kept raw: unknown values are legal
  uint8_t codec = 0;     // BlockCodec
  uint8_t encoding = 0;  // SampleEncoding for samples blocks
  uint8_t flags = 0;
  uint32_t count = 0;
  uint32_t raw_size = 0;
  uint32_t stored_size = 0;
  uint32_t crc = 0;
};

namespace trace_internal {

// Serializes the header (preamble, body, checksum). Fails only when a
// field exceeds its cap (the message names it).
bool EncodeHeader(const TraceHeader& header, std::string* out,
                  std::string* error);

struct Preamble {
  uint16_t version_major = 0;
  uint16_t version_minor = 0;
  uint32_t body_size = 0;
  uint32_t crc = 0;
};
// `bytes` holds kTracePreambleBytes. False if the magic is wrong.
bool DecodePreamble(const uint8_t* bytes, Preamble* out);
uint32_t HeaderCrc(const uint8_t* preamble, const uint8_t* body,
                   size_t body_size);
// Parses a body whose checksum and version were checked. Returns nullptr on
// success, else a static description of what is wrong.
const char* DecodeHeaderBody(const Preamble& preamble, const uint8_t* body,
                             TraceHeader* out);

void PackBlockHeader(const BlockHeader& h, uint8_t* out);  // kBlockHeaderBytes
// False if the magic is wrong (the fields are filled in anyway).
bool UnpackBlockHeader(const uint8_t* in, BlockHeader* out);
// Checksum of a packed block header (its crc field excluded) and payload.
uint32_t BlockCrc(const uint8_t* packed_header, const uint8_t* payload,
                  size_t stored_size);

// An upper bound of EncodeSamples' output for n samples.
size_t MaxEncodedSamplesBytes(size_t n, SampleEncoding encoding);
// Encodes n samples into out (which holds MaxEncodedSamplesBytes(n)); returns
// the bytes written. Hot path: no allocation.
size_t EncodeSamples(const Sample* samples, size_t n, SampleEncoding encoding,
                     uint8_t* out);
// Decodes exactly n samples from exactly `size` bytes. Returns nullptr on
// success, else a static description. Never reads outside [in, in + size),
// never writes outside out[0, n). Hot path: no allocation.
const char* DecodeSamples(const uint8_t* in, size_t size, size_t n,
                          SampleEncoding encoding, Sample* out);

// Stats/End payload. counters must be sorted by cpu, unique.
void EncodeStats(uint64_t samples_before,
                 const std::vector<CpuCounters>& counters, std::string* out);
// `count` entries from exactly `size` bytes; nullptr on success.
const char* DecodeStats(const uint8_t* in, size_t size, uint32_t count,
                        uint64_t* samples_before,
                        std::vector<CpuCounters>* out);

// Name of a block type for messages ("samples", "stats", "end", "type 7").
std::string BlockTypeName(uint8_t type);

}  // namespace trace_internal

// Maps SampleSourceName() back to the enum; kUnknown for names it does not
// know (a newer writer's source).
SampleSource SampleSourceFromName(absl::string_view name);

}  // namespace hotpage

#endif  // HOTPAGE_SAMPLER_TRACE_TRACE_FORMAT_H_
