// --source auto's choice (source_choice.h): every branch of the order, with
// the reason line it prints, from hand-filled capabilities; and the probe on
// fake /proc and /sys trees.

#include "tools/attach/source_choice.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tools/base/kernel/fake_tree.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {
namespace {

using ::absl::StrContains;

// A root machine without a PMU sampler, where every software source works:
// page-fault events, NUMA balancing off (0) with the default rate limit,
// soft-dirty, DAMON.
SourceCapabilities NoPmuRoot() {
  SourceCapabilities c;
  c.no_pmu_reason = "this is a VM without a virtual PMU";
  c.page_fault_events = true;
  c.perf_event_paranoid = 2;
  c.cap_sys_admin = true;
  c.numa_balancing = 0;
  c.promote_rate_limit_mbps = 65536;
  c.soft_dirty = true;
  c.damon_sysfs = true;
  return c;
}

SourceChoice Choose(const SourceCapabilities& c) {
  absl::StatusOr<SourceChoice> r = ChooseAutoSource(c);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : SourceChoice{};
}

TEST(ChooseAutoSourceTest, PebsFirstThenIbs) {
  SourceCapabilities c = NoPmuRoot();
  c.allow_sysctl_changes = true;
  c.pebs = c.ibs = true;
  SourceChoice s = Choose(c);
  EXPECT_EQ(s.source, "pebs");
  EXPECT_FALSE(s.write_faults);
  EXPECT_EQ(s.reason,
            "--source auto: pebs (Intel PEBS load latency: hardware samples "
            "of load addresses on every tier)");
  c.pebs = false;
  s = Choose(c);
  EXPECT_EQ(s.source, "ibs");
  EXPECT_TRUE(absl::StartsWith(s.reason, "--source auto: ibs (AMD IBS op"));
}

TEST(ChooseAutoSourceTest, HintFaultsWithConsent) {
  SourceCapabilities c = NoPmuRoot();
  c.allow_sysctl_changes = true;
  const SourceChoice s = Choose(c);
  EXPECT_EQ(s.source, "hintfault");
  EXPECT_FALSE(s.write_faults);
  EXPECT_EQ(s.reason,
            "--source auto: hintfault (the kernel's NUMA hint faults: "
            "page-precise, reads and writes, on the slower tiers; "
            "--allow-sysctl-changes given); no PEBS/IBS: this is a VM "
            "without a virtual PMU");
}

TEST(ChooseAutoSourceTest, HintFaultsWhenTheSysctlsAreAlreadyUsable) {
  SourceCapabilities c = NoPmuRoot();
  c.numa_balancing = 3;  // NORMAL | MEMORY_TIERING
  c.promote_rate_limit_mbps = 0;
  EXPECT_TRUE(HintFaultSysctlsAlreadyUsable(c));
  const SourceChoice s = Choose(c);
  EXPECT_EQ(s.source, "hintfault");
  EXPECT_TRUE(StrContains(s.reason, "already as it needs them")) << s.reason;
  // Tiering on but the kernel promoting by itself: not usable unasked.
  c.promote_rate_limit_mbps = 65536;
  EXPECT_FALSE(HintFaultSysctlsAlreadyUsable(c));
  EXPECT_EQ(Choose(c).source, "pagefault");
  c.numa_balancing = 1;  // NORMAL only
  c.promote_rate_limit_mbps = 0;
  EXPECT_FALSE(HintFaultSysctlsAlreadyUsable(c));
}

TEST(ChooseAutoSourceTest, WriteFaultsWithoutConsentSayingWhatHintFaultsNeed) {
  const SourceChoice s = Choose(NoPmuRoot());
  EXPECT_EQ(s.source, "pagefault");
  EXPECT_TRUE(s.write_faults);
  EXPECT_EQ(s.reason,
            "--source auto: pagefault with --write-faults (soft-dirty write "
            "faults: page-precise, every tier, writes only; resets the "
            "process's soft-dirty bits every interval); no PEBS/IBS: this is "
            "a VM without a virtual PMU; no hint faults: they need "
            "kernel.numa_balancing 0 -> 2 and "
            "kernel.numa_balancing_promote_rate_limit_MBps 65536 -> 0 while "
            "hotpage runs: pass --allow-sysctl-changes to allow it");
}

TEST(ChooseAutoSourceTest, EachMissingPieceOfHintFaultsIsNamed) {
  SourceCapabilities c = NoPmuRoot();
  c.allow_sysctl_changes = true;
  c.cap_sys_admin = false;
  SourceChoice s = Choose(c);
  EXPECT_EQ(s.source, "pagefault");
  EXPECT_TRUE(s.write_faults);
  EXPECT_TRUE(StrContains(s.reason,
                          "no hint faults: managing "
                          "kernel.numa_balancing needs root"))
      << s.reason;
  c = NoPmuRoot();
  c.allow_sysctl_changes = true;
  c.promote_rate_limit_mbps.reset();
  s = Choose(c);
  EXPECT_EQ(s.source, "pagefault");
  EXPECT_TRUE(StrContains(s.reason, "Linux 6.0+")) << s.reason;
  c.numa_balancing.reset();
  s = Choose(c);
  EXPECT_TRUE(StrContains(s.reason, "CONFIG_NUMA_BALANCING")) << s.reason;
}

TEST(ChooseAutoSourceTest, PageFaultsBeforeDamon) {
  SourceCapabilities c = NoPmuRoot();
  c.soft_dirty = false;
  c.soft_dirty_reason =
      "clearing soft-dirty bits makes no write fault on this kernel (built "
      "without CONFIG_MEM_SOFT_DIRTY)";
  const SourceChoice s = Choose(c);
  EXPECT_EQ(s.source, "pagefault");
  EXPECT_FALSE(s.write_faults);
  EXPECT_TRUE(absl::StartsWith(
      s.reason,
      "--source auto: pagefault (page-precise but first touches "
      "only: pages already resident are not seen); no PEBS/IBS: "))
      << s.reason;
  EXPECT_TRUE(
      StrContains(s.reason,
                  "no write faults: clearing soft-dirty bits makes no write "
                  "fault on this kernel (built without CONFIG_MEM_SOFT_DIRTY)"))
      << s.reason;
  EXPECT_TRUE(StrContains(s.reason, "3.5-4x")) << s.reason;
  EXPECT_TRUE(StrContains(s.reason, "--source damon")) << s.reason;
}

TEST(ChooseAutoSourceTest, DamonOnlyWithoutPageFaultEvents) {
  SourceCapabilities c = NoPmuRoot();
  c.allow_sysctl_changes = true;
  c.page_fault_events = false;
  c.perf_event_paranoid = 3;
  const SourceChoice s = Choose(c);
  EXPECT_EQ(s.source, "damon");
  EXPECT_FALSE(s.write_faults);
  EXPECT_EQ(s.reason,
            "--source auto: damon (2 MiB region evidence: may promote "
            "several times the hot set); no PEBS/IBS: this is a VM without "
            "a virtual PMU; no hint faults: perf_event_paranoid is 3 and "
            "the process lacks CAP_PERFMON, so page-fault events cannot be "
            "opened; no page faults: perf_event_paranoid is 3 and the "
            "process lacks CAP_PERFMON, so page-fault events cannot be "
            "opened");
}

TEST(ChooseAutoSourceTest, NothingCanRunNamesEveryReason) {
  SourceCapabilities c = NoPmuRoot();
  c.page_fault_events = false;
  c.perf_event_paranoid.reset();
  c.cap_sys_admin = false;
  absl::StatusOr<SourceChoice> r = ChooseAutoSource(c);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(r.status()));
  EXPECT_TRUE(StrContains(r.status().message(), "CONFIG_PERF_EVENTS"));
  EXPECT_TRUE(StrContains(r.status().message(), "no DAMON: DAMON needs root"));
  c.cap_sys_admin = true;
  c.damon_sysfs = false;
  r = ChooseAutoSource(c);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(StrContains(r.status().message(), "CONFIG_DAMON_SYSFS"));
}

// The probe on fake trees: what it reads, and that it asks about
// soft-dirty only when no PMU sampler exists.
TEST(ProbeSourceCapabilitiesTest, ReadsTheMachine) {
  FakeTree t;
  t.Mkdir("/sys/bus/event_source/devices/software");
  t.Write("/proc/sys/kernel/perf_event_paranoid", "2\n");
  t.Write("/proc/sys/kernel/numa_balancing", "2\n");
  t.Write("/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps", "0\n");
  t.Write("/proc/self/status", "Name:\thotpage\nCapEff:\t000001ffffffffff\n");
  t.Write("/proc/cpuinfo", "flags\t\t: fpu hypervisor\n");
  t.Mkdir("/sys/kernel/mm/damon/admin");
  KernelFs fs = *KernelFs::Open(t.root());
  int probes = 0;
  SourceCapabilities c = ProbeSourceCapabilities(fs, false, [&] {
    ++probes;
    return absl::OkStatus();
  });
  EXPECT_EQ(probes, 1);
  EXPECT_FALSE(c.pebs || c.ibs);
  EXPECT_EQ(c.no_pmu_reason, "this is a VM without a virtual PMU");
  EXPECT_TRUE(c.page_fault_events);
  EXPECT_TRUE(c.cap_sys_admin);
  EXPECT_EQ(c.numa_balancing, 2);
  EXPECT_EQ(c.promote_rate_limit_mbps, 0);
  EXPECT_TRUE(c.soft_dirty);
  EXPECT_TRUE(c.damon_sysfs);
  EXPECT_EQ(Choose(c).source, "hintfault");  // already usable, no consent

  // Paranoid 3 without capabilities, no sysctls, no soft-dirty, no DAMON.
  FakeTree u;
  u.Write("/proc/sys/kernel/perf_event_paranoid", "3\n");
  u.Write("/proc/self/status", "Name:\thotpage\nCapEff:\t0000000000000000\n");
  KernelFs ufs = *KernelFs::Open(u.root());
  c = ProbeSourceCapabilities(ufs, true, [] {
    return absl::UnimplementedError("no CONFIG_MEM_SOFT_DIRTY");
  });
  EXPECT_FALSE(c.page_fault_events);
  EXPECT_FALSE(c.cap_sys_admin);
  EXPECT_FALSE(c.numa_balancing.has_value());
  EXPECT_FALSE(c.soft_dirty);
  EXPECT_EQ(c.soft_dirty_reason, "no CONFIG_MEM_SOFT_DIRTY");
  EXPECT_FALSE(c.damon_sysfs);
  EXPECT_FALSE(ChooseAutoSource(c).ok());

  // A PEBS machine: no soft-dirty probe.
  FakeTree p;
  p.Write("/sys/bus/event_source/devices/cpu/type", "4\n");
  p.Write("/sys/bus/event_source/devices/cpu/events/mem-loads",
          "event=0xcd,umask=0x1,ldlat=3\n");
  KernelFs pfs = *KernelFs::Open(p.root());
  probes = 0;
  c = ProbeSourceCapabilities(pfs, false, [&] {
    ++probes;
    return absl::OkStatus();
  });
  EXPECT_EQ(probes, 0);
  EXPECT_TRUE(c.pebs);
  EXPECT_EQ(Choose(c).source, "pebs");
}

// --- Privilege (issue 12) ----------------------------------------------------

// A PMU machine without CAP_PERFMON at the default paranoid level 2.
SourceCapabilities Unprivileged() {
  SourceCapabilities c;
  c.page_fault_events = true;
  c.perf_event_paranoid = 2;
  c.soft_dirty = true;
  return c;
}

TEST(ChooseAutoSourceTest, IbsBefore62NeedsCpuWidePrivilege) {
  SourceCapabilities c = Unprivileged();
  c.ibs = true;
  c.kernel_version = std::make_pair(5, 15);
  SourceChoice s = Choose(c);
  EXPECT_EQ(s.source, "pagefault");
  EXPECT_TRUE(s.write_faults);
  EXPECT_TRUE(StrContains(s.reason,
                          "no IBS: its events must be CPU-wide (per-task IBS "
                          "needs Linux 6.2 or later), which needs CAP_PERFMON "
                          "or perf_event_paranoid <= 0, and "
                          "perf_event_paranoid is 2"))
      << s.reason;
  EXPECT_FALSE(StrContains(s.reason, "no PEBS/IBS")) << s.reason;
  c.kernel_version = std::make_pair(6, 2);  // per-task IBS
  c.ibs_swfilt = true;                      // excludes the kernel
  EXPECT_EQ(Choose(c).source, "ibs");
  // Without swfilt IBS samples kernel mode: paranoid 2 forbids that even
  // per task (perf_allow_kernel()), 1 allows it.
  c.ibs_swfilt = false;
  s = Choose(c);
  EXPECT_EQ(s.source, "pagefault");
  EXPECT_TRUE(StrContains(s.reason,
                          "no IBS: its events sample kernel mode too (no "
                          "swfilt to exclude it), which needs CAP_PERFMON or "
                          "perf_event_paranoid <= 1, and perf_event_paranoid "
                          "is 2"))
      << s.reason;
  c.perf_event_paranoid = 1;
  EXPECT_EQ(Choose(c).source, "ibs");
  c.perf_event_paranoid = 2;
  c.kernel_version = std::make_pair(5, 15);
  c.cap_perfmon = true;
  EXPECT_EQ(Choose(c).source, "ibs");
  c.cap_perfmon = false;
  c.perf_event_paranoid = 0;
  EXPECT_EQ(Choose(c).source, "ibs");
}

TEST(ChooseAutoSourceTest, SystemWidePebsNeedsPrivilegeAndParanoid3Nothing) {
  SourceCapabilities c = Unprivileged();
  c.pebs = true;
  EXPECT_EQ(Choose(c).source, "pebs");  // per task at paranoid 2
  c.system_wide = true;
  SourceChoice s = Choose(c);
  EXPECT_EQ(s.source, "pagefault");
  EXPECT_TRUE(StrContains(s.reason,
                          "no PEBS: its events must be CPU-wide "
                          "(--all or --system-wide)"))
      << s.reason;
  c.system_wide = false;
  c.perf_event_paranoid = 3;  // Debian: no event without CAP_PERFMON
  c.page_fault_events = false;
  absl::StatusOr<SourceChoice> r = ChooseAutoSource(c);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(StrContains(r.status().message(),
                          "no PEBS: perf_event_paranoid is 3 and the process "
                          "lacks CAP_PERFMON"))
      << r.status();
}

// --- Fallback when opening fails (issue 12)
// -----------------------------------

TEST(OpenAutoSourceTest, FallsBackWhenOpeningFailsAndSaysSo) {
  SourceCapabilities c = Unprivileged();
  c.pebs = true;
  std::vector<std::string> tried, said;
  absl::StatusOr<SourceChoice> r = OpenAutoSource(
      c,
      [&](const SourceChoice& s) {
        tried.push_back(SourceKey(s));
        if (s.source == "pebs") {
          return absl::NotFoundError(
              "perf_event_open cpu_core/mem-loads-aux/: ENOENT [cpu 4]");
        }
        return absl::OkStatus();
      },
      [&](const std::string& line) { said.push_back(line); });
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->source, "pagefault");
  EXPECT_TRUE(r->write_faults);
  EXPECT_EQ(tried,
            (std::vector<std::string>{"pebs", "pagefault --write-faults"}));
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0],
            "--source auto: pebs failed to open: perf_event_open "
            "cpu_core/mem-loads-aux/: ENOENT [cpu 4]; taking pagefault "
            "--write-faults instead");
  EXPECT_TRUE(StrContains(r->reason, "pebs failed to open: perf_event_open"))
      << r->reason;
}

TEST(OpenAutoSourceTest, WalksTheWholeOrderAndNamesEveryFailure) {
  SourceCapabilities c = NoPmuRoot();
  c.allow_sysctl_changes = true;
  c.ibs = true;
  c.cap_perfmon = true;
  std::vector<std::string> tried, said;
  absl::StatusOr<SourceChoice> r = OpenAutoSource(
      c,
      [&](const SourceChoice& s) {
        tried.push_back(SourceKey(s));
        return absl::PermissionDeniedError(absl::StrCat(SourceKey(s), " no"));
      },
      [&](const std::string& line) { said.push_back(line); });
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(r.status()));
  EXPECT_EQ(tried, (std::vector<std::string>{"ibs", "hintfault",
                                             "pagefault --write-faults",
                                             "pagefault", "damon"}));
  ASSERT_EQ(said.size(), 5u);
  EXPECT_EQ(said[0],
            "--source auto: ibs failed to open: ibs no; taking hintfault "
            "instead");
  EXPECT_EQ(said[4],
            "--source auto: damon failed to open: damon no; no other source "
            "can run");
  for (const char* key : {"ibs failed to open", "hintfault failed to open",
                          "pagefault --write-faults failed to open",
                          "pagefault failed to open", "damon failed to open"}) {
    EXPECT_TRUE(StrContains(r.status().message(), key)) << r.status();
  }
}

TEST(OpenAutoSourceTest, RecordTakesPerfSourcesOnly) {
  SourceCapabilities c = NoPmuRoot();
  c.perf_sources_only = true;
  c.allow_sysctl_changes = true;
  c.pebs = true;
  std::vector<std::string> tried;
  absl::StatusOr<SourceChoice> r = OpenAutoSource(
      c,
      [&](const SourceChoice& s) {
        tried.push_back(SourceKey(s));
        return s.source == "pebs" ? absl::ResourceExhaustedError("EMFILE")
                                  : absl::OkStatus();
      },
      [](const std::string&) {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(tried, (std::vector<std::string>{"pebs", "pagefault"}));
  EXPECT_FALSE(r->write_faults);
  EXPECT_EQ(r->reason,
            "--source auto: pagefault (software page faults: page-precise "
            "but first touches only: pages already resident are not seen); "
            "pebs failed to open: EMFILE");
  tried.clear();
  r = OpenAutoSource(
      c,
      [&](const SourceChoice& s) {
        tried.push_back(SourceKey(s));
        return absl::UnavailableError("no");
      },
      [](const std::string&) {});
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(tried, (std::vector<std::string>{"pebs", "pagefault"}));
}

// With a PMU, soft-dirty was not probed; the fallback probes it once it
// gets past the PMU.
TEST(OpenAutoSourceTest, ProbesSoftDirtyWhenFallingPastThePmu) {
  SourceCapabilities c = Unprivileged();
  c.pebs = true;
  c.soft_dirty = false;
  c.soft_dirty_probed = false;
  c.soft_dirty_reason = "not probed (a PMU sampler is available)";
  int probes = 0;
  absl::StatusOr<SourceChoice> r = OpenAutoSource(
      c,
      [](const SourceChoice& s) {
        return s.source == "pebs" ? absl::NotFoundError("ENOENT")
                                  : absl::OkStatus();
      },
      [](const std::string&) {},
      [&] {
        ++probes;
        return absl::OkStatus();
      });
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(probes, 1);
  EXPECT_EQ(SourceKey(*r), "pagefault --write-faults");
}

TEST(ProbeSourceCapabilitiesTest, ReadsKernelVersionAndCapPerfmon) {
  FakeTree t;
  t.Write("/sys/bus/event_source/devices/ibs_op/type", "11\n");
  t.Write("/proc/sys/kernel/perf_event_paranoid", "2\n");
  t.Write("/proc/sys/kernel/osrelease", "5.15.0-91-generic\n");
  // CAP_PERFMON is bit 38.
  t.Write("/proc/self/status", "Name:\thotpage\nCapEff:\t0000004000000000\n");
  KernelFs fs = *KernelFs::Open(t.root());
  SourceCapabilities c =
      ProbeSourceCapabilities(fs, false, [] { return absl::OkStatus(); });
  ASSERT_TRUE(c.kernel_version.has_value());
  EXPECT_EQ(*c.kernel_version, std::make_pair(5, 15));
  EXPECT_TRUE(c.cap_perfmon);
  EXPECT_FALSE(c.cap_sys_admin);
  EXPECT_FALSE(c.soft_dirty_probed);
  EXPECT_EQ(Choose(c).source, "ibs");  // CPU-wide IBS allowed
  t.Write("/proc/self/status", "Name:\thotpage\nCapEff:\t0000000000000000\n");
  c = ProbeSourceCapabilities(fs, false, [] { return absl::OkStatus(); });
  EXPECT_FALSE(c.cap_perfmon);
  EXPECT_NE(Choose(c).source, "ibs");
}

}  // namespace
}  // namespace hotpage
