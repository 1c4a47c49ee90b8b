// Sampler logic against a fake kernel: which events are opened how, error
// explanations, round-robin budgets, and period adaptation.

#include "sampler/perf/sampler.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "sampler/perf/synthetic_ring.h"
#include "tools/base/kernel/fake_tree.h"

namespace hotpage {
namespace {

class FakePerfEventSystem : public PerfEventSystem {
 public:
  struct Opened {
    perf_event_attr attr;
    pid_t pid;
    int cpu;
    int group_fd;
  };
  std::vector<Opened> opened;
  std::map<int, std::unique_ptr<SyntheticRing>> rings;  // by fd
  std::vector<std::pair<int, int>> set_output;          // (fd, target)
  std::vector<std::pair<int, uint64_t>> periods;        // (fd, period)
  int enabled = 0;
  int fail_with = 0;  // errno for the Nth Open
  int fail_at = -1;

  std::vector<pid_t> gone;  // tasks that exited: Open gives ESRCH
  int Open(perf_event_attr* attr, pid_t pid, int cpu, int group_fd,
           unsigned long) override {
    if (std::find(gone.begin(), gone.end(), pid) != gone.end()) return -ESRCH;
    if (static_cast<int>(opened.size()) == fail_at) return -fail_with;
    opened.push_back({*attr, pid, cpu, group_fd});
    return eventfd(0, EFD_CLOEXEC);  // a real, pollable fd
  }
  void* Map(int fd, size_t bytes, int*) override {
    auto r = std::make_unique<SyntheticRing>(bytes - SyntheticRing::kPage);
    void* base = r->base();
    rings[fd] = std::move(r);
    return base;
  }
  void Unmap(void*, size_t) override {}
  int Ioctl(int fd, unsigned long req, unsigned long arg) override {
    if (req == PERF_EVENT_IOC_ID) *reinterpret_cast<uint64_t*>(arg) = 1000 + fd;
    if (req == PERF_EVENT_IOC_SET_OUTPUT)
      set_output.emplace_back(fd, static_cast<int>(arg));
    if (req == PERF_EVENT_IOC_PERIOD)
      periods.emplace_back(fd, *reinterpret_cast<uint64_t*>(arg));
    if (req == PERF_EVENT_IOC_ENABLE) ++enabled;
    return 0;
  }
  void Close(int fd) override { close(fd); }
};

SamplerConfig PageFaultConfig(std::vector<pid_t> pids, std::vector<int> cpus) {
  SamplerConfig c;
  c.events = *PageFaultEvents(SamplingOptions());
  c.pids = std::move(pids);
  c.cpus = std::move(cpus);
  c.ring_data_pages = 4;
  return c;
}

TEST(Sampler, PerTaskOpensInheritedEventsAndOneRingPerCpu) {
  FakePerfEventSystem sys;
  auto s = Sampler::Open(PageFaultConfig({100, 200}, {0, 1}), &sys);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_FALSE((*s)->system_wide());
  ASSERT_EQ(sys.opened.size(), 4u);  // 2 pids x 2 CPUs
  for (const auto& o : sys.opened) {
    EXPECT_TRUE(o.attr.inherit);
    EXPECT_TRUE(o.attr.watermark);
    EXPECT_EQ(o.attr.wakeup_watermark, 4 * 4096u / 4);
    EXPECT_FALSE(o.attr.task);
    EXPECT_NE(o.pid, -1);
  }
  EXPECT_EQ(sys.rings.size(), 2u);       // one ring per CPU
  EXPECT_EQ(sys.set_output.size(), 2u);  // pid 200's events feed them
  ASSERT_TRUE((*s)->Enable().ok());
  EXPECT_EQ(sys.enabled, 4);
}

// A process's existing threads are separate tasks to the kernel: each
// listed thread gets its own events; one that exited meanwhile is skipped,
// the process itself is not.
TEST(Sampler, PerTaskOpensEveryListedThread) {
  FakePerfEventSystem sys;
  sys.gone = {102};
  SamplerConfig c = PageFaultConfig({100}, {0, 1});
  c.threads = {100, 101, 102, 103};
  auto s = Sampler::Open(c, &sys);
  ASSERT_TRUE(s.ok()) << s.status();
  std::vector<pid_t> pids;
  for (const auto& o : sys.opened) pids.push_back(o.pid);
  EXPECT_EQ(pids,
            (std::vector<pid_t>{100, 101, 103, 100, 101, 103}));  // per CPU
  sys.gone = {100};
  EXPECT_FALSE(Sampler::Open(c, &sys).ok());  // the process itself is gone
}

TEST(Sampler, ListThreadsReadsProcTask) {
  FakeTree t;
  t.Write("/proc/7/task/7/stat", "x");
  t.Write("/proc/7/task/12/stat", "x");
  t.Write("/proc/7/task/9/stat", "x");
  auto fs = KernelFs::Open(t.root());
  ASSERT_TRUE(fs.ok());
  auto tids = ListThreads(*fs, 7);
  ASSERT_TRUE(tids.ok()) << tids.status();
  EXPECT_EQ(*tids, (std::vector<pid_t>{7, 9, 12}));
  EXPECT_FALSE(ListThreads(*fs, 8).ok());
}

TEST(Sampler, IncludeExistingThreadsListsThemOrGoesSystemWide) {
  FakeTree t;
  t.Write("/proc/7/task/7/stat", "x");
  t.Write("/proc/7/task/9/stat", "x");
  auto fs = KernelFs::Open(t.root());
  ASSERT_TRUE(fs.ok());
  SamplerConfig c = PageFaultConfig({7, 8}, {0, 1});  // 8: no /proc entry
  IncludeExistingThreads(*fs, &c);
  EXPECT_EQ(c.threads, (std::vector<pid_t>{7, 9, 8}));
  EXPECT_FALSE(c.system_wide);
  // Too many events per task: one system-wide event per CPU instead.
  SamplerConfig many =
      PageFaultConfig({7}, std::vector<int>(kMaxPerTaskEvents / 2 + 1, 0));
  IncludeExistingThreads(*fs, &many);
  EXPECT_TRUE(many.threads.empty());
  EXPECT_TRUE(many.system_wide);
  // System-wide or --all configs are left alone.
  SamplerConfig all = PageFaultConfig({7}, {0});
  all.all = true;
  IncludeExistingThreads(*fs, &all);
  EXPECT_TRUE(all.threads.empty());
}

TEST(Sampler, IbsIsAlwaysSystemWideWithForkTracking) {
  FakeTree t;
  t.Write("/sys/bus/event_source/devices/ibs_op/type", "11\n");
  auto fs = KernelFs::Open(t.root());
  SamplerConfig c = PageFaultConfig({100}, {0, 1});
  c.events = *IbsEvents(*fs, SamplingOptions());
  FakePerfEventSystem sys;
  auto s = Sampler::Open(c, &sys);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE((*s)->system_wide());
  ASSERT_EQ(sys.opened.size(), 2u);
  for (const auto& o : sys.opened) {
    EXPECT_EQ(o.pid, -1);
    EXPECT_FALSE(o.attr.inherit);
    EXPECT_TRUE(o.attr.task);  // FORK records let the filter follow children
  }
}

TEST(Sampler, GroupedEventsFollowTheirLeaderAndOnlySamplersAdapt) {
  FakeTree t;
  const std::string cpu = "/sys/bus/event_source/devices/cpu";
  t.Write(cpu + "/type", "4\n");
  t.Write(cpu + "/format/event", "config:0-7\n");
  t.Write(cpu + "/format/umask", "config:8-15\n");
  t.Write(cpu + "/format/ldlat", "config1:0-15\n");
  t.Write(cpu + "/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
  t.Write(cpu + "/events/mem-loads-aux", "event=0x03,umask=0x82\n");
  auto fs = KernelFs::Open(t.root());
  SamplerConfig c = PageFaultConfig({100}, {0});
  c.events = *PebsEvents(*fs, SamplingOptions(), std::nullopt);
  FakePerfEventSystem sys;
  auto s = Sampler::Open(c, &sys);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(sys.opened.size(), 2u);
  EXPECT_EQ(sys.opened[0].group_fd, -1);
  EXPECT_EQ(sys.opened[0].attr.config, 0x8203u);  // mem-loads-aux leads
  EXPECT_TRUE(sys.opened[0].attr.disabled);
  EXPECT_NE(sys.opened[1].group_fd, -1);  // mem-loads in its group
  EXPECT_FALSE(sys.opened[1].attr.disabled);
  ASSERT_TRUE((*s)->Enable().ok());
  EXPECT_EQ(sys.enabled, 1);  // the group, through its leader

  // 10% of a core against the 2% budget: the period rises (4x cap), and
  // only the sampling event is reprogrammed.
  uint64_t p = (*s)->AdaptPeriod(0.1, 1.0);
  EXPECT_EQ(p, 4 * kDefaultPebsPeriod);
  ASSERT_EQ(sys.periods.size(), 1u);
  EXPECT_EQ(sys.periods[0].second, 4 * kDefaultPebsPeriod);
  EXPECT_EQ((*s)->period(), 4 * kDefaultPebsPeriod);
}

TEST(Sampler, OpenErrorsAreExplained) {
  struct Case {
    int err;
    bool system_wide;
    const char* expect;
  } cases[] = {
      {EACCES, false, "ptrace access"},
      {EACCES, true, "perf_event_paranoid <= 0"},
      {ENODATA, false, "mem-loads-aux"},
      {ENOENT, false, "--source pagefault"},
      {EMFILE, false, "ulimit -n"},
      {ESRCH, false, "does not exist"},
  };
  for (const Case& c : cases) {
    FakePerfEventSystem sys;
    sys.fail_at = 1;
    sys.fail_with = c.err;
    SamplerConfig cfg = PageFaultConfig({100}, {0, 1});
    cfg.system_wide = c.system_wide;
    auto s = Sampler::Open(cfg, &sys);
    ASSERT_FALSE(s.ok());
    const std::string msg(s.status().message());
    EXPECT_NE(msg.find(c.expect), std::string::npos) << msg;
    EXPECT_NE(msg.find("[cpu 1"), std::string::npos) << msg;  // names where
  }
}

TEST(Sampler, ConfigErrors) {
  FakePerfEventSystem sys;
  EXPECT_FALSE(
      Sampler::Open(PageFaultConfig({}, {0}), &sys).ok());  // no target
  EXPECT_FALSE(Sampler::Open(PageFaultConfig({1}, {}), &sys).ok());  // no CPU
  SamplerConfig c = PageFaultConfig({1}, {0});
  c.ring_data_pages = 3;
  EXPECT_FALSE(Sampler::Open(c, &sys).ok());
}

// A page-fault sample body for the sampler's sample_type.
std::vector<uint64_t> Body(uint64_t id, uint32_t pid, uint64_t addr) {
  // IDENTIFIER, IP, TID, TIME, ADDR, CPU, PERIOD
  return {id, 0x401000, uint64_t{pid} << 32 | pid, 1, addr, 0, 1};
}

TEST(Sampler, PollDrainsRingsRoundRobinWithinTheBudget) {
  FakePerfEventSystem sys;
  SamplerConfig c = PageFaultConfig({100}, {0, 1});
  c.ring_data_pages = 16;
  c.budget_bytes_per_ring = 10 * 64;  // 10 records of 64 bytes per pass
  auto s = Sampler::Open(c, &sys);
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(sys.rings.size(), 2u);
  auto it = sys.rings.begin();
  SyntheticRing& busy = *it->second;
  uint64_t busy_id = 1000 + it->first;
  ++it;
  SyntheticRing& quiet = *it->second;
  uint64_t quiet_id = 1000 + it->first;
  for (int i = 0; i < 100; ++i)
    ASSERT_TRUE(
        busy.Write(PERF_RECORD_SAMPLE, Body(busy_id, 100, 0x10000 + i)));
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(
        quiet.Write(PERF_RECORD_SAMPLE, Body(quiet_id, 100, 0x20000 + i)));
  size_t from_busy = 0, from_quiet = 0;
  auto sink = [&](absl::Span<const Sample> b) {
    for (const Sample& x : b) (x.vaddr >= 0x20000 ? from_quiet : from_busy)++;
  };
  auto n = (*s)->Poll(0, sink);
  ASSERT_TRUE(n.ok());
  // The busy ring got its budget, the quiet one was not starved.
  EXPECT_EQ(from_busy, 10u);
  EXPECT_EQ(from_quiet, 3u);
  (*s)->Flush(sink);
  EXPECT_EQ(from_busy, 100u);
  EXPECT_EQ((*s)->Totals().samples, 103u);
  auto per_cpu = (*s)->PerCpu();
  ASSERT_EQ(per_cpu.size(), 2u);
  EXPECT_EQ(per_cpu[0].second.samples + per_cpu[1].second.samples, 103u);
}

TEST(Sampler, PollDeliversMoreThanOneBatchWithinTheBudget) {
  // 3000 samples (a scan pass's hint-fault burst) fit the byte budget: one
  // Poll delivers them all, not the first 1024 (the batch size).
  FakePerfEventSystem sys;
  SamplerConfig c = PageFaultConfig({100}, {0});
  c.ring_data_pages = 64;
  c.budget_bytes_per_ring = 1 << 20;
  auto s = Sampler::Open(c, &sys);
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(sys.rings.size(), 1u);
  SyntheticRing& ring = *sys.rings.begin()->second;
  const uint64_t id = 1000 + sys.rings.begin()->first;
  for (int i = 0; i < 3000; ++i)
    ASSERT_TRUE(ring.Write(PERF_RECORD_SAMPLE, Body(id, 100, 0x10000 + i)));
  size_t got = 0;
  auto n = (*s)->Poll(0, [&](absl::Span<const Sample> b) { got += b.size(); });
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 3000u);
  EXPECT_EQ(got, 3000u);
}

TEST(Sampler, PollStopsAtTheByteBudgetAcrossBatches) {
  FakePerfEventSystem sys;
  SamplerConfig c = PageFaultConfig({100}, {0});
  c.ring_data_pages = 64;
  c.budget_bytes_per_ring = 1500 * 64;  // 1500 records of 64 bytes
  auto s = Sampler::Open(c, &sys);
  ASSERT_TRUE(s.ok());
  SyntheticRing& ring = *sys.rings.begin()->second;
  const uint64_t id = 1000 + sys.rings.begin()->first;
  for (int i = 0; i < 3000; ++i)
    ASSERT_TRUE(ring.Write(PERF_RECORD_SAMPLE, Body(id, 100, 0x10000 + i)));
  size_t got = 0;
  auto sink = [&](absl::Span<const Sample> b) { got += b.size(); };
  ASSERT_TRUE((*s)->Poll(0, sink).ok());
  EXPECT_EQ(got, 1500u);
  EXPECT_FALSE((*s)->last_poll_complete());  // the ring still holds 1500
  ASSERT_TRUE((*s)->Poll(0, sink).ok());
  EXPECT_EQ(got, 3000u);
  EXPECT_TRUE((*s)->last_poll_complete());
}

}  // namespace
}  // namespace hotpage
