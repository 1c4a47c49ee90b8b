#include "sampler/trace/trace_writer.h"

#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tools/base/status_macros.h"

namespace hotpage {
namespace {

class FdSink : public ByteSink {
 public:
  FdSink(int fd, std::string name, bool owns_fd)
      : fd_(fd), name_(std::move(name)), owns_fd_(owns_fd) {}
  ~FdSink() override {
    if (owns_fd_ && fd_ >= 0) ::close(fd_);
  }

  absl::Status Write(const void* data, size_t size) override {
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
      ssize_t n = ::write(fd_, p, size);
      if (n < 0) {
        if (errno == EINTR) continue;
        return ErrnoStatus(errno, absl::StrCat("write ", name_));
      }
      p += n;
      size -= static_cast<size_t>(n);
    }
    return absl::OkStatus();
  }

  absl::Status Close() override {
    if (!owns_fd_ || fd_ < 0) return absl::OkStatus();
    int fd = std::exchange(fd_, -1);
    // close(2) reports deferred write errors (NFS, quota): do not drop them.
    if (::close(fd) != 0 && errno != EINTR) {
      return ErrnoStatus(errno, absl::StrCat("close ", name_));
    }
    return absl::OkStatus();
  }

 private:
  int fd_;
  std::string name_;
  bool owns_fd_;
};

}  // namespace

std::unique_ptr<ByteSink> MakeFdSink(int fd, std::string name, bool owns_fd) {
  return std::make_unique<FdSink>(fd, std::move(name), owns_fd);
}

absl::Status StringSink::Write(const void* data, size_t size) {
  out_->append(static_cast<const char*>(data), size);
  return absl::OkStatus();
}

absl::Status NullSink::Write(const void* data, size_t size) {
  bytes_ += size;
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<TraceWriter>> TraceWriter::Create(
    const std::string& path, const TraceHeader& header,
    const Options& options) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus(errno, absl::StrCat("create ", path));
  return Create(MakeFdSink(fd, path, /*owns_fd=*/true), path, header, options);
}

absl::StatusOr<std::unique_ptr<TraceWriter>> TraceWriter::Create(
    std::unique_ptr<ByteSink> sink, std::string name, const TraceHeader& header,
    const Options& options) {
  if (options.samples_per_block < 1 ||
      options.samples_per_block > kMaxSamplesPerBlock) {
    return absl::InvalidArgumentError(absl::StrCat(
        "trace ", name, ": samples_per_block ", options.samples_per_block,
        " is outside 1..", kMaxSamplesPerBlock));
  }
  if (options.encoding != SampleEncoding::kRaw &&
      options.encoding != SampleEncoding::kColumnar) {
    return absl::InvalidArgumentError(
        absl::StrCat("trace ", name, ": unknown sample encoding"));
  }
  if (options.compress && (options.zstd_level < ZSTD_minCLevel() ||
                           options.zstd_level > ZSTD_maxCLevel())) {
    return absl::InvalidArgumentError(
        absl::StrCat("trace ", name, ": zstd level ", options.zstd_level,
                     " is outside ", ZSTD_minCLevel(), "..", ZSTD_maxCLevel()));
  }
  std::string bytes, error;
  if (!trace_internal::EncodeHeader(header, &bytes, &error)) {
    return absl::InvalidArgumentError(
        absl::StrCat("trace ", name, ": ", error));
  }
  std::unique_ptr<TraceWriter> w(
      new TraceWriter(std::move(sink), std::move(name), options));
  if (options.compress) {
    w->cctx_ = ZSTD_createCCtx();
    if (w->cctx_ == nullptr)
      return absl::ResourceExhaustedError("ZSTD_createCCtx failed");
    ZSTD_CCtx_setParameter(w->cctx_, ZSTD_c_compressionLevel,
                           options.zstd_level);
  }
  HOTPAGE_RETURN_IF_ERROR(w->sink_->Write(bytes.data(), bytes.size()));
  w->bytes_written_ = bytes.size();
  return w;
}

TraceWriter::TraceWriter(std::unique_ptr<ByteSink> sink, std::string name,
                         const Options& options)
    : sink_(std::move(sink)), name_(std::move(name)), options_(options) {
  buffer_.resize(options.samples_per_block);
  const size_t raw_max = trace_internal::MaxEncodedSamplesBytes(
      options.samples_per_block, options.encoding);
  raw_.resize(raw_max);
  block_.resize(kBlockHeaderBytes + ZSTD_compressBound(raw_max));
}

TraceWriter::~TraceWriter() {
  if (!closed_) (void)Close();
  ZSTD_freeCCtx(cctx_);
}

absl::Status TraceWriter::Fail(absl::Status status) {
  if (error_.ok()) error_ = std::move(status);
  return error_;
}

absl::Status TraceWriter::AppendSlow(const Sample& sample) {
  HOTPAGE_RETURN_IF_ERROR(WriteSamplesBlock());
  buffer_[n_++] = sample;
  return absl::OkStatus();
}

absl::Status TraceWriter::Append(absl::Span<const Sample> samples) {
  while (!samples.empty()) {
    if (n_ == buffer_.size()) HOTPAGE_RETURN_IF_ERROR(WriteSamplesBlock());
    const size_t k = std::min(samples.size(), buffer_.size() - n_);
    std::memcpy(static_cast<void*>(buffer_.data() + n_), samples.data(),
                k * sizeof(Sample));
    n_ += k;
    samples.remove_prefix(k);
  }
  return absl::OkStatus();
}

absl::Status TraceWriter::WriteSamplesBlock() {
  if (!error_.ok()) return error_;
  if (closed_)
    return absl::FailedPreconditionError(
        absl::StrCat("trace ", name_, " is closed"));
  if (n_ == 0) return absl::OkStatus();
  const size_t raw_size = trace_internal::EncodeSamples(
      buffer_.data(), n_, options_.encoding, raw_.data());
  HOTPAGE_RETURN_IF_ERROR(
      WriteBlock(BlockType::kSamples, static_cast<uint8_t>(options_.encoding),
                 static_cast<uint32_t>(n_), raw_.data(), raw_size));
  samples_written_ += n_;
  n_ = 0;
  if (++blocks_since_stats_ >= options_.stats_every_blocks && counters_dirty_) {
    HOTPAGE_RETURN_IF_ERROR(WriteStatsBlock(BlockType::kStats));
  }
  return absl::OkStatus();
}

absl::Status TraceWriter::WriteStatsBlock(BlockType type) {
  trace_internal::EncodeStats(samples_written_, counters_, &stats_raw_);
  HOTPAGE_RETURN_IF_ERROR(WriteBlock(
      type, 0, static_cast<uint32_t>(counters_.size()),
      reinterpret_cast<const uint8_t*>(stats_raw_.data()), stats_raw_.size()));
  counters_dirty_ = false;
  blocks_since_stats_ = 0;
  return absl::OkStatus();
}

absl::Status TraceWriter::WriteBlock(BlockType type, uint8_t encoding,
                                     uint32_t count, const uint8_t* raw,
                                     size_t raw_size) {
  const size_t bound = kBlockHeaderBytes + ZSTD_compressBound(raw_size);
  if (block_.size() < bound) block_.resize(bound);  // stats of many CPUs only
  uint8_t* payload = block_.data() + kBlockHeaderBytes;
  BlockHeader h;
  h.type = static_cast<uint8_t>(type);
  h.encoding = encoding;
  h.count = count;
  h.raw_size = static_cast<uint32_t>(raw_size);
  h.codec = static_cast<uint8_t>(BlockCodec::kStored);
  h.stored_size = h.raw_size;
  if (cctx_ != nullptr) {
    size_t z = ZSTD_compress2(cctx_, payload, block_.size() - kBlockHeaderBytes,
                              raw, raw_size);
    if (ZSTD_isError(z)) {
      return Fail(absl::InternalError(
          absl::StrCat("trace ", name_, ": zstd: ", ZSTD_getErrorName(z))));
    }
    // Keep zstd's output only when it is smaller (the format requires
    // stored_size <= raw_size, which bounds the reader's buffers).
    if (z < raw_size) {
      h.codec = static_cast<uint8_t>(BlockCodec::kZstd);
      h.stored_size = static_cast<uint32_t>(z);
    }
  }
  if (h.codec == static_cast<uint8_t>(BlockCodec::kStored))
    std::memcpy(payload, raw, raw_size);
  trace_internal::PackBlockHeader(h, block_.data());
  h.crc = trace_internal::BlockCrc(block_.data(), payload, h.stored_size);
  trace_internal::PackBlockHeader(h, block_.data());
  absl::Status st =
      sink_->Write(block_.data(), kBlockHeaderBytes + h.stored_size);
  if (!st.ok()) return Fail(std::move(st));
  bytes_written_ += kBlockHeaderBytes + h.stored_size;
  ++blocks_written_;
  return absl::OkStatus();
}

CpuCounters* TraceWriter::FindOrAddCpu(uint32_t cpu) {
  auto it = std::lower_bound(
      counters_.begin(), counters_.end(), cpu,
      [](const CpuCounters& c, uint32_t v) { return c.cpu < v; });
  if (it != counters_.end() && it->cpu == cpu) return &*it;
  if (counters_.size() >= kMaxStatsEntries) return nullptr;
  CpuCounters fresh;
  fresh.cpu = cpu;
  return &*counters_.insert(it, fresh);
}

absl::Status TraceWriter::SetCounters(const CpuCounters& counters) {
  if (!error_.ok()) return error_;
  CpuCounters* c = FindOrAddCpu(counters.cpu);
  if (c == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("trace ", name_, ": counters for more than ",
                     kMaxStatsEntries, " CPUs"));
  }
  if (!(*c == counters)) {
    *c = counters;
    counters_dirty_ = true;
  }
  return absl::OkStatus();
}

absl::Status TraceWriter::AddCounters(const CpuCounters& delta) {
  if (!error_.ok()) return error_;
  CpuCounters* c = FindOrAddCpu(delta.cpu);
  if (c == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("trace ", name_, ": counters for more than ",
                     kMaxStatsEntries, " CPUs"));
  }
  c->lost += delta.lost;
  c->throttled += delta.throttled;
  c->unthrottled += delta.unthrottled;
  c->skipped += delta.skipped;
  counters_dirty_ = true;
  return absl::OkStatus();
}

absl::Status TraceWriter::Flush() {
  HOTPAGE_RETURN_IF_ERROR(WriteSamplesBlock());
  if (counters_dirty_)
    HOTPAGE_RETURN_IF_ERROR(WriteStatsBlock(BlockType::kStats));
  return absl::OkStatus();
}

absl::Status TraceWriter::Close() {
  if (closed_) return error_;
  HOTPAGE_RETURN_IF_ERROR(WriteSamplesBlock());
  HOTPAGE_RETURN_IF_ERROR(WriteStatsBlock(BlockType::kEnd));
  closed_ = true;
  absl::Status st = sink_->Close();
  if (!st.ok()) return Fail(std::move(st));
  return error_;
}

}  // namespace hotpage
