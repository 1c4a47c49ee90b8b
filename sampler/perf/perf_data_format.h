// The perf.data on-disk format, as constants: record types, sample_type bits,
// read_format and branch_sample_type bits, and the byte offsets of the
// perf_event_attr fields this project reads.
//
// Values are the kernel's ABI (include/uapi/linux/perf_event.h) and the perf
// tool's own record types (tools/lib/perf/include/perf/event.h), written out
// here rather than taken from <linux/perf_event.h> because the installed
// header lags the files perf writes (e.g. PERF_SAMPLE_BRANCH_COUNTERS,
// PERF_RECORD_COMPRESSED2 are newer than Debian's linux-libc-dev). The spec
// is tools/perf/Documentation/perf.data-file-format.txt in the kernel tree.
//
// Everything is little-endian on disk for the files this reader accepts.

#ifndef HOTPAGE_SAMPLER_PERF_PERF_DATA_FORMAT_H_
#define HOTPAGE_SAMPLER_PERF_PERF_DATA_FORMAT_H_

#include <cstdint>

namespace hotpage::perf_format {

// "PERFILE2" read as a little-endian u64.
inline constexpr uint64_t kMagic2 = 0x32454c4946524550ULL;
// The same bytes written by a big-endian machine.
inline constexpr uint64_t kMagic2Swapped = 0x50455246494c4532ULL;
// "PERFFILE": the version-1 format, before 2.6.38-era perf.
inline constexpr uint64_t kMagic1 = 0x454c494646524550ULL;

inline constexpr uint64_t kFileHeaderSize = 104;  // struct perf_file_header
inline constexpr uint64_t kPipeHeaderSize = 16;  // struct perf_pipe_file_header
inline constexpr int kFeatureBits = 256;         // HEADER_FEAT_BITS
inline constexpr uint64_t kRecordHeaderSize = 8;  // struct perf_event_header

// struct perf_file_header field offsets.
inline constexpr int kFhMagic = 0, kFhSize = 8, kFhAttrSize = 16, kFhAttrs = 24,
                     kFhData = 40, kFhEventTypes = 56, kFhFeatures = 72;

// perf_event_attr sizes (PERF_ATTR_SIZE_VER0..VER8).
inline constexpr uint32_t kAttrSizeVer0 = 64;
inline constexpr uint32_t kAttrSizeVer8 = 136;

// perf_event_attr field offsets.
inline constexpr int kAttrType = 0, kAttrSize = 4, kAttrConfig = 8,
                     kAttrSamplePeriod = 16, kAttrSampleType = 24,
                     kAttrReadFormat = 32, kAttrFlags = 40, kAttrConfig1 = 56,
                     kAttrConfig2 = 64, kAttrBranchSampleType = 72,
                     kAttrSampleRegsUser = 80, kAttrSampleStackUser = 88,
                     kAttrSampleRegsIntr = 96;
// Bits of the flags word at kAttrFlags.
inline constexpr uint64_t kAttrFlagFreq = 1ULL << 10;
inline constexpr uint64_t kAttrFlagSampleIdAll = 1ULL << 18;

// Kernel record types (enum perf_event_type).
enum RecordType : uint32_t {
  kRecordMmap = 1,
  kRecordLost = 2,
  kRecordComm = 3,
  kRecordExit = 4,
  kRecordThrottle = 5,
  kRecordUnthrottle = 6,
  kRecordFork = 7,
  kRecordRead = 8,
  kRecordSample = 9,
  kRecordMmap2 = 10,
  kRecordAux = 11,
  kRecordItraceStart = 12,
  kRecordLostSamples = 13,
  kRecordSwitch = 14,
  kRecordSwitchCpuWide = 15,
  kRecordNamespaces = 16,
  kRecordKsymbol = 17,
  kRecordBpfEvent = 18,
  kRecordCgroup = 19,
  kRecordTextPoke = 20,
  kRecordAuxOutputHwId = 21,
  kKernelRecordMax = 22,
  // Records the perf tool writes itself (enum perf_user_event_type).
  kRecordHeaderAttr = 64,
  kRecordHeaderEventType = 65,  // obsolete
  kRecordHeaderTracingData = 66,
  kRecordHeaderBuildId = 67,
  kRecordFinishedRound = 68,
  kRecordIdIndex = 69,
  kRecordAuxtraceInfo = 70,
  kRecordAuxtrace = 71,
  kRecordAuxtraceError = 72,
  kRecordThreadMap = 73,
  kRecordCpuMap = 74,
  kRecordStatConfig = 75,
  kRecordStat = 76,
  kRecordStatRound = 77,
  kRecordEventUpdate = 78,
  kRecordTimeConv = 79,
  kRecordHeaderFeature = 80,
  kRecordCompressed = 81,
  kRecordFinishedInit = 82,
  kRecordCompressed2 = 83,  // {u64 data_size; data; padding to 8}
  kRecordBpfMetadata = 84,
  kRecordSchedstatCpu = 85,
  kRecordSchedstatDomain = 86,
  kUserRecordMax = 87,
};

// PERF_EVENT_UPDATE__NAME in a kRecordEventUpdate record.
inline constexpr uint64_t kEventUpdateName = 2;

// sample_type bits (enum perf_event_sample_format).
enum SampleBit : uint64_t {
  kSampleIp = 1ULL << 0,
  kSampleTid = 1ULL << 1,
  kSampleTime = 1ULL << 2,
  kSampleAddr = 1ULL << 3,
  kSampleRead = 1ULL << 4,
  kSampleCallchain = 1ULL << 5,
  kSampleId = 1ULL << 6,
  kSampleCpu = 1ULL << 7,
  kSamplePeriod = 1ULL << 8,
  kSampleStreamId = 1ULL << 9,
  kSampleRaw = 1ULL << 10,
  kSampleBranchStack = 1ULL << 11,
  kSampleRegsUser = 1ULL << 12,
  kSampleStackUser = 1ULL << 13,
  kSampleWeight = 1ULL << 14,
  kSampleDataSrc = 1ULL << 15,
  kSampleIdentifier = 1ULL << 16,
  kSampleTransaction = 1ULL << 17,
  kSampleRegsIntr = 1ULL << 18,
  kSamplePhysAddr = 1ULL << 19,
  kSampleAux = 1ULL << 20,
  kSampleCgroup = 1ULL << 21,
  kSampleDataPageSize = 1ULL << 22,
  kSampleCodePageSize = 1ULL << 23,
  kSampleWeightStruct = 1ULL << 24,
};
inline constexpr uint64_t kSampleWeightType =
    kSampleWeight | kSampleWeightStruct;
// The sample_id_all trailer carries these, in this order:
// TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER.
inline constexpr uint64_t kSampleIdAllMask = kSampleTid | kSampleTime |
                                             kSampleId | kSampleStreamId |
                                             kSampleCpu | kSampleIdentifier;

// read_format bits.
inline constexpr uint64_t kFormatTotalTimeEnabled = 1ULL << 0;
inline constexpr uint64_t kFormatTotalTimeRunning = 1ULL << 1;
inline constexpr uint64_t kFormatId = 1ULL << 2;
inline constexpr uint64_t kFormatGroup = 1ULL << 3;
inline constexpr uint64_t kFormatLost = 1ULL << 4;

// branch_sample_type bits that change the BRANCH_STACK layout.
inline constexpr uint64_t kBranchHwIndex = 1ULL << 17;  // u64 hw_idx after nr
inline constexpr uint64_t kBranchCounters =
    1ULL << 19;  // u64 counters[nr] after entries
inline constexpr uint64_t kBranchEntrySize = 24;  // struct perf_branch_entry

// Feature bits in the file header (enum HEADER_*).
inline constexpr int kFeatEventDesc = 12;

// Perf's own limit on a record (u16 header.size).
inline constexpr uint64_t kMaxRecordSize = 0xffff;

}  // namespace hotpage::perf_format

#endif  // HOTPAGE_SAMPLER_PERF_PERF_DATA_FORMAT_H_
