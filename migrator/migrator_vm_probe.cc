// migrator_vm_probe: the guest program of //migrator:migrator_vm_test. Runs
// the live Migrator (SyscallPageMover, ProcessHandle with a pidfd on
// itself, the real clock) against its own memory on a real kernel with two
// NUMA nodes (topology dram+cxl: node 0 DRAM with the CPUs, node 1
// CPU-less):
//
//  1. promote: maps --mib MiB of 4 KiB pages on node 1 (mbind), fills them
//     with a pattern, submits one promote request per page with the default
//     options (256 MB/s, a quarter of a CPU), waits, and checks with
//     move_pages(nodes=NULL) that every page is on node 0 and the data is
//     intact;
//  2. rate limit: demotes the whole region to node 1 at --rate_mbps MB/s
//     (CPU unlimited) and checks time ~ (bytes - one burst) / rate, as a
//     ratio within a loose tolerance (TCG timing is noisy);
//  3. huge pages: when the guest gives transparent huge pages, promotes 2
//     MiB pages with ONE request (one address) each and checks all 512 4 KiB
//     parts moved;
//  5. (run before 4) a child process as the target: promotes its private
//     pages, sees -EACCES for pages it shares with us, -ENOENT for untouched
//     and -EFAULT for unmapped addresses, then the child exits while a
//     rate-limited Migrator works on it: kTargetExited, data intact;
//  4. batch sweep: pages/s for batch sizes 1, 64, 1024, 4096, both raw
//     move_pages(2) and through the Migrator, each moving pages to node 0
//     and back, best of --reps interleaved repetitions (TCG numbers on a
//     shared host: compare as ratios only).
//
// Prints "probe: ..." lines and MIGRATOR_VM_OK last; exits 0 on success,
// 1 on a failed check, 2 on bad usage, 77 when the guest cannot run it.

#include <linux/mempolicy.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "migrator/migrator.h"
#include "migrator/page_mover.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {
namespace {

constexpr size_t k4K = 4096;

struct Flags {
  int64_t mib = 64;
  int64_t rate_mbps = 32;
  int64_t sweep_pages = 4096;
  int64_t huge_pages = 8;
  int64_t warm_mib = 256;
  int64_t reps = 3;
};

bool FlagValue(absl::string_view arg, absl::string_view name, int64_t* out) {
  if (!absl::ConsumePrefix(&arg, name) || !absl::ConsumePrefix(&arg, "=")) {
    return false;
  }
  if (!absl::SimpleAtoi(arg, out) || *out <= 0) {
    std::fprintf(stderr, "probe: bad value for %s\n",
                 std::string(name).c_str());
    std::exit(2);
  }
  return true;
}

int Fail(const std::string& what) {
  std::printf("probe: FAIL: %s\n", what.c_str());
  std::fflush(stdout);
  return 1;
}

double Seconds(absl::Time since) {
  return absl::ToDoubleSeconds(absl::Now() - since);
}

// An anonymous region of `pages` pages of `page` bytes, aligned to `page`.
struct Region {
  char* base = nullptr;
  size_t len = 0;
  char* raw = nullptr;
  size_t raw_len = 0;
  ~Region() {
    if (raw != nullptr) munmap(raw, raw_len);
  }
};

bool MapRegion(Region* r, size_t len, size_t align, bool huge) {
  r->raw_len = len + align;
  void* p = mmap(nullptr, r->raw_len, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return false;
  r->raw = static_cast<char*>(p);
  const uintptr_t a =
      (reinterpret_cast<uintptr_t>(p) + align - 1) & ~(align - 1);
  r->base = reinterpret_cast<char*>(a);
  r->len = len;
  madvise(r->base, len, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  return true;
}

// Places the region's future pages on `node` (MPOL_BIND), faults them in
// with `fill`, then drops the binding so only the migrator moves them.
bool PlaceOn(const Region& r, int node, bool fill) {
  unsigned long mask = 1ul << node;
  if (syscall(SYS_mbind, r.base, r.len, MPOL_BIND, &mask, 64, 0) != 0) {
    std::printf("probe: mbind node %d: %s\n", node, std::strerror(errno));
    return false;
  }
  auto* words = reinterpret_cast<uint64_t*>(r.base);
  for (size_t i = 0; i < r.len / 8; i += fill ? 1 : k4K / 8) {
    words[i] = fill ? i * 0x9E3779B97F4A7C15ull : 1;
  }
  if (syscall(SYS_mbind, r.base, r.len, MPOL_DEFAULT, nullptr, 0, 0) != 0) {
    std::printf("probe: mbind default: %s\n", std::strerror(errno));
    return false;
  }
  return true;
}

size_t BadWords(const Region& r) {
  const auto* words = reinterpret_cast<const uint64_t*>(r.base);
  size_t bad = 0;
  for (size_t i = 0; i < r.len / 8; ++i) {
    bad += words[i] != i * 0x9E3779B97F4A7C15ull;
  }
  return bad;
}

std::vector<uint64_t> Addresses(const char* base, size_t count, size_t step) {
  std::vector<uint64_t> v(count);
  for (size_t i = 0; i < count; ++i) {
    v[i] = reinterpret_cast<uint64_t>(base) + i * step;
  }
  return v;
}

// Pages of `pages` on `node`, by move_pages(nodes=NULL); -1 on error.
long CountOnNode(const std::vector<uint64_t>& pages, int node) {
  SyscallPageMover mover;
  std::vector<int> status(pages.size(), kPageStatusUnset);
  if (mover.Query(0, pages, absl::MakeSpan(status)) != 0) return -1;
  return std::count(status.begin(), status.end(), node);
}

std::vector<MoveRequest> Requests(const std::vector<uint64_t>& pages,
                                  uint32_t bytes, int from, int to) {
  std::vector<MoveRequest> v(pages.size());
  for (size_t i = 0; i < pages.size(); ++i) {
    v[i].vaddr = pages[i];
    v[i].page_bytes = bytes;
    v[i].from_node = from;
    v[i].to_node = to;
    v[i].reason = to < from ? MoveReason::kPromote : MoveReason::kDemote;
  }
  return v;
}

// Runs a live Migrator on ourselves over `reqs`; returns its final stats
// and the wall time from the first Submit() to idle.
bool RunMigrator(const KernelFs& fs, const MigratorOptions& o,
                 const std::vector<MoveRequest>& reqs, MigratorStats* stats,
                 double* seconds) {
  auto h = ProcessHandle::Attach(getpid(), &fs);
  if (!h.ok()) {
    std::printf("probe: attach: %s\n",
                std::string(h.status().message()).c_str());
    return false;
  }
  SyscallPageMover mover;
  Migrator m(o, std::move(*h), &mover);
  if (!m.Start().ok()) return false;
  const absl::Time t0 = absl::Now();
  size_t accepted = m.Submit(reqs);
  const bool idle = m.WaitUntilIdle(absl::Seconds(120));
  *seconds = Seconds(t0);
  m.Stop();
  *stats = m.Snapshot();
  if (accepted != reqs.size() || !idle) {
    std::printf("probe: accepted %zu of %zu, idle=%d: %s\n", accepted,
                reqs.size(), idle, stats->ToString().c_str());
    return false;
  }
  return true;
}

bool ThpAvailable() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  std::getline(in, line);
  return line.find("[never]") == std::string::npos && !line.empty();
}

// AnonHugePages of the mapping that contains `addr`, in kB; -1 unknown.
long AnonHugeKb(const void* addr) {
  std::ifstream in("/proc/self/smaps");
  std::string line;
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  bool in_vma = false;
  while (std::getline(in, line)) {
    unsigned long lo, hi;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 &&
        line.find(':') > line.find(' ')) {
      in_vma = lo <= a && a < hi;
      continue;
    }
    if (in_vma && line.rfind("AnonHugePages:", 0) == 0) {
      return std::strtol(line.c_str() + 14, nullptr, 10);
    }
  }
  return -1;
}

bool Bind(const Region& r, int node) {
  unsigned long mask = 1ul << node;
  return syscall(SYS_mbind, r.base, r.len, MPOL_BIND, &mask, 64, 0) == 0;
}

void Fill(const Region& r) {
  auto* words = reinterpret_cast<uint64_t*>(r.base);
  for (size_t i = 0; i < r.len / 8; ++i) words[i] = i * 0x9E3779B97F4A7C15ull;
}

// Phase 5: a child process as the target. Its private pages are promoted
// for real; its shared pages answer -EACCES, its untouched pages -ENOENT,
// unmapped addresses -EFAULT; then it exits while a rate-limited Migrator
// is still working on it, which must end cleanly (kTargetExited), and the
// child must have seen its data intact throughout.
int ChildTargetPhase(const KernelFs& fs) {
  constexpr size_t kPrivate = 1024, kShared = 16, kUntouched = 4, kHoles = 4;
  Region priv, untouched, holes;
  if (!MapRegion(&priv, kPrivate * k4K, k4K, false) || !Bind(priv, 1) ||
      !MapRegion(&untouched, kUntouched * k4K, k4K, false) ||
      !MapRegion(&holes, kHoles * k4K, k4K, false)) {
    return Fail("child phase: mapping");
  }
  void* sh = mmap(nullptr, kShared * k4K, PROT_READ | PROT_WRITE,
                  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED) return Fail("child phase: shared mapping");
  std::memset(sh, 7, kShared * k4K);  // faulted in here, on node 0
  int ready[2], go[2];
  if (pipe(ready) != 0 || pipe(go) != 0) return Fail("child phase: pipe");
  // Unmapped last, so that no mapping made before the fork reuses the hole.
  const std::vector<uint64_t> hole_addrs = Addresses(holes.base, kHoles, k4K);
  munmap(holes.raw, holes.raw_len);
  holes.raw = nullptr;
  const pid_t child = fork();
  if (child < 0) return Fail("child phase: fork");
  if (child == 0) {
    // fork() does not copy the page tables of a shared mapping: read it so
    // that the child maps those pages too (mapcount 2: -EACCES to move).
    uint64_t sum = 0;
    for (size_t i = 0; i < kShared * k4K; i += k4K) {
      sum += static_cast<volatile char*>(sh)[i];
    }
    if (sum != 7 * kShared) _exit(5);
    Fill(priv);  // faults in on node 1 (MPOL_BIND inherited)
    syscall(SYS_mbind, priv.base, priv.len, MPOL_DEFAULT, nullptr, 0, 0);
    char c = 1;
    if (write(ready[1], &c, 1) != 1) _exit(3);
    if (read(go[0], &c, 1) != 1) _exit(4);
    _exit(BadWords(priv) == 0 ? 0 : 1);
  }
  char c;
  if (read(ready[0], &c, 1) != 1) return Fail("child phase: child not ready");
  std::vector<uint64_t> pages = Addresses(priv.base, kPrivate, k4K);
  std::vector<MoveRequest> reqs = Requests(pages, k4K, 1, 0);
  // The shared pages were faulted in by us, on node 0: ask for node 1.
  for (uint64_t a : Addresses(static_cast<char*>(sh), kShared, k4K)) {
    reqs.push_back(Requests({a}, k4K, -1, 1)[0]);
  }
  for (uint64_t a : Addresses(untouched.base, kUntouched, k4K)) {
    reqs.push_back(Requests({a}, k4K, -1, 0)[0]);
  }
  for (uint64_t a : hole_addrs) reqs.push_back(Requests({a}, k4K, -1, 0)[0]);

  auto h = ProcessHandle::Attach(child, &fs);
  if (!h.ok()) return Fail(std::string(h.status().message()));
  SyscallPageMover mover;
  MigratorStats s;
  {
    Migrator m(MigratorOptions(), std::move(*h), &mover);
    if (!m.Start().ok()) return Fail("child phase: start");
    const absl::Time t0 = absl::Now();
    if (m.Submit(reqs) != reqs.size()) return Fail("child phase: submit");
    if (!m.WaitUntilIdle(absl::Seconds(60))) return Fail("child phase: idle");
    m.Stop();
    s = m.Snapshot();
    std::printf("probe: child: pid %d, %.3f s: %s\n", child, Seconds(t0),
                s.ToString().c_str());
  }
  std::vector<int> status(kPrivate, kPageStatusUnset);
  const long q = mover.Query(child, pages, absl::MakeSpan(status));
  const long on0 = std::count(status.begin(), status.end(), 0);
  std::printf(
      "probe: child: private pages on node 0 (queried by pid): %ld of "
      "%zu; shared skipped %llu, ENOENT %llu, EFAULT %llu\n",
      q == 0 ? on0 : -1, kPrivate,
      static_cast<unsigned long long>(s.shared_skipped),
      static_cast<unsigned long long>(s.failed(ENOENT)),
      static_cast<unsigned long long>(s.failed(EFAULT)));
  if (s.promoted_pages != kPrivate || on0 != static_cast<long>(kPrivate)) {
    return Fail("child phase: private pages not promoted");
  }
  if (s.shared_skipped != kShared || s.failed(EACCES) != kShared) {
    return Fail("child phase: shared pages not skipped as EACCES");
  }
  if (s.failed(ENOENT) != kUntouched || s.failed(EFAULT) != kHoles) {
    return Fail("child phase: ENOENT/EFAULT not counted");
  }

  // The target exits while a slow Migrator demotes its pages.
  auto h2 = ProcessHandle::Attach(child, &fs);
  if (!h2.ok()) return Fail(std::string(h2.status().message()));
  MigratorOptions slow;
  slow.batch_pages = 64;
  slow.rate_limit_bytes_per_sec = 1e6;  // 2 MiB burst, then ~2 s for the rest
  Migrator m2(slow, std::move(*h2), &mover);
  if (!m2.Start().ok()) return Fail("child phase: start 2");
  m2.Submit(Requests(pages, k4K, 0, 1));
  absl::SleepFor(absl::Milliseconds(300));
  if (write(go[1], &c, 1) != 1) return Fail("child phase: release");
  const absl::Time t_exit = absl::Now();
  const bool ended = m2.WaitUntilIdle(absl::Seconds(20));
  const double reaction = Seconds(t_exit);
  int wstatus = 0;
  waitpid(child, &wstatus, 0);
  m2.Stop();
  s = m2.Snapshot();
  std::printf(
      "probe: child-exit: state=%s status=%s after %.3f s; demoted %llu of "
      "%zu, abandoned %llu; child exit code %d\n",
      MigratorStateName(s.state), m2.status().ok() ? "OK" : "error", reaction,
      static_cast<unsigned long long>(s.demoted_pages), kPrivate,
      static_cast<unsigned long long>(s.abandoned),
      WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
  if (!ended || s.state != MigratorState::kTargetExited || !m2.status().ok()) {
    return Fail("child phase: the target's exit did not end the work cleanly");
  }
  if (s.demoted_pages == 0 || s.abandoned == 0) {
    return Fail("child phase: the exit did not happen mid-run");
  }
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return Fail("child phase: the child saw its data change");
  }
  munmap(sh, kShared * k4K);
  return 0;
}

int Main(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    if (!FlagValue(argv[i], "--mib", &f.mib) &&
        !FlagValue(argv[i], "--rate_mbps", &f.rate_mbps) &&
        !FlagValue(argv[i], "--sweep_pages", &f.sweep_pages) &&
        !FlagValue(argv[i], "--huge_pages", &f.huge_pages) &&
        !FlagValue(argv[i], "--warm_mib", &f.warm_mib) &&
        !FlagValue(argv[i], "--reps", &f.reps)) {
      std::fprintf(stderr,
                   "usage: migrator_vm_probe [--mib=N] [--rate_mbps=N] "
                   "[--sweep_pages=N] [--huge_pages=N] [--warm_mib=N] "
                   "[--reps=N]\n");
      return 2;
    }
  }
  auto fs = KernelFs::Open("/");
  if (!fs.ok()) return Fail("KernelFs::Open(/)");
  if (!fs->Exists("/sys/devices/system/node/node1")) {
    std::printf("probe: SKIP: needs NUMA node 1 (run in tests/vm dram+cxl)\n");
    return 77;
  }
  auto nb = fs->ReadInt("/proc/sys/kernel/numa_balancing");
  if (nb.ok() && *nb != 0) return Fail("numa_balancing is on: it moves pages");

  // --- 0. warm the guest's memory
  // --------------------------------------------- Under TCG the first touch of
  // a guest-physical page faults in QEMU's backing memory on the host, which
  // made whichever run first used fresh frames look 2-4x slower (a CPU other
  // than the last one to free pages gets fresh frames). Touch --warm_mib on
  // each node once, with huge pages for speed, and free it.
  {
    const absl::Time t0 = absl::Now();
    for (int node : {0, 1}) {
      Region w;
      if (!MapRegion(&w, static_cast<size_t>(f.warm_mib) << 20, kHugePageBytes,
                     true) ||
          !PlaceOn(w, node, false)) {
        return Fail("warming the guest memory");
      }
    }
    std::printf("probe: warmed %lld MiB per node in %.2f s\n",
                static_cast<long long>(f.warm_mib), Seconds(t0));
  }

  // --- 1. promote every page, default limits ---------------------------------
  const size_t pages = static_cast<size_t>(f.mib) * (1 << 20) / k4K;
  Region r;
  if (!MapRegion(&r, pages * k4K, k4K, false)) return Fail("mmap");
  if (!PlaceOn(r, 1, true)) return Fail("placing the region on node 1");
  const std::vector<uint64_t> addrs = Addresses(r.base, pages, k4K);
  if (CountOnNode(addrs, 1) != static_cast<long>(pages)) {
    return Fail("the region is not all on node 1 after mbind");
  }
  std::printf("probe: %zu pages (%lld MiB) on node 1\n", pages,
              static_cast<long long>(f.mib));

  MigratorOptions defaults;  // 256 MB/s, 0.25 CPU, batch 1024
  defaults.queue_capacity = std::max(pages, defaults.queue_capacity);
  MigratorStats s;
  double secs = 0;
  if (!RunMigrator(*fs, defaults, Requests(addrs, k4K, 1, 0), &s, &secs)) {
    return Fail("promotion run");
  }
  const long on0 = CountOnNode(addrs, 0);
  std::printf("probe: promote: %s\n", s.ToString().c_str());
  std::printf(
      "probe: promote: %zu pages in %.3f s = %.0f pages/s, %.1f MB/s; "
      "cpu %.3f s = %.2f of a CPU (budget %.2f); pages on node 0: %ld\n",
      pages, secs, pages / secs, pages * k4K / secs / 1e6,
      absl::ToDoubleSeconds(s.cpu_time),
      absl::ToDoubleSeconds(s.cpu_time) / secs, defaults.cpu_budget, on0);
  if (s.promoted_pages != pages) return Fail("not every page was promoted");
  // The budget is enforced on the thread's own CPU clock: allow the first
  // burst (the budget over kMigratorCpuWindow) and rounding.
  const double cpu_burst =
      defaults.cpu_budget * absl::ToDoubleSeconds(kMigratorCpuWindow);
  if ((absl::ToDoubleSeconds(s.cpu_time) - cpu_burst) / secs >
      1.6 * defaults.cpu_budget) {
    return Fail("the migrator thread overran its CPU budget");
  }
  if (on0 != static_cast<long>(pages)) return Fail("pages not on node 0");
  if (const size_t bad = BadWords(r); bad != 0) {
    return Fail(absl::StrCat(bad, " words changed by the migration"));
  }
  std::printf("probe: promote: data intact (%zu words checked)\n", r.len / 8);

  // --- 2. rate limit
  // -----------------------------------------------------------
  MigratorOptions limited;
  limited.rate_limit_bytes_per_sec = f.rate_mbps * 1e6;
  limited.cpu_budget = 0;
  limited.queue_capacity = pages;
  if (!RunMigrator(*fs, limited, Requests(addrs, k4K, 0, 1), &s, &secs)) {
    return Fail("rate-limited demotion run");
  }
  const double bytes = static_cast<double>(pages) * k4K;
  const double burst = std::max({limited.rate_limit_bytes_per_sec * 0.05,
                                 static_cast<double>(limited.batch_pages) * k4K,
                                 2.0 * (1 << 20)});
  const double expect = (bytes - burst) / limited.rate_limit_bytes_per_sec;
  const double ratio = secs / expect;
  std::printf("probe: rate: %s\n", s.ToString().c_str());
  std::printf(
      "probe: rate: demoted %.1f MiB at limit %lld MB/s in %.3f s; expected "
      "%.3f s (bytes - %.1f MiB burst) / rate; ratio %.3f; achieved %.1f "
      "MB/s\n",
      bytes / 1048576, static_cast<long long>(f.rate_mbps), secs, expect,
      burst / 1048576, ratio, bytes / secs / 1e6);
  if (s.demoted_pages != pages ||
      CountOnNode(addrs, 1) != static_cast<long>(pages)) {
    return Fail("rate-limited demotion did not move every page");
  }
  if (ratio < 0.8 || ratio > 1.6) {
    return Fail("rate limit not honoured within [0.8, 1.6] x expected");
  }
  if (BadWords(r) != 0) return Fail("data changed by the demotion");

  // --- 3. transparent huge pages
  // ----------------------------------------------
  if (!ThpAvailable()) {
    std::printf("probe: thp: SKIP: transparent huge pages disabled\n");
  } else {
    Region h;
    const size_t n = static_cast<size_t>(f.huge_pages);
    if (!MapRegion(&h, n * kHugePageBytes, kHugePageBytes, true)) {
      return Fail("mmap huge");
    }
    if (!PlaceOn(h, 1, true)) return Fail("placing huge pages on node 1");
    const long kb = AnonHugeKb(h.base);
    if (kb < static_cast<long>(n * 2048)) {
      std::printf("probe: thp: SKIP: only %ld kB of AnonHugePages\n", kb);
    } else {
      const std::vector<uint64_t> huge = Addresses(h.base, n, kHugePageBytes);
      const std::vector<uint64_t> small =
          Addresses(h.base, n * kHugePageBytes / k4K, k4K);
      if (!RunMigrator(*fs, defaults, Requests(huge, kHugePageBytes, 1, 0), &s,
                       &secs)) {
        return Fail("huge page run");
      }
      const long moved = CountOnNode(small, 0);
      std::printf(
          "probe: thp: %zu huge pages (%ld kB AnonHugePages), %zu requests, "
          "%zu pages named in move calls; 4 KiB parts now on node 0: %ld of "
          "%zu; %s\n",
          n, kb, n, static_cast<size_t>(s.pages_attempted), moved, small.size(),
          s.ToString().c_str());
      if (s.promoted_pages != n || s.promoted_bytes != n * kHugePageBytes) {
        return Fail("huge pages not accounted as 2 MiB moves");
      }
      if (moved != static_cast<long>(small.size())) {
        return Fail("a huge page did not move as a whole");
      }
      if (BadWords(h) != 0) return Fail("huge page data changed");
    }
  }

  // --- 5. another process as the target
  // ----------------------------------------
  if (int rc = ChildTargetPhase(*fs); rc != 0) return rc;

  // --- 4. pages/s by batch size
  // ------------------------------------------------ Each measurement moves the
  // pages 1 -> 0 and back 0 -> 1 (the two directions differ in cost: node 1 has
  // no CPU), raw and then through the Migrator, and reports pages moved / total
  // time. The host running QEMU is shared, so the batch sizes are interleaved
  // over --reps repetitions and the best of each is kept.
  const size_t full_sweep = std::min(static_cast<size_t>(f.sweep_pages), pages);
  std::printf(
      "probe: sweep: %zu pages per direction (64 at batch 1), 1 -> 0 "
      "and back, raw move_pages(2) and the Migrator (no rate limit, "
      "no CPU budget), best of %lld\n",
      full_sweep, static_cast<long long>(f.reps));
  // Pin to CPU 0 (threads created from here on inherit it): the raw calls
  // run on the main thread, the Migrator's on its own; with both on one
  // CPU neither pays cross-CPU TLB shootdowns the other does not (under
  // TCG an IPI waits for the other vCPU's host thread: milliseconds).
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  const bool pinned = sched_setaffinity(0, sizeof(one), &one) == 0;
  std::printf("probe: sweep: pinned to CPU 0: %s\n", pinned ? "yes" : "no");
  const std::vector<size_t> batches = {1, 64, 1024, 4096};
  std::vector<double> best_raw(batches.size(), 0), best_mig(batches.size(), 0);
  for (int64_t rep = 0; rep < f.reps; ++rep) {
    for (size_t bi = 0; bi < batches.size(); ++bi) {
      const size_t batch = batches[bi];
      // One page per call costs milliseconds under TCG (every move call
      // starts with lru_cache_disable(): an RCU grace period and a drain of
      // every CPU's LRU caches): fewer pages there.
      const size_t sweep =
          batch == 1 ? std::min<size_t>(full_sweep, 64) : full_sweep;
      const std::vector<uint64_t> part(addrs.begin(), addrs.begin() + sweep);
      // Raw move_pages(2), `batch` pages per call, there and back.
      SyscallPageMover mover;
      std::vector<int> status(sweep, kPageStatusUnset);
      const absl::Time t0 = absl::Now();
      for (int to : {0, 1}) {
        std::vector<int> nodes(sweep, to);
        for (size_t i = 0; i < sweep; i += batch) {
          const size_t n = std::min(batch, sweep - i);
          if (mover.Move(0, absl::MakeConstSpan(&part[i], n),
                         absl::MakeConstSpan(&nodes[i], n),
                         absl::MakeSpan(&status[i], n)) != 0) {
            return Fail("raw move_pages in the sweep");
          }
        }
      }
      const double raw = 2.0 * sweep / Seconds(t0);
      if (CountOnNode(part, 1) != static_cast<long>(sweep)) {
        return Fail("raw sweep left pages behind");
      }
      // The Migrator with `batch` pages per call, there and back.
      MigratorOptions o;
      o.rate_limit_bytes_per_sec = 0;
      o.cpu_budget = 0;
      o.batch_pages = batch;
      o.queue_capacity = sweep;
      double mig_secs = 0;
      uint64_t move_calls = 0, query_calls = 0;
      for (int to : {0, 1}) {
        if (!RunMigrator(*fs, o, Requests(part, k4K, 1 - to, to), &s, &secs)) {
          return Fail("migrator sweep run");
        }
        if (s.moved_pages() != sweep) return Fail("migrator sweep left pages");
        mig_secs += secs;
        move_calls += s.move_calls;
        query_calls += s.query_calls;
      }
      const double mig = 2.0 * sweep / mig_secs;
      best_raw[bi] = std::max(best_raw[bi], raw);
      best_mig[bi] = std::max(best_mig[bi], mig);
      std::printf(
          "probe: sweep: rep=%lld batch=%zu pages=2x%zu raw=%.0f pages/s "
          "migrator=%.0f pages/s (move calls %llu, query calls %llu)\n",
          static_cast<long long>(rep), batch, sweep, raw, mig,
          static_cast<unsigned long long>(move_calls),
          static_cast<unsigned long long>(query_calls));
    }
  }
  for (size_t bi = 0; bi < batches.size(); ++bi) {
    std::printf(
        "probe: sweep-best: batch=%zu raw=%.0f pages/s migrator=%.0f pages/s "
        "raw/raw@1024=%.3f migrator/migrator@1024=%.3f migrator/raw=%.2f\n",
        batches[bi], best_raw[bi], best_mig[bi], best_raw[bi] / best_raw[2],
        best_mig[bi] / best_mig[2], best_mig[bi] / best_raw[bi]);
  }
  // The one robust conclusion on a noisy host: calls of one page are far
  // slower per page than calls of 1024 (measured 11x on an idle host,
  // 100x+ on a busy one).
  if (best_mig[2] < 3 * best_mig[0] || best_raw[2] < 3 * best_raw[0]) {
    return Fail("batch 1024 is not clearly faster than batch 1");
  }
  if (BadWords(r) != 0) return Fail("data changed by the sweep");

  std::printf("MIGRATOR_VM_OK\n");
  return 0;
}

}  // namespace
}  // namespace hotpage

int main(int argc, char** argv) { return hotpage::Main(argc, argv); }
