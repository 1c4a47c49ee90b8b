#include "tools/doctor.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "sampler/perf/event_config.h"
#include "tools/attach/attach_engine.h"
#include "tools/attach/source_choice.h"
#include "tools/base/json_writer.h"
#include "tools/base/kernel/capabilities.h"
#include "tools/base/kernel/proc_stat.h"

namespace hotpage {
namespace {

constexpr char kPmuDir[] = "/sys/bus/event_source/devices";
constexpr char kDamonAdmin[] = "/sys/kernel/mm/damon/admin";
constexpr char kWeightDir[] = "/sys/kernel/mm/mempolicy/weighted_interleave";
constexpr char kTierDir[] = "/sys/devices/virtual/memory_tiering";
constexpr char kNodeDir[] = "/sys/devices/system/node";
constexpr char kDemotion[] = "/sys/kernel/mm/numa/demotion_enabled";
// <linux/capability.h>: CAP_SYS_PTRACE.
constexpr int kCapSysPtrace = 19;

// The core PMUs that can sample memory accesses, in the order shown.
// cpu_core / cpu_atom: the P-core and E-core PMUs of hybrid Intel parts
// (ADL, RPL, MTL, ARL, LNL), each with its own `cpus` mask
// (intel_hybrid_get_attr_cpus() in arch/x86/events/intel/core.c).
constexpr const char* kCorePmus[] = {"cpu", "cpu_core", "cpu_atom", "ibs_op"};

std::string ListToString(const std::vector<int>& v) {
  if (v.empty()) return "none";
  std::vector<std::string> parts;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    parts.push_back(j == i ? absl::StrCat(v[i])
                           : absl::StrCat(v[i], "-", v[j]));
    i = j + 1;
  }
  return absl::StrJoin(parts, ",");
}

bool VersionAtLeast(const std::optional<std::pair<int, int>>& v, int major,
                    int minor) {
  return v && (v->first > major || (v->first == major && v->second >= minor));
}

std::optional<int64_t> ReadOptInt(const KernelFs& fs, absl::string_view path) {
  absl::StatusOr<int64_t> v = fs.ReadInt(path);
  if (!v.ok()) return std::nullopt;
  return *v;
}

class Facts {
 public:
  void Add(std::string name, bool ok, std::string value, std::string fix = "") {
    facts_.push_back(
        {std::move(name), ok, std::move(value), ok ? "" : std::move(fix)});
  }
  std::vector<DoctorFact> Take() { return std::move(facts_); }

 private:
  std::vector<DoctorFact> facts_;
};

// --- PMUs ------------------------------------------------------------------

void PmuFacts(const KernelFs& fs,
              const std::optional<std::pair<int, int>>& version, Facts& out) {
  std::vector<std::string> present;
  for (const char* pmu : kCorePmus) {
    if (fs.Exists(absl::StrCat(kPmuDir, "/", pmu, "/type"))) {
      present.push_back(pmu);
    }
  }
  if (present.empty()) {
    bool hypervisor = false;
    if (absl::StatusOr<std::string> c = fs.ReadFile("/proc/cpuinfo"); c.ok())
      hypervisor = absl::StrContains(*c, " hypervisor");
    out.Add("pmu", false,
            absl::StrCat(
                "no hardware core PMU in ", fs.Display(kPmuDir), " (",
                hypervisor ? "a VM without a virtual PMU"
                           : "no PMU driver for this CPU",
                "): no PEBS or IBS; hotpage senses with hint faults, write "
                "faults or page faults instead"),
            hypervisor ? "give the VM a virtual PMU with PEBS (KVM: -cpu "
                         "host,pmu=on on an Ice Lake or later non-hybrid "
                         "host), or run on bare metal"
                       : "load the CPU's perf driver (an x86 Intel or AMD "
                         "CPU has it built in), or use the fallbacks");
    return;
  }
  const bool hybrid = std::find(present.begin(), present.end(),
                                std::string("cpu_core")) != present.end() &&
                      std::find(present.begin(), present.end(),
                                std::string("cpu_atom")) != present.end();
  // AMD machines have a "cpu" PMU too, without mem-loads: IBS samples.
  const bool amd = std::find(present.begin(), present.end(),
                             std::string("ibs_op")) != present.end();
  for (const std::string& pmu : present) {
    const std::string dir = absl::StrCat(kPmuDir, "/", pmu);
    std::vector<std::string> parts;
    if (absl::StatusOr<int64_t> t = fs.ReadInt(dir + "/type"); t.ok())
      parts.push_back(absl::StrCat("type ", *t));
    if (absl::StatusOr<std::string> name =
            fs.ReadTrimmed(dir + "/caps/pmu_name");
        name.ok() && !name->empty()) {
      parts.push_back(name->substr(0, 64));
    }
    // The `cpus` file exists on hybrid PMUs (and on uncore ones); without
    // it the PMU covers every online CPU.
    if (fs.Exists(dir + "/cpus")) {
      absl::StatusOr<std::vector<int>> cpus = fs.ReadList(dir + "/cpus");
      parts.push_back(absl::StrCat(
          "CPUs ", cpus.ok() ? ListToString(*cpus) : "unreadable"));
    } else {
      parts.push_back("all CPUs");
    }
    bool ok = true;
    std::string fix;
    if (pmu == "ibs_op") {
      std::vector<std::string> fmt;
      for (const char* f : {"cnt_ctl", "l3missonly", "swfilt"}) {
        if (fs.Exists(absl::StrCat(dir, "/format/", f))) fmt.push_back(f);
      }
      parts.push_back(absl::StrCat("AMD IBS op", fmt.empty() ? "" : " (",
                                   absl::StrJoin(fmt, ", "),
                                   fmt.empty() ? "" : ")"));
      // perf_ibs_get_offset_max() reads IbsDcLinAd for ADDR only from
      // v6.1 (tip 7c10dd0a88b1 "perf/x86/amd: Support
      // PERF_SAMPLE_DATA_SRC"); before, only with PERF_SAMPLE_RAW.
      if (version && !VersionAtLeast(version, 6, 1)) {
        parts.push_back(
            "kernel before 6.1: the data address comes only in the "
            "PERF_SAMPLE_RAW block (IbsDcLinAd)");
      }
      // perf_ibs_op's pmu.task_ctx_nr (arch/x86/events/amd/ibs.c) is
      // perf_hw_context from v6.2 (after the event-context rewrite),
      // perf_invalid_context before: per-task events are refused.
      parts.push_back(VersionAtLeast(version, 6, 2)
                          ? "per-task IBS (Linux 6.2+)"
                          : "per-task IBS needs Linux 6.2: system-wide "
                            "only here (CAP_PERFMON or "
                            "perf_event_paranoid <= 0)");
    } else {
      const std::string ev = dir + "/events/";
      if (fs.Exists(ev + "mem-loads")) {
        parts.push_back("PEBS load latency (mem-loads)");
        if (fs.Exists(ev + "mem-loads-aux")) {
          parts.push_back(
              "mem-loads-aux: loads are grouped behind it (Sapphire Rapids "
              "and later cores)");
        }
        if (fs.Exists(ev + "mem-stores")) parts.push_back("mem-stores");
      } else if (amd) {
        parts.push_back("core counters; memory sampling is ibs_op's");
      } else {
        ok = false;
        parts.push_back(
            "no PEBS load latency (events/mem-loads absent: the kernel has "
            "no PEBS here, e.g. a VM whose virtual PMU lacks PEBS)");
        fix =
            "on a VM, enable guest PEBS (KVM: Ice Lake or later non-hybrid "
            "hosts); otherwise hotpage uses hint faults, write faults or page "
            "faults";
      }
      if (hybrid && pmu == "cpu_core") parts.push_back("hybrid: P-cores");
      if (hybrid && pmu == "cpu_atom") parts.push_back("hybrid: E-cores");
    }
    out.Add(absl::StrCat("pmu.", pmu), ok, absl::StrJoin(parts, "; "), fix);
  }
}

// --- privileges ------------------------------------------------------------

struct Privileges {
  uint64_t caps = 0;
  bool perfmon = false;  // CAP_PERFMON or CAP_SYS_ADMIN
  bool sys_admin = false;
  bool sys_nice = false;
  bool sys_ptrace = false;
  std::optional<int64_t> paranoid;
  // perf_event_open would accept hotpage's events: per task (excluding
  // the kernel) and CPU-wide (system-wide).
  bool per_task = false;
  bool system_wide = false;
};

Privileges ReadPrivileges(const KernelFs& fs) {
  Privileges p;
  p.caps = EffectiveCapabilities(fs);
  p.sys_admin = HasCapability(p.caps, kCapSysAdmin);
  p.perfmon = HasCapability(p.caps, kCapPerfmon) || p.sys_admin;
  p.sys_nice = HasCapability(p.caps, kCapSysNice);
  p.sys_ptrace = HasCapability(p.caps, kCapSysPtrace);
  p.paranoid = ReadOptInt(fs, "/proc/sys/kernel/perf_event_paranoid");
  // perf_event_open(): per-task user-space events need paranoid <= 2,
  // CPU-wide ones <= 0, unless perfmon_capable()
  // (kernel/events/core.c perf_allow_cpu(), perf_allow_kernel();
  // Documentation/admin-guide/perf-security.rst). Debian's 3
  // (CONFIG_SECURITY_PERF_EVENTS_RESTRICT) refuses every unprivileged event.
  p.per_task = p.paranoid && (p.perfmon || *p.paranoid <= 2);
  p.system_wide = p.paranoid && (p.perfmon || *p.paranoid <= 0);
  return p;
}

void PrivilegeFacts(const Privileges& p, Facts& out) {
  const char* kRoot = "run hotpage as root";
  out.Add("cap_perfmon", p.perfmon,
          absl::StrCat(
              p.perfmon ? "yes" : "no",
              HasCapability(p.caps, kCapPerfmon) || !p.sys_admin
                  ? ""
                  : " (through CAP_SYS_ADMIN)",
              ": system-wide perf events and PEBS/IBS whatever "
              "perf_event_paranoid says (Linux 5.8+; CAP_SYS_ADMIN before)"),
          absl::StrCat(kRoot, ", or setcap cap_perfmon+ep on the binary"));
  out.Add("cap_sys_nice", p.sys_nice,
          absl::StrCat(p.sys_nice ? "yes" : "no",
                       ": move_pages(2) with MPOL_MF_MOVE_ALL (pages shared "
                       "with other processes; kernel_move_pages() in "
                       "mm/migrate.c); hotpage moves only pages the target "
                       "maps alone (MPOL_MF_MOVE), which needs ptrace read "
                       "access instead (move_pages)"),
          kRoot);
  out.Add("cap_sys_admin", p.sys_admin,
          absl::StrCat(p.sys_admin ? "yes" : "no",
                       ": writing kernel.numa_balancing (the hint-fault "
                       "source) and /sys/kernel/mm/damon/admin (the DAMON "
                       "source); implies CAP_PERFMON"),
          kRoot);
  out.Add("cap_sys_ptrace", p.sys_ptrace,
          absl::StrCat(p.sys_ptrace ? "yes" : "no",
                       ": move_pages(2) on processes of other users "
                       "(ptrace_may_access() in kernel/ptrace.c)"),
          kRoot);
  if (!p.paranoid) {
    out.Add("perf_event_paranoid", false,
            "absent: a kernel without CONFIG_PERF_EVENTS; no perf event "
            "(PEBS, IBS, page faults) can be opened",
            "use a kernel with CONFIG_PERF_EVENTS, or --source damon");
    return;
  }
  std::string meaning;
  if (*p.paranoid <= -1) {
    meaning = "no restrictions";
  } else if (*p.paranoid == 0) {
    meaning = "system-wide events allowed without CAP_PERFMON";
  } else if (*p.paranoid == 1) {
    meaning =
        "per-task events (user and kernel) without CAP_PERFMON; system-wide "
        "needs it";
  } else if (*p.paranoid == 2) {
    meaning =
        "per-task user-space events without CAP_PERFMON (what hotpage opens "
        "on --pid); system-wide needs it";
  } else {
    meaning = "no perf event at all without CAP_PERFMON (Debian's 3)";
  }
  out.Add("perf_event_paranoid", p.per_task,
          absl::StrCat(*p.paranoid, ": ", meaning,
                       p.perfmon ? "; this process has CAP_PERFMON" : ""),
          "sysctl -w kernel.perf_event_paranoid=2 (per task) or 0 "
          "(system-wide), or run as root");
}

// --- the source and its event plan -----------------------------------------

// Whether `source` can run with these privileges and capabilities, and why
// not.
std::string WhyNot(const std::string& source, const SourceCapabilities& caps,
                   const Privileges& p,
                   const std::optional<std::pair<int, int>>& version) {
  if (source == "pebs") {
    if (!caps.pebs) return "no PEBS load-latency event on this machine";
    if (!p.per_task) return "perf_event_paranoid and capabilities forbid it";
    return "";
  }
  if (source == "ibs") {
    if (!caps.ibs) return "no AMD IBS op PMU on this machine";
    if (!VersionAtLeast(version, 6, 2) && !p.system_wide) {
      return "IBS is system-wide only before Linux 6.2: it needs "
             "CAP_PERFMON or perf_event_paranoid <= 0";
    }
    if (!p.per_task) return "perf_event_paranoid and capabilities forbid it";
    return "";
  }
  if (source == "pagefault") {
    if (!caps.page_fault_events)
      return "perf_event_paranoid and capabilities forbid perf events";
    return "";
  }
  if (source == "hintfault") {
    if (!caps.page_fault_events)
      return "perf_event_paranoid and capabilities forbid perf events";
    if (!caps.numa_balancing) return "no kernel.numa_balancing";
    if (!caps.promote_rate_limit_mbps) {
      return "no kernel.numa_balancing_promote_rate_limit_MBps (Linux 6.0+)";
    }
    if (!caps.cap_sys_admin)
      return "managing kernel.numa_balancing needs CAP_SYS_ADMIN";
    return "";
  }
  if (source == "damon") {
    if (!caps.damon_sysfs) return "no /sys/kernel/mm/damon/admin";
    if (!caps.cap_sys_admin) return "DAMON needs CAP_SYS_ADMIN";
    return "";
  }
  return "unknown source";
}

std::string EventLine(const EventSpec& e) {
  std::vector<std::string> parts = {e.name};
  if (!e.pmu.empty()) parts.push_back(absl::StrCat("pmu ", e.pmu));
  parts.push_back(absl::StrCat(
      "CPUs ", e.cpus.empty() ? "all sampled" : ListToString(e.cpus)));
  parts.push_back(absl::StrCat("group ", e.group));
  parts.push_back(absl::StrCat("period ", e.attr.sample_period));
  if (!e.sampling) parts.push_back("not sampling");
  if (!e.keep_samples) parts.push_back("samples dropped");
  return absl::StrJoin(parts, " ");
}

// Descriptors one task needs: each event is opened on every online CPU it
// may run on (EventSpec::cpus; empty = all), one fd per event per CPU
// (the sampler's per-task mode, sampler/perf/sampler.h).
uint64_t FdsPerTask(const EventGroup& plan, const std::vector<int>& online) {
  uint64_t n = 0;
  for (const EventSpec& e : plan.events) {
    if (e.cpus.empty()) {
      n += online.size();
      continue;
    }
    for (int c : e.cpus) {
      if (std::binary_search(online.begin(), online.end(), c)) ++n;
    }
  }
  return n;
}

// --- kernel features -------------------------------------------------------

// `source`: the one attach would run ("" if none can).
void FeatureFacts(const KernelFs& fs, const DoctorEnv& env,
                  const std::optional<std::pair<int, int>>& version,
                  const std::string& release, const SourceCapabilities& caps,
                  const std::string& source, Facts& out) {
  // Memory-policy modes: as `hotpage topology` finds them (set_mempolicy
  // probe on the live kernel, sysfs and the release in a tree).
  std::optional<bool> preferred_many;
  std::optional<bool> weighted;
  std::string how = "from the kernel release";
  if (absl::StatusOr<Topology> topo =
          DiscoverTopology(fs, fs.is_live() ? env.mempolicy_probe : nullptr);
      topo.ok()) {
    preferred_many = topo->features.preferred_many;
    weighted = topo->features.weighted_interleave;
    if (topo->features.mempolicy_probe == "syscall")
      how = "set_mempolicy accepts it";
  } else {
    if (version) preferred_many = VersionAtLeast(version, 5, 15);
    weighted = fs.Exists(kWeightDir);
  }
  out.Add("mpol_preferred_many", preferred_many.value_or(false),
          absl::StrCat(!preferred_many   ? "unknown"
                       : *preferred_many ? "yes"
                                         : "no",
                       " (Linux 5.15+; ", how,
                       "): `prefer (many)` ranges keep several target nodes"),
          "Linux 5.15 or later; without it such ranges take one node");
  out.Add("weighted_interleave", weighted.value_or(false),
          absl::StrCat(weighted.value_or(false) ? "yes" : "no",
                       " (Linux 6.9+, ", kWeightDir,
                       "): --weights kernel reads the node weights there"),
          "Linux 6.9 or later; or --weights auto|N:W,...");

  // Memory tiers: mm/memory-tiers.c (6.1+) exports memory_tierN/nodelist.
  std::vector<std::string> tiers;
  if (absl::StatusOr<std::vector<std::string>> names = fs.ListDir(kTierDir);
      names.ok()) {
    // By tier id (memory_tier4 before memory_tier35), as the kernel ranks.
    std::vector<std::pair<int64_t, std::string>> ids;
    for (const std::string& n : *names) {
      int64_t id = 0;
      if (absl::StartsWith(n, "memory_tier") &&
          absl::SimpleAtoi(absl::StripPrefix(n, "memory_tier"), &id)) {
        ids.emplace_back(id, n);
      }
    }
    std::sort(ids.begin(), ids.end());
    for (const auto& [id, n] : ids) {
      absl::StatusOr<std::vector<int>> nodes =
          fs.ReadList(absl::StrCat(kTierDir, "/", n, "/nodelist"));
      tiers.push_back(absl::StrCat(
          n, " nodes ", nodes.ok() ? ListToString(*nodes) : "unreadable"));
    }
    out.Add(
        "memory_tiers", true,
        absl::StrCat(kTierDir, ": ",
                     tiers.empty() ? "no tiers" : absl::StrJoin(tiers, ", ")));
  } else {
    out.Add("memory_tiers", false,
            absl::StrCat("no ", kTierDir,
                         " (Linux 6.1+): hotpage ranks nodes by HMAT or SLIT "
                         "distance"),
            "Linux 6.1 or later for the kernel's tiers; nothing needed "
            "otherwise");
  }

  // HMAT: nodeN/access0/initiators/read_latency (drivers/base/node.c,
  // node_set_perf_attrs()).
  std::vector<int> hmat_nodes;
  if (absl::StatusOr<std::vector<int>> nodes =
          fs.ReadList(absl::StrCat(kNodeDir, "/online"));
      nodes.ok()) {
    for (int n : *nodes) {
      if (fs.Exists(absl::StrCat(kNodeDir, "/node", n,
                                 "/access0/initiators/read_latency"))) {
        hmat_nodes.push_back(n);
      }
    }
  }
  out.Add("hmat", !hmat_nodes.empty(),
          hmat_nodes.empty()
              ? "no node has access0/initiators latency: the firmware has no "
                "ACPI HMAT (tiers come from the kernel or SLIT distance)"
              : absl::StrCat("access0 latency/bandwidth on nodes ",
                             ListToString(hmat_nodes)),
          "nothing to do unless the tiers are wrong: firmware with ACPI HMAT "
          "gives better tiers");

  // DAMON: the sysfs interface and whether one of its kdamonds runs.
  if (!caps.damon_sysfs) {
    out.Add("damon", false,
            absl::StrCat("no ", kDamonAdmin,
                         " (CONFIG_DAMON_SYSFS, Linux 5.18+): no --source "
                         "damon"),
            "a kernel with CONFIG_DAMON_SYSFS, or another source");
  } else {
    std::vector<std::string> busy;
    const std::string kd = absl::StrCat(kDamonAdmin, "/kdamonds");
    if (absl::StatusOr<std::vector<std::string>> ids = fs.ListDir(kd);
        ids.ok()) {
      for (const std::string& id : *ids) {
        absl::StatusOr<std::string> state =
            fs.ReadTrimmed(absl::StrCat(kd, "/", id, "/state"));
        if (state.ok() && *state == "on") busy.push_back(id);
      }
    }
    // The DAMON_RECLAIM and DAMON_LRU_SORT modules start their kdamond
    // exclusively (damon_start(..., true) in mm/damon/reclaim.c and
    // lru_sort.c): no sysfs kdamond can start beside them (EBUSY).
    std::vector<std::string> modules;
    for (const char* m : {"damon_reclaim", "damon_lru_sort"}) {
      absl::StatusOr<std::string> en = fs.ReadTrimmed(
          absl::StrCat("/sys/module/", m, "/parameters/enabled"));
      if (en.ok() && (*en == "Y" || *en == "1")) modules.push_back(m);
    }
    std::string value = "sysfs interface present";
    if (!busy.empty()) {
      absl::StrAppend(&value, "; kdamond ", absl::StrJoin(busy, ","),
                      " is on (another DAMON user, or a hotpage run)");
    }
    if (!modules.empty()) {
      absl::StrAppend(&value, "; ", absl::StrJoin(modules, ", "),
                      " enabled (exclusive: no other kdamond can start)");
    }
    out.Add("damon", busy.empty() && modules.empty() && caps.cap_sys_admin,
            caps.cap_sys_admin ? value
                               : absl::StrCat(value, "; needs CAP_SYS_ADMIN"),
            !caps.cap_sys_admin
                ? "run as root"
                : absl::StrCat("stop the other user (echo off > ", kd,
                               "/N/state; echo N > /sys/module/MODULE/"
                               "parameters/enabled), or use another source"));
  }

  // Soft-dirty write faults (--write-faults).
  {
    bool ok = false;
    std::string value;
    if (env.soft_dirty_probe) {
      ok = env.soft_dirty_probe->ok();
      value = ok ? "yes: clearing soft-dirty bits makes the next write fault "
                   "(probed on hotpage's own memory)"
                 : std::string(env.soft_dirty_probe->message());
    } else if (!fs.Exists("/proc/self/clear_refs")) {
      value = "no /proc/self/clear_refs (CONFIG_PROC_PAGE_MONITOR off)";
    } else {
      absl::StatusOr<std::string> config =
          fs.ReadFile(absl::StrCat("/boot/config-", release));
      if (!config.ok()) {
        value = absl::StrCat("unknown: /proc/self/clear_refs exists but ",
                             fs.Display(absl::StrCat("/boot/config-", release)),
                             " does not say whether CONFIG_MEM_SOFT_DIRTY is "
                             "set");
      } else {
        ok = absl::StrContains(*config, "\nCONFIG_MEM_SOFT_DIRTY=y");
        value = ok ? "yes: CONFIG_MEM_SOFT_DIRTY=y"
                   : "no: CONFIG_MEM_SOFT_DIRTY is not set";
      }
    }
    out.Add("soft_dirty", ok,
            absl::StrCat(value, " (--write-faults; pagemap bit 55)"),
            "a kernel with CONFIG_MEM_SOFT_DIRTY (x86-64 and arm64 distro "
            "kernels have it); otherwise hint faults or page faults");
  }

  // NUMA balancing: bit 0 = NUMA_BALANCING_NORMAL, bit 1 =
  // NUMA_BALANCING_MEMORY_TIERING (include/linux/sched/sysctl.h).
  if (!caps.numa_balancing) {
    out.Add("numa_balancing", true,
            "absent (no CONFIG_NUMA_BALANCING): the kernel moves no pages by "
            "access, nothing to fight; no --source hintfault");
  } else {
    const int64_t nb = *caps.numa_balancing;
    std::vector<std::string> fights;
    if (nb & 1) {
      fights.push_back(
          "mode 1 (NUMA_BALANCING_NORMAL) migrates pages toward the CPUs "
          "that touch them, on every node");
    }
    if ((nb & 2) && !HintFaultSysctlsAlreadyUsable(caps)) {
      fights.push_back(absl::StrCat(
          "mode 2 (NUMA_BALANCING_MEMORY_TIERING) promotes hot pages from "
          "slower tiers itself (promote rate limit ",
          caps.promote_rate_limit_mbps
              ? absl::StrCat(*caps.promote_rate_limit_mbps, " MB/s")
              : "absent",
          ")"));
    }
    std::string value = absl::StrCat("kernel.numa_balancing=", nb);
    if (fights.empty()) {
      absl::StrAppend(&value, nb == 0 ? ": off"
                                      : ": tiering mode with promotion "
                                        "off (rate limit 0): the kernel "
                                        "senses, hotpage decides");
    } else {
      absl::StrAppend(&value, ": ", absl::StrJoin(fights, "; "),
                      ": the kernel would fight hotpage over the same pages");
    }
    out.Add("numa_balancing", fights.empty(), value,
            "sysctl -w kernel.numa_balancing=0, or let `hotpage attach "
            "--source hintfault --allow-sysctl-changes` hold it at 2 with "
            "promotion off while it runs");
  }
  // Read as attach reads it (KernelDemotes), so the two agree.
  const bool on = KernelDemotes(fs);
  if (fs.Exists(kDemotion) && source == "hintfault") {
    // Hint faults see no fast-tier page: the kernel's reclaim, whose LRU
    // does, picks what leaves a full fast tier (policy/engine.h, "The
    // kernel's LRU as the fast tier's evidence").
    out.Add("demotion", on,
            on ? "demotion_enabled=true: with --source hintfault, hotpage "
                 "promotes pages that fault in two scan passes into a full "
                 "fast tier and the kernel's reclaim demotes what its LRU "
                 "holds coldest"
               : "demotion_enabled=false: --source hintfault sees no page on "
                 "the fast tier, so once it is full hotpage can only probe "
                 "it (demoting pages it never sampled, from 10 s on)",
            absl::StrCat("echo true > ", kDemotion,
                         " before attaching: the kernel's LRU, which sees the "
                         "fast tier, then picks what leaves it"));
  } else if (fs.Exists(kDemotion)) {
    out.Add("demotion", !on,
            on ? "demotion_enabled=true: reclaim moves cold pages to slower "
                 "tiers by the kernel's LRU, beside hotpage's own demotion"
               : "demotion_enabled=false: only hotpage demotes",
            absl::StrCat("echo false > ", kDemotion,
                         " to let hotpage alone decide demotion (or keep it "
                         "as a safety net under memory pressure)"));
  } else {
    out.Add("demotion", true,
            absl::StrCat("no ", kDemotion,
                         " (before Linux 5.15): the kernel does not demote"));
  }
}

// --- the target --------------------------------------------------------------

// Credentials from /proc/PID/status: "Uid:\treal\teffective\tsaved\tfs".
std::optional<std::vector<int64_t>> StatusIds(absl::string_view status,
                                              absl::string_view key) {
  for (absl::string_view line : absl::StrSplit(status, '\n')) {
    if (!absl::ConsumePrefix(&line, key)) continue;
    std::vector<int64_t> ids;
    for (absl::string_view f :
         absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty())) {
      int64_t v = 0;
      if (!absl::SimpleAtoi(f, &v)) return std::nullopt;
      ids.push_back(v);
    }
    if (ids.size() < 3) return std::nullopt;
    return ids;
  }
  return std::nullopt;
}

// The pid, its identity (start time, read before and after the other
// reads: a pid reused in between is caught) and move_pages permission.
// Returns the thread count (1 when unknown).
uint64_t TargetFacts(const KernelFs& fs, const DoctorEnv& env,
                     const Privileges& priv, Facts& out) {
  const int64_t pid = *env.pid;
  const std::string dir = absl::StrCat("/proc/", pid);
  auto start_time = [&]() -> std::optional<ProcStat> {
    absl::StatusOr<std::string> s = fs.ReadFile(dir + "/stat");
    if (!s.ok()) return std::nullopt;
    std::optional<ProcStat> st = ParseProcStat(*s);
    if (!st || st->pid != pid) return std::nullopt;
    return st;
  };
  const std::optional<ProcStat> before = start_time();
  if (!before) {
    out.Add("pid", false,
            absl::StrCat("pid ", pid, ": no such process (",
                         fs.Display(dir + "/stat"), " unreadable)"),
            "check the pid (pgrep NAME)");
    out.Add("move_pages", false, absl::StrCat("pid ", pid, " does not exist"),
            "check the pid");
    return 1;
  }
  uint64_t threads = 1;
  if (absl::StatusOr<std::vector<std::string>> t = fs.ListDir(dir + "/task");
      t.ok() && !t->empty()) {
    threads = t->size();
  }
  absl::StatusOr<std::string> status = fs.ReadFile(dir + "/status");
  const std::optional<ProcStat> after = start_time();
  if (!after || after->start_time_ticks != before->start_time_ticks) {
    out.Add("pid", false,
            absl::StrCat("pid ", pid,
                         " exited (or was reused by another process) while "
                         "being read"),
            "run the doctor again while the target runs");
    return 1;
  }
  const bool zombie = before->state == 'Z' || before->state == 'X';
  out.Add("pid", !zombie,
          absl::StrCat("pid ", pid, " (", before->comm.substr(0, 64), "), ",
                       threads, " thread", threads == 1 ? "" : "s", ", state ",
                       std::string(1, before->state), ", start time ",
                       before->start_time_ticks, " ticks"),
          "the process has exited: start it again");

  // move_pages(2) (Linux 4.13+; before, the same uid or CAP_SYS_NICE):
  // find_mm_struct() in mm/migrate.c asks
  // ptrace_may_access(task, PTRACE_MODE_READ_REALCREDS): the caller's real
  // uid equals the target's real, effective and saved uid and its real gid
  // the target's three gids, or CAP_SYS_PTRACE (__ptrace_may_access() in
  // kernel/ptrace.c; a target that is not dumpable also needs it, which
  // /proc/PID/status does not show: its /proc files are then root's).
  std::optional<std::vector<int64_t>> uids, gids;
  if (status.ok()) {
    uids = StatusIds(*status, "Uid:");
    gids = StatusIds(*status, "Gid:");
  }
  if (!uids || !gids) {
    out.Add("move_pages", priv.sys_ptrace,
            absl::StrCat("cannot read the credentials of pid ", pid, " (",
                         fs.Display(dir + "/status"), ")",
                         priv.sys_ptrace ? "; CAP_SYS_PTRACE allows it" : ""),
            "run hotpage as root");
    return threads;
  }
  auto all = [](const std::vector<int64_t>& ids, int64_t want) {
    return ids[0] == want && ids[1] == want && ids[2] == want;
  };
  const bool same = all(*uids, env.uid) && all(*gids, env.gid);
  const bool ok = same || priv.sys_ptrace;
  out.Add("move_pages", ok,
          absl::StrCat(ok ? "allowed" : "refused (EPERM)", " on pid ", pid,
                       ": target uid ", (*uids)[0], "/", (*uids)[1], "/",
                       (*uids)[2], " gid ", (*gids)[0], "/", (*gids)[1], "/",
                       (*gids)[2], ", hotpage uid ", env.uid, " gid ", env.gid,
                       same              ? " (same user)"
                       : priv.sys_ptrace ? " (CAP_SYS_PTRACE)"
                                         : ", no CAP_SYS_PTRACE"),
          "run hotpage as root (CAP_SYS_PTRACE), or as the target's user");
  return threads;
}

}  // namespace

const DoctorFact* DoctorReport::Find(const std::string& name) const {
  for (const DoctorFact& f : facts) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

absl::StatusOr<DoctorReport> Diagnose(const KernelFs& fs,
                                      const DoctorEnv& env) {
  static const std::set<std::string> kSources = {
      "auto", "pebs", "ibs", "pagefault", "hintfault", "damon"};
  if (!kSources.count(env.source)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown source '", env.source,
        "' (expected auto, pebs, ibs, pagefault, hintfault or damon)"));
  }
  Facts out;
  std::string release;
  if (absl::StatusOr<std::string> rel =
          fs.ReadTrimmed("/proc/sys/kernel/osrelease");
      rel.ok()) {
    release = rel->substr(0, 128);
  }
  const std::optional<std::pair<int, int>> version =
      ParseKernelRelease(release);
  out.Add("kernel", version.has_value(),
          release.empty() ? "unknown (no /proc/sys/kernel/osrelease)"
                          : absl::StrCat("Linux ", release),
          "hotpage needs Linux 5.15 or later");

  PmuFacts(fs, version, out);

  // The source: what attach would take (auto) or the one asked for.
  const SourceCapabilities caps = ProbeSourceCapabilities(
      fs, /*allow_sysctl_changes=*/false, [&]() -> absl::Status {
        if (env.soft_dirty_probe) return *env.soft_dirty_probe;
        return absl::UnimplementedError("soft-dirty not probed in a tree");
      });
  const Privileges priv = ReadPrivileges(fs);
  DoctorReport report;
  std::string source = env.source;
  std::string reason;
  bool write_faults = false;
  if (source == "auto") {
    absl::StatusOr<SourceChoice> choice = ChooseAutoSource(caps);
    if (choice.ok()) {
      source = choice->source;
      reason = choice->reason;
      write_faults = choice->write_faults;
    } else {
      source = "";
      reason = std::string(choice.status().message());
    }
  } else {
    reason = absl::StrCat("--source ", source, " requested");
  }
  const std::string why_not =
      source.empty() ? reason : WhyNot(source, caps, priv, version);
  report.source = source;
  report.source_ok = !source.empty() && why_not.empty();
  out.Add("source", report.source_ok,
          source.empty()
              ? reason
              : absl::StrCat(source, write_faults ? " --write-faults" : "",
                             why_not.empty() ? " can run" : " cannot run: ",
                             why_not, "; ", reason),
          "see the facts below for what is missing; --source names another");

  // The perf events of that source (none for DAMON).
  std::optional<EventGroup> plan;
  if (source == "pebs" || source == "ibs" || source == "pagefault" ||
      source == "hintfault") {
    const SourceRequest req = source == "pebs"  ? SourceRequest::kPebs
                              : source == "ibs" ? SourceRequest::kIbs
                                                : SourceRequest::kPageFault;
    std::string why;
    absl::StatusOr<EventGroup> g = ChooseEvents(fs, req, {}, &why);
    if (g.ok()) {
      std::vector<std::string> events;
      for (const EventSpec& e : g->events) events.push_back(EventLine(e));
      out.Add("plan", true,
              absl::StrCat("the events of ", source, " (", g->encoder,
                           g->grouped ? ", one group" : "",
                           "): ", absl::StrJoin(events, " | ")));
      plan = std::move(*g);
    } else {
      out.Add("plan", false, std::string(g.status().message()),
              "choose another --source");
    }
  } else if (source == "damon") {
    out.Add("plan", true,
            "DAMON: a kdamond samples the target's regions; no perf events");
  } else {
    out.Add("plan", false, "no source can run", "see the source fact");
  }

  // Descriptors: one per event per CPU it opens on, per thread of the
  // target (per-task mode) or once (system-wide, no --pid).
  uint64_t threads = 1;
  if (env.pid) threads = TargetFacts(fs, env, priv, out);
  if (plan) {
    std::vector<int> online;
    if (absl::StatusOr<std::vector<int>> c =
            fs.ReadList("/sys/devices/system/cpu/online");
        c.ok()) {
      online = *c;
    }
    const uint64_t per_task = FdsPerTask(*plan, online);
    const uint64_t need = per_task * threads;
    std::string value = absl::StrCat(
        "soft ", env.nofile_soft, ", hard ", env.nofile_hard,
        "; the plan needs ", need, " (", plan->events.size(), " event",
        plan->events.size() == 1 ? "" : "s", " on ", online.size(),
        " online CPUs = ", per_task,
        env.pid ? absl::StrCat(" per thread x ", threads,
                               threads == 1 ? " thread" : " threads",
                               " of pid ", *env.pid)
                : std::string(" system-wide; --pid counts its threads"),
        ")");
    const bool ok = need <= env.nofile_hard;
    if (ok && need > env.nofile_soft) {
      absl::StrAppend(&value,
                      ": above the soft limit, which hotpage must raise (up "
                      "to the hard limit)");
    }
    out.Add("rlimit_nofile", ok, value,
            absl::StrCat("raise the hard limit: ulimit -Hn ", need,
                         " as root, or LimitNOFILE=", need,
                         " in the systemd unit"));
  }

  PrivilegeFacts(priv, out);
  FeatureFacts(fs, env, version, release, caps, report.source, out);
  report.facts = out.Take();
  return report;
}

std::string DoctorToText(const DoctorReport& report) {
  std::string s;
  for (const DoctorFact& f : report.facts) {
    absl::StrAppend(&s, f.ok ? "ok  " : "no  ", f.name, ": ", f.value);
    if (!f.fix.empty()) absl::StrAppend(&s, " -- fix: ", f.fix);
    s += '\n';
  }
  return s;
}

std::string DoctorToJson(const DoctorReport& report) {
  JsonWriter w(2);
  w.BeginObject();
  w.Key("source");
  if (report.source.empty()) {
    w.Null();
  } else {
    w.String(report.source);
  }
  w.Key("source_ok");
  w.Bool(report.source_ok);
  w.Key("facts");
  w.BeginArray();
  for (const DoctorFact& f : report.facts) {
    w.BeginObject();
    w.Key("name");
    w.String(f.name);
    w.Key("ok");
    w.Bool(f.ok);
    w.Key("value");
    w.String(f.value);
    w.Key("fix");
    w.String(f.fix);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.str() + "\n";
}

}  // namespace hotpage
