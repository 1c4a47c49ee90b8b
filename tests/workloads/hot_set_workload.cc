// hot_set_workload: a process with a known, switchable hot set, for testing
// samplers and placement on a real kernel (tests/vm guests).
//
// It maps --mib MiB of anonymous memory (2 MiB aligned), writes every page,
// then keeps touching a hot set of --clusters contiguous clusters of
// --cluster_mib MiB each, as fast as it can. On SIGUSR1 (or after
// --switch_after_ms) it switches to a second, disjoint hot set, and back on
// the next switch. Cluster placement: the area is cut into --clusters equal
// stripes; set A's cluster sits a quarter into each stripe, set B's three
// quarters in, so the sets never touch each other and are spread over the
// whole area (regions of DAMON must be split to isolate them).
//
// Ground truth for checkers: --layout FILE is rewritten atomically (temp +
// rename) at start and after every switch:
//   base 0x7f...        first byte of the area
//   bytes N             its size
//   phase K             0 = set A, 1 = set B, 2 = A again, ...
//   switch_ns T         CLOCK_MONOTONIC of the switch into this phase
//   hot START END       one line per cluster of the current set, [START, END)
//
// Data check: every page holds its index (xor a seed) in word 0, verified
// on every hot touch and over the whole area at exit; word 1 counts that
// page's hot touches, and their sum must equal the touches made. Exit
// status 0 = data intact, 1 = corruption (printed), 2 = usage or setup error.
// SIGTERM/SIGINT or --duration_ms end the run (with the final check).
//
// Options: --mib=192 --clusters=8 --cluster_mib=2 --layout=FILE
//   --switch_after_ms=0 (0: only on SIGUSR1) --duration_ms=0 (0: until a
//   signal) --pass_sleep_ms=0 (each thread sleeps this long after every
//   pass over its hot pages: a colder workload with the same hot set)
//   --sleep_on_usr2 (the pauses start when SIGUSR2 arrives: a workload
//   that cools down)
//   --thp=default|never|always (madvise) --bind_node=-1 (mbind the
//   area to one node before it is touched; for placement tests)
//   --prefer_node=-1 (the same with MPOL_PREFERRED: the pages start on that
//   node, but the policy allows moving them; for promotion tests)
//   --bind_range_mib=0 --bind_range_node=1 (a second, separate area of that
//   size, MPOL_BIND to that node before it is touched, and touched in full
//   on every pass of thread 0: hot pages that no placement may move; the
//   layout file then has a line `bind START END NODE`)
//   --then_prefer_many=N,M,... (after the first touch, set the area's policy
//   to MPOL_PREFERRED_MANY over these nodes without moving anything: a
//   `prefer (many)` range in numa_maps, for target-mask tests)
//   --weighted_interleave=N,M,... (MPOL_WEIGHTED_INTERLEAVE over these nodes
//   before the first touch; weights from /sys/kernel/mm/mempolicy/
//   weighted_interleave/nodeN; for interleave-ratio tests)
//   --threads=N (default 1) touching threads; thread K owns the clusters
//   with index % N == K (interleaved shape: the hot pages in 2 MiB groups
//   g with g % N == K); with N > 1 the layout is also written per thread
//   to LAYOUT.tK. --pin pins thread K to CPU K (mod the CPU count), so
//   threads run in different packages on a multi-package guest.
//   --shape=clusters|interleaved (interleaved: the hot set is one page in
//   --stride=8 over the whole area, set A the pages with index % stride ==
//   0, set B those with index % stride == stride / 2: a hot set DAMON's
//   regions cannot isolate; the layout file then has one `hot` line per
//   hot page)
//   --then_default (after the first touch, reset the area's policy to the
//   default without moving anything: the pages stay where --prefer_node put
//   them, but the kernel's NUMA balancing scans the range again -- it skips
//   every VMA whose policy lacks MPOL_F_MOF, which an mbind without
//   MPOL_F_NUMA_BALANCING never has; for hint-fault tests)
//   --start_delay_ms=0 (sleep this long before mapping and touching
//   anything: a process that grows while a tool already watches it; the
//   layout file comes after the first touch, as always)
//   --trace_out=FILE --trace_period=N (N >= 1) write the workload's own
//   access stream, sampled like PEBS, as an .hpt trace (sampler/trace/
//   trace_format.h): every Nth access of each touching thread to the area
//   becomes one Sample (vaddr, time_ns CLOCK_MONOTONIC, pid, tid, cpu from
//   sched_getcpu or 0, period N). The workload is deterministic, so the
//   trace is exactly what it did. Pick N coprime with the hot set's size
//   (6144 = 2^11 x 3 in tests/compare: a prime), or every pass samples the
//   same pages. Not sampled: the first-touch pass (mechanisms under test
//   are switched on after it, and it only places the pages: `hotpage
//   simulate --first-touch-node` does that) and the bind range (no
//   mechanism may move it; the kernel's balancing never scans it). Cost off
//   the hot loop: each thread fills a preallocated buffer of
//   --trace_max_samples / threads compact records (16 bytes, touched before
//   the run); the hot loop only counts down and, once per N, stores; the
//   main thread encodes and writes the trace after the workers end. A full
//   buffer stops that thread's sampling (counted as lost, printed). The
//   header's event_config holds the period and the phase switch times
//   ("hot_set_workload period=N start_ns=T switch_ns=T1,T2,... pte_ns=C",
//   CLOCK_MONOTONIC), which the comparison uses to split it into phases,
//   and C, the measured cost of changing one PTE's protection (see
//   MeasurePteNs).

#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "sampler/sample.h"
#include "sampler/trace/trace_writer.h"
#include "tools/base/clock.h"

using hotpage::CpuCounters;
using hotpage::kSampleStore;
using hotpage::kUnknownCpu;
using hotpage::MonotonicNs;
using hotpage::RealtimeNs;
using hotpage::Sample;
using hotpage::SampleSource;
using hotpage::SampleSourceName;
using hotpage::TraceHeader;
using hotpage::TraceWriter;

namespace {

volatile sig_atomic_t g_switch = 0;
volatile sig_atomic_t g_stop = 0;

void OnSwitch(int) { g_switch = 1; }
// Set by SIGUSR2 when --pass_sleep_ms is to start then (--sleep_on_usr2);
// read by the workers (a lock-free atomic: safe in a handler, no race).
std::atomic<bool> g_sleep_on{false};
void OnSleep(int) { g_sleep_on.store(true, std::memory_order_relaxed); }
void OnStop(int) { g_stop = 1; }

struct Options {
  uint64_t mib = 192;
  uint64_t clusters = 8;
  uint64_t cluster_mib = 2;
  std::string layout;
  uint64_t switch_after_ms = 0;
  uint64_t duration_ms = 0;
  uint64_t pass_sleep_ms = 0;
  uint64_t start_delay_ms = 0;
  bool sleep_on_usr2 = false;
  std::string thp = "default";
  int bind_node = -1;
  int prefer_node = -1;
  unsigned long then_prefer_many = 0;     // node mask
  unsigned long weighted_interleave = 0;  // node mask
  bool then_default = false;
  bool interleaved = false;
  uint64_t stride = 8;
  uint64_t threads = 1;
  bool pin = false;
  uint64_t bind_range_mib = 0;
  int bind_range_node = 1;
  std::string trace_out;
  uint64_t trace_period = 0;  // 0: no trace
  uint64_t trace_max_samples = uint64_t{1} << 22;
};

// One sampled access, compact so the per-thread buffers stay small (16
// bytes; the Sample it becomes is 64). pid and period are the same for all.
struct TraceRecord {
  uint64_t time_ns;
  uint32_t page;  // index in the area
  uint16_t cpu;
  uint16_t thread;  // index of the touching thread
};
static_assert(sizeof(TraceRecord) == 16);

// A thread's sampler: every `period`th access is stored in a buffer
// allocated and touched before the run (no allocation, no page fault and
// no system call on the hot loop but the clock and sched_getcpu, both
// vDSO on x86-64, once per period).
class AccessSampler {
 public:
  AccessSampler() = default;
  void Init(uint64_t period, uint64_t capacity, uint16_t thread) {
    period_ = period;
    countdown_ = period;
    thread_ = thread;
    buf_.assign(capacity, TraceRecord{0, 0, 0, 0});  // touches every page
  }
  // One access to area page `page`.
  void Access(uint64_t page) {
    if (period_ == 0 || --countdown_ != 0) return;
    countdown_ = period_;
    if (n_ == buf_.size()) {
      ++dropped_;
      return;
    }
    const int cpu = sched_getcpu();
    buf_[n_++] = TraceRecord{MonotonicNs(), static_cast<uint32_t>(page),
                             static_cast<uint16_t>(cpu < 0 ? 0 : cpu), thread_};
  }
  const TraceRecord* begin() const { return buf_.data(); }
  const TraceRecord* end() const { return buf_.data() + n_; }
  uint64_t dropped() const { return dropped_; }

 private:
  uint64_t period_ = 0, countdown_ = 0;
  uint16_t thread_ = 0;
  std::vector<TraceRecord> buf_;
  size_t n_ = 0;
  uint64_t dropped_ = 0;
};

bool ParseFlag(const char* arg, const char* name, std::string* out) {
  const size_t n = std::strlen(name);
  if (std::strncmp(arg, name, n) != 0 || arg[n] != '=') return false;
  *out = arg + n + 1;
  return true;
}

bool ParseU64(const std::string& s, uint64_t* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

// "N,M,..." (nodes 0..63) as a node mask.
bool ParseNodeMask(const std::string& s, unsigned long* mask) {
  *mask = 0;
  size_t pos = 0;
  for (;;) {
    const size_t comma = s.find(',', pos);
    uint64_t n;
    if (!ParseU64(s.substr(pos, comma == std::string::npos ? std::string::npos
                                                           : comma - pos),
                  &n) ||
        n > 63) {
      return false;
    }
    *mask |= 1UL << n;
    if (comma == std::string::npos) return true;
    pos = comma + 1;
  }
}

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr,
               "hot_set_workload: %s (see the header of hot_set_workload.cc)\n",
               why);
  std::exit(2);
}

constexpr uint64_t kPage = 4096;
constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kSeed = 0x5eed5eed5eed5eedULL;

// First page index of cluster i of set `which` (0 = A, 1 = B).
uint64_t ClusterStartPage(const Options& o, uint64_t i, int which) {
  const uint64_t area_pages = o.mib * kMiB / kPage;
  const uint64_t stripe = area_pages / o.clusters;
  const uint64_t cluster_pages = o.cluster_mib * kMiB / kPage;
  const uint64_t offset = which == 0 ? stripe / 4 : 3 * stripe / 4;
  // Align to the cluster size so that a 2 MiB cluster is one huge page.
  uint64_t p = i * stripe + offset;
  p -= p % cluster_pages;
  return p;
}

// The page indices of hot set `which` (0 = A, 1 = B), in touch order.
std::vector<uint64_t> HotPages(const Options& o, int which) {
  std::vector<uint64_t> out;
  const uint64_t area_pages = o.mib * kMiB / kPage;
  if (o.interleaved) {
    const uint64_t first = which == 0 ? 0 : o.stride / 2;
    for (uint64_t p = first; p < area_pages; p += o.stride) out.push_back(p);
    return out;
  }
  const uint64_t cluster_pages = o.cluster_mib * kMiB / kPage;
  for (uint64_t i = 0; i < o.clusters; ++i) {
    const uint64_t start = ClusterStartPage(o, i, which);
    for (uint64_t p = start; p < start + cluster_pages; ++p) out.push_back(p);
  }
  return out;
}

// The part of hot set `which` that thread `index` touches.
std::vector<uint64_t> ThreadHotPages(const Options& o, int which,
                                     uint64_t index) {
  std::vector<uint64_t> all = HotPages(o, which);
  if (o.threads == 1) return all;
  std::vector<uint64_t> out;
  if (o.interleaved) {
    for (uint64_t p : all) {
      if ((p / 512) % o.threads == index) out.push_back(p);
    }
    return out;
  }
  const uint64_t cluster_pages = o.cluster_mib * kMiB / kPage;
  for (size_t i = 0; i < all.size(); ++i) {
    if ((i / cluster_pages) % o.threads == index) out.push_back(all[i]);
  }
  return out;
}

void WriteLayoutFile(const std::string& path, const std::vector<uint64_t>& hot,
                     const Options& o, uint8_t* base, uint8_t* bind_range,
                     uint64_t phase, uint64_t switch_ns) {
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) {
    std::perror("hot_set_workload: layout");
    std::exit(2);
  }
  const uint64_t b = reinterpret_cast<uint64_t>(base);
  std::fprintf(f,
               "base 0x%" PRIx64 "\nbytes %" PRIu64 "\nphase %" PRIu64
               "\nswitch_ns %" PRIu64 "\n",
               b, o.mib * kMiB, phase, switch_ns);
  if (bind_range != nullptr) {
    const uint64_t r = reinterpret_cast<uint64_t>(bind_range);
    std::fprintf(f, "bind 0x%" PRIx64 " 0x%" PRIx64 " %d\n", r,
                 r + o.bind_range_mib * kMiB, o.bind_range_node);
  }
  // Hot pages as maximal runs of consecutive pages.
  for (size_t i = 0; i < hot.size();) {
    size_t j = i + 1;
    while (j < hot.size() && hot[j] == hot[j - 1] + 1) ++j;
    const uint64_t s = b + hot[i] * kPage;
    std::fprintf(f, "hot 0x%" PRIx64 " 0x%" PRIx64 "\n", s,
                 s + (j - i) * kPage);
    i = j;
  }
  if (std::fclose(f) != 0 || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::perror("hot_set_workload: layout");
    std::exit(2);
  }
}

// Per-thread files first, so a checker that sees the main file's new phase
// finds the thread files of that phase too.
void WriteLayout(const Options& o, uint8_t* base, uint8_t* bind_range,
                 uint64_t phase, uint64_t switch_ns) {
  if (o.layout.empty()) return;
  const int which = static_cast<int>(phase % 2);
  if (o.threads > 1) {
    for (uint64_t k = 0; k < o.threads; ++k) {
      WriteLayoutFile(o.layout + ".t" + std::to_string(k),
                      ThreadHotPages(o, which, k), o, base, bind_range, phase,
                      switch_ns);
    }
  }
  WriteLayoutFile(o.layout, HotPages(o, which), o, base, bind_range, phase,
                  switch_ns);
}

std::atomic<uint64_t> g_phase{0};
std::atomic<bool> g_done{false};

struct WorkerStats {
  uint64_t touches = 0, passes = 0, bad = 0;
};

// Touches thread `index`'s part of the current hot set until g_done.
void Worker(const Options& o, uint8_t* base, uint8_t* bind_range,
            uint64_t index, WorkerStats* st, AccessSampler* sampler,
            std::atomic<uint32_t>* tid) {
  tid->store(static_cast<uint32_t>(syscall(SYS_gettid)),
             std::memory_order_relaxed);
  const uint64_t bind_pages =
      index == 0 && bind_range != nullptr ? o.bind_range_mib * kMiB / kPage : 0;
  if (o.pin) {
    const long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(
        static_cast<int>(index % static_cast<uint64_t>(ncpu > 0 ? ncpu : 1)),
        &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0)
      std::perror("hot_set_workload: sched_setaffinity");
  }
  uint64_t seen = ~uint64_t{0};
  std::vector<uint64_t> hot;
  while (!g_done.load(std::memory_order_relaxed)) {
    const uint64_t phase = g_phase.load(std::memory_order_acquire);
    if (phase != seen) {
      hot = ThreadHotPages(o, static_cast<int>(phase % 2), index);
      seen = phase;
    }
    for (uint64_t p : hot) {
      uint64_t* w = reinterpret_cast<uint64_t*>(base + p * kPage);
      if (w[0] != (p ^ kSeed)) ++st->bad;
      ++w[1];
      ++st->touches;
      sampler->Access(p);
    }
    for (uint64_t p = 0; p < bind_pages; ++p) {
      uint64_t* w = reinterpret_cast<uint64_t*>(bind_range + p * kPage);
      if (w[0] != (p ^ ~kSeed)) ++st->bad;
      ++w[1];
    }
    ++st->passes;
    if (o.pass_sleep_ms != 0 &&
        (!o.sleep_on_usr2 || g_sleep_on.load(std::memory_order_relaxed))) {
      // A colder workload: the same pages, touched once per pass, with a
      // pause after each pass (short sleeps, so a stop is seen promptly).
      for (uint64_t ms = 0;
           ms < o.pass_sleep_ms && !g_done.load(std::memory_order_relaxed);
           ms += 10) {
        const struct timespec ten_ms = {0, 10 * 1000 * 1000};
        nanosleep(&ten_ms, nullptr);
      }
    }
  }
}

// This machine's cost of changing one PTE's protection, in ns: the kernel's
// change_protection() over the whole area twice (mprotect to read-only and
// back), the work the NUMA scanner's change_prot_numa() does per PTE. The
// simulator's tpp model uses it for the scanner's 3% CPU cap (it matters
// under emulation, where it is ~1000x a server's). 0 if mprotect fails.
uint64_t MeasurePteNs(uint8_t* base, const Options& o) {
  const uint64_t bytes = o.mib * kMiB;
  const uint64_t t0 = MonotonicNs();
  if (mprotect(base, bytes, PROT_READ) != 0 ||
      mprotect(base, bytes, PROT_READ | PROT_WRITE) != 0) {
    return 0;
  }
  return (MonotonicNs() - t0) / (2 * (bytes / kPage));
}

// Writes every thread's sampled accesses, merged in time order, as an .hpt
// trace (called once, after the workers ended).
absl::Status WriteTrace(const Options& o, uint8_t* base,
                        const std::vector<AccessSampler>& samplers,
                        const std::vector<std::atomic<uint32_t>>& tids,
                        uint64_t start_realtime_ns, uint64_t start_clock_ns,
                        uint64_t run_start_ns,
                        const std::vector<uint64_t>& switch_ns,
                        uint64_t pte_ns) {
  std::vector<TraceRecord> all;
  uint64_t dropped = 0;
  for (const AccessSampler& s : samplers) {
    all.insert(all.end(), s.begin(), s.end());
    dropped += s.dropped();
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const TraceRecord& a, const TraceRecord& b) {
                     return a.time_ns < b.time_ns;
                   });
  TraceHeader header;
  header.sample_period = o.trace_period;
  header.start_realtime_ns = start_realtime_ns;
  header.start_clock_ns = start_clock_ns;
  header.source = SampleSourceName(SampleSource::kPebsStore);
  std::string config =
      "hot_set_workload period=" + std::to_string(o.trace_period) +
      " start_ns=" + std::to_string(run_start_ns) + " switch_ns=";
  for (size_t i = 0; i < switch_ns.size(); ++i) {
    if (i != 0) config += ',';
    config += std::to_string(switch_ns[i]);
  }
  config += " pte_ns=" + std::to_string(pte_ns);
  header.event_config = config;
  absl::StatusOr<std::unique_ptr<TraceWriter>> w =
      TraceWriter::Create(o.trace_out, header);
  if (!w.ok()) return w.status();
  const uint32_t pid = static_cast<uint32_t>(getpid());
  for (const TraceRecord& r : all) {
    Sample s;
    s.time_ns = r.time_ns;
    // The hot loop reads word 0 and writes word 1 of the page.
    s.vaddr = reinterpret_cast<uint64_t>(base) + r.page * kPage + 8;
    s.period = o.trace_period;
    s.pid = pid;
    s.tid = tids[r.thread].load(std::memory_order_relaxed);
    s.cpu = r.cpu;
    s.source = SampleSource::kPebsStore;
    s.flags = kSampleStore;
    if (absl::Status st = (*w)->Append(s); !st.ok()) return st;
  }
  if (dropped != 0) {
    CpuCounters c;
    c.cpu = kUnknownCpu;
    c.lost = dropped;
    if (absl::Status st = (*w)->SetCounters(c); !st.ok()) return st;
  }
  if (absl::Status st = (*w)->Close(); !st.ok()) return st;
  std::printf("hot_set_workload: trace %s: %zu samples, period %" PRIu64
              ", %" PRIu64 " dropped%s\n",
              o.trace_out.c_str(), all.size(), o.trace_period, dropped,
              dropped != 0
                  ? " (buffer full: raise --trace_max_samples or the period)"
                  : "");
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string v;
    const char* a = argv[i];
    if (ParseFlag(a, "--mib", &v)) {
      if (!ParseU64(v, &o.mib) || o.mib == 0) Usage("bad --mib");
    } else if (ParseFlag(a, "--clusters", &v)) {
      if (!ParseU64(v, &o.clusters) || o.clusters == 0) Usage("bad --clusters");
    } else if (ParseFlag(a, "--cluster_mib", &v)) {
      if (!ParseU64(v, &o.cluster_mib) || o.cluster_mib == 0)
        Usage("bad --cluster_mib");
    } else if (ParseFlag(a, "--layout", &v)) {
      o.layout = v;
    } else if (ParseFlag(a, "--switch_after_ms", &v)) {
      if (!ParseU64(v, &o.switch_after_ms)) Usage("bad --switch_after_ms");
    } else if (ParseFlag(a, "--duration_ms", &v)) {
      if (!ParseU64(v, &o.duration_ms)) Usage("bad --duration_ms");
    } else if (std::strcmp(a, "--sleep_on_usr2") == 0) {
      o.sleep_on_usr2 = true;
    } else if (ParseFlag(a, "--pass_sleep_ms", &v)) {
      if (!ParseU64(v, &o.pass_sleep_ms) || o.pass_sleep_ms > 3600000)
        Usage("bad --pass_sleep_ms (0..3600000)");
    } else if (ParseFlag(a, "--thp", &v)) {
      if (v != "default" && v != "never" && v != "always") Usage("bad --thp");
      o.thp = v;
    } else if (ParseFlag(a, "--bind_node", &v)) {
      uint64_t n;
      if (!ParseU64(v, &n) || n > 63) Usage("bad --bind_node");
      o.bind_node = static_cast<int>(n);
    } else if (ParseFlag(a, "--weighted_interleave", &v)) {
      if (!ParseNodeMask(v, &o.weighted_interleave))
        Usage("bad --weighted_interleave");
    } else if (ParseFlag(a, "--then_prefer_many", &v)) {
      if (!ParseNodeMask(v, &o.then_prefer_many))
        Usage("bad --then_prefer_many");
    } else if (std::strcmp(a, "--then_default") == 0) {
      o.then_default = true;
    } else if (ParseFlag(a, "--shape", &v)) {
      if (v != "clusters" && v != "interleaved")
        Usage("bad --shape (clusters or interleaved)");
      o.interleaved = v == "interleaved";
    } else if (ParseFlag(a, "--threads", &v)) {
      if (!ParseU64(v, &o.threads) || o.threads == 0 || o.threads > 64)
        Usage("bad --threads (1..64)");
    } else if (std::strcmp(a, "--pin") == 0) {
      o.pin = true;
    } else if (ParseFlag(a, "--stride", &v)) {
      if (!ParseU64(v, &o.stride) || o.stride < 2)
        Usage("bad --stride (at least 2)");
    } else if (ParseFlag(a, "--bind_range_mib", &v)) {
      if (!ParseU64(v, &o.bind_range_mib)) Usage("bad --bind_range_mib");
    } else if (ParseFlag(a, "--bind_range_node", &v)) {
      uint64_t n;
      if (!ParseU64(v, &n) || n > 63) Usage("bad --bind_range_node");
      o.bind_range_node = static_cast<int>(n);
    } else if (ParseFlag(a, "--trace_out", &v)) {
      o.trace_out = v;
    } else if (ParseFlag(a, "--trace_period", &v)) {
      if (!ParseU64(v, &o.trace_period) || o.trace_period == 0)
        Usage("bad --trace_period (at least 1)");
    } else if (ParseFlag(a, "--trace_max_samples", &v)) {
      if (!ParseU64(v, &o.trace_max_samples) || o.trace_max_samples == 0)
        Usage("bad --trace_max_samples");
    } else if (ParseFlag(a, "--start_delay_ms", &v)) {
      if (!ParseU64(v, &o.start_delay_ms) || o.start_delay_ms > 600000)
        Usage("bad --start_delay_ms");
    } else if (ParseFlag(a, "--prefer_node", &v)) {
      uint64_t n;
      if (!ParseU64(v, &n) || n > 63) Usage("bad --prefer_node");
      o.prefer_node = static_cast<int>(n);
    } else {
      Usage("unknown argument");
    }
  }
  if (o.trace_out.empty() != (o.trace_period == 0))
    Usage("--trace_out and --trace_period go together");
  // Two sets of clusters in stripes: each half-stripe must hold a cluster.
  if (!o.interleaved && o.mib / o.clusters < 4 * o.cluster_mib) {
    Usage("--mib / --clusters must be at least 4 x --cluster_mib");
  }

  if (o.start_delay_ms != 0) {
    struct timespec ts;
    ts.tv_sec = static_cast<time_t>(o.start_delay_ms / 1000);
    ts.tv_nsec = static_cast<long>(o.start_delay_ms % 1000) * 1000000;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !g_stop) {
    }
  }
  const uint64_t bytes = o.mib * kMiB;
  const uint64_t align = 2 * kMiB;
  void* raw = mmap(nullptr, bytes + align, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) {
    std::perror("hot_set_workload: mmap");
    return 2;
  }
  uint8_t* base = reinterpret_cast<uint8_t*>(
      (reinterpret_cast<uint64_t>(raw) + align - 1) & ~(align - 1));
  if (o.thp == "never") madvise(base, bytes, MADV_NOHUGEPAGE);
  if (o.thp == "always") madvise(base, bytes, MADV_HUGEPAGE);
  if (o.bind_node >= 0) {
    unsigned long mask = 1UL << o.bind_node;
    constexpr int kMpolBind = 2;
    if (syscall(SYS_mbind, base, bytes, kMpolBind, &mask, 64, 0) != 0) {
      std::perror("hot_set_workload: mbind");
      return 2;
    }
  }
  if (o.prefer_node >= 0) {
    unsigned long mask = 1UL << o.prefer_node;
    constexpr int kMpolPreferred = 1;
    if (syscall(SYS_mbind, base, bytes, kMpolPreferred, &mask, 64, 0) != 0) {
      std::perror("hot_set_workload: mbind MPOL_PREFERRED");
      return 2;
    }
  }
  if (o.weighted_interleave != 0) {
    unsigned long mask = o.weighted_interleave;
    constexpr int kMpolWeightedInterleave = 6;
    if (syscall(SYS_mbind, base, bytes, kMpolWeightedInterleave, &mask, 64,
                0) != 0) {
      std::perror("hot_set_workload: mbind MPOL_WEIGHTED_INTERLEAVE");
      return 2;
    }
  }
  // The bind range: its own mapping, bound before its first touch.
  uint8_t* bind_range = nullptr;
  const uint64_t bind_pages = o.bind_range_mib * kMiB / kPage;
  if (bind_pages != 0) {
    void* r = mmap(nullptr, bind_pages * kPage, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (r == MAP_FAILED) {
      std::perror("hot_set_workload: mmap bind range");
      return 2;
    }
    bind_range = static_cast<uint8_t*>(r);
    madvise(bind_range, bind_pages * kPage, MADV_NOHUGEPAGE);
    unsigned long mask = 1UL << o.bind_range_node;
    constexpr int kMpolBind = 2;
    if (syscall(SYS_mbind, bind_range, bind_pages * kPage, kMpolBind, &mask, 64,
                0) != 0) {
      std::perror("hot_set_workload: mbind bind range");
      return 2;
    }
    for (uint64_t p = 0; p < bind_pages; ++p) {
      uint64_t* w = reinterpret_cast<uint64_t*>(bind_range + p * kPage);
      w[0] = p ^ ~kSeed;
      w[1] = 0;
    }
  }
  const uint64_t pages = bytes / kPage;
  // Samplers, one per touching thread, allocated (and touched) before
  // anything is timed.
  const uint64_t trace_start_realtime_ns = RealtimeNs();
  const uint64_t trace_start_ns = MonotonicNs();
  std::vector<AccessSampler> samplers(o.threads);
  if (o.trace_period != 0) {
    for (uint64_t k = 0; k < o.threads; ++k)
      samplers[k].Init(o.trace_period, o.trace_max_samples / o.threads,
                       static_cast<uint16_t>(k));
  }
  for (uint64_t p = 0; p < pages; ++p) {
    uint64_t* w = reinterpret_cast<uint64_t*>(base + p * kPage);
    w[0] = p ^ kSeed;
    w[1] = 0;
  }

  if (o.then_prefer_many != 0) {
    constexpr int kMpolPreferredMany = 5;
    unsigned long mask = o.then_prefer_many;
    if (syscall(SYS_mbind, base, bytes, kMpolPreferredMany, &mask, 64, 0) !=
        0) {
      std::perror("hot_set_workload: mbind MPOL_PREFERRED_MANY");
      return 2;
    }
  }

  if (o.then_default) {
    constexpr int kMpolDefault = 0;
    if (syscall(SYS_mbind, base, bytes, kMpolDefault, nullptr, 0, 0) != 0) {
      std::perror("hot_set_workload: mbind MPOL_DEFAULT");
      return 2;
    }
  }

  struct sigaction sa = {};
  sa.sa_handler = OnSwitch;
  sigaction(SIGUSR1, &sa, nullptr);
  sa.sa_handler = OnSleep;
  sigaction(SIGUSR2, &sa, nullptr);
  sa.sa_handler = OnStop;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);

  const uint64_t start_ns = MonotonicNs();
  uint64_t phase = 0;
  uint64_t phase_ns = start_ns;
  WriteLayout(o, base, bind_range, phase, phase_ns);
  if (o.interleaved) {
    std::printf("hot_set_workload: pid %d, %" PRIu64
                " MiB at %p, hot set interleaved, one page in %" PRIu64 "\n",
                static_cast<int>(getpid()), o.mib, static_cast<void*>(base),
                o.stride);
  } else {
    std::printf("hot_set_workload: pid %d, %" PRIu64 " MiB at %p, %" PRIu64
                " clusters of %" PRIu64 " MiB\n",
                static_cast<int>(getpid()), o.mib, static_cast<void*>(base),
                o.clusters, o.cluster_mib);
  }
  std::fflush(stdout);

  // Worker threads touch; this thread switches phases and ends the run.
  std::vector<WorkerStats> stats(o.threads);
  std::vector<std::atomic<uint32_t>> tids(o.threads);
  std::vector<uint64_t> switch_ns;  // the phase switches, for the trace
  switch_ns.reserve(64);
  std::vector<std::thread> workers;
  for (uint64_t k = 0; k < o.threads; ++k)
    workers.emplace_back(Worker, std::cref(o), base, bind_range, k, &stats[k],
                         &samplers[k], &tids[k]);
  while (!g_stop) {
    timespec tick = {0, 1000000};
    nanosleep(&tick, nullptr);
    const uint64_t now = MonotonicNs();
    if (o.duration_ms != 0 && now - start_ns >= o.duration_ms * 1000000u) break;
    if (g_switch || (o.switch_after_ms != 0 &&
                     now - phase_ns >= o.switch_after_ms * 1000000u)) {
      g_switch = 0;
      ++phase;
      phase_ns = now;
      if (switch_ns.size() < switch_ns.capacity()) switch_ns.push_back(now);
      WriteLayout(o, base, bind_range, phase, phase_ns);
      g_phase.store(phase, std::memory_order_release);
    }
  }
  g_done.store(true, std::memory_order_relaxed);
  for (std::thread& t : workers) t.join();
  uint64_t touches = 0, passes = 0, bad = 0;
  for (const WorkerStats& st : stats) {
    touches += st.touches;
    passes += st.passes;
    bad += st.bad;
  }

  uint64_t counted = 0;
  for (uint64_t p = 0; p < pages; ++p) {
    const uint64_t* w = reinterpret_cast<const uint64_t*>(base + p * kPage);
    if (w[0] != (p ^ kSeed)) ++bad;
    counted += w[1];
  }
  for (uint64_t p = 0; p < bind_pages; ++p) {
    const uint64_t* w =
        reinterpret_cast<const uint64_t*>(bind_range + p * kPage);
    if (w[0] != (p ^ ~kSeed) || w[1] != stats[0].passes) ++bad;
  }
  std::printf("hot_set_workload: %" PRIu64 " passes, %" PRIu64
              " phases, %" PRIu64 " touches, %" PRIu64 " counted, %" PRIu64
              " bad pages\n",
              passes, phase + 1, touches, counted, bad);
  if (o.trace_period != 0) {
    const absl::Status st =
        WriteTrace(o, base, samplers, tids, trace_start_realtime_ns,
                   trace_start_ns, start_ns, switch_ns, MeasurePteNs(base, o));
    if (!st.ok()) {
      std::fprintf(stderr, "hot_set_workload: trace %s: %s\n",
                   o.trace_out.c_str(), std::string(st.message()).c_str());
      return 2;
    }
  }
  if (bad != 0 || counted != touches) {
    std::printf("hot_set_workload: DATA CORRUPTED\n");
    return 1;
  }
  return 0;
}
