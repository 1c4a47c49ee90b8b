#include "sampler/trace/trace_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/base/status_macros.h"

namespace hotpage {
namespace {

class FdSource : public ByteSource {
 public:
  FdSource(int fd, std::string name, bool owns_fd)
      : fd_(fd), name_(std::move(name)), owns_fd_(owns_fd) {
    struct stat st;
    if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) {
      off_t pos = ::lseek(fd_, 0, SEEK_CUR);
      if (pos >= 0 && pos <= st.st_size)
        remaining_ = static_cast<uint64_t>(st.st_size - pos);
    }
  }
  ~FdSource() override {
    if (owns_fd_) ::close(fd_);
  }

  absl::StatusOr<size_t> Read(void* data, size_t size) override {
    char* p = static_cast<char*>(data);
    size_t done = 0;
    while (done < size) {
      ssize_t n = ::read(fd_, p + done, size - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        return ErrnoStatus(errno, absl::StrCat("read ", name_));
      }
      if (n == 0) break;
      done += static_cast<size_t>(n);
    }
    if (remaining_) *remaining_ -= std::min<uint64_t>(*remaining_, done);
    return done;
  }

  std::optional<uint64_t> Remaining() const override { return remaining_; }

 private:
  int fd_;
  std::string name_;
  bool owns_fd_;
  // Known for regular files. A file that grows while being read (being
  // written) only makes this an underestimate: the truncation check then
  // reports what was there when the reader looked, which is the truth.
  std::optional<uint64_t> remaining_;
};

class MemorySource : public ByteSource {
 public:
  explicit MemorySource(absl::string_view data) : data_(data) {}
  absl::StatusOr<size_t> Read(void* out, size_t size) override {
    const size_t n = std::min(size, data_.size());
    if (n == 0) return n;  // out may be null when size is 0
    std::memcpy(out, data_.data(), n);
    data_.remove_prefix(n);
    return n;
  }
  std::optional<uint64_t> Remaining() const override { return data_.size(); }

 private:
  absl::string_view data_;
};

// Grows a block buffer to hold n elements. Capacity is rounded up to 16 KiB
// so that slowly growing blocks do not reallocate each time, and never
// doubled (as vector growth would), so it stays within 16 KiB of the
// largest block seen.
template <typename T>
void GrowTo(std::vector<T>* v, size_t n) {
  if (v->size() >= n) return;
  constexpr size_t kStep = (16 << 10) / sizeof(T);
  if (v->capacity() < n) v->reserve((n + kStep - 1) / kStep * kStep);
  v->resize(n);
}

}  // namespace

std::unique_ptr<ByteSource> MakeFdSource(int fd, std::string name,
                                         bool owns_fd) {
  return std::make_unique<FdSource>(fd, std::move(name), owns_fd);
}

std::unique_ptr<ByteSource> MakeMemorySource(absl::string_view data) {
  return std::make_unique<MemorySource>(data);
}

absl::StatusOr<std::unique_ptr<TraceReader>> TraceReader::Open(
    const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, absl::StrCat("open ", path));
  return Open(MakeFdSource(fd, path, /*owns_fd=*/true), path);
}

absl::StatusOr<std::unique_ptr<TraceReader>> TraceReader::Open(
    std::unique_ptr<ByteSource> source, std::string name) {
  std::unique_ptr<TraceReader> r(
      new TraceReader(std::move(source), std::move(name)));
  HOTPAGE_RETURN_IF_ERROR(r->ReadHeader());
  return r;
}

TraceReader::TraceReader(std::unique_ptr<ByteSource> source, std::string name)
    : source_(std::move(source)), name_(std::move(name)) {}

TraceReader::~TraceReader() { ZSTD_freeDCtx(dctx_); }

absl::StatusOr<size_t> TraceReader::ReadFully(void* data, size_t size) {
  absl::StatusOr<size_t> n = source_->Read(data, size);
  if (n.ok()) offset_ += *n;
  return n;
}

absl::Status TraceReader::ReadHeader() {
  uint8_t pre_bytes[kTracePreambleBytes] = {};
  HOTPAGE_ASSIGN_OR_RETURN(size_t n, ReadFully(pre_bytes, sizeof(pre_bytes)));
  if (n == 0) {
    return absl::DataLossError(
        absl::StrCat(name_, ": empty file, not an hpt trace"));
  }
  trace_internal::Preamble pre;
  const bool magic_ok = n >= sizeof(kTraceMagic) &&
                        trace_internal::DecodePreamble(pre_bytes, &pre);
  if (!magic_ok) {
    if (n >= 8 && std::memcmp(pre_bytes, "PERFILE2", 8) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          name_,
          ": this is a perf.data file, not an hpt trace; convert it with "
          "'hotpage import ",
          name_, " -o FILE.hpt'"));
    }
    if (std::memcmp(pre_bytes, kTraceMagic, std::min(n, sizeof(kTraceMagic))) !=
        0) {
      return absl::InvalidArgumentError(
          absl::StrCat(name_, ": not an hpt trace (bad magic at offset 0)"));
    }
  }
  if (n < kTracePreambleBytes) {
    return absl::DataLossError(absl::StrCat(
        name_, ": truncated header: the file has ", n,
        " bytes, the header preamble alone is ", kTracePreambleBytes));
  }
  const std::string version =
      absl::StrCat(pre.version_major, ".", pre.version_minor);
  if (pre.body_size > kMaxHeaderBodyBytes) {
    if (pre.version_major > kTraceVersionMajor) {
      return absl::UnimplementedError(
          absl::StrCat(name_, ": hpt format version ", version,
                       " is newer than this hotpage reads (",
                       kTraceVersionMajor, ".x); use a newer hotpage"));
    }
    return absl::DataLossError(
        absl::StrCat(name_, ": bad header: body size ", pre.body_size,
                     " exceeds the limit of ", kMaxHeaderBodyBytes,
                     " bytes (corrupt file)"));
  }
  if (auto left = source_->Remaining(); left && *left < pre.body_size) {
    return absl::DataLossError(absl::StrCat(
        name_, ": truncated header: it needs ", pre.body_size,
        " bytes after offset ", offset_, ", the file has ", *left));
  }
  std::vector<uint8_t> body(pre.body_size);
  HOTPAGE_ASSIGN_OR_RETURN(n, ReadFully(body.data(), body.size()));
  if (n < body.size()) {
    return absl::DataLossError(absl::StrCat(
        name_, ": truncated header: it needs ", pre.body_size,
        " bytes after offset ", kTracePreambleBytes, ", the file has ", n));
  }
  const uint32_t crc =
      trace_internal::HeaderCrc(pre_bytes, body.data(), body.size());
  if (crc != pre.crc) {
    return absl::DataLossError(
        absl::StrFormat("%s: bad header checksum (stored crc32c 0x%08x, "
                        "computed 0x%08x): the file is "
                        "corrupt or not an hpt trace",
                        name_, pre.crc, crc));
  }
  if (pre.version_major == 0) {
    return absl::DataLossError(
        absl::StrCat(name_, ": bad header: invalid format version ", version));
  }
  if (pre.version_major > kTraceVersionMajor) {
    return absl::UnimplementedError(
        absl::StrCat(name_, ": hpt format version ", version,
                     " is newer than this hotpage reads (", kTraceVersionMajor,
                     ".x); use a newer hotpage"));
  }
  if (const char* err =
          trace_internal::DecodeHeaderBody(pre, body.data(), &header_)) {
    return absl::DataLossError(
        absl::StrCat(name_, ": bad header (version ", version, "): ", err));
  }
  return absl::OkStatus();
}

absl::Status TraceReader::Fail(absl::Status status) {
  error_ = std::move(status);
  return error_;
}

absl::Status TraceReader::Damage(uint64_t block_offset, absl::string_view what,
                                 absl::string_view detail) {
  return Fail(absl::DataLossError(absl::StrCat(
      name_, ": ", what, " ", blocks_read_, " at offset ", block_offset,
      detail.empty() ? "" : absl::StrCat(" (", detail, ")"), "; the ",
      samples_read_, " samples before it are intact")));
}

absl::StatusOr<absl::Span<const Sample>> TraceReader::Next() {
  if (!error_.ok()) return error_;
  if (complete_) return absl::Span<const Sample>();
  while (true) {
    const uint64_t at = offset_;
    uint8_t hb[kBlockHeaderBytes];
    absl::StatusOr<size_t> n = ReadFully(hb, sizeof(hb));
    if (!n.ok()) return Fail(n.status());
    if (*n == 0) {
      return Fail(absl::DataLossError(
          absl::StrCat(name_, ": truncated: the trace ends at offset ", at,
                       " after ", blocks_read_, " blocks and ", samples_read_,
                       " samples without its end block (the recording was "
                       "interrupted or the file "
                       "was cut short); those samples are intact")));
    }
    if (*n < sizeof(hb)) {
      return Damage(at, "truncated header of block",
                    absl::StrCat("only ", *n, " of its ", kBlockHeaderBytes,
                                 " bytes remain"));
    }
    BlockHeader h;
    if (!trace_internal::UnpackBlockHeader(hb, &h)) {
      return Damage(at, "bad magic in block",
                    "expected \"HPBK\"; the file is corrupt there");
    }
    const std::string type_name = trace_internal::BlockTypeName(h.type);
    const std::string block = absl::StrCat(type_name, " block");
    if (h.stored_size > kMaxBlockRawBytes) {
      return Damage(
          at, absl::StrCat("bad ", block),
          absl::StrCat("stored size ", h.stored_size, " exceeds the limit of ",
                       kMaxBlockRawBytes, "; the file is corrupt there"));
    }
    if (auto left = source_->Remaining(); left && *left < h.stored_size) {
      return Damage(at, absl::StrCat("truncated ", block),
                    absl::StrCat("its payload is ", h.stored_size,
                                 " bytes, only ", *left, " remain"));
    }
    GrowTo(&stored_, std::max<size_t>(h.stored_size, 1));  // data() never null
    n = ReadFully(stored_.data(), h.stored_size);
    if (!n.ok()) return Fail(n.status());
    if (*n < h.stored_size) {
      return Damage(at, absl::StrCat("truncated ", block),
                    absl::StrCat("its payload is ", h.stored_size,
                                 " bytes, only ", *n, " remain"));
    }
    const uint32_t crc =
        trace_internal::BlockCrc(hb, stored_.data(), h.stored_size);
    if (crc != h.crc) {
      return Damage(
          at, absl::StrCat("bad checksum in ", block),
          absl::StrFormat("stored crc32c 0x%08x, computed 0x%08x; the file is "
                          "corrupt there",
                          h.crc, crc));
    }
    // The checksum matched, so these fields are what a writer wrote: a
    // failure below is a writer bug or a deliberately crafted file.
    const std::string bad = absl::StrCat("bad ", block);
    if (h.raw_size > kMaxBlockRawBytes || h.stored_size > h.raw_size) {
      return Damage(at, bad,
                    absl::StrCat("sizes stored ", h.stored_size, " raw ",
                                 h.raw_size, " out of bounds"));
    }
    if ((h.flags & ~kBlockFlagSkippable) != 0) {
      return Damage(at, bad,
                    absl::StrCat("unknown flags ", static_cast<int>(h.flags)));
    }
    const auto type = static_cast<BlockType>(h.type);
    if (type != BlockType::kSamples && type != BlockType::kStats &&
        type != BlockType::kEnd) {
      if ((h.flags & kBlockFlagSkippable) !=
          0) {  // a newer writer's optional block
        ++blocks_read_;
        continue;
      }
      return Damage(at, absl::StrCat("unsupported ", block),
                    "written by a newer hotpage?");
    }
    const uint8_t* raw = stored_.data();
    if (h.codec == static_cast<uint8_t>(BlockCodec::kZstd)) {
      GrowTo(&raw_, std::max<size_t>(h.raw_size, 1));
      if (dctx_ == nullptr && (dctx_ = ZSTD_createDCtx()) == nullptr) {
        return Fail(absl::ResourceExhaustedError("ZSTD_createDCtx failed"));
      }
      const size_t z = ZSTD_decompressDCtx(dctx_, raw_.data(), h.raw_size,
                                           stored_.data(), h.stored_size);
      if (ZSTD_isError(z)) {
        return Damage(
            at, bad,
            absl::StrCat("zstd payload error: ", ZSTD_getErrorName(z)));
      }
      if (z != h.raw_size) {
        return Damage(at, bad,
                      absl::StrCat("zstd payload decompresses to ", z,
                                   " bytes, expected ", h.raw_size));
      }
      raw = raw_.data();
    } else if (h.codec != static_cast<uint8_t>(BlockCodec::kStored) ||
               h.stored_size != h.raw_size) {
      return Damage(at, bad,
                    absl::StrCat("unknown codec ", static_cast<int>(h.codec),
                                 " or size mismatch"));
    }

    if (type == BlockType::kSamples) {
      if (h.count == 0 || h.count > kMaxSamplesPerBlock) {
        return Damage(at, bad,
                      absl::StrCat("count ", h.count, " outside 1..",
                                   kMaxSamplesPerBlock));
      }
      if (h.encoding != static_cast<uint8_t>(SampleEncoding::kRaw) &&
          h.encoding != static_cast<uint8_t>(SampleEncoding::kColumnar)) {
        return Damage(
            at, bad,
            absl::StrCat("unknown encoding ", static_cast<int>(h.encoding)));
      }
      GrowTo(&samples_, h.count);
      if (const char* err = trace_internal::DecodeSamples(
              raw, h.raw_size, h.count, static_cast<SampleEncoding>(h.encoding),
              samples_.data())) {
        return Damage(at, bad, err);
      }
      ++blocks_read_;
      samples_read_ += h.count;
      return absl::Span<const Sample>(samples_.data(), h.count);
    }

    // Stats or end.
    uint64_t samples_before = 0;
    if (const char* err = trace_internal::DecodeStats(
            raw, h.raw_size, h.count, &samples_before, &scratch_counters_)) {
      return Damage(at, bad, err);
    }
    if (samples_before != samples_read_) {
      return Damage(
          at, bad,
          absl::StrCat("it counts ", samples_before,
                       " samples before it, the file has ", samples_read_));
    }
    counters_.swap(scratch_counters_);
    ++blocks_read_;
    if (type == BlockType::kEnd) {
      uint8_t extra;
      n = ReadFully(&extra, 1);
      if (!n.ok()) return Fail(n.status());
      if (*n != 0) {
        return Fail(absl::DataLossError(absl::StrCat(
            name_, ": unexpected data after the end block, at offset ",
            offset_ - 1, "; the ", samples_read_,
            " samples before it are intact")));
      }
      complete_ = true;
      return absl::Span<const Sample>();
    }
  }
}

CpuCounters TraceReader::total_counters() const {
  CpuCounters t;
  t.cpu = kUnknownCpu;
  for (const CpuCounters& c : counters_) {
    t.lost += c.lost;
    t.throttled += c.throttled;
    t.unthrottled += c.unthrottled;
    t.skipped += c.skipped;
  }
  return t;
}

size_t TraceReader::buffer_bytes() const {
  return stored_.capacity() + raw_.capacity() +
         samples_.capacity() * sizeof(Sample) +
         (counters_.capacity() + scratch_counters_.capacity()) *
             sizeof(CpuCounters);
}

}  // namespace hotpage
