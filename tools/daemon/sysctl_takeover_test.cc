#include "tools/daemon/sysctl_takeover.h"

#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "tools/base/kernel/fake_sysfs_writer.h"
#include "tools/base/kernel/fake_tree.h"

namespace hotpage {
namespace {

std::string Read(const FakeTree& t, const std::string& path) {
  std::ifstream in(t.root() + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::vector<SysctlChange> kChanges = {
    {"/proc/sys/kernel/numa_balancing", "2", "0"},
    {"/sys/kernel/mm/numa/demotion_enabled", "true", "false"}};

TEST(SysctlTakeoverTest, AppliesRecordsAndRestores) {
  FakeTree t;
  t.Write("/proc/sys/kernel/numa_balancing", "2");
  t.Write("/sys/kernel/mm/numa/demotion_enabled", "true");
  FakeSysfsLog log(&t);
  auto writer = log.NewWriter();
  auto dir = StateDir::Open(t.root() + "/state", "d", "p");
  ASSERT_TRUE(dir.ok()) << dir.status();
  std::string recovered;
  auto tk = SysctlTakeover::Apply(&*dir, writer.get(), kChanges, &recovered);
  ASSERT_TRUE(tk.ok()) << tk.status();
  EXPECT_TRUE(recovered.empty());
  EXPECT_EQ(Read(t, "/proc/sys/kernel/numa_balancing"), "0");
  EXPECT_EQ(Read(t, "/sys/kernel/mm/numa/demotion_enabled"), "false");
  // The originals were recorded before the change.
  EXPECT_EQ(Read(t, "/state/daemon-sysctls"),
            "/proc/sys/kernel/numa_balancing=2\n"
            "/sys/kernel/mm/numa/demotion_enabled=true\n");
  EXPECT_EQ((*tk)->Describe(),
            "kernel.numa_balancing 2 -> 0, demotion_enabled true -> false");
  ASSERT_TRUE((*tk)->Restore().ok());
  EXPECT_EQ(Read(t, "/proc/sys/kernel/numa_balancing"), "2");
  EXPECT_EQ(Read(t, "/sys/kernel/mm/numa/demotion_enabled"), "true");
  EXPECT_EQ(Read(t, "/state/daemon-sysctls"), "");  // removed
}

TEST(SysctlTakeoverTest, ADeadDaemonsChangesAreRestoredFirst) {
  FakeTree t;
  t.Write("/proc/sys/kernel/numa_balancing", "0");  // the dead one's value
  t.Write("/state/daemon-sysctls", "/proc/sys/kernel/numa_balancing=1\n");
  FakeSysfsLog log(&t);
  auto writer = log.NewWriter();
  auto dir = StateDir::Open(t.root() + "/state", "d", "p");
  ASSERT_TRUE(dir.ok());
  std::string recovered;
  auto tk = SysctlTakeover::Apply(&*dir, writer.get(), {}, &recovered);
  ASSERT_TRUE(tk.ok()) << tk.status();
  EXPECT_EQ(Read(t, "/proc/sys/kernel/numa_balancing"), "1");
  EXPECT_NE(recovered.find("kernel.numa_balancing = 1"), std::string::npos)
      << recovered;
}

TEST(SysctlTakeoverTest, ACorruptStateFileIsNotObeyed) {
  FakeTree t;
  t.Write("/state/daemon-sysctls", "/etc/shadow=x\n");
  FakeSysfsLog log(&t);
  auto writer = log.NewWriter();
  auto dir = StateDir::Open(t.root() + "/state", "d", "p");
  ASSERT_TRUE(dir.ok());
  auto tk = SysctlTakeover::Apply(&*dir, writer.get(), kChanges, nullptr);
  EXPECT_EQ(tk.status().code(), absl::StatusCode::kDataLoss) << tk.status();
  EXPECT_TRUE(log.writes().empty());
}

TEST(SysctlTakeoverTest, OneDaemonAtATime) {
  FakeTree t;
  t.Write("/proc/sys/kernel/numa_balancing", "2");
  FakeSysfsLog log(&t);
  auto writer = log.NewWriter();
  auto dir1 = StateDir::Open(t.root() + "/state", "d", "p");
  auto dir2 = StateDir::Open(t.root() + "/state", "d", "p");
  ASSERT_TRUE(dir1.ok() && dir2.ok());
  auto first =
      SysctlTakeover::Apply(&*dir1, writer.get(), {kChanges[0]}, nullptr);
  ASSERT_TRUE(first.ok());
  auto second =
      SysctlTakeover::Apply(&*dir2, writer.get(), {kChanges[0]}, nullptr);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(SysctlTakeoverTest, StateParserIsStrict) {
  EXPECT_TRUE(ParseTakeoverState("/proc/sys/kernel/numa_balancing=3\n").ok());
  EXPECT_FALSE(ParseTakeoverState("/proc/sys/kernel/numa_balancing=4\n").ok());
  EXPECT_FALSE(ParseTakeoverState("/proc/sys/kernel/numa_balancing=-1").ok());
  EXPECT_FALSE(ParseTakeoverState("/proc/sys/kernel/numa_balancing=+1").ok());
  EXPECT_FALSE(
      ParseTakeoverState("/sys/kernel/mm/numa/demotion_enabled=1\n").ok());
  EXPECT_FALSE(ParseTakeoverState("/proc/sys/kernel/numa_balancing=1\n"
                                  "/proc/sys/kernel/numa_balancing=2\n")
                   .ok());
  EXPECT_FALSE(ParseTakeoverState("garbage").ok());
  // The promotion rate limit (a hintfault workload's take-over): an
  // unsigned int of MB/s, nothing else.
  const std::string kRate =
      "/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps=";
  EXPECT_TRUE(ParseTakeoverState(kRate + "65536\n").ok());
  EXPECT_TRUE(ParseTakeoverState(kRate + "4294967295").ok());
  EXPECT_FALSE(ParseTakeoverState(kRate + "4294967296").ok());
  EXPECT_FALSE(ParseTakeoverState(kRate + "").ok());
  EXPECT_FALSE(ParseTakeoverState(kRate + "-1").ok());
  EXPECT_FALSE(ParseTakeoverState(kRate + "1e3").ok());
  EXPECT_FALSE(
      ParseTakeoverState("/proc/sys/kernel/numa_balancing_scan_delay_ms=1")
          .ok());
}

TEST(SysctlTakeoverTest, TheRateLimitIsRestoredToo) {
  FakeTree t;
  t.Write("/proc/sys/kernel/numa_balancing", "0");
  t.Write("/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps", "65536");
  FakeSysfsLog log(&t);
  auto writer = log.NewWriter();
  auto dir = StateDir::Open(t.root() + "/state", "d", "p");
  ASSERT_TRUE(dir.ok()) << dir.status();
  std::string recovered;
  auto tk = SysctlTakeover::Apply(
      &*dir, writer.get(),
      {{"/proc/sys/kernel/numa_balancing", "0", "2"},
       {"/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps", "65536",
        "0"}},
      &recovered);
  ASSERT_TRUE(tk.ok()) << tk.status();
  EXPECT_EQ(Read(t, "/proc/sys/kernel/numa_balancing"), "2");
  EXPECT_EQ(Read(t, "/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps"),
            "0");
  EXPECT_EQ((*tk)->Describe(),
            "kernel.numa_balancing 0 -> 2, "
            "kernel.numa_balancing_promote_rate_limit_MBps 65536 -> 0");
  // Someone else turns the scanner off: said, and still restored.
  absl::StatusOr<KernelFs> fs = KernelFs::Open(t.root());
  ASSERT_TRUE(fs.ok());
  EXPECT_TRUE((*tk)->Drifted(*fs).empty());
  t.Write("/proc/sys/kernel/numa_balancing", "0\n");
  EXPECT_EQ(
      (*tk)->Drifted(*fs),
      std::vector<std::string>{"kernel.numa_balancing is 0 (hotpage set 2)"});
  ASSERT_TRUE((*tk)->Restore().ok());
  EXPECT_EQ(Read(t, "/proc/sys/kernel/numa_balancing"), "0");
  EXPECT_EQ(Read(t, "/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps"),
            "65536");
  EXPECT_TRUE((*tk)->Drifted(*fs).empty());  // nothing of ours left
}

}  // namespace
}  // namespace hotpage
