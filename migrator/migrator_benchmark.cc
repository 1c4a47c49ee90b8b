// Pages per second against batch size (pages per move_pages call), 1..4096.
//
//  BM_MigratorOverFake/B   the migrator's own cost per page: queue, query
//                          and move bookkeeping, the /proc/PID/stat check
//                          before every batch (live), the fake mover's map.
//  BM_MovePagesQuery/B     move_pages(nodes=NULL) on this machine.
//  BM_MovePagesNoop/B      move_pages(MPOL_MF_MOVE) to the node the pages
//                          are on: the system call and per-page walk
//                          without the copy (this machine has one node).
// The system-call benchmarks count wall time (UseRealTime): a move call
// starts with lru_cache_disable(), which waits for an RCU grace period and
// for work on every CPU, time the calling thread spends asleep. Measured
// here (2 shared vCPUs, no copy): batch 1 = 14k pages/s (70 us per call),
// 64 = 235k, 256 = 1.5M, 1024 = 2.8M, 4096 = 2.5M: saturated at 1024.
// The copy itself is measured in the VM test (migrator_vm_probe), where
// there are two nodes. Run:
//   bazel run -c opt //migrator:migrator_benchmark

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "benchmark/benchmark.h"
#include "migrator/fake_page_mover.h"
#include "migrator/migrator.h"
#include "migrator/page_mover.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {
namespace {

constexpr uint64_t kBase = 0x7f0000000000;
constexpr size_t kPages = 16384;

void BatchArgs(benchmark::internal::Benchmark* b) {
  for (int n : {1, 4, 16, 64, 256, 1024, 4096}) b->Arg(n);
}

void BM_MigratorOverFake(benchmark::State& state) {
  const size_t batch = static_cast<size_t>(state.range(0));
  auto fs = KernelFs::Open("/");
  if (!fs.ok()) std::abort();
  std::vector<MoveRequest> reqs(kPages);
  for (size_t i = 0; i < kPages; ++i) {
    reqs[i].vaddr = kBase + i * kBasePageBytes;
    reqs[i].from_node = 1;
    reqs[i].to_node = 0;
  }
  MigratorOptions o;
  o.rate_limit_bytes_per_sec = 0;
  o.cpu_budget = 0;
  o.batch_pages = batch;
  o.queue_capacity = kPages;
  for (auto _ : state) {
    state.PauseTiming();
    FakePageMover mover;
    mover.set_record_calls(false);
    mover.AddPages(kBase, kPages, kBasePageBytes, 1);
    auto h = ProcessHandle::Attach(getpid(), &*fs);
    if (!h.ok()) std::abort();
    Migrator m(o, std::move(*h), &mover);
    m.Submit(reqs);
    state.ResumeTiming();
    while (m.RunOnce().next == MigratorRound::Next::kMore) {
    }
    state.PauseTiming();
    if (m.Snapshot().promoted_pages != kPages) std::abort();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * kPages);
}
BENCHMARK(BM_MigratorOverFake)->Apply(BatchArgs)->Unit(benchmark::kMillisecond);

// A touched, 4 KiB-page region of kSyscallPages pages.
constexpr size_t kSyscallPages = 4096;
struct Region {
  Region() {
    len = kSyscallPages * 4096;
    base = static_cast<char*>(mmap(nullptr, len, PROT_READ | PROT_WRITE,
                                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (base == MAP_FAILED) std::abort();
    madvise(base, len, MADV_NOHUGEPAGE);
    for (size_t i = 0; i < len; i += 4096) base[i] = 1;
    for (size_t i = 0; i < kSyscallPages; ++i) {
      pages.push_back(reinterpret_cast<uint64_t>(base) + i * 4096);
    }
  }
  ~Region() { munmap(base, len); }
  char* base;
  size_t len;
  std::vector<uint64_t> pages;
};

void BM_MovePagesQuery(benchmark::State& state) {
  const size_t batch = static_cast<size_t>(state.range(0));
  Region r;
  SyscallPageMover mover;
  std::vector<int> status(kSyscallPages);
  for (auto _ : state) {
    for (size_t i = 0; i < kSyscallPages; i += batch) {
      const size_t n = std::min(batch, kSyscallPages - i);
      if (mover.Query(0, absl::MakeConstSpan(&r.pages[i], n),
                      absl::MakeSpan(&status[i], n)) != 0) {
        state.SkipWithError("move_pages query failed");
        return;
      }
    }
  }
  state.SetItemsProcessed(state.iterations() * kSyscallPages);
}
BENCHMARK(BM_MovePagesQuery)->Apply(BatchArgs)->UseRealTime();

void BM_MovePagesNoop(benchmark::State& state) {
  const size_t batch = static_cast<size_t>(state.range(0));
  Region r;
  SyscallPageMover mover;
  std::vector<int> status(kSyscallPages);
  if (mover.Query(0, r.pages, absl::MakeSpan(status)) != 0 || status[0] < 0) {
    state.SkipWithError("move_pages query failed");
    return;
  }
  std::vector<int> nodes(kSyscallPages, status[0]);
  for (auto _ : state) {
    for (size_t i = 0; i < kSyscallPages; i += batch) {
      const size_t n = std::min(batch, kSyscallPages - i);
      if (mover.Move(0, absl::MakeConstSpan(&r.pages[i], n),
                     absl::MakeConstSpan(&nodes[i], n),
                     absl::MakeSpan(&status[i], n)) != 0) {
        state.SkipWithError("move_pages move failed");
        return;
      }
    }
  }
  state.SetItemsProcessed(state.iterations() * kSyscallPages);
}
BENCHMARK(BM_MovePagesNoop)->Apply(BatchArgs)->UseRealTime();

}  // namespace
}  // namespace hotpage
