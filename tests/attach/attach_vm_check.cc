// attach_vm_check: ground-truth probe for the `hotpage attach` VM test.
// Reads hot_set_workload's --layout file and asks the kernel
// (move_pages with nodes=NULL) where the workload's pages are.
//
//   attach_vm_check wait90 PID LAYOUT NODE TIMEOUT_S
//       waits until >= 90% of the current hot set is on NODE; prints
//       "RESULT phase=K hot_pages=N on_node=M fraction=F t90_s=T" where T is
//       the time since the phase's switch (or since the start for phase 0),
//       or exits 1 with the last fraction on timeout.
//   attach_vm_check count PID LAYOUT
//       prints "COUNT node0=A node1=B other=C" over the whole area.

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Layout {
  uint64_t base = 0, bytes = 0, phase = 0, switch_ns = 0;
  std::vector<std::pair<uint64_t, uint64_t>> hot;
};

bool ReadLayout(const char* path, Layout* l) {
  std::ifstream in(path);
  if (!in) return false;
  std::string key;
  Layout out;
  while (in >> key) {
    if (key == "base") in >> std::hex >> out.base >> std::dec;
    else if (key == "bytes") in >> out.bytes;
    else if (key == "phase") in >> out.phase;
    else if (key == "switch_ns") in >> out.switch_ns;
    else if (key == "hot") {
      uint64_t a, b;
      in >> std::hex >> a >> b >> std::dec;
      out.hot.emplace_back(a, b);
    } else {
      std::string rest;
      std::getline(in, rest);
    }
  }
  if (out.base == 0 || out.hot.empty()) return false;
  *l = out;
  return true;
}

uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

std::vector<int> Where(int pid, const std::vector<uint64_t>& pages) {
  std::vector<void*> ptrs;
  for (uint64_t p : pages) ptrs.push_back(reinterpret_cast<void*>(p));
  std::vector<int> status(pages.size(), -1);
  if (syscall(SYS_move_pages, pid, ptrs.size(), ptrs.data(), nullptr, status.data(), 0) != 0) {
    std::perror("move_pages");
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 6 && std::strcmp(argv[1], "wait90") == 0) {
    const int pid = std::atoi(argv[2]);
    const int node = std::atoi(argv[4]);
    const double timeout = std::atof(argv[5]);
    const uint64_t start = NowNs();
    double fraction = 0;
    Layout l;
    while (static_cast<double>(NowNs() - start) / 1e9 < timeout) {
      if (ReadLayout(argv[3], &l)) {
        std::vector<uint64_t> pages;
        for (auto [a, b] : l.hot) {
          for (uint64_t p = a; p < b; p += 4096) pages.push_back(p);
        }
        std::vector<int> st = Where(pid, pages);
        size_t on = 0;
        for (int s : st) on += s == node;
        fraction = static_cast<double>(on) / static_cast<double>(pages.size());
        if (fraction >= 0.9) {
          const uint64_t since = l.phase == 0 ? start : l.switch_ns;
          std::printf("RESULT phase=%" PRIu64 " hot_pages=%zu on_node=%zu fraction=%.3f t90_s=%.2f\n", l.phase,
                      pages.size(), on, fraction, static_cast<double>(NowNs() - since) / 1e9);
          return 0;
        }
      }
      usleep(200000);
    }
    std::printf("TIMEOUT phase=%" PRIu64 " fraction=%.3f after %.0f s\n", l.phase, fraction, timeout);
    return 1;
  }
  if (argc >= 4 && std::strcmp(argv[1], "count") == 0) {
    Layout l;
    if (!ReadLayout(argv[3], &l)) return 2;
    std::vector<uint64_t> pages;
    for (uint64_t p = l.base; p < l.base + l.bytes; p += 4096) pages.push_back(p);
    std::vector<int> st = Where(std::atoi(argv[2]), pages);
    size_t n0 = 0, n1 = 0, other = 0;
    for (int s : st) (s == 0 ? n0 : s == 1 ? n1 : other)++;
    std::printf("COUNT node0=%zu node1=%zu other=%zu\n", n0, n1, other);
    return 0;
  }
  std::fprintf(stderr, "usage: attach_vm_check wait90 PID LAYOUT NODE TIMEOUT_S | count PID LAYOUT\n");
  return 2;
}
