// damon_vm_check: drives DamonSource against a real kernel (tests/vm guest)
// and checks what it sees against hot_set_workload's ground truth.
//
//   --mode=track   run the workload, find its hot set, switch it, time how
//                  long until the new set is found, Stop(), then start again
//                  and let the workload exit mid-run; after both: no kdamond
//                  left (nr_kdamonds 0, no kdamond thread in /proc)
//   --mode=hold    monitor --pid until SIGTERM/SIGINT; the signal is turned
//                  into DamonSource::TeardownAll() on an ordinary thread
//                  (TerminationSignalThread); exit 0 once torn down, 3 when
//                  the target exited first (and the source tore down)
//   --mode=refuse  Start() must refuse because nr_kdamonds != 0
//
// Options (track): --workload=PATH --mib=192 --clusters=8 --cluster_mib=2
//   --phase_timeout_ms=20000 --detect_timeout_ms=20000 (limits to find the
//   first set, and the second after the switch; phase A ends 3 refreshes
//   after the first set is found, so that the times do not depend on how
//   loaded the host is, only the limits do) --min_recall=0.9 (to call a hot
//   set found) --min_precision=0.7 (required 5 refreshes after the new set
//   was found: right at the switch the old set still counts as hot for an
//   interval or two, as it should) --hot_fraction=0.5 (a region is "hot"
//   when nr_accesses >= hot_fraction x N; the clusters are touched
//   continuously and show about N, the rest is never touched after the
//   start and shows 0)
//   --sample_us --aggr_us --min_regions --max_regions (DamonOptions)
//   --verbose (one line per poll)
// Output: "damon_vm_check: ..." lines and one summary line
//   DAMON-VM-RESULT phase_a_detect_s=.. switch_detect_s=.. refreshes=..
//   precision=.. recall=.. chunk_precision=.. chunk_recall=..
// Exit status 0 when every check passed.

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
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

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "sampler/damon/damon_source.h"
#include "tools/base/clock.h"
#include "tools/base/termination_signals.h"

namespace hotpage {
namespace {

constexpr char kNrKdamonds[] =
    "/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds";
constexpr char kLayout[] = "/tmp/hot_set_layout.txt";

struct Flags {
  std::string mode = "track";
  std::string workload = "/bin/hot_set_workload";
  int pid = 0;
  uint64_t mib = 192, clusters = 8, cluster_mib = 2;
  uint64_t phase_timeout_ms = 20000, detect_timeout_ms = 20000;
  double min_recall = 0.9, min_precision = 0.7, hot_fraction = 0.5;
  DamonOptions damon;
  bool verbose = false;
};

double Secs(uint64_t ns) { return static_cast<double>(ns) / 1e9; }

int failures = 0;
void Fail(const std::string& what) {
  std::printf("damon_vm_check: FAIL: %s\n", what.c_str());
  std::fflush(stdout);
  ++failures;
}

struct Layout {
  uint64_t base = 0, bytes = 0, phase = 0, switch_ns = 0;
  std::vector<std::pair<uint64_t, uint64_t>> hot;  // [start, end), sorted
  uint64_t hot_bytes() const {
    uint64_t b = 0;
    for (auto& [s, e] : hot) b += e - s;
    return b;
  }
};

bool ReadLayout(Layout* out) {
  std::ifstream in(kLayout);
  if (!in) return false;
  Layout l;
  std::string key;
  while (in >> key) {
    if (key == "base") {
      in >> std::hex >> l.base >> std::dec;
    } else if (key == "bytes") {
      in >> l.bytes;
    } else if (key == "phase") {
      in >> l.phase;
    } else if (key == "switch_ns") {
      in >> l.switch_ns;
    } else if (key == "hot") {
      uint64_t s, e;
      in >> std::hex >> s >> e >> std::dec;
      l.hot.emplace_back(s, e);
    } else {
      return false;
    }
  }
  if (l.hot.empty() || l.base == 0) return false;
  std::sort(l.hot.begin(), l.hot.end());
  *out = l;
  return true;
}

uint64_t OverlapWithHot(const Layout& l, uint64_t s, uint64_t e) {
  uint64_t o = 0;
  for (auto& [hs, he] : l.hot) {
    const uint64_t a = std::max(s, hs), b = std::min(e, he);
    if (a < b) o += b - a;
  }
  return o;
}

struct Score {
  double precision = 0, recall = 0;              // region level, bytes
  double chunk_precision = 0, chunk_recall = 0;  // Sample level, chunks
  size_t regions = 0, hot_regions = 0;
};

Score Evaluate(const DamonSource& src,
               const std::map<uint64_t, uint32_t>& chunk_counts,
               const Layout& l, double hot_fraction) {
  Score s;
  const uint32_t thr =
      static_cast<uint32_t>(hot_fraction * src.max_nr_accesses() + 0.5);
  uint64_t hot_bytes = 0, tp = 0;
  for (const DamonRegion& r : src.regions()) {
    ++s.regions;
    if (r.nr_accesses < thr) continue;
    ++s.hot_regions;
    hot_bytes += r.bytes();
    tp += OverlapWithHot(l, r.start, r.end);
  }
  s.recall = static_cast<double>(tp) / static_cast<double>(l.hot_bytes());
  s.precision =
      hot_bytes ? static_cast<double>(tp) / static_cast<double>(hot_bytes) : 0;
  // Chunk level: what the hotness table would see.
  const uint64_t chunk = src.options().chunk_bytes;
  size_t hot_chunks = 0, hot_in_set = 0;
  for (auto& [c, count] : chunk_counts) {
    if (count < thr) continue;
    ++hot_chunks;
    if (OverlapWithHot(l, c, c + chunk) == chunk) ++hot_in_set;
  }
  const double set_chunks = static_cast<double>(l.hot_bytes() / chunk);
  s.chunk_recall = set_chunks > 0 ? hot_in_set / set_chunks : 0;
  s.chunk_precision =
      hot_chunks ? static_cast<double>(hot_in_set) / hot_chunks : 0;
  return s;
}

// One refresh with data; fills per-chunk counts (chunk start -> Samples).
// An update that returned no region (DamonStats::empty_updates) is polled
// again, at most 3 times.
absl::Status PollOnce(DamonSource& src, std::map<uint64_t, uint32_t>* chunks) {
  const uint64_t mask = ~(src.options().chunk_bytes - 1);
  for (int attempt = 0;; ++attempt) {
    chunks->clear();
    auto n = src.Poll([&](absl::Span<const Sample> batch) {
      for (const Sample& s : batch) ++(*chunks)[s.vaddr & mask];
    });
    if (!n.ok() || !src.regions().empty() || attempt >= 3) return n.status();
  }
}

// nr_kdamonds reads 0 and no kernel thread is named kdamond*.
void CheckNoKdamond(const char* when) {
  std::ifstream in(kNrKdamonds);
  std::string nr;
  in >> nr;
  if (nr != "0")
    Fail(absl::StrCat(when, ": nr_kdamonds reads '", nr, "', want 0"));
  // The kdamond thread exits asynchronously after `off`; allow it 2 s.
  for (int tries = 0;; ++tries) {
    std::vector<std::string> found;
    DIR* d = opendir("/proc");
    while (dirent* e = d ? readdir(d) : nullptr) {
      if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
      std::ifstream c(absl::StrCat("/proc/", e->d_name, "/comm"));
      std::string comm;
      std::getline(c, comm);
      if (comm.rfind("kdamond", 0) == 0)
        found.push_back(absl::StrCat(e->d_name, ":", comm));
    }
    if (d) closedir(d);
    if (found.empty()) {
      std::printf("damon_vm_check: %s: nr_kdamonds 0, no kdamond thread\n",
                  when);
      return;
    }
    if (tries >= 20) {
      Fail(absl::StrCat(when, ": kdamond thread(s) left: ", found[0]));
      return;
    }
    usleep(100000);
  }
}

pid_t SpawnWorkload(const Flags& f) {
  unlink(kLayout);
  pid_t pid = fork();
  if (pid == 0) {
    std::string a1 = absl::StrCat("--mib=", f.mib),
                a2 = absl::StrCat("--clusters=", f.clusters),
                a3 = absl::StrCat("--cluster_mib=", f.cluster_mib),
                a4 = absl::StrCat("--layout=", kLayout);
    execl(f.workload.c_str(), f.workload.c_str(), a1.c_str(), a2.c_str(),
          a3.c_str(), a4.c_str(), static_cast<char*>(nullptr));
    std::perror("exec workload");
    _exit(127);
  }
  return pid;
}

bool WaitLayout(uint64_t phase, Layout* l, uint64_t timeout_ms) {
  const uint64_t deadline = MonotonicNs() + timeout_ms * 1000000u;
  while (MonotonicNs() < deadline) {
    if (ReadLayout(l) && l->phase == phase) return true;
    usleep(2000);
  }
  return false;
}

int Track(const Flags& f) {
  pid_t wl = SpawnWorkload(f);
  Layout layout;
  if (!WaitLayout(0, &layout, 30000)) {
    Fail("workload did not write its layout within 30 s");
    kill(wl, SIGKILL);
    return 1;
  }
  const uint64_t t0 = MonotonicNs();
  auto src = DamonSource::Start(wl, f.damon);
  if (!src.ok()) {
    Fail(absl::StrCat("DamonSource::Start: ", src.status().ToString()));
    kill(wl, SIGKILL);
    return 1;
  }
  std::printf(
      "damon_vm_check: monitoring pid %d (kdamond pid %d), set up in %.3f s; N "
      "= %u\n",
      static_cast<int>(wl), (*src)->stats().kdamond_pid,
      Secs(MonotonicNs() - t0), (*src)->max_nr_accesses());

  std::map<uint64_t, uint32_t> chunks;
  Score last;
  double phase_a_detect = -1;
  int polls = 0, polls_after_detect = 0;
  // Phase A: until the set is found and seen twice more (or a timeout).
  while (MonotonicNs() - t0 < f.phase_timeout_ms * 1000000u &&
         polls_after_detect < 3) {
    absl::Status s = PollOnce(**src, &chunks);
    if (!s.ok()) {
      Fail(absl::StrCat("Poll in phase A: ", s.ToString()));
      kill(wl, SIGKILL);
      return 1;
    }
    ++polls;
    last = Evaluate(**src, chunks, layout, f.hot_fraction);
    if (phase_a_detect < 0 && last.recall >= f.min_recall)
      phase_a_detect = Secs(MonotonicNs() - t0);
    if (phase_a_detect >= 0) ++polls_after_detect;
    if (f.verbose) {
      std::printf(
          "  A poll %d t=%.2f regions=%zu hot=%zu recall=%.2f precision=%.2f "
          "chunk_recall=%.2f chunk_precision=%.2f\n",
          polls, Secs(MonotonicNs() - t0), last.regions, last.hot_regions,
          last.recall, last.precision, last.chunk_recall, last.chunk_precision);
    }
  }
  std::printf(
      "damon_vm_check: phase A: %d refreshes in %.2f s; recall >= %.2f first "
      "at %.2f s; "
      "at the end recall %.2f precision %.2f (chunks: %.2f / %.2f), %zu "
      "regions\n",
      polls, Secs(MonotonicNs() - t0), f.min_recall, phase_a_detect,
      last.recall, last.precision, last.chunk_recall, last.chunk_precision,
      last.regions);
  if (phase_a_detect < 0)
    Fail("phase A hot set never reached the recall target");

  // Switch.
  kill(wl, SIGUSR1);
  if (!WaitLayout(1, &layout, 5000)) {
    Fail("workload did not switch within 5 s");
    kill(wl, SIGKILL);
    return 1;
  }
  int refreshes = 0;
  double detect = -1;
  Score at_detect;
  const uint64_t switch_ns = layout.switch_ns;
  while (MonotonicNs() - switch_ns < f.detect_timeout_ms * 1000000u) {
    absl::Status s = PollOnce(**src, &chunks);
    if (!s.ok()) {
      Fail(absl::StrCat("Poll after the switch: ", s.ToString()));
      break;
    }
    ++refreshes;
    last = Evaluate(**src, chunks, layout, f.hot_fraction);
    if (f.verbose) {
      std::printf(
          "  B poll %d t=%.2f regions=%zu hot=%zu recall=%.2f precision=%.2f "
          "chunk_recall=%.2f chunk_precision=%.2f\n",
          refreshes, Secs(MonotonicNs() - switch_ns), last.regions,
          last.hot_regions, last.recall, last.precision, last.chunk_recall,
          last.chunk_precision);
    }
    if (last.recall >= f.min_recall) {
      detect = Secs(MonotonicNs() - switch_ns);
      at_detect = last;
      break;
    }
  }
  // A little longer, to report the settled precision.
  Score settled = at_detect;
  // A refresh in which no region at all looks hot says the workload did not
  // run during that aggregation (its vCPU starved on a loaded host), not
  // that DAMON lost the set: such refreshes are skipped (at most 5).
  for (int i = 0, skipped = 0; detect >= 0 && i < 5;) {
    if (!PollOnce(**src, &chunks).ok()) break;
    Score s = Evaluate(**src, chunks, layout, f.hot_fraction);
    if (s.hot_regions == 0 && skipped < 5) {
      ++skipped;
      continue;
    }
    settled = s;
    ++i;
  }
  if (detect >= 0 && settled.precision < f.min_precision) {
    Fail(absl::StrCat("precision ", settled.precision,
                      " 5 refreshes after the new set was found, "
                      "want >= ",
                      f.min_precision));
  }
  if (detect < 0) {
    Fail(absl::StrCat("new hot set not found within ", f.detect_timeout_ms,
                      " ms (recall ", last.recall, ")"));
  } else {
    std::printf(
        "damon_vm_check: after the switch: recall >= %.2f after %d refreshes, "
        "%.2f s; "
        "then recall %.2f precision %.2f (chunks: %.2f / %.2f)\n",
        f.min_recall, refreshes, detect, at_detect.recall, at_detect.precision,
        at_detect.chunk_recall, at_detect.chunk_precision);
    std::printf(
        "damon_vm_check: settled (5 refreshes later): recall %.2f precision "
        "%.2f "
        "(chunks: %.2f / %.2f), %zu regions\n",
        settled.recall, settled.precision, settled.chunk_recall,
        settled.chunk_precision, settled.regions);
  }
  const DamonStats st = (*src)->stats();
  std::printf("damon_vm_check: %" PRIu64 " polls, %" PRIu64
              " empty; per poll %.3f s in the "
              "update command, %.3f s reading %.0f regions; %" PRIu64
              " EBUSY retries\n",
              st.polls, st.empty_updates, Secs(st.update_ns) / st.polls,
              Secs(st.read_ns) / st.polls,
              static_cast<double>(st.regions) / st.polls, st.ebusy_retries);
  absl::Status stop = (*src)->Stop();
  if (!stop.ok()) Fail(absl::StrCat("Stop: ", stop.ToString()));
  CheckNoKdamond("after Stop()");

  // Target exit mid-run: monitor again, let the workload end (SIGTERM: it
  // checks its data and exits 0), and poll until the source notices.
  auto src2 = DamonSource::Start(wl, f.damon);
  if (!src2.ok()) {
    Fail(absl::StrCat("second Start: ", src2.status().ToString()));
  } else {
    for (int i = 0; i < 3; ++i) (void)PollOnce(**src2, &chunks);
    kill(wl, SIGTERM);
    int wstatus = 0;
    waitpid(wl, &wstatus, 0);
    if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
      Fail(absl::StrCat("workload exit status ", wstatus,
                        " (data check failed?)"));
    }
    const uint64_t t_exit = MonotonicNs();
    absl::Status end;
    for (int i = 0; i < 50 && end.ok(); ++i) end = PollOnce(**src2, &chunks);
    if (end.code() != absl::StatusCode::kNotFound) {
      Fail(absl::StrCat("after the target exited, Poll returned ",
                        end.ToString()));
    } else {
      std::printf("damon_vm_check: target exit noticed after %.2f s: %s\n",
                  Secs(MonotonicNs() - t_exit),
                  std::string(end.message()).c_str());
    }
    if ((*src2)->running())
      Fail("source still running after the target exited");
    CheckNoKdamond("after the target exited");
    src2->reset();
    wl = -1;
  }
  if (wl > 0) {
    kill(wl, SIGKILL);
    waitpid(wl, nullptr, 0);
  }
  std::printf(
      "DAMON-VM-RESULT phase_a_detect_s=%.2f switch_detect_s=%.2f refreshes=%d "
      "precision=%.2f recall=%.2f chunk_precision=%.2f chunk_recall=%.2f "
      "settled_precision=%.2f settled_recall=%.2f polls=%" PRIu64
      " samples=%" PRIu64 " failures=%d\n",
      phase_a_detect, detect, refreshes, at_detect.precision, at_detect.recall,
      at_detect.chunk_precision, at_detect.chunk_recall, settled.precision,
      settled.recall, st.polls, st.samples, failures);
  return failures == 0 ? 0 : 1;
}

int Hold(const Flags& f) {
  // Before any other thread exists: the blocked mask is inherited. The
  // callback runs on the signalfd thread: stop first (so that the poll loop
  // takes the coming FailedPrecondition as the end), then tear down.
  std::atomic<bool> stop_requested{false};
  std::atomic<int> teardown_ok{-1};
  absl::Notification torn_down;
  auto sig = TerminationSignalThread::Start([&](int signo) {
    // Release/acquire: the poll loop reads the flag before deciding that a
    // failed Poll is the expected end.
    stop_requested.store(true, std::memory_order_release);
    if (torn_down.HasBeenNotified()) return;  // a second signal
    absl::Status s = DamonSource::TeardownAll();
    std::printf("damon_vm_check: signal %d: TeardownAll: %s\n", signo,
                s.ToString().c_str());
    std::fflush(stdout);
    teardown_ok.store(s.ok() ? 1 : 0);
    torn_down.Notify();
  });
  if (!sig.ok()) {
    std::printf("damon_vm_check: %s\n", sig.status().ToString().c_str());
    return 1;
  }
  auto src = DamonSource::Start(f.pid, f.damon);
  if (!src.ok()) {
    std::printf("damon_vm_check: Start: %s\n", src.status().ToString().c_str());
    return 1;
  }
  std::printf("damon_vm_check: HOLDING pid %d\n", f.pid);
  std::fflush(stdout);
  std::map<uint64_t, uint32_t> chunks;
  while (!stop_requested.load(std::memory_order_acquire)) {
    absl::Status s = PollOnce(**src, &chunks);
    if (!s.ok() && !stop_requested.load(std::memory_order_acquire)) {
      std::printf("damon_vm_check: Poll: %s\n", s.ToString().c_str());
      if (s.code() == absl::StatusCode::kNotFound && !(*src)->running()) {
        return 3;  // the target exited while being polled; torn down
      }
      return 1;
    }
  }
  if (!torn_down.WaitForNotificationWithTimeout(absl::Seconds(10))) {
    std::printf("damon_vm_check: teardown did not finish within 10 s\n");
    return 1;
  }
  const bool ok = teardown_ok.load() == 1 && !(*src)->running();
  std::printf("damon_vm_check: hold ended, torn down: %s\n", ok ? "yes" : "no");
  return ok ? 0 : 1;
}

int Refuse(const Flags& f) {
  auto src = DamonSource::Start(f.pid, f.damon);
  if (src.ok()) {
    std::printf(
        "damon_vm_check: FAIL: Start succeeded although nr_kdamonds != 0\n");
    return 1;
  }
  std::printf("damon_vm_check: refused: %s\n", src.status().ToString().c_str());
  return src.status().code() == absl::StatusCode::kFailedPrecondition ? 0 : 1;
}

bool Flag(const char* arg, const char* name, std::string* v) {
  const size_t n = std::strlen(name);
  if (std::strncmp(arg, name, n) != 0 || arg[n] != '=') return false;
  *v = arg + n + 1;
  return true;
}

}  // namespace
}  // namespace hotpage

int main(int argc, char** argv) {
  using namespace hotpage;
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string v;
    const char* a = argv[i];
    if (Flag(a, "--mode", &v))
      f.mode = v;
    else if (Flag(a, "--workload", &v))
      f.workload = v;
    else if (Flag(a, "--pid", &v))
      f.pid = std::atoi(v.c_str());
    else if (Flag(a, "--mib", &v))
      f.mib = std::strtoull(v.c_str(), nullptr, 10);
    else if (Flag(a, "--clusters", &v))
      f.clusters = std::strtoull(v.c_str(), nullptr, 10);
    else if (Flag(a, "--cluster_mib", &v))
      f.cluster_mib = std::strtoull(v.c_str(), nullptr, 10);
    else if (Flag(a, "--phase_timeout_ms", &v))
      f.phase_timeout_ms = std::strtoull(v.c_str(), nullptr, 10);
    else if (Flag(a, "--detect_timeout_ms", &v))
      f.detect_timeout_ms = std::strtoull(v.c_str(), nullptr, 10);
    else if (Flag(a, "--min_recall", &v))
      f.min_recall = std::atof(v.c_str());
    else if (Flag(a, "--min_precision", &v))
      f.min_precision = std::atof(v.c_str());
    else if (Flag(a, "--hot_fraction", &v))
      f.hot_fraction = std::atof(v.c_str());
    else if (Flag(a, "--sample_us", &v))
      f.damon.sample_us = std::strtoull(v.c_str(), nullptr, 10);
    else if (Flag(a, "--aggr_us", &v))
      f.damon.aggr_us = std::strtoull(v.c_str(), nullptr, 10);
    else if (Flag(a, "--min_regions", &v))
      f.damon.min_nr_regions = std::atoi(v.c_str());
    else if (Flag(a, "--max_regions", &v))
      f.damon.max_nr_regions = std::atoi(v.c_str());
    else if (std::strcmp(a, "--verbose") == 0)
      f.verbose = true;
    else {
      std::fprintf(stderr, "damon_vm_check: unknown argument %s\n", a);
      return 2;
    }
  }
  if (f.mode == "track") return Track(f);
  if (f.mode == "hold") return Hold(f);
  if (f.mode == "refuse") return Refuse(f);
  std::fprintf(stderr, "damon_vm_check: unknown --mode %s\n", f.mode.c_str());
  return 2;
}
