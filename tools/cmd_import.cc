// `hotpage import`: converts a perf.data file (file or pipe mode, -z
// compressed, any number of events) into a .hpt trace.

#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "sampler/perf/perf_data_reader.h"
#include "sampler/trace/trace_format.h"
#include "sampler/trace/trace_writer.h"
#include "tools/base/clock.h"
#include "tools/cli.h"

namespace hotpage {
namespace {

CpuCounters ToTrace(uint32_t cpu, const PerfCpuCounts& c) {
  CpuCounters out;
  out.cpu = cpu;
  out.lost = c.lost + c.lost_samples;
  out.throttled = c.throttle;
  out.unthrottled = c.unthrottle;
  out.skipped = c.skipped_no_addr;
  return out;
}

// The trace header's source: the sampler that produced the samples, as
// `hotpage record` writes it. A recording of the software page-fault events
// only is a page-fault trace ("pagefault", what `hotpage record --source
// pagefault` writes; its samples are kPageFault, PerfEventSampleSource); any
// other event, alone or mixed in, makes it "perf-data" (the samples carry
// their own source either way). The provenance, "imported from FILE" with
// the event names, is in event_config.
std::string ImportedTraceSource(const std::vector<PerfEventInfo>& events) {
  bool all_faults = !events.empty();
  for (const PerfEventInfo& e : events) {
    all_faults &= e.source == SampleSource::kPageFault;
  }
  return SampleSourceName(all_faults ? SampleSource::kPageFault
                                     : SampleSource::kPerfData);
}

}  // namespace

int RunImport(const std::vector<std::string>& args) {
  const std::vector<FlagSpec> specs = {
      {"output", "FILE", "write the trace here (required)", false, 'o'},
      {"quiet", "", "no progress line"},
  };
  const char* synopsis = "PERF_DATA -o FILE.hpt";
  const char* description =
      "Converts a perf.data file written by Linux `perf record` (file or pipe\n"
      "mode, -z compressed, several events, old and new attr sizes) into a "
      ".hpt\n"
      "trace. Samples without a data address are counted and skipped (record\n"
      "with -d); LOST, LOST_SAMPLES, THROTTLE and UNTHROTTLE are carried over "
      "as\n"
      "per-CPU counters. Unknown record types are skipped. A damaged file "
      "keeps\n"
      "everything before the damage and exits 1 naming the byte offset.\n"
      "Samples of the software page-fault events (-e page-faults, "
      "minor-faults,\n"
      "major-faults) are page-fault samples (source pagefault), not "
      "priced as\n"
      "access counts; the header says pagefault when every event is one.";
  auto usage_error = [](absl::string_view msg) {
    std::cerr << "hotpage import: " << msg
              << "\nTry 'hotpage import --help'.\n";
    return kExitUsage;
  };
  absl::StatusOr<ParsedFlags> flags = ParseFlags(args, specs);
  if (!flags.ok()) return usage_error(flags.status().message());
  if (flags->Has("help")) {
    std::cout << FormatUsage("import", synopsis, description, specs);
    return kExitOk;
  }
  if (flags->positional().size() != 1)
    return usage_error("give exactly one perf.data file");
  std::optional<std::string> out_path = flags->Get("output");
  if (!out_path) return usage_error("-o FILE.hpt is required");
  const std::string& in_path = flags->positional()[0];
  if (in_path == *out_path)
    return usage_error("the input and the output are the same file");

  auto fail = [](const absl::Status& s) {
    std::cerr << "hotpage import: " << s.message() << "\n";
    return kExitFailure;
  };
  absl::StatusOr<PerfDataReader> reader = PerfDataReader::Open(in_path);
  if (!reader.ok()) return fail(reader.status());

  // The first sample is read before the header is written: a pipe-mode
  // file's attrs are records ahead of its first sample (perf writes them
  // all there), so only then are its events known.
  Sample first;
  const bool have_first = reader->Next(&first);
  TraceHeader header;
  header.source = ImportedTraceSource(reader->stats().events);
  std::vector<std::string> names;
  for (const PerfEventInfo& e : reader->stats().events) {
    names.push_back(e.sample_period
                        ? absl::StrCat(e.name, " period=", e.sample_period)
                        : absl::StrCat(e.name, " freq=", e.sample_freq));
    if (header.sample_period == 0) header.sample_period = e.sample_period;
  }
  header.event_config =
      absl::StrCat("imported from ", in_path, ": ", absl::StrJoin(names, ", "));
  // The machine the file was recorded on is unknown: no topology snapshot.
  TraceWriter::Options wopt;
  wopt.samples_per_block = 16384;  // a converter favours size (trace_format.h)
  absl::StatusOr<std::unique_ptr<TraceWriter>> writer =
      TraceWriter::Create(*out_path, header, wopt);
  if (!writer.ok()) return fail(writer.status());

  const bool progress = isatty(STDERR_FILENO) && !flags->Has("quiet");
  const double start = MonotonicSeconds();
  double last = start;
  std::vector<Sample> batch(4096);
  uint64_t total = 0;
  absl::Status status;
  if (have_first) {
    total = 1;
    status = (*writer)->Append(first);
  }
  for (; status.ok();) {
    size_t n = reader->Read(batch.data(), batch.size());
    if (n == 0) break;
    total += n;
    status = (*writer)->Append(absl::MakeConstSpan(batch.data(), n));
    if (!status.ok()) break;
    if (progress && MonotonicSeconds() - last > 0.5) {
      last = MonotonicSeconds();
      std::fprintf(stderr, "\r  %llu samples",
                   static_cast<unsigned long long>(total));
    }
  }
  if (progress) std::fputs("\r", stderr);
  const PerfDataStats& st = reader->stats();
  for (size_t cpu = 0; cpu < st.per_cpu.size() && status.ok(); ++cpu) {
    const PerfCpuCounts& c = st.per_cpu[cpu];
    if (c.lost || c.lost_samples || c.throttle || c.unthrottle ||
        c.skipped_no_addr || c.samples) {
      status = (*writer)->SetCounters(ToTrace(static_cast<uint32_t>(cpu), c));
    }
  }
  if (status.ok()) {
    PerfCpuCounts nc = st.no_cpu;
    nc.skipped_no_addr += st.skipped_unknown_id;
    if (nc.lost || nc.lost_samples || nc.throttle || nc.unthrottle ||
        nc.skipped_no_addr) {
      status = (*writer)->SetCounters(ToTrace(kUnknownCpu, nc));
    }
  }
  if (status.ok()) status = (*writer)->Close();
  if (!status.ok()) return fail(status);

  std::cerr << absl::StrFormat(
      "hotpage import: %llu samples from %s (%s mode, %zu events) to %s in "
      "%.1f s\n"
      "  skipped without address %llu, unknown event %llu; lost %llu, lost "
      "samples %llu, "
      "throttled %llu, unthrottled %llu; unknown records %llu\n",
      static_cast<unsigned long long>(total), in_path,
      reader->mode() == PerfDataMode::kPipe ? "pipe" : "file", st.events.size(),
      *out_path, MonotonicSeconds() - start,
      static_cast<unsigned long long>(st.skipped_no_addr),
      static_cast<unsigned long long>(st.skipped_unknown_id),
      static_cast<unsigned long long>(st.lost),
      static_cast<unsigned long long>(st.lost_samples),
      static_cast<unsigned long long>(st.throttle),
      static_cast<unsigned long long>(st.unthrottle),
      static_cast<unsigned long long>(st.unknown_records));
  if (st.skipped_no_addr > 0 && total == 0) {
    std::cerr << "hotpage import: no sample had a data address; record with "
                 "`perf record -d`\n";
  }
  if (!reader->status().ok()) {
    std::cerr << "hotpage import: " << reader->status().message()
              << " (the samples before it were written)\n";
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace hotpage
