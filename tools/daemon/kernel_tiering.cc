#include "tools/daemon/kernel_tiering.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "sampler/hintfault/hintfault_watchdog.h"
#include "sampler/recovery_state.h"

namespace hotpage {
namespace {

constexpr char kDamonAdmin[] = "/sys/kernel/mm/damon/admin/kdamonds";

std::string BalancingWhat(int64_t mode) {
  std::vector<std::string> parts;
  if (mode & 1) parts.push_back("NUMA balancing");
  if (mode & 2) parts.push_back("the kernel's memory tiering (promotion)");
  return absl::StrJoin(parts, " and ");
}

}  // namespace

KernelMovers ReadNumaBalancingSysctls(const KernelFs& fs) {
  KernelMovers m;
  if (absl::StatusOr<int64_t> v = fs.ReadInt(kNumaBalancingSysctl); v.ok()) {
    m.numa_balancing = *v;
  }
  if (absl::StatusOr<int64_t> v = fs.ReadInt(kPromoteRateLimitSysctl); v.ok()) {
    m.promote_rate_limit_mbps = *v;
  }
  return m;
}

KernelMovers DetectKernelMovers(const KernelFs& fs,
                                const std::set<std::string>& own_kdamonds) {
  KernelMovers m = ReadNumaBalancingSysctls(fs);
  if (absl::StatusOr<std::string> v = fs.ReadTrimmed(kDemotionEnabledPath);
      v.ok()) {
    m.demotion_enabled = (*v == "true" || *v == "1") ? 1 : 0;
  }
  if (absl::StatusOr<std::vector<std::string>> ks = fs.ListDir(kDamonAdmin);
      ks.ok()) {
    for (const std::string& k : *ks) {
      int index;
      if (!absl::SimpleAtoi(k, &index)) continue;
      const std::string name = absl::StrCat("kdamonds/", k);
      if (own_kdamonds.count(name)) continue;
      absl::StatusOr<std::string> state =
          fs.ReadTrimmed(absl::StrCat(kDamonAdmin, "/", k, "/state"));
      if (state.ok() && *state == "on") m.busy_kdamonds.push_back(name);
    }
  }
  if (absl::StatusOr<std::vector<std::string>> procs = fs.ListDir("/proc");
      procs.ok()) {
    for (const std::string& p : *procs) {
      int pid;
      if (!absl::SimpleAtoi(p, &pid) || pid <= 0) continue;
      absl::StatusOr<std::string> comm =
          fs.ReadTrimmed(absl::StrCat("/proc/", p, "/comm"));
      if (comm.ok() && *comm == "numad") m.numad_pids.push_back(pid);
    }
  }
  return m;
}

bool SysctlsSenseHintFaults(const KernelMovers& m) {
  return m.numa_balancing == 2 && m.promote_rate_limit_mbps == 0;
}

TieringDecision DecideKernelTiering(const KernelMovers& m,
                                    KernelTieringMode mode,
                                    const std::string& config_path,
                                    bool hint_faults) {
  TieringDecision d;
  if (hint_faults && mode == KernelTieringMode::kTakeOver) {
    if (m.numa_balancing < 0 || m.promote_rate_limit_mbps < 0) {
      d.start = false;
      d.messages.push_back(
          "source hintfault needs kernel.numa_balancing and "
          "kernel.numa_balancing_promote_rate_limit_MBps, which this kernel "
          "does not have (CONFIG_NUMA_BALANCING, Linux 6.1 or later); fix: "
          "another source for those workloads");
      return d;
    }
    if (m.numa_balancing != 2) {
      d.changes.push_back(
          {kNumaBalancingSysctl, absl::StrCat(m.numa_balancing), "2"});
    }
    if (m.promote_rate_limit_mbps != 0) {
      d.changes.push_back({kPromoteRateLimitSysctl,
                           absl::StrCat(m.promote_rate_limit_mbps), "0"});
    }
    d.messages.push_back(absl::StrCat(
        "source hintfault: kernel.numa_balancing = ", m.numa_balancing,
        d.changes.empty() ? " and its promotion rate limit 0 MB/s already"
                          : absl::StrCat(" -> 2 and its promotion rate limit ",
                                         m.promote_rate_limit_mbps,
                                         " -> 0 MB/s until hotpage stops"),
        ": the kernel's scanner makes slow-tier pages take hint faults, "
        "hotpage alone moves them"));
  }
  const std::string other_modes = absl::StrCat(
      "or set kernel_tiering = \"coexist\" or \"take-over\" in ", config_path);
  const bool balancing = m.numa_balancing > 0;
  const bool demotion = m.demotion_enabled == 1;

  if (balancing && !(hint_faults && mode == KernelTieringMode::kTakeOver)) {
    const std::string what = absl::StrCat(
        "kernel.numa_balancing = ", m.numa_balancing, ": ",
        BalancingWhat(m.numa_balancing), " moves pages hotpage places");
    switch (mode) {
      case KernelTieringMode::kRefuse:
        d.start = false;
        d.messages.push_back(
            absl::StrCat(what,
                         "; fix: sysctl -w kernel.numa_balancing=0 (and in "
                         "/etc/sysctl.d to keep it), ",
                         other_modes));
        break;
      case KernelTieringMode::kCoexist:
        d.messages.push_back(absl::StrCat(
            "warning: ", what, "; coexisting: both will move pages"));
        break;
      case KernelTieringMode::kTakeOver:
        d.changes.push_back(
            {kNumaBalancingSysctl, absl::StrCat(m.numa_balancing), "0"});
        d.messages.push_back(
            absl::StrCat(what, "; taking over: set to 0 until hotpage stops"));
        break;
    }
  }
  if (demotion) {
    const std::string what =
        "demotion_enabled = true: reclaim demotes fast-tier pages by its "
        "own LRU";
    if (mode == KernelTieringMode::kTakeOver) {
      d.changes.push_back({kDemotionEnabledPath, "true", "false"});
      d.messages.push_back(
          absl::StrCat(what, "; taking over: false until hotpage stops"));
    } else {
      // It does not fight hotpage (both move cold pages down), so it never
      // blocks the start.
      d.messages.push_back(absl::StrCat(
          "note: ", what, "; it complements hotpage (set it to false in ",
          kDemotionEnabledPath, " to leave demotion to hotpage alone)"));
    }
  }
  for (const std::string& k : m.busy_kdamonds) {
    const std::string what = absl::StrCat("another DAMON user runs ", k,
                                          " (its schemes may migrate pages)");
    if (mode == KernelTieringMode::kCoexist) {
      d.messages.push_back(absl::StrCat("warning: ", what));
    } else {
      d.start = false;
      d.messages.push_back(
          absl::StrCat(what, "; fix: stop it (echo off > ", kDamonAdmin, "/",
                       k.substr(k.find('/') + 1),
                       "/state), or set kernel_tiering = "
                       "\"coexist\" in ",
                       config_path,
                       mode == KernelTieringMode::kTakeOver
                           ? " (take-over cannot stop another program's DAMON)"
                           : ""));
    }
  }
  for (pid_t pid : m.numad_pids) {
    const std::string what =
        absl::StrCat("numad (pid ", pid, ") migrates whole processes");
    if (mode == KernelTieringMode::kCoexist) {
      d.messages.push_back(absl::StrCat("warning: ", what));
    } else {
      d.start = false;
      d.messages.push_back(
          absl::StrCat(what,
                       "; fix: systemctl stop numad, or set kernel_tiering = "
                       "\"coexist\" in ",
                       config_path));
    }
  }
  return d;
}

}  // namespace hotpage
