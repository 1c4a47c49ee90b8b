// perf_data_dump: prints what PerfDataReader reads from a perf.data file, one
// sample per line in file order, then the stats. A debugging and evidence
// tool for the reader (the user-facing command is `hotpage import`).
//
//   perf_data_dump [--stats] FILE
//
// Sample lines: offset cpu time_ns pid/tid event vaddr paddr weight data_src
// period (hex with 0x where perf prints hex).

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>

#include "sampler/perf/perf_data_reader.h"
#include "sampler/sample.h"

int main(int argc, char** argv) {
  bool stats_only = false;
  std::string path;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--stats") == 0) {
      stats_only = true;
    } else if (path.empty()) {
      path = argv[i];
    } else {
      std::fprintf(stderr, "usage: perf_data_dump [--stats] FILE\n");
      return 2;
    }
  }
  if (path.empty()) {
    std::fprintf(stderr, "usage: perf_data_dump [--stats] FILE\n");
    return 2;
  }
  auto reader = hotpage::PerfDataReader::Open(path);
  if (!reader.ok()) {
    std::fprintf(stderr, "perf_data_dump: %s\n",
                 reader.status().ToString().c_str());
    return 1;
  }
  hotpage::Sample s;
  hotpage::PerfSampleOrigin o;
  const auto& st = reader->stats();
  while (reader->Next(&s, &o)) {
    if (stats_only) continue;
    std::printf("%#" PRIx64 " %u %" PRIu64 " %u/%u %s %#" PRIx64 " %#" PRIx64
                " %u %#" PRIx64 " %" PRIu64 "\n",
                o.file_offset, s.cpu, s.time_ns, s.pid, s.tid,
                st.events[o.event].name.c_str(), s.vaddr, s.paddr, s.weight,
                s.data_src, s.period);
  }
  std::printf(
      "mode=%s records=%" PRIu64 " sample_records=%" PRIu64 " samples=%" PRIu64
      " skipped_no_addr=%" PRIu64 " skipped_unknown_id=%" PRIu64
      " lost_records=%" PRIu64 " lost=%" PRIu64 " lost_samples_records=%" PRIu64
      " lost_samples=%" PRIu64 " throttle=%" PRIu64 " unthrottle=%" PRIu64
      " unknown_records=%" PRIu64 " compressed_records=%" PRIu64
      " split_records=%" PRIu64 "\n",
      reader->mode() == hotpage::PerfDataMode::kFile ? "file" : "pipe",
      st.records, st.sample_records, st.samples, st.skipped_no_addr,
      st.skipped_unknown_id, st.lost_records, st.lost, st.lost_samples_records,
      st.lost_samples, st.throttle, st.unthrottle, st.unknown_records,
      st.compressed_records, st.split_records);
  for (size_t i = 0; i < st.events.size(); ++i) {
    const auto& e = st.events[i];
    std::printf("event %zu: %s type=%u config=%#" PRIx64
                " sample_type=%#" PRIx64 " attr_size=%u samples=%" PRIu64
                " skipped_no_addr=%" PRIu64 " source=%s\n",
                i, e.name.c_str(), e.type, e.config, e.sample_type, e.attr_size,
                e.samples, e.skipped_no_addr,
                hotpage::SampleSourceName(e.source));
  }
  auto print_cpu = [](const char* label, const hotpage::PerfCpuCounts& c) {
    std::printf("%s: samples=%" PRIu64 " skipped_no_addr=%" PRIu64
                " lost=%" PRIu64 " lost_samples=%" PRIu64 " throttle=%" PRIu64
                " unthrottle=%" PRIu64 "\n",
                label, c.samples, c.skipped_no_addr, c.lost, c.lost_samples,
                c.throttle, c.unthrottle);
  };
  for (size_t cpu = 0; cpu < st.per_cpu.size(); ++cpu) {
    std::string label = "cpu " + std::to_string(cpu);
    print_cpu(label.c_str(), st.per_cpu[cpu]);
  }
  print_cpu("no cpu", st.no_cpu);
  if (!reader->status().ok()) {
    std::printf("error: %s\n", reader->status().ToString().c_str());
    return 1;
  }
  return 0;
}
