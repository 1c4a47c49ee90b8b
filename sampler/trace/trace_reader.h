// TraceReader: streams samples out of an .hpt trace (format: trace_format.h),
// one block at a time, in constant memory.
//
//   HOTPAGE_ASSIGN_OR_RETURN(auto r, TraceReader::Open("in.hpt"));
//   while (true) {
//     absl::StatusOr<absl::Span<const Sample>> block = r->Next();
//     if (!block.ok()) { ...block.status(): names file, offset, cause... }
//     if (block->empty()) break;        // end block reached: trace complete
//     for (const Sample& s : *block) ...
//   }
//   r->counters();                      // per-CPU lost/throttled/skipped
//
// Damage. The file is untrusted. Every size field is checked against the
// caps in trace_format.h before anything is allocated, every block's
// checksum is verified before its payload is decompressed or decoded, and
// a block's samples are handed out only when the whole block decoded. So
// Next() first returns every intact block, then an error (DataLoss, or
// Unimplemented for a newer format) such as
//   "t.hpt: bad checksum in samples block 7 at offset 181770 (stored crc32c
//    0x1c2f0a55, computed 0x8e11f0d2; the file is corrupt there); the 24576
//    samples before it are intact"
// and the same error on every later call. A trace without its end block
// (recording killed, file cut short) is reported the same way, after its
// last complete block. counters() then holds the totals of the last intact
// stats block.
//
// Memory: the reader keeps one block's stored bytes, its decompressed bytes
// and its samples; buffer_bytes() reports them, and they stay under about
// 23 MiB for any input (under 0.5 MiB for traces written with the default
// options). Measured here (trace_benchmark.cc, one core): about 16M
// samples/s (1 GB/s of records), about half in zstd and half decoding
// columns.
//
// Thread-compatible: one thread at a time.

#ifndef HOTPAGE_SAMPLER_TRACE_TRACE_READER_H_
#define HOTPAGE_SAMPLER_TRACE_TRACE_READER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "sampler/sample.h"
#include "sampler/trace/trace_format.h"

typedef struct ZSTD_DCtx_s ZSTD_DCtx;

namespace hotpage {

// Where a TraceReader's bytes come from.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to `size` bytes; fewer only at the end of the input.
  virtual absl::StatusOr<size_t> Read(void* data, size_t size) = 0;
  // Bytes left when that is known (regular files, memory), so that a
  // truncated block is reported before its payload buffer is allocated.
  virtual std::optional<uint64_t> Remaining() const { return std::nullopt; }
};

// Reads `fd` (a file, pipe or stdin); closes it on destruction when owns_fd.
std::unique_ptr<ByteSource> MakeFdSource(int fd, std::string name,
                                         bool owns_fd);
// Reads caller-owned memory, which must outlive the source.
std::unique_ptr<ByteSource> MakeMemorySource(absl::string_view data);

class TraceReader {
 public:
  // Opens `path` and reads and checks the header.
  static absl::StatusOr<std::unique_ptr<TraceReader>> Open(
      const std::string& path);
  // Reads from `source`; `name` is the file name used in errors.
  static absl::StatusOr<std::unique_ptr<TraceReader>> Open(
      std::unique_ptr<ByteSource> source, std::string name);

  TraceReader(const TraceReader&) = delete;
  TraceReader& operator=(const TraceReader&) = delete;
  ~TraceReader();

  const TraceHeader& header() const { return header_; }

  // The next block's samples, valid until the next call; an empty span once
  // the end block was read (the trace is complete); an error at the first
  // damage (see above), and again on every later call.
  absl::StatusOr<absl::Span<const Sample>> Next();

  bool complete() const { return complete_; }
  // Cumulative counters per CPU (sorted by cpu) as of the last stats block.
  const std::vector<CpuCounters>& counters() const { return counters_; }
  // Their sum over all CPUs (cpu = kUnknownCpu).
  CpuCounters total_counters() const;
  uint64_t samples_read() const { return samples_read_; }
  uint64_t blocks_read() const { return blocks_read_; }
  uint64_t offset() const { return offset_; }  // bytes consumed so far
  // Capacity of the reader's block buffers, in bytes (the memory bound).
  size_t buffer_bytes() const;

 private:
  TraceReader(std::unique_ptr<ByteSource> source, std::string name);
  absl::Status ReadHeader();
  // Reads exactly `size` bytes unless the input ends; returns bytes read.
  absl::StatusOr<size_t> ReadFully(void* data, size_t size);
  absl::Status Fail(absl::Status status);
  // "<name>: <what> <k> at offset <off> (<detail>); the <n> samples before
  // it are intact", e.g. what = "bad checksum in samples block".
  absl::Status Damage(uint64_t block_offset, absl::string_view what,
                      absl::string_view detail);

  std::unique_ptr<ByteSource> source_;
  std::string name_;
  TraceHeader header_;
  ZSTD_DCtx* dctx_ = nullptr;
  std::vector<uint8_t> stored_;  // one block's payload as stored
  std::vector<uint8_t> raw_;     // ... decompressed
  std::vector<Sample> samples_;  // ... decoded
  std::vector<CpuCounters> counters_;
  std::vector<CpuCounters> scratch_counters_;
  uint64_t samples_read_ = 0;
  uint64_t blocks_read_ = 0;
  uint64_t offset_ = 0;
  bool complete_ = false;
  absl::Status error_;
};

}  // namespace hotpage

#endif  // HOTPAGE_SAMPLER_TRACE_TRACE_READER_H_
