// Test helper: builds perf.data files in memory, in file or pipe mode,
// optionally zstd-compressed the way `perf record -z` does it, with samples
// encoded field by field in the kernel's order for any sample_type. Tests,
// the benchmark and the fuzz seeds use it to reach layouts that the machine
// here cannot record (PEBS weights and data sources, branch stacks, register
// dumps, old attr sizes).

#ifndef HOTPAGE_SAMPLER_PERF_PERF_DATA_TESTING_H_
#define HOTPAGE_SAMPLER_PERF_PERF_DATA_TESTING_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace hotpage::testing {

struct TestAttr {
  uint32_t type = 1;    // PERF_TYPE_SOFTWARE
  uint64_t config = 2;  // page-faults
  uint64_t sample_type = 0;
  uint64_t read_format = 0;
  uint64_t sample_period = 1;  // or the frequency when freq
  bool freq = false;
  bool sample_id_all = true;
  uint64_t branch_sample_type = 0;
  uint64_t sample_regs_user = 0;
  uint64_t sample_regs_intr = 0;
  // Bytes of perf_event_attr stored in the file: 64 (VER0) ... 136 (VER8)
  // or more (a newer perf). attr.size holds it, or 0 when size_field_zero.
  uint32_t attr_size = 128;  // what perf 6.1 writes (VER7); perf rejects larger
  bool size_field_zero = false;
  std::vector<uint64_t> ids;
  std::string name;  // written as EVENT_DESC (file) or EVENT_UPDATE (pipe)
};

// Every field a sample can carry; which ones are written follows the
// attr's sample_type (and read_format, branch_sample_type, regs masks).
struct TestSample {
  uint64_t id = 0;  // IDENTIFIER and ID
  uint64_t ip = 0;
  uint32_t pid = 0, tid = 0;
  uint64_t time = 0;
  uint64_t addr = 0;
  uint64_t stream_id = 0;
  uint32_t cpu = 0;
  uint64_t period = 0;
  uint64_t read_group_nr = 1;  // values in a PERF_FORMAT_GROUP read
  std::vector<uint64_t> callchain;
  uint32_t raw_size = 0;  // RAW bytes after the u32 size (kernel pads to 8)
  uint64_t branch_nr = 0;
  uint64_t regs_user_abi = 2;    // 0: no registers follow
  uint64_t stack_user_size = 0;  // bytes of stack dump (multiple of 8)
  uint64_t weight = 0;           // full u64 (WEIGHT) or the struct's bits
  uint64_t data_src = 0;
  uint64_t transaction = 0;
  uint64_t regs_intr_abi = 2;
  uint64_t phys_addr = 0;
  uint64_t cgroup = 0;
  uint64_t data_page_size = 0;
  uint64_t code_page_size = 0;
  uint64_t aux_size = 0;  // bytes of AUX data (multiple of 8)
};

// The sample body (without the record header) and the sample_id_all
// trailer of other records, for `attr`.
std::string EncodeSample(const TestAttr& attr, const TestSample& s);
std::string EncodeIdTrailer(const TestAttr& attr, const TestSample& s);

class PerfDataBuilder {
 public:
  // Returns the attr's index.
  int AddAttr(const TestAttr& attr);
  const TestAttr& attr(int index) const {
    return attrs_[static_cast<size_t>(index)];
  }

  // Records appended to the data stream, in order.
  void AddSample(int attr, const TestSample& s);
  void AddLost(int attr, uint64_t id, uint64_t lost, const TestSample& trailer);
  void AddLostSamples(int attr, uint64_t lost, const TestSample& trailer);
  void AddThrottle(int attr, bool unthrottle, uint64_t time, uint64_t id,
                   const TestSample& trailer);
  // An ID_INDEX record mapping every attr's ids to it.
  void AddIdIndex();
  // A record of any type with this body (the header is added).
  void AddRecord(uint32_t type, absl::string_view body, uint16_t misc = 0);
  // Bytes appended as they are (e.g. a payload that follows a record).
  void AddBytes(absl::string_view bytes);

  const std::string& records() const { return data_; }
  // Offsets of the records added so far in the uncompressed data stream.
  const std::vector<size_t>& record_offsets() const { return offsets_; }

  struct Options {
    // Write the data as zstd-compressed records like `perf record -z`: the
    // stream is flushed every `flush_bytes` of input and each flush is cut
    // into COMPRESSED records of at most `max_payload` bytes, so records
    // straddle compressed-record boundaries.
    bool compress = false;
    bool compressed2 = false;  // PERF_RECORD_COMPRESSED2 instead of COMPRESSED
    size_t flush_bytes = 4096;
    size_t max_payload = 65000;
    // File mode: put the ids in the attrs section (else only an ID_INDEX
    // record, if added, maps them).
    bool ids_in_attrs = true;
    bool names = true;  // EVENT_DESC feature / EVENT_UPDATE records
  };
  std::string File(const Options& options) const;
  std::string File() const { return File(Options()); }
  std::string Pipe(const Options& options) const;
  std::string Pipe() const { return Pipe(Options()); }

 private:
  std::string Data(const Options& options) const;

  std::vector<TestAttr> attrs_;
  std::string data_;
  std::vector<size_t> offsets_;
};

// The PEBS-shaped attr of the benchmark and tests: IDENTIFIER|IP|TID|TIME|
// ADDR|CPU|PERIOD|WEIGHT_STRUCT|DATA_SRC|PHYS_ADDR, one id.
TestAttr PebsAttr(uint64_t id);

}  // namespace hotpage::testing

#endif  // HOTPAGE_SAMPLER_PERF_PERF_DATA_TESTING_H_
