#include "sampler/damon/fake_damon.h"

#include <cerrno>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace hotpage {
namespace {

constexpr char kCtx[] = "kdamonds/0/contexts/0";

std::string StatLine(pid_t pid, uint64_t start) {
  return absl::StrCat(pid, " (proc) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 ",
                      start, " 0 0\n");
}

}  // namespace

FakeDamonKernel::FakeDamonKernel() : log_(&tree_) {
  tree_.Write(Path("kdamonds/nr_kdamonds"), "0\n");
  tree_.Write("/proc/self/stat", StatLine(kSelfPid, 4242));
  AddProcess(kSelfPid, 4242);
  tree_.Mkdir("/run");
  log_.set_hook([this](absl::string_view path, absl::string_view value) {
    return Hook(path, value);
  });
}

std::string FakeDamonKernel::Path(absl::string_view rel) {
  return absl::StrCat(kAdmin, "/", rel);
}

void FakeDamonKernel::AddProcess(pid_t pid, uint64_t start_time_ticks) {
  tree_.Write(absl::StrCat("/proc/", pid, "/stat"),
              StatLine(pid, start_time_ticks));
}

void FakeDamonKernel::ExitProcess(pid_t pid) {
  RemoveAll(absl::StrCat("/proc/", pid));
  if (!running_) return;
  for (const Target& t : targets_) {
    if (Alive(t.pid)) return;
  }
  Stop();  // kdamond_need_stop(): no valid target left
}

void FakeDamonKernel::SetRegions(pid_t pid, std::vector<DamonRegion> regions) {
  regions_[pid] = std::move(regions);
}

KernelFs FakeDamonKernel::Fs() const {
  return std::move(*KernelFs::Open(tree_.root()));
}

std::string FakeDamonKernel::Read(absl::string_view rel) const {
  absl::StatusOr<std::string> s = Fs().ReadTrimmed(Path(rel));
  return s.ok() ? *s : "<" + std::string(s.status().message()) + ">";
}

std::vector<std::string> FakeDamonKernel::Writes() const {
  std::vector<std::string> out;
  for (const std::string& l : log_.Lines()) {
    out.push_back(std::string(absl::StripPrefix(l, absl::StrCat(kAdmin, "/"))));
  }
  return out;
}

std::vector<pid_t> FakeDamonKernel::running_targets() const {
  std::vector<pid_t> out;
  for (const Target& t : targets_) out.push_back(t.pid);
  return out;
}

std::vector<uint64_t> FakeDamonKernel::generations() const {
  std::vector<uint64_t> out;
  for (const Target& t : targets_) out.push_back(t.generation);
  return out;
}

bool FakeDamonKernel::Alive(pid_t pid) const {
  return pid > 0 && Fs().Exists(absl::StrCat("/proc/", pid));
}

void FakeDamonKernel::RemoveAll(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(tree_.root() + path, ec);
}

void FakeDamonKernel::Stop() {
  running_ = false;
  tree_.Write(Path("kdamonds/0/state"), "off\n");
  tree_.Write(Path("kdamonds/0/pid"), "-1\n");
}

bool FakeDamonKernel::ReadParams(std::vector<pid_t>* pids,
                                 std::vector<Scheme>* schemes) const {
  const std::string c = kCtx;
  int nt = 0, ns = 0;
  (void)absl::SimpleAtoi(Read(c + "/targets/nr_targets"), &nt);
  (void)absl::SimpleAtoi(Read(c + "/schemes/nr_schemes"), &ns);
  bool ok = true;
  for (int i = 0; i < nt; ++i) {
    int pid = 0;
    (void)absl::SimpleAtoi(Read(absl::StrCat(c, "/targets/", i, "/pid_target")),
                           &pid);
    if (!Alive(pid)) ok = false;  // find_get_pid() finds nothing
    pids->push_back(pid);
  }
  for (int i = 0; i < ns; ++i) {
    const std::string s = absl::StrCat(c, "/schemes/", i);
    Scheme sc;
    sc.matches_nothing = Read(s + "/access_pattern/sz/max") == "0";
    int nf = 0;
    (void)absl::SimpleAtoi(Read(s + "/filters/nr_filters"), &nf);
    for (int j = 0; j < nf; ++j) {
      const std::string f = absl::StrCat(s, "/filters/", j);
      Filter fl;
      fl.type = Read(f + "/type");
      fl.matching = Read(f + "/matching") == "Y";
      (void)absl::SimpleAtoi(Read(f + "/damon_target_idx"), &fl.target_idx);
      sc.filters.push_back(fl);
    }
    schemes->push_back(sc);
  }
  return ok;
}

void FakeDamonKernel::UpdateTriedRegions() {
  for (size_t si = 0; si < schemes_.size(); ++si) {
    const std::string dir =
        absl::StrCat(kCtx, "/schemes/", si, "/tried_regions");
    RemoveAll(Path(dir));
    uint64_t total = 0;
    int n = 0;
    const Scheme& sc = schemes_[si];
    for (size_t ti = 0; !sc.matches_nothing && ti < targets_.size(); ++ti) {
      bool out = false;
      for (const Filter& f : sc.filters) {
        if (f.type != "target") continue;
        const bool matched = static_cast<int>(ti) == f.target_idx;
        if (matched == f.matching) out = true;  // __damos_filter_out()
      }
      if (out) continue;
      const Target& t = targets_[ti];
      const pid_t shown = t.stale_pid != 0 ? t.stale_pid : t.pid;
      if (t.stale_pid == 0 && !Alive(t.pid)) continue;
      auto it = regions_.find(shown);
      if (it == regions_.end()) continue;
      for (const DamonRegion& r : it->second) {
        const std::string d = absl::StrCat(dir, "/", n++);
        tree_.Write(Path(d + "/start"), absl::StrCat(r.start, "\n"));
        tree_.Write(Path(d + "/end"), absl::StrCat(r.end, "\n"));
        tree_.Write(Path(d + "/nr_accesses"),
                    absl::StrCat(r.nr_accesses, "\n"));
        tree_.Write(Path(d + "/age"), absl::StrCat(r.age, "\n"));
        total += r.end - r.start;
      }
    }
    tree_.Write(Path(dir + "/total_bytes"), absl::StrCat(total, "\n"));
  }
  for (Target& t : targets_) t.stale_pid = 0;
}

int FakeDamonKernel::State(absl::string_view value) {
  if (value == "on") {
    if (running_) return EBUSY;
    std::vector<pid_t> pids;
    std::vector<Scheme> schemes;
    if (!ReadParams(&pids, &schemes) || pids.empty()) return EINVAL;
    targets_.clear();
    for (pid_t p : pids) targets_.push_back({p, next_generation_++, 0});
    schemes_ = std::move(schemes);
    running_ = true;
    ++ons_;
    tree_.Write(Path("kdamonds/0/state"), "on\n");
    tree_.Write(Path("kdamonds/0/pid"), "777\n");
    return FakeSysfsLog::kHandled;
  }
  if (value == "off") {
    if (!running_) return EPERM;
    Stop();
    return FakeSysfsLog::kHandled;
  }
  if (value == "commit") {
    if (!running_) return EINVAL;
    std::vector<pid_t> pids;
    std::vector<Scheme> schemes;
    ++commits_;
    if (!ReadParams(&pids, &schemes)) {
      // 6.12: the commit callback's error ends the kdamond; the writer
      // is told nothing.
      Stop();
      return FakeSysfsLog::kHandled;
    }
    std::vector<Target> next;
    for (size_t i = 0; i < pids.size(); ++i) {
      if (i < targets_.size()) {
        Target t = targets_[i];
        if (t.pid != pids[i]) {
          t.stale_pid = t.pid;  // the old process's regions stay
          t.pid = pids[i];
          t.generation = next_generation_++;
        }
        next.push_back(t);
      } else {
        next.push_back({pids[i], next_generation_++, 0});
      }
    }
    targets_ = std::move(next);
    schemes_ = std::move(schemes);
    bool any = false;
    for (const Target& t : targets_) any = any || Alive(t.pid);
    if (!any) Stop();
    return FakeSysfsLog::kHandled;
  }
  if (value == "update_schemes_tried_regions") {
    if (!running_) return EINVAL;
    UpdateTriedRegions();
    return FakeSysfsLog::kHandled;
  }
  return EINVAL;
}

int FakeDamonKernel::Hook(absl::string_view path, absl::string_view value) {
  const std::string rel(absl::StripPrefix(path, absl::StrCat(kAdmin, "/")));
  const std::string c = kCtx;
  if (auto b = before_.find(absl::StrCat(rel, "=", value));
      b != before_.end()) {
    std::function<void()> fn = std::move(b->second);
    before_.erase(b);
    fn();
  }
  if (rel == "kdamonds/nr_kdamonds") {
    if (running_) return EBUSY;
    RemoveAll(Path("kdamonds"));
    int n = 0;
    if (!absl::SimpleAtoi(value, &n) || n < 0) return EINVAL;
    tree_.Write(Path(rel), absl::StrCat(n, "\n"));
    for (int i = 0; i < n; ++i) {
      tree_.Write(Path(absl::StrCat("kdamonds/", i, "/state")), "off\n");
      tree_.Write(Path(absl::StrCat("kdamonds/", i, "/pid")), "-1\n");
      tree_.Write(Path(absl::StrCat("kdamonds/", i, "/contexts/nr_contexts")),
                  "0\n");
    }
    targets_.clear();
    schemes_.clear();
    return FakeSysfsLog::kHandled;
  }
  if (rel == "kdamonds/0/state") return State(value);
  if (rel == "kdamonds/0/contexts/nr_contexts") {
    if (value != "1") return EINVAL;
    tree_.Write(Path(c + "/avail_operations"), "vaddr\nfvaddr\npaddr\n");
    tree_.Write(Path(c + "/operations"), "vaddr\n");
    for (const char* f : {"sample_us", "aggr_us", "update_us"}) {
      tree_.Write(Path(c + "/monitoring_attrs/intervals/" + f), "0\n");
    }
    tree_.Write(Path(c + "/monitoring_attrs/nr_regions/min"), "10\n");
    tree_.Write(Path(c + "/monitoring_attrs/nr_regions/max"), "1000\n");
    tree_.Write(Path(c + "/targets/nr_targets"), "0\n");
    tree_.Write(Path(c + "/schemes/nr_schemes"), "0\n");
    return 0;
  }
  int n = 0;
  if (rel == c + "/targets/nr_targets") {
    if (!absl::SimpleAtoi(value, &n) || n < 0) return EINVAL;
    RemoveAll(Path(c + "/targets"));
    tree_.Write(Path(rel), absl::StrCat(n, "\n"));
    for (int i = 0; i < n; ++i) {
      const std::string t = absl::StrCat(c, "/targets/", i);
      tree_.Write(Path(t + "/pid_target"), "0\n");
      tree_.Write(Path(t + "/regions/nr_regions"), "0\n");
    }
    return FakeSysfsLog::kHandled;
  }
  if (rel == c + "/schemes/nr_schemes") {
    if (!absl::SimpleAtoi(value, &n) || n < 0) return EINVAL;
    RemoveAll(Path(c + "/schemes"));
    tree_.Write(Path(rel), absl::StrCat(n, "\n"));
    for (int i = 0; i < n; ++i) {
      const std::string s = absl::StrCat(c, "/schemes/", i);
      tree_.Write(Path(s + "/action"), "stat\n");
      for (const char* f : {"sz", "nr_accesses", "age"}) {
        tree_.Write(Path(s + "/access_pattern/" + f + "/min"), "0\n");
        tree_.Write(Path(s + "/access_pattern/" + f + "/max"), "0\n");
      }
      tree_.Write(Path(s + "/filters/nr_filters"), "0\n");
      tree_.Write(Path(s + "/tried_regions/total_bytes"), "0\n");
    }
    return FakeSysfsLog::kHandled;
  }
  if (absl::EndsWith(rel, "/filters/nr_filters")) {
    if (!absl::SimpleAtoi(value, &n) || n < 0) return EINVAL;
    const std::string dir(absl::StripSuffix(rel, "/nr_filters"));
    if (!Fs().Exists(Path(rel))) return ENOENT;
    RemoveAll(Path(dir));
    tree_.Write(Path(rel), absl::StrCat(n, "\n"));
    for (int i = 0; i < n; ++i) {
      const std::string f = absl::StrCat(dir, "/", i);
      tree_.Write(Path(f + "/type"), "anon\n");
      tree_.Write(Path(f + "/matching"), "N\n");
      tree_.Write(Path(f + "/damon_target_idx"), "0\n");
      tree_.Write(Path(f + "/memcg_path"), "\n");
    }
    return FakeSysfsLog::kHandled;
  }
  if (absl::StrContains(rel, "/filters/") && !Fs().Exists(path)) {
    return ENOENT;  // no such filter (nr_filters not written)
  }
  if (absl::EndsWith(rel, "/type") && absl::StrContains(rel, "/filters/")) {
    for (const char* t : {"anon", "memcg", "young", "addr", "target"}) {
      if (value == t) return 0;
    }
    return EINVAL;
  }
  if (absl::EndsWith(rel, "/matching") && absl::StrContains(rel, "/filters/")) {
    if (value == "Y" || value == "1") {
      tree_.Write(path, "Y\n");
    } else if (value == "N" || value == "0") {
      tree_.Write(path, "N\n");
    } else {
      return EINVAL;
    }
    return FakeSysfsLog::kHandled;
  }
  return 0;
}

}  // namespace hotpage
