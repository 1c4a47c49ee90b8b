// numa_probe: the VM harness's smoke-test program. Run inside the guest, it
// proves that a dynamically linked C++ program with its ldd closure runs, and
// that page migration works on a real kernel:
//
//   1. counts NUMA nodes (libnuma and /sys/devices/system/node/online);
//   2. maps --pages anonymous pages, binds them to --from (libnuma) and
//      touches them;
//   3. move_pages(2) with nodes=NULL: every page must be on --from;
//   4. move_pages(2) to --to: every status must be --to;
//   5. move_pages(2) with nodes=NULL again and /proc/self/numa_maps: every
//      page must now be on --to.
//
// Usage: numa_probe [--pages=N] [--from=NODE] [--to=NODE] [--expect_nodes=N]
// Prints "numa_probe: ..." lines and "NUMA_PROBE_OK" last; exits 0 on success,
// 1 on a failed check, 2 on bad usage.

#include <numa.h>
#include <numaif.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace hotpage {
namespace {

struct Options {
  long pages = 64;
  int from = 0;
  int to = 1;
  int expect_nodes = -1;  // -1: do not check
};

bool ParseFlag(const char* arg, const char* name, long* value) {
  size_t n = std::strlen(name);
  if (std::strncmp(arg, name, n) != 0 || arg[n] != '=') return false;
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(arg + n + 1, &end, 10);
  if (errno != 0 || end == arg + n + 1 || *end != '\0' || v < 0) {
    std::fprintf(stderr, "numa_probe: bad value in %s\n", arg);
    std::exit(2);
  }
  *value = v;
  return true;
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    long v = 0;
    if (ParseFlag(argv[i], "--pages", &v) && v > 0 && v <= (1 << 20)) {
      o.pages = v;
    } else if (ParseFlag(argv[i], "--from", &v)) {
      o.from = static_cast<int>(v);
    } else if (ParseFlag(argv[i], "--to", &v)) {
      o.to = static_cast<int>(v);
    } else if (ParseFlag(argv[i], "--expect_nodes", &v)) {
      o.expect_nodes = static_cast<int>(v);
    } else {
      std::fprintf(stderr,
                   "usage: numa_probe [--pages=N (1..1048576)] [--from=NODE] "
                   "[--to=NODE] [--expect_nodes=N]\n");
      std::exit(2);
    }
  }
  return o;
}

int Fail(const char* what) {
  std::printf("numa_probe: FAIL: %s\n", what);
  return 1;
}

long MovePages(unsigned long count, void** pages, const int* nodes, int* status,
               int flags) {
  return syscall(SYS_move_pages, 0, count, pages, nodes, status, flags);
}

// Pages of `pages` whose status is not `node`; prints the first few.
long CountNotOn(const std::vector<int>& status, int node, const char* when) {
  long bad = 0;
  for (size_t i = 0; i < status.size(); ++i) {
    if (status[i] == node) continue;
    if (bad < 4) {
      std::printf("numa_probe: %s: page %zu status %d, want node %d\n", when, i,
                  status[i], node);
    }
    ++bad;
  }
  return bad;
}

double MicrosSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now() - start)
      .count();
}

int Main(int argc, char** argv) {
  const Options opt = ParseArgs(argc, argv);
  if (numa_available() < 0)
    return Fail("numa_available() < 0: no NUMA support");

  std::string online;
  {
    std::ifstream in("/sys/devices/system/node/online");
    std::getline(in, online);
  }
  const int configured = numa_num_configured_nodes();
  std::printf("numa_probe: nodes=%d online=%s max_node=%d\n", configured,
              online.c_str(), numa_max_node());
  if (opt.expect_nodes >= 0 && configured != opt.expect_nodes) {
    return Fail("unexpected number of nodes");
  }
  if (opt.from > numa_max_node() || opt.to > numa_max_node()) {
    return Fail("--from/--to names a node that does not exist");
  }

  const long page_size = sysconf(_SC_PAGESIZE);
  const size_t len = static_cast<size_t>(opt.pages) * page_size;
  void* region = mmap(nullptr, len, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (region == MAP_FAILED) return Fail("mmap");
  // A huge page would move as one 2 MiB unit; keep this about 4 KiB pages.
  madvise(region, len, MADV_NOHUGEPAGE);
  numa_tonode_memory(region, len, opt.from);
  auto* bytes = static_cast<volatile char*>(region);
  for (size_t off = 0; off < len; off += page_size) bytes[off] = 1;

  std::vector<void*> pages(opt.pages);
  for (long i = 0; i < opt.pages; ++i) {
    pages[i] = static_cast<char*>(region) + i * page_size;
  }
  std::vector<int> status(opt.pages, -1);

  if (MovePages(pages.size(), pages.data(), nullptr, status.data(), 0) != 0) {
    std::printf("numa_probe: move_pages query: %s\n", std::strerror(errno));
    return Fail("move_pages(nodes=NULL) before the move");
  }
  if (CountNotOn(status, opt.from, "before") != 0) {
    return Fail("pages are not on --from after binding and touching");
  }
  std::printf("numa_probe: %ld pages on node %d before the move\n", opt.pages,
              opt.from);

  std::vector<int> targets(opt.pages, opt.to);
  std::fill(status.begin(), status.end(), -1);
  auto start = std::chrono::steady_clock::now();
  long rc = MovePages(pages.size(), pages.data(), targets.data(), status.data(),
                      MPOL_MF_MOVE);
  const double move_us = MicrosSince(start);
  if (rc < 0) {
    std::printf("numa_probe: move_pages: %s\n", std::strerror(errno));
    return Fail("move_pages(MPOL_MF_MOVE)");
  }
  if (rc > 0)
    std::printf("numa_probe: move_pages left %ld pages unmoved\n", rc);
  if (CountNotOn(status, opt.to, "move status") != 0) {
    return Fail("move_pages status is not --to for every page");
  }
  std::printf("numa_probe: moved %ld pages %d -> %d in %.0f us\n", opt.pages,
              opt.from, opt.to, move_us);

  std::fill(status.begin(), status.end(), -1);
  if (MovePages(pages.size(), pages.data(), nullptr, status.data(), 0) != 0) {
    return Fail("move_pages(nodes=NULL) after the move");
  }
  if (CountNotOn(status, opt.to, "after") != 0) {
    return Fail("pages are not on --to after the move");
  }
  std::printf("numa_probe: verified %ld pages on node %d\n", opt.pages, opt.to);

  // The same fact as /proc/self/numa_maps shows it: "N<to>=<pages>".
  char prefix[32];
  std::snprintf(prefix, sizeof(prefix), "%lx ",
                reinterpret_cast<unsigned long>(region));
  const std::string want =
      "N" + std::to_string(opt.to) + "=" + std::to_string(opt.pages);
  std::ifstream maps("/proc/self/numa_maps");
  std::string line;
  bool found = false;
  while (std::getline(maps, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    std::printf("numa_probe: numa_maps: %s\n", line.c_str());
    found = (" " + line + " ").find(" " + want + " ") != std::string::npos;
    break;
  }
  if (!found) return Fail("/proc/self/numa_maps does not show the move");

  munmap(region, len);
  std::printf("NUMA_PROBE_OK\n");
  return 0;
}

}  // namespace
}  // namespace hotpage

int main(int argc, char** argv) { return hotpage::Main(argc, argv); }
