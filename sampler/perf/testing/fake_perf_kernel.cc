#include "sampler/perf/testing/fake_perf_kernel.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tools/base/status_macros.h"

namespace hotpage {
namespace {

constexpr char kDevices[] = "/sys/bus/event_source/devices";

// The event codes (config bits 0-15: event | umask << 8) the fake gives
// meaning to, from the kernel's alias tables in arch/x86/events/intel/core.c
// (mem_ld_hsw "event=0xcd,umask=0x1,ldlat=3", mem_st_hsw
// "event=0xd0,umask=0x82", mem_st_spr "event=0xcd,umask=0x2", mem_ld_aux
// "event=0x03,umask=0x82", and the hybrid atom halves of mem_ld_adl
// "event=0xd0,umask=0x5,ldlat=3" and mem_st_adl "event=0xd0,umask=0x6").
// is_mem_loads_event() and is_mem_loads_aux_event() compare the same bits
// (INTEL_ARCH_EVENT_MASK).
constexpr uint64_t kEventMask = 0xffff;
constexpr uint64_t kMemLoads = 0x01cd;
constexpr uint64_t kMemLoadsAtom = 0x05d0;
constexpr uint64_t kMemStoresHsw = 0x82d0;
constexpr uint64_t kMemStoresSpr = 0x02cd;
constexpr uint64_t kMemStoresAtom = 0x06d0;
constexpr uint64_t kMemLoadsAux = 0x8203;

// PERF_MEM_NA (include/linux/perf_event.h): what perf_sample_data_init()
// leaves in data_src when the PMU fills nothing.
constexpr uint64_t kMemNa = PERF_MEM_S(OP, NA) | PERF_MEM_S(LVL, NA) |
                            PERF_MEM_S(SNOOP, NA) | PERF_MEM_S(LOCK, NA) |
                            PERF_MEM_S(TLB, NA);

// The sample_type bits whose layout the fake writes; others are refused at
// open (a test asking for them needs the fake extended, not a silent
// record the reader would misparse).
constexpr uint64_t kModelledSampleType =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
    PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
    PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
    PERF_SAMPLE_RAW | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT |
    PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_PHYS_ADDR;

// IBS op register block of the RAW sample (arch/x86/events/amd/ibs.c,
// struct perf_ibs_data: u32 caps, then the op MSRs from MSR_AMD64_IBSOPCTL
// on: IbsOpCtl, IbsOpRip, IbsOpData, IbsOpData2, IbsOpData3, IbsDcLinAd,
// IbsDcPhysAd: MSR_AMD64_IBSOP_REG_COUNT = 7).
constexpr int kIbsOpRegs = 7;
constexpr uint32_t kIbsCaps = 0x1ff;  // IBS_CAPS_AVAIL .. IBS_CAPS_OPBRNFUSE
// union ibs_op_data3 (arch/x86/include/asm/amd-ibs.h).
constexpr uint64_t kIbsLdOp = 1ull << 0;
constexpr uint64_t kIbsStOp = 1ull << 1;
constexpr uint64_t kIbsDcMiss = 1ull << 7;
constexpr uint64_t kIbsDcLinAddrValid = 1ull << 17;
constexpr int kIbsDcMissLatShift = 32;

void Put64(std::vector<uint8_t>* out, uint64_t v) {
  const size_t at = out->size();
  out->resize(at + 8);
  std::memcpy(out->data() + at, &v, 8);
}
void Put32(std::vector<uint8_t>* out, uint32_t v) {
  const size_t at = out->size();
  out->resize(at + 4);
  std::memcpy(out->data() + at, &v, 4);
}

bool IsPowerOfTwo(size_t n) { return n != 0 && (n & (n - 1)) == 0; }

}  // namespace

const FakePmu* FakeKernelConfig::PmuByType(uint32_t type) const {
  for (const FakePmu& p : pmus) {
    if (p.type == type) return &p;
  }
  return nullptr;
}

const FakePmu* FakeKernelConfig::PmuByName(const std::string& n) const {
  for (const FakePmu& p : pmus) {
    if (p.name == n) return &p;
  }
  return nullptr;
}

absl::StatusOr<FakeKernelConfig> LoadMachineProfile(const KernelFs& fs) {
  FakeKernelConfig c;
  c.pmus.clear();
  HOTPAGE_ASSIGN_OR_RETURN(c.online_cpus,
                           fs.ReadList("/sys/devices/system/cpu/online"));
  HOTPAGE_ASSIGN_OR_RETURN(c.paranoid,
                           fs.ReadInt("/proc/sys/kernel/perf_event_paranoid"));
  HOTPAGE_ASSIGN_OR_RETURN(
      int64_t rate, fs.ReadInt("/proc/sys/kernel/perf_event_max_sample_rate"));
  if (rate <= 0) return absl::InvalidArgumentError("bad max sample rate");
  c.max_sample_rate = static_cast<uint64_t>(rate);
  absl::StatusOr<std::vector<std::string>> pmus = fs.ListDir(kDevices);
  if (pmus.ok()) {
    for (const std::string& name : *pmus) {
      const std::string dir = absl::StrCat(kDevices, "/", name);
      absl::StatusOr<int64_t> type = fs.ReadInt(dir + "/type");
      if (!type.ok()) continue;
      if (name == "software") continue;  // always there; built in
      FakePmu p;
      p.name = name;
      p.type = static_cast<uint32_t>(*type);
      if (fs.Exists(dir + "/cpus")) {
        HOTPAGE_ASSIGN_OR_RETURN(p.cpus, fs.ReadList(dir + "/cpus"));
      }
      p.pebs = fs.Exists(dir + "/events/mem-loads");
      p.mem_loads_aux = fs.Exists(dir + "/events/mem-loads-aux");
      p.ibs = name == "ibs_op";
      p.ibs_swfilt = p.ibs && fs.Exists(dir + "/format/swfilt");
      p.max_precise = p.pebs ? 3 : 0;
      c.pmus.push_back(std::move(p));
    }
  }
  HOTPAGE_ASSIGN_OR_RETURN(std::string osrelease,
                           fs.ReadTrimmed("/proc/sys/kernel/osrelease"));
  HOTPAGE_ASSIGN_OR_RETURN(std::string text, fs.ReadFile("/profile.txt"));
  bool have_kernel = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> kv =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (kv.size() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat(fs.Display("/profile.txt"), ": bad line '", line, "'"));
    }
    const std::string& k = kv[0];
    const std::string& v = kv[1];
    int64_t n = 0;
    const bool num = absl::SimpleAtoi(v, &n) && n >= 0;
    if (k == "name") {
      c.name = v;
    } else if (k == "kernel") {
      std::vector<std::string> mm = absl::StrSplit(v, '.');
      if (mm.size() != 2 || !absl::SimpleAtoi(mm[0], &c.kernel_major) ||
          !absl::SimpleAtoi(mm[1], &c.kernel_minor)) {
        return absl::InvalidArgumentError(absl::StrCat("bad kernel '", v, "'"));
      }
      have_kernel = true;
    } else if (k == "cap_perfmon" && num) {
      c.cap_perfmon = n != 0;
    } else if (k == "hz" && num && n > 0) {
      c.hz = static_cast<int>(n);
    } else if (k == "nofile_limit" && num) {
      c.nofile_limit = static_cast<size_t>(n);
    } else if (k == "other_fds" && num) {
      c.other_fds = static_cast<size_t>(n);
    } else if (k == "max_precise" && num) {
      for (FakePmu& p : c.pmus) {
        if (p.name == "cpu" || p.name == "cpu_core" || p.name == "cpu_atom")
          p.max_precise = static_cast<int>(n);
      }
    } else {
      return absl::InvalidArgumentError(absl::StrCat(fs.Display("/profile.txt"),
                                                     ": unknown key or bad "
                                                     "value '",
                                                     line, "'"));
    }
  }
  if (!have_kernel)
    return absl::InvalidArgumentError("profile.txt has no 'kernel' line");
  if (!absl::StartsWith(
          osrelease, absl::StrCat(c.kernel_major, ".", c.kernel_minor, "."))) {
    return absl::InvalidArgumentError(
        absl::StrCat("osrelease '", osrelease,
                     "' disagrees with profile.txt "
                     "kernel ",
                     c.kernel_major, ".", c.kernel_minor));
  }
  return c;
}

// A ring: the mapping and the kernel-side state of struct perf_buffer.
struct FakePerfKernel::Ring {
  uint8_t* base = nullptr;
  size_t bytes = 0;
  size_t data_size = 0;
  uint64_t watermark = 0;      // bytes between wake-ups
  uint64_t wakeup_mark = 0;    // head at the last wake-up
  uint32_t wakeup_events = 0;  // attr.wakeup_events (without watermark)
  uint32_t events_since = 0;
  uint64_t lost = 0;            // records that did not fit, not yet told
  bool woken = false;           // a wake-up byte is in the pipes
  std::vector<Event*> members;  // events writing here (mmap owner first)
  perf_event_mmap_page* meta() const {
    return reinterpret_cast<perf_event_mmap_page*>(base);
  }
};

struct FakePerfKernel::Event {
  int fd = -1;
  int wfd = -1;  // write end of the pipe; -1 once hung up
  int open_index = 0;
  perf_event_attr attr{};
  const FakePmu* pmu = nullptr;  // nullptr: the software PMU
  pid_t pid = -1;
  int cpu = -1;
  Event* leader = this;
  std::vector<Event*> siblings;
  uint64_t id = 0;
  bool enabled = false;
  uint64_t period = 0;
  std::shared_ptr<Ring> ring;  // its own mapping, or SET_OUTPUT's target
  bool mapped = false;
  std::map<pid_t, uint64_t> children;  // live inherited children -> period
  bool task_exited = false;
  bool cgroup = false;  // PERF_FLAG_PID_CGROUP: opened, never sampled
  // __perf_event_account_interrupt(): interrupts in the current tick.
  uint64_t tick = ~uint64_t{0};
  uint64_t interrupts = 0;
  bool throttled = false;
};

FakePerfKernel::FakePerfKernel(FakeKernelConfig config)
    : config_(std::move(config)) {}

FakePerfKernel::~FakePerfKernel() {
  for (auto& [fd, e] : events_) {
    close(fd);
    if (e->wfd >= 0) close(e->wfd);
  }
  for (auto& r : rings_) {
    if (r->base != nullptr) munmap(r->base, r->bytes);
  }
}

FakePerfKernel::Event* FakePerfKernel::Find(int fd) const {
  auto it = events_.find(fd);
  return it == events_.end() ? nullptr : it->second.get();
}

// The checks of perf_event_open() (kernel/events/core.c) in the kernel's
// order, with the PMU's event_init rules where the kernel calls them.
int FakePerfKernel::CheckOpen(const perf_event_attr& attr, pid_t pid, int cpu,
                              Event* leader, const FakePmu** pmu_out) const {
  const FakeKernelConfig& c = config_;
  // Debian's "security,perf: Allow further restriction of perf_event_open"
  // (paranoid >= 3: nothing without CAP_PERFMON/CAP_SYS_ADMIN).
  if (c.paranoid >= 3 && !c.cap_perfmon) return -EACCES;
  if ((attr.sample_type & ~kModelledSampleType) != 0) return -EINVAL;
  if ((attr.sample_type & PERF_SAMPLE_WEIGHT) &&
      (attr.sample_type & PERF_SAMPLE_WEIGHT_STRUCT)) {
    return -EINVAL;  // perf_copy_attr(): the two weights exclude each other
  }
  // perf_event_open(): kernel profiling needs perf_allow_kernel():
  // paranoid > 1 without perfmon_capable() is EACCES.
  if (!attr.exclude_kernel && c.paranoid > 1 && !c.cap_perfmon) return -EACCES;
  if (pid == -1 && cpu == -1) return -EINVAL;
  // get_unused_fd_flags() comes before the task and PMU lookups: EMFILE
  // once RLIMIT_NOFILE descriptors are in use (alloc_fd()).
  if (events_.size() + c.other_fds >= c.nofile_limit) return -EMFILE;
  if (pid != -1 && (tasks_.count(pid) == 0 || exited_.count(pid) != 0))
    return -ESRCH;  // find_lively_task_by_vpid()
  // perf_init_event(): the PMU registered for attr.type; a type nobody
  // registered is ENOENT.
  const FakePmu* pmu = nullptr;
  if (attr.type == PERF_TYPE_SOFTWARE) {
    if (attr.config >= PERF_COUNT_SW_MAX) return -ENOENT;
  } else {
    pmu = c.PmuByType(attr.type);
    if (pmu == nullptr) return -ENOENT;
  }
  if (pmu != nullptr && !pmu->ibs) {
    // __x86_pmu_event_init(): the counters are reserved by another user
    // (reserve_pmc_hardware() fails): EBUSY.
    if (c.pmc_in_use) return -EBUSY;
    // x86_pmu_event_init(): a hybrid PMU's event on a CPU outside its
    // supported_cpus is ENOENT (arch/x86/events/core.c).
    if (cpu != -1 && !pmu->cpus.empty() &&
        std::find(pmu->cpus.begin(), pmu->cpus.end(), cpu) == pmu->cpus.end()) {
      return -ENOENT;
    }
    // x86_pmu_hw_config(): precise_ip above x86_pmu_max_precise() is
    // EOPNOTSUPP (no PEBS: 0).
    if (attr.precise_ip > pmu->max_precise) return -EOPNOTSUPP;
    // intel_pmu_hw_config() (arch/x86/events/intel/core.c): where
    // require_mem_loads_aux_event(), a mem-loads event with DATA_SRC must
    // follow a mem-loads-aux event in its group: ENODATA when it leads the
    // group itself, or neither its leader nor a sibling is the aux event.
    if (pmu->mem_loads_aux && (attr.sample_type & PERF_SAMPLE_DATA_SRC) &&
        (attr.config & kEventMask) == kMemLoads) {
      if (leader == nullptr) return -ENODATA;
      bool aux = (leader->attr.config & kEventMask) == kMemLoadsAux;
      for (const Event* s : leader->siblings)
        aux |= (s->attr.config & kEventMask) == kMemLoadsAux;
      if (!aux) return -ENODATA;
    }
  }
  if (pmu != nullptr && pmu->ibs) {
    // perf_ibs_init() (arch/x86/events/amd/ibs.c): one IBS event per group
    // (validate_group), no exclude_* bits without swfilt, and never
    // exclude_host/guest/idle.
    if (leader != nullptr) return -EINVAL;
    if ((attr.exclude_user || attr.exclude_kernel || attr.exclude_hv) &&
        !(pmu->ibs_swfilt && (attr.config2 & 1)))
      return -EINVAL;
    if (attr.exclude_host || attr.exclude_guest || attr.exclude_idle)
      return -EINVAL;
    // The op counter bits (cnt_mask, IbsOpMaxCnt 0-15) must be 0 with a
    // sample period.
    if (attr.sample_period != 0 && (attr.config & 0xffff) != 0) return -EINVAL;
  }
  // find_get_context(): a CPU-wide event needs perf_allow_cpu() (paranoid
  // > 0 without perfmon_capable(): EACCES), an online CPU (ENODEV); a
  // per-task event needs a PMU with a task context: IBS has had one only
  // since 6.2 (perf_ibs_op.pmu.task_ctx_nr = perf_hw_context; before,
  // perf_invalid_context, and find_get_context() returns EINVAL).
  if (pid == -1 && c.paranoid > 0 && !c.cap_perfmon) return -EACCES;
  if (cpu != -1 && std::find(c.online_cpus.begin(), c.online_cpus.end(), cpu) ==
                       c.online_cpus.end()) {
    return -ENODEV;
  }
  if (pid != -1 && pmu != nullptr && pmu->ibs && !c.KernelAtLeast(6, 2))
    return -EINVAL;
  if (leader != nullptr) {
    // perf_event_open(): a group member must be on its leader's CPU and
    // task context.
    if (leader->cpu != cpu || leader->pid != pid) return -EINVAL;
    // Hybrid: a group cannot mix core PMUs (the kernel requires one PMU
    // context for hardware siblings).
    if (leader->pmu != nullptr && pmu != nullptr && leader->pmu != pmu)
      return -EINVAL;
  }
  *pmu_out = pmu;
  return 0;
}

int FakePerfKernel::Open(perf_event_attr* attr, pid_t pid, int cpu,
                         int group_fd, unsigned long flags) {
  Sync();
  FakeOpen log;
  log.type = attr->type;
  log.config = attr->config;
  log.config1 = attr->config1;
  log.config2 = attr->config2;
  log.sample_type = attr->sample_type;
  log.sample_period = attr->freq ? 0 : attr->sample_period;
  log.precise_ip = attr->precise_ip;
  log.inherit = attr->inherit;
  log.pid = pid;
  log.cpu = cpu;
  const FakePmu* named = attr->type == PERF_TYPE_SOFTWARE
                             ? nullptr
                             : config_.PmuByType(attr->type);
  log.pmu = attr->type == PERF_TYPE_SOFTWARE ? "software"
            : named != nullptr               ? named->name
                                             : "?";
  Event* leader = nullptr;
  int rc = 0;
  // perf_event_open(): unknown flags are EINVAL; with PERF_FLAG_PID_CGROUP
  // `pid` is a cgroup directory's descriptor and the event is per CPU
  // ("pid == -1 || cpu == -1" is EINVAL), opened in the CPU context
  // (task = NULL, so perf_allow_cpu() applies) and bound to the cgroup by
  // perf_cgroup_connect(), which takes its own css reference (fdget/fdput),
  // so the directory's descriptor need not stay open. The fake opens such
  // events and counts them; it delivers no samples to them.
  const bool cgroup = (flags & PERF_FLAG_PID_CGROUP) != 0;
  if ((flags & ~static_cast<unsigned long>(
                   PERF_FLAG_FD_NO_GROUP | PERF_FLAG_FD_OUTPUT |
                   PERF_FLAG_PID_CGROUP | PERF_FLAG_FD_CLOEXEC)) != 0) {
    rc = -EINVAL;
  } else if (cgroup) {
    struct stat st;
    if (pid == -1 || cpu == -1) {
      rc = -EINVAL;
    } else if (fstat(pid, &st) != 0 || !S_ISDIR(st.st_mode)) {
      rc = -EBADF;  // perf_cgroup_connect(): not a cgroup directory
    } else {
      log.cgroup = true;
      pid = -1;
    }
  }
  if (rc == 0 && group_fd != -1) {
    leader = Find(group_fd);
    if (leader == nullptr) rc = -EBADF;
    // perf_event_open(): the group leader must lead (not be a sibling).
    else if (leader->leader != leader)
      rc = -EINVAL;
    else
      log.group_leader_open = leader->open_index;
  }
  const FakePmu* pmu = nullptr;
  if (rc == 0) rc = CheckOpen(*attr, pid, cpu, leader, &pmu);
  int fds[2] = {-1, -1};
  if (rc == 0 && pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) rc = -errno;
  if (rc < 0) {
    log.result = rc;
    opens_.push_back(log);
    return rc;
  }
  auto e = std::make_unique<Event>();
  e->fd = fds[0];
  e->wfd = fds[1];
  e->open_index = static_cast<int>(opens_.size());
  e->attr = *attr;
  e->pmu = pmu;
  e->pid = pid;
  e->cpu = cpu;
  e->id = next_id_++;
  e->cgroup = cgroup;
  e->period = attr->sample_period;
  if (leader != nullptr) {
    e->leader = leader;
    leader->siblings.push_back(e.get());
    // A sibling opened enabled runs with its leader.
    e->enabled = !attr->disabled;
  } else {
    e->leader = e.get();
    e->enabled = !attr->disabled;
  }
  log.result = e->fd;
  opens_.push_back(log);
  const int fd = e->fd;
  events_[fd] = std::move(e);
  max_open_fds_ = std::max(max_open_fds_, events_.size());
  return fd;
}

void* FakePerfKernel::Map(int fd, size_t bytes, int* err) {
  Sync();
  Event* e = Find(fd);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  if (e == nullptr) {
    *err = EBADF;
    return nullptr;
  }
  // perf_mmap(): one metadata page plus 2^n data pages; an event whose
  // output was redirected (SET_OUTPUT) or already mapped cannot map again.
  if (bytes < 2 * page || bytes % page != 0 ||
      !IsPowerOfTwo(bytes / page - 1) || e->ring != nullptr) {
    *err = EINVAL;
    return nullptr;
  }
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    *err = errno;
    return nullptr;
  }
  auto r = std::make_shared<Ring>();
  r->base = static_cast<uint8_t*>(mem);
  r->bytes = bytes;
  r->data_size = bytes - page;
  // perf_buffer's watermark (ring_buffer_init()): attr.wakeup_watermark
  // with attr.watermark, else half the buffer.
  r->watermark =
      (e->attr.watermark && e->attr.wakeup_watermark)
          ? std::min<uint64_t>(e->attr.wakeup_watermark, r->data_size)
          : r->data_size / 2;
  r->wakeup_events = e->attr.watermark ? 0 : e->attr.wakeup_events;
  perf_event_mmap_page* m = r->meta();
  m->version = 0;
  m->compat_version = 0;
  m->data_offset = page;
  m->data_size = r->data_size;
  r->members.push_back(e);
  e->ring = r;
  e->mapped = true;
  rings_.push_back(r);
  return mem;
}

void FakePerfKernel::Unmap(void* addr, size_t bytes) {
  for (auto it = rings_.begin(); it != rings_.end(); ++it) {
    if ((*it)->base == addr) {
      munmap(addr, bytes);
      (*it)->base = nullptr;
      for (Event* m : (*it)->members) m->ring.reset();
      rings_.erase(it);
      return;
    }
  }
}

int FakePerfKernel::Ioctl(int fd, unsigned long request, unsigned long arg) {
  Sync();
  Event* e = Find(fd);
  if (e == nullptr) return -EBADF;
  switch (request) {
    case PERF_EVENT_IOC_ID: {
      // perf_ioctl(): primary_event_id(), the parent's id for children.
      uint64_t id = e->id;
      std::memcpy(reinterpret_cast<void*>(arg), &id, sizeof(id));
      return 0;
    }
    case PERF_EVENT_IOC_ENABLE:
    case PERF_EVENT_IOC_DISABLE: {
      // _perf_ioctl(): with PERF_IOC_FLAG_GROUP, perf_event_for_each()
      // reaches the leader's siblings; either way each event's inherited
      // children follow (perf_event_for_each_child()).
      const bool on = request == PERF_EVENT_IOC_ENABLE;
      e->enabled = on;
      if (arg & PERF_IOC_FLAG_GROUP) {
        Event* l = e->leader;
        l->enabled = on;
        for (Event* s : l->siblings) s->enabled = on;
      }
      if (on && on_enable_) {
        std::function<void()> hook = on_enable_;
        hook();
      }
      return 0;
    }
    case PERF_EVENT_IOC_PERIOD: {
      uint64_t value = 0;
      std::memcpy(&value, reinterpret_cast<const void*>(arg), sizeof(value));
      // _perf_event_period() (kernel/events/core.c): sampling events only,
      // never 0, in frequency mode at most perf_event_max_sample_rate, a
      // period below bit 63; IBS checks its own granularity from 6.15
      // (perf_ibs_check_period()).
      if (e->attr.sample_period == 0 && !e->attr.freq) return -EINVAL;
      if (value == 0) return -EINVAL;
      if (e->attr.freq && value > config_.max_sample_rate) return -EINVAL;
      if (!e->attr.freq && (value >> 63) != 0) return -EINVAL;
      if (e->pmu != nullptr && e->pmu->ibs && config_.KernelAtLeast(6, 15) &&
          ((value & 0xf) != 0 || value < 0x90)) {
        return -EINVAL;
      }
      // _perf_event_period() -> event_function_call(event,
      // __perf_event_period): this event only. Inherited children keep
      // their period; children created from now on copy the new one.
      e->period = value;
      e->attr.sample_period = value;
      return 0;
    }
    case PERF_EVENT_IOC_SET_OUTPUT: {
      const int target = static_cast<int>(arg);
      if (target == -1) {
        if (!e->mapped) e->ring.reset();
        return 0;
      }
      Event* out = Find(target);
      if (out == nullptr) return -EBADF;
      // perf_event_set_output(): not to itself, the same CPU, for a
      // CPU-less (-1) output the same task, the same clock; and not from
      // an event that has its own mapping (EBUSY).
      if (out == e) return -EINVAL;
      if (out->cpu != e->cpu) return -EINVAL;
      if (out->cpu == -1 && out->pid != e->pid) return -EINVAL;
      if (out->attr.use_clockid != e->attr.use_clockid ||
          (e->attr.use_clockid && out->attr.clockid != e->attr.clockid)) {
        return -EINVAL;
      }
      if (e->mapped) return -EBUSY;
      if (out->ring == nullptr) return -EINVAL;
      e->ring = out->ring;
      e->ring->members.push_back(e);
      return 0;
    }
    default:
      return -ENOTTY;
  }
}

void FakePerfKernel::Close(int fd) {
  Sync();
  auto it = events_.find(fd);
  if (it == events_.end()) return;
  Event* e = it->second.get();
  if (e->leader != e) {
    auto& sib = e->leader->siblings;
    sib.erase(std::remove(sib.begin(), sib.end(), e), sib.end());
  }
  // perf_group_detach(): the siblings of a closed leader become singletons.
  for (Event* s : e->siblings) s->leader = s;
  if (e->ring) {
    auto& m = e->ring->members;
    m.erase(std::remove(m.begin(), m.end(), e), m.end());
  }
  close(e->fd);
  if (e->wfd >= 0) close(e->wfd);
  events_.erase(it);
}

void FakePerfKernel::AddTask(pid_t pid, pid_t tid) {
  tasks_[tid == 0 ? pid : tid] = pid;
  MirrorTask(pid, tid == 0 ? pid : tid);
}

void FakePerfKernel::MirrorTasksTo(FakeTree* tree) {
  tree_ = tree;
  for (const auto& [tid, pid] : tasks_) {
    if (exited_.count(tid) == 0) MirrorTask(pid, tid);
  }
}

void FakePerfKernel::MirrorTask(pid_t pid, pid_t tid) {
  if (tree_ == nullptr) return;
  tree_->Mkdir(absl::StrCat("/proc/", pid, "/task/", tid));
  if (tid != pid) return;
  // proc(5): "pid (comm) state ppid ..." and 22 fields at least (fields
  // 5-22 zero: pgrp .. starttime).
  std::string stat = absl::StrCat(pid, " (fake) S ", ppid_[pid]);
  for (int f = 5; f <= 22; ++f) absl::StrAppend(&stat, " 0");
  tree_->Write(absl::StrCat("/proc/", pid, "/stat"), stat + "\n");
}

void FakePerfKernel::SpawnProcess(pid_t parent_tid, pid_t pid) {
  auto parent = tasks_.find(parent_tid);
  ppid_[pid] = parent == tasks_.end() ? 1 : parent->second;
  SpawnThread(pid, parent_tid, pid);
}

void FakePerfKernel::SpawnThread(pid_t pid, pid_t parent_tid, pid_t tid) {
  tasks_[tid] = pid;
  MirrorTask(pid, tid);
  // perf_event_init_task() -> inherit_event(): each inherit event of the
  // parent (its own, or one it inherited) gets a child copying the parent
  // event's attr, sample_period included, as it is now.
  for (auto& [fd, e] : events_) {
    if (!e->attr.inherit || e->pid == -1) continue;
    if (e->pid == parent_tid || e->children.count(parent_tid) != 0)
      e->children[tid] = e->attr.sample_period;
  }
}

void FakePerfKernel::ExitTask(pid_t tid) {
  exited_.insert(tid);
  if (tree_ != nullptr) {
    const pid_t pid = tasks_.count(tid) ? tasks_[tid] : tid;
    tree_->Remove(absl::StrCat("/proc/", pid, "/task/", tid));
    bool live = false;  // the process goes with its last thread
    for (const auto& [t, p] : tasks_) live |= p == pid && !exited_.count(t);
    if (!live) {
      tree_->Remove(absl::StrCat("/proc/", pid, "/stat"));
      tree_->Remove(absl::StrCat("/proc/", pid, "/task"));
      tree_->Remove(absl::StrCat("/proc/", pid));
    }
  }
  for (auto& [fd, e] : events_) {
    if (e->pid == tid) e->task_exited = true;
    e->children.erase(tid);
    MaybeHangUp(*e);
  }
}

void FakePerfKernel::MaybeHangUp(Event& e) {
  // is_event_hup(): the event's task exited (PERF_EVENT_STATE_EXIT) and its
  // child_list is empty; perf_poll() then reports EPOLLHUP for good.
  if (e.task_exited && e.children.empty() && e.wfd >= 0) {
    close(e.wfd);
    e.wfd = -1;
  }
}

FakePerfKernel::Ring* FakePerfKernel::RingOf(Event& e) const {
  return e.ring.get();
}

void FakePerfKernel::Wake(Ring& ring) {
  if (ring.woken) return;
  ring.woken = true;
  for (Event* m : ring.members) {
    if (m->wfd >= 0) {
      const char b = 1;
      (void)!write(m->wfd, &b, 1);
    }
  }
}

void FakePerfKernel::Sync() {
  for (auto& r : rings_) {
    if (!r->woken || r->base == nullptr) continue;
    const uint64_t tail =
        __atomic_load_n(&r->meta()->data_tail, __ATOMIC_ACQUIRE);
    if (tail != r->meta()->data_head) continue;
    r->woken = false;
    for (Event* m : r->members) {
      char buf[64];
      while (read(m->fd, buf, sizeof(buf)) > 0) {
      }
    }
  }
}

void FakePerfKernel::AppendSampleId(const Event& e, pid_t pid, pid_t tid,
                                    int cpu, uint64_t time_ns,
                                    std::vector<uint8_t>* out) const {
  // __perf_event__output_id_sample(): TID, TIME, ID, STREAM_ID, CPU,
  // IDENTIFIER.
  if (!e.attr.sample_id_all) return;
  const uint64_t st = e.attr.sample_type;
  if (st & PERF_SAMPLE_TID)
    Put64(out, static_cast<uint32_t>(pid) |
                   (uint64_t{static_cast<uint32_t>(tid)} << 32));
  if (st & PERF_SAMPLE_TIME) Put64(out, time_ns);
  if (st & PERF_SAMPLE_ID) Put64(out, e.id);
  if (st & PERF_SAMPLE_STREAM_ID) Put64(out, e.id);
  if (st & PERF_SAMPLE_CPU) Put64(out, static_cast<uint32_t>(cpu));
  if (st & PERF_SAMPLE_IDENTIFIER) Put64(out, e.id);
}

bool FakePerfKernel::WriteRecord(Event& e, const std::vector<uint8_t>& rec) {
  Ring* r = RingOf(e);
  if (r == nullptr || r->base == nullptr) return false;  // no buffer: dropped
  perf_event_mmap_page* m = r->meta();
  std::vector<uint8_t> bytes;
  if (r->lost > 0) {
    // perf_output_begin(): records that did not fit are told first, as
    // PERF_RECORD_LOST {id, lost} with the sample_id trailer.
    std::vector<uint8_t> body;
    Put64(&body, e.id);
    Put64(&body, r->lost);
    AppendSampleId(e, e.pid < 0 ? 0 : e.pid, e.pid < 0 ? 0 : e.pid,
                   e.cpu < 0 ? 0 : e.cpu, 0, &body);
    perf_event_header h{PERF_RECORD_LOST, 0,
                        static_cast<uint16_t>(sizeof(h) + body.size())};
    bytes.resize(sizeof(h));
    std::memcpy(bytes.data(), &h, sizeof(h));
    bytes.insert(bytes.end(), body.begin(), body.end());
  }
  bytes.insert(bytes.end(), rec.begin(), rec.end());
  const uint64_t head = m->data_head;
  const uint64_t tail = __atomic_load_n(&m->data_tail, __ATOMIC_ACQUIRE);
  if (bytes.size() > r->data_size - (head - tail)) {
    ++r->lost;
    return false;
  }
  r->lost = 0;
  uint8_t* data = r->base + m->data_offset;
  const uint64_t mask = r->data_size - 1;
  for (size_t i = 0; i < bytes.size(); ++i) data[(head + i) & mask] = bytes[i];
  // Release: the record bytes before the head that publishes them (the
  // kernel's perf_output_put_handle(): smp_wmb() then the head store).
  __atomic_store_n(&m->data_head, head + bytes.size(), __ATOMIC_RELEASE);
  const uint64_t new_head = head + bytes.size();
  bool wake = new_head - r->wakeup_mark >= r->watermark;
  if (r->wakeup_events > 0 && ++r->events_since >= r->wakeup_events) {
    r->events_since = 0;
    wake = true;
  }
  if (wake) {
    r->wakeup_mark = new_head;
    Wake(*r);
  }
  return true;
}

void FakePerfKernel::WriteThrottle(Event& e, uint64_t time_ns,
                                   bool unthrottle) {
  // perf_log_throttle(): {time, id, stream_id} and the sample_id trailer.
  std::vector<uint8_t> body;
  Put64(&body, time_ns);
  Put64(&body, e.id);
  Put64(&body, e.id);
  AppendSampleId(e, e.pid < 0 ? 0 : e.pid, e.pid < 0 ? 0 : e.pid,
                 e.cpu < 0 ? 0 : e.cpu, time_ns, &body);
  perf_event_header h{static_cast<uint32_t>(unthrottle ? PERF_RECORD_UNTHROTTLE
                                                       : PERF_RECORD_THROTTLE),
                      0, static_cast<uint16_t>(sizeof(h) + body.size())};
  std::vector<uint8_t> rec(sizeof(h));
  std::memcpy(rec.data(), &h, sizeof(h));
  rec.insert(rec.end(), body.begin(), body.end());
  if (WriteRecord(e, rec) && !unthrottle) ++throttle_records_;
}

void FakePerfKernel::WriteSample(Event& e, const FakeAccess& a,
                                 uint64_t period) {
  const uint64_t st = e.attr.sample_type;
  const pid_t tid = a.tid == 0 ? a.pid : a.tid;
  const bool ibs = e.pmu != nullptr && e.pmu->ibs;
  const bool sw = e.pmu == nullptr;
  const bool aux = !sw && !ibs && (e.attr.config & kEventMask) == kMemLoadsAux;
  uint64_t addr = a.addr;
  uint64_t data_src = aux ? kMemNa : a.data_src;
  uint64_t weight = a.weight;
  if (sw) {
    data_src = kMemNa;  // perf_sample_data_init()
    weight = 0;
  }
  if (ibs && !config_.KernelAtLeast(6, 1)) {
    // Before 6.1 perf_ibs_handle_irq() sets neither data.addr nor
    // data_src nor the weight (perf_ibs_parse_ld_st_data() came with
    // "perf/x86/amd: Support PERF_SAMPLE_DATA_SRC", v6.1): the address is
    // only in the RAW register block, when RAW was asked for.
    addr = 0;
    data_src = kMemNa;
    weight = 0;
  }
  if (ibs && a.kind == FakeAccessKind::kStore) weight = 0;  // loads only
  std::vector<uint8_t> body;
  // perf_output_sample() order.
  if (st & PERF_SAMPLE_IDENTIFIER) Put64(&body, e.id);
  if (st & PERF_SAMPLE_IP) Put64(&body, a.ip);
  if (st & PERF_SAMPLE_TID)
    Put64(&body, static_cast<uint32_t>(a.pid) |
                     (uint64_t{static_cast<uint32_t>(tid)} << 32));
  if (st & PERF_SAMPLE_TIME) Put64(&body, a.time_ns);
  if (st & PERF_SAMPLE_ADDR) Put64(&body, addr);
  if (st & PERF_SAMPLE_ID) Put64(&body, e.id);
  if (st & PERF_SAMPLE_STREAM_ID) Put64(&body, e.id);
  if (st & PERF_SAMPLE_CPU) Put64(&body, static_cast<uint32_t>(a.cpu));
  if (st & PERF_SAMPLE_PERIOD) Put64(&body, period);
  if (st & PERF_SAMPLE_RAW) {
    // {u32 size; data[size]}, size chosen so that the record stays 8-byte
    // aligned (perf_prepare_sample() pads). IBS: caps + the op registers.
    std::vector<uint8_t> raw;
    if (ibs) {
      Put32(&raw, kIbsCaps);
      uint64_t regs[kIbsOpRegs] = {};
      regs[1] = a.ip;
      uint64_t d3 = kIbsDcLinAddrValid;
      d3 |= a.kind == FakeAccessKind::kStore ? kIbsStOp : kIbsLdOp;
      if (a.kind != FakeAccessKind::kStore && a.weight > 0) {
        d3 |= kIbsDcMiss | (uint64_t{std::min<uint32_t>(a.weight, 0xffff)}
                            << kIbsDcMissLatShift);
      }
      regs[4] = d3;
      regs[5] = a.addr;
      for (uint64_t r : regs) Put64(&raw, r);
    } else {
      Put32(&raw, 0);
    }
    Put32(&body, static_cast<uint32_t>(raw.size()));
    body.insert(body.end(), raw.begin(), raw.end());
  }
  if (st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
    Put64(&body, weight);
  if (st & PERF_SAMPLE_DATA_SRC) Put64(&body, data_src);
  if (st & PERF_SAMPLE_PHYS_ADDR) Put64(&body, 0);
  perf_event_header h{PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER,
                      static_cast<uint16_t>(sizeof(h) + body.size())};
  std::vector<uint8_t> rec(sizeof(h));
  std::memcpy(rec.data(), &h, sizeof(h));
  rec.insert(rec.end(), body.begin(), body.end());
  if (WriteRecord(e, rec)) ++samples_written_;
}

bool FakePerfKernel::Sees(const Event& e, const FakeAccess& a,
                          uint64_t* period) const {
  if (!e.enabled || !e.leader->enabled) return false;
  if (e.cgroup) return false;
  if (e.attr.exclude_user) return false;  // the script is user code
  if (e.cpu != -1 && e.cpu != a.cpu) return false;
  const pid_t tid = a.tid == 0 ? a.pid : a.tid;
  if (exited_.count(tid) != 0) return false;
  *period = e.period;
  if (e.pid != -1) {
    if (e.pid == tid) {
      if (e.task_exited) return false;
    } else {
      auto it = e.children.find(tid);
      if (it == e.children.end()) return false;
      *period = it->second;
    }
  }
  if (e.pmu == nullptr) {  // software
    return e.attr.config == PERF_COUNT_SW_PAGE_FAULTS && a.page_fault;
  }
  if (e.pmu->ibs) return a.kind != FakeAccessKind::kStoreForwardBlock;
  const uint64_t code = e.attr.config & kEventMask;
  switch (a.kind) {
    case FakeAccessKind::kLoad:
      return code == kMemLoads || code == kMemLoadsAtom;
    case FakeAccessKind::kStore:
      return code == kMemStoresHsw || code == kMemStoresSpr ||
             code == kMemStoresAtom;
    case FakeAccessKind::kStoreForwardBlock:
      return code == kMemLoadsAux;
  }
  return false;
}

int FakePerfKernel::Deliver(const FakeAccess& a) {
  Sync();
  int n = 0;
  // max_samples_per_tick = DIV_ROUND_UP(perf_event_max_sample_rate, HZ)
  // (update_perf_cpu_limits()).
  const uint64_t hz = static_cast<uint64_t>(config_.hz);
  const uint64_t max_per_tick = (config_.max_sample_rate + hz - 1) / hz;
  const uint64_t tick = a.time_ns / (1000000000ull / hz);
  for (auto& [fd, ep] : events_) {
    Event& e = *ep;
    uint64_t period = 0;
    if (!Sees(e, a, &period)) continue;
    // perf_swevent_event() (kernel/events/core.c): a software event that
    // samples PERIOD (not in frequency mode) takes every occurrence as a
    // sample of period nr (1 here), whatever its sample_period.
    if (e.pmu == nullptr && (e.attr.sample_type & PERF_SAMPLE_PERIOD) &&
        !e.attr.freq) {
      period = 1;
    }
    if (e.tick != tick) {
      // perf_adjust_freq_unthr_context() at the tick: a throttled event
      // restarts and says so (PERF_RECORD_UNTHROTTLE).
      if (e.throttled) WriteThrottle(e, a.time_ns, /*unthrottle=*/true);
      e.throttled = false;
      e.interrupts = 0;
      e.tick = tick;
    }
    if (e.throttled) continue;  // stopped until the next tick
    WriteSample(e, a, period);
    ++n;
    // __perf_event_account_interrupt(): past max_samples_per_tick in one
    // tick the event is throttled (PERF_RECORD_THROTTLE) and stopped; the
    // sample that crossed the limit was still written.
    if (++e.interrupts > max_per_tick) {
      e.throttled = true;
      WriteThrottle(e, a.time_ns, /*unthrottle=*/false);
    }
  }
  return n;
}

int FakePerfKernel::DeliverAll(const std::vector<FakeAccess>& accesses) {
  int n = 0;
  for (const FakeAccess& a : accesses) n += Deliver(a);
  return n;
}

bool FakePerfKernel::all_enabled() const {
  for (const auto& [fd, e] : events_) {
    if (!e->enabled || !e->leader->enabled) return false;
  }
  return true;
}

uint64_t FakePerfKernel::PeriodFor(int fd, pid_t tid) const {
  const Event* e = Find(fd);
  if (e == nullptr) return 0;
  auto it = e->children.find(tid);
  return it == e->children.end() ? e->period : it->second;
}

std::vector<std::string> FakePerfKernel::DescribeOpens() const {
  std::vector<std::string> out;
  for (const FakeOpen& o : opens_) {
    if (o.result < 0) continue;
    std::string s = absl::StrFormat("%s type=%u config=%#x pid=%d cpu=%d",
                                    o.pmu, o.type, o.config, o.pid, o.cpu);
    if (o.group_leader_open >= 0)
      absl::StrAppend(&s, " leader=", o.group_leader_open);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace hotpage
