// .hpt trace throughput and size, on one core.
//
//   bazel run -c opt //sampler/trace:trace_benchmark
//
// Items are samples; "bytes" are the 64-byte records they represent, so
// MB/s is comparable across encodings; bytes_per_sample is the file size
// divided by the sample count (header included, negligible at 1M
// samples). BM_Write/BM_Read compare the columnar encoding (the default)
// with plain zstd of the raw 64-byte records (encoding 0), same writer,
// same data, same run; BM_WriteBlockSize sweeps samples_per_block.
//
// Arguments: /encoding (0 raw, 1 columnar)/zstd level (0: stored)/block.
// Data: testing_internal::SyntheticSamples (PEBS-like; see trace_testing.h),
// 1M samples. Measured on this project's 2-vCPU build VM under load
// (CPU time; results vary by about 10% run to run):
//
//   encoding        zstd  bytes/sample  write M samples/s  read M samples/s
//   columnar          3       15.8           10.6              16.2
//   columnar          1       16.2           10.8              15.6
//   raw records       3       20.8            4.1              17.2
//   raw records       1       21.2            5.8              16.3
//   columnar     stored       31.7           26.2              24.4
//
//   BM_FormatSampleLines (`hotpage dump` text): 17.4M lines/s, 1.1 GB/s.
//   BM_Crc32c: 9.0 GB/s with SSE 4.2, 2.4 GB/s portable slice-by-8.
//
// The choices these justify (columnar, zstd-3, 4096 per block) are argued
// in trace_format.h and trace_writer.h.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "sampler/trace/crc32c.h"
#include "sampler/trace/trace_dump.h"
#include "sampler/trace/trace_reader.h"
#include "sampler/trace/trace_testing.h"
#include "sampler/trace/trace_writer.h"

namespace hotpage {

// Samples per benchmark input; trace_benchmark_smoke.cc makes it small.
size_t g_trace_benchmark_samples = size_t{1} << 20;

namespace {

const std::vector<Sample>& Dataset() {
  static const std::vector<Sample>* data = [] {
    auto* v = new std::vector<Sample>(g_trace_benchmark_samples);
    testing_internal::SyntheticSamples gen(42);
    for (Sample& s : *v) s = gen.Next();
    return v;
  }();
  return *data;
}

TraceWriter::Options OptionsFor(const benchmark::State& state) {
  TraceWriter::Options o;
  o.encoding = static_cast<SampleEncoding>(state.range(0));
  o.zstd_level = static_cast<int>(state.range(1));
  o.compress = o.zstd_level != 0;
  o.samples_per_block = static_cast<uint32_t>(state.range(2));
  return o;
}

void SetLabel(benchmark::State& state) {
  state.SetLabel(absl::StrCat(
      state.range(0) == 0 ? "raw" : "columnar",
      state.range(1) == 0 ? " stored" : absl::StrCat(" zstd-", state.range(1)),
      " block=", state.range(2)));
}

void BM_Write(benchmark::State& state) {
  const std::vector<Sample>& data = Dataset();
  const TraceWriter::Options options = OptionsFor(state);
  uint64_t bytes = 0;
  for (auto _ : state) {
    auto sink = std::make_unique<NullSink>();
    NullSink* counter = sink.get();
    auto w = TraceWriter::Create(std::move(sink), "bench.hpt",
                                 testing_internal::TestHeader(), options);
    if (!w.ok()) {
      state.SkipWithError(std::string(w.status().message()).c_str());
      return;
    }
    for (const Sample& s : data) {
      if (!(*w)->Append(s).ok()) {
        state.SkipWithError("append failed");
        return;
      }
    }
    if (!(*w)->Close().ok()) {
      state.SkipWithError("close failed");
      return;
    }
    bytes = counter->bytes();
  }
  state.SetItemsProcessed(
      static_cast<int64_t>(state.iterations() * data.size()));
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * data.size() * sizeof(Sample)));
  state.counters["bytes_per_sample"] = static_cast<double>(bytes) / data.size();
  SetLabel(state);
}

void BM_Read(benchmark::State& state) {
  const std::vector<Sample>& data = Dataset();
  absl::StatusOr<std::string> file = testing_internal::WriteTrace(
      testing_internal::TestHeader(), data, OptionsFor(state));
  if (!file.ok()) {
    state.SkipWithError(std::string(file.status().message()).c_str());
    return;
  }
  uint64_t checksum = 0;
  for (auto _ : state) {
    auto r = TraceReader::Open(MakeMemorySource(*file), "bench.hpt");
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
    size_t n = 0;
    while (true) {
      auto block = (*r)->Next();
      if (!block.ok()) {
        state.SkipWithError(std::string(block.status().message()).c_str());
        return;
      }
      if (block->empty()) break;
      // Touch every sample as a consumer would.
      for (const Sample& s : *block) checksum += s.vaddr ^ s.time_ns;
      n += block->size();
    }
    if (n != data.size()) {
      state.SkipWithError("read back a different number of samples");
      return;
    }
  }
  benchmark::DoNotOptimize(checksum);
  state.SetItemsProcessed(
      static_cast<int64_t>(state.iterations() * data.size()));
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * data.size() * sizeof(Sample)));
  state.counters["bytes_per_sample"] =
      static_cast<double>(file->size()) / data.size();
  SetLabel(state);
}

constexpr int64_t kRaw = static_cast<int64_t>(SampleEncoding::kRaw);
constexpr int64_t kColumnar = static_cast<int64_t>(SampleEncoding::kColumnar);

void EncodingArgs(benchmark::internal::Benchmark* b) {
  for (int64_t enc : {kColumnar, kRaw}) {
    for (int64_t level : {1, 3}) b->Args({enc, level, kDefaultSamplesPerBlock});
  }
  b->Args({kColumnar, 0, kDefaultSamplesPerBlock});  // encoding alone, no zstd
}

void BlockSizeArgs(benchmark::internal::Benchmark* b) {
  for (int64_t spb : {256, 1024, 4096, 16384, 65536})
    b->Args({kColumnar, 3, spb});
}

BENCHMARK(BM_Write)->Apply(EncodingArgs)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Read)->Apply(EncodingArgs)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Write)
    ->Name("BM_WriteBlockSize")
    ->Apply(BlockSizeArgs)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Read)
    ->Name("BM_ReadBlockSize")
    ->Apply(BlockSizeArgs)
    ->Unit(benchmark::kMillisecond);

// `hotpage dump`'s text: one line per sample into a 64 KiB buffer, as
// cmd_dump.cc does (without the write(2)).
void BM_FormatSampleLines(benchmark::State& state) {
  const std::vector<Sample>& data = Dataset();
  std::vector<char> buf(64 << 10);
  size_t bytes = 0;
  for (auto _ : state) {
    char* p = buf.data();
    for (const Sample& s : data) {
      if (static_cast<size_t>(buf.data() + buf.size() - p) <
          kMaxSampleLineBytes) {
        bytes += static_cast<size_t>(p - buf.data());
        benchmark::DoNotOptimize(buf.data());
        p = buf.data();
      }
      p = FormatSampleLine(s, p);
    }
    bytes += static_cast<size_t>(p - buf.data());
  }
  state.SetItemsProcessed(
      static_cast<int64_t>(state.iterations() * data.size()));
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}
BENCHMARK(BM_FormatSampleLines)->Unit(benchmark::kMillisecond);

void BM_Crc32c(benchmark::State& state) {
  std::string buf(static_cast<size_t>(state.range(0)), 'x');
  uint32_t crc = 0;
  for (auto _ : state) {
    crc = Crc32cExtend(crc, buf.data(), buf.size());
    benchmark::DoNotOptimize(crc);
  }
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * buf.size()));
  state.SetLabel(internal::Crc32cIsHardware() ? "sse4.2" : "table");
}
BENCHMARK(BM_Crc32c)->Arg(64 << 10);

void BM_Crc32cPortable(benchmark::State& state) {
  std::string buf(static_cast<size_t>(state.range(0)), 'x');
  uint32_t crc = 0;
  for (auto _ : state) {
    crc = internal::Crc32cPortable(crc, buf.data(), buf.size());
    benchmark::DoNotOptimize(crc);
  }
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * buf.size()));
}
BENCHMARK(BM_Crc32cPortable)->Arg(64 << 10);

}  // namespace
}  // namespace hotpage
