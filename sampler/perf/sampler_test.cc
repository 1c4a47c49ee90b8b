// Sampler logic against a fake kernel: which events are opened how, error
// explanations, round-robin budgets, and period adaptation.

#include "sampler/perf/sampler.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "gtest/gtest.h"
#include "sampler/perf/synthetic_ring.h"
#include "sampler/perf/testing/fake_perf_kernel.h"
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
    int fd;
  };
  std::vector<Opened> opened;
  std::map<int, std::unique_ptr<SyntheticRing>> rings;  // by fd
  std::map<int, int> ring_cpu;                          // ring fd -> cpu
  std::vector<std::pair<int, int>> set_output;          // (fd, target)
  std::vector<std::pair<int, uint64_t>> periods;        // (fd, period)
  std::vector<int> closed;
  int unmapped = 0;
  int enabled = 0;
  int fail_with = 0;  // errno for the Nth Open
  int fail_at = -1;
  int period_errno = 0;         // PERF_EVENT_IOC_PERIOD answers -this
  int max_precise = 3;          // precise_ip above: EOPNOTSUPP
  std::vector<pid_t> gone;      // tasks that exited: Open gives ESRCH
  std::vector<pid_t> gone_mid;  // exit after their group leader opened

  ~FakePerfEventSystem() override {
    for (auto& [fd, w] : write_end_) close(w);
  }

  int Open(perf_event_attr* attr, pid_t pid, int cpu, int group_fd,
           unsigned long) override {
    if (std::find(gone.begin(), gone.end(), pid) != gone.end()) return -ESRCH;
    if (group_fd >= 0 &&
        std::find(gone_mid.begin(), gone_mid.end(), pid) != gone_mid.end())
      return -ESRCH;
    if (attr->precise_ip > max_precise) return -EOPNOTSUPP;
    if (static_cast<int>(opened.size()) == fail_at) return -fail_with;
    // A pipe's read end: a real, pollable fd that reports EPOLLHUP once
    // the write end closes (Exit), as perf_poll() does once the event's
    // task exited.
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return -errno;
    write_end_[p[0]] = p[1];
    opened.push_back({*attr, pid, cpu, group_fd, p[0]});
    return p[0];
  }
  void* Map(int fd, size_t bytes, int*) override {
    auto r = std::make_unique<SyntheticRing>(bytes - SyntheticRing::kPage);
    void* base = r->base();
    rings[fd] = std::move(r);
    for (const Opened& o : opened) {
      if (o.fd == fd) ring_cpu[fd] = o.cpu;
    }
    return base;
  }
  void Unmap(void*, size_t) override { ++unmapped; }
  int Ioctl(int fd, unsigned long req, unsigned long arg) override {
    if (req == PERF_EVENT_IOC_ID) *reinterpret_cast<uint64_t*>(arg) = 1000 + fd;
    if (req == PERF_EVENT_IOC_SET_OUTPUT)
      set_output.emplace_back(fd, static_cast<int>(arg));
    if (req == PERF_EVENT_IOC_PERIOD) {
      if (period_errno) return -period_errno;
      periods.emplace_back(fd, *reinterpret_cast<uint64_t*>(arg));
    }
    if (req == PERF_EVENT_IOC_ENABLE) ++enabled;
    return 0;
  }
  void Close(int fd) override {
    closed.push_back(fd);
    close(fd);
    if (auto it = write_end_.find(fd); it != write_end_.end()) {
      close(it->second);
      write_end_.erase(it);
    }
  }
  // The task exits: its events' fds report EPOLLHUP.
  void Exit(pid_t pid) {
    for (const Opened& o : opened) {
      if (o.pid != pid) continue;
      if (auto it = write_end_.find(o.fd); it != write_end_.end()) {
        close(it->second);
        write_end_.erase(it);
      }
    }
  }
  SyntheticRing* RingOfCpu(int cpu) {
    for (auto& [fd, c] : ring_cpu) {
      if (c == cpu) return rings[fd].get();
    }
    return nullptr;
  }
  bool IsClosed(int fd) const {
    return std::find(closed.begin(), closed.end(), fd) != closed.end();
  }

 private:
  std::map<int, int> write_end_;  // read end -> write end
};

// RLIMIT_NOFILE for tests: generous by default.
class FakeFdLimits : public FdLimits {
 public:
  rlimit limit{1 << 20, 1 << 20};
  std::vector<rlimit> sets;
  absl::Status Get(rlimit* l) override {
    *l = limit;
    return absl::OkStatus();
  }
  absl::Status Set(const rlimit& l) override {
    sets.push_back(l);
    limit = l;
    return absl::OkStatus();
  }
  size_t OpenNow() override { return 0; }
};

FdLimits* GenerousLimits() {
  static FakeFdLimits* const limits = new FakeFdLimits;
  return limits;
}

SamplerConfig PageFaultConfig(std::vector<pid_t> pids, std::vector<int> cpus) {
  SamplerConfig c;
  c.events = *PageFaultEvents(SamplingOptions());
  c.pids = std::move(pids);
  c.cpus = std::move(cpus);
  c.ring_data_pages = 4;
  c.fd_limits = GenerousLimits();
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
  // Whether the plan fits the descriptor limit is Open's decision now
  // (Sampler.PlanOverTheHardLimit*): many CPUs leave the threads listed.
  SamplerConfig many = PageFaultConfig({7}, std::vector<int>(4097, 0));
  IncludeExistingThreads(*fs, &many);
  EXPECT_EQ(many.threads, (std::vector<pid_t>{7, 9}));
  EXPECT_FALSE(many.system_wide);
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

// --- Issue 12, sampler side of the PMU audit --------------------------------

// The mem-loads-aux group of a Sapphire Rapids class CPU (two events).
EventGroup AuxGroup() {
  FakeTree t;
  const std::string cpu = "/sys/bus/event_source/devices/cpu";
  t.Write(cpu + "/type", "4\n");
  t.Write(cpu + "/format/event", "config:0-7\n");
  t.Write(cpu + "/format/umask", "config:8-15\n");
  t.Write(cpu + "/format/ldlat", "config1:0-15\n");
  t.Write(cpu + "/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
  t.Write(cpu + "/events/mem-loads-aux", "event=0x03,umask=0x82\n");
  auto fs = KernelFs::Open(t.root());
  return *PebsEvents(*fs, SamplingOptions(), std::nullopt);
}

// An Alder Lake style plan: the cpu_core group (aux leader + loads) on
// CPUs 0-1, cpu_atom loads alone on CPUs 2-3 (their sysfs `cpus` files).
EventGroup HybridGroup() {
  EventGroup g = AuxGroup();
  EXPECT_EQ(g.events.size(), 2u);
  for (EventSpec& e : g.events) {
    e.pmu = "cpu_core";
    e.cpus = {0, 1};
    e.group = 0;
  }
  g.events[0].keep_samples = false;  // the aux leader's records are dropped
  EventSpec atom = g.events[1];
  atom.name = "cpu_atom/mem-loads,ldlat=30/";
  atom.pmu = "cpu_atom";
  atom.attr.type = 10;
  atom.attr.config = 0x5d0;
  atom.cpus = {2, 3};
  atom.group = 1;
  g.events.push_back(atom);
  g.grouped = true;
  return g;
}

// D1: each group opens only on its own PMU's CPUs; a CPU with one group
// still gets its ring; groups are independent (the atom event leads its
// own group).
TEST(Sampler, HybridGroupsOpenOnlyOnTheirPmusCpus) {
  FakePerfEventSystem sys;
  SamplerConfig c = PageFaultConfig({100}, {0, 1, 2, 3});
  c.events = HybridGroup();
  auto s = Sampler::Open(c, &sys);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(sys.opened.size(), 6u);  // 2 x (aux + loads) + 2 x atom loads
  std::map<int, int> fd_cpu;
  for (const auto& o : sys.opened) {
    fd_cpu[o.fd] = o.cpu;
    if (o.attr.type == 10) {
      EXPECT_TRUE(o.cpu == 2 || o.cpu == 3) << o.cpu;
      EXPECT_EQ(o.group_fd, -1);  // leads its own group
      EXPECT_TRUE(o.attr.disabled);
    } else {
      EXPECT_TRUE(o.cpu == 0 || o.cpu == 1) << o.cpu;
      if (o.attr.config == 0x8203u) {
        EXPECT_EQ(o.group_fd, -1);
      } else {
        ASSERT_NE(o.group_fd, -1);  // loads in the aux leader's group
        EXPECT_EQ(fd_cpu[o.group_fd], o.cpu);
      }
    }
  }
  EXPECT_EQ(sys.rings.size(), 4u);  // one per CPU, hybrid or not
  ASSERT_TRUE((*s)->Enable().ok());
  EXPECT_EQ(sys.enabled, 4);  // cpu_core groups on 0-1, atom events on 2-3
  EXPECT_EQ((*s)->descriptors_needed(), 6u + 1);  // + epoll
}

// D1: the sampled CPUs narrow each group's CPUs further; a CPU no event
// may use gets no ring.
TEST(Sampler, HybridPlanIntersectsWithTheSampledCpus) {
  FakePerfEventSystem sys;
  SamplerConfig c = PageFaultConfig({100}, {1, 3, 4});
  c.events = HybridGroup();
  auto s = Sampler::Open(c, &sys);
  ASSERT_TRUE(s.ok()) << s.status();
  std::vector<int> cpus;
  for (const auto& o : sys.opened) cpus.push_back(o.cpu);
  EXPECT_EQ(cpus, (std::vector<int>{1, 1, 3}));
  EXPECT_EQ(sys.rings.size(), 2u);  // CPU 4: nothing to open
  auto per_cpu = (*s)->PerCpu();
  ASSERT_EQ(per_cpu.size(), 2u);
  EXPECT_EQ(per_cpu[0].first, 1);
  EXPECT_EQ(per_cpu[1].first, 3);
}

TEST(Sampler, DescriptorsNeededCountsGroupSizeAndEachGroupsCpus) {
  SamplerConfig c = PageFaultConfig({100}, {0, 1, 2, 3});
  c.events = HybridGroup();
  c.threads = {100, 101, 102};
  // 3 threads x (2 P-core CPUs x 2 + 2 E-core CPUs x 1).
  EXPECT_EQ(DescriptorsNeeded(c, false), 3u * (2 * 2 + 2 * 1));
  EXPECT_EQ(DescriptorsNeeded(c, true), 2u * 2 + 2 * 1);
  // The audit's example: 3 threads on a 224-CPU SPR with the aux group.
  SamplerConfig spr = PageFaultConfig({100}, std::vector<int>(224));
  for (int i = 0; i < 224; ++i) spr.cpus[i] = i;
  spr.events = AuxGroup();
  spr.threads = {100, 101, 102};
  EXPECT_EQ(DescriptorsNeeded(spr, false), 1344u);
}

// D3: the soft limit is raised to the hard one when the plan needs it.
TEST(Sampler, RaisesTheSoftDescriptorLimitForThePlan) {
  FakePerfEventSystem sys;
  FakeFdLimits limits;
  limits.limit = {100, 4096};
  SamplerConfig c = PageFaultConfig({100}, {0, 1, 2, 3, 4, 5, 6, 7});
  c.events = AuxGroup();
  c.threads = {100, 101, 102};
  c.fd_limits = &limits;
  // 3 x 8 x 2 = 48 events + epoll + 64 spare > 100.
  auto s = Sampler::Open(c, &sys);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_FALSE((*s)->system_wide());
  ASSERT_EQ(limits.sets.size(), 1u);
  EXPECT_EQ(limits.sets[0].rlim_cur, 4096u);
  EXPECT_EQ(limits.sets[0].rlim_max, 4096u);
  EXPECT_EQ(sys.opened.size(), 48u);
  // Enough already: left alone.
  FakePerfEventSystem sys2;
  FakeFdLimits enough;
  enough.limit = {1024, 4096};
  c.fd_limits = &enough;
  ASSERT_TRUE(Sampler::Open(c, &sys2).ok());
  EXPECT_TRUE(enough.sets.empty());
}

TEST(Sampler, PlanOverTheHardLimitGoesSystemWideWhenPermitted) {
  FakePerfEventSystem sys;
  FakeFdLimits limits;
  limits.limit = {100, 100};
  SamplerConfig c = PageFaultConfig({100}, {0, 1, 2, 3, 4, 5, 6, 7});
  c.events = AuxGroup();
  c.threads = {100, 101, 102};
  c.fd_limits = &limits;
  c.system_wide_permitted = true;
  auto s = Sampler::Open(c, &sys);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE((*s)->system_wide());
  EXPECT_NE((*s)->reason().find("RLIMIT_NOFILE"), std::string::npos)
      << (*s)->reason();
  EXPECT_EQ(sys.opened.size(), 16u);  // 8 CPUs x 2, pid -1
  for (const auto& o : sys.opened) EXPECT_EQ(o.pid, -1);
}

TEST(Sampler, PlanOverTheHardLimitIsAClearErrorWhenNotPermitted) {
  FakePerfEventSystem sys;
  FakeFdLimits limits;
  limits.limit = {100, 100};
  SamplerConfig c = PageFaultConfig({100}, {0, 1, 2, 3, 4, 5, 6, 7});
  c.events = AuxGroup();
  c.threads = {100, 101, 102};
  c.fd_limits = &limits;
  auto s = Sampler::Open(c, &sys);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kResourceExhausted);
  const std::string msg(s.status().message());
  EXPECT_NE(msg.find("needs 49 file descriptors"), std::string::npos) << msg;
  EXPECT_NE(msg.find("hard limit is 100"), std::string::npos) << msg;
  EXPECT_TRUE(sys.opened.empty());  // nothing opened before the check
}

// D5: the task owning a ring's polled fd exits. Its events there are
// closed, another task's event is polled instead, and when the last one
// exits the ring is drained, unmapped and closed; the loop sleeps.
TEST(Sampler, ExitedTasksRingsAreClosedAndThePollLoopSleeps) {
  FakePerfEventSystem sys;
  SamplerConfig c = PageFaultConfig({100, 200}, {0});
  auto s = Sampler::Open(c, &sys);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(sys.opened.size(), 2u);
  const int fd100 = sys.opened[0].fd;
  const int fd200 = sys.opened[1].fd;
  SyntheticRing& ring = *sys.rings.at(fd100);
  size_t got = 0;
  auto sink = [&](absl::Span<const Sample> b) { got += b.size(); };

  sys.Exit(100);
  ASSERT_TRUE((*s)->Poll(0, sink).ok());
  EXPECT_TRUE(sys.IsClosed(fd100));
  EXPECT_FALSE(sys.IsClosed(fd200));
  EXPECT_EQ((*s)->num_events(), 1u);
  EXPECT_EQ((*s)->tasks_exited(), 1u);
  EXPECT_EQ(sys.unmapped, 0);  // pid 200 still writes into it
  // The period controller reaches only live events.
  (*s)->AdaptPeriod(1.0, 1.0);
  for (const auto& [fd, p] : sys.periods) EXPECT_EQ(fd, fd200);
  // Pid 200's samples still arrive through the ring.
  ASSERT_TRUE(ring.Write(PERF_RECORD_SAMPLE, Body(1000 + fd200, 200, 0x1000)));
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE((*s)->Poll(200, sink).ok());
  EXPECT_EQ(got, 1u);
  // Not spinning: with nothing to read, Poll sleeps its timeout.
  t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE((*s)->Poll(100, sink).ok());
  EXPECT_GE(std::chrono::steady_clock::now() - t0,
            std::chrono::milliseconds(80));

  // The last writer exits: final drain, unmap, close.
  ASSERT_TRUE(ring.Write(PERF_RECORD_SAMPLE, Body(1000 + fd200, 200, 0x2000)));
  sys.Exit(200);
  ASSERT_TRUE((*s)->Poll(0, sink).ok());
  EXPECT_EQ(got, 2u);
  EXPECT_EQ(sys.unmapped, 1);
  EXPECT_TRUE(sys.IsClosed(fd200));
  EXPECT_EQ((*s)->rings_closed(), 1u);
  EXPECT_EQ((*s)->num_events(), 0u);
  t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE((*s)->Poll(100, sink).ok());
  EXPECT_GE(std::chrono::steady_clock::now() - t0,
            std::chrono::milliseconds(80));
  EXPECT_EQ((*s)->Totals().samples, 2u);  // counters outlive the ring
  (*s)->Flush(sink);                      // closed rings are skipped
}

// D15: a listed thread that exits after its group leader opened (ESRCH on
// the member) is skipped, its leader closed; Open goes on.
TEST(Sampler, ThreadExitingBetweenLeaderAndMemberIsSkipped) {
  FakePerfEventSystem sys;
  SamplerConfig c = PageFaultConfig({100}, {0, 1});
  c.events = AuxGroup();
  c.threads = {100, 101, 102};
  sys.gone_mid = {101};
  auto s = Sampler::Open(c, &sys);
  ASSERT_TRUE(s.ok()) << s.status();
  int leaders_101 = 0;
  for (const auto& o : sys.opened) {
    if (o.pid != 101) continue;
    ++leaders_101;
    EXPECT_TRUE(sys.IsClosed(o.fd));
  }
  EXPECT_EQ(leaders_101, 2);          // one per CPU, each closed
  EXPECT_EQ((*s)->num_events(), 8u);  // 100 and 102: 2 CPUs x 2
  // The process itself gone mid-group is still an error.
  FakePerfEventSystem sys2;
  sys2.gone_mid = {100};
  EXPECT_FALSE(Sampler::Open(c, &sys2).ok());
}

// D6: failed PERF_EVENT_IOC_PERIOD calls are counted, and a per-task
// sampler says that inherited children keep their old period.
TEST(Sampler, PeriodErrorsAreCountedAndInheritedChildrenReported) {
  FakePerfEventSystem sys;
  sys.period_errno = EINVAL;
  SamplerConfig c = PageFaultConfig({100}, {0, 1});
  c.events = AuxGroup();
  auto s = Sampler::Open(c, &sys);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE((*s)->period_reaches_children());
  (*s)->AdaptPeriod(0.1, 1.0);           // 5x the budget: the period rises
  EXPECT_EQ((*s)->period_errors(), 2u);  // the load event on each CPU
  EXPECT_EQ((*s)->last_period_errno(), EINVAL);
  EXPECT_FALSE((*s)->period_reaches_children());
  // System-wide events have no inherited children.
  FakePerfEventSystem sys2;
  c.system_wide = true;
  auto w = Sampler::Open(c, &sys2);
  ASSERT_TRUE(w.ok());
  (*w)->AdaptPeriod(0.1, 1.0);
  EXPECT_EQ(sys2.periods.size(), 2u);
  EXPECT_EQ((*w)->period_errors(), 0u);
  EXPECT_TRUE((*w)->period_reaches_children());
}

EventGroup Ibs() {
  FakeTree t;
  t.Write("/sys/bus/event_source/devices/ibs_op/type", "11\n");
  auto fs = KernelFs::Open(t.root());
  return *IbsEvents(*fs, SamplingOptions());
}

// D9: per-task IBS from Linux 6.2; system-wide before, with the reason.
TEST(Sampler, IbsIsPerTaskFromLinux62) {
  SamplerConfig c = PageFaultConfig({100}, {0, 1});
  c.events = Ibs();
  c.kernel_version = std::make_pair(6, 2);
  FakePerfEventSystem sys;
  auto s = Sampler::Open(c, &sys);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_FALSE((*s)->system_wide());
  EXPECT_EQ((*s)->reason(), "");
  for (const auto& o : sys.opened) {
    EXPECT_EQ(o.pid, 100);
    EXPECT_TRUE(o.attr.inherit);
  }
  c.kernel_version = std::make_pair(5, 15);
  FakePerfEventSystem sys2;
  auto old = Sampler::Open(c, &sys2);
  ASSERT_TRUE(old.ok());
  EXPECT_TRUE((*old)->system_wide());
  EXPECT_NE((*old)->reason().find("before Linux 6.2 (this kernel is 5.15)"),
            std::string::npos)
      << (*old)->reason();
  // Asked for system-wide: system-wide on any kernel.
  c.kernel_version = std::make_pair(6, 8);
  c.system_wide = true;
  FakePerfEventSystem sys3;
  auto asked = Sampler::Open(c, &sys3);
  ASSERT_TRUE(asked.ok());
  EXPECT_TRUE((*asked)->system_wide());
}

TEST(Sampler, IncludeExistingThreadsReadsKernelVersionAndPrivilege) {
  FakeTree t;
  t.Write("/proc/7/task/7/stat", "x");
  t.Write("/proc/sys/kernel/osrelease", "6.2.0-39-generic\n");
  t.Write("/proc/sys/kernel/perf_event_paranoid", "0\n");
  auto fs = KernelFs::Open(t.root());
  ASSERT_TRUE(fs.ok());
  SamplerConfig c = PageFaultConfig({7}, {0});
  IncludeExistingThreads(*fs, &c);
  ASSERT_TRUE(c.kernel_version.has_value());
  EXPECT_EQ(*c.kernel_version, std::make_pair(6, 2));
  EXPECT_TRUE(c.system_wide_permitted);
  EXPECT_EQ(ParseKernelRelease("5.15.0"), std::make_pair(5, 15));
  EXPECT_EQ(ParseKernelRelease("6.12.117+deb12-amd64"), std::make_pair(6, 12));
  EXPECT_FALSE(ParseKernelRelease("six").has_value());
  EXPECT_FALSE(ParseKernelRelease("6").has_value());
}

// FORK and EXIT bodies: {u32 pid, ppid, tid, ptid; u64 time}.
std::vector<uint64_t> TaskBody(uint32_t pid, uint32_t ppid, uint32_t tid) {
  return {uint64_t{ppid} << 32 | pid, uint64_t{ppid} << 32 | tid, 1};
}

// D13: a child's first samples on one CPU's ring are kept although its
// FORK record sits in a ring drained later in the same pass.
TEST(Sampler, SystemWideFilterSeesForksOfEveryRingBeforeFiltering) {
  FakePerfEventSystem sys;
  SamplerConfig c = PageFaultConfig({100}, {0, 1});
  c.system_wide = true;
  auto s = Sampler::Open(c, &sys);
  ASSERT_TRUE(s.ok()) << s.status();
  SyntheticRing* cpu0 = sys.RingOfCpu(0);
  SyntheticRing* cpu1 = sys.RingOfCpu(1);
  ASSERT_NE(cpu0, nullptr);
  ASSERT_NE(cpu1, nullptr);
  ASSERT_TRUE(cpu1->Write(PERF_RECORD_FORK, TaskBody(200, 100, 200)));
  ASSERT_TRUE(cpu0->Write(PERF_RECORD_SAMPLE, Body(0, 200, 0x5000)));
  ASSERT_TRUE(cpu0->Write(PERF_RECORD_SAMPLE, Body(0, 300, 0x6000)));
  std::vector<uint32_t> pids;
  auto sink = [&](absl::Span<const Sample> b) {
    for (const Sample& x : b) pids.push_back(x.pid);
  };
  ASSERT_TRUE((*s)->Poll(0, sink).ok());
  EXPECT_EQ(pids, (std::vector<uint32_t>{200}));
  EXPECT_EQ((*s)->Totals().filtered_pid, 1u);  // 300: not a target
  EXPECT_EQ((*s)->Totals().forks_followed, 1u);
}

// D13: a target whose leader exited leaves the filter once its samples
// are drained, so another process given its pid is not sampled.
TEST(Sampler, SystemWideFilterForgetsExitedProcesses) {
  FakePerfEventSystem sys;
  SamplerConfig c = PageFaultConfig({100, 150}, {0, 1});
  c.system_wide = true;
  auto s = Sampler::Open(c, &sys);
  ASSERT_TRUE(s.ok()) << s.status();
  SyntheticRing* cpu0 = sys.RingOfCpu(0);
  SyntheticRing* cpu1 = sys.RingOfCpu(1);
  // 100's last sample on CPU 0, drained in the same pass as its EXIT on
  // CPU 1: still kept. A thread of 150 exiting removes nothing.
  ASSERT_TRUE(cpu0->Write(PERF_RECORD_SAMPLE, Body(0, 100, 0x5000)));
  ASSERT_TRUE(cpu1->Write(PERF_RECORD_EXIT, TaskBody(100, 1, 100)));
  ASSERT_TRUE(cpu1->Write(PERF_RECORD_EXIT, TaskBody(150, 1, 151)));
  size_t got = 0;
  auto sink = [&](absl::Span<const Sample> b) { got += b.size(); };
  ASSERT_TRUE((*s)->Poll(0, sink).ok());
  EXPECT_EQ(got, 1u);
  // Pid 100 reused by an unrelated process: dropped. 150 still sampled.
  ASSERT_TRUE(cpu0->Write(PERF_RECORD_SAMPLE, Body(0, 100, 0x7000)));
  ASSERT_TRUE(cpu0->Write(PERF_RECORD_SAMPLE, Body(0, 150, 0x8000)));
  ASSERT_TRUE((*s)->Poll(0, sink).ok());
  EXPECT_EQ(got, 2u);
  EXPECT_EQ((*s)->Totals().filtered_pid, 1u);
}

// D13: a pid reused by a child of a target stays a target; reused by a
// child of another process, it leaves with the exit.
TEST(Sampler, SystemWideFilterKeepsAPidReusedByATargetsChild) {
  for (uint32_t parent : {150u, 999u}) {
    FakePerfEventSystem sys;
    SamplerConfig c = PageFaultConfig({100, 150}, {0, 1});
    c.system_wide = true;
    auto s = Sampler::Open(c, &sys);
    ASSERT_TRUE(s.ok()) << s.status();
    SyntheticRing* cpu0 = sys.RingOfCpu(0);
    SyntheticRing* cpu1 = sys.RingOfCpu(1);
    ASSERT_TRUE(cpu1->Write(PERF_RECORD_EXIT, TaskBody(100, 1, 100)));
    ASSERT_TRUE(cpu1->Write(PERF_RECORD_FORK, TaskBody(100, parent, 100)));
    size_t got = 0;
    auto sink = [&](absl::Span<const Sample> b) { got += b.size(); };
    ASSERT_TRUE((*s)->Poll(0, sink).ok());
    ASSERT_TRUE(cpu0->Write(PERF_RECORD_SAMPLE, Body(0, 100, 0x7000)));
    ASSERT_TRUE((*s)->Poll(0, sink).ok());
    EXPECT_EQ(got, parent == 150 ? 1u : 0u) << "parent " << parent;
  }
}

// D12: ENOENT on a hybrid PMU names the PMU and its CPUs; EINVAL hints
// fit the source.
TEST(Sampler, OpenErrorsNameTheHybridPmuAndFitTheSource) {
  EventGroup g = HybridGroup();
  const std::string enoent = ExplainOpenError(ENOENT, g.events[2], false);
  EXPECT_NE(enoent.find("cpu_atom PMU"), std::string::npos) << enoent;
  EXPECT_NE(enoent.find("CPUs 2-3"), std::string::npos) << enoent;
  EXPECT_EQ(enoent.find("VM without"), std::string::npos) << enoent;
  const std::string pebs = ExplainOpenError(EINVAL, g.events[1], false);
  EXPECT_NE(pebs.find("WEIGHT_STRUCT"), std::string::npos) << pebs;
  EXPECT_NE(pebs.find("ldlat"), std::string::npos) << pebs;
  const std::string ibs = ExplainOpenError(EINVAL, Ibs().events[0], true);
  EXPECT_NE(ibs.find("swfilt"), std::string::npos) << ibs;
  EXPECT_EQ(ibs.find("ldlat"), std::string::npos) << ibs;
  const std::string acc = ExplainOpenError(EACCES, Ibs().events[0], false);
  EXPECT_NE(acc.find("<= 1 for this event"), std::string::npos) << acc;
  const std::string eop = ExplainOpenError(EOPNOTSUPP, g.events[1], false);
  EXPECT_NE(eop.find("precise_ip"), std::string::npos) << eop;
}

// D12: EOPNOTSUPP for precise_ip above what the PMU offers: lowered one
// step at a time (never to 0), remembered for the other CPUs and tasks.
TEST(Sampler, PreciseIpFallsBackOnEopnotsupp) {
  FakePerfEventSystem sys;
  sys.max_precise = 1;
  SamplerConfig c = PageFaultConfig({100}, {0, 1});
  c.events = AuxGroup();
  for (EventSpec& e : c.events.events) e.attr.precise_ip = 3;
  auto s = Sampler::Open(c, &sys);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(sys.opened.size(), 4u);
  for (const auto& o : sys.opened) EXPECT_EQ(o.attr.precise_ip, 1u);
  EXPECT_EQ((*s)->precise_fallbacks().size(), 4u);  // 3->2, 2->1 per event
  FakePerfEventSystem none;
  none.max_precise = 0;
  auto f = Sampler::Open(c, &none);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(std::string(f.status().message()).find("EOPNOTSUPP"),
            std::string::npos)
      << f.status();
}

// D6 over the fake perf kernel (its IOC_PERIOD reaches the parent only, and
// children take the parent's period when they are created): PEBS loads on
// a 2-CPU machine, a target with one thread at open, and the world
// mirrored into /proc for the sampler's task listing.
EventGroup LoadsOnly() {
  FakeTree t;
  const std::string cpu = "/sys/bus/event_source/devices/cpu";
  t.Write(cpu + "/type", "4\n");
  t.Write(cpu + "/format/event", "config:0-7\n");
  t.Write(cpu + "/format/umask", "config:8-15\n");
  t.Write(cpu + "/format/ldlat", "config1:0-15\n");
  t.Write(cpu + "/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
  auto fs = KernelFs::Open(t.root());
  return *PebsEvents(*fs, SamplingOptions(), std::nullopt);
}

struct ReopenWorld {
  FakeTree tree;
  std::unique_ptr<FakePerfKernel> kernel;
  std::optional<KernelFs> fs;
  std::vector<Sample> got;
  SampleSink sink = [this](absl::Span<const Sample> b) {
    got.insert(got.end(), b.begin(), b.end());
  };

  ReopenWorld() {
    FakeKernelConfig kc;
    kc.online_cpus = {0, 1};
    FakePmu cpu;
    cpu.name = "cpu";
    cpu.type = 4;
    cpu.pebs = true;
    cpu.max_precise = 3;
    kc.pmus = {cpu};
    kc.cap_perfmon = true;
    kernel = std::make_unique<FakePerfKernel>(kc);
    kernel->MirrorTasksTo(&tree);
    kernel->AddTask(100);
    fs.emplace(*KernelFs::Open(tree.root()));
  }
  SamplerConfig Config() {
    SamplerConfig c = PageFaultConfig({100}, {0, 1});
    c.events = LoadsOnly();
    c.events.events[0].attr.sample_period = 1000;
    c.fs = &*fs;
    IncludeExistingThreads(*fs, &c);
    c.fd_limits = GenerousLimits();
    return c;
  }
  // One load of each task on CPU `cpu`.
  void Touch(std::vector<std::pair<pid_t, pid_t>> tasks, int cpu) {
    for (const auto& [pid, tid] : tasks) {
      FakeAccess a;
      a.pid = pid;
      a.tid = tid;
      a.cpu = cpu;
      a.addr = 0x10000 + 0x1000 * static_cast<uint64_t>(tid);
      a.weight = 40;
      a.time_ns = 1000 + got.size();
      EXPECT_EQ(kernel->Deliver(a), 1) << "task " << tid;
    }
  }
  uint64_t PeriodOf(pid_t tid) const {
    uint64_t p = 0;
    for (const Sample& s : got) {
      if (s.tid == static_cast<uint32_t>(tid)) p = s.period;
    }
    return p;
  }
};

// The budget raises the period after the target created a thread and a
// child process: the sampler re-opens its per-task events, so the children
// sample at the new period; the old events (and with them their inherited
// children) are closed, every old sample is delivered once, and the
// descriptors are back to the plan's (3 tasks x 2 CPUs).
TEST(Sampler, PeriodChangeReopensSoInheritedChildrenTakeTheNewPeriod) {
  ReopenWorld w;
  auto s = Sampler::Open(w.Config(), w.kernel.get());
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_TRUE((*s)->Enable().ok());
  EXPECT_EQ(w.kernel->open_fds(), 2u);
  w.kernel->SpawnThread(100, 100, 101);  // inherited children of the events
  w.kernel->SpawnProcess(101, 200);
  w.Touch({{100, 100}, {100, 101}, {200, 200}}, 0);
  ASSERT_TRUE((*s)->Poll(0, w.sink).ok());
  ASSERT_EQ(w.got.size(), 3u);
  EXPECT_EQ(w.PeriodOf(101), 1000u);

  // 10% of a core over 10 s against the 2% budget: 4x the period.
  EXPECT_EQ((*s)->AdaptPeriod(1.0, 10.0), 4000u);
  EXPECT_FALSE((*s)->period_reaches_children());
  EXPECT_TRUE((*s)->reopen_pending());
  // Samples taken before the re-open: the children's at the old period.
  w.Touch({{100, 101}}, 1);
  ASSERT_TRUE((*s)->Poll(0, w.sink).ok());  // re-opens first
  EXPECT_EQ((*s)->reopens(), 1u);
  EXPECT_EQ((*s)->reopen_failures(), 0u);
  EXPECT_TRUE((*s)->period_reaches_children());
  ASSERT_EQ(w.got.size(), 4u);  // the old ring drained once, nothing twice
  EXPECT_EQ(w.got[3].tid, 101u);
  EXPECT_EQ(w.got[3].period, 1000u);
  EXPECT_EQ(w.kernel->open_fds(), 6u);  // 100, 101, 200 on 2 CPUs
  EXPECT_EQ((*s)->num_events(), 6u);
  EXPECT_EQ((*s)->descriptors_needed(), 7u);  // and the epoll descriptor
  EXPECT_TRUE(w.kernel->all_enabled());

  w.got.clear();
  w.Touch({{100, 100}, {100, 101}, {200, 200}}, 0);
  w.Touch({{100, 100}, {100, 101}, {200, 200}}, 1);
  ASSERT_TRUE((*s)->Poll(0, w.sink).ok());
  ASSERT_EQ(w.got.size(), 6u);  // once each: no old event left sampling
  for (const Sample& x : w.got) EXPECT_EQ(x.period, 4000u) << x.tid;
  // A thread created now inherits the new period from its parent's event.
  w.kernel->SpawnThread(200, 200, 201);
  w.got.clear();
  w.Touch({{200, 201}}, 1);
  ASSERT_TRUE((*s)->Poll(0, w.sink).ok());
  EXPECT_EQ(w.PeriodOf(201), 4000u);
  // The counters of the retired rings are kept.
  EXPECT_EQ((*s)->Totals().samples, 4u + 6u + 1u);
  size_t per_cpu = 0;
  for (const auto& [cpu, c] : (*s)->PerCpu()) per_cpu += c.samples;
  EXPECT_EQ(per_cpu, 11u);
  EXPECT_EQ((*s)->PerCpu().size(), 2u);
}

// Rate limit: no re-open within kReopenMinIntervalS of the open, nor for a
// change under kReopenFactor; and a target without inherited children
// needs none (the ioctl reached every task).
TEST(Sampler, ReopenIsRateLimitedAndOnlyForInheritedChildren) {
  ReopenWorld w;
  auto s = Sampler::Open(w.Config(), w.kernel.get());
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_TRUE((*s)->Enable().ok());
  w.kernel->SpawnThread(100, 100, 101);
  EXPECT_EQ((*s)->AdaptPeriod(0.1, 1.0), 4000u);  // 1 s after the open
  EXPECT_FALSE((*s)->reopen_pending());
  EXPECT_FALSE((*s)->period_reaches_children());
  EXPECT_EQ((*s)->AdaptPeriod(0.01, 1.0), 4000u);  // holds
  EXPECT_FALSE((*s)->reopen_pending());
  EXPECT_EQ((*s)->AdaptPeriod(0.08, 8.0), 4000u);  // 10 s: due now
  EXPECT_TRUE((*s)->reopen_pending());
  ASSERT_TRUE((*s)->Poll(0, w.sink).ok());
  EXPECT_EQ((*s)->reopens(), 1u);

  // Every task has its own event now: a change needs no re-open.
  ReopenWorld single;
  auto t = Sampler::Open(single.Config(), single.kernel.get());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)->AdaptPeriod(1.0, 10.0), 4000u);
  EXPECT_FALSE((*t)->reopen_pending());
  EXPECT_TRUE((*t)->period_reaches_children());
  EXPECT_EQ(single.kernel->open_fds(), 2u);

  // Without a KernelFs the sampler cannot list tasks: it never re-opens.
  ReopenWorld blind;
  SamplerConfig c = blind.Config();
  c.fs = nullptr;
  auto b = Sampler::Open(c, blind.kernel.get());
  ASSERT_TRUE(b.ok()) << b.status();
  blind.kernel->SpawnThread(100, 100, 101);
  (*b)->AdaptPeriod(1.0, 10.0);
  EXPECT_FALSE((*b)->reopen_pending());
  EXPECT_FALSE((*b)->period_reaches_children());

  // Software events that sample PERIOD take every occurrence whatever
  // their period (perf_swevent_event()): nothing to re-open for them.
  ReopenWorld sw;
  SamplerConfig pf = sw.Config();
  pf.events = *PageFaultEvents(SamplingOptions());
  auto f = Sampler::Open(pf, sw.kernel.get());
  ASSERT_TRUE(f.ok()) << f.status();
  sw.kernel->SpawnThread(100, 100, 101);
  EXPECT_EQ((*f)->AdaptPeriod(1.0, 10.0), 4u);
  EXPECT_FALSE((*f)->reopen_pending());
  EXPECT_TRUE((*f)->period_reaches_children());  // no period to reach
}

// A re-open that fails (EMFILE: old and new events coexist for a moment)
// leaves the old events sampling at the old period, counts and says why,
// and is tried again no sooner than the interval.
TEST(Sampler, FailedReopenKeepsTheOldEventsSampling) {
  ReopenWorld w;
  // Room for the plan (2) and 3 more, not for 2 tasks x 2 CPUs beside it.
  w.kernel->mutable_config().nofile_limit =
      w.kernel->config().other_fds + 2 + 3;
  auto s = Sampler::Open(w.Config(), w.kernel.get());
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_TRUE((*s)->Enable().ok());
  w.kernel->SpawnThread(100, 100, 101);
  EXPECT_EQ((*s)->AdaptPeriod(1.0, 10.0), 4000u);
  ASSERT_TRUE((*s)->reopen_pending());
  ASSERT_TRUE((*s)->Poll(0, w.sink).ok());
  EXPECT_EQ((*s)->reopens(), 0u);
  EXPECT_EQ((*s)->reopen_failures(), 1u);
  EXPECT_NE((*s)->last_reopen_error().find("EMFILE"), std::string::npos)
      << (*s)->last_reopen_error();
  EXPECT_FALSE((*s)->period_reaches_children());
  EXPECT_EQ(w.kernel->open_fds(), 2u);  // the new events closed
  EXPECT_EQ((*s)->num_events(), 2u);
  EXPECT_TRUE(w.kernel->all_enabled());
  w.Touch({{100, 100}, {100, 101}}, 0);
  w.Touch({{100, 101}}, 1);
  ASSERT_TRUE((*s)->Poll(0, w.sink).ok());
  ASSERT_EQ(w.got.size(), 3u);
  EXPECT_EQ(w.got[0].period, 4000u);  // the parent: the ioctl reached it
  EXPECT_EQ(w.got[1].period, 1000u);  // its child: still the old period
  EXPECT_EQ(w.got[2].period, 1000u);
  // Tried again only after another interval.
  EXPECT_EQ((*s)->AdaptPeriod(0.05, 5.0), 4000u);  // holds; 5 s
  EXPECT_FALSE((*s)->reopen_pending());
  EXPECT_EQ((*s)->AdaptPeriod(0.05, 5.0), 4000u);  // 10 s
  EXPECT_TRUE((*s)->reopen_pending());
}

}  // namespace
}  // namespace hotpage
