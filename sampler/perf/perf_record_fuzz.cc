// Fuzz target for the record decoders of the live ring (perf_record.h,
// ibs_raw.h): WalkSample, DecodeSample, DecodeSampleIdTrailer and the IBS
// RAW block, on a layout and a body taken from the input. The ring's bytes
// are the kernel's, but a record's length fields (READ groups, CALLCHAIN,
// RAW, BRANCH_STACK, STACK_USER) are read at hundreds of thousands of
// samples a second by a root process: a decoder that trusted one would
// read past the record. The perf.data reader's fuzzer
// (perf_data_fuzz.cc) reaches these only through whole files.
//
// Input: byte 0 picks the layout: with its top bit clear, one of the
// layouts hotpage's samplers open (kLayouts: PEBS load latency, IBS op with
// RAW, a page-fault event, a perf record -d layout with READ and CALLCHAIN)
// so that the gcc driver's mostly textual inputs reach the field walk;
// with it set, bytes 1-24 are sample_type, read_format and
// branch_sample_type themselves. The rest is the record body, copied to a
// buffer of exactly its size so that a sanitizer sees any read past it.
// Checks, beyond the absence of crashes and of reads past the body:
// DecodeSample accepts exactly the bodies WalkSample accepts (it is built
// on it) and hands on the time and the id WalkSample read, and a sample_id
// trailer is decoded only from a body that holds it.

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "sampler/perf/ibs_raw.h"
#include "sampler/perf/perf_record.h"
#include "sampler/sample.h"

namespace {

using hotpage::PerfEventLayout;

constexpr uint64_t kBase =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
    PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;

struct Layout {
  uint64_t sample_type;
  uint64_t read_format;
  hotpage::SampleSource source;
};

const Layout kLayouts[] = {
    {kBase | PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC, 0,
     hotpage::SampleSource::kPebsLoad},
    {kBase | PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_RAW,
     0, hotpage::SampleSource::kIbsOp},
    {kBase | PERF_SAMPLE_RAW, 0, hotpage::SampleSource::kIbsOp},
    {kBase, 0, hotpage::SampleSource::kPageFault},
    {PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
         PERF_SAMPLE_ID | PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN |
         PERF_SAMPLE_PERIOD | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC |
         PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_DATA_PAGE_SIZE,
     PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED,
     hotpage::SampleSource::kPerfData},
};

uint64_t U64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  PerfEventLayout layout;
  size_t used = 1;
  if (data[0] & 0x80) {
    if (size < 25) return 0;
    layout.sample_type = U64(data + 1);
    layout.read_format = U64(data + 9);
    layout.branch_sample_type = U64(data + 17);
    used = 25;
  } else {
    const Layout& l = kLayouts[data[0] % (sizeof(kLayouts) / sizeof(Layout))];
    layout.sample_type = l.sample_type;
    layout.read_format = l.read_format;
    layout.source = l.source;
  }
  layout.sample_id_all = (data[0] & 0x40) != 0;
  layout.fixed_period = 1000;
  // The body, in a buffer of exactly its size.
  const size_t len = size - used;
  std::vector<uint8_t> body(data + used, data + size);
  static const uint8_t kEmpty[1] = {0};
  const uint8_t* b = body.empty() ? kEmpty : body.data();

  hotpage::SampleFields f;
  const bool walked = hotpage::WalkSample(layout, b, len, &f);
  hotpage::Sample s{};
  uint64_t id = 0;
  const bool decoded = hotpage::DecodeSample(layout, b, len, &s, &id);
  if (walked != decoded) std::abort();
  if (decoded) {
    if (s.time_ns != f.time) std::abort();
    if ((layout.sample_type & PERF_SAMPLE_IDENTIFIER ||
         layout.sample_type & PERF_SAMPLE_ID) &&
        id != f.id) {
      std::abort();
    }
    (void)hotpage::CompleteIbsOpSample(layout, b, len, &s);
  }
  hotpage::IbsOpRegs regs;
  (void)hotpage::ParseIbsOpRaw(
      b, len, hotpage::RawBlockOffset(layout.sample_type), &regs);
  hotpage::SampleId sid;
  if (hotpage::DecodeSampleIdTrailer(layout, b, len, &sid) &&
      hotpage::SampleIdTrailerSize(layout) > len) {
    std::abort();  // a trailer longer than the body cannot have been read
  }
  (void)hotpage::SampleIdOffset(layout.sample_type);
  return 0;
}
