// locality_workload: private and shared hot pages, each starting on a chosen
// node, written by two threads pinned to different CPUs. For the locality
// rule's guest test (tests/attach/attach_locality_guest.sh).
//
// One anonymous area (2 MiB aligned, MADV_NOHUGEPAGE: 4 KiB pages) holds
// three sets of --set_mib MiB each:
//   A  written only by thread 0 (pinned to --cpu0), first placed on --a_node
//   B  written only by thread 1 (pinned to --cpu1), first placed on --b_node
//   S  written by both threads, first interleaved page by page over
//      --s_nodes. Each pass each thread starts S at a random page and wraps
//      around (a shared table used at random). With a fixed order instead,
//      one thread would consistently be the first to write a given S page
//      after a write-fault re-arm (or a NUMA scan pass), and to any sampler
//      that sees only the first access the page would look private.
// Placement uses the TASK policy (set_mempolicy MPOL_BIND / MPOL_INTERLEAVE)
// around the first touch and then resets it to MPOL_DEFAULT, so the area
// has no VMA policy at all (numa_maps says "default") and nothing but an
// explicit move changes where a page is.
//
// Every pass a thread writes one word of each of its pages (an atomic
// add: S pages are written by both), so every page is written again soon
// after hotpage re-arms write faults. Ground truth: --layout PREFIX writes
// PREFIX.A, PREFIX.B, PREFIX.S in attach_vm_check's layout format (base,
// bytes, phase 0, one `hot START END` line). Placement as first made is
// printed ("placed: A node0=.. node1=.. ...").
//
// Data check: word 0 of each page holds its index xor a seed (checked on
// every write and over the whole area at exit); word 1 counts the writes,
// whose sum must equal the writes made. Exit 0 = intact, 1 = corruption,
// 2 = usage or setup error. Ends on SIGTERM/SIGINT or after --duration_ms.
// At exit prints "locality_workload: thread 0 N writes, thread 1 M writes,
// W writes/s, 0 bad pages" (the rate lets a test compare overheads).

#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tools/base/clock.h"

using hotpage::MonotonicNs;

namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kSeed = 0x5eed1ca1u;
constexpr int kMpolDefault = 0, kMpolBind = 2, kMpolInterleave = 3;

volatile sig_atomic_t g_stop = 0;
void OnStop(int) { g_stop = 1; }

struct Options {
  uint64_t set_mib = 4;
  int a_node = 1, b_node = 0;
  unsigned long s_nodes = 0x3;
  int cpu0 = 0, cpu1 = 1;
  std::string layout;
  uint64_t duration_ms = 0;
};

bool ParseNodeMask(const char* s, unsigned long* mask) {
  unsigned long m = 0;
  while (*s) {
    char* end;
    long n = std::strtol(s, &end, 10);
    if (end == s || n < 0 || n >= 64) return false;
    m |= 1ul << n;
    s = end;
    if (*s == ',')
      ++s;
    else if (*s)
      return false;
  }
  if (m == 0) return false;
  *mask = m;
  return true;
}

bool ParseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    auto val = [&](const char* name) -> const char* {
      size_t n = std::strlen(name);
      return std::strncmp(a, name, n) == 0 && a[n] == '=' ? a + n + 1 : nullptr;
    };
    const char* v;
    if ((v = val("--set_mib")))
      o->set_mib = std::strtoull(v, nullptr, 10);
    else if ((v = val("--a_node")))
      o->a_node = std::atoi(v);
    else if ((v = val("--b_node")))
      o->b_node = std::atoi(v);
    else if ((v = val("--s_nodes"))) {
      if (!ParseNodeMask(v, &o->s_nodes)) return false;
    } else if ((v = val("--cpu0")))
      o->cpu0 = std::atoi(v);
    else if ((v = val("--cpu1")))
      o->cpu1 = std::atoi(v);
    else if ((v = val("--layout")))
      o->layout = v;
    else if ((v = val("--duration_ms")))
      o->duration_ms = std::strtoull(v, nullptr, 10);
    else
      return false;
  }
  return o->set_mib > 0 && o->set_mib <= 4096 && o->a_node >= 0 &&
         o->a_node < 64 && o->b_node >= 0 && o->b_node < 64;
}

long SetMempolicy(int mode, unsigned long mask) {
  return syscall(SYS_set_mempolicy, mode,
                 mode == kMpolDefault ? nullptr : &mask,
                 mode == kMpolDefault ? 0 : 65);
}

bool WriteLayout(const std::string& path, uint64_t start, uint64_t bytes) {
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f) return false;
  std::fprintf(f,
               "base %" PRIx64 "\nbytes %" PRIu64
               "\nphase 0\nswitch_ns %" PRIu64 "\nhot %" PRIx64 " %" PRIx64
               "\n",
               start, bytes, MonotonicNs(), start, start + bytes);
  return std::fclose(f) == 0 && std::rename(tmp.c_str(), path.c_str()) == 0;
}

// Where each page of [start, start + n pages) is: counts per node 0..3.
void CountNodes(uint64_t start, uint64_t n, uint64_t counts[5]) {
  std::vector<void*> ptrs(n);
  std::vector<int> status(n, -1);
  for (uint64_t i = 0; i < n; ++i)
    ptrs[i] = reinterpret_cast<void*>(start + i * kPage);
  syscall(SYS_move_pages, 0, n, ptrs.data(), nullptr, status.data(), 0);
  for (int s : status) ++counts[s >= 0 && s < 4 ? s : 4];
}

struct Area {
  uint64_t* base = nullptr;
  uint64_t set_pages = 0;
  uint64_t* Page(uint64_t index) const {
    return base + index * (kPage / sizeof(uint64_t));
  }
};

std::atomic<uint64_t> g_bad{0};

// Writes page `i`: checks word 0, counts in word 1.
inline void Touch(const Area& a, uint64_t i) {
  uint64_t* p = a.Page(i);
  if (__atomic_load_n(&p[0], __ATOMIC_RELAXED) != (i ^ kSeed))
    g_bad.fetch_add(1, std::memory_order_relaxed);
  __atomic_fetch_add(&p[1], 1, __ATOMIC_RELAXED);
}

void Pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0)
    std::perror("sched_setaffinity");
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!ParseArgs(argc, argv, &o)) {
    std::fprintf(stderr,
                 "usage: locality_workload [--set_mib=4] [--a_node=1] "
                 "[--b_node=0] [--s_nodes=0,1] [--cpu0=0] "
                 "[--cpu1=1] [--layout=PREFIX] [--duration_ms=0]\n");
    return 2;
  }
  signal(SIGTERM, OnStop);
  signal(SIGINT, OnStop);
  const uint64_t set_bytes = o.set_mib << 20;
  const uint64_t total = 3 * set_bytes;
  const uint64_t align = 2u << 20;
  void* raw = mmap(nullptr, total + align, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) {
    std::perror("mmap");
    return 2;
  }
  const uint64_t start =
      (reinterpret_cast<uint64_t>(raw) + align - 1) & ~(align - 1);
  madvise(reinterpret_cast<void*>(start), total, MADV_NOHUGEPAGE);
  Area area{reinterpret_cast<uint64_t*>(start), set_bytes / kPage};
  const uint64_t n = area.set_pages;

  // First touch under the task policy, set by set; then back to default.
  struct Place {
    int mode;
    unsigned long mask;
    uint64_t first;
  };
  const Place places[3] = {{kMpolBind, 1ul << o.a_node, 0},
                           {kMpolBind, 1ul << o.b_node, n},
                           {kMpolInterleave, o.s_nodes, 2 * n}};
  for (const Place& p : places) {
    if (SetMempolicy(p.mode, p.mask) != 0) {
      std::perror("set_mempolicy");
      return 2;
    }
    for (uint64_t i = p.first; i < p.first + n; ++i) {
      uint64_t* page = area.Page(i);
      page[0] = i ^ kSeed;
      page[1] = 0;
    }
  }
  if (SetMempolicy(kMpolDefault, 0) != 0) {
    std::perror("set_mempolicy(MPOL_DEFAULT)");
    return 2;
  }
  const char* names[3] = {"A", "B", "S"};
  std::string placed = "placed:";
  for (int s = 0; s < 3; ++s) {
    uint64_t c[5] = {};
    CountNodes(start + s * set_bytes, n, c);
    char buf[128];
    std::snprintf(buf, sizeof buf,
                  " %s node0=%" PRIu64 " node1=%" PRIu64 " node2=%" PRIu64
                  " other=%" PRIu64,
                  names[s], c[0], c[1], c[2], c[3] + c[4]);
    placed += buf;
  }
  std::printf("locality_workload: pid %d, 3 sets of %" PRIu64
              " MiB at 0x%" PRIx64 "; %s\n",
              getpid(), o.set_mib, start, placed.c_str());
  std::fflush(stdout);

  std::atomic<uint64_t> writes[2] = {{0}, {0}};
  std::atomic<bool> done{false};
  auto worker = [&](int k) {
    Pin(k == 0 ? o.cpu0 : o.cpu1);
    const uint64_t own = k == 0 ? 0 : n;  // A or B
    uint64_t local = 0;
    uint64_t rng = 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(k + 1);
    while (!done.load(std::memory_order_relaxed)) {
      for (uint64_t i = 0; i < n; ++i) Touch(area, own + i);
      rng ^= rng << 13;  // xorshift64
      rng ^= rng >> 7;
      rng ^= rng << 17;
      const uint64_t first = rng % n;
      for (uint64_t i = 0; i < n; ++i) Touch(area, 2 * n + (first + i) % n);
      local += 2 * n;
      writes[k].store(local, std::memory_order_relaxed);
    }
  };
  const uint64_t t0 = MonotonicNs();
  std::thread t0_thread(worker, 0), t1_thread(worker, 1);
  // Layouts once the threads run (a checker waits for the files).
  if (!o.layout.empty()) {
    for (int s = 0; s < 3; ++s) {
      if (!WriteLayout(o.layout + "." + names[s], start + s * set_bytes,
                       set_bytes)) {
        std::perror("layout");
        g_stop = 1;
      }
    }
  }
  while (!g_stop &&
         (o.duration_ms == 0 || MonotonicNs() - t0 < o.duration_ms * 1000000))
    usleep(20000);
  done.store(true);
  t0_thread.join();
  t1_thread.join();
  const double secs = static_cast<double>(MonotonicNs() - t0) / 1e9;

  // Final check over the whole area.
  uint64_t counted = 0;
  for (uint64_t i = 0; i < 3 * n; ++i) {
    uint64_t* page = area.Page(i);
    if (page[0] != (i ^ kSeed)) g_bad.fetch_add(1);
    counted += page[1];
  }
  const uint64_t w0 = writes[0].load(), w1 = writes[1].load();
  std::printf("locality_workload: thread 0 %" PRIu64
              " writes, thread 1 %" PRIu64 " writes, %.0f writes/s, %" PRIu64
              " counted, %" PRIu64 " bad pages\n",
              w0, w1, secs > 0 ? static_cast<double>(w0 + w1) / secs : 0.0,
              counted, g_bad.load());
  if (g_bad.load() != 0 || counted != w0 + w1) {
    std::printf("locality_workload: DATA CORRUPTION (counted %" PRIu64
                " of %" PRIu64 " writes)\n",
                counted, w0 + w1);
    return 1;
  }
  return 0;
}
