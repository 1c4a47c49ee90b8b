#include "sampler/perf/perf_data_testing.h"

#include <zstd.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "sampler/perf/perf_data_format.h"

namespace hotpage::testing {
namespace {

namespace pf = ::hotpage::perf_format;

constexpr int kFeatCompressed = 27;  // HEADER_COMPRESSED

void Put64(std::string* out, uint64_t v) {
  out->append(reinterpret_cast<const char*>(&v), 8);
}
void Put32(std::string* out, uint32_t v) {
  out->append(reinterpret_cast<const char*>(&v), 4);
}
void Put16(std::string* out, uint16_t v) {
  out->append(reinterpret_cast<const char*>(&v), 2);
}
void Set64(std::string* out, size_t at, uint64_t v) {
  std::memcpy(&(*out)[at], &v, 8);
}

// Fills pattern bytes so that skipped fields are not all zero.
void PutFill(std::string* out, uint64_t n, uint8_t seed) {
  for (uint64_t i = 0; i < n; ++i)
    out->push_back(static_cast<char>(seed + i * 7));
}

std::string Record(uint32_t type, uint16_t misc, absl::string_view body) {
  const size_t size = 8 + body.size();
  if (size > pf::kMaxRecordSize) std::abort();  // a test bug
  std::string r;
  Put32(&r, type);
  Put16(&r, misc);
  Put16(&r, static_cast<uint16_t>(size));
  r.append(body.data(), body.size());
  return r;
}

std::string AttrBytes(const TestAttr& a) {
  std::string b(std::max<uint32_t>(a.attr_size, 64), '\0');
  auto set32 = [&](int off, uint32_t v) {
    if (off + 4 <= static_cast<int>(b.size())) std::memcpy(&b[off], &v, 4);
  };
  auto set64 = [&](int off, uint64_t v) {
    if (off + 8 <= static_cast<int>(b.size())) std::memcpy(&b[off], &v, 8);
  };
  set32(pf::kAttrType, a.type);
  set32(pf::kAttrSize, a.size_field_zero ? 0 : a.attr_size);
  set64(pf::kAttrConfig, a.config);
  set64(pf::kAttrSamplePeriod, a.sample_period);
  set64(pf::kAttrSampleType, a.sample_type);
  set64(pf::kAttrReadFormat, a.read_format);
  uint64_t flags = 1 /* disabled */ | (1ULL << 1) /* inherit */;
  if (a.freq) flags |= pf::kAttrFlagFreq;
  if (a.sample_id_all) flags |= pf::kAttrFlagSampleIdAll;
  set64(pf::kAttrFlags, flags);
  set64(pf::kAttrBranchSampleType, a.branch_sample_type);
  set64(pf::kAttrSampleRegsUser, a.sample_regs_user);
  set64(pf::kAttrSampleRegsIntr, a.sample_regs_intr);
  return b;
}

std::string Pad8(std::string s) {
  s.resize((s.size() + 8) & ~size_t{7}, '\0');  // NUL-terminated, padded
  return s;
}

}  // namespace

std::string EncodeSample(const TestAttr& attr, const TestSample& s) {
  // The kernel sees 0 in the fields past the attr's size.
  TestAttr a = attr;
  if (a.attr_size < pf::kAttrBranchSampleType + 8) a.branch_sample_type = 0;
  if (a.attr_size < pf::kAttrSampleRegsUser + 8) a.sample_regs_user = 0;
  if (a.attr_size < pf::kAttrSampleRegsIntr + 8) a.sample_regs_intr = 0;
  const uint64_t t = a.sample_type;
  std::string b;
  if (t & pf::kSampleIdentifier) Put64(&b, s.id);
  if (t & pf::kSampleIp) Put64(&b, s.ip);
  if (t & pf::kSampleTid) {
    Put32(&b, s.pid);
    Put32(&b, s.tid);
  }
  if (t & pf::kSampleTime) Put64(&b, s.time);
  if (t & pf::kSampleAddr) Put64(&b, s.addr);
  if (t & pf::kSampleId) Put64(&b, s.id);
  if (t & pf::kSampleStreamId) Put64(&b, s.stream_id);
  if (t & pf::kSampleCpu) {
    Put32(&b, s.cpu);
    Put32(&b, 0xdeadbeef);  // res
  }
  if (t & pf::kSamplePeriod) Put64(&b, s.period);
  if (t & pf::kSampleRead) {
    const uint64_t rf = a.read_format;
    if (rf & pf::kFormatGroup) {
      Put64(&b, s.read_group_nr);
      if (rf & pf::kFormatTotalTimeEnabled) Put64(&b, 111);
      if (rf & pf::kFormatTotalTimeRunning) Put64(&b, 222);
      for (uint64_t i = 0; i < s.read_group_nr; ++i) {
        Put64(&b, 1000 + i);
        if (rf & pf::kFormatId) Put64(&b, 2000 + i);
        if (rf & pf::kFormatLost) Put64(&b, 3000 + i);
      }
    } else {
      Put64(&b, 1000);
      if (rf & pf::kFormatTotalTimeEnabled) Put64(&b, 111);
      if (rf & pf::kFormatTotalTimeRunning) Put64(&b, 222);
      if (rf & pf::kFormatId) Put64(&b, 2000);
      if (rf & pf::kFormatLost) Put64(&b, 3000);
    }
  }
  if (t & pf::kSampleCallchain) {
    Put64(&b, s.callchain.size());
    for (uint64_t ip : s.callchain) Put64(&b, ip);
  }
  if (t & pf::kSampleRaw) {
    // The kernel pads so that the u32 size plus the data fill whole u64s,
    // and the size counts the padding.
    const uint32_t padded =
        static_cast<uint32_t>(((s.raw_size + 4 + 7) & ~7u) - 4);
    Put32(&b, padded);
    PutFill(&b, padded, 0x40);
  }
  if (t & pf::kSampleBranchStack) {
    Put64(&b, s.branch_nr);
    if (a.branch_sample_type & pf::kBranchHwIndex) Put64(&b, 7);
    PutFill(&b, s.branch_nr * pf::kBranchEntrySize, 0x50);
    if (a.branch_sample_type & pf::kBranchCounters)
      PutFill(&b, s.branch_nr * 8, 0x58);
  }
  if (t & pf::kSampleRegsUser) {
    Put64(&b, s.regs_user_abi);
    if (s.regs_user_abi != 0)
      PutFill(&b, 8 * std::popcount(a.sample_regs_user), 0x60);
  }
  if (t & pf::kSampleStackUser) {
    Put64(&b, s.stack_user_size);
    if (s.stack_user_size != 0) {
      PutFill(&b, s.stack_user_size, 0x70);
      Put64(&b, s.stack_user_size / 2);  // dyn_size
    }
  }
  if (t & pf::kSampleWeightType) Put64(&b, s.weight);
  if (t & pf::kSampleDataSrc) Put64(&b, s.data_src);
  if (t & pf::kSampleTransaction) Put64(&b, s.transaction);
  if (t & pf::kSampleRegsIntr) {
    Put64(&b, s.regs_intr_abi);
    if (s.regs_intr_abi != 0)
      PutFill(&b, 8 * std::popcount(a.sample_regs_intr), 0x80);
  }
  if (t & pf::kSamplePhysAddr) Put64(&b, s.phys_addr);
  if (t & pf::kSampleCgroup) Put64(&b, s.cgroup);
  if (t & pf::kSampleDataPageSize) Put64(&b, s.data_page_size);
  if (t & pf::kSampleCodePageSize) Put64(&b, s.code_page_size);
  if (t & pf::kSampleAux) {
    Put64(&b, s.aux_size);
    PutFill(&b, s.aux_size, 0x90);
  }
  return b;
}

std::string EncodeIdTrailer(const TestAttr& a, const TestSample& s) {
  std::string b;
  if (!a.sample_id_all) return b;
  const uint64_t t = a.sample_type;
  if (t & pf::kSampleTid) {
    Put32(&b, s.pid);
    Put32(&b, s.tid);
  }
  if (t & pf::kSampleTime) Put64(&b, s.time);
  if (t & pf::kSampleId) Put64(&b, s.id);
  if (t & pf::kSampleStreamId) Put64(&b, s.stream_id);
  if (t & pf::kSampleCpu) {
    Put32(&b, s.cpu);
    Put32(&b, 0);
  }
  if (t & pf::kSampleIdentifier) Put64(&b, s.id);
  return b;
}

int PerfDataBuilder::AddAttr(const TestAttr& attr) {
  attrs_.push_back(attr);
  return static_cast<int>(attrs_.size() - 1);
}

void PerfDataBuilder::AddRecord(uint32_t type, absl::string_view body,
                                uint16_t misc) {
  offsets_.push_back(data_.size());
  data_ += Record(type, misc, body);
}

void PerfDataBuilder::AddBytes(absl::string_view bytes) {
  data_.append(bytes.data(), bytes.size());
}

void PerfDataBuilder::AddSample(int attr, const TestSample& s) {
  AddRecord(pf::kRecordSample, EncodeSample(attrs_[attr], s), /*misc=*/2);
}

void PerfDataBuilder::AddLost(int attr, uint64_t id, uint64_t lost,
                              const TestSample& trailer) {
  std::string b;
  Put64(&b, id);
  Put64(&b, lost);
  AddRecord(pf::kRecordLost, b + EncodeIdTrailer(attrs_[attr], trailer));
}

void PerfDataBuilder::AddLostSamples(int attr, uint64_t lost,
                                     const TestSample& trailer) {
  std::string b;
  Put64(&b, lost);
  AddRecord(pf::kRecordLostSamples, b + EncodeIdTrailer(attrs_[attr], trailer));
}

void PerfDataBuilder::AddThrottle(int attr, bool unthrottle, uint64_t time,
                                  uint64_t id, const TestSample& trailer) {
  std::string b;
  Put64(&b, time);
  Put64(&b, id);
  Put64(&b, 0);  // stream_id
  AddRecord(unthrottle ? pf::kRecordUnthrottle : pf::kRecordThrottle,
            b + EncodeIdTrailer(attrs_[attr], trailer));
}

void PerfDataBuilder::AddIdIndex() {
  std::string b;
  uint64_t nr = 0;
  for (const TestAttr& a : attrs_) nr += a.ids.size();
  Put64(&b, nr);
  for (size_t i = 0; i < attrs_.size(); ++i) {
    for (uint64_t id : attrs_[i].ids) {
      Put64(&b, id);
      Put64(&b, i);  // idx
      Put64(&b, 0);  // cpu
      Put64(&b, 0);  // tid
    }
  }
  AddRecord(pf::kRecordIdIndex, b);
}

// The data stream as written: the records, or zstd COMPRESSED records
// holding them (tools/perf/util/zstd.c: one stream, flushed per push, its
// output cut into records of at most max_record_size).
std::string PerfDataBuilder::Data(const Options& o) const {
  if (!o.compress) return data_;
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
  std::string out;
  std::string buf(ZSTD_CStreamOutSize() + o.max_payload, '\0');
  auto emit = [&](const char* p, size_t n) {
    while (n > 0) {
      const size_t chunk = std::min(n, o.max_payload);
      std::string body;
      if (o.compressed2) {
        Put64(&body, chunk);
        body.append(p, chunk);
        body.resize((body.size() + 7) & ~size_t{7}, '\0');
      } else {
        body.append(p, chunk);
      }
      out +=
          Record(o.compressed2 ? pf::kRecordCompressed2 : pf::kRecordCompressed,
                 0, body);
      p += chunk;
      n -= chunk;
    }
  };
  size_t pos = 0;
  while (pos < data_.size()) {
    const size_t n = std::min(o.flush_bytes, data_.size() - pos);
    ZSTD_inBuffer in = {data_.data() + pos, n, 0};
    std::string produced;
    for (;;) {
      ZSTD_outBuffer ob = {buf.data(), buf.size(), 0};
      const size_t left = ZSTD_compressStream2(cctx, &ob, &in, ZSTD_e_flush);
      if (ZSTD_isError(left)) std::abort();
      produced.append(buf.data(), ob.pos);
      if (left == 0) break;
    }
    emit(produced.data(), produced.size());
    pos += n;
  }
  ZSTD_freeCCtx(cctx);
  return out;
}

std::string PerfDataBuilder::File(const Options& o) const {
  const std::string data = Data(o);
  // Layout: header | ids | attrs | data | feature table | EVENT_DESC.
  std::string f(pf::kFileHeaderSize, '\0');
  std::vector<uint64_t> ids_off;
  for (const TestAttr& a : attrs_) {
    ids_off.push_back(f.size());
    if (o.ids_in_attrs) {
      for (uint64_t id : a.ids) Put64(&f, id);
    }
  }
  const uint32_t attr_len =
      attrs_.empty() ? 136 : std::max<uint32_t>(attrs_[0].attr_size, 64);
  const uint64_t attrs_off = f.size();
  for (size_t i = 0; i < attrs_.size(); ++i) {
    std::string ab = AttrBytes(attrs_[i]);
    ab.resize(attr_len, '\0');  // every entry has the header's attr_size
    f += ab;
    Put64(&f, ids_off[i]);
    Put64(&f, o.ids_in_attrs ? 8 * attrs_[i].ids.size() : 0);
  }
  const uint64_t data_off = f.size();
  f += data;
  // Feature sections, in bit order, after a table of {offset, size}.
  std::vector<std::pair<int, std::string>> features;
  if (o.names) {
    std::string desc;
    Put32(&desc, static_cast<uint32_t>(attrs_.size()));
    Put32(&desc, attr_len);
    for (const TestAttr& a : attrs_) {
      std::string ab = AttrBytes(a);
      ab.resize(attr_len, '\0');
      desc += ab;
      Put32(&desc, static_cast<uint32_t>(a.ids.size()));
      const std::string name = Pad8(a.name);
      Put32(&desc, static_cast<uint32_t>(name.size()));
      desc += name;
      for (uint64_t id : a.ids) Put64(&desc, id);
    }
    features.emplace_back(pf::kFeatEventDesc, desc);
  }
  if (o.compress) {
    // HEADER_COMPRESSED {u32 version, type (1: zstd), level, ratio,
    // mmap_len}: perf sizes its decompression buffer by mmap_len.
    std::string comp;
    for (uint32_t v : {1u, 1u, 1u, 4u, 1u << 20}) Put32(&comp, v);
    features.emplace_back(kFeatCompressed, comp);
  }
  uint64_t feature_bits = 0;
  uint64_t section = f.size() + 16 * features.size();
  for (const auto& [bit, bytes] : features) {
    feature_bits |= uint64_t{1} << bit;
    Put64(&f, section);
    Put64(&f, bytes.size());
    section += bytes.size();
  }
  for (const auto& [bit, bytes] : features) f += bytes;
  Set64(&f, pf::kFhMagic, pf::kMagic2);
  Set64(&f, pf::kFhSize, pf::kFileHeaderSize);
  Set64(&f, pf::kFhAttrSize, attr_len + 16);
  Set64(&f, pf::kFhAttrs, attrs_off);
  Set64(&f, pf::kFhAttrs + 8, data_off - attrs_off);
  Set64(&f, pf::kFhData, data_off);
  Set64(&f, pf::kFhData + 8, data.size());
  Set64(&f, pf::kFhFeatures, feature_bits);
  return f;
}

std::string PerfDataBuilder::Pipe(const Options& o) const {
  std::string f;
  Put64(&f, pf::kMagic2);
  Put64(&f, pf::kPipeHeaderSize);
  for (const TestAttr& a : attrs_) {
    std::string body = AttrBytes(a);
    for (uint64_t id : a.ids) Put64(&body, id);
    f += Record(pf::kRecordHeaderAttr, 0, body);
  }
  if (o.names) {
    for (const TestAttr& a : attrs_) {
      if (a.ids.empty() || a.name.empty()) continue;
      std::string body;
      Put64(&body, pf::kEventUpdateName);
      Put64(&body, a.ids[0]);
      body += Pad8(a.name);
      f += Record(pf::kRecordEventUpdate, 0, body);
    }
  }
  return f + Data(o);
}

TestAttr PebsAttr(uint64_t id) {
  TestAttr a;
  a.type = 4;  // PERF_TYPE_RAW
  a.config = 0x1cd;
  a.sample_type = pf::kSampleIdentifier | pf::kSampleIp | pf::kSampleTid |
                  pf::kSampleTime | pf::kSampleAddr | pf::kSampleCpu |
                  pf::kSamplePeriod | pf::kSampleWeightStruct |
                  pf::kSampleDataSrc | pf::kSamplePhysAddr;
  a.sample_period = 1000;
  a.ids = {id};
  a.name = "cpu/mem-loads,ldlat=30/P";
  return a;
}

}  // namespace hotpage::testing
