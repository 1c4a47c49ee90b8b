#include "tools/daemon/kernel_tiering.h"

#include <string>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tools/base/kernel/fake_tree.h"

namespace hotpage {
namespace {

KernelMovers Detect(FakeTree& t, std::set<std::string> own = {}) {
  absl::StatusOr<KernelFs> fs = KernelFs::Open(t.root());
  EXPECT_TRUE(fs.ok());
  return DetectKernelMovers(*fs, own);
}

std::string All(const TieringDecision& d) {
  return absl::StrJoin(d.messages, "\n");
}

TEST(KernelTieringTest, DetectsEveryMover) {
  FakeTree t;
  t.Write("/proc/sys/kernel/numa_balancing", "2\n");
  t.Write("/sys/kernel/mm/numa/demotion_enabled", "true\n");
  t.Write("/sys/kernel/mm/damon/admin/kdamonds/0/state", "on\n");
  t.Write("/sys/kernel/mm/damon/admin/kdamonds/1/state", "off\n");
  t.Write("/sys/kernel/mm/damon/admin/kdamonds/2/state", "on\n");
  t.Write("/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds", "3\n");
  t.Write("/proc/77/comm", "numad\n");
  t.Write("/proc/78/comm", "bash\n");
  KernelMovers m = Detect(t, {"kdamonds/2"});  // 2 is ours
  EXPECT_EQ(m.numa_balancing, 2);
  EXPECT_EQ(m.demotion_enabled, 1);
  EXPECT_EQ(m.busy_kdamonds, (std::vector<std::string>{"kdamonds/0"}));
  EXPECT_EQ(m.numad_pids, (std::vector<pid_t>{77}));
}

TEST(KernelTieringTest, NothingOnAQuietMachine) {
  FakeTree t;
  t.Write("/proc/sys/kernel/numa_balancing", "0\n");
  t.Write("/sys/kernel/mm/numa/demotion_enabled", "false\n");
  const KernelMovers m = Detect(t);
  for (KernelTieringMode mode :
       {KernelTieringMode::kRefuse, KernelTieringMode::kCoexist,
        KernelTieringMode::kTakeOver}) {
    const TieringDecision d = DecideKernelTiering(m, mode, "h.toml");
    EXPECT_TRUE(d.start);
    EXPECT_TRUE(d.messages.empty()) << All(d);
    EXPECT_TRUE(d.changes.empty());
  }
  // No CONFIG_NUMA_BALANCING and no demotion file: nothing either.
  FakeTree empty;
  empty.Mkdir("/proc");
  EXPECT_TRUE(
      DecideKernelTiering(Detect(empty), KernelTieringMode::kRefuse, "h.toml")
          .start);
}

TEST(KernelTieringTest, RefuseNamesTheMoverAndTheFix) {
  KernelMovers m;
  m.numa_balancing = 2;
  TieringDecision d =
      DecideKernelTiering(m, KernelTieringMode::kRefuse, "/etc/h.toml");
  EXPECT_FALSE(d.start);
  EXPECT_NE(All(d).find("kernel.numa_balancing = 2: the kernel's memory "
                        "tiering (promotion) moves pages"),
            std::string::npos)
      << All(d);
  EXPECT_NE(All(d).find("sysctl -w kernel.numa_balancing=0"),
            std::string::npos);
  EXPECT_NE(All(d).find("kernel_tiering = \"coexist\" or \"take-over\" in "
                        "/etc/h.toml"),
            std::string::npos);
  EXPECT_TRUE(d.changes.empty());
  // Demotion alone does not block.
  KernelMovers dm;
  dm.demotion_enabled = 1;
  d = DecideKernelTiering(dm, KernelTieringMode::kRefuse, "h.toml");
  EXPECT_TRUE(d.start);
  EXPECT_NE(All(d).find("note: demotion_enabled"), std::string::npos);
}

TEST(KernelTieringTest, CoexistWarnsAndStarts) {
  KernelMovers m;
  m.numa_balancing = 3;
  m.busy_kdamonds = {"kdamonds/0"};
  m.numad_pids = {9};
  const TieringDecision d =
      DecideKernelTiering(m, KernelTieringMode::kCoexist, "h.toml");
  EXPECT_TRUE(d.start);
  EXPECT_EQ(d.messages.size(), 3u) << All(d);
  EXPECT_NE(All(d).find("NUMA balancing and the kernel's memory tiering"),
            std::string::npos);
  EXPECT_TRUE(d.changes.empty());
}

TEST(KernelTieringTest, TakeOverChangesSysctlsButNotOtherPrograms) {
  KernelMovers m;
  m.numa_balancing = 1;
  m.demotion_enabled = 1;
  TieringDecision d =
      DecideKernelTiering(m, KernelTieringMode::kTakeOver, "h.toml");
  EXPECT_TRUE(d.start);
  ASSERT_EQ(d.changes.size(), 2u);
  EXPECT_EQ(d.changes[0].path, "/proc/sys/kernel/numa_balancing");
  EXPECT_EQ(d.changes[0].from, "1");
  EXPECT_EQ(d.changes[0].to, "0");
  EXPECT_EQ(d.changes[1].path, "/sys/kernel/mm/numa/demotion_enabled");
  EXPECT_EQ(d.changes[1].to, "false");
  m.numad_pids = {9};
  d = DecideKernelTiering(m, KernelTieringMode::kTakeOver, "h.toml");
  EXPECT_FALSE(d.start);
  EXPECT_NE(All(d).find("systemctl stop numad"), std::string::npos);
}

// A hintfault workload under take-over: the kernel senses (tiering bit
// alone, NORMAL cleared) and promotes nothing itself (rate limit 0); the
// demotion take-over stays; a kernel without the files refuses.
TEST(KernelTieringTest, TakeOverForHintFaultsSetsTheSensingSysctls) {
  FakeTree t;
  t.Write("/proc/sys/kernel/numa_balancing", "1\n");
  t.Write("/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps", "65536\n");
  t.Write("/sys/kernel/mm/numa/demotion_enabled", "true\n");
  KernelMovers m = Detect(t);
  EXPECT_EQ(m.promote_rate_limit_mbps, 65536);
  EXPECT_FALSE(SysctlsSenseHintFaults(m));
  TieringDecision d = DecideKernelTiering(m, KernelTieringMode::kTakeOver,
                                          "h.toml", /*hint_faults=*/true);
  EXPECT_TRUE(d.start);
  ASSERT_EQ(d.changes.size(), 3u);
  EXPECT_EQ(d.changes[0].path, "/proc/sys/kernel/numa_balancing");
  EXPECT_EQ(d.changes[0].from, "1");
  EXPECT_EQ(d.changes[0].to, "2");
  EXPECT_EQ(d.changes[1].path,
            "/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps");
  EXPECT_EQ(d.changes[1].from, "65536");
  EXPECT_EQ(d.changes[1].to, "0");
  EXPECT_EQ(d.changes[2].path, "/sys/kernel/mm/numa/demotion_enabled");
  EXPECT_EQ(d.changes[2].to, "false");
  EXPECT_NE(All(d).find("hotpage alone moves them"), std::string::npos);
  // Already so: nothing to change, and the member's check passes.
  m.numa_balancing = 2;
  m.promote_rate_limit_mbps = 0;
  m.demotion_enabled = 0;
  EXPECT_TRUE(SysctlsSenseHintFaults(m));
  d = DecideKernelTiering(m, KernelTieringMode::kTakeOver, "h.toml", true);
  EXPECT_TRUE(d.start);
  EXPECT_TRUE(d.changes.empty());
  // Read without the walk of /proc.
  absl::StatusOr<KernelFs> fs = KernelFs::Open(t.root());
  ASSERT_TRUE(fs.ok());
  const KernelMovers r = ReadNumaBalancingSysctls(*fs);
  EXPECT_EQ(r.numa_balancing, 1);
  EXPECT_EQ(r.promote_rate_limit_mbps, 65536);
  // No CONFIG_NUMA_BALANCING: refused, saying why.
  d = DecideKernelTiering(KernelMovers(), KernelTieringMode::kTakeOver,
                          "h.toml", true);
  EXPECT_FALSE(d.start);
  EXPECT_NE(All(d).find("another source"), std::string::npos);
}

}  // namespace
}  // namespace hotpage
