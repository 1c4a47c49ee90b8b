// Fuzz target for PerfDataReader: any bytes, opened as a perf.data file and
// read to the end. Besides crashes and sanitizer reports it checks what the
// reader promises: every sample returned has a data address, a valid event
// index, its event's source and an offset inside the input; the stream
// always ends (done()); the sample count matches the stats; an error names
// the input.
//
// Built two ways (see BUILD.bazel): a cc_test over the seed files with
// tools/base/fuzz_driver.cc, and a libFuzzer binary under --config=fuzz.

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "absl/strings/string_view.h"
#include "sampler/perf/perf_data_reader.h"
#include "sampler/sample.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using hotpage::PerfDataReader;
  auto reader = PerfDataReader::OpenBuffer(
      absl::string_view(reinterpret_cast<const char*>(data), size),
      "fuzz.data");
  if (!reader.ok()) {
    if (reader.status().message().find("fuzz.data") ==
        absl::string_view::npos) {
      std::abort();
    }
    return 0;
  }
  hotpage::Sample samples[64];
  hotpage::PerfSampleOrigin origins[64];
  uint64_t total = 0;
  size_t n;
  while ((n = reader->Read(samples, 64, origins)) > 0) {
    const auto& events = reader->stats().events;
    for (size_t i = 0; i < n; ++i) {
      if (samples[i].vaddr == 0 || samples[i].reserved != 0 ||
          origins[i].event >= events.size() || origins[i].file_offset >= size) {
        std::abort();
      }
      // The source is the event's, decided from its attr.
      const hotpage::PerfEventInfo& e = events[origins[i].event];
      if (samples[i].source != e.source ||
          e.source != hotpage::PerfEventSampleSource(e.type, e.config)) {
        std::abort();
      }
    }
    total += n;
  }
  const auto& st = reader->stats();
  if (!reader->done() || st.samples != total ||
      st.samples + st.skipped_no_addr + st.skipped_unknown_id >
          st.sample_records) {
    std::abort();
  }
  if (!reader->status().ok() &&
      reader->status().message().find("fuzz.data") == absl::string_view::npos) {
    std::abort();
  }
  return 0;
}
