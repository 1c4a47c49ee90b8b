// The profile expectations that hold once the sampler and event-plan fixes
// of issue 12 are merged; tagged manual until then (BUILD.bazel). On main
// each fails for the reason given with it:
//  - AlderLake, MeteorLake (D1): cpu_core events are opened on every CPU,
//    the kernel answers ENOENT at the first E-core, and cpu_atom is never
//    opened; auto then falls back to page faults.
//  - SapphireRapidsAuxSamplesAreDropped (D7): the mem-loads-aux leader's
//    samples are decoded as loads.
//  - Zen2On515 (D2): before 6.1 IBS fills the address only in RAW; every
//    sample is dropped as address 0.
//  - Zen4PerTaskWithoutPrivilege (D9): IBS is forced CPU-wide, which needs
//    CAP_PERFMON or paranoid <= 0 (EACCES at paranoid 1); auto falls back
//    to page faults.
//  - AttachProfileAfterFixesTest.*: the same causes, through attach.
//  - FirstTargetExits (D5): the ring's epoll fd belongs to the first
//    target's event; once that task exits it reports EPOLLHUP forever and
//    the poll loop spins at 100% of a core.

#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/pmu/profile_checks.h"
#include "tests/pmu/profile_harness.h"

namespace hotpage {
namespace {

using ::absl::StrContains;

// Both core types sampled, each PMU only on its own CPUs.
TEST(RecordProfileAfterFixesTest, AlderLake) {
  ProfileRun m("alder_lake");
  const pid_t p = m.target();
  const std::vector<FakeAccess> script =
      LoadsOnCpus(p, {0, 1, 2, 3, 4, 5, 6, 7}, 4);
  RecordResult r = m.Record({}, script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(StrContains(r.err, "--source auto: pebs")) << r.err;
  EXPECT_EQ(r.trace_source, "pebs-load");
  std::vector<std::string> opens = m.kernel().DescribeOpens();
  std::sort(opens.begin(), opens.end());
  // Open order between the two PMUs is the plan's business; the set is not.
  std::vector<std::string> want =
      Concat({OpensOn("cpu_atom", 10, 0x5d0, p, {4, 5, 6, 7})});
  for (const FakeOpen& o : m.kernel().opens()) {
    EXPECT_GE(o.result, 0) << o.pmu << " cpu " << o.cpu;
  }
  int core_lines = 0;
  for (const std::string& line : opens) {
    if (absl::StartsWith(line, "cpu_core")) ++core_lines;
  }
  EXPECT_EQ(core_lines, 8);  // aux + load on each of the 4 P-core CPUs
  for (const std::string& w : want) {
    EXPECT_TRUE(std::find(opens.begin(), opens.end(), w) != opens.end()) << w;
  }
  for (int cpu = 0; cpu < 4; ++cpu) {
    const std::string aux =
        absl::StrCat("cpu_core type=4 config=0x8203 pid=", p, " cpu=", cpu);
    EXPECT_TRUE(std::find(opens.begin(), opens.end(), aux) != opens.end())
        << aux;
  }
  EXPECT_EQ(m.kernel().max_open_fds(), 12u);  // 4 x (aux + load) + 4 x atom
  ExpectScriptSamples(r.samples, script, /*hardware=*/true);
}

TEST(RecordProfileAfterFixesTest, MeteorLake) {
  ProfileRun m("meteor_lake");
  const pid_t p = m.target();
  const std::vector<FakeAccess> script =
      LoadsOnCpus(p, {0, 1, 2, 3, 4, 5, 6, 7}, 4);
  RecordResult r = m.Record({}, script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(StrContains(r.err, "--source auto: pebs")) << r.err;
  std::vector<std::string> opens = m.kernel().DescribeOpens();
  std::sort(opens.begin(), opens.end());
  std::vector<std::string> want =
      Concat({OpensOn("cpu_atom", 10, 0x5d0, p, {4, 5, 6, 7}),
              OpensOn("cpu_core", 4, 0x1cd, p, {0, 1, 2, 3})});
  std::sort(want.begin(), want.end());
  EXPECT_EQ(opens, want);  // no aux on Meteor Lake
  EXPECT_EQ(m.kernel().max_open_fds(), 8u);
  ExpectScriptSamples(r.samples, script, /*hardware=*/true);
}

// The aux leader samples store-forward blocks; none of them may reach the
// trace as a load.
TEST(RecordProfileAfterFixesTest, SapphireRapidsAuxSamplesAreDropped) {
  ProfileRun m("sapphire_rapids");
  const pid_t p = m.target();
  const std::vector<FakeAccess> loads = LoadsOnCpus(p, {0, 1, 2, 3}, 8);
  std::vector<FakeAccess> script = loads;
  for (int i = 0; i < 8; ++i) {
    FakeAccess blocked;
    blocked.pid = p;
    blocked.tid = p;
    blocked.cpu = i % 4;
    blocked.addr = 0x7e0000000000ull + 4096 * i;
    blocked.time_ns = 500'000 + 1000 * i;
    blocked.kind = FakeAccessKind::kStoreForwardBlock;
    script.push_back(blocked);
  }
  RecordResult r = m.Record({}, script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectScriptSamples(r.samples, loads, /*hardware=*/true);
}

// Zen 2 on 5.15 as root: IBS is CPU-wide (no per-task IBS before 6.2), and
// the address comes from the RAW IbsDcLinAd.
TEST(RecordProfileAfterFixesTest, Zen2On515) {
  ProfileRun m("zen2_5_15");
  const pid_t p = m.target();
  const std::vector<FakeAccess> script = LoadsOnCpus(p, {0, 1, 2, 3}, 8);
  RecordResult r = m.Record({}, script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(StrContains(r.err, "--source auto: ibs")) << r.err;
  for (const FakeOpen& o : m.kernel().opens()) {
    EXPECT_EQ(o.pid, -1);
    EXPECT_NE(o.sample_type & PERF_SAMPLE_RAW, 0u);
  }
  // The kernel gives no data source or weight field before 6.1; the
  // addresses must all be there.
  std::vector<Sample> s = r.samples;
  ASSERT_EQ(s.size(), script.size());
  std::sort(s.begin(), s.end(), [](const Sample& a, const Sample& b) {
    return a.time_ns < b.time_ns;
  });
  for (size_t i = 0; i < s.size(); ++i) {
    EXPECT_EQ(s[i].vaddr, script[i].addr);
    EXPECT_EQ(s[i].cpu, static_cast<uint32_t>(script[i].cpu));
  }
}

// Zen 4 on 6.8 without CAP_PERFMON at paranoid 2: per-task IBS (6.2+).
// Per-task IBS from 6.2 (D9). IBS without swfilt samples kernel mode too,
// so unprivileged it needs perf_event_paranoid <= 1 (perf_allow_kernel());
// CPU-wide it would need <= 0, so only per-task events can open here.
TEST(RecordProfileAfterFixesTest, Zen4PerTaskWithoutPrivilege) {
  ProfileRun m("zen4_6_8");
  m.SetPrivileged(false);
  m.SetParanoid(1);
  const pid_t p = m.target();
  const std::vector<FakeAccess> script = LoadsOnCpus(p, {0, 1, 2, 3}, 8);
  RecordResult r = m.Record({}, script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(StrContains(r.err, "--source auto: ibs")) << r.err;
  EXPECT_FALSE(StrContains(r.err, "failed to open")) << r.err;
  for (const FakeOpen& o : m.kernel().opens()) {
    EXPECT_EQ(o.pmu, "ibs_op");
    EXPECT_EQ(o.pid, p);
    EXPECT_GE(o.result, 0);
  }
  ExpectScriptSamples(r.samples, script, /*hardware=*/true);
}

// At paranoid 2 IBS cannot open even per task: auto passes it over with the
// reason instead of trying and failing.
TEST(RecordProfileAfterFixesTest, Zen4AtParanoid2PassesIbsOverWithTheReason) {
  ProfileRun m("zen4_6_8");
  m.SetPrivileged(false);
  const pid_t p = m.target();
  RecordResult r = m.Record({}, LoadsOnCpus(p, {0, 1, 2, 3}, 2));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(StrContains(r.err, "--source auto: pagefault")) << r.err;
  EXPECT_TRUE(StrContains(r.err, "perf_event_paranoid <= 1")) << r.err;
  EXPECT_FALSE(StrContains(r.err, "failed to open")) << r.err;
  for (const FakeOpen& o : m.kernel().opens()) EXPECT_NE(o.pmu, "ibs_op");
}

// Two targets; the first exits right after its samples. The second keeps
// being sampled and the loop does not spin on the first one's EPOLLHUP.
TEST(RecordProfileAfterFixesTest, FirstTargetExits) {
  ProfileRun m("skylake_sp");
  const pid_t a = m.target();
  const pid_t b = m.AddTarget();
  std::vector<FakeAccess> script = LoadsOnCpus(a, {0, 1, 2, 3}, 2);
  std::vector<FakeAccess> later = LoadsOnCpus(b, {0, 1, 2, 3}, 4);
  for (FakeAccess& x : later) x.time_ns += 100'000'000;  // after a's exit
  m.set_after_script([&](FakePerfKernel& k) {
    k.ExitTask(a);
    k.DeliverAll(later);
  });
  RecordResult r = m.Record({}, script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<FakeAccess> all = script;
  all.insert(all.end(), later.begin(), later.end());
  ExpectScriptSamples(r.samples, all, /*hardware=*/true);
  // "sampler CPU X% of one core": an idle loop (0.1% in the other runs),
  // not a spinning one (100% of what the scheduler gives it: 15% on a
  // loaded 2-core CI machine, measured).
  const size_t at = r.err.find("sampler CPU ");
  ASSERT_NE(at, std::string::npos) << r.err;
  const double cpu_pct = std::atof(r.err.c_str() + at + 12);
  EXPECT_LT(cpu_pct, 5.0) << r.err;
}

// attach --source auto on the same machines: the hardware source is
// taken (no fallback) and every scripted sample reaches the engine.
TEST(AttachProfileAfterFixesTest, Hybrid) {
  for (const char* name : {"alder_lake", "meteor_lake"}) {
    SCOPED_TRACE(name);
    ProfileRun m(name);
    const std::vector<FakeAccess> script =
        LoadsOnCpus(m.target(), {0, 1, 2, 3, 4, 5, 6, 7}, 4);
    RecordResult r = m.Attach({}, script);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(StrContains(r.err, "--source auto: pebs")) << r.err;
    EXPECT_FALSE(StrContains(r.err, "failed to open")) << r.err;
    ExpectAttachStats(r.stats_json, script.size(), "pebs");
  }
}

TEST(AttachProfileAfterFixesTest, SapphireRapidsAuxSamplesAreDropped) {
  ProfileRun m("sapphire_rapids");
  const pid_t p = m.target();
  const std::vector<FakeAccess> loads = LoadsOnCpus(p, {0, 1, 2, 3}, 8);
  std::vector<FakeAccess> script = loads;
  FakeAccess blocked;
  blocked.pid = p;
  blocked.tid = p;
  blocked.addr = 0x7e0000000000ull;
  blocked.time_ns = 500'000;
  blocked.kind = FakeAccessKind::kStoreForwardBlock;
  script.push_back(blocked);
  RecordResult r = m.Attach({}, script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectAttachStats(r.stats_json, loads.size(), "pebs");
}

TEST(AttachProfileAfterFixesTest, Amd) {
  for (const char* name : {"zen2_5_15", "zen4_6_8"}) {
    SCOPED_TRACE(name);
    ProfileRun m(name);
    if (std::string(name) == "zen4_6_8") {
      m.SetPrivileged(false);  // per-task IBS at paranoid 1 (see above)
      m.SetParanoid(1);
    }
    const std::vector<FakeAccess> script =
        LoadsOnCpus(m.target(), {0, 1, 2, 3}, 8);
    RecordResult r = m.Attach({}, script);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(StrContains(r.err, "--source auto: ibs")) << r.err;
    EXPECT_FALSE(StrContains(r.err, "failed to open")) << r.err;
    ExpectAttachStats(r.stats_json, script.size(), "ibs");
  }
}

}  // namespace
}  // namespace hotpage
