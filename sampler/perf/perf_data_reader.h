// PerfDataReader: streams the memory-access samples out of a perf.data file
// written by the Linux `perf` tool, as hotpage Samples.
//
// It reads what `perf record` writes: file mode (PERFILE2 header, attrs
// section of any perf_event_attr size, ids per attr, feature sections for the
// event names) and pipe mode (`perf record -o -`: 16-byte header, attrs as
// PERF_RECORD_HEADER_ATTR records in the stream), `perf record -z`
// (PERF_RECORD_COMPRESSED / COMPRESSED2 holding one zstd stream whose records
// may be split across compressed records), several events mapped by
// IDENTIFIER / ID (from the attrs, HEADER_ATTR and ID_INDEX records), and
// every sample_type field the kernel emits, in the kernel's order, so that the
// fields hotpage keeps (TID, TIME, ADDR, CPU, PERIOD, WEIGHT / WEIGHT_STRUCT,
// DATA_SRC, PHYS_ADDR) are found after any variable-length ones.
//
// How the pieces fit: Open() maps the file (or OpenBuffer() takes caller
// memory), parses the header, attrs and event names, and positions at the
// first record. Next() / Read() then walk the records in file order,
// decompressing on the fly; every sample with a data address becomes a
// Sample (its source set per event by PerfEventSampleSource(): kPageFault
// for the software page-fault events, kPerfData for PMU and all other
// events); everything else is counted in stats(): lost and throttle records
// per CPU, samples without an address, records of types this reader does
// not know (skipped, not fatal). Memory use is constant in
// the number of samples: the file is mapped, and compressed data goes
// through one 256 KiB window.
//
// Order: samples come in file order, i.e. in perf's flush order per ring
// buffer, which is time order per CPU but not across CPUs. `perf script`
// sorts by time; a stable sort of this reader's output by time_ns gives
// exactly its order (the tests check both against perf).
//
// Errors: a malformed or truncated file ends the stream with an error that
// names the file and the byte offset; every sample before that point has
// already been returned and stays valid. Hostile input never makes it crash
// or allocate more than a bounded amount (it is fuzzed).
//
// Speed (perf_data_reader_benchmark, one core of this project's 2-vCPU
// AMD EPYC VM, CPU time): ~60M samples/s for a PEBS-shaped stream
// (IDENTIFIER|IP|TID|TIME|ADDR|CPU|PERIOD|WEIGHT_STRUCT|DATA_SRC|PHYS_ADDR,
// fixed-offset fast path), ~43M/s with two events told apart by id, ~48M/s
// with variable-length fields, ~15M/s for `perf record -z` data (zstd
// decompression dominates).
//
// Threading: a reader is a single-threaded cursor; use one per thread.

#ifndef HOTPAGE_SAMPLER_PERF_PERF_DATA_READER_H_
#define HOTPAGE_SAMPLER_PERF_PERF_DATA_READER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sampler/sample.h"

namespace hotpage {

// Counts for one CPU (or for records that carry no CPU).
struct PerfCpuCounts {
  uint64_t samples = 0;          // samples returned
  uint64_t skipped_no_addr = 0;  // samples without a data address
  uint64_t lost = 0;  // events the kernel dropped (PERF_RECORD_LOST.lost)
  uint64_t lost_samples = 0;  // PERF_RECORD_LOST_SAMPLES.lost
  uint64_t throttle = 0;      // PERF_RECORD_THROTTLE records
  uint64_t unthrottle = 0;    // PERF_RECORD_UNTHROTTLE records
};

// One perf_event_attr of the file ("event" in perf's words).
struct PerfEventInfo {
  std::string name;   // from the file if it has one, else derived ("cycles")
  uint32_t type = 0;  // perf_event_attr.type
  uint64_t config = 0;
  uint64_t sample_type = 0;
  uint64_t sample_period = 0;  // 0 in frequency mode
  uint64_t sample_freq = 0;    // 0 in period mode
  uint32_t attr_size = 0;      // bytes of perf_event_attr as stored in the file
  // What its samples are tagged: PerfEventSampleSource(type, config).
  SampleSource source = SampleSource::kPerfData;
  uint64_t samples = 0;  // samples returned for this event
  uint64_t skipped_no_addr = 0;
};

enum class PerfDataMode : uint8_t { kFile, kPipe };

struct PerfDataStats {
  uint64_t records = 0;  // records seen, including those inside COMPRESSED
  uint64_t sample_records = 0;  // PERF_RECORD_SAMPLE records seen
  uint64_t samples = 0;         // samples returned (have a data address)
  uint64_t skipped_no_addr =
      0;  // samples without ADDR in sample_type, or addr 0
  uint64_t skipped_unknown_id =
      0;  // samples whose id maps to no event (perf: nr_unknown_id)
  uint64_t lost_records = 0;          // PERF_RECORD_LOST records
  uint64_t lost = 0;                  // sum of their `lost` counts
  uint64_t lost_samples_records = 0;  // PERF_RECORD_LOST_SAMPLES records
  uint64_t lost_samples = 0;          // sum of their `lost` counts
  uint64_t throttle = 0;
  uint64_t unthrottle = 0;
  uint64_t unknown_records = 0;  // records of a type this reader does not know
  uint64_t compressed_records = 0;  // PERF_RECORD_COMPRESSED(2)
  uint64_t compressed_bytes = 0;    // zstd bytes in them
  uint64_t decompressed_bytes = 0;  // bytes they expanded to
  uint64_t split_records = 0;  // records split across two compressed records
  // Per CPU, indexed by CPU number, for the CPUs seen (CPU numbers of
  // kMaxCpus and more count in `no_cpu`).
  std::vector<PerfCpuCounts> per_cpu;
  PerfCpuCounts no_cpu;  // records whose sample_type carries no CPU
  std::vector<PerfEventInfo>
      events;  // in attr order; PerfSampleOrigin::event indexes it
  // File mode with a data size of 0: `perf record` did not finish writing
  // the header (killed); the data were read to the end of the file.
  bool header_incomplete = false;
};

// Where a returned sample came from.
struct PerfSampleOrigin {
  uint32_t event = 0;        // index into stats().events
  uint64_t file_offset = 0;  // the record's byte offset in the file; for a
                             // record inside a COMPRESSED record, that
                             // record's offset (as `perf script -D` prints)
};

class PerfDataReader {
 public:
  // CPU numbers at or above this count in PerfDataStats::no_cpu.
  static constexpr uint32_t kMaxCpus = 8192;

  // Maps `path` and reads its header and event attributes. Fails (naming the
  // file and the byte offset) when the file is not a perf.data file, is
  // big-endian, or its header or attrs are malformed or truncated.
  static absl::StatusOr<PerfDataReader> Open(const std::string& path);

  // The same over `data`, which the caller keeps alive and unchanged while
  // the reader is used. `name` stands for the file in messages.
  static absl::StatusOr<PerfDataReader> OpenBuffer(
      absl::string_view data, absl::string_view name = "<memory>");
  // The reader does not own the buffer: passing a temporary std::string
  // would leave it dangling, so that does not compile.
  template <
      typename T,
      std::enable_if_t<std::is_same_v<std::remove_cvref_t<T>, std::string> &&
                           !std::is_lvalue_reference_v<T>,
                       int> = 0>
  static absl::StatusOr<PerfDataReader> OpenBuffer(
      T&& data, absl::string_view name = "<memory>") = delete;

  PerfDataReader(PerfDataReader&&) noexcept;
  PerfDataReader& operator=(PerfDataReader&&) noexcept;
  ~PerfDataReader();

  // The next sample that has a data address. Returns false at the end of the
  // data or on an error; status() then tells which. No allocation, except
  // when a CPU number or (pipe mode) an event is seen for the first time.
  bool Next(Sample* sample, PerfSampleOrigin* origin = nullptr);

  // Up to `max` samples into out[0..); returns how many. 0 means the end or
  // an error, as for Next(). `origins`, when not null, gets one per sample.
  size_t Read(Sample* out, size_t max, PerfSampleOrigin* origins = nullptr);

  // OK while reading and after a clean end; the error that ended the stream
  // otherwise. Samples returned before an error are valid.
  const absl::Status& status() const;
  bool done() const;  // the end or an error was reached

  const PerfDataStats& stats() const;
  PerfDataMode mode() const;
  const std::string& name() const;  // the path or buffer name

 private:
  struct Impl;
  explicit PerfDataReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Which sampler an event of a perf.data file is, as the SampleSource its
// samples are tagged with. The software page-fault events (`perf record -e
// page-faults|minor-faults|major-faults -d`: PERF_TYPE_SOFTWARE with
// PERF_COUNT_SW_PAGE_FAULTS, _MIN or _MAJ, what a machine without a PMU can
// record) are kPageFault: a page faults at most once until it is unmapped or
// reclaimed however hot it is, so their rates only bound the access rate
// from below (SamplesCountAccesses() is false). Everything else (PMU
// events, raw, unknown types) is kPerfData, which counts accesses: one
// sample per `period` counted events.
SampleSource PerfEventSampleSource(uint32_t type, uint64_t config);

// perf's name for an event without a name in the file: "cycles",
// "page-faults", "raw 0x1cd", "type 11 config 0x3", ...
std::string PerfEventDefaultName(uint32_t type, uint64_t config);

}  // namespace hotpage

#endif  // HOTPAGE_SAMPLER_PERF_PERF_DATA_READER_H_
