// Diagnose() on fake trees of machines this one is not: a VM without a PMU,
// a Sapphire Rapids server (PEBS with the aux leader), a Zen 3 on 5.15
// (IBS), an Alder Lake hybrid, DAMON busy, NUMA balancing in tiering mode,
// and a target process (move_pages permission, descriptors per thread).

#include "tools/doctor.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tools/base/json.h"
#include "tools/base/kernel/fake_tree.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {
namespace {

constexpr char kPmu[] = "/sys/bus/event_source/devices";
constexpr char kNoCaps[] = "0000000000000000";
// CAP_PERFMON (38) | CAP_SYS_ADMIN (21) | CAP_SYS_NICE (23) |
// CAP_SYS_PTRACE (19): what root has.
constexpr char kRootCaps[] = "000001ffffffffff";

// A one-node machine with `cpus` online CPUs, Linux `release`, paranoid 2,
// NUMA balancing off, the given CapEff.
void BaseTree(FakeTree& t, const std::string& release, int cpus,
              const std::string& cap_eff = kNoCaps) {
  t.Write("/proc/sys/kernel/osrelease", release + "\n");
  t.Write("/proc/sys/kernel/perf_event_paranoid", "2\n");
  t.Write("/proc/sys/kernel/numa_balancing", "0\n");
  t.Write("/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps", "65536\n");
  t.Write("/proc/self/status",
          absl::StrCat("Name:\thotpage\nCapEff:\t", cap_eff, "\n"));
  t.Write("/proc/cpuinfo", "flags\t\t: fpu\n");
  t.Write("/sys/devices/system/cpu/online", absl::StrCat("0-", cpus - 1, "\n"));
  t.Write("/sys/devices/system/node/online", "0\n");
  t.Write("/sys/devices/system/node/node0/cpulist",
          absl::StrCat("0-", cpus - 1, "\n"));
  t.Write("/sys/devices/system/node/node0/meminfo",
          "Node 0 MemTotal: 1048576 kB\nNode 0 MemFree: 524288 kB\n");
  t.Write("/sys/devices/system/node/node0/distance", "10\n");
}

// Intel core PMU `pmu` with the load-latency aliases (the kernel's
// arch/x86/events/intel/core.c: mem-loads "event=0xcd,umask=0x1,ldlat=3";
// on Sapphire Rapids mem-loads-aux "event=0x03,umask=0x82").
void IntelPmu(FakeTree& t, const std::string& pmu, int type, bool aux,
              const std::string& cpus = "") {
  const std::string d = absl::StrCat(kPmu, "/", pmu);
  t.Write(d + "/type", absl::StrCat(type, "\n"));
  t.Write(d + "/format/event", "config:0-7\n");
  t.Write(d + "/format/umask", "config:8-15\n");
  t.Write(d + "/format/ldlat", "config1:0-15\n");
  t.Write(d + "/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
  if (aux) t.Write(d + "/events/mem-loads-aux", "event=0x03,umask=0x82\n");
  if (!cpus.empty()) t.Write(d + "/cpus", cpus + "\n");
}

DoctorEnv Env(std::string source = "auto") {
  DoctorEnv env;
  env.source = std::move(source);
  env.nofile_soft = 1024;
  env.nofile_hard = 4096;
  env.uid = 1000;
  env.gid = 1000;
  env.soft_dirty_probe = absl::OkStatus();
  return env;
}

DoctorReport Diag(const FakeTree& t, const DoctorEnv& env) {
  absl::StatusOr<KernelFs> fs = KernelFs::Open(t.root());
  EXPECT_TRUE(fs.ok()) << fs.status();
  absl::StatusOr<DoctorReport> r = Diagnose(*fs, env);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : DoctorReport{};
}

const DoctorFact& Get(const DoctorReport& r, const std::string& name) {
  static const DoctorFact kMissing{"<missing>", false, "", ""};
  const DoctorFact* f = r.Find(name);
  EXPECT_NE(f, nullptr) << "no fact " << name << " in\n" << DoctorToText(r);
  return f ? *f : kMissing;
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(DoctorTest, VmWithoutPmuFallsBackToPageFaultsAndCanRun) {
  FakeTree t;
  BaseTree(t, "6.12.0-1-amd64", 2);
  t.Write("/proc/cpuinfo", "flags\t\t: fpu hypervisor\n");
  const DoctorReport r = Diag(t, Env());
  const DoctorFact& pmu = Get(r, "pmu");
  EXPECT_FALSE(pmu.ok);
  EXPECT_TRUE(Contains(pmu.value, "a VM without a virtual PMU")) << pmu.value;
  EXPECT_FALSE(pmu.fix.empty());
  EXPECT_EQ(r.source, "pagefault");
  EXPECT_TRUE(r.source_ok);
  EXPECT_TRUE(Get(r, "source").ok);
  EXPECT_TRUE(Contains(Get(r, "source").value, "--write-faults"));
  EXPECT_TRUE(Contains(Get(r, "plan").value, "software/page-faults/"))
      << Get(r, "plan").value;
  // 1 event x 2 CPUs, system-wide (no --pid).
  EXPECT_TRUE(Contains(Get(r, "rlimit_nofile").value, "the plan needs 2 "))
      << Get(r, "rlimit_nofile").value;
  EXPECT_TRUE(Get(r, "rlimit_nofile").ok);
  EXPECT_FALSE(Get(r, "cap_perfmon").ok);
  EXPECT_TRUE(Get(r, "perf_event_paranoid").ok);
  EXPECT_TRUE(Contains(Get(r, "perf_event_paranoid").value, "2: per-task"));
  EXPECT_TRUE(Get(r, "numa_balancing").ok);
  EXPECT_TRUE(Get(r, "kernel").ok);
  EXPECT_TRUE(Get(r, "mpol_preferred_many").ok);  // 6.12 >= 5.15
}

TEST(DoctorTest, NothingRunsUnderParanoid3WithoutCapabilities) {
  FakeTree t;
  BaseTree(t, "6.12.0", 2);
  t.Write("/proc/sys/kernel/perf_event_paranoid", "3\n");
  const DoctorReport r = Diag(t, Env());
  EXPECT_FALSE(r.source_ok);
  EXPECT_EQ(r.source, "");
  EXPECT_FALSE(Get(r, "source").ok);
  EXPECT_TRUE(Contains(Get(r, "source").value, "no sample source can run"))
      << Get(r, "source").value;
  EXPECT_FALSE(Get(r, "perf_event_paranoid").ok);
  EXPECT_TRUE(Contains(Get(r, "perf_event_paranoid").fix, "paranoid=2"));
}

TEST(DoctorTest, SapphireRapidsPlansTheAuxGroupAndCountsItsDescriptors) {
  FakeTree t;
  BaseTree(t, "6.8.0", 224);
  IntelPmu(t, "cpu", 4, /*aux=*/true);
  t.Write(absl::StrCat(kPmu, "/cpu/caps/pmu_name"), "sapphire_rapids\n");
  // A 3-thread target (the audit's D3 example: 3 x 224 x 2 = 1344).
  t.Write("/proc/4242/stat",
          "4242 (redis server) S 1 4242 4242 0 -1 0 10 0 0 0 5 6 0 0 20 0 3 "
          "0 777 0 0\n");
  t.Write("/proc/4242/status",
          "Name:\tredis\nUid:\t1000\t1000\t1000\t1000\n"
          "Gid:\t1000\t1000\t1000\t1000\n");
  for (int tid : {4242, 4243, 4244})
    t.Mkdir(absl::StrCat("/proc/4242/task/", tid));
  DoctorEnv env = Env();
  env.pid = 4242;
  DoctorReport r = Diag(t, env);
  const DoctorFact& cpu = Get(r, "pmu.cpu");
  EXPECT_TRUE(cpu.ok);
  EXPECT_TRUE(Contains(cpu.value, "sapphire_rapids")) << cpu.value;
  EXPECT_TRUE(Contains(cpu.value, "mem-loads-aux")) << cpu.value;
  EXPECT_TRUE(Contains(cpu.value, "all CPUs")) << cpu.value;
  EXPECT_EQ(r.source, "pebs");
  EXPECT_TRUE(r.source_ok);
  const DoctorFact& plan = Get(r, "plan");
  EXPECT_TRUE(Contains(plan.value, "cpu/mem-loads-aux/")) << plan.value;
  EXPECT_TRUE(Contains(plan.value, "cpu/mem-loads,ldlat=30/")) << plan.value;
  EXPECT_TRUE(Contains(plan.value, "one group")) << plan.value;
  const DoctorFact& fds = Get(r, "rlimit_nofile");
  EXPECT_TRUE(Contains(fds.value, "the plan needs 1344")) << fds.value;
  EXPECT_TRUE(Contains(fds.value, "3 threads of pid 4242")) << fds.value;
  EXPECT_TRUE(fds.ok);  // under the hard limit 4096
  EXPECT_TRUE(Contains(fds.value, "above the soft limit")) << fds.value;
  EXPECT_TRUE(Get(r, "move_pages").ok);
  EXPECT_TRUE(Contains(Get(r, "move_pages").value, "same user"));
  EXPECT_TRUE(Contains(Get(r, "pid").value, "redis server"));

  env.nofile_hard = 1024;
  r = Diag(t, env);
  EXPECT_FALSE(Get(r, "rlimit_nofile").ok);
  EXPECT_TRUE(Contains(Get(r, "rlimit_nofile").fix, "ulimit -Hn 1344"))
      << Get(r, "rlimit_nofile").fix;
}

TEST(DoctorTest, ZenOn515IbsIsSystemWideOnlyAndNeedsPrivilege) {
  FakeTree t;
  BaseTree(t, "5.15.0-91-generic", 16);
  t.Write(absl::StrCat(kPmu, "/cpu/type"), "4\n");  // AMD's core PMU
  t.Write(absl::StrCat(kPmu, "/ibs_op/type"), "11\n");
  t.Write(absl::StrCat(kPmu, "/ibs_op/format/cnt_ctl"), "config:19\n");
  DoctorReport r = Diag(t, Env());
  const DoctorFact& ibs = Get(r, "pmu.ibs_op");
  EXPECT_TRUE(Contains(ibs.value, "AMD IBS op (cnt_ctl)")) << ibs.value;
  EXPECT_TRUE(Contains(ibs.value, "kernel before 6.1")) << ibs.value;
  EXPECT_TRUE(Contains(ibs.value, "per-task IBS needs Linux 6.2")) << ibs.value;
  // AMD's cpu PMU has no mem-loads, and that is fine.
  EXPECT_TRUE(Get(r, "pmu.cpu").ok) << Get(r, "pmu.cpu").value;
  // Auto weighs privilege (source_choice.h): unprivileged, CPU-wide IBS is
  // out, and it says so.
  EXPECT_EQ(r.source, "pagefault");
  EXPECT_TRUE(
      Contains(Get(r, "source").value, "per-task IBS needs Linux 6.2 or later"))
      << Get(r, "source").value;
  // Asked for by name, IBS cannot run without the privilege.
  DoctorEnv ibs_env = Env();
  ibs_env.source = "ibs";
  r = Diag(t, ibs_env);
  EXPECT_EQ(r.source, "ibs");
  EXPECT_FALSE(r.source_ok);
  EXPECT_TRUE(Contains(Get(r, "source").value, "system-wide only before"))
      << Get(r, "source").value;
  EXPECT_TRUE(Contains(Get(r, "plan").value, "ibs_op/cnt_ctl=1/"))
      << Get(r, "plan").value;

  t.Write("/proc/self/status", absl::StrCat("CapEff:\t", kRootCaps, "\n"));
  r = Diag(t, Env());
  EXPECT_TRUE(r.source_ok) << Get(r, "source").value;
  EXPECT_TRUE(Get(r, "cap_perfmon").ok);

  // 6.2+: per-task IBS, no privilege needed under paranoid 2.
  FakeTree u;
  BaseTree(u, "6.8.0", 16);
  u.Write(absl::StrCat(kPmu, "/ibs_op/type"), "11\n");
  r = Diag(u, Env());
  EXPECT_TRUE(r.source_ok) << Get(r, "source").value;
  EXPECT_TRUE(
      Contains(Get(r, "pmu.ibs_op").value, "per-task IBS (Linux 6.2+)"));
  EXPECT_FALSE(Contains(Get(r, "pmu.ibs_op").value, "before 6.1"));
}

TEST(DoctorTest, HybridListsPCoreAndECorePmusWithTheirCpus) {
  FakeTree t;
  BaseTree(t, "6.8.0", 16);
  IntelPmu(t, "cpu_core", 4, /*aux=*/true, "0-7");
  IntelPmu(t, "cpu_atom", 10, /*aux=*/false, "8-15");
  const DoctorReport r = Diag(t, Env());
  const DoctorFact& core = Get(r, "pmu.cpu_core");
  const DoctorFact& atom = Get(r, "pmu.cpu_atom");
  EXPECT_TRUE(Contains(core.value, "CPUs 0-7")) << core.value;
  EXPECT_TRUE(Contains(core.value, "hybrid: P-cores")) << core.value;
  EXPECT_TRUE(Contains(atom.value, "CPUs 8-15")) << atom.value;
  EXPECT_TRUE(Contains(atom.value, "hybrid: E-cores")) << atom.value;
  EXPECT_TRUE(core.ok);
  EXPECT_TRUE(atom.ok);
  EXPECT_EQ(r.source, "pebs");
  // The plan shows the PMU the events belong to.
  EXPECT_TRUE(Contains(Get(r, "plan").value, "cpu_core/mem-loads"))
      << Get(r, "plan").value;
}

TEST(DoctorTest, VmWithVirtualPmuButNoPebs) {
  FakeTree t;
  BaseTree(t, "6.12.0", 4);
  t.Write(absl::StrCat(kPmu, "/cpu/type"), "4\n");
  const DoctorReport r = Diag(t, Env());
  EXPECT_FALSE(Get(r, "pmu.cpu").ok);
  EXPECT_TRUE(Contains(Get(r, "pmu.cpu").value, "no PEBS load latency"));
  EXPECT_EQ(r.source, "pagefault");
}

TEST(DoctorTest, DamonBusyIsNamed) {
  FakeTree t;
  BaseTree(t, "6.12.0", 4, kRootCaps);
  const std::string kd = "/sys/kernel/mm/damon/admin/kdamonds";
  t.Write(kd + "/nr_kdamonds", "2\n");
  t.Write(kd + "/0/state", "off\n");
  t.Write(kd + "/1/state", "on\n");
  DoctorReport r = Diag(t, Env("damon"));
  const DoctorFact& d = Get(r, "damon");
  EXPECT_FALSE(d.ok);
  EXPECT_TRUE(Contains(d.value, "kdamond 1 is on")) << d.value;
  EXPECT_FALSE(Contains(d.value, "kdamond 0")) << d.value;
  EXPECT_TRUE(Contains(d.fix, "echo off")) << d.fix;
  EXPECT_TRUE(Contains(Get(r, "plan").value, "no perf events"));

  t.Write(kd + "/1/state", "off\n");
  r = Diag(t, Env("damon"));
  EXPECT_TRUE(Get(r, "damon").ok) << Get(r, "damon").value;
  EXPECT_TRUE(r.source_ok);

  t.Write("/sys/module/damon_reclaim/parameters/enabled", "Y\n");
  r = Diag(t, Env("damon"));
  EXPECT_FALSE(Get(r, "damon").ok);
  EXPECT_TRUE(Contains(Get(r, "damon").value, "damon_reclaim enabled"));

  // Without the sysfs interface --source damon cannot run.
  FakeTree u;
  BaseTree(u, "5.15.0", 4, kRootCaps);
  r = Diag(u, Env("damon"));
  EXPECT_FALSE(Get(r, "damon").ok);
  EXPECT_FALSE(r.source_ok);
}

TEST(DoctorTest, NumaBalancingModesAndDemotion) {
  FakeTree t;
  BaseTree(t, "6.12.0", 4);
  t.Write("/proc/sys/kernel/numa_balancing", "2\n");
  t.Write("/sys/kernel/mm/numa/demotion_enabled", "true\n");
  DoctorReport r = Diag(t, Env());
  const DoctorFact& nb = Get(r, "numa_balancing");
  EXPECT_FALSE(nb.ok);
  EXPECT_TRUE(Contains(nb.value, "NUMA_BALANCING_MEMORY_TIERING")) << nb.value;
  EXPECT_TRUE(Contains(nb.value, "fight hotpage")) << nb.value;
  EXPECT_TRUE(Contains(nb.fix, "kernel.numa_balancing=0")) << nb.fix;
  EXPECT_FALSE(Get(r, "demotion").ok);
  EXPECT_TRUE(Contains(Get(r, "demotion").fix, "demotion_enabled"));

  // Tiering mode with promotion off: the kernel only senses.
  t.Write("/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps", "0\n");
  r = Diag(t, Env());
  EXPECT_TRUE(Get(r, "numa_balancing").ok) << Get(r, "numa_balancing").value;

  t.Write("/proc/sys/kernel/numa_balancing", "1\n");
  t.Write("/sys/kernel/mm/numa/demotion_enabled", "false\n");
  r = Diag(t, Env());
  EXPECT_FALSE(Get(r, "numa_balancing").ok);
  EXPECT_TRUE(
      Contains(Get(r, "numa_balancing").value, "NUMA_BALANCING_NORMAL"));
  EXPECT_TRUE(Get(r, "demotion").ok);
}

// With --source hintfault, demotion on reclaim is what lets a full fast tier
// be managed at all (the source sees no page there): recommended, not a
// fight.
TEST(DoctorTest, DemotionIsWantedForTheHintFaultSource) {
  FakeTree t;
  BaseTree(t, "6.12.0", 4);
  t.Write("/proc/sys/kernel/numa_balancing", "0\n");
  t.Write("/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps", "65536\n");
  t.Write("/sys/kernel/mm/numa/demotion_enabled", "false\n");
  DoctorEnv env = Env();
  env.source = "hintfault";
  DoctorReport r = Diag(t, env);
  ASSERT_EQ(r.source, "hintfault");
  EXPECT_FALSE(Get(r, "demotion").ok);
  EXPECT_TRUE(Contains(Get(r, "demotion").fix, "echo true"))
      << Get(r, "demotion").fix;
  t.Write("/sys/kernel/mm/numa/demotion_enabled", "true\n");
  r = Diag(t, env);
  EXPECT_TRUE(Get(r, "demotion").ok);
  EXPECT_TRUE(Contains(Get(r, "demotion").value, "LRU"));
}

TEST(DoctorTest, KernelFeaturesFromTheTree) {
  FakeTree t;
  BaseTree(t, "6.10.0", 4);
  t.Write("/sys/kernel/mm/mempolicy/weighted_interleave/node0", "1\n");
  t.Write("/sys/devices/virtual/memory_tiering/memory_tier4/nodelist", "0\n");
  t.Write("/sys/devices/virtual/memory_tiering/memory_tier35/nodelist", "1\n");
  t.Write("/sys/devices/system/node/node0/access0/initiators/read_latency",
          "80\n");
  t.Write("/proc/self/clear_refs", "");
  t.Write("/boot/config-6.10.0", "# c\nCONFIG_MEM_SOFT_DIRTY=y\n");
  DoctorEnv env = Env();
  env.soft_dirty_probe.reset();  // decide from the tree
  const DoctorReport r = Diag(t, env);
  EXPECT_TRUE(Get(r, "weighted_interleave").ok);
  EXPECT_TRUE(Get(r, "mpol_preferred_many").ok);
  EXPECT_TRUE(Get(r, "memory_tiers").ok);
  EXPECT_TRUE(Contains(Get(r, "memory_tiers").value,
                       "memory_tier4 nodes 0, memory_tier35 nodes 1"))
      << Get(r, "memory_tiers").value;
  EXPECT_TRUE(Get(r, "hmat").ok);
  EXPECT_TRUE(Contains(Get(r, "hmat").value, "nodes 0"));
  EXPECT_TRUE(Get(r, "soft_dirty").ok) << Get(r, "soft_dirty").value;

  FakeTree old;
  BaseTree(old, "5.10.0", 4);
  const DoctorReport o = Diag(old, env);
  EXPECT_FALSE(Get(o, "weighted_interleave").ok);
  EXPECT_FALSE(Get(o, "mpol_preferred_many").ok);
  EXPECT_FALSE(Get(o, "memory_tiers").ok);
  EXPECT_FALSE(Get(o, "hmat").ok);
  EXPECT_FALSE(Get(o, "soft_dirty").ok);
  EXPECT_TRUE(Contains(Get(o, "soft_dirty").value, "clear_refs"));
}

TEST(DoctorTest, MovePagesPermission) {
  FakeTree t;
  BaseTree(t, "6.12.0", 4);
  t.Write("/proc/77/stat",
          "77 (db) S 1 77 77 0 -1 0 10 0 0 0 5 6 0 0 20 0 1 0 999 0 0\n");
  t.Write("/proc/77/status", "Name:\tdb\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\n");
  DoctorEnv env = Env();
  env.pid = 77;
  DoctorReport r = Diag(t, env);
  EXPECT_TRUE(Get(r, "pid").ok);
  EXPECT_FALSE(Get(r, "move_pages").ok);
  EXPECT_TRUE(Contains(Get(r, "move_pages").value, "refused"));
  EXPECT_TRUE(Contains(Get(r, "move_pages").fix, "root"));

  // CAP_SYS_PTRACE allows another user's process.
  t.Write("/proc/self/status", absl::StrCat("CapEff:\t", kRootCaps, "\n"));
  r = Diag(t, env);
  EXPECT_TRUE(Get(r, "move_pages").ok);

  // A setuid target (saved uid differs) is refused to its real user.
  t.Write("/proc/self/status", absl::StrCat("CapEff:\t", kNoCaps, "\n"));
  t.Write("/proc/77/status",
          "Uid:\t1000\t1000\t0\t1000\nGid:\t1000\t1000\t1000\t1000\n");
  r = Diag(t, env);
  EXPECT_FALSE(Get(r, "move_pages").ok);

  // A pid that does not exist.
  env.pid = 78;
  r = Diag(t, env);
  EXPECT_FALSE(Get(r, "pid").ok);
  EXPECT_TRUE(Contains(Get(r, "pid").value, "no such process"));
  EXPECT_FALSE(Get(r, "move_pages").ok);
}

TEST(DoctorTest, JsonHasEveryFact) {
  FakeTree t;
  BaseTree(t, "6.12.0", 2);
  const DoctorReport r = Diag(t, Env());
  absl::StatusOr<Json> j = ParseJson(DoctorToJson(r));
  ASSERT_TRUE(j.ok()) << j.status();
  ASSERT_TRUE((*j)["facts"].is_array());
  EXPECT_EQ((*j)["facts"].size(), r.facts.size());
  EXPECT_EQ((*j)["source"], r.source);
  EXPECT_EQ((*j)["source_ok"], r.source_ok);
  for (const Json& f : (*j)["facts"]) {
    EXPECT_TRUE(f["name"].is_string());
    EXPECT_TRUE(f["ok"].is_boolean());
    EXPECT_TRUE(f["value"].is_string());
    EXPECT_TRUE(f["fix"].is_string());
  }
  // One text line per fact.
  const std::string text = DoctorToText(r);
  EXPECT_EQ(static_cast<size_t>(std::count(text.begin(), text.end(), '\n')),
            r.facts.size());
}

TEST(DoctorTest, UnknownSourceIsAnError) {
  FakeTree t;
  BaseTree(t, "6.12.0", 2);
  absl::StatusOr<KernelFs> fs = KernelFs::Open(t.root());
  ASSERT_TRUE(fs.ok());
  absl::StatusOr<DoctorReport> r = Diagnose(*fs, Env("magic"));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(DoctorTest, ParseKernelRelease) {
  EXPECT_EQ(ParseKernelRelease("6.12.0-1-amd64"), std::make_pair(6, 12));
  EXPECT_EQ(ParseKernelRelease("5.15.0-91-generic"), std::make_pair(5, 15));
  EXPECT_EQ(ParseKernelRelease("6.9-rc1"), std::make_pair(6, 9));
  EXPECT_FALSE(ParseKernelRelease("").has_value());
  EXPECT_FALSE(ParseKernelRelease("six.two").has_value());
  EXPECT_FALSE(ParseKernelRelease("6").has_value());
}

}  // namespace
}  // namespace hotpage
