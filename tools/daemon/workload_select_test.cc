#include "tools/daemon/workload_select.h"

#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tools/base/kernel/fake_tree.h"

namespace hotpage {
namespace {

// A /proc entry as the kernel shows it.
void AddProcess(FakeTree& t, int pid, const std::string& comm,
                const std::string& cmdline, const std::string& cgroup,
                uint64_t start, uint64_t rss_pages = 100, char state = 'S') {
  const std::string d = absl::StrCat("/proc/", pid);
  t.Write(d + "/stat",
          absl::StrCat(pid, " (", comm, ") ", std::string(1, state), " 1 ", pid,
                       " 0 -1 -1 4194304 10 0 0 0 1 2 0 0 20 0 1 0 ", start,
                       " 1000 ", rss_pages, "\n"));
  t.Write(d + "/comm", comm + "\n");
  t.Write(d + "/cmdline", cmdline);
  t.Write(d + "/cgroup", "0::/" + cgroup + "\n");
  t.Write(d + "/statm",
          absl::StrCat(rss_pages * 2, " ", rss_pages, " 0 0 0 0 0\n"));
}

DaemonConfig Config(const std::string& text) {
  absl::StatusOr<DaemonConfig> c = ParseDaemonConfig(text, "t.toml");
  EXPECT_TRUE(c.ok()) << c.status();
  return *c;
}

std::vector<int> Pids(const std::vector<SelectedProcess>& v) {
  std::vector<int> out;
  for (const SelectedProcess& p : v) out.push_back(p.key.pid);
  return out;
}

class WorkloadSelectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    AddProcess(t_, 1, "systemd", std::string("/sbin/init\0", 11), "init.scope",
               1);
    AddProcess(t_, 2, "kthreadd", "", "", 2);  // kernel thread
    AddProcess(t_, 100, "memcached",
               std::string("memcached\0-m\0"
                           "4096\0",
                           18),
               "system.slice/memcached.service", 500, 1 << 20);
    AddProcess(t_, 101, "memcached", std::string("memcached\0", 10),
               "system.slice/memcached.service/child", 510);
    AddProcess(t_, 102, "web", std::string("web\0", 4),
               "system.slice/memcached.serviceX", 520);
    AddProcess(t_, 200, "postgres", std::string("postgres: writer\0", 17),
               "system.slice/pg.service", 600, 1 << 18);
    AddProcess(t_, 300, "zombie", std::string("z\0", 2), "user.slice", 700, 100,
               'Z');
    AddProcess(t_, 400, "hotpage", std::string("hotpage\0daemon\0", 15),
               "system.slice/memcached.service", 800, 1 << 20);
    AddProcess(t_, 500, "java", std::string("java\0", 5), "user.slice", 900,
               1 << 20);
    absl::StatusOr<KernelFs> fs = KernelFs::Open(t_.root());
    ASSERT_TRUE(fs.ok());
    fs_.emplace(*std::move(fs));
  }
  FakeTree t_;
  std::optional<KernelFs> fs_;
};

TEST_F(WorkloadSelectTest, EachSelectorAndFirstOwnerWins) {
  const DaemonConfig c = Config(R"(
[daemon]
min_rss = "2GiB"
[[workload]]
name = "cache"
cgroup = "system.slice/memcached.service"
[[workload]]
name = "by-comm"
comm = "memcached"
[[workload]]
name = "db"
cmdline = "^postgres: "
[[workload]]
name = "one"
pid = 102
[[workload]]
name = "big"
all = true
)");
  absl::StatusOr<std::vector<std::vector<SelectedProcess>>> s =
      SelectProcesses(*fs_, c, /*self=*/400);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->size(), 5u);
  // The cgroup and its child; not "memcached.serviceX"; not the daemon.
  EXPECT_EQ(Pids((*s)[0]), (std::vector<int>{100, 101}));
  EXPECT_EQ((*s)[0][0].key.start_time_ticks, 500u);
  EXPECT_EQ((*s)[0][0].cgroup, "system.slice/memcached.service");
  // Both memcached processes already belong to "cache".
  EXPECT_TRUE((*s)[1].empty());
  EXPECT_EQ(Pids((*s)[2]), (std::vector<int>{200}));
  EXPECT_EQ(Pids((*s)[3]), (std::vector<int>{102}));
  // At least 4 GiB resident (1M pages): java; memcached (pid 100) is as big
  // but already taken; postgres has 1M/4 pages; the zombie, kthreadd and
  // the daemon itself never count.
  EXPECT_EQ(Pids((*s)[4]), (std::vector<int>{500}));
  EXPECT_GE((*s)[4][0].rss_bytes, 2ull << 30);
}

TEST_F(WorkloadSelectTest, LaterProcessInTheCgroupIsPickedUp) {
  const DaemonConfig c = Config(
      "[[workload]]\nname = \"cache\"\ncgroup = "
      "\"system.slice/memcached.service\"\n");
  auto before = SelectProcesses(*fs_, c, 400);
  ASSERT_TRUE(before.ok());
  AddProcess(t_, 150, "memcached", std::string("memcached\0", 10),
             "system.slice/memcached.service", 950);
  t_.Remove("/proc/101/stat");  // exited: its other files may linger
  auto now = SelectProcesses(*fs_, c, 400);
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(Pids((*now)[0]), (std::vector<int>{100, 150}));
  const SelectionChange ch = Reconcile((*before)[0], (*now)[0]);
  ASSERT_EQ(ch.arrived.size(), 1u);
  EXPECT_EQ(ch.arrived[0].pid, 150);
  ASSERT_EQ(ch.left.size(), 1u);
  EXPECT_EQ(ch.left[0].pid, 101);
}

TEST_F(WorkloadSelectTest, ReusedPidIsALeaveAndAnArrival) {
  const DaemonConfig c = Config("[[workload]]\nname = \"w\"\npid = 102\n");
  auto before = SelectProcesses(*fs_, c, 400);
  ASSERT_TRUE(before.ok());
  ASSERT_EQ(Pids((*before)[0]), (std::vector<int>{102}));
  // 102 exits and the pid is handed to another process.
  AddProcess(t_, 102, "other", std::string("other\0", 6), "user.slice", 5000);
  auto now = SelectProcesses(*fs_, c, 400);
  ASSERT_TRUE(now.ok());
  const SelectionChange ch = Reconcile((*before)[0], (*now)[0]);
  ASSERT_EQ(ch.left.size(), 1u);
  ASSERT_EQ(ch.arrived.size(), 1u);
  EXPECT_EQ(ch.left[0].start_time_ticks, 520u);
  EXPECT_EQ(ch.arrived[0].start_time_ticks, 5000u);
}

TEST(ReconcileTest, MergesSortedLists) {
  auto P = [](int pid, uint64_t st) {
    SelectedProcess p;
    p.key = {pid, st};
    return p;
  };
  const SelectionChange c =
      Reconcile({P(1, 1), P(3, 3), P(5, 5)}, {P(2, 2), P(3, 3), P(5, 6)});
  ASSERT_EQ(c.left.size(), 2u);
  EXPECT_EQ(c.left[0].pid, 1);
  EXPECT_EQ(c.left[1].pid, 5);
  ASSERT_EQ(c.arrived.size(), 2u);
  EXPECT_EQ(c.arrived[0].pid, 2);
  EXPECT_EQ(c.arrived[1].start_time_ticks, 6u);
}

}  // namespace
}  // namespace hotpage
