// attach_vm_check: ground-truth probe for the `hotpage attach` VM test.
// Reads hot_set_workload's --layout file and asks the kernel
// (move_pages with nodes=NULL) where the workload's pages are.
//
//   attach_vm_check wait90 PID LAYOUT NODE TIMEOUT_S
//       waits until >= 90% of the current hot set is on NODE; prints
//       "RESULT phase=K hot_pages=N on_node=M fraction=F t90_s=T" where T is
//       the time since the phase's switch (or since the start for phase 0),
//       or exits 1 with the last fraction on timeout.
//       NODE may be a list ("0,1": on any of them).
//   attach_vm_check count PID LAYOUT
//       prints "COUNT node0=A node1=B other=C" over the whole area.
//   attach_vm_check counthot PID LAYOUT
//       the same over the current hot set only.
//   attach_vm_check selfmem PID NODE
//       where PID's own anonymous memory is (/proc/PID/numa_maps, the
//       ranges with anonymous pages and no file: heap, stacks, mmaps) and
//       which policy each of its threads has (/proc/PID/task/TID/
//       numa_maps: its first range, which has no range policy, shows the
//       thread's). Prints "SELFMEM anon_pages=T on_node=M fraction=F
//       by_node=0:A,1:B threads=K threads_preferring=J policies=P": J
//       threads have a policy whose nodes include NODE; P lists each
//       thread's policy once ("prefer:1*9" for nine threads).
//   attach_vm_check fill NODE LEAVE_MB
//       another process's memory: binds (MPOL_BIND) and touches all but
//       LEAVE_MB of NODE's free memory, prints "FILLED N MiB", then sleeps
//       until killed. Makes a fast node short of memory on purpose.

#include <dirent.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/base/clock.h"
#include "tools/base/kernel/numa_maps.h"

using hotpage::MonotonicNs;

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
    if (key == "base")
      in >> std::hex >> out.base >> std::dec;
    else if (key == "bytes")
      in >> out.bytes;
    else if (key == "phase")
      in >> out.phase;
    else if (key == "switch_ns")
      in >> out.switch_ns;
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

std::vector<int> Where(int pid, const std::vector<uint64_t>& pages) {
  std::vector<void*> ptrs;
  for (uint64_t p : pages) ptrs.push_back(reinterpret_cast<void*>(p));
  std::vector<int> status(pages.size(), -1);
  if (syscall(SYS_move_pages, pid, ptrs.size(), ptrs.data(), nullptr,
              status.data(), 0) != 0) {
    std::perror("move_pages");
  }
  return status;
}

}  // namespace

uint64_t NodeFreeKb(int node) {
  std::ifstream in("/sys/devices/system/node/node" + std::to_string(node) +
                   "/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    size_t at = line.find("MemFree:");
    if (at != std::string::npos)
      return std::strtoull(line.c_str() + at + 8, nullptr, 10);
  }
  return 0;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The policy as numa_maps prints it ("prefer (many):1", "default").
std::string PolicyText(const hotpage::NumaMapsRange& r) {
  std::string out = hotpage::MempolicyModeName(r.mode);
  if (!r.nodes.empty()) {
    out += ':';
    for (size_t i = 0; i < r.nodes.size(); ++i)
      out += (i ? "," : "") + std::to_string(r.nodes[i]);
  }
  return out;
}

int SelfMem(int pid, int node) {
  absl::StatusOr<std::vector<hotpage::NumaMapsRange>> ranges =
      hotpage::ParseNumaMaps(
          ReadAll("/proc/" + std::to_string(pid) + "/numa_maps"));
  if (!ranges.ok() || ranges->empty()) {
    std::printf("SELFMEM unreadable\n");
    return 2;
  }
  std::map<int, uint64_t> by_node;
  uint64_t total = 0;
  for (const hotpage::NumaMapsRange& r : *ranges) {
    if (!r.anon || !r.file.empty()) continue;
    for (auto [n, pages] : r.pages_on_node) {
      const uint64_t small = pages * (r.page_size / 4096);
      by_node[n] += small;
      total += small;
    }
  }
  int threads = 0, preferring = 0;
  std::map<std::string, int> policies;
  const std::string task_dir = "/proc/" + std::to_string(pid) + "/task";
  if (DIR* d = opendir(task_dir.c_str())) {
    while (const dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      absl::StatusOr<std::vector<hotpage::NumaMapsRange>> t =
          hotpage::ParseNumaMaps(
              ReadAll(task_dir + "/" + e->d_name + "/numa_maps"));
      if (!t.ok() || t->empty()) continue;
      ++threads;
      const hotpage::NumaMapsRange& first = t->front();
      ++policies[PolicyText(first)];
      if (std::find(first.nodes.begin(), first.nodes.end(), node) !=
          first.nodes.end())
        ++preferring;
    }
    closedir(d);
  }
  std::string nodes, pols;
  for (auto [n, pages] : by_node)
    nodes += (nodes.empty() ? "" : ",") + std::to_string(n) + ":" +
             std::to_string(pages);
  for (const auto& [p, k] : policies)
    pols += (pols.empty() ? "" : ";") + p + "*" + std::to_string(k);
  const uint64_t on = by_node.count(node) ? by_node[node] : 0;
  std::printf(
      "SELFMEM anon_pages=%llu on_node=%llu fraction=%.3f by_node=%s "
      "threads=%d threads_preferring=%d policies=%s\n",
      static_cast<unsigned long long>(total),
      static_cast<unsigned long long>(on),
      total ? static_cast<double>(on) / static_cast<double>(total) : 0.0,
      nodes.c_str(), threads, preferring, pols.c_str());
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 4 && std::strcmp(argv[1], "selfmem") == 0)
    return SelfMem(std::atoi(argv[2]), std::atoi(argv[3]));
  if (argc >= 4 && std::strcmp(argv[1], "fill") == 0) {
    const int node = std::atoi(argv[2]);
    const uint64_t leave = std::strtoull(argv[3], nullptr, 10) << 20;
    const uint64_t free_bytes = NodeFreeKb(node) << 10;
    if (free_bytes <= leave) {
      std::printf("FILLED 0 MiB\n");
    } else {
      const uint64_t bytes = (free_bytes - leave) & ~uint64_t{4095};
      void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      unsigned long mask = 1UL << node;
      if (p == MAP_FAILED ||
          syscall(SYS_mbind, p, bytes, 2 /* MPOL_BIND */, &mask, 64, 0) != 0) {
        std::perror("fill");
        return 2;
      }
      for (uint64_t off = 0; off < bytes; off += 4096)
        static_cast<volatile char*>(p)[off] = 1;
      std::printf("FILLED %llu MiB\n",
                  static_cast<unsigned long long>(bytes >> 20));
    }
    std::fflush(stdout);
    for (;;) pause();
  }
  if (argc >= 6 && std::strcmp(argv[1], "wait90") == 0) {
    const int pid = std::atoi(argv[2]);
    std::vector<int> nodes;
    for (const char* p = argv[4]; *p != '\0';) {
      char* end = nullptr;
      nodes.push_back(static_cast<int>(std::strtol(p, &end, 10)));
      p = *end == ',' ? end + 1 : end;
      if (end == p && *p != '\0') break;
    }
    const double timeout = std::atof(argv[5]);
    const uint64_t start = MonotonicNs();
    double fraction = 0;
    Layout l;
    while (static_cast<double>(MonotonicNs() - start) / 1e9 < timeout) {
      if (ReadLayout(argv[3], &l)) {
        std::vector<uint64_t> pages;
        for (auto [a, b] : l.hot) {
          for (uint64_t p = a; p < b; p += 4096) pages.push_back(p);
        }
        std::vector<int> st = Where(pid, pages);
        size_t on = 0;
        for (int s : st)
          on += std::find(nodes.begin(), nodes.end(), s) != nodes.end();
        fraction = static_cast<double>(on) / static_cast<double>(pages.size());
        if (fraction >= 0.9) {
          const uint64_t since = l.phase == 0 ? start : l.switch_ns;
          std::printf("RESULT phase=%" PRIu64
                      " hot_pages=%zu on_node=%zu fraction=%.3f t90_s=%.2f\n",
                      l.phase, pages.size(), on, fraction,
                      static_cast<double>(MonotonicNs() - since) / 1e9);
          return 0;
        }
      }
      usleep(200000);
    }
    std::printf("TIMEOUT phase=%" PRIu64 " fraction=%.3f after %.0f s\n",
                l.phase, fraction, timeout);
    return 1;
  }
  if (argc >= 4 && (std::strcmp(argv[1], "count") == 0 ||
                    std::strcmp(argv[1], "counthot") == 0)) {
    Layout l;
    if (!ReadLayout(argv[3], &l)) return 2;
    std::vector<uint64_t> pages;
    if (std::strcmp(argv[1], "count") == 0) {
      for (uint64_t p = l.base; p < l.base + l.bytes; p += 4096)
        pages.push_back(p);
    } else {
      for (auto [a, b] : l.hot) {
        for (uint64_t p = a; p < b; p += 4096) pages.push_back(p);
      }
    }
    std::vector<int> st = Where(std::atoi(argv[2]), pages);
    size_t n0 = 0, n1 = 0, other = 0;
    for (int s : st) (s == 0 ? n0 : s == 1 ? n1 : other)++;
    std::printf("COUNT node0=%zu node1=%zu other=%zu\n", n0, n1, other);
    return 0;
  }
  std::fprintf(
      stderr,
      "usage: attach_vm_check wait90 PID LAYOUT NODE[,NODE] TIMEOUT_S "
      "| count PID LAYOUT | counthot PID LAYOUT | selfmem PID NODE | fill "
      "NODE LEAVE_MB\n");
  return 2;
}
