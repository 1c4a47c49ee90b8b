#include "tools/simulate/sim_trace.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "sampler/perf/perf_data_reader.h"
#include "sampler/trace/trace_format.h"
#include "sampler/trace/trace_reader.h"

namespace hotpage {
namespace {

class HptSource : public TraceSource {
 public:
  explicit HptSource(std::unique_ptr<TraceReader> r) : reader_(std::move(r)) {
    format_ = "hpt";
  }
  absl::StatusOr<absl::Span<const Sample>> Next() override {
    return reader_->Next();
  }
  uint64_t bytes_read() const override { return reader_->offset(); }
  void set_total(uint64_t b) { total_bytes_ = b; }

 private:
  std::unique_ptr<TraceReader> reader_;
};

class PerfSource : public TraceSource {
 public:
  explicit PerfSource(PerfDataReader r) : reader_(std::move(r)) {
    format_ = "perf.data";
    buf_.resize(4096);
    origins_.resize(4096);
  }
  absl::StatusOr<absl::Span<const Sample>> Next() override {
    const size_t n = reader_.Read(buf_.data(), buf_.size(), origins_.data());
    if (n == 0) {
      if (!reader_.status().ok()) return reader_.status();
      offset_ = total_bytes_;
      return absl::Span<const Sample>();
    }
    offset_ = origins_[n - 1].file_offset;
    return absl::MakeConstSpan(buf_.data(), n);
  }
  uint64_t bytes_read() const override { return offset_; }
  void set_total(uint64_t b) { total_bytes_ = b; }
  std::string EmptyReason() const override {
    const PerfDataStats& st = reader_.stats();
    std::string why;
    if (st.skipped_no_addr > 0) {
      absl::StrAppend(&why, st.skipped_no_addr,
                      " samples had no data address (record with `perf "
                      "record -d`, on a memory-access event: `hotpage "
                      "record` or `perf mem record`)");
    }
    if (st.skipped_unknown_id > 0) {
      absl::StrAppend(&why, why.empty() ? "" : "; ", st.skipped_unknown_id,
                      " samples named no event of the file");
    }
    return why;
  }

 private:
  PerfDataReader reader_;
  std::vector<Sample> buf_;
  std::vector<PerfSampleOrigin> origins_;
  uint64_t offset_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<TraceSource>> TraceSource::Open(
    const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT)
      return absl::NotFoundError(absl::StrCat(path, ": no such file"));
    return absl::PermissionDeniedError(
        absl::StrCat(path, ": cannot open: ", std::strerror(err)));
  }
  struct stat st;
  char magic[8] = {};
  const bool stat_ok = ::fstat(fd, &st) == 0;
  const ssize_t got = ::pread(fd, magic, sizeof(magic), 0);
  ::close(fd);
  if (!stat_ok || !S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a regular file"));
  }
  if (got == 8 && std::memcmp(magic, kTraceMagic, 8) == 0) {
    absl::StatusOr<std::unique_ptr<TraceReader>> r = TraceReader::Open(path);
    if (!r.ok()) return r.status();
    auto src = std::make_unique<HptSource>(std::move(*r));
    src->set_total(static_cast<uint64_t>(st.st_size));
    return std::unique_ptr<TraceSource>(std::move(src));
  }
  if (got == 8 && std::memcmp(magic, "PERFILE2", 8) == 0) {
    absl::StatusOr<PerfDataReader> r = PerfDataReader::Open(path);
    if (!r.ok()) return r.status();
    auto src = std::make_unique<PerfSource>(std::move(*r));
    src->set_total(static_cast<uint64_t>(st.st_size));
    return std::unique_ptr<TraceSource>(std::move(src));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      path,
      ": neither an .hpt trace (hotpage record / import) nor a perf.data file "
      "(perf record -d)",
      got < 8 ? absl::StrCat(" (only ", got < 0 ? 0 : got, " bytes)") : ""));
}

// --- SampleOrderer ----------------------------------------------------------

SampleOrderer::SampleOrderer(uint64_t window_ns, size_t max_held)
    : window_ns_(window_ns),
      max_held_(std::max<size_t>(max_held, 2)),
      buffer_(std::numeric_limits<size_t>::max()) {
}  // the bound is ours (below)

void SampleOrderer::Push(
    absl::Span<const Sample> samples,
    const std::function<void(absl::Span<const Sample>)>& out) {
  // Runs of the input go to the buffer as they are, cut where a late sample
  // needs its time changed and where the held count reaches the release
  // trigger, so releases happen after the same sample as when each was
  // handled alone.
  auto never = [](absl::Span<const Sample>) {
  };                 // the buffer has no bound of its own
  size_t begin = 0;  // the first sample not yet in the buffer
  for (size_t i = 0; i < samples.size(); ++i) {
    uint64_t t = samples[i].time_ns;
    if (t < max_seen_ns_) ++out_of_order_;
    if (released_any_ && t < last_released_ns_) {
      ++late_;
      buffer_.Add(samples.subspan(begin, i - begin), never);
      Sample late = samples[i];
      late.time_ns = t = last_released_ns_;
      buffer_.Add(absl::MakeConstSpan(&late, 1), never);
      begin = i + 1;
    }
    max_seen_ns_ = std::max(max_seen_ns_, t);
    // Release when the held samples doubled since the last release (each
    // release moves what stays, so this keeps the cost per sample bounded)
    // or reached the cap.
    const size_t trigger =
        std::min(max_held_, std::max<size_t>(65536, 2 * kept_after_release_));
    if (buffer_.buffered() + (i + 1 - begin) >= trigger) {
      buffer_.Add(samples.subspan(begin, i + 1 - begin), never);
      begin = i + 1;
      ReleaseDue(out);
    }
  }
  buffer_.Add(samples.subspan(begin), never);
}

void SampleOrderer::ReleaseDue(
    const std::function<void(absl::Span<const Sample>)>& out) {
  auto sink = [&](absl::Span<const Sample> s) {
    released_any_ = true;
    last_released_ns_ = s.back().time_ns;
    out(s);
  };
  const size_t held = buffer_.buffered();
  // Everything at or before the window's start, and at the cap at least the
  // oldest half.
  const uint64_t cut_ns =
      max_seen_ns_ > window_ns_ ? max_seen_ns_ - window_ns_ : 0;
  if (cut_ns == std::numeric_limits<uint64_t>::max()) {
    buffer_.Drain(sink);
  } else {
    buffer_.ReleaseAtLeast(cut_ns + 1, held >= max_held_ ? held / 2 : 0, sink);
  }
  kept_after_release_ = buffer_.buffered();
}

void SampleOrderer::Finish(
    const std::function<void(absl::Span<const Sample>)>& out) {
  buffer_.Drain([&](absl::Span<const Sample> s) {
    released_any_ = true;
    last_released_ns_ = s.back().time_ns;
    out(s);
  });
  kept_after_release_ = 0;
}

// --- Survey
// -------------------------------------------------------------------

uint32_t TraceSurvey::busiest_pid() const {
  uint32_t best = 0;
  uint64_t most = 0;
  for (const auto& [pid, s] : pids) {
    if (s.samples > most) {
      most = s.samples;
      best = pid;
    }
  }
  return best;
}

absl::StatusOr<TraceSurvey> SurveyTrace(
    const std::string& path,
    const std::function<void(uint64_t, uint64_t)>& progress) {
  absl::StatusOr<std::unique_ptr<TraceSource>> src = TraceSource::Open(path);
  if (!src.ok()) return src.status();
  TraceSurvey survey;
  survey.format = (*src)->format();
  // (pid, page) pairs: the footprint of every process at once.
  absl::flat_hash_set<std::pair<uint32_t, uint64_t>> pages;
  uint64_t max_seen = 0;
  uint64_t batches = 0;
  for (;;) {
    absl::StatusOr<absl::Span<const Sample>> b = (*src)->Next();
    if (!b.ok()) return b.status();
    if (b->empty()) break;
    for (const Sample& s : *b) {
      PidSurvey& p = survey.pids[s.pid];
      ++p.samples;
      p.first_ns = std::min(p.first_ns, s.time_ns);
      p.last_ns = std::max(p.last_ns, s.time_ns);
      if (pages.insert({s.pid, s.vaddr / 4096}).second) ++p.footprint_pages;
      if (s.time_ns < max_seen) ++survey.out_of_order;
      max_seen = std::max(max_seen, s.time_ns);
    }
    survey.samples += b->size();
    if (progress && (++batches & 15) == 0)
      progress((*src)->bytes_read(), (*src)->total_bytes());
  }
  if (progress) progress((*src)->total_bytes(), (*src)->total_bytes());
  if (survey.samples == 0) {
    const std::string why = (*src)->EmptyReason();
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": the trace holds no samples",
                     why.empty() ? "" : absl::StrCat(": ", why)));
  }
  return survey;
}

}  // namespace hotpage
