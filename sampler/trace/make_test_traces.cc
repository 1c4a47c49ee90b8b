// Writes the small .hpt files checked in under sampler/trace/testdata/:
//
//   small.hpt            12 samples in 3 blocks (5 per block), counters on
//                        three CPUs, a stats block midway: the `hotpage dump`
//                        golden input (tools/hotpage_dump_test.sh)
//   hpt_corpus/*.hpt     seed corpus of the .hpt fuzzer: every encoding and
//                        codec, empty, edge values, cut short
//
//   bazel run //sampler/trace:make_test_traces -- $PWD/sampler/trace/testdata
//
// Deterministic: the same samples every time. (zstd's output could differ
// across zstd versions; the files stay valid either way.)

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "sampler/trace/trace_testing.h"
#include "sampler/trace/trace_writer.h"
#include "tools/base/status_macros.h"

namespace hotpage {
namespace {

Sample S(uint32_t pid, uint32_t tid, uint32_t cpu, uint64_t time_ns,
         uint64_t vaddr, uint64_t paddr, uint32_t weight, uint64_t data_src,
         SampleSource source) {
  Sample s;
  s.pid = pid;
  s.tid = tid;
  s.cpu = cpu;
  s.time_ns = time_ns;
  s.vaddr = vaddr;
  s.paddr = paddr;
  s.weight = weight;
  s.data_src = data_src;
  const DecodedDataSrc d = DecodeDataSrc(data_src);
  s.level = d.level;
  s.tlb = d.tlb;
  s.flags = d.is_store ? kSampleStore : 0;
  s.source = source;
  s.period = 10007;
  return s;
}

// Twelve PEBS-like samples: two processes, four CPUs, times mostly rising
// (one steps back, as merged per-CPU rings do), physical addresses known
// for some, edge values in the last two.
std::vector<Sample> SmallSamples() {
  constexpr auto kLoad = SampleSource::kPebsLoad;
  constexpr auto kStore = SampleSource::kPebsStore;
  return {
      S(4242, 4242, 0, 1700000000000000, 0x7f3a00001040, 0x12345040, 7,
        0x268100142, kLoad),
      S(4242, 4243, 1, 1700000000001250, 0x7f3a00001048, 0x12345048, 45,
        0x1268100242, kLoad),
      S(4242, 4243, 1, 1700000000002500, 0x55d4c0a10000, 0, 310, 0xa28080021,
        kLoad),
      S(4242, 4242, 0, 1700000000002100, 0x7f3a00200ff8, 0x2b7c0ff8, 0,
        0x268100144, kStore),
      S(4300, 4301, 2, 1700000000004000, 0x7ffc12340010, 0, 12, 0x3468100442,
        kLoad),
      S(4242, 4244, 3, 1700000000004001, 0x7f3a00001040, 0x12345040, 9,
        0x268100142, kLoad),
      S(4300, 4300, 2, 1700000000009999, 0x55d4c0a10008, 0x9abc0008, 612,
        0x2a28082021, kLoad),
      S(4242, 4242, 0, 1700000000010000, 0x7f3a00001000, 0x12345000, 0,
        0x268100144, kStore),
      S(4242, 4243, 1, 1700000000010500, 0x7f3a7fffe000, 0x1fffe000, 88,
        0x3468100442, kLoad),
      S(4300, 4301, 3, 1700000000011000, 0x1000, 0x1000, 4, 0x268100142, kLoad),
      S(1, 1, 0, 1700000000011001, 0x7fffffffffff, 0xfffffffffffff, 4294967295,
        0xffffffffffffffff, kLoad),
      S(4294967295, 4294967295, 4294967294, 18446744073709551615ull,
        0xffffffffffffffff, 1, 0, 0, kStore),
  };
}

TraceHeader SmallHeader() {
  TraceHeader h;
  h.sample_period = 10007;
  h.start_realtime_ns = 1764444000000000000;
  h.start_clock_ns = 1699999999000000;
  h.source = SampleSourceName(SampleSource::kPebsLoad);
  h.event_config =
      "cpu/mem-loads,ldlat=30/P type=4 config=0x1cd config1=0x1e precise_ip=2";
  h.topology_json =
      "{\n  \"nodes\": [\n    {\"id\": 0, \"cpus\": [0, 1, 2, 3]},\n"
      "    {\"id\": 1, \"cpus\": []}\n  ],\n  \"tier_source\": "
      "\"distance\"\n}\n";
  return h;
}

absl::Status WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return absl::InternalError("cannot write " + path);
  std::printf("wrote %s (%zu bytes)\n", path.c_str(), bytes.size());
  return absl::OkStatus();
}

absl::StatusOr<std::string> Small(const TraceWriter::Options& options) {
  std::string out;
  HOTPAGE_ASSIGN_OR_RETURN(
      std::unique_ptr<TraceWriter> w,
      TraceWriter::Create(std::make_unique<StringSink>(&out), "small.hpt",
                          SmallHeader(), options));
  const std::vector<Sample> samples = SmallSamples();
  for (size_t i = 0; i < samples.size(); ++i) {
    HOTPAGE_RETURN_IF_ERROR(w->Append(samples[i]));
    if (i == 6) {
      HOTPAGE_RETURN_IF_ERROR(w->SetCounters({0, 3, 0, 0, 0}));
      HOTPAGE_RETURN_IF_ERROR(w->Flush());  // samples block of 2 + stats block
    }
  }
  HOTPAGE_RETURN_IF_ERROR(w->SetCounters({0, 5, 0, 0, 1}));
  HOTPAGE_RETURN_IF_ERROR(w->SetCounters({2, 0, 1, 1, 0}));
  HOTPAGE_RETURN_IF_ERROR(w->SetCounters({kUnknownCpu, 0, 0, 0, 2}));
  HOTPAGE_RETURN_IF_ERROR(w->Close());
  return out;
}

absl::Status Run(const std::string& dir) {
  const std::string corpus = dir + "/hpt_corpus";
  ::mkdir(corpus.c_str(), 0755);
  TraceWriter::Options five;
  five.samples_per_block = 5;
  HOTPAGE_ASSIGN_OR_RETURN(std::string small, Small(five));
  HOTPAGE_RETURN_IF_ERROR(WriteFile(dir + "/small.hpt", small));
  HOTPAGE_RETURN_IF_ERROR(WriteFile(corpus + "/small.hpt", small));
  HOTPAGE_RETURN_IF_ERROR(
      WriteFile(corpus + "/small_cut.hpt", small.substr(0, small.size() - 40)));

  TraceHeader tiny = SmallHeader();
  tiny.topology_json = "{}";
  tiny.event_config = "sw page-faults";
  TraceWriter::Options o;
  o.samples_per_block = 4;
  o.compress = false;
  HOTPAGE_ASSIGN_OR_RETURN(
      std::string s, testing_internal::WriteTrace(tiny, SmallSamples(), o));
  HOTPAGE_RETURN_IF_ERROR(WriteFile(corpus + "/columnar_stored.hpt", s));
  o.encoding = SampleEncoding::kRaw;
  o.samples_per_block = 6;
  const std::vector<Sample> all = SmallSamples();
  HOTPAGE_ASSIGN_OR_RETURN(
      s, testing_internal::WriteTrace(
             tiny, std::vector<Sample>(all.begin(), all.begin() + 3), o));
  HOTPAGE_RETURN_IF_ERROR(WriteFile(corpus + "/raw_stored.hpt", s));
  o.compress = true;
  HOTPAGE_ASSIGN_OR_RETURN(
      s, testing_internal::WriteTrace(tiny, SmallSamples(), o));
  HOTPAGE_RETURN_IF_ERROR(WriteFile(corpus + "/raw_zstd.hpt", s));
  HOTPAGE_ASSIGN_OR_RETURN(
      s, testing_internal::WriteTrace(tiny, {}, {}, {{1, 2, 3, 4, 5}}));
  HOTPAGE_RETURN_IF_ERROR(WriteFile(corpus + "/empty_with_counters.hpt", s));
  o = {};
  o.samples_per_block = 16;
  HOTPAGE_ASSIGN_OR_RETURN(s, testing_internal::WriteTrace(
                                  tiny, testing_internal::EdgeSamples(40), o));
  HOTPAGE_RETURN_IF_ERROR(WriteFile(corpus + "/edge_values.hpt", s));
  return absl::OkStatus();
}

}  // namespace
}  // namespace hotpage

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(
        stderr,
        "usage: make_test_traces DIR (e.g. $PWD/sampler/trace/testdata)\n");
    return 2;
  }
  absl::Status st = hotpage::Run(argv[1]);
  if (!st.ok()) {
    std::fprintf(stderr, "make_test_traces: %s\n",
                 std::string(st.message()).c_str());
    return 1;
  }
  return 0;
}
