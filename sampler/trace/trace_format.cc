#include "sampler/trace/trace_format.h"

#include <bit>
#include <cstddef>
#include <cstring>

#include "absl/base/attributes.h"
#include "absl/strings/str_cat.h"
#include "sampler/trace/crc32c.h"

namespace hotpage {

// The format is little-endian; every machine hotpage targets (x86-64,
// arm64) is too, so fields are copied with memcpy. A big-endian port would
// byte-swap in Put/Get and in the raw encoding.
static_assert(std::endian::native == std::endian::little,
              "hpt I/O assumes little-endian");

// The raw encoding is Sample's memory image; pin the layout it documents.
static_assert(offsetof(Sample, time_ns) == 0 && offsetof(Sample, vaddr) == 8 &&
              offsetof(Sample, paddr) == 16 &&
              offsetof(Sample, data_src) == 24 &&
              offsetof(Sample, period) == 32 && offsetof(Sample, pid) == 40 &&
              offsetof(Sample, tid) == 44 && offsetof(Sample, cpu) == 48 &&
              offsetof(Sample, weight) == 52 && offsetof(Sample, level) == 56 &&
              offsetof(Sample, tlb) == 57 && offsetof(Sample, source) == 58 &&
              offsetof(Sample, flags) == 59 &&
              offsetof(Sample, reserved) == 60 &&
              sizeof(Sample) == kRawSampleBytes);

namespace trace_internal {
namespace {

template <typename T>
void Put(std::string* out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out->append(b, sizeof(T));
}

template <typename T>
void PutAt(uint8_t* out, T v) {
  std::memcpy(out, &v, sizeof(T));
}

template <typename T>
T GetAt(const uint8_t* in) {
  T v;
  std::memcpy(&v, in, sizeof(T));
  return v;
}

// A bounds-checked cursor over untrusted bytes.
class Cursor {
 public:
  Cursor(const uint8_t* p, size_t n) : p_(p), end_(p + n) {}
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  template <typename T>
  bool Get(T* v) {
    if (remaining() < sizeof(T)) return false;
    std::memcpy(v, p_, sizeof(T));
    p_ += sizeof(T);
    return true;
  }
  bool GetString(uint32_t cap, std::string* s) {
    uint32_t len;
    if (!Get(&len) || len > cap || len > remaining()) return false;
    s->assign(reinterpret_cast<const char*>(p_), len);
    p_ += len;
    return true;
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

inline uint64_t ZigZag(uint64_t delta) {
  return (delta << 1) ^
         static_cast<uint64_t>(static_cast<int64_t>(delta) >> 63);
}
inline uint64_t UnZigZag(uint64_t v) { return (v >> 1) ^ (~(v & 1) + 1); }

inline uint8_t* PutVarint(uint8_t* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}

// LEB128, at most 10 bytes, nothing beyond bit 63. Untrusted input.
bool GetVarintSlow(const uint8_t*& p, const uint8_t* end, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p == end) return false;
    const uint8_t b = *p++;
    if (shift == 63 && b > 1) return false;
    result |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *v = result;
      return true;
    }
  }
  return false;
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline bool GetVarint(const uint8_t*& p,
                                                   const uint8_t* end,
                                                   uint64_t* v) {
  if (end - p < 10) return GetVarintSlow(p, end, v);
  // Ten bytes are there: no bounds check per byte. Unrolled, as most
  // values here take 1-6 bytes (trace_benchmark: ~1.5x faster reads).
  const uint8_t* q = p;
  uint64_t b = *q++;
  uint64_t result = b;
  if (b < 0x80) goto done;
  result -= 0x80;
  b = *q++;
  result += b << 7;
  if (b < 0x80) goto done;
  result -= 0x80 << 7;
  b = *q++;
  result += b << 14;
  if (b < 0x80) goto done;
  result -= 0x80 << 14;
  b = *q++;
  result += b << 21;
  if (b < 0x80) goto done;
  result -= uint64_t{0x80} << 21;
  b = *q++;
  result += b << 28;
  if (b < 0x80) goto done;
  result -= uint64_t{0x80} << 28;
  b = *q++;
  result += b << 35;
  if (b < 0x80) goto done;
  result -= uint64_t{0x80} << 35;
  b = *q++;
  result += b << 42;
  if (b < 0x80) goto done;
  result -= uint64_t{0x80} << 42;
  b = *q++;
  result += b << 49;
  if (b < 0x80) goto done;
  result -= uint64_t{0x80} << 49;
  b = *q++;
  result += b << 56;
  if (b < 0x80) goto done;
  result -= uint64_t{0x80} << 56;
  b = *q++;
  if (b > 1) return false;  // an 11th byte or bits beyond 63
  result += b << 63;
done:
  *v = result;
  p = q;
  return true;
}

// Pages and offsets: 4 KiB is the smallest page, and a physical address
// has the same offset in its (4 KiB or larger) page as the virtual one.
constexpr int kPageShift = 12;
constexpr uint64_t kPageMask = (uint64_t{1} << kPageShift) - 1;
constexpr uint64_t kMaxPage = ~uint64_t{0} >> kPageShift;

constexpr size_t kMaxColumnarBytesPerSample =
    10 /*time*/ + 3 * 5 /*cpu pid tid*/ + 10 /*vpage*/ + 2 /*voff*/ +
    8 /*ppage*/ + 2 /*poff*/ + 5 /*weight*/ + 10 /*data_src*/ + 10 /*period*/ +
    4 /*bytes*/ + 5 /*reserved*/;

size_t EncodeColumnar(const Sample* s, size_t n, uint8_t* out) {
  uint8_t* p = out;
  uint64_t prev = 0;
  for (size_t i = 0; i < n; ++i) {
    p = PutVarint(p, ZigZag(s[i].time_ns - prev));
    prev = s[i].time_ns;
  }
  for (size_t i = 0; i < n; ++i) p = PutVarint(p, s[i].cpu);
  for (size_t i = 0; i < n; ++i) p = PutVarint(p, s[i].pid);
  for (size_t i = 0; i < n; ++i) p = PutVarint(p, s[i].tid);
  prev = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t vpage = s[i].vaddr >> kPageShift;
    p = PutVarint(p, ZigZag(vpage - prev));
    prev = vpage;
  }
  for (size_t i = 0; i < n; ++i) p = PutVarint(p, s[i].vaddr & kPageMask);
  for (size_t i = 0; i < n; ++i) {
    p = PutVarint(p, s[i].paddr == 0 ? 0 : (s[i].paddr >> kPageShift) + 1);
  }
  for (size_t i = 0; i < n; ++i) {
    if (s[i].paddr != 0)
      p = PutVarint(p, (s[i].paddr ^ s[i].vaddr) & kPageMask);
  }
  for (size_t i = 0; i < n; ++i) p = PutVarint(p, s[i].weight);
  for (size_t i = 0; i < n; ++i) p = PutVarint(p, s[i].data_src);
  prev = 0;
  for (size_t i = 0; i < n; ++i) {
    p = PutVarint(p, ZigZag(s[i].period - prev));
    prev = s[i].period;
  }
  for (size_t i = 0; i < n; ++i) *p++ = static_cast<uint8_t>(s[i].level);
  for (size_t i = 0; i < n; ++i) *p++ = static_cast<uint8_t>(s[i].tlb);
  for (size_t i = 0; i < n; ++i) *p++ = static_cast<uint8_t>(s[i].source);
  for (size_t i = 0; i < n; ++i) *p++ = s[i].flags;
  for (size_t i = 0; i < n; ++i) p = PutVarint(p, s[i].reserved);
  return static_cast<size_t>(p - out);
}

// Column decoders. Each returns false on malformed or short input.
bool DecodeDeltaColumn(const uint8_t*& p, const uint8_t* end, size_t n,
                       Sample* out, uint64_t Sample::*field) {
  uint64_t prev = 0;
  for (size_t i = 0; i < n; ++i) {
    uint64_t v;
    if (!GetVarint(p, end, &v)) return false;
    prev += UnZigZag(v);
    out[i].*field = prev;
  }
  return true;
}

bool DecodeU64Column(const uint8_t*& p, const uint8_t* end, size_t n,
                     Sample* out, uint64_t Sample::*field) {
  for (size_t i = 0; i < n; ++i) {
    uint64_t v;
    if (!GetVarint(p, end, &v)) return false;
    out[i].*field = v;
  }
  return true;
}

bool DecodeU32Column(const uint8_t*& p, const uint8_t* end, size_t n,
                     Sample* out, uint32_t Sample::*field) {
  for (size_t i = 0; i < n; ++i) {
    uint64_t v;
    if (!GetVarint(p, end, &v) || v > 0xffffffffu) return false;
    out[i].*field = static_cast<uint32_t>(v);
  }
  return true;
}

template <typename T>
bool DecodeByteColumn(const uint8_t*& p, const uint8_t* end, size_t n,
                      Sample* out, T Sample::*field) {
  if (static_cast<size_t>(end - p) < n) return false;
  for (size_t i = 0; i < n; ++i) out[i].*field = static_cast<T>(p[i]);
  p += n;
  return true;
}

// vaddr: page delta column, then offset column.
bool DecodeVaddr(const uint8_t*& p, const uint8_t* end, size_t n, Sample* out) {
  uint64_t page = 0;
  for (size_t i = 0; i < n; ++i) {
    uint64_t v;
    if (!GetVarint(p, end, &v)) return false;
    page += UnZigZag(v);
    if (page > kMaxPage) return false;
    out[i].vaddr = page << kPageShift;
  }
  for (size_t i = 0; i < n; ++i) {
    uint64_t off;
    if (!GetVarint(p, end, &off) || off > kPageMask) return false;
    out[i].vaddr |= off;
  }
  return true;
}

// paddr: page+1 column (0: no paddr), then offset-xor-vaddr for each
// sample that has one. Needs vaddr decoded.
bool DecodePaddr(const uint8_t*& p, const uint8_t* end, size_t n, Sample* out) {
  for (size_t i = 0; i < n; ++i) {
    uint64_t v;
    if (!GetVarint(p, end, &v) || v > kMaxPage + 1) return false;
    out[i].paddr = v;  // page + 1, for now
  }
  for (size_t i = 0; i < n; ++i) {
    if (out[i].paddr == 0) continue;
    uint64_t off;
    if (!GetVarint(p, end, &off) || off > kPageMask) return false;
    out[i].paddr =
        ((out[i].paddr - 1) << kPageShift) | ((off ^ out[i].vaddr) & kPageMask);
  }
  return true;
}

const char* DecodeColumnar(const uint8_t* in, size_t size, size_t n,
                           Sample* out) {
  const uint8_t* p = in;
  const uint8_t* end = in + size;
  if (!DecodeDeltaColumn(p, end, n, out, &Sample::time_ns))
    return "bad time_ns column";
  if (!DecodeU32Column(p, end, n, out, &Sample::cpu)) return "bad cpu column";
  if (!DecodeU32Column(p, end, n, out, &Sample::pid)) return "bad pid column";
  if (!DecodeU32Column(p, end, n, out, &Sample::tid)) return "bad tid column";
  if (!DecodeVaddr(p, end, n, out)) return "bad vaddr columns";
  if (!DecodePaddr(p, end, n, out)) return "bad paddr columns";
  if (!DecodeU32Column(p, end, n, out, &Sample::weight))
    return "bad weight column";
  if (!DecodeU64Column(p, end, n, out, &Sample::data_src))
    return "bad data_src column";
  if (!DecodeDeltaColumn(p, end, n, out, &Sample::period))
    return "bad period column";
  if (!DecodeByteColumn(p, end, n, out, &Sample::level) ||
      !DecodeByteColumn(p, end, n, out, &Sample::tlb) ||
      !DecodeByteColumn(p, end, n, out, &Sample::source) ||
      !DecodeByteColumn(p, end, n, out, &Sample::flags)) {
    return "short level/tlb/source/flags columns";
  }
  if (!DecodeU32Column(p, end, n, out, &Sample::reserved))
    return "bad reserved column";
  if (p != end) return "bytes left over after the last column";
  return nullptr;
}

}  // namespace

bool EncodeHeader(const TraceHeader& h, std::string* out, std::string* error) {
  if (h.source.size() > kMaxSourceBytes) {
    *error = absl::StrCat("source name is ", h.source.size(), " bytes (limit ",
                          kMaxSourceBytes, ")");
    return false;
  }
  if (h.event_config.size() > kMaxEventConfigBytes) {
    *error = absl::StrCat("event configuration is ", h.event_config.size(),
                          " bytes (limit ", kMaxEventConfigBytes, ")");
    return false;
  }
  if (h.topology_json.size() > kMaxTopologyBytes) {
    *error = absl::StrCat("topology snapshot is ", h.topology_json.size(),
                          " bytes (limit ", kMaxTopologyBytes, ")");
    return false;
  }
  std::string body;
  Put<uint64_t>(&body, h.sample_period);
  Put<uint64_t>(&body, h.start_realtime_ns);
  Put<uint64_t>(&body, h.start_clock_ns);
  for (const std::string* s : {&h.source, &h.event_config, &h.topology_json}) {
    Put<uint32_t>(&body, static_cast<uint32_t>(s->size()));
    body.append(*s);
  }
  uint8_t pre[kTracePreambleBytes];
  std::memcpy(pre, kTraceMagic, sizeof(kTraceMagic));
  PutAt<uint16_t>(pre + 8, kTraceVersionMajor);
  PutAt<uint16_t>(pre + 10, kTraceVersionMinor);
  PutAt<uint32_t>(pre + 12, static_cast<uint32_t>(body.size()));
  PutAt<uint32_t>(pre + 16,
                  HeaderCrc(pre, reinterpret_cast<const uint8_t*>(body.data()),
                            body.size()));
  out->append(reinterpret_cast<const char*>(pre), sizeof(pre));
  out->append(body);
  return true;
}

bool DecodePreamble(const uint8_t* b, Preamble* out) {
  out->version_major = GetAt<uint16_t>(b + 8);
  out->version_minor = GetAt<uint16_t>(b + 10);
  out->body_size = GetAt<uint32_t>(b + 12);
  out->crc = GetAt<uint32_t>(b + 16);
  return std::memcmp(b, kTraceMagic, sizeof(kTraceMagic)) == 0;
}

uint32_t HeaderCrc(const uint8_t* preamble, const uint8_t* body,
                   size_t body_size) {
  return Crc32cExtend(Crc32c(preamble, 16), body, body_size);
}

const char* DecodeHeaderBody(const Preamble& pre, const uint8_t* body,
                             TraceHeader* out) {
  Cursor c(body, pre.body_size);
  out->version_major = pre.version_major;
  out->version_minor = pre.version_minor;
  if (!c.Get(&out->sample_period) || !c.Get(&out->start_realtime_ns) ||
      !c.Get(&out->start_clock_ns)) {
    return "header body too short for its fixed fields";
  }
  if (!c.GetString(kMaxSourceBytes, &out->source))
    return "bad source string in header";
  if (!c.GetString(kMaxEventConfigBytes, &out->event_config)) {
    return "bad event configuration string in header";
  }
  if (!c.GetString(kMaxTopologyBytes, &out->topology_json)) {
    return "bad topology snapshot string in header";
  }
  // Fields added by a newer minor version follow; only 1.0 must end here.
  if (pre.version_minor <= kTraceVersionMinor && c.remaining() != 0) {
    return "unexpected bytes after the last header field";
  }
  return nullptr;
}

void PackBlockHeader(const BlockHeader& h, uint8_t* out) {
  std::memcpy(out, kBlockMagic, 4);
  out[4] = h.type;
  out[5] = h.codec;
  out[6] = h.encoding;
  out[7] = h.flags;
  PutAt<uint32_t>(out + 8, h.count);
  PutAt<uint32_t>(out + 12, h.raw_size);
  PutAt<uint32_t>(out + 16, h.stored_size);
  PutAt<uint32_t>(out + 20, h.crc);
}

bool UnpackBlockHeader(const uint8_t* in, BlockHeader* h) {
  h->type = in[4];
  h->codec = in[5];
  h->encoding = in[6];
  h->flags = in[7];
  h->count = GetAt<uint32_t>(in + 8);
  h->raw_size = GetAt<uint32_t>(in + 12);
  h->stored_size = GetAt<uint32_t>(in + 16);
  h->crc = GetAt<uint32_t>(in + 20);
  return std::memcmp(in, kBlockMagic, 4) == 0;
}

uint32_t BlockCrc(const uint8_t* packed_header, const uint8_t* payload,
                  size_t stored_size) {
  return Crc32cExtend(Crc32c(packed_header, 20), payload, stored_size);
}

size_t MaxEncodedSamplesBytes(size_t n, SampleEncoding encoding) {
  return n * (encoding == SampleEncoding::kRaw ? kRawSampleBytes
                                               : kMaxColumnarBytesPerSample);
}

size_t EncodeSamples(const Sample* samples, size_t n, SampleEncoding encoding,
                     uint8_t* out) {
  if (encoding == SampleEncoding::kRaw) {
    std::memcpy(out, samples, n * kRawSampleBytes);
    return n * kRawSampleBytes;
  }
  return EncodeColumnar(samples, n, out);
}

const char* DecodeSamples(const uint8_t* in, size_t size, size_t n,
                          SampleEncoding encoding, Sample* out) {
  switch (encoding) {
    case SampleEncoding::kRaw:
      if (size != n * kRawSampleBytes)
        return "raw block size is not 64 bytes per sample";
      std::memcpy(static_cast<void*>(out), in, size);
      return nullptr;
    case SampleEncoding::kColumnar:
      return DecodeColumnar(in, size, n, out);
  }
  return "unknown sample encoding";
}

void EncodeStats(uint64_t samples_before,
                 const std::vector<CpuCounters>& counters, std::string* out) {
  out->clear();
  Put<uint64_t>(out, samples_before);
  for (const CpuCounters& c : counters) {
    Put<uint32_t>(out, c.cpu);
    Put<uint64_t>(out, c.lost);
    Put<uint64_t>(out, c.throttled);
    Put<uint64_t>(out, c.unthrottled);
    Put<uint64_t>(out, c.skipped);
  }
}

const char* DecodeStats(const uint8_t* in, size_t size, uint32_t count,
                        uint64_t* samples_before,
                        std::vector<CpuCounters>* out) {
  if (count > kMaxStatsEntries) return "too many CPU entries";
  if (size != 8 + size_t{count} * kStatsEntryBytes)
    return "size does not match its CPU count";
  Cursor c(in, size);
  c.Get(samples_before);
  out->clear();
  out->reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    CpuCounters e;
    c.Get(&e.cpu);
    c.Get(&e.lost);
    c.Get(&e.throttled);
    c.Get(&e.unthrottled);
    c.Get(&e.skipped);
    if (!out->empty() && e.cpu <= out->back().cpu)
      return "CPU entries not in rising order";
    out->push_back(e);
  }
  return nullptr;
}

std::string BlockTypeName(uint8_t type) {
  switch (static_cast<BlockType>(type)) {
    case BlockType::kSamples:
      return "samples";
    case BlockType::kStats:
      return "stats";
    case BlockType::kEnd:
      return "end";
  }
  return absl::StrCat("type ", static_cast<int>(type));
}

}  // namespace trace_internal

SampleSource SampleSourceFromName(absl::string_view name) {
  for (int v = 1; v < 256; ++v) {
    const auto s = static_cast<SampleSource>(v);
    const char* n = SampleSourceName(s);
    if (name == n && absl::string_view(n) != "unknown") return s;
  }
  return SampleSource::kUnknown;
}

}  // namespace hotpage
