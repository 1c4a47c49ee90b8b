// Tests of the hint-fault watchdog: the kernel-counter parsers and the
// stall / migration / override logic over scripted observations.

#include "sampler/hintfault/hintfault_watchdog.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace hotpage {
namespace {

constexpr int64_t kPid = 4321;
constexpr char kNb[] = "/proc/sys/kernel/numa_balancing";
constexpr char kRl[] =
    "/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps";

std::string Vmstat(uint64_t pte, uint64_t hint, uint64_t migrated = 0) {
  return absl::StrCat("nr_free_pages 1\nnuma_pte_updates ", pte,
                      "\nnuma_huge_pte_updates 0\nnuma_hint_faults ", hint,
                      "\nnuma_hint_faults_local 0\nnuma_pages_migrated ",
                      migrated, "\npgpromote_success ", migrated,
                      "\npgpromote_candidate ", hint, "\n");
}

std::string Stat(uint64_t minflt, uint64_t utime) {
  return absl::StrCat(kPid, " (a (weird) name) R 1 1 1 0 -1 4194304 ", minflt,
                      " 0 0 0 ", utime, " 3 0 0 20 0 1 0 777 0 0\n");
}

TEST(HintFaultParse, Vmstat) {
  std::optional<NumaVmstat> v = ParseNumaVmstat(Vmstat(49152, 6144, 3));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->numa_pte_updates, 49152u);
  EXPECT_EQ(v->numa_hint_faults, 6144u);
  EXPECT_EQ(v->pgpromote_candidate, 6144u);
  EXPECT_EQ(v->numa_pages_migrated, 3u);
  // Without CONFIG_NUMA_BALANCING the numa_* lines are absent.
  EXPECT_FALSE(ParseNumaVmstat("nr_free_pages 1\npgpromote_success 0\n"));
}

TEST(HintFaultParse, ProcStatCountsFieldsFromTheLastParen) {
  std::optional<ProcCpu> c = ParseProcStatCpu(Stat(67746, 2301));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->minflt, 67746u);
  EXPECT_EQ(c->cpu_ticks, 2304u);  // utime 2301 + stime 3
  EXPECT_FALSE(ParseProcStatCpu("1 (x) R 1 2"));
  EXPECT_FALSE(ParseProcStatCpu("no paren at all"));
}

TEST(HintFaultParse, DemotionEnabled) {
  for (const char* on : {"true", "true\n", " 1 ", "y", "Y", "on"})
    EXPECT_EQ(ParseDemotionEnabled(on), true) << on;
  for (const char* off : {"false\n", "0", "n", "N", "off"})
    EXPECT_EQ(ParseDemotionEnabled(off), false) << off;
  for (const char* bad : {"", "yes please", "2", "truefalse"})
    EXPECT_FALSE(ParseDemotionEnabled(bad).has_value()) << bad;
}

TEST(HintFaultParse, ScanSeq) {
  EXPECT_EQ(ParseNumaScanSeq(
                "se.x : 1\nmm->numa_scan_seq                 :      3\n"),
            3u);
  EXPECT_FALSE(ParseNumaScanSeq("se.sum_exec_runtime : 25206.48\n"));
  EXPECT_FALSE(ParseNumaScanSeq("mm->numa_scan_seq : x\n"));
}

// --- watchdog ----------------------------------------------------------------

HintFaultObservation Obs(double t_s, uint64_t seq, uint64_t cpu_ticks,
                         uint64_t pte = 0, uint64_t hint = 0,
                         uint64_t migrated = 0) {
  HintFaultObservation o;
  o.now_ns = static_cast<uint64_t>(t_s * 1e9);
  o.vmstat = *ParseNumaVmstat(Vmstat(pte, hint, migrated));
  o.scan_seq = seq;
  o.target = ProcCpu{0, cpu_ticks};
  o.sysctls = {std::string("2"), std::string("0")};
  return o;
}

std::vector<HintFaultSysctlChange> Changes() {
  return {{kNb, "0", "2"}, {kRl, "65536", "0"}};
}

TEST(HintFaultWatchdog, StallWhileTheTargetRunsIsWarnedOnceThenResumes) {
  HintFaultWatchdog w({kPid, 1000, 5, 100}, Changes());
  std::vector<std::string> out;
  w.Observe(Obs(0, 10, 0), &out);
  w.Observe(Obs(1, 11, 100, 100, 10), &out);  // a pass
  EXPECT_EQ(w.stats().scan_passes, 1u);
  for (int t = 2; t <= 5; ++t) w.Observe(Obs(t, 11, 100 * t), &out);
  EXPECT_TRUE(out.empty());
  w.Observe(Obs(6, 11, 600), &out);  // 5 s, 5 s of CPU, no pass
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(
      absl::StrContains(out[0], "completed no NUMA scan pass of pid 4321"))
      << out[0];
  EXPECT_TRUE(w.stats().scan_stalled);
  w.Observe(Obs(7, 11, 700), &out);  // still stalled: no repeat
  EXPECT_EQ(out.size(), 1u);
  w.Observe(Obs(8, 12, 800), &out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(absl::StrContains(out[1], "again")) << out[1];
  EXPECT_FALSE(w.stats().scan_stalled);
  EXPECT_EQ(w.stats().stall_episodes, 1u);
  EXPECT_NEAR(w.stats().longest_scan_gap_s, 7.0, 1e-9);
  EXPECT_EQ(w.stats().scan_passes, 2u);
}

TEST(HintFaultWatchdog, AnIdleTargetIsNotAStall) {
  // task_numa_work runs on the task's own ticks: no CPU, no scan, no alarm.
  HintFaultWatchdog w({kPid, 1000, 5, 100}, Changes());
  std::vector<std::string> out;
  w.Observe(Obs(0, 3, 500), &out);
  w.Observe(Obs(60, 3, 550), &out);  // 0.5 s of CPU in a minute
  EXPECT_TRUE(out.empty());
  EXPECT_FALSE(w.stats().scan_stalled);
}

TEST(HintFaultWatchdog, WithoutScanSeqPteUpdatesAndHintFaultsCount) {
  HintFaultWatchdog w({kPid, 1000, 5, 100}, Changes());
  std::vector<std::string> out;
  auto obs = [](double t, uint64_t cpu, uint64_t pte, uint64_t hint) {
    HintFaultObservation o = Obs(t, 0, cpu, pte, hint);
    o.scan_seq.reset();
    return o;
  };
  w.Observe(obs(0, 0, 0, 0), &out);
  w.Observe(obs(3, 300, 10, 0), &out);  // progress
  w.Observe(obs(6, 600, 10, 5), &out);  // progress (hint faults)
  EXPECT_TRUE(out.empty());
  w.Observe(obs(11, 1100, 10, 5), &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(absl::StrContains(out[0], "numa_pte_updates")) << out[0];
  EXPECT_FALSE(w.stats().scan_seq_known);
  EXPECT_EQ(w.stats().delta.numa_hint_faults, 5u);
  EXPECT_NEAR(w.stats().hint_faults_per_sec, 5.0 / 11, 1e-9);
}

TEST(HintFaultWatchdog, KernelMigrationsAreWarnedFirstThenOnDoubling) {
  HintFaultWatchdog w({kPid, 1000, 5, 100}, Changes());
  std::vector<std::string> out;
  w.Observe(Obs(0, 0, 0, 0, 0, 1000), &out);  // the baseline is not ours
  w.Observe(Obs(1, 1, 100, 0, 0, 1000), &out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(w.stats().kernel_migrated_pages, 0u);
  w.Observe(Obs(2, 2, 200, 0, 0, 1010), &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(absl::StrContains(out[0], "itself migrated 10 pages")) << out[0];
  EXPECT_TRUE(absl::StrContains(out[0], "pgdat_free_space_enough")) << out[0];
  w.Observe(Obs(3, 3, 300, 0, 0, 1015), &out);  // 15 < 2 x 10
  EXPECT_EQ(out.size(), 1u);
  w.Observe(Obs(4, 4, 400, 0, 0, 1020), &out);  // 20
  EXPECT_EQ(out.size(), 2u);
  EXPECT_EQ(w.stats().kernel_migrated_pages, 20u);
}

TEST(HintFaultWatchdog, SysctlChangedBySomeoneElseIsWarnedOnce) {
  HintFaultWatchdog w({kPid, 1000, 5, 100}, Changes());
  std::vector<std::string> out;
  w.Observe(Obs(0, 0, 0), &out);
  HintFaultObservation o = Obs(1, 1, 100);
  o.sysctls[0] = "0";
  w.Observe(o, &out);
  o.now_ns += 1000000000;
  w.Observe(o, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(absl::StrContains(
      out[0], "kernel.numa_balancing is now 0, not the 2 hotpage set"))
      << out[0];
  EXPECT_EQ(w.stats().sysctl_overrides, 1u);
}

// demotion_enabled is not a file hotpage changes: the first reading is the
// baseline (here unknown at the start, then true), and each change of a
// known value is warned once and counted.
TEST(HintFaultWatchdog, DemotionEnabledChangesAreWarnedAtEachChange) {
  HintFaultWatchdog w({kPid, 1000, 5, 100}, Changes());
  std::vector<std::string> out;
  w.Observe(Obs(0, 0, 0), &out);  // unreadable at the start
  EXPECT_FALSE(w.stats().demotion_known);
  HintFaultObservation o = Obs(1, 1, 100);
  o.demotion_enabled = true;
  w.Observe(o, &out);
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(w.stats().demotion_known);
  EXPECT_TRUE(w.stats().demotion_enabled);
  for (const bool v : {false, false, true}) {
    o.now_ns += 1000000000;
    o.demotion_enabled = v;
    w.Observe(o, &out);
  }
  o.now_ns += 1000000000;
  o.demotion_enabled.reset();  // unreadable for a check: no change
  w.Observe(o, &out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(absl::StrContains(out[0],
                                "demotion_enabled (/sys/kernel/mm/"
                                "numa/demotion_enabled) is now false"))
      << out[0];
  EXPECT_TRUE(absl::StrContains(out[0], "makes room on the fast tier itself"))
      << out[0];
  EXPECT_TRUE(absl::StrContains(out[1], "is now true")) << out[1];
  EXPECT_EQ(w.stats().demotion_changes, 2u);
  EXPECT_TRUE(w.stats().demotion_enabled);
}

}  // namespace
}  // namespace hotpage
