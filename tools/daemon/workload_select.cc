#include "tools/daemon/workload_select.h"

#include <regex.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tools/base/kernel/proc_cgroup.h"
#include "tools/base/kernel/proc_stat.h"

namespace hotpage {
namespace {

constexpr size_t kMaxCmdline = 4096;

// `path` is `parent` or below it ("a/b" is under "a", "ab" is not).
bool UnderCgroup(absl::string_view path, absl::string_view parent) {
  if (!absl::StartsWith(path, parent)) return false;
  return path.size() == parent.size() || path[parent.size()] == '/';
}

struct Regex {
  regex_t re;
  bool ok = false;
  explicit Regex(const std::string& pattern) {
    ok = regcomp(&re, pattern.c_str(), REG_EXTENDED | REG_NOSUB) == 0;
  }
  ~Regex() {
    if (ok) regfree(&re);
  }
  bool Matches(const std::string& s) const {
    return ok && regexec(&re, s.c_str(), 0, nullptr, 0) == 0;
  }
};

}  // namespace

absl::StatusOr<std::vector<std::vector<SelectedProcess>>> SelectProcesses(
    const KernelFs& fs, const DaemonConfig& config, pid_t self) {
  std::vector<std::vector<SelectedProcess>> out(config.workloads.size());
  absl::StatusOr<std::vector<std::string>> entries = fs.ListDir("/proc");
  if (!entries.ok()) return entries.status();

  // Compiled once per selection (the config was validated: they compile).
  std::vector<std::unique_ptr<Regex>> regexes(config.workloads.size());
  bool need_cgroup = false, need_rss = false;
  for (size_t w = 0; w < config.workloads.size(); ++w) {
    const WorkloadConfig& wc = config.workloads[w];
    switch (wc.selector) {
      case SelectorKind::kCmdline:
        regexes[w] = std::make_unique<Regex>(wc.match);
        break;
      case SelectorKind::kCgroup:
        need_cgroup = true;
        break;
      case SelectorKind::kAll:
        need_rss = true;
        break;
      default:
        break;
    }
  }
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));

  std::vector<std::pair<pid_t, std::string>> pids;
  for (const std::string& e : *entries) {
    int pid;
    if (!absl::SimpleAtoi(e, &pid) || pid <= 0 || pid == self) continue;
    pids.push_back({pid, e});
  }
  std::sort(pids.begin(), pids.end());

  for (const auto& [pid, name] : pids) {
    const std::string dir = absl::StrCat("/proc/", name);
    absl::StatusOr<std::string> stat_text = fs.ReadFile(dir + "/stat");
    if (!stat_text.ok()) continue;  // exited while we looked
    std::optional<ProcStat> st = ParseProcStat(*stat_text);
    if (!st || st->pid != pid || st->state == 'Z' || st->state == 'X') {
      continue;
    }
    // Kernel threads have no command line; neither do zombies.
    absl::StatusOr<std::string> cmdline =
        fs.ReadAt(dir + "/cmdline", 0, kMaxCmdline);
    if (!cmdline.ok() || cmdline->empty()) continue;
    std::string cmd = *cmdline;
    while (!cmd.empty() && cmd.back() == '\0') cmd.pop_back();
    std::replace(cmd.begin(), cmd.end(), '\0', ' ');

    SelectedProcess p;
    p.key = {pid, st->start_time_ticks};
    p.comm = st->comm;
    if (absl::StatusOr<std::string> comm = fs.ReadTrimmed(dir + "/comm");
        comm.ok()) {
      p.comm = *comm;
    }
    if (need_cgroup) {
      absl::StatusOr<std::string> cg = fs.ReadFile(dir + "/cgroup");
      if (cg.ok()) {
        if (std::optional<std::string> path = CgroupV2Path(*cg)) {
          p.cgroup = *path;
        }
      }
    }
    if (need_rss) {
      absl::StatusOr<std::string> statm = fs.ReadFile(dir + "/statm");
      if (statm.ok()) {
        if (std::optional<uint64_t> pages = ParseStatmResident(*statm)) {
          p.rss_bytes = *pages * page;
        }
      }
    }

    for (size_t w = 0; w < config.workloads.size(); ++w) {
      const WorkloadConfig& wc = config.workloads[w];
      bool match = false;
      switch (wc.selector) {
        case SelectorKind::kCgroup:
          match = !p.cgroup.empty() && UnderCgroup(p.cgroup, wc.match);
          break;
        case SelectorKind::kComm:
          match = p.comm == wc.match;
          break;
        case SelectorKind::kCmdline:
          match = regexes[w]->Matches(cmd);
          break;
        case SelectorKind::kPid:
          match = name == wc.match;
          break;
        case SelectorKind::kAll:
          match = p.rss_bytes >= config.min_rss_bytes;
          break;
      }
      if (match) {  // the first workload that selects it owns it
        out[w].push_back(p);
        break;
      }
    }
  }
  return out;
}

SelectionChange Reconcile(const std::vector<SelectedProcess>& before,
                          const std::vector<SelectedProcess>& now) {
  SelectionChange c;
  size_t i = 0, j = 0;
  while (i < before.size() || j < now.size()) {
    if (j == now.size() || (i < before.size() && before[i].key < now[j].key)) {
      c.left.push_back(before[i++].key);
    } else if (i == before.size() || now[j].key < before[i].key) {
      c.arrived.push_back(now[j++].key);
    } else {
      ++i;
      ++j;
    }
  }
  return c;
}

}  // namespace hotpage
