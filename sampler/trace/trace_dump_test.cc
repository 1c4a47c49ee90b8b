#include "sampler/trace/trace_dump.h"

#include <cinttypes>
#include <cstdio>
#include <random>
#include <string>

#include "gtest/gtest.h"
#include "sampler/trace/trace_testing.h"

namespace hotpage {
namespace {

std::string Line(const Sample& s) {
  char buf[kMaxSampleLineBytes];
  return std::string(buf, FormatSampleLine(s, buf));
}

TEST(FormatSampleLineTest, ColumnOrderAndBases) {
  Sample s;
  s.pid = 41230;
  s.tid = 41231;
  s.cpu = 3;
  s.time_ns = 1700000000123456;
  s.vaddr = 0x7f3a00012345;
  s.paddr = 0;
  s.weight = 187;
  s.data_src = 0x268100142;
  EXPECT_EQ(
      Line(s),
      "41230 41231 3 1700000000123456 0x7f3a00012345 0x0 187 0x268100142\n");
}

TEST(FormatSampleLineTest, ExtremesFitTheBound) {
  Sample s;
  s.pid = s.tid = s.cpu = s.weight = 0xffffffffu;
  s.time_ns = s.vaddr = s.paddr = s.data_src = ~uint64_t{0};
  const std::string line = Line(s);
  EXPECT_EQ(line,
            "4294967295 4294967295 4294967295 18446744073709551615 "
            "0xffffffffffffffff "
            "0xffffffffffffffff 4294967295 0xffffffffffffffff\n");
  EXPECT_EQ(line.size(), kMaxSampleLineBytes);
  EXPECT_EQ(Line(Sample{}), "0 0 0 0 0x0 0x0 0 0x0\n");
}

TEST(FormatSampleLineTest, MatchesPrintfOnEdgeValues) {
  for (const Sample& s : testing_internal::EdgeSamples(20000)) {
    char want[256];
    std::snprintf(want, sizeof(want),
                  "%" PRIu32 " %" PRIu32 " %" PRIu32 " %" PRIu64 " 0x%" PRIx64
                  " 0x%" PRIx64 " %" PRIu32 " 0x%" PRIx64 "\n",
                  s.pid, s.tid, s.cpu, s.time_ns, s.vaddr, s.paddr, s.weight,
                  s.data_src);
    ASSERT_EQ(Line(s), want);
  }
}

TEST(TraceStatsTest, SummaryPerCpuPerSource) {
  std::vector<Sample> samples(6);
  samples[0].cpu = 1;
  samples[1].cpu = 1;
  samples[2].cpu = 0;
  samples[3].cpu = 100000;  // beyond the dense table
  samples[4].cpu = 2;
  samples[5].cpu = 2;
  for (size_t i = 0; i < samples.size(); ++i) {
    samples[i].source =
        i < 4 ? SampleSource::kPebsLoad : SampleSource::kPebsStore;
  }
  samples[5].source = static_cast<SampleSource>(200);
  TraceStats stats;
  stats.Add(absl::MakeConstSpan(samples).subspan(0, 3));
  stats.Add(absl::MakeConstSpan(samples).subspan(3));
  stats.SetCounters(
      {{1, 5, 1, 1, 0}, {7, 2, 0, 0, 3}, {kUnknownCpu, 1, 0, 0, 0}});
  EXPECT_EQ(stats.samples(), 6u);
  EXPECT_EQ(stats.Summary(),
            "# samples=6 lost=8 throttled=1 unthrottled=1 skipped=3\n");
  EXPECT_EQ(
      stats.PerCpu(),
      "# cpu=0 samples=1 lost=0 throttled=0 unthrottled=0 skipped=0\n"
      "# cpu=1 samples=2 lost=5 throttled=1 unthrottled=1 skipped=0\n"
      "# cpu=2 samples=2 lost=0 throttled=0 unthrottled=0 skipped=0\n"
      "# cpu=7 samples=0 lost=2 throttled=0 unthrottled=0 skipped=3\n"
      "# cpu=100000 samples=1 lost=0 throttled=0 unthrottled=0 skipped=0\n"
      "# cpu=unknown samples=0 lost=1 throttled=0 unthrottled=0 skipped=0\n");
  EXPECT_EQ(stats.PerSource(),
            "# source=pebs-load samples=4\n"
            "# source=pebs-store samples=1\n"
            "# source=unknown-200 samples=1\n");
}

TEST(FormatTraceHeaderTest, EveryFieldOnItsOwnCommentLine) {
  TraceHeader h = testing_internal::TestHeader();
  h.topology_json = "{\n  \"nodes\": []\n}";
  h.event_config = "a\nb";
  EXPECT_EQ(FormatTraceHeader(h),
            "# version=1.0\n# source=pebs-load\n# sample_period=10007\n"
            "# start_realtime_ns=1764444000123456789\n# "
            "start_clock_ns=1700000000000000\n"
            "# event_config=a\n# event_config=b\n# topology_json_bytes=17\n"
            "#   {\n#     \"nodes\": []\n#   }\n");
}

}  // namespace
}  // namespace hotpage
