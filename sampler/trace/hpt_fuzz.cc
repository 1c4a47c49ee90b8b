// Fuzz target for the .hpt reader (trace_reader.h, trace_format.h).
//
// Every input is used twice:
//  1. as a trace file, as is (the seed corpus holds real traces);
//  2. as an edit script applied to one of three valid traces built here,
//     after which the header and block checksums are recomputed, so that
//     the damage reaches the decoders behind the checksums (zstd, columns,
//     stats, size and count checks) as a crafted file would. Byte 0 picks
//     the base trace and the options; then 3-byte records (u16 position,
//     u8 xor mask) flip bytes; an odd trailing byte truncates there.
// Properties checked, not only "no crash": the reader's buffers stay under
// the documented bound; samples_read() counts what was handed out; errors
// are sticky and end-of-trace stays ended; every block handed out
// re-encodes (columnar and raw) and decodes to the same samples; a parsed
// header re-encodes and parses to the same fields.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "sampler/trace/trace_format.h"
#include "sampler/trace/trace_reader.h"
#include "sampler/trace/trace_testing.h"
#include "sampler/trace/trace_writer.h"

namespace hotpage {
namespace {

// Documented bound (trace_format.h): stored + raw + samples of one block,
// plus the stats entries and the 16 KiB rounding of each buffer.
constexpr size_t kMaxReaderBufferBytes =
    2 * size_t{kMaxBlockRawBytes} +
    size_t{kMaxSamplesPerBlock} * sizeof(Sample) +
    2 * size_t{kMaxStatsEntries} * sizeof(CpuCounters) + 3 * (16 << 10);

void Check(bool ok) {
  if (!ok) std::abort();
}

void CheckSamplesRoundTrip(absl::Span<const Sample> samples) {
  for (SampleEncoding e : {SampleEncoding::kColumnar, SampleEncoding::kRaw}) {
    std::vector<uint8_t> buf(
        trace_internal::MaxEncodedSamplesBytes(samples.size(), e));
    const size_t n = trace_internal::EncodeSamples(
        samples.data(), samples.size(), e, buf.data());
    Check(n <= buf.size());
    std::vector<Sample> back(samples.size());
    Check(trace_internal::DecodeSamples(buf.data(), n, samples.size(), e,
                                        back.data()) == nullptr);
    Check(std::memcmp(back.data(), samples.data(),
                      samples.size() * sizeof(Sample)) == 0);
  }
}

void CheckHeaderRoundTrip(const TraceHeader& h) {
  std::string bytes, error;
  Check(trace_internal::EncodeHeader(h, &bytes, &error));
  trace_internal::Preamble pre;
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  Check(trace_internal::DecodePreamble(p, &pre));
  TraceHeader back;
  Check(trace_internal::DecodeHeaderBody(pre, p + kTracePreambleBytes, &back) ==
        nullptr);
  Check(back.sample_period == h.sample_period &&
        back.start_realtime_ns == h.start_realtime_ns &&
        back.start_clock_ns == h.start_clock_ns && back.source == h.source &&
        back.event_config == h.event_config &&
        back.topology_json == h.topology_json);
}

void ReadAll(absl::string_view bytes) {
  auto reader = TraceReader::Open(MakeMemorySource(bytes), "fuzz.hpt");
  if (!reader.ok()) return;
  TraceReader& r = **reader;
  CheckHeaderRoundTrip(r.header());
  uint64_t seen = 0;
  int checked_blocks = 0;
  while (true) {
    absl::StatusOr<absl::Span<const Sample>> block = r.Next();
    Check(r.buffer_bytes() <= kMaxReaderBufferBytes);
    if (!block.ok()) {
      Check(!block.status().message().empty());
      Check(r.Next().status() == block.status());  // sticky
      Check(!r.complete());
      break;
    }
    if (block->empty()) {
      Check(r.complete());
      Check(r.offset() == bytes.size());
      auto again = r.Next();
      Check(again.ok() && again->empty());
      break;
    }
    Check(block->size() <= kMaxSamplesPerBlock);
    seen += block->size();
    if (checked_blocks++ < 2) CheckSamplesRoundTrip(*block);
  }
  Check(r.samples_read() == seen);
  for (size_t i = 1; i < r.counters().size(); ++i) {
    Check(r.counters()[i - 1].cpu < r.counters()[i].cpu);
  }
}

std::string MakeBase(int which) {
  std::vector<Sample> samples;
  testing_internal::SyntheticSamples gen(5);
  for (int i = 0; i < 24; ++i) samples.push_back(gen.Next());
  for (const Sample& s : testing_internal::EdgeSamples(8)) samples.push_back(s);
  TraceHeader h = testing_internal::TestHeader();
  h.topology_json = "{\"nodes\": []}";
  TraceWriter::Options o;
  o.samples_per_block = 8;
  o.stats_every_blocks = 1;
  o.compress = which == 1;
  o.encoding = which == 2 ? SampleEncoding::kRaw : SampleEncoding::kColumnar;
  std::string out;
  auto w =
      TraceWriter::Create(std::make_unique<StringSink>(&out), "base.hpt", h, o);
  Check(w.ok());
  for (size_t i = 0; i < samples.size(); ++i) {
    Check((*w)->Append(samples[i]).ok());
    if (i % 8 == 3)
      Check((*w)->AddCounters({static_cast<uint32_t>(i % 3), 1, 1, 0, 2}).ok());
  }
  Check((*w)->Close().ok());
  return out;
}

// Recomputes the header and block checksums of an edited trace, as far as
// its size fields still describe blocks inside it.
void Reseal(std::string* t) {
  auto* p = reinterpret_cast<uint8_t*>(t->data());
  if (t->size() < kTracePreambleBytes) return;
  uint32_t body;
  std::memcpy(&body, p + 12, 4);
  if (body > t->size() - kTracePreambleBytes) return;
  const uint32_t hcrc =
      trace_internal::HeaderCrc(p, p + kTracePreambleBytes, body);
  std::memcpy(p + 16, &hcrc, 4);
  size_t off = kTracePreambleBytes + body;
  while (t->size() - off >= kBlockHeaderBytes) {
    uint32_t stored;
    std::memcpy(&stored, p + off + 16, 4);
    if (stored > t->size() - off - kBlockHeaderBytes) return;
    const uint32_t crc =
        trace_internal::BlockCrc(p + off, p + off + kBlockHeaderBytes, stored);
    std::memcpy(p + off + 20, &crc, 4);
    off += kBlockHeaderBytes + stored;
  }
}

void EditAndRead(const uint8_t* data, size_t size) {
  static const std::string* bases =
      new std::string[3]{MakeBase(0), MakeBase(1), MakeBase(2)};
  if (size == 0) return;
  std::string t = bases[data[0] % 3];
  const bool reseal = (data[0] & 0x80) == 0;  // mostly: reach the decoders
  size_t i = 1;
  for (; i + 3 <= size; i += 3) {
    const size_t pos = (size_t{data[i]} | size_t{data[i + 1]} << 8) % t.size();
    t[pos] = static_cast<char>(t[pos] ^ data[i + 2]);
  }
  if (i < size) t.resize(size_t{data[i]} * t.size() / 256);
  if (reseal) Reseal(&t);
  ReadAll(t);
}

}  // namespace
}  // namespace hotpage

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hotpage::ReadAll(
      absl::string_view(reinterpret_cast<const char*>(data), size));
  hotpage::EditAndRead(data, size);
  return 0;
}
