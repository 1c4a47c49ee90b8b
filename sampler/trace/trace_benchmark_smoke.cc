// Runs every benchmark in trace_benchmark.cc once, on a small input, and
// fails if any reports an error (SkipWithError): the benchmarks' own
// correctness checks (sample counts, read errors) become a test.

#include <cstdio>
#include <vector>

#include "benchmark/benchmark.h"

namespace hotpage {
extern size_t g_trace_benchmark_samples;
}

namespace {

class FailOnErrorReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      ++runs_;
      if (run.error_occurred) {
        ++errors_;
        std::fprintf(stderr, "FAIL %s: %s\n", run.benchmark_name().c_str(),
                     run.error_message.c_str());
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  int runs_ = 0;
  int errors_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  hotpage::g_trace_benchmark_samples =
      20000;  // a few blocks, milliseconds per run
  std::vector<char*> args(argv, argv + argc);
  char min_time[] = "--benchmark_min_time=0.001";
  args.push_back(min_time);
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  FailOnErrorReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::printf("%d benchmark runs, %d errors\n", reporter.runs_,
              reporter.errors_);
  return reporter.runs_ > 0 && reporter.errors_ == 0 ? 0 : 1;
}
