// What LiveMemoryView::Ranges() costs a policy round for a large process
// (live_memory_view.h, "Ranges"): a child maps and touches G GiB of
// anonymous memory in 4 KiB pages (MADV_NOHUGEPAGE: the page-table walk
// numa_maps pays per base page), and each benchmark reads its ranges
// through the real /proc.
//
//   bazel run -c opt //tools:live_memory_view_benchmark --
//       --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
//
// (one command line)
//
//   BM_RangesEveryRound   RangesRefresh::max_age 0: numa_maps (joined with
//                         maps) every call, as every round did before
//   BM_RangesBetweenReads the default refresh in a steady state: maps and
//                         statm read, the last reading returned
//   BM_MapsAndStatm       the two files alone
//
// Measured (2 shared cores, medians of 3; 44 VMAs in the child):
//
//   GiB   EveryRound   BetweenReads   MapsAndStatm
//   1     12.0 ms      45 us          42 us
//   4     36.9 ms      49 us          43 us

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "policy/topology.h"
#include "tools/base/kernel/kernel_fs.h"
#include "tools/live_memory_view.h"

namespace hotpage {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

// A child holding `gib` GiB touched; killed by the destructor.
class Toucher {
 public:
  explicit Toucher(int gib) {
    int fd[2];
    if (pipe(fd) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      close(fd[0]);
      const size_t len = static_cast<size_t>(gib) * kGiB;
      void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) _exit(1);
      madvise(p, len, MADV_NOHUGEPAGE);
      for (size_t off = 0; off < len; off += 4096)
        static_cast<char*>(p)[off] = 1;
      char c = 1;
      if (write(fd[1], &c, 1) != 1) _exit(1);
      for (;;) pause();
    }
    close(fd[1]);
    char c = 0;
    ready_ = read(fd[0], &c, 1) == 1;
    close(fd[0]);
  }
  ~Toucher() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }
  bool ready() const { return ready_; }

 private:
  pid_t pid_ = -1;
  bool ready_ = false;
};

void Run(benchmark::State& state, RangesRefresh refresh) {
  Toucher child(static_cast<int>(state.range(0)));
  absl::StatusOr<KernelFs> fs = KernelFs::Open("/");
  if (!child.ready() || !fs.ok()) {
    state.SkipWithError("no child or no /");
    return;
  }
  Topology topo;
  LiveMemoryView view(child.pid(), nullptr, &*fs, &topo, nullptr, refresh);
  size_t n = view.Ranges().size();
  for (auto _ : state) {
    n = view.Ranges().size();
    benchmark::DoNotOptimize(n);
  }
  state.counters["ranges"] = static_cast<double>(n);
  state.counters["full_reads"] =
      static_cast<double>(view.ranges_stats().full_reads);
}

void BM_RangesEveryRound(benchmark::State& state) {
  Run(state, RangesRefresh{.max_age = absl::ZeroDuration()});
}
void BM_RangesBetweenReads(benchmark::State& state) {
  Run(state, RangesRefresh{});
}

void BM_MapsAndStatm(benchmark::State& state) {
  Toucher child(static_cast<int>(state.range(0)));
  absl::StatusOr<KernelFs> fs = KernelFs::Open("/");
  if (!child.ready() || !fs.ok()) {
    state.SkipWithError("no child or no /");
    return;
  }
  const std::string maps = absl::StrCat("/proc/", child.pid(), "/maps");
  const std::string statm = absl::StrCat("/proc/", child.pid(), "/statm");
  for (auto _ : state) {
    benchmark::DoNotOptimize(fs->ReadFile(maps));
    benchmark::DoNotOptimize(fs->ReadFile(statm));
  }
}

BENCHMARK(BM_RangesEveryRound)->Arg(1)->Arg(4)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RangesBetweenReads)->Arg(1)->Arg(4)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MapsAndStatm)->Arg(1)->Arg(4)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace hotpage
