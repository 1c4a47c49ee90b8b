// TraceWriter: streams samples into an .hpt trace (format: trace_format.h).
//
//   HOTPAGE_ASSIGN_OR_RETURN(auto w, TraceWriter::Create("out.hpt", header));
//   for (...) HOTPAGE_RETURN_IF_ERROR(w->Append(sample));
//   HOTPAGE_RETURN_IF_ERROR(w->SetCounters({.cpu = 3, .lost = 12}));
//   HOTPAGE_RETURN_IF_ERROR(w->Flush());   // e.g. once a second
//   HOTPAGE_RETURN_IF_ERROR(w->Close());   // stats + end block; file complete
//
// Memory is constant: one block of samples (samples_per_block x 64 bytes),
// its encoding and its compressed form, about 0.9 MB at the default 4096,
// whatever the length of the trace. Append() copies into the block buffer
// and, once per block, encodes, compresses and writes it (one write(2) per
// block); it never allocates. Measured here (trace_benchmark.cc, one core):
// about 10M samples/s (650 MB/s of records) with the defaults, far above
// what a sampler produces, so the recorder can write inline.
//
// Durability: the header is written by Create(); everything Append()ed
// before the last Flush() is on disk (in the page cache) as complete,
// checksummed blocks, so a crash or SIGKILL loses only what came after it;
// the reader returns every complete block and then reports the truncation.
// Close() does not fsync.
//
// Thread-compatible: one thread at a time (the recorder's writer thread).
// After a write error, every later call that writes (Flush, Close, Append
// once the block buffer is full) returns that same error.

#ifndef HOTPAGE_SAMPLER_TRACE_TRACE_WRITER_H_
#define HOTPAGE_SAMPLER_TRACE_TRACE_WRITER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "sampler/sample.h"
#include "sampler/trace/trace_format.h"

typedef struct ZSTD_CCtx_s ZSTD_CCtx;

namespace hotpage {

// Where a TraceWriter's bytes go: a file descriptor or, in tests and
// benchmarks, memory.
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  // Writes all `size` bytes or fails; the status names the destination.
  virtual absl::Status Write(const void* data, size_t size) = 0;
  virtual absl::Status Close() = 0;
};

// Writes to `fd` (retrying short writes and EINTR); `name` is used in
// errors. Closes the fd in Close() when `owns_fd`.
std::unique_ptr<ByteSink> MakeFdSink(int fd, std::string name, bool owns_fd);

// Appends to a caller-owned string (tests, benchmarks, fuzzing).
class StringSink : public ByteSink {
 public:
  explicit StringSink(std::string* out) : out_(out) {}
  absl::Status Write(const void* data, size_t size) override;
  absl::Status Close() override { return absl::OkStatus(); }

 private:
  std::string* out_;
};

// Counts bytes and discards them (benchmarks).
class NullSink : public ByteSink {
 public:
  absl::Status Write(const void* data, size_t size) override;
  absl::Status Close() override { return absl::OkStatus(); }
  uint64_t bytes() const { return bytes_; }

 private:
  uint64_t bytes_ = 0;
};

class TraceWriter {
 public:
  struct Options {
    // Samples per block, 1..kMaxSamplesPerBlock. 4096: see trace_format.h.
    uint32_t samples_per_block = kDefaultSamplesPerBlock;
    SampleEncoding encoding = SampleEncoding::kColumnar;
    // false: blocks are stored uncompressed (debugging, tests).
    bool compress = true;
    // zstd level. On columnar blocks 3 (zstd's default) writes as fast as
    // 1 (10.6M vs 10.9M samples/s), is 2.6% smaller and reads 6% faster
    // (trace_benchmark.cc BM_Write/BM_Read).
    int zstd_level = 3;
    // A stats block goes out after this many samples blocks when a counter
    // changed (and on every Flush()), so a truncated trace keeps its counts.
    uint32_t stats_every_blocks = 16;
  };

  // Creates (truncates) `path` and writes the header.
  static absl::StatusOr<std::unique_ptr<TraceWriter>> Create(
      const std::string& path, const TraceHeader& header,
      const Options& options);
  static absl::StatusOr<std::unique_ptr<TraceWriter>> Create(
      const std::string& path, const TraceHeader& header) {
    return Create(path, header, Options());
  }
  // Writes to `sink`; `name` appears in errors.
  static absl::StatusOr<std::unique_ptr<TraceWriter>> Create(
      std::unique_ptr<ByteSink> sink, std::string name,
      const TraceHeader& header, const Options& options);

  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;
  // Closes the trace if Close() was not called (errors are then lost).
  ~TraceWriter();

  // Hot path: copies the sample; writes a block when one is full.
  absl::Status Append(const Sample& sample) {
    if (n_ == buffer_.size()) return AppendSlow(sample);
    buffer_[n_++] = sample;
    return absl::OkStatus();
  }
  absl::Status Append(absl::Span<const Sample> samples);

  // Sets the cumulative counters of one CPU (kUnknownCpu for counts not
  // attributed to a CPU). At most kMaxStatsEntries distinct CPUs.
  absl::Status SetCounters(const CpuCounters& counters);
  // Adds to them (importers that see LOST/THROTTLE records one at a time).
  absl::Status AddCounters(const CpuCounters& delta);

  // Writes the partial block and, if a counter changed, a stats block.
  absl::Status Flush();
  // Writes the partial block, then the end block with the final counters;
  // closes the sink. The trace is complete only after this succeeds.
  absl::Status Close();

  uint64_t samples_written() const { return samples_written_; }  // in blocks
  uint64_t bytes_written() const { return bytes_written_; }
  uint64_t blocks_written() const { return blocks_written_; }
  const std::string& name() const { return name_; }

 private:
  TraceWriter(std::unique_ptr<ByteSink> sink, std::string name,
              const Options& options);
  absl::Status AppendSlow(const Sample& sample);
  absl::Status WriteSamplesBlock();
  absl::Status WriteStatsBlock(BlockType type);
  absl::Status WriteBlock(BlockType type, uint8_t encoding, uint32_t count,
                          const uint8_t* raw, size_t raw_size);
  CpuCounters* FindOrAddCpu(uint32_t cpu);
  absl::Status Fail(absl::Status status);

  std::unique_ptr<ByteSink> sink_;
  std::string name_;
  Options options_;
  ZSTD_CCtx* cctx_ = nullptr;
  std::vector<Sample> buffer_;  // samples_per_block slots
  size_t n_ = 0;                // slots in use
  std::vector<uint8_t> raw_;    // encoded block
  std::vector<uint8_t> block_;  // block header + stored payload
  std::string stats_raw_;
  std::vector<CpuCounters> counters_;  // sorted by cpu
  bool counters_dirty_ = false;
  uint32_t blocks_since_stats_ = 0;
  uint64_t samples_written_ = 0;
  uint64_t bytes_written_ = 0;
  uint64_t blocks_written_ = 0;
  bool closed_ = false;
  absl::Status error_;
};

}  // namespace hotpage

#endif  // HOTPAGE_SAMPLER_TRACE_TRACE_WRITER_H_
