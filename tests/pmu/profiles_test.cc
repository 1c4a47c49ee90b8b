// `hotpage record --source auto` end to end on the machine profiles that
// work today (tests/pmu/profiles/README.md), in-process over the fake perf
// kernel: which source auto chose and why, which events were opened on
// which CPUs, that a scripted access stream arrives decoded (address,
// weight, data source), and the descriptor count. The hybrid, Sapphire
// Rapids aux-sample and Zen 2 on 5.15 expectations are in
// profiles_after_fixes_test.cc.

#include <cerrno>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/pmu/profile_checks.h"
#include "tests/pmu/profile_harness.h"

namespace hotpage {
namespace {

using ::absl::StrContains;

// An Intel server with PEBS on every CPU: per-task mem-loads.
void ExpectPebsServer(const char* profile) {
  ProfileRun m(profile);
  const pid_t p = m.target();
  const std::vector<FakeAccess> script = LoadsOnCpus(p, {0, 1, 2, 3}, 8);
  RecordResult r = m.Record({}, script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(StrContains(r.err, "--source auto: pebs (Intel PEBS")) << r.err;
  EXPECT_EQ(r.trace_source, "pebs-load");
  EXPECT_EQ(m.kernel().DescribeOpens(),
            OpensOn("cpu", 4, 0x1cd, p, {0, 1, 2, 3}));
  EXPECT_EQ(m.kernel().max_open_fds(), 4u);  // 1 task x 4 CPUs x 1 event
  EXPECT_EQ(m.kernel().open_fds(), 0u);      // all closed at the end
  ExpectScriptSamples(r.samples, script, /*hardware=*/true);
}

TEST(RecordProfileTest, SkylakeSp) { ExpectPebsServer("skylake_sp"); }

TEST(RecordProfileTest, IcelakeSp) { ExpectPebsServer("icelake_sp"); }

// Sapphire Rapids: each CPU's loads behind a mem-loads-aux leader
// (intel_pmu_hw_config()); loads only in this script.
TEST(RecordProfileTest, SapphireRapidsLoadsThroughTheAuxGroup) {
  ProfileRun m("sapphire_rapids");
  const pid_t p = m.target();
  const std::vector<FakeAccess> script = LoadsOnCpus(p, {0, 1, 2, 3}, 8);
  RecordResult r = m.Record({}, script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(StrContains(r.err, "--source auto: pebs")) << r.err;
  std::vector<std::string> want;
  for (int cpu = 0; cpu < 4; ++cpu) {
    want.push_back(
        absl::StrCat("cpu type=4 config=0x8203 pid=", p, " cpu=", cpu));
    want.push_back(absl::StrCat("cpu type=4 config=0x1cd pid=", p, " cpu=", cpu,
                                " leader=", 2 * cpu));
  }
  EXPECT_EQ(m.kernel().DescribeOpens(), want);
  EXPECT_EQ(m.kernel().max_open_fds(), 8u);
  ExpectScriptSamples(r.samples, script, /*hardware=*/true);
}

// Zen 4 on 6.8 as root: IBS op (cnt_ctl: config bit 19) on every CPU, the
// kernel filling address, weight and data source itself (6.1+).
TEST(RecordProfileTest, Zen4On68) {
  ProfileRun m("zen4_6_8");
  const pid_t p = m.target();
  const std::vector<FakeAccess> script = LoadsOnCpus(p, {0, 1, 2, 3}, 8);
  RecordResult r = m.Record({}, script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(StrContains(r.err, "--source auto: ibs (AMD IBS op")) << r.err;
  EXPECT_EQ(r.trace_source, "ibs-op");
  ASSERT_EQ(m.kernel().opens().size(), 4u);
  for (int cpu = 0; cpu < 4; ++cpu) {
    const FakeOpen& o = m.kernel().opens()[cpu];
    EXPECT_EQ(o.pmu, "ibs_op");
    EXPECT_EQ(o.type, 11u);
    EXPECT_EQ(o.config, uint64_t{1} << 19);
    EXPECT_EQ(o.cpu, cpu);
    EXPECT_GE(o.result, 0);
  }
  EXPECT_EQ(m.kernel().max_open_fds(), 4u);
  ExpectScriptSamples(r.samples, script, /*hardware=*/true);
}

// The VMs: no PEBS, no IBS: software page faults, and the reason says why.
void ExpectPageFaultVm(const char* profile, const char* why) {
  ProfileRun m(profile);
  const pid_t p = m.target();
  const std::vector<FakeAccess> script =
      LoadsOnCpus(p, {0, 1, 2, 3}, 4, /*page_fault=*/true);
  RecordResult r = m.Record({}, script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(StrContains(r.err, "--source auto: pagefault")) << r.err;
  EXPECT_TRUE(StrContains(r.err, why)) << r.err;
  EXPECT_EQ(r.trace_source, "pagefault");
  EXPECT_EQ(m.kernel().DescribeOpens(),
            OpensOn("software", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
                    p, {0, 1, 2, 3}));
  EXPECT_EQ(m.kernel().max_open_fds(), 4u);
  ExpectScriptSamples(r.samples, script, /*hardware=*/false);
}

TEST(RecordProfileTest, VmWithVirtualPmuWithoutPebs) {
  ExpectPageFaultVm("vm_vpmu",
                    "the CPU PMU has neither PEBS mem-loads nor AMD ibs_op");
}

TEST(RecordProfileTest, VmWithoutPmu) {
  ExpectPageFaultVm("vm_nopmu", "this is a VM without a virtual PMU");
}

// Opening PEBS fails (the counters are held by another user: EBUSY from
// __x86_pmu_event_init()): auto says so and takes page faults instead.
TEST(RecordProfileTest, AutoFallsBackWhenPebsFailsToOpen) {
  ProfileRun m("skylake_sp");
  m.kernel().mutable_config().pmc_in_use = true;
  const pid_t p = m.target();
  const std::vector<FakeAccess> script =
      LoadsOnCpus(p, {0, 1, 2, 3}, 4, /*page_fault=*/true);
  RecordResult r = m.Record({}, script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(StrContains(r.err, "--source auto: pebs failed to open: "))
      << r.err;
  EXPECT_TRUE(StrContains(r.err, "EBUSY")) << r.err;
  EXPECT_TRUE(StrContains(r.err, "; taking pagefault instead")) << r.err;
  EXPECT_TRUE(StrContains(r.err,
                          "--source auto: pagefault (software page "
                          "faults"))
      << r.err;
  EXPECT_EQ(r.trace_source, "pagefault");
  ASSERT_FALSE(m.kernel().opens().empty());
  EXPECT_EQ(m.kernel().opens()[0].pmu, "cpu");
  EXPECT_EQ(m.kernel().opens()[0].result, -EBUSY);
  EXPECT_EQ(m.kernel().DescribeOpens(),
            OpensOn("software", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
                    p, {0, 1, 2, 3}));
  EXPECT_EQ(m.kernel().open_fds(), 0u);
  ExpectScriptSamples(r.samples, script, /*hardware=*/false);
}

// A source asked for by name does not fall back.
TEST(RecordProfileTest, NamedSourceFailsWithoutFallback) {
  ProfileRun m("skylake_sp");
  m.kernel().mutable_config().pmc_in_use = true;
  RecordResult r = m.Record({"--source", "pebs"}, {});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(StrContains(r.err, "EBUSY")) << r.err;
  EXPECT_FALSE(StrContains(r.err, "taking")) << r.err;
  EXPECT_EQ(m.kernel().DescribeOpens().size(), 0u);
}

// attach --source auto on the same machine (two memory tiers added, dry
// run): the same events, and the script's samples reach the engine.
TEST(AttachProfileTest, SkylakeSp) {
  ProfileRun m("skylake_sp");
  const pid_t p = m.target();
  const std::vector<FakeAccess> script = LoadsOnCpus(p, {0, 1, 2, 3}, 8);
  RecordResult r = m.Attach({}, script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(StrContains(r.err, "hotpage attach: --source auto: pebs"))
      << r.err;
  EXPECT_EQ(m.kernel().DescribeOpens(),
            OpensOn("cpu", 4, 0x1cd, p, {0, 1, 2, 3}));
  EXPECT_EQ(m.kernel().max_open_fds(), 4u);
  ExpectAttachStats(r.stats_json, script.size(), "pebs");
}

TEST(AttachProfileTest, IcelakeSpAndSapphireRapids) {
  for (const char* name : {"icelake_sp", "sapphire_rapids"}) {
    SCOPED_TRACE(name);
    ProfileRun m(name);
    const std::vector<FakeAccess> script =
        LoadsOnCpus(m.target(), {0, 1, 2, 3}, 8);
    RecordResult r = m.Attach({}, script);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(StrContains(r.err, "--source auto: pebs")) << r.err;
    ExpectAttachStats(r.stats_json, script.size(), "pebs");
  }
}

TEST(AttachProfileTest, Zen4On68) {
  ProfileRun m("zen4_6_8");
  const std::vector<FakeAccess> script =
      LoadsOnCpus(m.target(), {0, 1, 2, 3}, 8);
  RecordResult r = m.Attach({}, script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(StrContains(r.err, "--source auto: ibs")) << r.err;
  EXPECT_EQ(m.kernel().max_open_fds(), 4u);
  ExpectAttachStats(r.stats_json, script.size(), "ibs");
}

// The VMs: no PMU sampler. No numa_balancing sysctl in these trees, so no
// hint faults; write faults where this kernel has soft-dirty, else page
// faults: either way the page-fault events.
TEST(AttachProfileTest, VirtualMachines) {
  for (const char* name : {"vm_vpmu", "vm_nopmu"}) {
    SCOPED_TRACE(name);
    ProfileRun m(name);
    const pid_t p = m.target();
    const std::vector<FakeAccess> script =
        LoadsOnCpus(p, {0, 1, 2, 3}, 4, /*page_fault=*/true);
    RecordResult r = m.Attach({}, script);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(StrContains(r.err, "--source auto: pagefault")) << r.err;
    EXPECT_TRUE(StrContains(r.err, "no PEBS/IBS")) << r.err;
    EXPECT_EQ(m.kernel().DescribeOpens(),
              OpensOn("software", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
                      p, {0, 1, 2, 3}));
    ExpectAttachStats(r.stats_json, script.size(), "pagefault");
  }
}

// attach: PEBS fails to open, page faults are taken instead.
TEST(AttachProfileTest, AutoFallsBackWhenPebsFailsToOpen) {
  ProfileRun m("skylake_sp");
  m.kernel().mutable_config().pmc_in_use = true;
  const pid_t p = m.target();
  const std::vector<FakeAccess> script =
      LoadsOnCpus(p, {0, 1, 2, 3}, 4, /*page_fault=*/true);
  RecordResult r = m.Attach({}, script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(StrContains(r.err,
                          "hotpage attach: --source auto: pebs failed to "
                          "open: "))
      << r.err;
  EXPECT_TRUE(StrContains(r.err, "; taking pagefault")) << r.err;
  EXPECT_EQ(m.kernel().DescribeOpens(),
            OpensOn("software", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
                    p, {0, 1, 2, 3}));
  EXPECT_TRUE(StrContains(r.stats_json, "\"source\": \"pagefault\""))
      << r.stats_json;
}

}  // namespace
}  // namespace hotpage
