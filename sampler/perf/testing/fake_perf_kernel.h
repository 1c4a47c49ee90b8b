// FakePerfKernel: a PerfEventSystem (sampler/perf/perf_event_system.h) that
// behaves like the kernel's perf_event subsystem on a machine described by a
// profile (tests/pmu/profiles/NAME/), for tests that cannot have the PMU.
//
// What it is made of:
//  - FakeKernelConfig: the machine (PMUs with their types, CPUs and
//    features, kernel version, paranoid level, CAP_PERFMON, the sample-rate
//    limit, RLIMIT_NOFILE). LoadMachineProfile() reads it from a profile
//    tree through KernelFs: the sysfs PMU directories, /proc files and the
//    profile's own profile.txt.
//  - Open(): perf_event_open(2) with the kernel's checks, each citing the
//    kernel function it copies (fake_perf_kernel.cc). Every call, failed or
//    not, is logged (opens()), so tests check which events were opened on
//    which CPUs for which task.
//  - Real descriptors: each event is the read end of a pipe, so the
//    Sampler's epoll works unchanged. The fake writes a byte to the pipe for
//    a wake-up (the ring reached its watermark) and closes the write end for
//    EPOLLHUP (the owning task and its inherited children exited: perf_poll()
//    and is_event_hup() in kernel/events/core.c). The wake-up byte is taken
//    back once the reader has consumed the ring (checked on every call into
//    the fake, or by Sync()): perf_poll() clears rb->poll when it reports.
//  - Real rings: Map() returns anonymous shared memory laid out as the
//    kernel's (struct perf_event_mmap_page, then a power-of-two data area),
//    into which the fake writes PERF_RECORD_SAMPLE, THROTTLE/UNTHROTTLE and
//    LOST records in the kernel's layout (perf_output_sample(),
//    perf_log_throttle(), perf_event_lost()) for the sample_type the event
//    was opened with, so the real RingReader decodes them.
//  - A scripted world: tasks (AddTask, SpawnThread, SpawnProcess, ExitTask),
//    optionally mirrored into a FakeTree as /proc/PID/task/TID and
//    /proc/PID/stat (MirrorTasksTo), so code that lists tasks through
//    KernelFs sees the same world the events see; and memory
//    accesses (Deliver): each access becomes one sample in every enabled
//    event that would see it (its CPU, its task or an inherited child of it,
//    its PMU and kind of access). One access is one overflow: the period is
//    what the sample reports, not a count the fake runs down. A software
//    event that samples PERIOD reports period 1 whatever its sample_period,
//    as the kernel does (perf_swevent_event(): every occurrence is a sample
//    of period nr).
//
// Threading: thread-compatible, like the Sampler that drives it; tests
// deliver accesses from the thread that polls (or from the on-enable hook,
// which runs inside Ioctl(PERF_EVENT_IOC_ENABLE)).

#ifndef HOTPAGE_SAMPLER_PERF_TESTING_FAKE_PERF_KERNEL_H_
#define HOTPAGE_SAMPLER_PERF_TESTING_FAKE_PERF_KERNEL_H_

#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sampler/perf/perf_event_system.h"
#include "tools/base/kernel/fake_tree.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {

// One PMU under /sys/bus/event_source/devices.
struct FakePmu {
  std::string name;  // "cpu", "cpu_core", "cpu_atom", "ibs_op", "software"
  uint32_t type = 0;
  // The PMU's `cpus` file: hybrid supported_cpus. Empty: every CPU.
  std::vector<int> cpus;
  bool pebs = false;           // Intel PEBS (events/mem-loads exists)
  bool mem_loads_aux = false;  // events/mem-loads-aux: loads need the aux
  bool ibs = false;            // AMD IBS op
  bool ibs_swfilt = false;     // ibs_op/format/swfilt (Linux 6.14+)
  // x86_pmu_max_precise(): 0 without PEBS (a vPMU), 3 with it.
  int max_precise = 0;
};

struct FakeKernelConfig {
  std::string name;  // the profile's name, for messages
  int kernel_major = 6;
  int kernel_minor = 8;
  std::vector<int> online_cpus = {0, 1, 2, 3};
  // Hardware PMUs; the software PMU (type PERF_TYPE_SOFTWARE) always exists.
  std::vector<FakePmu> pmus;
  int64_t paranoid = 2;      // kernel.perf_event_paranoid
  bool cap_perfmon = false;  // CAP_PERFMON or CAP_SYS_ADMIN
  // kernel.perf_event_max_sample_rate and CONFIG_HZ:
  // max_samples_per_tick = DIV_ROUND_UP(rate, HZ).
  uint64_t max_sample_rate = 100000;
  int hz = 250;
  // Another user holds the core PMU's counters: every x86 core PMU event
  // is EBUSY (__x86_pmu_event_init(): reserve_pmc_hardware() fails).
  bool pmc_in_use = false;
  // RLIMIT_NOFILE (soft) and the descriptors the process holds besides the
  // fake's events (stdin/out/err, the trace file, epoll, ...).
  size_t nofile_limit = 1024;
  size_t other_fds = 16;

  bool KernelAtLeast(int major, int minor) const {
    return kernel_major > major ||
           (kernel_major == major && kernel_minor >= minor);
  }
  const FakePmu* PmuByType(uint32_t type) const;
  const FakePmu* PmuByName(const std::string& name) const;
};

// Reads a machine profile (tests/pmu/profiles/README.md) through `fs`:
// every directory under /sys/bus/event_source/devices with a `type` file,
// /sys/devices/system/cpu/online, /proc/sys/kernel/{osrelease,
// perf_event_paranoid, perf_event_max_sample_rate}, and /profile.txt
// ("key value" lines: name, kernel MAJOR.MINOR, cap_perfmon 0|1, hz N,
// nofile_limit N, other_fds N, max_precise N). profile.txt's kernel must
// agree with osrelease.
absl::StatusOr<FakeKernelConfig> LoadMachineProfile(const KernelFs& fs);

// A memory access of the scripted stream.
enum class FakeAccessKind {
  kLoad,
  kStore,
  // A load blocked by store forwarding: what the SPR-class mem-loads-aux
  // event (event=0x03,umask=0x82, LD_BLOCKS.STORE_FORWARD) counts.
  kStoreForwardBlock,
};

struct FakeAccess {
  pid_t pid = 0;  // thread-group id
  pid_t tid = 0;  // 0: pid
  int cpu = 0;
  uint64_t addr = 0;
  uint32_t weight = 0;    // load latency (WEIGHT / WEIGHT_STRUCT var1_dw)
  uint64_t data_src = 0;  // perf_mem_data_src as the PMU reports it
  uint64_t time_ns = 0;
  uint64_t ip = 0x401000;
  FakeAccessKind kind = FakeAccessKind::kLoad;
  bool page_fault = false;  // also a page fault (software page-fault events)
};

// One perf_event_open call as the fake saw it.
struct FakeOpen {
  std::string pmu;  // PMU name ("?" for an unknown type)
  uint32_t type = 0;
  uint64_t config = 0, config1 = 0, config2 = 0;
  uint64_t sample_type = 0;
  uint64_t sample_period = 0;
  int precise_ip = 0;
  bool inherit = false;
  pid_t pid = -1;  // a cgroup event: the cgroup directory's descriptor
  int cpu = -1;
  bool cgroup = false;         // opened with PERF_FLAG_PID_CGROUP
  int group_leader_open = -1;  // index in opens() of the leader, -1: none
  int result = 0;              // fd, or -errno
};

class FakePerfKernel : public PerfEventSystem {
 public:
  explicit FakePerfKernel(FakeKernelConfig config);
  ~FakePerfKernel() override;
  FakePerfKernel(const FakePerfKernel&) = delete;
  FakePerfKernel& operator=(const FakePerfKernel&) = delete;

  // PerfEventSystem.
  int Open(perf_event_attr* attr, pid_t pid, int cpu, int group_fd,
           unsigned long flags) override;
  void* Map(int fd, size_t bytes, int* err) override;
  void Unmap(void* addr, size_t bytes) override;
  int Ioctl(int fd, unsigned long request, unsigned long arg) override;
  void Close(int fd) override;

  // The world. A task must exist for a per-task open (else ESRCH).
  void AddTask(pid_t pid, pid_t tid = 0);
  // `parent_tid` creates `tid` in process `pid`: every inherit=1 event on
  // the parent (or inherited by it) gets a child event for `tid`, with the
  // parent event's sample period as it is now (inherit_event()).
  void SpawnThread(pid_t pid, pid_t parent_tid, pid_t tid);
  // `parent_tid` forks process `pid` (its first thread): inherited like a
  // thread (copy_process() -> perf_event_init_task() for forks and clones
  // alike), with the parent event's sample period as it is now.
  void SpawnProcess(pid_t parent_tid, pid_t pid);
  // The task exits: its events stop; each event whose task and inherited
  // children are all gone reports EPOLLHUP from then on (is_event_hup()).
  void ExitTask(pid_t tid);
  // From now on every task added, spawned or exited is also written to (or
  // removed from) `tree`: /proc/PID/task/TID/ and /proc/PID/stat with the
  // parent's pid as ppid. `tree` must outlive the fake.
  void MirrorTasksTo(FakeTree* tree);
  // One access; returns the number of samples written for it.
  int Deliver(const FakeAccess& access);
  int DeliverAll(const std::vector<FakeAccess>& accesses);
  // Takes back the wake-up of every ring its reader has emptied.
  void Sync();
  // Runs after every successful PERF_EVENT_IOC_ENABLE (e.g. to play a
  // script once the events are on).
  void set_on_enable(std::function<void()> hook) {
    on_enable_ = std::move(hook);
  }

  const FakeKernelConfig& config() const { return config_; }
  FakeKernelConfig& mutable_config() { return config_; }
  const std::vector<FakeOpen>& opens() const { return opens_; }
  // Successful opens only, one line each:
  // "cpu_core type=4 config=0x1cd pid=100 cpu=2 leader=3".
  std::vector<std::string> DescribeOpens() const;
  size_t open_fds() const { return events_.size(); }
  // Every open event is enabled (the Sampler has enabled all its groups).
  bool all_enabled() const;
  size_t max_open_fds() const { return max_open_fds_; }
  // Period a sample of `tid` taken by the event `fd` (or its inherited
  // child for `tid`) would report now.
  uint64_t PeriodFor(int fd, pid_t tid) const;
  // Counts for tests.
  uint64_t samples_written() const { return samples_written_; }
  uint64_t throttle_records() const { return throttle_records_; }

 private:
  struct Ring;
  struct Event;

  Event* Find(int fd) const;
  int CheckOpen(const perf_event_attr& attr, pid_t pid, int cpu, Event* leader,
                const FakePmu** pmu) const;
  bool Sees(const Event& e, const FakeAccess& a, uint64_t* period) const;
  void WriteSample(Event& e, const FakeAccess& a, uint64_t period);
  void WriteThrottle(Event& e, uint64_t time_ns, bool unthrottle);
  bool WriteRecord(Event& e, const std::vector<uint8_t>& record);
  void AppendSampleId(const Event& e, pid_t pid, pid_t tid, int cpu,
                      uint64_t time_ns, std::vector<uint8_t>* out) const;
  void Wake(Ring& ring);
  void MaybeHangUp(Event& e);
  void MirrorTask(pid_t pid, pid_t tid);
  Ring* RingOf(Event& e) const;

  FakeKernelConfig config_;
  std::map<int, std::unique_ptr<Event>> events_;  // by fd
  std::map<pid_t, pid_t> tasks_;                  // tid -> pid
  std::set<pid_t> exited_;
  std::map<pid_t, pid_t> ppid_;  // process -> parent process
  FakeTree* tree_ = nullptr;
  std::vector<FakeOpen> opens_;
  std::vector<std::shared_ptr<Ring>> rings_;
  std::function<void()> on_enable_;
  uint64_t next_id_ = 1;
  size_t max_open_fds_ = 0;
  uint64_t samples_written_ = 0;
  uint64_t throttle_records_ = 0;
};

}  // namespace hotpage

#endif  // HOTPAGE_SAMPLER_PERF_TESTING_FAKE_PERF_KERNEL_H_
