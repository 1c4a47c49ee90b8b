// Decoding of perf_event records (PERF_RECORD_SAMPLE bodies and the
// sample_id trailer of other records) into hotpage's Sample.
//
// The one sample walker of the project: the live ring reader
// (ring_reader.h) uses DecodeSample(), and the perf.data reader uses
// WalkSample() for layouts its fixed-offset fast path cannot take. Records
// are laid out by the event's sample_type in the kernel's order
// (perf_output_sample() in kernel/events/core.c, and perf's
// evsel__parse_sample()):
//   IDENTIFIER, IP, TID, TIME, ADDR, ID, STREAM_ID, CPU, PERIOD, READ,
//   CALLCHAIN, RAW, BRANCH_STACK (hw_idx, entries, counters), REGS_USER,
//   STACK_USER, WEIGHT(_STRUCT), DATA_SRC, TRANSACTION, REGS_INTR,
//   PHYS_ADDR, CGROUP, DATA_PAGE_SIZE, CODE_PAGE_SIZE, AUX.
// Non-sample records end with a sample_id trailer when sample_id_all is
// set: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER.
//
// Hot path: DecodeSample() never allocates and never reads past `len`; a
// record too short for its sample_type returns false.

#ifndef HOTPAGE_SAMPLER_PERF_PERF_RECORD_H_
#define HOTPAGE_SAMPLER_PERF_PERF_RECORD_H_

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>

#include "sampler/sample.h"

namespace hotpage {

// What a decoder needs to know about the event that wrote a record.
struct PerfEventLayout {
  uint64_t sample_type = 0;
  uint64_t read_format = 0;
  uint64_t branch_sample_type = 0;
  uint64_t sample_regs_user = 0;
  uint64_t sample_regs_intr = 0;
  bool sample_id_all = false;
  // attr.sample_period when not in frequency mode; used when the record
  // carries no PERIOD.
  uint64_t fixed_period = 0;
  SampleSource source = SampleSource::kUnknown;

  static PerfEventLayout FromAttr(const perf_event_attr& attr,
                                  SampleSource source);
};

// The sample_id fields of a record (any of them may be absent: 0).
struct SampleId {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t time = 0;
  uint64_t id = 0;
  uint64_t stream_id = 0;
  uint32_t cpu = 0;
  bool has_cpu = false;
};

// The raw fields hotpage keeps from a sample (0 when absent).
struct SampleFields {
  uint64_t id = 0;  // IDENTIFIER, else ID
  uint64_t time = 0, addr = 0, period = 0, weight = 0, data_src = 0, phys = 0;
  uint32_t pid = 0, tid = 0, cpu = 0;
};

// Walks a PERF_RECORD_SAMPLE body of any layout with a bounds check on
// every field (including the lengths perf itself reads unchecked). False if
// the fields do not fit in `len` bytes.
bool WalkSample(const PerfEventLayout& layout, const uint8_t* body, size_t len,
                SampleFields* f);

// Decodes a PERF_RECORD_SAMPLE body (the bytes after perf_event_header).
// Fills every Sample field it can; level/tlb/flags from data_src. `*id` gets
// IDENTIFIER or ID when present (0 otherwise). Returns false if `len` is too
// short for the layout or a variable-length field is inconsistent.
bool DecodeSample(const PerfEventLayout& layout, const uint8_t* body,
                  size_t len, Sample* out, uint64_t* id);

// Decodes the sample_id trailer at the end of a non-sample record body of
// `len` bytes. Returns false when the layout has no sample_id_all or the
// body is too short.
bool DecodeSampleIdTrailer(const PerfEventLayout& layout, const uint8_t* body,
                           size_t len, SampleId* out);

// Size in bytes of the sample_id trailer for this layout (0 without
// sample_id_all).
size_t SampleIdTrailerSize(const PerfEventLayout& layout);

// Where IDENTIFIER/ID sit, so a reader with several events can find a
// record's event before decoding it: the offset of the id u64 in a SAMPLE
// body (-1 if the layout has neither), per the kernel's rules.
int SampleIdOffset(uint64_t sample_type);

// Highest valid user-space address on x86-64 with 5-level paging; anything
// above is a kernel address and is dropped by samplers.
inline constexpr uint64_t kMaxUserAddress = 0x00ffffffffffffffull;

}  // namespace hotpage

#endif  // HOTPAGE_SAMPLER_PERF_PERF_RECORD_H_
