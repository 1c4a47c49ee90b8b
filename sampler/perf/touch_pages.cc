// touch_pages: a workload with known data addresses, for tests that record
// it with `perf record` (or a hotpage sampler) and check every address.
//
//   touch_pages [--pages N] [--threads T] [--repeat R] [--out FILE]
//
// Maps N fresh anonymous pages (transparent huge pages disabled on the range,
// so each page faults on its own), splits them among T threads (thread t is
// pinned to CPU t % online CPUs when the affinity call is allowed) and writes
// one byte in every page, at offset PageOffset(i), R times. It prints, before
// touching anything:
//
//   base=0x7f... pages=N page_size=4096 offset_stride=64
//
// (to FILE with --out, e.g. when stdout carries `perf record -o -` data) so
// the caller knows the N addresses base + i * page_size + PageOffset(i).
// Only the first touch of each page faults; R > 1 adds ordinary accesses.

#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

constexpr size_t kOffsetStride = 64;

size_t PageOffset(size_t i, size_t page_size) {
  return (i * kOffsetStride) % page_size;
}

void Usage() {
  std::fprintf(stderr,
               "usage: touch_pages [--pages N] [--threads T] [--repeat R] "
               "[--out FILE]\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  long pages = 64, threads = 1, repeat = 1;
  const char* out_path = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
      out_path = argv[++i];
      continue;
    }
    long* target = nullptr;
    if (std::strcmp(argv[i], "--pages") == 0)
      target = &pages;
    else if (std::strcmp(argv[i], "--threads") == 0)
      target = &threads;
    else if (std::strcmp(argv[i], "--repeat") == 0)
      target = &repeat;
    else
      Usage();
    if (i + 1 >= argc) Usage();
    char* end = nullptr;
    *target = std::strtol(argv[++i], &end, 10);
    if (*end != '\0' || *target < 1 || *target > (1 << 24)) Usage();
  }
  const size_t page_size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t len = static_cast<size_t>(pages) * page_size;
  void* map = mmap(nullptr, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) {
    std::perror("touch_pages: mmap");
    return 1;
  }
  // A huge page would satisfy 512 first touches with one fault.
  (void)madvise(map, len, MADV_NOHUGEPAGE);
  auto* base = static_cast<volatile uint8_t*>(map);
  FILE* out = out_path != nullptr ? std::fopen(out_path, "w") : stdout;
  if (out == nullptr) {
    std::perror("touch_pages: --out");
    return 1;
  }
  std::fprintf(out, "base=%#lx pages=%ld page_size=%zu offset_stride=%zu\n",
               reinterpret_cast<unsigned long>(map), pages, page_size,
               kOffsetStride);
  if (out != stdout)
    std::fclose(out);
  else
    std::fflush(stdout);

  const long ncpu =
      sysconf(_SC_NPROCESSORS_ONLN) > 0 ? sysconf(_SC_NPROCESSORS_ONLN) : 1;
  auto work = [&](long t) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(static_cast<int>(t % ncpu), &set);
    (void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    for (long r = 0; r < repeat; ++r) {
      for (long i = t; i < pages; i += threads) {
        base[i * page_size + PageOffset(i, page_size)] =
            static_cast<uint8_t>(i + r);
      }
    }
  };
  if (threads == 1) {
    work(0);
  } else {
    std::vector<std::thread> pool;
    for (long t = 0; t < threads; ++t) pool.emplace_back(work, t);
    for (auto& th : pool) th.join();
  }
  munmap(map, len);
  return 0;
}
