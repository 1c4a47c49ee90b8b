#include "sampler/perf/perf_data_reader.h"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "sampler/perf/perf_data_format.h"
#include "sampler/perf/perf_record.h"
#include "tools/base/status_macros.h"

namespace hotpage {
namespace {

namespace pf = ::hotpage::perf_format;

static_assert(std::endian::native == std::endian::little,
              "the reader loads little-endian perf.data fields directly");

// Bounds on what a file can make the reader hold. Real files are far below:
// perf opens one id per event per CPU (or per thread), e.g. 2 events x 256
// CPUs = 512 ids.
constexpr uint64_t kMaxAttrs = 16384;
constexpr uint64_t kMaxIds = uint64_t{1} << 20;
// The kernel caps perf_event_attr at a page.
constexpr uint64_t kMaxAttrBytes = 4096;
constexpr size_t kMaxNameLen = 256;
// Decompressed records pass through this window. A record is at most
// 64 KiB - 1, so a window of 4 records always has room for the next one.
constexpr size_t kWindowBytes = 256 * 1024;
// perf compresses with levels 1..22; level 22 uses a 2^27-byte window, which
// is also zstd's default limit. It bounds what a hostile frame can make zstd
// allocate.
constexpr int kMaxZstdWindowLog = 27;

inline uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline uint32_t Load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline uint16_t Load16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

bool KnownRecordType(uint32_t type) {
  return (type >= pf::kRecordMmap && type < pf::kKernelRecordMax) ||
         (type >= pf::kRecordHeaderAttr && type < pf::kUserRecordMax);
}

// A file-supplied name, made safe to print.
std::string CleanName(const uint8_t* p, size_t max_len) {
  size_t n = 0;
  while (n < max_len && n < kMaxNameLen && p[n] != 0) ++n;
  std::string s(reinterpret_cast<const char*>(p), n);
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20 ||
        static_cast<unsigned char>(c) > 0x7e)
      c = '?';
  }
  return s;
}

// The fields of one perf_event_attr that decoding needs, and the sample
// layout derived from them.
struct Attr {
  uint64_t sample_type = 0;
  uint64_t read_format = 0;
  uint64_t branch_sample_type = 0;
  uint64_t sample_period = 0;  // 0 in frequency mode
  bool sample_id_all = false;
  // For the shared walker (perf_record.h), used when `fixed` is false.
  PerfEventLayout layout;

  // Fast path: when no variable-length field is present every field sits at
  // a fixed byte offset from the start of the sample body (after the
  // header); -1 means absent.
  bool fixed = false;
  uint32_t fixed_size = 0;  // body bytes that layout needs
  int32_t off_tid = -1, off_time = -1, off_addr = -1, off_cpu = -1,
          off_period = -1, off_weight = -1, off_data_src = -1, off_phys = -1;

  int id_pos = -1;  // u64 index of the id in a sample (perf's evsel->id_pos)
  int is_pos = -1;  // u64 index, from the end, in a sample_id_all trailer
  uint32_t trailer_words = 0;
};

// perf's __evsel__calc_id_pos / __evsel__calc_is_pos.
int CalcIdPos(uint64_t t) {
  if (t & pf::kSampleIdentifier) return 0;
  if (!(t & pf::kSampleId)) return -1;
  int idx = 0;
  for (uint64_t b :
       {pf::kSampleIp, pf::kSampleTid, pf::kSampleTime, pf::kSampleAddr}) {
    if (t & b) ++idx;
  }
  return idx;
}
int CalcIsPos(uint64_t t) {
  if (t & pf::kSampleIdentifier) return 1;
  if (!(t & pf::kSampleId)) return -1;
  int idx = 1;
  if (t & pf::kSampleCpu) ++idx;
  if (t & pf::kSampleStreamId) ++idx;
  return idx;
}

// Parses the first `len` bytes of a perf_event_attr (older files store
// fewer fields; fields past `len` read as 0).
Attr ParseAttr(const uint8_t* p, uint64_t len, PerfEventInfo* info) {
  auto u64_at = [&](int off) -> uint64_t {
    return static_cast<uint64_t>(off) + 8 <= len ? Load64(p + off) : 0;
  };
  Attr a;
  info->type = Load32(p + pf::kAttrType);
  info->config = u64_at(pf::kAttrConfig);
  info->attr_size = static_cast<uint32_t>(len);
  info->source = PerfEventSampleSource(info->type, info->config);
  a.sample_type = u64_at(pf::kAttrSampleType);
  a.read_format = u64_at(pf::kAttrReadFormat);
  const uint64_t flags = u64_at(pf::kAttrFlags);
  const uint64_t period_or_freq = u64_at(pf::kAttrSamplePeriod);
  if (flags & pf::kAttrFlagFreq) {
    info->sample_freq = period_or_freq;
  } else {
    a.sample_period = period_or_freq;
    info->sample_period = period_or_freq;
  }
  info->sample_type = a.sample_type;
  a.sample_id_all = (flags & pf::kAttrFlagSampleIdAll) != 0;
  a.branch_sample_type = u64_at(pf::kAttrBranchSampleType);
  a.layout.sample_type = a.sample_type;
  a.layout.read_format = a.read_format;
  a.layout.branch_sample_type = a.branch_sample_type;
  a.layout.sample_regs_user = u64_at(pf::kAttrSampleRegsUser);
  a.layout.sample_regs_intr = u64_at(pf::kAttrSampleRegsIntr);
  a.layout.sample_id_all = a.sample_id_all;
  a.layout.fixed_period = a.sample_period;
  // Decided once per event; HandleSample copies it into every sample.
  a.layout.source = info->source;

  const uint64_t t = a.sample_type;
  a.id_pos = CalcIdPos(t);
  a.is_pos = CalcIsPos(t);
  a.trailer_words =
      static_cast<uint32_t>(std::popcount(t & pf::kSampleIdAllMask));

  // Fixed layout, in the kernel's field order (perf_output_sample()).
  constexpr uint64_t kVariable = pf::kSampleCallchain | pf::kSampleRaw |
                                 pf::kSampleBranchStack | pf::kSampleRegsUser |
                                 pf::kSampleStackUser | pf::kSampleRegsIntr |
                                 pf::kSampleAux;
  const bool group_read =
      (t & pf::kSampleRead) && (a.read_format & pf::kFormatGroup);
  a.fixed = !(t & kVariable) && !group_read;
  if (a.fixed) {
    int32_t off = 0;
    auto field = [&](uint64_t bit, int32_t* where) {
      if (t & bit) {
        if (where) *where = off;
        off += 8;
      }
    };
    field(pf::kSampleIdentifier, nullptr);
    field(pf::kSampleIp, nullptr);
    field(pf::kSampleTid, &a.off_tid);
    field(pf::kSampleTime, &a.off_time);
    field(pf::kSampleAddr, &a.off_addr);
    field(pf::kSampleId, nullptr);
    field(pf::kSampleStreamId, nullptr);
    field(pf::kSampleCpu, &a.off_cpu);
    field(pf::kSamplePeriod, &a.off_period);
    if (t & pf::kSampleRead) {  // {value; enabled?; running?; id?; lost?}
      const uint64_t rf = a.read_format;
      off += 8 * (1 + !!(rf & pf::kFormatTotalTimeEnabled) +
                  !!(rf & pf::kFormatTotalTimeRunning) +
                  !!(rf & pf::kFormatId) + !!(rf & pf::kFormatLost));
    }
    if (t & pf::kSampleWeightType) {
      a.off_weight = off;
      off += 8;
    }
    field(pf::kSampleDataSrc, &a.off_data_src);
    field(pf::kSampleTransaction, nullptr);
    field(pf::kSamplePhysAddr, &a.off_phys);
    field(pf::kSampleCgroup, nullptr);
    field(pf::kSampleDataPageSize, nullptr);
    field(pf::kSampleCodePageSize, nullptr);
    a.fixed_size = static_cast<uint32_t>(off);
  }
  return a;
}

const char* const kHardwareNames[] = {"cycles",
                                      "instructions",
                                      "cache-references",
                                      "cache-misses",
                                      "branches",
                                      "branch-misses",
                                      "bus-cycles",
                                      "stalled-cycles-frontend",
                                      "stalled-cycles-backend",
                                      "ref-cycles"};
const char* const kSoftwareNames[] = {
    "cpu-clock",        "task-clock",   "page-faults",  "context-switches",
    "cpu-migrations",   "minor-faults", "major-faults", "alignment-faults",
    "emulation-faults", "dummy",        "bpf-output",   "cgroup-switches"};

}  // namespace

SampleSource PerfEventSampleSource(uint32_t type, uint64_t config) {
  if (type == PERF_TYPE_SOFTWARE && (config == PERF_COUNT_SW_PAGE_FAULTS ||
                                     config == PERF_COUNT_SW_PAGE_FAULTS_MIN ||
                                     config == PERF_COUNT_SW_PAGE_FAULTS_MAJ)) {
    return SampleSource::kPageFault;
  }
  return SampleSource::kPerfData;
}

std::string PerfEventDefaultName(uint32_t type, uint64_t config) {
  const uint64_t low = config & 0xffffffffULL;  // high bits: extended PMU type
  switch (type) {
    case 0:
      if (low < std::size(kHardwareNames)) return kHardwareNames[low];
      break;
    case 1:
      if (config < std::size(kSoftwareNames)) return kSoftwareNames[config];
      break;
    case 4:
      return absl::StrFormat("raw %#x", config);
    default:
      break;
  }
  return absl::StrFormat("type %u config %#x", type, config);
}

struct PerfDataReader::Impl {
  ~Impl() {
    if (map_base_ != nullptr) munmap(map_base_, map_size_);
    if (zds_ != nullptr) ZSTD_freeDStream(zds_);
  }

  absl::Status Init();
  bool Next(Sample* s, PerfSampleOrigin* origin);

  // Header parsing.
  absl::Status InitFile();
  absl::Status AddAttr(const uint8_t* attr, uint64_t attr_len,
                       const uint8_t* ids, uint64_t nr_ids, uint64_t offset);
  absl::Status AddId(uint64_t id, uint32_t attr, uint64_t offset);
  absl::Status CheckIdPositions(uint64_t offset);
  void ReadEventDesc(const uint8_t* p, uint64_t len);
  void SetName(uint32_t attr, std::string name);

  // Record framing.
  bool NextOuterRecord(const uint8_t** rec, uint32_t* size, uint64_t* offset);
  enum class Inner { kRecord, kNeedInput, kError };
  Inner NextInnerRecord(const uint8_t** rec, uint32_t* size);
  void Finish();
  void Fail(uint64_t offset, const std::string& what);

  // Record handling; true when *s holds a sample to return.
  bool HandleRecord(const uint8_t* rec, uint32_t size, uint64_t offset,
                    bool inner, Sample* s, PerfSampleOrigin* origin);
  bool HandleSample(const uint8_t* body, uint64_t len, uint64_t offset,
                    Sample* s, PerfSampleOrigin* origin);
  void StartCompressed(const uint8_t* data, uint64_t len, uint64_t offset);
  // The attr a non-sample record belongs to, for its sample_id_all trailer.
  const Attr* TrailerAttr(const uint8_t* body, uint64_t len) const;
  // Counters for the CPU in a non-sample record's trailer (or no_cpu).
  PerfCpuCounts& TrailerCounts(const uint8_t* body, uint64_t len);
  PerfCpuCounts& CpuCounts(uint32_t cpu) {
    if (cpu < stats_.per_cpu.size()) return stats_.per_cpu[cpu];
    return GrowCpuCounts(cpu);
  }
  PerfCpuCounts& GrowCpuCounts(uint32_t cpu);

  // Decoded data_src values, direct-mapped by a hash of the raw value: a
  // PEBS or IBS stream repeats a few dozen encodings, and decoding each
  // sample anew took 30% of the decode time.
  struct SrcCacheEntry {
    uint64_t src = 0;
    MemLevel level = MemLevel::kUnknown;
    TlbOutcome tlb = TlbOutcome::kUnknown;
    uint8_t flags = 0;
  };
  static constexpr size_t kSrcCacheSize = 64;
  const SrcCacheEntry& DecodeSrc(uint64_t src) {
    SrcCacheEntry& e =
        src_cache_[(src ^ (src >> 7) ^ (src >> 19) ^ (src >> 33)) &
                   (kSrcCacheSize - 1)];
    if (e.src != src) {
      const DecodedDataSrc d = DecodeDataSrc(src);
      e.src = src;
      e.level = d.level;
      e.tlb = d.tlb;
      e.flags = d.is_store ? kSampleStore : 0;
    }
    return e;
  }
  // Every entry starts as the decoding of 0 (all unknown), which is right.
  SrcCacheEntry src_cache_[kSrcCacheSize];

  bool LookupId(uint64_t id, uint32_t* attr) const;

  std::string name_;
  const uint8_t* base_ = nullptr;
  uint64_t size_ = 0;
  void* map_base_ = nullptr;
  size_t map_size_ = 0;

  PerfDataMode mode_ = PerfDataMode::kFile;
  uint64_t pos_ = 0;               // next outer record
  uint64_t end_ = 0;               // end of the readable data
  uint64_t data_end_claimed_ = 0;  // where the header says the data end
  // Payload bytes after an AUXTRACE / TRACING_DATA record.
  uint64_t outer_skip_ = 0;
  // Reported after the data (e.g. a truncated feature section).
  std::string pending_error_;
  uint64_t pending_error_offset_ = 0;

  std::vector<Attr> attrs_;
  std::vector<bool> named_from_file_;
  absl::flat_hash_map<uint64_t, uint32_t> id_to_attr_;
  int id_pos_ = -1, is_pos_ = -1;  // shared by all attrs when there are several
  mutable uint64_t cached_id_ = 0;
  mutable uint32_t cached_attr_ = 0;
  mutable bool cache_valid_ = false;

  // Decompression: the zstd stream runs across all COMPRESSED records; its
  // output goes to window_[wbeg_, wend_).
  ZSTD_DStream* zds_ = nullptr;
  std::unique_ptr<uint8_t[]> window_;
  size_t wbeg_ = 0, wend_ = 0;
  const uint8_t* zin_ = nullptr;
  size_t zin_size_ = 0, zin_pos_ = 0;
  // The last call filled the window; zstd may hold more output.
  bool zflush_pending_ = false;
  bool inner_active_ = false;
  uint64_t zrec_offset_ = 0;  // file offset of the current COMPRESSED record
  uint64_t dstream_pos_ = 0;  // decompressed-stream offset of window_[wbeg_]
  // Decompressed-stream offset where that record's output began.
  uint64_t zrec_dstart_ = 0;
  uint64_t inner_skip_ = 0;  // payload bytes to skip in the decompressed data

  PerfDataStats stats_;
  absl::Status status_;
  bool done_ = false;
};

// ---------------------------------------------------------------------------
// Header

absl::Status PerfDataReader::Impl::Init() {
  if (size_ < pf::kPipeHeaderSize) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %d bytes is too short for a perf.data header; is "
                        "this a perf.data file?",
                        name_, size_));
  }
  const uint64_t magic = Load64(base_ + pf::kFhMagic);
  if (magic == pf::kMagic2Swapped) {
    return absl::UnimplementedError(
        absl::StrFormat("%s: big-endian perf.data (recorded on a big-endian "
                        "machine) is not supported; convert it "
                        "there with `perf script` or `perf inject`",
                        name_));
  }
  if (magic == pf::kMagic1) {
    return absl::UnimplementedError(
        absl::StrFormat("%s: version-1 perf.data (magic PERFFILE) is not "
                        "supported; rewrite it with a newer perf: "
                        "`perf inject -i OLD -o NEW`",
                        name_));
  }
  if (magic != pf::kMagic2) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: not a perf.data file (magic at byte 0 is %#018x, "
                        "want \"PERFILE2\")",
                        name_, magic));
  }
  const uint64_t header_size = Load64(base_ + pf::kFhSize);
  if (header_size == pf::kPipeHeaderSize) {
    mode_ = PerfDataMode::kPipe;
    pos_ = pf::kPipeHeaderSize;
    end_ = size_;
    data_end_claimed_ = size_;
    return absl::OkStatus();
  }
  if (header_size < pf::kFileHeaderSize) {
    return absl::DataLossError(absl::StrFormat(
        "%s: header size at byte 8 is %d; perf writes %d (file) or %d (pipe): "
        "corrupt header",
        name_, header_size, pf::kFileHeaderSize, pf::kPipeHeaderSize));
  }
  return InitFile();
}

absl::Status PerfDataReader::Impl::InitFile() {
  mode_ = PerfDataMode::kFile;
  if (size_ < pf::kFileHeaderSize) {
    return absl::DataLossError(absl::StrFormat(
        "%s: file ends at byte %d inside the %d-byte header: truncated", name_,
        size_, pf::kFileHeaderSize));
  }
  const uint64_t attr_size = Load64(base_ + pf::kFhAttrSize);
  const uint64_t attrs_off = Load64(base_ + pf::kFhAttrs);
  const uint64_t attrs_len = Load64(base_ + pf::kFhAttrs + 8);
  const uint64_t data_off = Load64(base_ + pf::kFhData);
  const uint64_t data_len = Load64(base_ + pf::kFhData + 8);
  uint64_t features[4];
  for (int i = 0; i < 4; ++i)
    features[i] = Load64(base_ + pf::kFhFeatures + 8 * i);

  // Each attrs entry: perf_event_attr (attr_size - 16 bytes, any ABI
  // version) then {offset, size} of its u64 id array.
  if (attr_size < pf::kAttrSizeVer0 + 16 || attr_size > kMaxAttrBytes + 16) {
    return absl::DataLossError(absl::StrFormat(
        "%s: attr size %d at byte 16 is outside [%d, %d]: corrupt header",
        name_, attr_size, pf::kAttrSizeVer0 + 16, kMaxAttrBytes + 16));
  }
  if (attrs_len == 0 || attrs_len % attr_size != 0 ||
      attrs_len / attr_size > kMaxAttrs) {
    return absl::DataLossError(
        absl::StrFormat("%s: attrs section size %d at byte 32 is not 1..%d "
                        "entries of %d bytes: corrupt header",
                        name_, attrs_len, kMaxAttrs, attr_size));
  }
  if (attrs_off > size_ || attrs_len > size_ - attrs_off) {
    return absl::DataLossError(
        absl::StrFormat("%s: attrs section [%d, +%d) runs past the end of the "
                        "file at byte %d: truncated",
                        name_, attrs_off, attrs_len, size_));
  }
  const uint64_t nr_attrs = attrs_len / attr_size;
  for (uint64_t i = 0; i < nr_attrs; ++i) {
    const uint64_t entry = attrs_off + i * attr_size;
    const uint64_t attr_len = attr_size - 16;
    const uint64_t ids_off = Load64(base_ + entry + attr_len);
    const uint64_t ids_len = Load64(base_ + entry + attr_len + 8);
    if (ids_off > size_ || ids_len > size_ - ids_off) {
      return absl::DataLossError(
          absl::StrFormat("%s: ids of attr %d ([%d, +%d), entry at byte %d) "
                          "run past the end of the file at byte "
                          "%d: truncated",
                          name_, i, ids_off, ids_len, entry, size_));
    }
    HOTPAGE_RETURN_IF_ERROR(
        AddAttr(base_ + entry, attr_len, base_ + ids_off, ids_len / 8, entry));
  }
  HOTPAGE_RETURN_IF_ERROR(CheckIdPositions(attrs_off));

  if (data_off > size_) {
    return absl::DataLossError(
        absl::StrFormat("%s: data section starts at byte %d, past the end of "
                        "the file at byte %d: truncated",
                        name_, data_off, size_));
  }
  const bool any_feature =
      (features[0] | features[1] | features[2] | features[3]) != 0;
  uint64_t data_end;
  if (data_len == 0 && !any_feature) {
    // `perf record` writes the final header last; a killed perf leaves a
    // data size of 0. perf reads to the end of the file then; so do we.
    stats_.header_incomplete = true;
    data_end = size_;
  } else if (data_len > std::numeric_limits<uint64_t>::max() - data_off) {
    return absl::DataLossError(absl::StrFormat(
        "%s: data section size %d at byte 48 overflows: corrupt header", name_,
        data_len));
  } else {
    data_end = data_off + data_len;
  }
  pos_ = data_off;
  data_end_claimed_ = data_end;
  end_ = std::min(data_end, size_);

  // Feature sections: an array of {offset, size}, one per set bit, right
  // after the data. Only the event names (HEADER_EVENT_DESC) are used, but
  // every section must lie in the file: one that does not means the file
  // was cut (reported after the data, which are intact).
  if (any_feature) {
    uint64_t nr_features = 0;
    for (uint64_t w : features) {
      nr_features += static_cast<uint64_t>(std::popcount(w));
    }
    const uint64_t table = data_end;
    if (table > size_ || nr_features * 16 > size_ - table) {
      pending_error_ = absl::StrFormat(
          "the feature section table (%d entries at byte %d) runs past the "
          "end of the file at byte %d: truncated",
          nr_features, table, size_);
      pending_error_offset_ = std::min(table, size_);
      return absl::OkStatus();
    }
    uint64_t index = 0;
    for (int bit = 0; bit < pf::kFeatureBits; ++bit) {
      if (!((features[bit / 64] >> (bit % 64)) & 1)) continue;
      const uint64_t sec_off = Load64(base_ + table + 16 * index);
      const uint64_t sec_len = Load64(base_ + table + 16 * index + 8);
      ++index;
      if (sec_off > size_ || sec_len > size_ - sec_off) {
        if (pending_error_.empty()) {
          pending_error_ = absl::StrFormat(
              "feature section %d [%d, +%d) runs past the end of the file at "
              "byte %d: truncated",
              bit, sec_off, sec_len, size_);
          pending_error_offset_ = std::min(sec_off, size_);
        }
        continue;
      }
      if (bit == pf::kFeatEventDesc) ReadEventDesc(base_ + sec_off, sec_len);
    }
  }
  return absl::OkStatus();
}

absl::Status PerfDataReader::Impl::AddAttr(const uint8_t* attr,
                                           uint64_t attr_len,
                                           const uint8_t* ids, uint64_t nr_ids,
                                           uint64_t offset) {
  if (attrs_.size() >= kMaxAttrs) {
    return absl::DataLossError(absl::StrFormat(
        "%s: more than %d event attrs (at byte %d): corrupt file", name_,
        kMaxAttrs, offset));
  }
  PerfEventInfo info;
  attrs_.push_back(ParseAttr(attr, attr_len, &info));
  info.name = PerfEventDefaultName(info.type, info.config);
  stats_.events.push_back(std::move(info));
  named_from_file_.push_back(false);
  const uint32_t index = static_cast<uint32_t>(attrs_.size() - 1);
  for (uint64_t i = 0; i < nr_ids; ++i) {
    HOTPAGE_RETURN_IF_ERROR(AddId(Load64(ids + 8 * i), index, offset));
  }
  return absl::OkStatus();
}

absl::Status PerfDataReader::Impl::AddId(uint64_t id, uint32_t attr,
                                         uint64_t offset) {
  if (id_to_attr_.size() >= kMaxIds) {
    return absl::DataLossError(
        absl::StrFormat("%s: more than %d event ids (at byte %d): corrupt file",
                        name_, kMaxIds, offset));
  }
  id_to_attr_.emplace(id, attr);  // the first mapping of an id wins
  cache_valid_ = false;
  return absl::OkStatus();
}

// With several events, perf finds a sample's event by its id, which must sit
// at the same position in every event's samples (evlist__valid_sample_type).
absl::Status PerfDataReader::Impl::CheckIdPositions(uint64_t offset) {
  if (attrs_.size() <= 1) return absl::OkStatus();
  id_pos_ = attrs_[0].id_pos;
  is_pos_ = attrs_[0].is_pos;
  for (size_t i = 1; i < attrs_.size(); ++i) {
    if (id_pos_ < 0 || attrs_[i].id_pos != id_pos_ ||
        (attrs_[0].sample_id_all && attrs_[i].is_pos != is_pos_)) {
      return absl::DataLossError(absl::StrFormat(
          "%s: events 0 and %d (at byte %d) have sample_types %#x and %#x, "
          "which do not place the "
          "sample id (IDENTIFIER or ID) at the same position, so samples "
          "cannot be told apart "
          "(perf refuses these files too: \"non matching sample_type\")",
          name_, i, offset, attrs_[0].sample_type, attrs_[i].sample_type));
    }
  }
  return absl::OkStatus();
}

void PerfDataReader::Impl::SetName(uint32_t attr, std::string name) {
  if (attr >= attrs_.size() || name.empty()) return;
  stats_.events[attr].name = std::move(name);
  named_from_file_[attr] = true;
}

// HEADER_EVENT_DESC: {u32 nr; u32 attr_size; {attr; u32 nr_ids;
// {u32 len; char str[len]}; u64 ids[nr_ids]}[nr]}. Best effort: names only.
void PerfDataReader::Impl::ReadEventDesc(const uint8_t* p, uint64_t len) {
  if (len < 8) return;
  const uint32_t nr = Load32(p);
  const uint32_t attr_size = Load32(p + 4);
  if (attr_size < pf::kAttrSizeVer0 || attr_size > kMaxAttrBytes) return;
  uint64_t o = 8;
  for (uint32_t i = 0; i < nr && i < kMaxAttrs; ++i) {
    if (len - o < uint64_t{attr_size} + 8) return;
    o += attr_size;
    const uint32_t nr_ids = Load32(p + o);
    const uint32_t str_len = Load32(p + o + 4);
    o += 8;
    if (len - o < str_len) return;
    std::string name = CleanName(p + o, str_len);
    o += str_len;
    if ((len - o) / 8 < nr_ids) return;
    uint32_t attr = i;
    if (nr_ids > 0) {
      uint32_t by_id;
      if (LookupId(Load64(p + o), &by_id)) attr = by_id;
    }
    o += uint64_t{nr_ids} * 8;
    SetName(attr, std::move(name));
  }
}

bool PerfDataReader::Impl::LookupId(uint64_t id, uint32_t* attr) const {
  if (cache_valid_ && cached_id_ == id) {
    *attr = cached_attr_;
    return true;
  }
  auto it = id_to_attr_.find(id);
  if (it == id_to_attr_.end()) return false;
  cached_id_ = id;
  cached_attr_ = it->second;
  cache_valid_ = true;
  *attr = it->second;
  return true;
}

// ---------------------------------------------------------------------------
// Records

void PerfDataReader::Impl::Fail(uint64_t offset, const std::string& what) {
  if (done_) return;
  done_ = true;
  status_ = absl::DataLossError(absl::StrFormat(
      "%s: %s (at byte %d); the %d samples before it were read and are valid",
      name_, what, offset, stats_.samples));
}

void PerfDataReader::Impl::Finish() {
  if (inner_skip_ > 0 || wend_ > wbeg_ || zin_pos_ < zin_size_) {
    Fail(zrec_offset_,
         absl::StrFormat(
             "the compressed data end inside a record (%d bytes of it "
             "decompressed): truncated",
             wend_ - wbeg_));
    return;
  }
  if (!pending_error_.empty()) {
    Fail(pending_error_offset_, pending_error_);
    return;
  }
  if (end_ < data_end_claimed_) {
    Fail(
        end_,
        absl::StrFormat(
            "the file ends inside the data section, which the header says ends "
            "at byte %d: truncated",
            data_end_claimed_));
    return;
  }
  done_ = true;
}

inline bool PerfDataReader::Impl::NextOuterRecord(const uint8_t** rec,
                                                  uint32_t* size,
                                                  uint64_t* offset) {
  if (outer_skip_ > 0) {
    if (outer_skip_ > end_ - pos_) {
      Fail(pos_,
           absl::StrFormat(
               "the payload of the record before this point needs %d bytes, "
               "the data have %d: truncated",
               outer_skip_, end_ - pos_));
      return false;
    }
    pos_ += outer_skip_;
    outer_skip_ = 0;
  }
  if (pos_ >= end_) {
    Finish();
    return false;
  }
  if (end_ - pos_ < pf::kRecordHeaderSize) {
    Fail(pos_, absl::StrFormat(
                   "the data end %d bytes into a record header: truncated",
                   end_ - pos_));
    return false;
  }
  const uint8_t* p = base_ + pos_;
  const uint32_t sz = Load16(p + 6);
  if (sz < pf::kRecordHeaderSize) {
    Fail(pos_,
         absl::StrFormat(
             "record of type %d has size %d, less than its header: corrupt",
             Load32(p), sz));
    return false;
  }
  if (sz > end_ - pos_) {
    Fail(pos_,
         absl::StrFormat(
             "record of type %d and size %d runs past the end of the data at "
             "byte %d: truncated",
             Load32(p), sz, end_));
    return false;
  }
  *rec = p;
  *size = sz;
  *offset = pos_;
  pos_ += sz;
  return true;
}

PerfDataReader::Impl::Inner PerfDataReader::Impl::NextInnerRecord(
    const uint8_t** rec, uint32_t* size) {
  for (;;) {
    size_t have = wend_ - wbeg_;
    if (inner_skip_ > 0) {
      const size_t n =
          static_cast<size_t>(std::min<uint64_t>(inner_skip_, have));
      wbeg_ += n;
      dstream_pos_ += n;
      inner_skip_ -= n;
      have -= n;
    }
    if (inner_skip_ == 0 && have >= pf::kRecordHeaderSize) {
      const uint8_t* p = window_.get() + wbeg_;
      const uint32_t sz = Load16(p + 6);
      if (sz < pf::kRecordHeaderSize) {
        Fail(zrec_offset_,
             absl::StrFormat("record of type %d at decompressed offset %d has "
                             "size %d, less than "
                             "its header: corrupt compressed data",
                             Load32(p), dstream_pos_, sz));
        return Inner::kError;
      }
      if (have >= sz) {
        if (dstream_pos_ < zrec_dstart_) ++stats_.split_records;
        *rec = p;
        *size = sz;
        wbeg_ += sz;
        dstream_pos_ += sz;
        return Inner::kRecord;
      }
    }
    // Need more decompressed bytes.
    if (zin_pos_ >= zin_size_ && !zflush_pending_) return Inner::kNeedInput;
    if (wbeg_ > 0) {
      std::memmove(window_.get(), window_.get() + wbeg_, have);
      wbeg_ = 0;
      wend_ = have;
    }
    ZSTD_outBuffer out = {window_.get(), kWindowBytes, wend_};
    ZSTD_inBuffer in = {zin_, zin_size_, zin_pos_};
    const size_t ret = ZSTD_decompressStream(zds_, &out, &in);
    if (ZSTD_isError(ret)) {
      Fail(zrec_offset_,
           absl::StrFormat("zstd cannot decompress the COMPRESSED record: %s",
                           ZSTD_getErrorName(ret)));
      return Inner::kError;
    }
    const bool progress = out.pos != wend_ || in.pos != zin_pos_;
    stats_.decompressed_bytes += out.pos - wend_;
    wend_ = out.pos;
    zin_pos_ = in.pos;
    zflush_pending_ = out.pos == out.size;
    if (!progress) {
      // Input used up and nothing more to flush; the window always has room
      // for a whole record, so a full window cannot be the reason.
      zflush_pending_ = false;
      return Inner::kNeedInput;
    }
  }
}

void PerfDataReader::Impl::StartCompressed(const uint8_t* data, uint64_t len,
                                           uint64_t offset) {
  if (zds_ == nullptr) {
    zds_ = ZSTD_createDStream();
    window_ = std::make_unique<uint8_t[]>(kWindowBytes);
    if (zds_ == nullptr) {
      Fail(offset, "zstd could not allocate a decompression context");
      return;
    }
    ZSTD_initDStream(zds_);
    ZSTD_DCtx_setParameter(zds_, ZSTD_d_windowLogMax, kMaxZstdWindowLog);
  }
  ++stats_.compressed_records;
  stats_.compressed_bytes += len;
  zin_ = data;
  zin_size_ = static_cast<size_t>(len);
  zin_pos_ = 0;
  zrec_offset_ = offset;
  zrec_dstart_ = dstream_pos_ + (wend_ - wbeg_);
  inner_active_ = true;
}

PerfCpuCounts& PerfDataReader::Impl::GrowCpuCounts(uint32_t cpu) {
  if (cpu >= kMaxCpus) return stats_.no_cpu;
  stats_.per_cpu.resize(cpu + 1);
  return stats_.per_cpu[cpu];
}

const Attr* PerfDataReader::Impl::TrailerAttr(const uint8_t* body,
                                              uint64_t len) const {
  if (attrs_.empty()) return nullptr;
  const Attr* a = &attrs_[0];
  if (attrs_.size() > 1 && a->sample_id_all && is_pos_ > 0 &&
      len >= 8 * static_cast<uint64_t>(is_pos_)) {
    uint32_t index;
    if (LookupId(Load64(body + len - 8 * static_cast<uint64_t>(is_pos_)),
                 &index)) {
      a = &attrs_[index];
    }
  }
  return a->sample_id_all ? a : nullptr;
}

PerfCpuCounts& PerfDataReader::Impl::TrailerCounts(const uint8_t* body,
                                                   uint64_t len) {
  const Attr* a = TrailerAttr(body, len);
  if (a == nullptr || !(a->sample_type & pf::kSampleCpu) ||
      len < 8 * a->trailer_words) {
    return stats_.no_cpu;
  }
  // Trailer order: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER.
  const uint64_t from_end = (a->sample_type & pf::kSampleIdentifier) ? 2 : 1;
  return CpuCounts(Load32(body + len - 8 * from_end));
}

inline bool PerfDataReader::Impl::HandleSample(const uint8_t* body,
                                               uint64_t len, uint64_t offset,
                                               Sample* s,
                                               PerfSampleOrigin* origin) {
  ++stats_.sample_records;
  uint32_t index = 0;
  if (attrs_.size() != 1) {
    if (attrs_.empty()) {
      ++stats_.skipped_unknown_id;
      return false;
    }
    const uint64_t at = 8 * static_cast<uint64_t>(id_pos_);
    if (len < at + 8) {
      Fail(offset, absl::StrFormat(
                       "sample record of %d bytes is too short to hold its id",
                       len + 8));
      return false;
    }
    const uint64_t id = Load64(body + at);
    // perf: an id of 0 (synthesized records) belongs to the first event.
    if (id != 0 && !LookupId(id, &index)) {
      ++stats_.skipped_unknown_id;
      return false;
    }
  }
  const Attr& a = attrs_[index];
  // Locals rather than a struct: on the fast path they stay in registers.
  uint64_t time = 0, addr = 0, period = 0, weight = 0, data_src = 0, phys = 0;
  uint32_t pid = 0, tid = 0, cpu_num = 0;
  if (a.fixed) {
    if (len < a.fixed_size) {
      Fail(offset,
           absl::StrFormat(
               "sample record of %d bytes is too short for its sample_type "
               "%#x (needs %d): corrupt",
               len + 8, a.sample_type, a.fixed_size + 8));
      return false;
    }
    if (a.off_tid >= 0) {
      const uint64_t v = Load64(body + a.off_tid);
      pid = static_cast<uint32_t>(v);
      tid = static_cast<uint32_t>(v >> 32);
    }
    if (a.off_time >= 0) time = Load64(body + a.off_time);
    if (a.off_addr >= 0) addr = Load64(body + a.off_addr);
    if (a.off_cpu >= 0) cpu_num = Load32(body + a.off_cpu);
    if (a.off_period >= 0) period = Load64(body + a.off_period);
    if (a.off_weight >= 0) weight = Load64(body + a.off_weight);
    if (a.off_data_src >= 0) data_src = Load64(body + a.off_data_src);
    if (a.off_phys >= 0) phys = Load64(body + a.off_phys);
  } else {
    SampleFields f;
    if (!WalkSample(a.layout, body, len, &f)) {
      Fail(offset,
           absl::StrFormat(
               "sample record of %d bytes is too short for its sample_type "
               "%#x and the lengths inside it: corrupt",
               len + 8, a.sample_type));
      return false;
    }
    time = f.time;
    addr = f.addr;
    period = f.period;
    weight = f.weight;
    data_src = f.data_src;
    phys = f.phys;
    pid = f.pid;
    tid = f.tid;
    cpu_num = f.cpu;
  }

  const uint64_t t = a.sample_type;
  PerfCpuCounts& cpu =
      (t & pf::kSampleCpu) ? CpuCounts(cpu_num) : stats_.no_cpu;
  PerfEventInfo& event = stats_.events[index];
  if (addr == 0) {  // also when ADDR is not sampled
    ++stats_.skipped_no_addr;
    ++event.skipped_no_addr;
    ++cpu.skipped_no_addr;
    return false;
  }
  ++stats_.samples;
  ++event.samples;
  ++cpu.samples;

  s->time_ns = time;
  s->vaddr = addr;
  s->paddr = phys;
  s->data_src = data_src;
  s->period = (t & pf::kSamplePeriod) ? period : a.sample_period;
  s->pid = pid;
  s->tid = tid;
  s->cpu = cpu_num;
  if (t & pf::kSampleWeightStruct) {
    s->weight = static_cast<uint32_t>(weight);  // var1_dw: the latency
  } else {
    s->weight = static_cast<uint32_t>(std::min<uint64_t>(weight, UINT32_MAX));
  }
  // Without DATA_SRC, data_src is 0, which decodes to unknown.
  const SrcCacheEntry& src = DecodeSrc(data_src);
  s->level = src.level;
  s->tlb = src.tlb;
  s->flags = src.flags;
  s->source = a.layout.source;  // per event: PerfEventSampleSource()
  s->reserved = 0;
  if (origin != nullptr) {
    origin->event = index;
    origin->file_offset = offset;
  }
  return true;
}

bool PerfDataReader::Impl::HandleRecord(const uint8_t* rec, uint32_t size,
                                        uint64_t offset, bool inner, Sample* s,
                                        PerfSampleOrigin* origin) {
  ++stats_.records;
  const uint32_t type = Load32(rec);
  const uint8_t* body = rec + pf::kRecordHeaderSize;
  const uint64_t len = size - pf::kRecordHeaderSize;
  switch (type) {
    case pf::kRecordSample:
      return HandleSample(body, len, offset, s, origin);

    case pf::kRecordLost:  // {id; lost; sample_id}
      if (len < 16) break;
      ++stats_.lost_records;
      stats_.lost += Load64(body + 8);
      TrailerCounts(body, len).lost += Load64(body + 8);
      return false;

    case pf::kRecordLostSamples:  // {lost; sample_id}
      if (len < 8) break;
      ++stats_.lost_samples_records;
      stats_.lost_samples += Load64(body);
      TrailerCounts(body, len).lost_samples += Load64(body);
      return false;

    case pf::kRecordThrottle:  // {time; id; stream_id; sample_id}
      ++stats_.throttle;
      ++TrailerCounts(body, len).throttle;
      return false;

    case pf::kRecordUnthrottle:
      ++stats_.unthrottle;
      ++TrailerCounts(body, len).unthrottle;
      return false;

    case pf::kRecordHeaderAttr: {  // {attr (attr.size bytes); u64 id[]}
      if (len < pf::kAttrSizeVer0) break;
      uint64_t attr_len = Load32(body + pf::kAttrSize);
      if (attr_len == 0) attr_len = pf::kAttrSizeVer0;  // ABI 0
      if (attr_len < pf::kAttrSizeVer0 || attr_len > len) break;
      absl::Status st = AddAttr(body, attr_len, body + attr_len,
                                (len - attr_len) / 8, offset);
      if (st.ok()) st = CheckIdPositions(offset);
      if (!st.ok()) {
        done_ = true;
        status_ = std::move(st);
      }
      return false;
    }

    case pf::kRecordIdIndex: {  // {nr; {id; idx; cpu; tid}[nr]}
      if (len < 8) break;
      const uint64_t nr = Load64(body);
      if (nr > (len - 8) / 32) break;
      for (uint64_t i = 0; i < nr; ++i) {
        const uint64_t id = Load64(body + 8 + 32 * i);
        const uint64_t idx = Load64(body + 8 + 32 * i + 8);
        if (idx >= attrs_.size()) continue;
        absl::Status st = AddId(id, static_cast<uint32_t>(idx), offset);
        if (!st.ok()) {
          done_ = true;
          status_ = std::move(st);
          return false;
        }
      }
      return false;
    }

    case pf::kRecordEventUpdate: {  // {type; id; data}
      if (len < 16 || Load64(body) != pf::kEventUpdateName) return false;
      uint32_t index;
      if (LookupId(Load64(body + 8), &index))
        SetName(index, CleanName(body + 16, len - 16));
      return false;
    }

    case pf::kRecordHeaderEventType: {  // {event_id; char name[]} (old pipe
                                        // files)
      if (len < 8) break;
      const uint64_t config = Load64(body);
      for (uint32_t i = 0; i < attrs_.size(); ++i) {
        if (!named_from_file_[i] && stats_.events[i].config == config) {
          SetName(i, CleanName(body + 8, len - 8));
        }
      }
      return false;
    }

    // Records followed by a payload that their size does not include.
    case pf::kRecordHeaderTracingData:  // {u32 size}
      if (len < 4) break;
      (inner ? inner_skip_ : outer_skip_) =
          (uint64_t{Load32(body)} + 7) & ~uint64_t{7};
      return false;
    case pf::kRecordAuxtrace:  // {size; offset; reference; idx; tid; cpu}
      if (len < 8) break;
      (inner ? inner_skip_ : outer_skip_) = Load64(body);
      return false;

    case pf::kRecordCompressed:
    case pf::kRecordCompressed2: {
      if (inner) {
        Fail(offset, "a COMPRESSED record inside compressed data: corrupt");
        return false;
      }
      const uint8_t* data = body;
      uint64_t data_len = len;
      if (type == pf::kRecordCompressed2) {  // {data_size; data; padding}
        if (len < 8 || Load64(body) > len - 8) {
          Fail(
              offset,
              "COMPRESSED2 record whose data size exceeds the record: corrupt");
          return false;
        }
        data = body + 8;
        data_len = Load64(body);
      }
      StartCompressed(data, data_len, offset);
      return false;
    }

    default:
      if (!KnownRecordType(type)) ++stats_.unknown_records;
      return false;
  }
  // A known record too short for its fixed fields: count it as unknown
  // rather than read past it.
  ++stats_.unknown_records;
  return false;
}

bool PerfDataReader::Impl::Next(Sample* s, PerfSampleOrigin* origin) {
  while (!done_) {
    const uint8_t* rec;
    uint32_t size;
    uint64_t offset;
    bool inner = false;
    if (inner_active_) {
      const Inner r = NextInnerRecord(&rec, &size);
      if (r == Inner::kError) return false;
      if (r == Inner::kNeedInput) {
        inner_active_ = false;
        continue;
      }
      offset = zrec_offset_;
      inner = true;
    } else if (!NextOuterRecord(&rec, &size, &offset)) {
      return false;
    }
    // Samples first, without the general dispatch: they are nearly every
    // record.
    if (Load32(rec) == pf::kRecordSample) {
      ++stats_.records;
      if (HandleSample(rec + pf::kRecordHeaderSize,
                       size - pf::kRecordHeaderSize, offset, s, origin)) {
        return true;
      }
      continue;
    }
    if (HandleRecord(rec, size, offset, inner, s, origin)) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------
// Public API

PerfDataReader::PerfDataReader(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
PerfDataReader::PerfDataReader(PerfDataReader&&) noexcept = default;
PerfDataReader& PerfDataReader::operator=(PerfDataReader&&) noexcept = default;
PerfDataReader::~PerfDataReader() = default;

absl::StatusOr<PerfDataReader> PerfDataReader::Open(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "open " + path);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    return ErrnoStatus(err, "stat " + path);
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: not a regular file; save the perf output to a "
                        "file first (`perf record -o FILE`)",
                        path));
  }
  auto impl = std::make_unique<Impl>();
  impl->name_ = path;
  if (st.st_size > 0) {
    // A read-only private mapping: the page cache backs it, so memory use
    // does not grow with the file. (If another process truncates the file
    // while it is mapped, reading the lost pages raises SIGBUS; perf itself
    // has the same exposure.)
    void* m = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ,
                   MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      const int err = errno;
      close(fd);
      return ErrnoStatus(err, "mmap " + path);
    }
    (void)madvise(m, static_cast<size_t>(st.st_size), MADV_SEQUENTIAL);
    impl->map_base_ = m;
    impl->map_size_ = static_cast<size_t>(st.st_size);
    impl->base_ = static_cast<const uint8_t*>(m);
    impl->size_ = static_cast<uint64_t>(st.st_size);
  }
  close(fd);
  HOTPAGE_RETURN_IF_ERROR(impl->Init());
  return PerfDataReader(std::move(impl));
}

absl::StatusOr<PerfDataReader> PerfDataReader::OpenBuffer(
    absl::string_view data, absl::string_view name) {
  auto impl = std::make_unique<Impl>();
  impl->name_ = std::string(name);
  impl->base_ = reinterpret_cast<const uint8_t*>(data.data());
  impl->size_ = data.size();
  HOTPAGE_RETURN_IF_ERROR(impl->Init());
  return PerfDataReader(std::move(impl));
}

bool PerfDataReader::Next(Sample* sample, PerfSampleOrigin* origin) {
  return impl_->Next(sample, origin);
}

size_t PerfDataReader::Read(Sample* out, size_t max,
                            PerfSampleOrigin* origins) {
  size_t n = 0;
  while (n < max &&
         impl_->Next(&out[n], origins != nullptr ? &origins[n] : nullptr))
    ++n;
  return n;
}

const absl::Status& PerfDataReader::status() const { return impl_->status_; }
bool PerfDataReader::done() const { return impl_->done_; }
const PerfDataStats& PerfDataReader::stats() const { return impl_->stats_; }
PerfDataMode PerfDataReader::mode() const { return impl_->mode_; }
const std::string& PerfDataReader::name() const { return impl_->name_; }

}  // namespace hotpage
