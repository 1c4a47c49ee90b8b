// FakePerfKernel: each kernel rule it enforces, and the records it writes
// decoded by the real RingReader.

#include "sampler/perf/testing/fake_perf_kernel.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "sampler/perf/perf_record.h"
#include "sampler/perf/ring_reader.h"
#include "tools/base/kernel/fake_tree.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {
namespace {

constexpr uint64_t kPebsSampleType =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
    PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
    PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC;

// An L3-hit load as Intel reports it (perf_mem_data_src fields).
constexpr uint64_t kL3Hit = PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, HIT) |
                            PERF_MEM_S(LVL, L3) | PERF_MEM_S(LVLNUM, L3);

perf_event_attr Attr(uint32_t type, uint64_t config, uint64_t sample_type) {
  perf_event_attr a{};
  a.size = sizeof(a);
  a.type = type;
  a.config = config;
  a.sample_type = sample_type;
  a.sample_period = 1000;
  a.sample_id_all = 1;
  a.disabled = 1;
  a.exclude_kernel = 1;
  a.exclude_hv = 1;
  a.use_clockid = 1;
  a.clockid = CLOCK_MONOTONIC;
  return a;
}

perf_event_attr PebsLoads(uint32_t type = 4) {
  perf_event_attr a = Attr(type, 0x1cd, kPebsSampleType);
  a.config1 = 30;
  a.precise_ip = 2;
  return a;
}
perf_event_attr Aux(uint32_t type = 4) {
  perf_event_attr a = Attr(type, 0x8203, kPebsSampleType);
  a.precise_ip = 2;
  return a;
}
perf_event_attr Ibs(uint32_t type, uint64_t sample_type) {
  perf_event_attr a = Attr(type, 1ull << 19, sample_type);
  a.sample_period = 0x10000;
  a.exclude_kernel = 0;  // IBS rejects exclude_* without swfilt
  a.exclude_hv = 0;
  return a;
}

FakePmu Core(const char* name, uint32_t type, std::vector<int> cpus, bool aux) {
  FakePmu p;
  p.name = name;
  p.type = type;
  p.cpus = std::move(cpus);
  p.pebs = true;
  p.mem_loads_aux = aux;
  p.max_precise = 3;
  return p;
}

FakeKernelConfig Skylake() {
  FakeKernelConfig c;
  c.pmus = {Core("cpu", 4, {}, false)};
  return c;
}

// Alder Lake: P-cores 0-3 (cpu_core, aux), E-cores 4-7 (cpu_atom).
FakeKernelConfig AlderLake() {
  FakeKernelConfig c;
  c.online_cpus = {0, 1, 2, 3, 4, 5, 6, 7};
  c.pmus = {Core("cpu_core", 4, {0, 1, 2, 3}, true),
            Core("cpu_atom", 10, {4, 5, 6, 7}, false)};
  return c;
}

FakeKernelConfig Zen(int major, int minor) {
  FakeKernelConfig c;
  c.kernel_major = major;
  c.kernel_minor = minor;
  FakePmu ibs;
  ibs.name = "ibs_op";
  ibs.type = 11;
  ibs.ibs = true;
  c.pmus = {ibs};
  c.cap_perfmon = true;
  return c;
}

// A mapped ring with the real reader on it.
struct Ring {
  Ring(FakePerfKernel* k, int fd, const perf_event_attr& attr, SampleSource src,
       size_t data_pages = 8)
      : kernel(k), page(static_cast<size_t>(sysconf(_SC_PAGESIZE))) {
    bytes = page * (1 + data_pages);
    int err = 0;
    base = k->Map(fd, bytes, &err);
    EXPECT_NE(base, nullptr) << err;
    reader = std::make_unique<RingReader>(
        base, page, bytes - page,
        std::vector<RingEvent>{{0, PerfEventLayout::FromAttr(attr, src)}},
        nullptr);
  }
  ~Ring() {
    if (base) kernel->Unmap(base, bytes);
  }
  std::vector<Sample> Drain() {
    std::vector<Sample> out(4096);
    out.resize(reader->Drain(out.data(), out.size(), SIZE_MAX));
    return out;
  }
  FakePerfKernel* kernel;
  size_t page;
  size_t bytes = 0;
  void* base = nullptr;
  std::unique_ptr<RingReader> reader;
};

int Enable(FakePerfKernel& k, int fd) {
  return k.Ioctl(fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
}

FakeAccess Load(pid_t pid, int cpu, uint64_t addr, uint64_t t = 1000) {
  FakeAccess a;
  a.pid = pid;
  a.cpu = cpu;
  a.addr = addr;
  a.weight = 250;
  a.data_src = kL3Hit;
  a.time_ns = t;
  return a;
}

TEST(FakePerfKernelTest, SamplesDecodeWithTheRealRingReader) {
  FakePerfKernel k(Skylake());
  k.AddTask(100);
  perf_event_attr a = PebsLoads();
  const int fd = k.Open(&a, 100, 2, -1, 0);
  ASSERT_GE(fd, 0);
  Ring ring(&k, fd, a, SampleSource::kPebsLoad);
  ASSERT_EQ(Enable(k, fd), 0);
  FakeAccess x = Load(100, 2, 0x7f0000001040, 5000);
  x.tid = 100;
  EXPECT_EQ(k.Deliver(x), 1);
  EXPECT_EQ(k.Deliver(Load(100, 3, 0x7f0000002000)), 0);  // other CPU
  EXPECT_EQ(k.Deliver(Load(200, 2, 0x7f0000003000)), 0);  // other task
  std::vector<Sample> s = ring.Drain();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].vaddr, 0x7f0000001040u);
  EXPECT_EQ(s[0].weight, 250u);
  EXPECT_EQ(s[0].data_src, kL3Hit);
  EXPECT_EQ(s[0].level, MemLevel::kL3);
  EXPECT_EQ(s[0].pid, 100u);
  EXPECT_EQ(s[0].tid, 100u);
  EXPECT_EQ(s[0].cpu, 2u);
  EXPECT_EQ(s[0].time_ns, 5000u);
  EXPECT_EQ(s[0].period, 1000u);
  EXPECT_EQ(ring.reader->counters().malformed, 0u);
  uint64_t id = 0;
  ASSERT_EQ(k.Ioctl(fd, PERF_EVENT_IOC_ID, reinterpret_cast<uintptr_t>(&id)),
            0);
  EXPECT_NE(id, 0u);
  k.Close(fd);
}

TEST(FakePerfKernelTest, DisabledEventsAndUnknownTasks) {
  FakePerfKernel k(Skylake());
  perf_event_attr a = PebsLoads();
  EXPECT_EQ(k.Open(&a, 100, 0, -1, 0), -ESRCH);  // no such task
  k.AddTask(100);
  const int fd = k.Open(&a, 100, 0, -1, 0);
  ASSERT_GE(fd, 0);
  Ring ring(&k, fd, a, SampleSource::kPebsLoad);
  EXPECT_EQ(k.Deliver(Load(100, 0, 0x1000)), 0);  // opened disabled
  ASSERT_EQ(Enable(k, fd), 0);
  EXPECT_EQ(k.Deliver(Load(100, 0, 0x1000)), 1);
}

// x86_pmu_event_init(): ENOENT outside the hybrid PMU's supported_cpus.
TEST(FakePerfKernelTest, HybridPmuOnlyOnItsCpus) {
  FakePerfKernel k(AlderLake());
  k.AddTask(100);
  perf_event_attr aux = Aux(4);
  EXPECT_EQ(k.Open(&aux, 100, 4, -1, 0), -ENOENT);  // cpu_core on an E-core
  perf_event_attr atom = PebsLoads(10);
  atom.config = 0x5d0;
  EXPECT_EQ(k.Open(&atom, 100, 0, -1, 0), -ENOENT);  // cpu_atom on a P-core
  const int a_fd = k.Open(&atom, 100, 4, -1, 0);
  EXPECT_GE(a_fd, 0);
  const int aux_fd = k.Open(&aux, 100, 0, -1, 0);
  ASSERT_GE(aux_fd, 0);
  perf_event_attr load = PebsLoads(4);
  load.disabled = 0;
  EXPECT_GE(k.Open(&load, 100, 0, aux_fd, 0), 0);
  // The log names each PMU and CPU, failures included.
  ASSERT_EQ(k.opens().size(), 5u);
  EXPECT_EQ(k.opens()[0].pmu, "cpu_core");
  EXPECT_EQ(k.opens()[0].result, -ENOENT);
  EXPECT_EQ(k.opens()[1].pmu, "cpu_atom");
  EXPECT_EQ(k.DescribeOpens(),
            (std::vector<std::string>{
                "cpu_atom type=10 config=0x5d0 pid=100 cpu=4",
                "cpu_core type=4 config=0x8203 pid=100 cpu=0",
                "cpu_core type=4 config=0x1cd pid=100 cpu=0 leader=3"}));
  // An unregistered type is ENOENT too (perf_init_event()).
  perf_event_attr bogus = PebsLoads(99);
  EXPECT_EQ(k.Open(&bogus, 100, 0, -1, 0), -ENOENT);
}

// intel_pmu_hw_config(): mem-loads with DATA_SRC needs the aux leader.
TEST(FakePerfKernelTest, SapphireRapidsLoadsNeedTheAuxLeader) {
  FakeKernelConfig c;
  c.pmus = {Core("cpu", 4, {}, true)};
  FakePerfKernel k(c);
  k.AddTask(100);
  perf_event_attr load = PebsLoads();
  EXPECT_EQ(k.Open(&load, 100, 0, -1, 0), -ENODATA);       // leads itself
  perf_event_attr other = Attr(4, 0x3c, kPebsSampleType);  // cycles
  const int other_fd = k.Open(&other, 100, 0, -1, 0);
  ASSERT_GE(other_fd, 0);
  EXPECT_EQ(k.Open(&load, 100, 0, other_fd, 0), -ENODATA);  // wrong leader
  perf_event_attr aux = Aux();
  const int aux_fd = k.Open(&aux, 100, 0, -1, 0);
  ASSERT_GE(aux_fd, 0);
  EXPECT_GE(k.Open(&load, 100, 0, aux_fd, 0), 0);
  // Without DATA_SRC the rule does not apply.
  perf_event_attr plain = PebsLoads();
  plain.sample_type &= ~uint64_t{PERF_SAMPLE_DATA_SRC};
  EXPECT_GE(k.Open(&plain, 100, 0, -1, 0), 0);
  // A member on another CPU than its leader: EINVAL.
  EXPECT_EQ(k.Open(&load, 100, 1, aux_fd, 0), -EINVAL);
  // Skylake has no such rule.
  FakePerfKernel skx(Skylake());
  skx.AddTask(100);
  EXPECT_GE(skx.Open(&load, 100, 0, -1, 0), 0);
}

// The aux leader samples too (LD_BLOCKS.STORE_FORWARD), with data_src NA.
TEST(FakePerfKernelTest, AuxLeaderSamplesStoreForwardBlocks) {
  FakeKernelConfig c;
  c.pmus = {Core("cpu", 4, {}, true)};
  FakePerfKernel k(c);
  k.AddTask(100);
  perf_event_attr aux = Aux();
  const int aux_fd = k.Open(&aux, 100, 0, -1, 0);
  ASSERT_GE(aux_fd, 0);
  Ring ring(&k, aux_fd, aux, SampleSource::kPebsLoad);
  ASSERT_EQ(Enable(k, aux_fd), 0);
  FakeAccess blocked = Load(100, 0, 0x5000);
  blocked.kind = FakeAccessKind::kStoreForwardBlock;
  EXPECT_EQ(k.Deliver(blocked), 1);
  EXPECT_EQ(k.Deliver(Load(100, 0, 0x6000)), 0);  // a load: not the aux's
  std::vector<Sample> s = ring.Drain();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].data_src & PERF_MEM_S(LVL, NA), PERF_MEM_S(LVL, NA));
}

// IBS before 6.1: no ADDR/DATA_SRC/WEIGHT, the address only in RAW.
TEST(FakePerfKernelTest, IbsBefore61FillsTheAddressOnlyInRaw) {
  FakePerfKernel k(Zen(5, 15));
  k.AddTask(100);
  perf_event_attr a = Ibs(11, kPebsSampleType);
  const int fd = k.Open(&a, -1, 1, -1, 0);
  ASSERT_GE(fd, 0);
  Ring ring(&k, fd, a, SampleSource::kIbsOp);
  ASSERT_EQ(Enable(k, fd), 0);
  EXPECT_EQ(k.Deliver(Load(100, 1, 0x7f0000004000)), 1);
  EXPECT_TRUE(ring.Drain().empty());
  // Not delivered, and accounted: without RAW an IBS sample with no address
  // cannot be told from a non-memory op, so the reader counts it there
  // (ibs_non_memory, issue 12 D14), never as a kept sample.
  EXPECT_EQ(ring.reader->counters().filtered_zero +
                ring.reader->counters().ibs_non_memory,
            1u);

  // With RAW: the register block carries IbsDcLinAd and IbsOpData3.
  perf_event_attr r = Ibs(11, kPebsSampleType | PERF_SAMPLE_RAW);
  const int rfd = k.Open(&r, -1, 2, -1, 0);
  ASSERT_GE(rfd, 0);
  Ring rring(&k, rfd, r, SampleSource::kIbsOp);
  ASSERT_EQ(Enable(k, rfd), 0);
  EXPECT_EQ(k.Deliver(Load(100, 2, 0x7f0000004000)), 1);
  const perf_event_mmap_page* m =
      static_cast<const perf_event_mmap_page*>(rring.base);
  const uint8_t* rec = static_cast<const uint8_t*>(rring.base) + m->data_offset;
  perf_event_header h;
  std::memcpy(&h, rec, sizeof(h));
  ASSERT_EQ(h.type, PERF_RECORD_SAMPLE);
  // IDENTIFIER IP TID TIME ADDR CPU PERIOD, then RAW.
  const uint8_t* raw = rec + sizeof(h) + 7 * 8;
  uint32_t raw_size = 0;
  std::memcpy(&raw_size, raw, 4);
  EXPECT_EQ(raw_size, 4u + 7 * 8);
  uint64_t data3 = 0, lin = 0;
  std::memcpy(&data3, raw + 4 + 4 + 4 * 8, 8);
  std::memcpy(&lin, raw + 4 + 4 + 5 * 8, 8);
  EXPECT_EQ(lin, 0x7f0000004000u);
  EXPECT_EQ(data3 & 1, 1u);                 // ld_op
  EXPECT_EQ((data3 >> 17) & 1, 1u);         // dc_lin_addr_valid
  EXPECT_EQ((data3 >> 32) & 0xffff, 250u);  // dc_miss_lat
  // The RAW layout as the project's walker reads it.
  SampleFields f;
  ASSERT_TRUE(WalkSample(PerfEventLayout::FromAttr(r, SampleSource::kIbsOp),
                         rec + sizeof(h), h.size - sizeof(h), &f));
  EXPECT_EQ(f.addr, 0u);

  // From 6.1 the kernel parses the registers itself.
  FakePerfKernel k61(Zen(6, 1));
  k61.AddTask(100);
  const int fd61 = k61.Open(&a, -1, 1, -1, 0);
  ASSERT_GE(fd61, 0);
  Ring ring61(&k61, fd61, a, SampleSource::kIbsOp);
  ASSERT_EQ(Enable(k61, fd61), 0);
  EXPECT_EQ(k61.Deliver(Load(100, 1, 0x7f0000004000)), 1);
  std::vector<Sample> s = ring61.Drain();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].vaddr, 0x7f0000004000u);
  EXPECT_EQ(s[0].weight, 250u);
  EXPECT_EQ(s[0].data_src, kL3Hit);
}

// Per-task IBS only from 6.2 (find_get_context(): perf_invalid_context).
TEST(FakePerfKernelTest, PerTaskIbsFrom62) {
  perf_event_attr a = Ibs(11, kPebsSampleType);
  FakePerfKernel old(Zen(6, 1));
  old.AddTask(100);
  EXPECT_EQ(old.Open(&a, 100, 0, -1, 0), -EINVAL);
  EXPECT_GE(old.Open(&a, -1, 0, -1, 0), 0);
  FakePerfKernel now(Zen(6, 2));
  now.AddTask(100);
  EXPECT_GE(now.Open(&a, 100, 0, -1, 0), 0);
  // perf_ibs_init(): exclude_kernel without swfilt; and no IBS groups.
  perf_event_attr ex = a;
  ex.exclude_kernel = 1;
  EXPECT_EQ(now.Open(&ex, 100, 0, -1, 0), -EINVAL);
  const int leader = now.Open(&a, 100, 1, -1, 0);
  ASSERT_GE(leader, 0);
  EXPECT_EQ(now.Open(&a, 100, 1, leader, 0), -EINVAL);
}

// RLIMIT_NOFILE: EMFILE once the process's descriptors reach the limit.
TEST(FakePerfKernelTest, EmfilePastTheDescriptorLimit) {
  FakeKernelConfig c = Skylake();
  c.nofile_limit = 20;
  c.other_fds = 16;
  FakePerfKernel k(c);
  k.AddTask(100);
  perf_event_attr a = PebsLoads();
  for (int cpu = 0; cpu < 4; ++cpu) EXPECT_GE(k.Open(&a, 100, cpu, -1, 0), 0);
  EXPECT_EQ(k.Open(&a, 100, 0, -1, 0), -EMFILE);
  EXPECT_EQ(k.open_fds(), 4u);
  EXPECT_EQ(k.max_open_fds(), 4u);
  k.mutable_config().nofile_limit = 21;  // as if setrlimit raised it
  EXPECT_GE(k.Open(&a, 100, 0, -1, 0), 0);
}

int WaitEvents(int epfd) {
  epoll_event ev[4];
  const int n = epoll_wait(epfd, ev, 4, 0);
  int flags = 0;
  for (int i = 0; i < n; ++i) flags |= static_cast<int>(ev[i].events);
  return flags;
}

// perf_poll(): EPOLLIN at the watermark; EPOLLHUP once the task and its
// inherited children exited (is_event_hup()).
TEST(FakePerfKernelTest, PollInAtTheWatermarkAndHupAfterExit) {
  FakePerfKernel k(Skylake());
  k.AddTask(100);
  perf_event_attr a = PebsLoads();
  a.inherit = 1;
  a.watermark = 1;
  a.wakeup_watermark = 1;  // every record wakes
  const int fd = k.Open(&a, 100, 0, -1, 0);
  ASSERT_GE(fd, 0);
  Ring ring(&k, fd, a, SampleSource::kPebsLoad);
  ASSERT_EQ(Enable(k, fd), 0);
  const int epfd = epoll_create1(EPOLL_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ASSERT_EQ(epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev), 0);
  EXPECT_EQ(WaitEvents(epfd), 0);
  k.Deliver(Load(100, 0, 0x1000));
  EXPECT_EQ(WaitEvents(epfd) & EPOLLIN, EPOLLIN);
  ring.Drain();
  k.Sync();  // the reader emptied the ring: the wake-up is taken back
  EXPECT_EQ(WaitEvents(epfd), 0);

  k.SpawnThread(100, 100, 101);
  k.ExitTask(100);
  EXPECT_EQ(WaitEvents(epfd) & EPOLLHUP, 0);  // child 101 still runs
  FakeAccess child = Load(100, 0, 0x2000);
  child.tid = 101;
  EXPECT_EQ(k.Deliver(child), 1);
  k.ExitTask(101);
  EXPECT_EQ(WaitEvents(epfd) & EPOLLHUP, EPOLLHUP);
  ring.Drain();
  k.Sync();
  EXPECT_EQ(WaitEvents(epfd) & EPOLLHUP, EPOLLHUP);  // for good
  close(epfd);
}

// PERF_EVENT_IOC_PERIOD changes the parent only; children inherited before
// keep the old period, children inherited after copy the new one.
TEST(FakePerfKernelTest, PeriodIoctlReachesTheParentOnly) {
  FakePerfKernel k(Skylake());
  k.AddTask(100);
  perf_event_attr a = PebsLoads();
  a.inherit = 1;
  const int fd = k.Open(&a, 100, 0, -1, 0);
  ASSERT_GE(fd, 0);
  Ring ring(&k, fd, a, SampleSource::kPebsLoad);
  ASSERT_EQ(Enable(k, fd), 0);
  k.SpawnThread(100, 100, 101);
  uint64_t p = 4000;
  ASSERT_EQ(k.Ioctl(fd, PERF_EVENT_IOC_PERIOD, reinterpret_cast<uintptr_t>(&p)),
            0);
  k.SpawnThread(100, 100, 102);
  for (pid_t tid : {100, 101, 102}) {
    FakeAccess x = Load(100, 0, 0x1000 * tid);
    x.tid = tid;
    EXPECT_EQ(k.Deliver(x), 1);
  }
  std::vector<Sample> s = ring.Drain();
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].period, 4000u);  // the parent
  EXPECT_EQ(s[1].period, 1000u);  // inherited before the ioctl
  EXPECT_EQ(s[2].period, 4000u);  // inherited after
  EXPECT_EQ(k.PeriodFor(fd, 101), 1000u);
  uint64_t zero = 0;
  EXPECT_EQ(
      k.Ioctl(fd, PERF_EVENT_IOC_PERIOD, reinterpret_cast<uintptr_t>(&zero)),
      -EINVAL);
}

// __perf_event_account_interrupt(): over max_samples_per_tick the event is
// throttled until the next tick.
TEST(FakePerfKernelTest, ThrottleAtTheMaxSampleRate) {
  FakeKernelConfig c = Skylake();
  c.max_sample_rate = 1000;
  c.hz = 100;  // 10 samples per 10 ms tick
  FakePerfKernel k(c);
  k.AddTask(100);
  perf_event_attr a = PebsLoads();
  const int fd = k.Open(&a, 100, 0, -1, 0);
  ASSERT_GE(fd, 0);
  Ring ring(&k, fd, a, SampleSource::kPebsLoad);
  ASSERT_EQ(Enable(k, fd), 0);
  int written = 0;
  for (int i = 0; i < 20; ++i)
    written += k.Deliver(Load(100, 0, 0x1000 + i * 64, 1000 + i));
  EXPECT_EQ(written, 11);  // the 11th crosses the limit and is still written
  EXPECT_EQ(k.throttle_records(), 1u);
  written = k.Deliver(Load(100, 0, 0x9000, 10'000'000 + 5));  // next tick
  EXPECT_EQ(written, 1);
  std::vector<Sample> s = ring.Drain();
  EXPECT_EQ(s.size(), 12u);
  EXPECT_EQ(ring.reader->counters().throttle, 1u);
  EXPECT_EQ(ring.reader->counters().unthrottle, 1u);
  EXPECT_EQ(ring.reader->counters().malformed, 0u);
}

// perf_allow_cpu() / perf_allow_kernel() and Debian's paranoid 3.
TEST(FakePerfKernelTest, ParanoidAndCapPerfmon) {
  FakeKernelConfig c = Skylake();
  c.paranoid = 2;
  FakePerfKernel k(c);
  k.AddTask(100);
  perf_event_attr a = PebsLoads();
  EXPECT_GE(k.Open(&a, 100, 0, -1, 0), 0);       // per task at 2
  EXPECT_EQ(k.Open(&a, -1, 0, -1, 0), -EACCES);  // CPU-wide needs <= 0
  perf_event_attr kern = a;
  kern.exclude_kernel = 0;
  EXPECT_EQ(k.Open(&kern, 100, 0, -1, 0), -EACCES);  // kernel needs <= 1
  k.mutable_config().paranoid = 0;
  EXPECT_GE(k.Open(&a, -1, 0, -1, 0), 0);
  k.mutable_config().paranoid = 3;
  EXPECT_EQ(k.Open(&a, 100, 0, -1, 0), -EACCES);  // Debian: nothing
  k.mutable_config().cap_perfmon = true;
  EXPECT_GE(k.Open(&a, -1, 0, -1, 0), 0);
  EXPECT_GE(k.Open(&kern, 100, 0, -1, 0), 0);
}

// A vPMU without PEBS: precise_ip is EOPNOTSUPP (x86_pmu_hw_config()); no
// PMU at all: the raw type is ENOENT, software events work.
TEST(FakePerfKernelTest, VirtualMachines) {
  FakeKernelConfig vpmu;
  FakePmu cpu;
  cpu.name = "cpu";
  cpu.type = 4;
  vpmu.pmus = {cpu};
  FakePerfKernel k(vpmu);
  k.AddTask(100);
  perf_event_attr a = PebsLoads();
  EXPECT_EQ(k.Open(&a, 100, 0, -1, 0), -EOPNOTSUPP);
  FakePerfKernel none{FakeKernelConfig{}};
  none.AddTask(100);
  EXPECT_EQ(none.Open(&a, 100, 0, -1, 0), -ENOENT);
  perf_event_attr pf =
      Attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
           kPebsSampleType &
               ~uint64_t{PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_WEIGHT_STRUCT});
  pf.sample_period = 1;
  const int fd = none.Open(&pf, 100, 0, -1, 0);
  ASSERT_GE(fd, 0);
  Ring ring(&none, fd, pf, SampleSource::kPageFault);
  ASSERT_EQ(Enable(none, fd), 0);
  FakeAccess fault = Load(100, 0, 0x7000);
  EXPECT_EQ(none.Deliver(fault), 0);  // not a fault
  fault.page_fault = true;
  EXPECT_EQ(none.Deliver(fault), 1);
  std::vector<Sample> s = ring.Drain();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].vaddr, 0x7000u);
  EXPECT_EQ(s[0].period, 1u);
}

// SET_OUTPUT: events of one CPU share a ring; other CPUs are refused.
TEST(FakePerfKernelTest, SetOutputSameCpuOnly) {
  FakePerfKernel k(Skylake());
  k.AddTask(100);
  k.AddTask(200);
  perf_event_attr a = PebsLoads();
  const int first = k.Open(&a, 100, 0, -1, 0);
  const int second = k.Open(&a, 200, 0, -1, 0);
  const int other_cpu = k.Open(&a, 200, 1, -1, 0);
  ASSERT_GE(first, 0);
  ASSERT_GE(second, 0);
  ASSERT_GE(other_cpu, 0);
  Ring ring(&k, first, a, SampleSource::kPebsLoad);
  EXPECT_EQ(k.Ioctl(other_cpu, PERF_EVENT_IOC_SET_OUTPUT, first), -EINVAL);
  EXPECT_EQ(k.Ioctl(second, PERF_EVENT_IOC_SET_OUTPUT, first), 0);
  ASSERT_EQ(Enable(k, first), 0);
  ASSERT_EQ(Enable(k, second), 0);
  EXPECT_EQ(k.Deliver(Load(200, 0, 0x8000)), 1);
  std::vector<Sample> s = ring.Drain();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].pid, 200u);
  int err = 0;
  EXPECT_EQ(k.Map(second, ring.bytes, &err), nullptr);  // redirected
  EXPECT_EQ(err, EINVAL);
}

// A full ring loses records and says so with PERF_RECORD_LOST.
TEST(FakePerfKernelTest, FullRingCountsLost) {
  FakePerfKernel k(Skylake());
  k.AddTask(100);
  perf_event_attr a = PebsLoads();
  const int fd = k.Open(&a, 100, 0, -1, 0);
  ASSERT_GE(fd, 0);
  Ring ring(&k, fd, a, SampleSource::kPebsLoad, /*data_pages=*/1);
  ASSERT_EQ(Enable(k, fd), 0);
  int written = 0;
  for (int i = 0; i < 100; ++i)
    written += k.Deliver(Load(100, 0, 0x1000 + i, 1000 + i * 1000000));
  const uint64_t fit = k.samples_written();
  EXPECT_LT(fit, 100u);
  ring.Drain();
  k.Deliver(Load(100, 0, 0x1000, 900'000'000));
  ring.Drain();
  EXPECT_EQ(ring.reader->counters().lost, 100 - fit);
  EXPECT_EQ(ring.reader->counters().lost_records, 1u);
  EXPECT_EQ(ring.reader->counters().samples, fit + 1);
  (void)written;
}

TEST(LoadMachineProfileTest, ReadsTheTree) {
  FakeTree t;
  t.Write("/sys/devices/system/cpu/online", "0-7\n");
  t.Write("/proc/sys/kernel/perf_event_paranoid", "2\n");
  t.Write("/proc/sys/kernel/perf_event_max_sample_rate", "50000\n");
  t.Write("/proc/sys/kernel/osrelease", "6.8.0-1-amd64\n");
  t.Write("/sys/bus/event_source/devices/cpu_core/type", "4\n");
  t.Write("/sys/bus/event_source/devices/cpu_core/cpus", "0-3\n");
  t.Write("/sys/bus/event_source/devices/cpu_core/events/mem-loads", "x\n");
  t.Write("/sys/bus/event_source/devices/cpu_core/events/mem-loads-aux", "x\n");
  t.Write("/sys/bus/event_source/devices/cpu_atom/type", "10\n");
  t.Write("/sys/bus/event_source/devices/cpu_atom/cpus", "4-7\n");
  t.Write("/sys/bus/event_source/devices/software/type", "1\n");
  t.Write("/profile.txt", "# test\nname adl\nkernel 6.8\ncap_perfmon 1\n");
  KernelFs fs = *KernelFs::Open(t.root());
  absl::StatusOr<FakeKernelConfig> c = LoadMachineProfile(fs);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->name, "adl");
  EXPECT_EQ(c->kernel_major, 6);
  EXPECT_EQ(c->kernel_minor, 8);
  EXPECT_TRUE(c->cap_perfmon);
  EXPECT_EQ(c->max_sample_rate, 50000u);
  EXPECT_EQ(c->online_cpus.size(), 8u);
  ASSERT_EQ(c->pmus.size(), 2u);
  const FakePmu* core = c->PmuByName("cpu_core");
  ASSERT_NE(core, nullptr);
  EXPECT_TRUE(core->mem_loads_aux);
  EXPECT_EQ(core->cpus, (std::vector<int>{0, 1, 2, 3}));
  const FakePmu* atom = c->PmuByType(10);
  ASSERT_NE(atom, nullptr);
  EXPECT_FALSE(atom->pebs);
  t.Write("/profile.txt", "kernel 5.15\n");
  EXPECT_FALSE(LoadMachineProfile(fs).ok());  // disagrees with osrelease
}

}  // namespace
}  // namespace hotpage
