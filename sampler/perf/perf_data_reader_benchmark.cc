// Decode throughput of PerfDataReader, in samples per second on one core,
// for a PEBS-shaped stream built in memory (IDENTIFIER|IP|TID|TIME|ADDR|
// CPU|PERIOD|WEIGHT_STRUCT|DATA_SRC|PHYS_ADDR, 88-byte records), and its
// peers in the same run: two events told apart by id, the same stream
// zstd-compressed as `perf record -z` writes it, a layout with
// variable-length fields (the walking decoder), and a memcpy of the same
// bytes as the ceiling.
//
//   bazel run -c opt //sampler/perf:perf_data_reader_benchmark

#include <cstring>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "sampler/perf/perf_data_format.h"
#include "sampler/perf/perf_data_reader.h"
#include "sampler/perf/perf_data_testing.h"
#include "sampler/sample.h"

namespace hotpage {
namespace {

namespace pf = ::hotpage::perf_format;
using ::hotpage::testing::PebsAttr;
using ::hotpage::testing::PerfDataBuilder;
using ::hotpage::testing::TestAttr;
using ::hotpage::testing::TestSample;

constexpr int kSamples = 1 << 18;

TestSample PebsSample(uint64_t id, int i) {
  TestSample s;
  s.id = id;
  s.ip = 0x401000 + (i & 0xfff);
  s.pid = 1234;
  s.tid = 1234 + (i & 7);
  s.time = 1'000'000'000ULL + 37ULL * i;
  s.addr = 0x7f0000000000ULL + ((i * 2654435761ULL) & 0x3fffffc0ULL);
  s.cpu = static_cast<uint32_t>(i & 15);
  s.period = 10007;
  s.weight = 30 + (i & 511);
  s.data_src = (i & 3) ? 0x68100142ULL : 0x1a10080142ULL;
  s.phys_addr = 0x100000000ULL + ((i * 40503ULL) & 0x3fffffc0ULL);
  return s;
}

enum class Shape { kPebs, kPebsTwoEvents, kPebsZstd, kVariable };

const std::string& Stream(Shape shape) {
  static std::string streams[4];
  std::string& s = streams[static_cast<int>(shape)];
  if (!s.empty()) return s;
  PerfDataBuilder b;
  if (shape == Shape::kVariable) {
    TestAttr a = PebsAttr(1);
    a.sample_type |= pf::kSampleCallchain | pf::kSampleRegsIntr;
    a.sample_regs_intr = 0xff;
    const int e = b.AddAttr(a);
    for (int i = 0; i < kSamples; ++i) {
      TestSample t = PebsSample(1, i);
      t.callchain.assign(i & 3, 0xffffffff81000000ULL);
      b.AddSample(e, t);
    }
  } else if (shape == Shape::kPebsTwoEvents) {
    const int loads = b.AddAttr(PebsAttr(11));
    TestAttr stores_attr = PebsAttr(22);
    stores_attr.config = 0x2cd;
    const int stores = b.AddAttr(stores_attr);
    for (int i = 0; i < kSamples; ++i) {
      const bool load = (i % 3) != 0;
      b.AddSample(load ? loads : stores, PebsSample(load ? 11 : 22, i));
    }
  } else {
    const int e = b.AddAttr(PebsAttr(1));
    for (int i = 0; i < kSamples; ++i) b.AddSample(e, PebsSample(1, i));
  }
  PerfDataBuilder::Options o;
  if (shape == Shape::kPebsZstd) {
    o.compress = true;
    o.flush_bytes = 512 * 1024;  // one ring buffer read, as perf pushes it
  }
  s = b.File(o);
  return s;
}

void BM_Decode(benchmark::State& state, Shape shape) {
  const std::string& data = Stream(shape);
  std::vector<Sample> out(1024);
  uint64_t total = 0;
  for (auto _ : state) {
    auto reader = PerfDataReader::OpenBuffer(data);
    if (!reader.ok()) {
      state.SkipWithError("open failed");
      return;
    }
    size_t n;
    while ((n = reader->Read(out.data(), out.size())) > 0) {
      total += n;
      benchmark::DoNotOptimize(out.data());
    }
    if (!reader->status().ok() || reader->stats().samples != kSamples) {
      state.SkipWithError("bad decode");
      return;
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(total));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(data.size()));
}
BENCHMARK_CAPTURE(BM_Decode, pebs, Shape::kPebs)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Decode, pebs_two_events, Shape::kPebsTwoEvents)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Decode, pebs_zstd, Shape::kPebsZstd)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Decode, variable_layout, Shape::kVariable)
    ->Unit(benchmark::kMillisecond);

// The ceiling: copying the stream's bytes, sample-sized, into the same
// output buffer.
void BM_MemcpyCeiling(benchmark::State& state) {
  const std::string& data = Stream(Shape::kPebs);
  std::vector<Sample> out(1024);
  const size_t record = 88;  // bytes per PEBS-shaped sample record
  for (auto _ : state) {
    for (size_t off = 0; off + record <= data.size(); off += record) {
      std::memcpy(&out[(off / record) & 1023], data.data() + off,
                  sizeof(Sample));
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(data.size() / record));
}
BENCHMARK(BM_MemcpyCeiling)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hotpage
