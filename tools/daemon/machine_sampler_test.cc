// The daemon's machine-wide sampler over the fake perf kernel
// (sampler/perf/testing/fake_perf_kernel.h) on machine profiles
// (tests/pmu/profiles/):
//  - DescriptorPlanTest: the descriptors of the three ways to sample W
//    workloads of 3 threads each (per task, per cgroup, system-wide with a
//    pid map), opened on the fake; the numbers are the table in
//    machine_sampler.h and decide the daemon's choice.
//  - MachineSamplerTest: one system-wide sampler routes each sample by pid
//    to its member's inbox; unknown and reused pids are dropped and
//    counted; the descriptors are the plan's.

#include "tools/daemon/machine_sampler.h"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "sampler/perf/event_config.h"
#include "sampler/perf/sampler.h"
#include "sampler/perf/testing/fake_perf_kernel.h"
#include "tools/base/kernel/fake_tree.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {
namespace {

std::string ProfileDir(const std::string& name) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* ws = std::getenv("TEST_WORKSPACE");
  return absl::StrCat(srcdir ? srcdir : ".", "/", ws ? ws : "hotpage",
                      "/tests/pmu/profiles/", name);
}

// A profile copied into a fresh tree (KernelFs does not follow the
// runfiles' symlinks out of its root), the fake kernel on it, and the
// event plan the daemon's live member chooses for `source` there.
class Machine {
 public:
  Machine(const std::string& profile, const std::string& source) {
    std::filesystem::copy(
        ProfileDir(profile), tree_.root(),
        std::filesystem::copy_options::recursive |
            std::filesystem::copy_options::overwrite_existing);
    absl::StatusOr<KernelFs> fs = KernelFs::Open(tree_.root());
    EXPECT_TRUE(fs.ok()) << fs.status();
    fs_.emplace(std::move(*fs));
    absl::StatusOr<FakeKernelConfig> cfg = LoadMachineProfile(*fs_);
    EXPECT_TRUE(cfg.ok()) << cfg.status();
    kernel_ = std::make_unique<FakePerfKernel>(*cfg);
    kernel_->mutable_config().nofile_limit = 1 << 16;
    absl::StatusOr<SourceRequest> req = ParseSourceRequest(source);
    EXPECT_TRUE(req.ok()) << req.status();
    std::string why;
    absl::StatusOr<EventGroup> events =
        ChooseEvents(*fs_, *req, SamplingOptions(), &why);
    EXPECT_TRUE(events.ok()) << events.status();
    absl::StatusOr<std::vector<int>> cpus = OnlineCpus(*fs_);
    EXPECT_TRUE(cpus.ok()) << cpus.status();
    base_.events = *events;
    base_.cpus = *cpus;
    base_.system_wide_permitted = true;  // the daemon runs as root
    base_.kernel_version = std::make_pair(cfg->kernel_major, cfg->kernel_minor);
    base_.cpu_budget = 0;
  }

  FakePerfKernel& kernel() { return *kernel_; }
  const KernelFs& fs() const { return *fs_; }
  const SamplerConfig& base() const { return base_; }
  // Events per CPU in the plan (every event opens on every CPU here).
  size_t events_per_cpu() const { return base_.events.events.size(); }

 private:
  FakeTree tree_;
  std::optional<KernelFs> fs_;
  std::unique_ptr<FakePerfKernel> kernel_;
  SamplerConfig base_;
};

constexpr int kThreads = 3;

pid_t PidOf(int workload) { return 1000 + 10 * workload; }

void AddWorkloads(FakePerfKernel& k, int workloads) {
  for (int w = 0; w < workloads; ++w) {
    for (int t = 0; t < kThreads; ++t) k.AddTask(PidOf(w), PidOf(w) + t);
  }
}

// Today's daemon: one sampler per process, per task over its threads.
size_t OpenPerTask(Machine& m, int workloads,
                   std::vector<std::unique_ptr<Sampler>>* keep) {
  for (int w = 0; w < workloads; ++w) {
    SamplerConfig c = m.base();
    c.pids = {PidOf(w)};
    for (int t = 0; t < kThreads; ++t) c.threads.push_back(PidOf(w) + t);
    absl::StatusOr<std::unique_ptr<Sampler>> s = Sampler::Open(c, &m.kernel());
    EXPECT_TRUE(s.ok()) << s.status();
    if (s.ok()) keep->push_back(std::move(*s));
  }
  return m.kernel().open_fds();
}

// One event per CPU per event per cgroup, PERF_FLAG_PID_CGROUP with the
// cgroup directory's descriptor as pid, grouped as the plan groups them;
// each directory is closed once its events are open (the kernel holds the
// css). Returns the events open.
size_t OpenPerCgroup(Machine& m, int workloads, std::vector<int>* fds) {
  const std::vector<EventSpec>& specs = m.base().events.events;
  for (int w = 0; w < workloads; ++w) {
    const int dir = open(m.fs().root().c_str(), O_RDONLY | O_DIRECTORY);
    EXPECT_GE(dir, 0);
    for (int cpu : m.base().cpus) {
      std::vector<std::pair<int, int>> leaders;  // group id -> fd
      for (const EventSpec& spec : specs) {
        int leader = -1;
        if (m.base().events.grouped) {
          for (auto& [g, fd] : leaders) {
            if (g == spec.group) leader = fd;
          }
        }
        perf_event_attr attr = spec.attr;
        attr.inherit = 0;
        if (leader != -1) attr.disabled = 0;
        const int fd =
            m.kernel().Open(&attr, dir, cpu, leader, PERF_FLAG_PID_CGROUP);
        EXPECT_GE(fd, 0) << spec.name << " cpu " << cpu << ": " << -fd;
        if (fd < 0) continue;
        fds->push_back(fd);
        if (leader == -1) leaders.push_back({spec.group, fd});
      }
    }
    close(dir);
  }
  return m.kernel().open_fds();
}

struct PlanCase {
  const char* profile;
  const char* source;
  int workloads;
  size_t per_task, per_cgroup, system_wide;
};

class DescriptorPlanTest : public ::testing::TestWithParam<PlanCase> {};

TEST_P(DescriptorPlanTest, SystemWideNeedsTheFewestDescriptors) {
  const PlanCase& c = GetParam();
  {
    Machine m(c.profile, c.source);
    AddWorkloads(m.kernel(), c.workloads);
    std::vector<std::unique_ptr<Sampler>> keep;
    EXPECT_EQ(OpenPerTask(m, c.workloads, &keep), c.per_task);
  }
  {
    Machine m(c.profile, c.source);
    std::vector<int> fds;
    EXPECT_EQ(OpenPerCgroup(m, c.workloads, &fds), c.per_cgroup);
    for (const FakeOpen& o : m.kernel().opens()) {
      EXPECT_TRUE(o.cgroup);
      EXPECT_GE(o.cpu, 0);
    }
    for (int fd : fds) m.kernel().Close(fd);
  }
  {
    Machine m(c.profile, c.source);
    AddWorkloads(m.kernel(), c.workloads);
    absl::StatusOr<std::unique_ptr<MachineSampler>> ms =
        MachineSampler::Create(m.base(), &m.fs(), &m.kernel(), nullptr);
    ASSERT_TRUE(ms.ok()) << ms.status();
    for (int w = 0; w < c.workloads; ++w) {
      ASSERT_TRUE((*ms)->Subscribe({PidOf(w), 1}).ok());
    }
    ASSERT_TRUE((*ms)->PollOnce(0).ok());
    EXPECT_TRUE((*ms)->system_wide());
    EXPECT_EQ(m.kernel().open_fds(), c.system_wide);
    EXPECT_EQ((*ms)->num_events(), c.system_wide);
  }
  EXPECT_LE(c.system_wide, c.per_cgroup);
  EXPECT_LT(c.per_cgroup, c.per_task);
}

INSTANTIATE_TEST_SUITE_P(
    Profiles, DescriptorPlanTest,
    ::testing::Values(
        // 4 CPUs; pebs: {mem-loads-aux, mem-loads} = 2 events per CPU.
        PlanCase{"sapphire_rapids", "pebs", 2, 48, 16, 8},
        PlanCase{"sapphire_rapids", "pebs", 8, 192, 64, 8},
        // ibs: one ibs_op event per CPU.
        PlanCase{"zen4_6_8", "ibs", 2, 24, 8, 4},
        PlanCase{"zen4_6_8", "ibs", 8, 96, 32, 4}),
    [](const ::testing::TestParamInfo<PlanCase>& i) {
      return absl::StrCat(i.param.profile, "_", i.param.workloads, "w");
    });

TEST(DescriptorPlanTest, CgroupEventsArePerCpuOnly) {
  Machine m("sapphire_rapids", "pagefault");
  const int dir = open(m.fs().root().c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(dir, 0);
  perf_event_attr attr = m.base().events.events[0].attr;
  EXPECT_EQ(m.kernel().Open(&attr, dir, -1, -1, PERF_FLAG_PID_CGROUP), -EINVAL);
  EXPECT_EQ(m.kernel().Open(&attr, -1, 0, -1, PERF_FLAG_PID_CGROUP), -EINVAL);
  const int fd = m.kernel().Open(&attr, dir, 0, -1, PERF_FLAG_PID_CGROUP);
  EXPECT_GE(fd, 0);
  close(dir);
  m.kernel().mutable_config().cap_perfmon = false;
  m.kernel().mutable_config().paranoid = 1;
  const int dir2 = open(m.fs().root().c_str(), O_RDONLY | O_DIRECTORY);
  // A CPU-context event: perf_allow_cpu() refuses it at paranoid > 0.
  EXPECT_EQ(m.kernel().Open(&attr, dir2, 1, -1, PERF_FLAG_PID_CGROUP), -EACCES);
  close(dir2);
}

FakeAccess Fault(pid_t pid, int cpu, uint64_t addr) {
  FakeAccess a;
  a.pid = pid;
  a.cpu = cpu;
  a.addr = addr;
  a.page_fault = true;
  return a;
}

std::vector<Sample> DrainAll(SampleInbox& in) {
  std::vector<Sample> out;
  in.Drain(absl::ZeroDuration(), [&](absl::Span<const Sample> b) {
    out.insert(out.end(), b.begin(), b.end());
  });
  return out;
}

TEST(MachineSamplerTest, RoutesEachPidToItsMemberAndDropsTheRest) {
  Machine m("sapphire_rapids", "pagefault");
  for (pid_t p : {100, 200, 300}) m.kernel().AddTask(p);
  absl::StatusOr<std::unique_ptr<MachineSampler>> ms =
      MachineSampler::Create(m.base(), &m.fs(), &m.kernel(), nullptr);
  ASSERT_TRUE(ms.ok()) << ms.status();
  absl::StatusOr<std::shared_ptr<SampleInbox>> a = (*ms)->Subscribe({100, 5});
  absl::StatusOr<std::shared_ptr<SampleInbox>> b = (*ms)->Subscribe({200, 7});
  ASSERT_TRUE(a.ok() && b.ok());
  // One event per CPU whatever the number of members: the plan's count.
  SamplerConfig sw = m.base();
  sw.all = true;
  EXPECT_EQ(m.kernel().open_fds(), DescriptorsNeeded(sw, true));
  EXPECT_EQ(m.kernel().open_fds(), m.base().cpus.size());

  for (int i = 0; i < 3; ++i) m.kernel().Deliver(Fault(100, i, 0x10000 + i));
  for (int i = 0; i < 2; ++i) m.kernel().Deliver(Fault(200, i, 0x20000 + i));
  // A process of no workload.
  for (int i = 0; i < 4; ++i) m.kernel().Deliver(Fault(300, i, 0x30000 + i));
  ASSERT_TRUE((*ms)->PollOnce(0).ok());

  std::vector<Sample> got_a = DrainAll(**a);
  std::vector<Sample> got_b = DrainAll(**b);
  ASSERT_EQ(got_a.size(), 3u);
  ASSERT_EQ(got_b.size(), 2u);
  for (const Sample& s : got_a) EXPECT_EQ(s.pid, 100u);
  for (const Sample& s : got_b) EXPECT_EQ(s.pid, 200u);
  EXPECT_EQ((*ms)->counters().routed, 5u);
  EXPECT_EQ((*ms)->counters().unmapped, 4u);
}

TEST(MachineSamplerTest, AReusedPidIsNeverRoutedToTheOldMember) {
  Machine m("sapphire_rapids", "pagefault");
  m.kernel().AddTask(100);
  absl::StatusOr<std::unique_ptr<MachineSampler>> ms =
      MachineSampler::Create(m.base(), &m.fs(), &m.kernel(), nullptr);
  ASSERT_TRUE(ms.ok()) << ms.status();
  absl::StatusOr<std::shared_ptr<SampleInbox>> old = (*ms)->Subscribe({100, 5});
  ASSERT_TRUE(old.ok());
  m.kernel().Deliver(Fault(100, 0, 0x1000));
  ASSERT_TRUE((*ms)->PollOnce(0).ok());
  EXPECT_EQ(DrainAll(**old).size(), 1u);

  // The selection now sees pid 100 with another start time: a new process
  // (of no workload yet). Its samples are dropped, not the old member's.
  (*ms)->Reconcile({{100, 9}});
  EXPECT_EQ((*ms)->mapped(), 0u);
  for (int i = 0; i < 5; ++i) m.kernel().Deliver(Fault(100, i % 4, 0x9000 + i));
  ASSERT_TRUE((*ms)->PollOnce(0).ok());
  EXPECT_TRUE(DrainAll(**old).empty());
  EXPECT_EQ((*ms)->counters().unmapped, 5u);

  // The new process's member subscribes; the old one's late unsubscribe
  // leaves it mapped.
  absl::StatusOr<std::shared_ptr<SampleInbox>> now = (*ms)->Subscribe({100, 9});
  ASSERT_TRUE(now.ok());
  (*ms)->Unsubscribe({100, 5}, old->get());
  m.kernel().Deliver(Fault(100, 1, 0x9000));
  ASSERT_TRUE((*ms)->PollOnce(0).ok());
  EXPECT_TRUE(DrainAll(**old).empty());
  EXPECT_EQ(DrainAll(**now).size(), 1u);
}

TEST(MachineSamplerTest, WithoutPermissionItSamplesTheMappedThreads) {
  Machine m("sapphire_rapids", "pagefault");
  for (pid_t p : {100, 200}) m.kernel().AddTask(p);
  SamplerConfig base = m.base();
  base.system_wide_permitted = false;
  std::ostringstream log;
  absl::StatusOr<std::unique_ptr<MachineSampler>> ms =
      MachineSampler::Create(base, &m.fs(), &m.kernel(), &log);
  ASSERT_TRUE(ms.ok()) << ms.status();
  EXPECT_FALSE((*ms)->system_wide());
  EXPECT_NE(log.str().find("not permitted"), std::string::npos) << log.str();
  EXPECT_EQ(m.kernel().open_fds(), 0u);
  absl::StatusOr<std::shared_ptr<SampleInbox>> a = (*ms)->Subscribe({100, 5});
  ASSERT_TRUE((*ms)->PollOnce(0).ok());
  EXPECT_EQ(m.kernel().open_fds(), m.base().cpus.size());
  absl::StatusOr<std::shared_ptr<SampleInbox>> b = (*ms)->Subscribe({200, 6});
  ASSERT_TRUE((*ms)->PollOnce(0).ok());
  EXPECT_EQ(m.kernel().open_fds(), 2 * m.base().cpus.size());
  for (const FakeOpen& o : m.kernel().opens()) {
    if (o.result >= 0) {
      EXPECT_NE(o.pid, -1);
    }
  }
  m.kernel().Deliver(Fault(200, 2, 0x5000));
  ASSERT_TRUE((*ms)->PollOnce(0).ok());
  EXPECT_EQ(DrainAll(**b).size(), 1u);
  EXPECT_TRUE(DrainAll(**a).empty());
}

TEST(MachineSamplerSetTest, TwoWorkloadsShareOneSamplerAndGetTheirOwnSamples) {
  Machine m("sapphire_rapids", "pagefault");
  for (pid_t p : {100, 200, 300}) m.kernel().AddTask(p);
  MachineSamplerSet set(&m.fs(), &m.kernel(), nullptr, /*run_threads=*/false);
  std::string name_a, name_b;
  absl::StatusOr<std::unique_ptr<RoutedAttachSource>> a =
      set.Attach("pagefault", true, {100, 5}, &name_a);
  ASSERT_TRUE(a.ok()) << a.status();
  absl::StatusOr<std::unique_ptr<RoutedAttachSource>> b =
      set.Attach("pagefault", true, {200, 6}, &name_b);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(name_a, name_b);
  EXPECT_EQ(set.samplers(), 1u);
  // One event per CPU for both workloads (two samplers of their own would
  // hold one per CPU each).
  EXPECT_EQ(m.kernel().open_fds(), m.base().cpus.size());
  EXPECT_EQ(set.num_events(), m.base().cpus.size());

  for (int i = 0; i < 4; ++i)
    m.kernel().Deliver(Fault(100, i, 0x1000 * (i + 1)));
  m.kernel().Deliver(Fault(200, 3, 0x7000));
  m.kernel().Deliver(Fault(300, 2, 0x8000));
  ASSERT_TRUE(set.PollAll(0).ok());
  std::vector<uint32_t> pids_a, pids_b;
  ASSERT_TRUE((*a)->Poll([&](absl::Span<const Sample> batch) {
                    for (const Sample& s : batch) pids_a.push_back(s.pid);
                  })
                  .ok());
  ASSERT_TRUE((*b)->Poll([&](absl::Span<const Sample> batch) {
                    for (const Sample& s : batch) pids_b.push_back(s.pid);
                  })
                  .ok());
  EXPECT_EQ(pids_a, std::vector<uint32_t>(4, 100));
  EXPECT_EQ(pids_b, std::vector<uint32_t>(1, 200));

  // Both members end: the machine sampler closes at the next Reconcile.
  a->reset();
  b->reset();
  set.Reconcile({});
  EXPECT_EQ(set.samplers(), 0u);
  EXPECT_EQ(m.kernel().open_fds(), 0u);
}

// The rings' throttle and loss records and the routing counters are the
// machine's: no member reports them (a sum over members would count each
// once per member), the set reports them once per source, and they keep
// counting after the sampler closes.
TEST(MachineSamplerSetTest, TheMachinesCountersAreReportedOnceNotPerMember) {
  Machine m("sapphire_rapids", "pagefault");
  for (pid_t p : {100, 200, 300}) m.kernel().AddTask(p);
  MachineSamplerSet set(&m.fs(), &m.kernel(), nullptr, /*run_threads=*/false);
  std::string name;
  absl::StatusOr<std::unique_ptr<RoutedAttachSource>> a =
      set.Attach("pagefault", true, {100, 5}, &name);
  absl::StatusOr<std::unique_ptr<RoutedAttachSource>> b =
      set.Attach("pagefault", true, {200, 6}, &name);
  ASSERT_TRUE(a.ok() && b.ok());
  for (int i = 0; i < 4; ++i)
    m.kernel().Deliver(Fault(100, i, 0x1000 * (i + 1)));
  m.kernel().Deliver(Fault(200, 3, 0x7000));
  m.kernel().Deliver(Fault(300, 2, 0x8000));
  m.kernel().Deliver(Fault(300, 1, 0x9000));
  ASSERT_TRUE(set.PollAll(0).ok());
  EXPECT_FALSE((*a)->PerfStats().has_value());
  EXPECT_FALSE((*b)->PerfStats().has_value());

  MachineReport r;
  set.Report(&r);
  ASSERT_EQ(r.samplers.size(), 1u);
  EXPECT_EQ(r.samplers[0].source, "pagefault+wf");
  EXPECT_EQ(r.samplers[0].routed, 5u);
  EXPECT_EQ(r.samplers[0].unmapped, 2u);
  EXPECT_EQ(r.samplers[0].inbox_full, 0u);
  EXPECT_EQ(r.samplers[0].events, m.base().cpus.size());
  EXPECT_EQ(r.samplers[0].mapped, 2u);
  EXPECT_TRUE(r.threads.empty());  // no routing thread without run_threads

  a->reset();
  b->reset();
  set.Reconcile({});
  ASSERT_EQ(set.samplers(), 0u);
  MachineReport after;
  set.Report(&after);
  ASSERT_EQ(after.samplers.size(), 1u);
  EXPECT_EQ(after.samplers[0].routed, 5u);
  EXPECT_EQ(after.samplers[0].unmapped, 2u);
  EXPECT_EQ(after.samplers[0].events, 0u);
  EXPECT_EQ(after.samplers[0].mapped, 0u);
}

// With run_threads, each source's routing thread's CPU time is reported
// (it is in no member's cpu_seconds).
TEST(MachineSamplerSetTest, TheRoutingThreadsCpuIsReported) {
  Machine m("sapphire_rapids", "pagefault");
  m.kernel().AddTask(100);
  MachineSamplerSet set(&m.fs(), &m.kernel(), nullptr, /*run_threads=*/true);
  std::string name;
  absl::StatusOr<std::unique_ptr<RoutedAttachSource>> a =
      set.Attach("pagefault", false, {100, 5}, &name);
  ASSERT_TRUE(a.ok()) << a.status();
  MachineReport r;
  set.Report(&r);
  ASSERT_EQ(r.threads.size(), 1u);
  EXPECT_EQ(r.threads[0].thread, "sampler pagefault");
  EXPECT_GE(r.threads[0].cpu_seconds, 0.0);
}

// A member's inbox is sized by its process's footprint (a 10 MiB process
// gets 1/8 of the largest), grows with it, and never allocates on Push.
TEST(SampleInboxTest, SizedByTheFootprintAndResizedKeepingWhatItHolds) {
  EXPECT_EQ(SampleInbox::InboxSamplesFor(0), SampleInbox::kInboxSamples);
  const uint64_t ten_mib = (10 << 20) / 4096;
  EXPECT_EQ(SampleInbox::InboxSamplesFor(ten_mib),
            SampleInbox::kMinInboxSamples);
  EXPECT_LE(SampleInbox::InboxSamplesFor(ten_mib) * 8,
            SampleInbox::kInboxSamples);
  EXPECT_EQ(SampleInbox::InboxSamplesFor(uint64_t{1} << 30),
            SampleInbox::kInboxSamples);

  SampleInbox in(4);
  Sample s;
  for (int i = 0; i < 4; ++i) {
    s.vaddr = 0x1000 * (i + 1);
    EXPECT_TRUE(in.Push(s));
  }
  EXPECT_FALSE(in.Push(s));
  EXPECT_EQ(in.dropped_full(), 1u);
  in.Resize(8);
  EXPECT_EQ(in.capacity(), 8u);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(in.Push(s));
  EXPECT_EQ(DrainAll(in).size(), 8u);

  Machine m("sapphire_rapids", "pagefault");
  m.kernel().AddTask(100);
  MachineSamplerSet set(&m.fs(), &m.kernel(), nullptr, /*run_threads=*/false);
  std::string name;
  absl::StatusOr<std::unique_ptr<RoutedAttachSource>> a =
      set.Attach("pagefault", true, {100, 5}, &name, ten_mib);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*a)->inbox().capacity(), SampleInbox::kMinInboxSamples);
  (*a)->ResizeInbox(20000);
  EXPECT_EQ((*a)->inbox().capacity(), 20000u);
}

}  // namespace
}  // namespace hotpage
