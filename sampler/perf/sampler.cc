#include "sampler/perf/sampler.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <iterator>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "tools/base/kernel/proc_stat.h"
#include "tools/base/parse.h"
#include "tools/base/status_macros.h"

namespace hotpage {

absl::StatusOr<std::vector<pid_t>> ListThreads(const KernelFs& fs, pid_t pid) {
  HOTPAGE_ASSIGN_OR_RETURN(std::vector<std::string> names,
                           fs.ListDir(absl::StrCat("/proc/", pid, "/task")));
  std::vector<pid_t> out;
  for (const std::string& n : names) {
    int tid = 0;
    if (absl::SimpleAtoi(n, &tid) && tid > 0) out.push_back(tid);
  }
  std::sort(out.begin(), out.end());
  if (out.empty())
    return absl::NotFoundError(absl::StrCat("pid ", pid, " has no threads"));
  return out;
}

void IncludeExistingThreads(const KernelFs& fs, SamplerConfig* config) {
  if (absl::StatusOr<std::string> rel =
          fs.ReadTrimmed("/proc/sys/kernel/osrelease");
      rel.ok()) {
    config->kernel_version = ParseKernelRelease(*rel);
  }
  const SamplerAvailability a = ProbeAvailability(fs);
  config->system_wide_permitted =
      a.cap_perfmon || (a.paranoid.has_value() && *a.paranoid <= 0);
  if (config->all || config->system_wide) return;
  config->threads.clear();
  for (pid_t p : config->pids) {
    absl::StatusOr<std::vector<pid_t>> tids = ListThreads(fs, p);
    if (tids.ok()) {
      config->threads.insert(config->threads.end(), tids->begin(), tids->end());
    } else {
      config->threads.push_back(p);
    }
  }
}

void SizeRingsForFaultBursts(SamplerConfig* config) {
  config->ring_data_pages = 512;
  config->budget_bytes_per_ring = size_t{2} << 20;
}

namespace {

// One perf group of the plan: event indices (leader first) and the CPUs it
// opens on.
struct PlanGroup {
  std::vector<size_t> members;
  std::vector<int> cpus;
};

bool CpuIn(const std::vector<int>& cpus, int cpu) {
  return cpus.empty() || std::find(cpus.begin(), cpus.end(), cpu) != cpus.end();
}

// Groups by EventSpec::group when grouped (leader: the first event of that
// id), else one group per event. A group opens on the sampled CPUs that
// every member may use.
std::vector<PlanGroup> PlanGroups(const SamplerConfig& c) {
  const std::vector<EventSpec>& ev = c.events.events;
  std::vector<PlanGroup> out;
  std::vector<int> ids;
  for (size_t i = 0; i < ev.size(); ++i) {
    size_t g = out.size();
    if (c.events.grouped) {
      g = std::find(ids.begin(), ids.end(), ev[i].group) - ids.begin();
    }
    if (g == out.size()) {
      out.emplace_back();
      ids.push_back(ev[i].group);
    }
    out[g].members.push_back(i);
  }
  for (PlanGroup& g : out) {
    for (int cpu : c.cpus) {
      bool ok = true;
      for (size_t i : g.members) ok &= CpuIn(ev[i].cpus, cpu);
      if (ok) g.cpus.push_back(cpu);
    }
  }
  return out;
}

bool IsListedThread(const SamplerConfig& c, pid_t pid) {
  return !c.threads.empty() &&
         std::find(c.pids.begin(), c.pids.end(), pid) == c.pids.end();
}

// "0-7,16,18-19".
std::string CpuRanges(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    absl::StrAppend(&out, out.empty() ? "" : ",", cpus[i]);
    if (j > i) absl::StrAppend(&out, "-", cpus[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace

size_t DescriptorsNeeded(const SamplerConfig& config, bool system_wide) {
  const size_t tasks = system_wide              ? 1
                       : config.threads.empty() ? config.pids.size()
                                                : config.threads.size();
  size_t per_task = 0;
  for (const PlanGroup& g : PlanGroups(config))
    per_task += g.cpus.size() * g.members.size();
  return tasks * per_task;
}

absl::StatusOr<std::vector<int>> OnlineCpus(const KernelFs& fs) {
  HOTPAGE_ASSIGN_OR_RETURN(std::vector<int> cpus,
                           fs.ReadList("/sys/devices/system/cpu/online"));
  if (cpus.empty()) return absl::InternalError("no online CPU");
  return cpus;
}

std::string ExplainOpenError(int err, const EventSpec& spec, bool system_wide) {
  std::string base =
      absl::StrCat("perf_event_open ", spec.name, ": ", ErrnoName(err), " (",
                   std::strerror(err), ")");
  switch (err) {
    case EACCES:
    case EPERM:
      return absl::StrCat(
          base,
          system_wide
              ? ". System-wide sampling needs CAP_PERFMON (or root) or "
                "kernel.perf_event_paranoid <= 0"
              : ". Sampling another process needs CAP_PERFMON or ptrace "
                "access to it, and kernel.perf_event_paranoid <= 2",
          // An event that counts kernel mode needs paranoid <= 1
          // (perf_allow_kernel() in include/linux/perf_event.h); IBS can
          // exclude it only with swfilt (perf_ibs_init(), Linux 6.14+).
          !system_wide && !spec.attr.exclude_kernel
              ? " (<= 1 for this event: it samples kernel mode too, e.g. "
                "IBS without swfilt)"
              : "");
    case ENODATA:
      return absl::StrCat(
          base,
          ". This CPU requires mem-loads in a group led by mem-loads-aux; "
          "the kernel did not accept the group");
    case ENOENT:
      // On hybrid Intel each core PMU exists only on its own CPUs:
      // x86_pmu_event_init() (arch/x86/events/core.c) answers ENOENT for
      // an event whose cpu is not in the PMU's supported_cpus.
      if (absl::StartsWith(spec.pmu, "cpu_")) {
        return absl::StrCat(
            base, ". The ", spec.pmu, " PMU of this hybrid CPU exists only on ",
            spec.cpus.empty() ? std::string("some CPUs")
                              : absl::StrCat("CPUs ", CpuRanges(spec.cpus)),
            " (/sys/bus/event_source/devices/", spec.pmu,
            "/cpus); the kernel refuses its events on the others");
      }
      return absl::StrCat(
          base,
          ". The kernel or CPU does not support this event (no PMU driver, "
          "or a VM without a virtual PMU); try --source pagefault");
    case EOPNOTSUPP:
      // x86_pmu_hw_config() (arch/x86/events/core.c): precise_ip above
      // x86_pmu_max_precise() is EOPNOTSUPP; Sampler lowers it down to 1
      // first (like perf's evsel__precise_ip_fallback()).
      return absl::StrCat(
          base, ". The PMU cannot sample this event as asked (precise_ip ",
          static_cast<int>(spec.attr.precise_ip),
          " and lower were refused, or the CPU lacks PEBS/IBS for it); try "
          "--source pagefault");
    case ENODEV:
      return absl::StrCat(
          base,
          ". The kernel or CPU does not support this event (no PMU driver, "
          "or a VM without a virtual PMU); try --source pagefault");
    case EINVAL:
      return absl::StrCat(
          base, ". The kernel rejected the event configuration: ",
          spec.source == SampleSource::kIbsOp
              ? "for IBS, exclude_* bits without swfilt, a period with "
                "its low 4 bits set or under 0x90, or per-task IBS before "
                "Linux 6.2"
          : spec.source == SampleSource::kPebsLoad ||
                  spec.source == SampleSource::kPebsStore
              ? "for PEBS, PERF_SAMPLE_WEIGHT_STRUCT needs Linux 5.12+, "
                "ldlat must be at most 65535 (the LDLAT extra register's "
                "mask), or the PMU has no PEBS for this event"
              : "a sample_type bit or flag this kernel does not know "
                "(an older kernel)");
    case EMFILE:
    case ENFILE:
      return absl::StrCat(
          base,
          ". Out of file descriptors: raise RLIMIT_NOFILE (ulimit -n) or "
          "sample fewer processes");
    case ESRCH:
      return absl::StrCat(base,
                          ". The target process does not exist (any more)");
    case EBUSY:
      return absl::StrCat(base, ". The PMU is in use by another tool");
    default:
      return base;
  }
}

Sampler::Sampler(SamplerConfig config, PerfEventSystem* sys)
    : config_(std::move(config)),
      sys_(sys),
      filter_(PidFilter::All()),
      batch_(new Sample[kBatch]) {}

Sampler::~Sampler() { CloseAll(); }

void Sampler::CloseAll() {
  for (Ring& r : rings_) {
    if (r.base != nullptr && !r.closed) sys_->Unmap(r.base, r.bytes);
  }
  rings_.clear();
  for (const OpenEvent& e : events_) sys_->Close(e.fd);
  events_.clear();
  if (epoll_fd_ >= 0) close(epoll_fd_);
  epoll_fd_ = -1;
}

absl::StatusOr<std::unique_ptr<Sampler>> Sampler::Open(SamplerConfig config,
                                                       PerfEventSystem* sys) {
  if (config.events.events.empty())
    return absl::InvalidArgumentError("no events to open");
  if (config.cpus.empty())
    return absl::InvalidArgumentError("no CPUs to sample");
  if (!config.all && config.pids.empty()) {
    return absl::InvalidArgumentError(
        "no target: give --pid PID (repeatable) or --all");
  }
  const size_t pages = config.ring_data_pages;
  if (pages == 0 || (pages & (pages - 1)) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("ring size ", pages, " pages is not a power of two"));
  }
  std::unique_ptr<Sampler> s(new Sampler(std::move(config), sys));
  HOTPAGE_RETURN_IF_ERROR(s->OpenAll());
  return s;
}

absl::Status Sampler::OpenAll() {
  const std::vector<EventSpec>& specs = config_.events.events;
  bool ibs = false;
  for (const EventSpec& e : specs) ibs |= e.source == SampleSource::kIbsOp;
  system_wide_ = config_.all || config_.system_wide;
  if (config_.all) {
    reason_ = "--all: every process is sampled";
  } else if (config_.system_wide) {
    reason_ = "system-wide rings requested";
  } else if (ibs && (!config_.kernel_version ||
                     *config_.kernel_version < std::make_pair(6, 2))) {
    // Per-task IBS: perf_ibs_op.pmu.task_ctx_nr is perf_invalid_context
    // before Linux 6.2 (per-task open is EINVAL) and perf_hw_context from
    // 6.2 on (arch/x86/events/amd/ibs.c).
    system_wide_ = true;
    reason_ = config_.kernel_version
                  ? absl::StrCat(
                        "IBS has no per-task mode before Linux 6.2 "
                        "(this kernel is ",
                        config_.kernel_version->first, ".",
                        config_.kernel_version->second, ")")
                  : "IBS has no per-task mode before Linux 6.2 and the "
                    "kernel version is unknown";
  }

  // Descriptors: the plan's events plus the epoll descriptor.
  static LinuxFdLimits* const kLinuxLimits = new LinuxFdLimits;
  FdLimits* limits = config_.fd_limits ? config_.fd_limits : kLinuxLimits;
  descriptors_needed_ = DescriptorsNeeded(config_, system_wide_) + 1;
  absl::StatusOr<uint64_t> fit = EnsureDescriptors(descriptors_needed_, limits);
  if (!fit.ok() && absl::IsResourceExhausted(fit.status()) && !system_wide_) {
    if (config_.system_wide_permitted) {
      system_wide_ = true;
      reason_ =
          absl::StrCat("per-task sampling needs ", descriptors_needed_,
                       " file descriptors, over the RLIMIT_NOFILE hard limit; "
                       "system-wide rings with the pid filter need fewer");
      descriptors_needed_ = DescriptorsNeeded(config_, true) + 1;
      fit = EnsureDescriptors(descriptors_needed_, limits);
    } else {
      return absl::ResourceExhaustedError(absl::StrCat(
          fit.status().message(),
          "; or let hotpage sample system-wide with a pid filter (needs ",
          DescriptorsNeeded(config_, true) + 1,
          " descriptors, and CAP_PERFMON or perf_event_paranoid <= 0)"));
    }
  }
  if (!fit.ok()) return fit.status();

  if (!config_.all) {
    filter_ = PidFilter(
        std::vector<uint32_t>(config_.pids.begin(), config_.pids.end()));
  }
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) return ErrnoStatus(errno, "epoll_create1");

  precise_ip_.clear();
  for (const EventSpec& e : specs) precise_ip_.push_back(e.attr.precise_ip);
  const std::vector<pid_t> targets = system_wide_ ? std::vector<pid_t>{-1}
                                     : config_.threads.empty()
                                         ? config_.pids
                                         : config_.threads;
  HOTPAGE_RETURN_IF_ERROR(OpenTasks(targets));
  FinishRings();
  if (rings_.empty()) {
    return absl::InvalidArgumentError(
        "no event may open on any sampled CPU (every event's CPU list "
        "misses the CPUs to sample)");
  }
  drain_limit_.assign(rings_.size(), 0);
  scanned_to_.assign(rings_.size(), 0);
  exit_barrier_.assign(rings_.size(), 0);

  if (config_.cpu_budget > 0) {
    uint64_t base = specs.back().attr.sample_period;
    std::function<uint64_t(uint64_t)> norm;
    if (ibs) {
      norm = [](uint64_t p) {
        p &= ~uint64_t{0xf};
        return p < 0x90 ? uint64_t{0x90} : p;
      };
    }
    controller_.emplace(base, config_.max_period, config_.cpu_budget,
                        std::move(norm));
    stale_lo_ = stale_hi_ = controller_->period();
  }
  return absl::OkStatus();
}

int Sampler::OpenOne(size_t spec_index, perf_event_attr* attr, pid_t pid,
                     int cpu, int group_fd) {
  for (;;) {
    const int fd = sys_->Open(attr, pid, cpu, group_fd, 0);
    // x86_pmu_hw_config() (arch/x86/events/core.c) answers EOPNOTSUPP for
    // precise_ip above x86_pmu_max_precise(). Like perf
    // (evsel__precise_ip_fallback() in tools/perf/util/evsel.c), lower it
    // one step at a time; unlike perf, stop at 1: at 0 a PEBS event is a
    // plain counter whose samples carry no data address.
    if (fd != -EOPNOTSUPP || attr->precise_ip <= 1) return fd;
    const int from = attr->precise_ip;
    attr->precise_ip = from - 1;
    precise_ip_[spec_index] = attr->precise_ip;
    precise_fallbacks_.push_back(
        absl::StrCat(config_.events.events[spec_index].name, ": precise_ip ",
                     from, " -> ", from - 1));
  }
}

absl::Status Sampler::OpenTasks(const std::vector<pid_t>& tasks) {
  for (int cpu : config_.cpus)
    HOTPAGE_RETURN_IF_ERROR(OpenTasksOnCpu(cpu, tasks));
  return absl::OkStatus();
}

absl::Status Sampler::OpenTasksOnCpu(int cpu, const std::vector<pid_t>& tasks) {
  const std::vector<EventSpec>& specs = config_.events.events;
  std::vector<PlanGroup> groups = PlanGroups(config_);
  groups.erase(std::remove_if(groups.begin(), groups.end(),
                              [&](const PlanGroup& g) {
                                return !CpuIn(g.cpus, cpu) || g.cpus.empty();
                              }),
               groups.end());
  if (groups.empty()) return absl::OkStatus();  // no event for this CPU

  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t data_bytes = config_.ring_data_pages * page;
  const size_t wakeup =
      config_.wakeup_bytes ? config_.wakeup_bytes : data_bytes / 4;
  size_t ring_index = 0;
  while (ring_index < rings_.size() && rings_[ring_index].cpu != cpu)
    ++ring_index;
  if (ring_index == rings_.size()) {
    rings_.emplace_back();
    rings_.back().cpu = cpu;
  }
  struct Opened {
    int fd;
    size_t spec;
    perf_event_attr attr;
    bool leader;
  };
  for (pid_t pid : tasks) {
    // Every group of this task on this CPU first: a listed thread that
    // exited meanwhile (ESRCH, at any member) is skipped whole.
    std::vector<Opened> opened;
    bool gone = false;
    for (const PlanGroup& g : groups) {
      int leader = -1;
      for (size_t k = 0; k < g.members.size() && !gone; ++k) {
        const size_t si = g.members[k];
        const EventSpec& spec = specs[si];
        perf_event_attr attr = spec.attr;
        attr.precise_ip = precise_ip_[si];
        attr.inherit = system_wide_ ? 0 : 1;
        attr.watermark = 1;
        attr.wakeup_watermark = static_cast<uint32_t>(wakeup);
        // FORK and EXIT records let the filter follow the targets in
        // system-wide mode: one event per CPU asks for them.
        attr.task = (system_wide_ && !config_.all &&
                     rings_[ring_index].base == nullptr && opened.empty())
                        ? 1
                        : 0;
        const bool in_group = k > 0;      // one-member groups when ungrouped
        if (in_group) attr.disabled = 0;  // enabled with its leader
        const int fd = OpenOne(si, &attr, pid, cpu, in_group ? leader : -1);
        if (fd == -ESRCH && (reopening_ || IsListedThread(config_, pid))) {
          gone = true;  // a listed thread exited meanwhile
          break;
        }
        if (fd < 0) {
          for (const Opened& o : opened) sys_->Close(o.fd);
          std::string who =
              pid < 0 ? "all processes" : absl::StrCat("pid ", pid);
          return absl::Status(
              ErrnoStatus(-fd, "").code(),
              absl::StrCat(ExplainOpenError(-fd, spec, system_wide_), " [cpu ",
                           cpu, ", ", who, "]"));
        }
        opened.push_back({fd, si, attr, k == 0});
        if (k == 0) leader = fd;
      }
      if (gone) break;
    }
    if (gone) {
      for (const Opened& o : opened) sys_->Close(o.fd);
      continue;
    }
    Ring& ring = rings_[ring_index];
    for (const Opened& o : opened) {
      const EventSpec& spec = specs[o.spec];
      events_.push_back({o.fd, pid, ring_index, o.leader, spec.sampling});
      uint64_t id = 0;
      if (int rc = sys_->Ioctl(o.fd, PERF_EVENT_IOC_ID,
                               reinterpret_cast<unsigned long>(&id));
          rc < 0) {
        return ErrnoStatus(-rc, absl::StrCat("PERF_EVENT_IOC_ID ", spec.name));
      }
      // Events that produce samples matter to the decoder, and so do
      // sampling events whose records are dropped (keep_samples false):
      // the reader must recognise them by id.
      if (spec.sampling || !spec.keep_samples) {
        RingEvent ev;
        ev.id = id;
        ev.layout = PerfEventLayout::FromAttr(o.attr, spec.source);
        ev.keep = spec.keep_samples;
        ring.decoders.push_back(ev);
        ring.all_kept &= spec.keep_samples;
      }
      if (ring.base == nullptr) {
        ring.poll_fd = o.fd;
        ring.bytes = page + data_bytes;
        int err = 0;
        ring.base = sys_->Map(o.fd, ring.bytes, &err);
        if (ring.base == nullptr) {
          return ErrnoStatus(
              err, absl::StrCat("mmap of the ", ring.bytes,
                                "-byte ring on cpu ", cpu,
                                err == EPERM ? " (over the perf_event_mlock_kb "
                                               "limit; use a smaller ring)"
                                             : ""));
        }
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u32 = static_cast<uint32_t>(ring_index);
        if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, o.fd, &ev) < 0) {
          return ErrnoStatus(errno, "epoll_ctl");
        }
      } else if (int rc = sys_->Ioctl(o.fd, PERF_EVENT_IOC_SET_OUTPUT,
                                      static_cast<unsigned long>(ring.poll_fd));
                 rc < 0) {
        return ErrnoStatus(
            -rc, absl::StrCat("PERF_EVENT_IOC_SET_OUTPUT on cpu ", cpu));
      }
    }
  }
  if (rings_[ring_index].base == nullptr) {  // every task gone before it opened
    rings_.erase(rings_.begin() + static_cast<ptrdiff_t>(ring_index));
  }
  return absl::OkStatus();
}

void Sampler::FinishRings() {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  for (Ring& ring : rings_) {
    if (ring.reader != nullptr) continue;
    std::vector<RingEvent> decoders = std::move(ring.decoders);
    ring.decoders.clear();
    // One layout for every event, all kept: a single decoder needs no id.
    bool same_layout = ring.all_kept;
    for (const RingEvent& e : decoders) {
      same_layout &= e.layout.source == decoders[0].layout.source &&
                     e.layout.sample_type == decoders[0].layout.sample_type;
    }
    if (same_layout && !decoders.empty()) decoders.resize(1);
    // Per-task events are restricted by the kernel to the targets and
    // everything they spawn (inherit): no filter. System-wide rings see
    // every process: filter unless --all.
    ring.reader = std::make_unique<RingReader>(
        ring.base, page, ring.bytes - page, std::move(decoders),
        (config_.all || !system_wide_) ? nullptr : &filter_);
  }
}

absl::Status Sampler::SetGroupsEnabled(const std::vector<OpenEvent>& events,
                                       bool on) {
  for (const OpenEvent& e : events) {
    if (!e.leader) continue;
    if (int rc = sys_->Ioctl(
            e.fd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE,
            PERF_IOC_FLAG_GROUP);
        rc < 0) {
      return ErrnoStatus(
          -rc, on ? "PERF_EVENT_IOC_ENABLE" : "PERF_EVENT_IOC_DISABLE");
    }
  }
  return absl::OkStatus();
}

absl::Status Sampler::Enable() {
  HOTPAGE_RETURN_IF_ERROR(SetGroupsEnabled(events_, true));
  enabled_ = true;
  return absl::OkStatus();
}

absl::Status Sampler::Disable() {
  enabled_ = false;
  return SetGroupsEnabled(events_, false);
}

size_t Sampler::HandleHangup(size_t index, const SampleSink& sink) {
  if (index >= rings_.size() || rings_[index].closed) return 0;
  Ring& ring = rings_[index];
  pid_t task = -2;
  for (const OpenEvent& e : events_) {
    if (e.fd == ring.poll_fd) task = e.pid;
  }
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, ring.poll_fd, nullptr);
  // Every event of that task on this ring is gone with it (group members
  // too). The mapping keeps the ring alive for the other tasks' events.
  size_t kept = 0;
  for (const OpenEvent& e : events_) {
    if (e.ring == index && e.pid == task) {
      sys_->Close(e.fd);
    } else {
      events_[kept++] = e;
    }
  }
  events_.resize(kept);
  ++tasks_exited_;
  ring.poll_fd = -1;
  for (const OpenEvent& e : events_) {
    if (e.ring != index) continue;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = static_cast<uint32_t>(index);
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, e.fd, &ev) == 0) {
      ring.poll_fd = e.fd;
      return 0;
    }
  }
  // No task writes into this ring any more: a last drain, then unmap.
  size_t delivered = 0;
  for (;;) {
    const size_t n = ring.reader->Drain(batch_.get(), kBatch, SIZE_MAX);
    if (n > 0) sink(absl::MakeConstSpan(batch_.get(), n));
    delivered += n;
    if (ring.reader->Pending() == 0) break;
  }
  kept = 0;
  for (const OpenEvent& e : events_) {
    if (e.ring == index) {
      sys_->Close(e.fd);  // only if epoll refused it above
    } else {
      events_[kept++] = e;
    }
  }
  events_.resize(kept);
  sys_->Unmap(ring.base, ring.bytes);
  ring.closed = true;
  ++rings_closed_;
  return delivered;
}

namespace {

// Copies `n` bytes at ring position `pos` (which may wrap) into `out`.
void CopyOut(const uint8_t* data, uint64_t mask, uint64_t pos, void* out,
             size_t n) {
  uint8_t* o = static_cast<uint8_t*>(out);
  for (size_t i = 0; i < n; ++i) o[i] = data[(pos + i) & mask];
}

uint64_t AcquireHead(void* base) {
  // Acquire: pairs with the kernel's store of data_head after the records
  // (the protocol in ring_reader.h).
  return __atomic_load_n(&static_cast<perf_event_mmap_page*>(base)->data_head,
                         __ATOMIC_ACQUIRE);
}

}  // namespace

void Sampler::ScanTaskRecords() {
  bool new_exit = false;
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  for (size_t i = 0; i < rings_.size(); ++i) {
    Ring& ring = rings_[i];
    if (ring.closed) continue;
    auto* meta = static_cast<perf_event_mmap_page*>(ring.base);
    const uint64_t head = AcquireHead(ring.base);
    const uint64_t offset = meta->data_offset ? meta->data_offset : page;
    const uint64_t size = meta->data_size ? meta->data_size : ring.bytes - page;
    const uint8_t* data = static_cast<const uint8_t*>(ring.base) + offset;
    const uint64_t mask = size - 1;
    // data_tail is written only by this thread (the reader).
    uint64_t pos = std::max<uint64_t>(scanned_to_[i], meta->data_tail);
    while (pos < head) {
      perf_event_header hdr;
      CopyOut(data, mask, pos, &hdr, sizeof(hdr));
      if (hdr.size < sizeof(hdr) || hdr.size > head - pos) break;  // corrupt
      if ((hdr.type == PERF_RECORD_FORK || hdr.type == PERF_RECORD_EXIT) &&
          hdr.size >= sizeof(hdr) + 16) {
        // {u32 pid, ppid, tid, ptid; u64 time; sample_id}: pid == tid is a
        // process (its leader), not one more thread.
        uint32_t f[4];
        CopyOut(data, mask, pos + sizeof(hdr), f, sizeof(f));
        if (f[0] == f[2] && hdr.type == PERF_RECORD_FORK) {
          if (filter_.OnFork(f[1], f[0])) ++forks_followed_;
          // A pid reused by a child of a target is a target again: keep it
          // (a child of any other process stays due for removal).
          if (filter_.Accepts(f[1])) {
            size_t kept = 0;
            for (size_t k = 0; k < num_pending_exits_; ++k) {
              if (pending_exits_[k] != f[0])
                pending_exits_[kept++] = pending_exits_[k];
            }
            num_pending_exits_ = kept;
          }
        } else if (f[0] == f[2] && filter_.Accepts(f[0]) &&
                   num_pending_exits_ < kMaxPendingExits &&
                   std::find(pending_exits_,
                             pending_exits_ + num_pending_exits_,
                             f[0]) == pending_exits_ + num_pending_exits_) {
          pending_exits_[num_pending_exits_++] = f[0];
          new_exit = true;
        }
      }
      pos += hdr.size;
    }
    scanned_to_[i] = pos;
  }
  if (new_exit) {
    // Heads read after the EXIT records were seen: every sample of those
    // processes was written before them.
    for (size_t i = 0; i < rings_.size(); ++i) {
      if (!rings_[i].closed) exit_barrier_[i] = AcquireHead(rings_[i].base);
    }
  }
}

size_t Sampler::DrainRound(const SampleSink& sink, size_t budget, bool* more) {
  size_t total = 0;
  *more = false;
  const bool filtering = system_wide_ && !config_.all;
  if (filtering) {
    // Heads first, then the FORK/EXIT scan up to later heads: every sample
    // drained below drain_limit_ belongs to a process whose FORK record
    // was written before it, so the scan has seen it (see the header).
    for (size_t i = 0; i < rings_.size(); ++i) {
      if (!rings_[i].closed) drain_limit_[i] = AcquireHead(rings_[i].base);
    }
    ScanTaskRecords();
  }
  for (size_t i = 0; i < rings_.size(); ++i) {
    Ring& r = rings_[i];
    if (r.closed) continue;
    // Batches of kBatch samples until the ring's byte budget is used or the
    // ring is empty: one batch per ring per Poll capped a burst (a kernel
    // scan pass makes thousands of hint faults at once) at 1024 samples per
    // Poll, and a caller that polls once per second lost the rest to the
    // ring's overflow.
    size_t left = budget;
    if (filtering) {
      // Drain() stops at the first record boundary at or past its budget,
      // and drain_limit_ is one.
      const uint64_t tail = r.reader->consumed_bytes();
      left = drain_limit_[i] > tail ? static_cast<size_t>(std::min<uint64_t>(
                                          left, drain_limit_[i] - tail))
                                    : 0;
    }
    while (left > 0) {
      const uint64_t before = r.reader->consumed_bytes();
      const size_t n = r.reader->Drain(batch_.get(), kBatch, left);
      if (n > 0) {
        sink(absl::MakeConstSpan(batch_.get(), n));
        total += n;
      }
      const uint64_t used = r.reader->consumed_bytes() - before;
      if (n < kBatch || used == 0 || used >= left) break;
      left -= used;
    }
    if (r.reader->Pending() > 0) *more = true;
  }
  if (filtering && num_pending_exits_ > 0) {
    bool passed = true;
    for (size_t i = 0; i < rings_.size(); ++i) {
      if (!rings_[i].closed)
        passed &= rings_[i].reader->consumed_bytes() >= exit_barrier_[i];
    }
    if (passed) {
      for (size_t k = 0; k < num_pending_exits_; ++k)
        filter_.Remove(pending_exits_[k]);
      num_pending_exits_ = 0;
    }
  }
  return total;
}

absl::StatusOr<size_t> Sampler::Poll(int timeout_ms, const SampleSink& sink) {
  size_t delivered = 0;
  // A re-open AdaptPeriod() asked for: the old rings are drained into
  // `sink` before the new ones (see the header).
  if (reopen_pending_) delivered += Reopen(sink);
  epoll_event events[64];
  int n = epoll_wait(epoll_fd_, events, 64, timeout_ms);
  if (n < 0 && errno != EINTR) return ErrnoStatus(errno, "epoll_wait");
  // EPOLLHUP cannot be masked and is reported for as long as the event's
  // task is gone (perf_poll() in kernel/events/core.c): close the ring's
  // events of that task, or the loop would never sleep again.
  for (int k = 0; k < n; ++k) {
    if (events[k].events & (EPOLLHUP | EPOLLERR))
      delivered += HandleHangup(events[k].data.u32, sink);
  }
  // One budgeted pass over every ring (not only the ready ones: rings below
  // their watermark are drained too, so samples do not sit for long).
  bool more = false;
  delivered += DrainRound(sink, config_.budget_bytes_per_ring, &more);
  last_poll_complete_ = !more;
  return delivered;
}

size_t Sampler::Flush(const SampleSink& sink) {
  size_t total = 0;
  bool more = true;
  while (more) total += DrainRound(sink, SIZE_MAX, &more);
  return total;
}

uint64_t Sampler::AdaptPeriod(double cpu_s, double wall_s) {
  if (!controller_) return period();
  // The CPU time of re-opens is the controller's own cost, not sampling:
  // billed, it would raise the period and ask for the next re-open.
  cpu_s = std::max(0.0, cpu_s - reopen_cpu_s_);
  reopen_cpu_s_ = 0;
  if (wall_s > 0) since_open_s_ += wall_s;
  uint64_t before = controller_->period();
  uint64_t after = controller_->Update(cpu_s, wall_s);
  if (after != before) {
    for (const OpenEvent& e : events_) {
      if (!e.sampling) continue;
      uint64_t p = after;
      if (int rc = sys_->Ioctl(e.fd, PERF_EVENT_IOC_PERIOD,
                               reinterpret_cast<unsigned long>(&p));
          rc < 0) {
        ++period_errors_;
        last_period_errno_ = -rc;
        period_ioctl_failed_ = true;
      }
    }
    // Inherited children keep the period they were created with (see the
    // header): from now on some samples may carry an older period.
    if (!system_wide_ && PeriodMatters()) {
      period_reaches_children_ = false;
      stale_lo_ = std::min(stale_lo_, after);
      stale_hi_ = std::max(stale_hi_, after);
    }
  }
  if (!system_wide_ && !period_reaches_children_ && !reopen_pending_)
    MaybeScheduleReopen();
  return after;
}

absl::StatusOr<std::vector<pid_t>> Sampler::LiveTasks() const {
  const KernelFs& fs = *config_.fs;
  // Processes: the targets and, through the ppid field of /proc/N/stat,
  // every descendant (inherit follows forks as well as threads).
  std::vector<pid_t> procs(config_.pids.begin(), config_.pids.end());
  if (absl::StatusOr<std::vector<std::string>> all = fs.ListDir("/proc");
      all.ok()) {
    std::vector<std::pair<pid_t, pid_t>> parent_of;  // (ppid, pid)
    for (const std::string& name : *all) {
      int pid = 0;
      if (!absl::SimpleAtoi(name, &pid) || pid <= 0) continue;
      absl::StatusOr<std::string> text =
          fs.ReadFile(absl::StrCat("/proc/", pid, "/stat"));
      if (!text.ok()) continue;  // exited meanwhile
      const std::optional<ProcStat> st = ParseProcStat(*text);
      if (!st || st->pid != pid || st->ppid <= 0) continue;
      parent_of.emplace_back(static_cast<pid_t>(st->ppid), pid);
    }
    std::sort(parent_of.begin(), parent_of.end());
    for (size_t i = 0; i < procs.size(); ++i) {  // grows: breadth first
      auto it = std::lower_bound(parent_of.begin(), parent_of.end(),
                                 std::make_pair(procs[i], pid_t{0}));
      for (; it != parent_of.end() && it->first == procs[i]; ++it) {
        if (std::find(procs.begin(), procs.end(), it->second) == procs.end())
          procs.push_back(it->second);
      }
    }
  }
  std::vector<pid_t> tasks;
  for (pid_t p : procs) {
    absl::StatusOr<std::vector<pid_t>> tids = ListThreads(fs, p);
    if (tids.ok()) tasks.insert(tasks.end(), tids->begin(), tids->end());
  }
  std::sort(tasks.begin(), tasks.end());
  tasks.erase(std::unique(tasks.begin(), tasks.end()), tasks.end());
  if (tasks.empty())
    return absl::NotFoundError("no task of the targets is alive");
  return tasks;
}

bool Sampler::PeriodMatters() const {
  // A software event that samples PERIOD takes every occurrence as a sample
  // whatever its period (perf_swevent_event() in kernel/events/core.c):
  // neither its parent nor its children sample at `period`.
  bool matters = false;
  for (const EventSpec& spec : config_.events.events) {
    matters |=
        spec.sampling &&
        !(spec.attr.type == PERF_TYPE_SOFTWARE &&
          (spec.attr.sample_type & PERF_SAMPLE_PERIOD) && !spec.attr.freq);
  }
  return matters;
}

void Sampler::MaybeScheduleReopen() {
  // Re-opening events that ignore their period would change nothing.
  if (config_.fs == nullptr || !controller_ || !PeriodMatters()) return;
  const uint64_t p = controller_->period();
  const double spread =
      std::max(static_cast<double>(p) /
                   static_cast<double>(std::max<uint64_t>(stale_lo_, 1)),
               static_cast<double>(stale_hi_) / static_cast<double>(p));
  const double interval =
      std::max(kReopenMinIntervalS, last_reopen_cpu_s_ / kReopenCpuShare);
  if (spread < kReopenFactor || since_open_s_ < interval) return;
  // Every live task with an event of its own (and every ioctl taken): the
  // ioctl reached them all, no inherited child is left behind.
  if (!period_ioctl_failed_) {
    absl::StatusOr<std::vector<pid_t>> tasks = LiveTasks();
    if (tasks.ok()) {
      bool all_own = true;
      for (pid_t t : *tasks) {
        all_own &= std::any_of(events_.begin(), events_.end(),
                               [t](const OpenEvent& e) { return e.pid == t; });
      }
      if (all_own) {
        period_reaches_children_ = true;
        stale_lo_ = stale_hi_ = p;
        return;
      }
    }
  }
  reopen_pending_ = true;
}

namespace {

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace

size_t Sampler::Reopen(const SampleSink& sink) {
  reopen_pending_ = false;
  since_open_s_ = 0;  // the next attempt no sooner than the interval
  const double cpu0 = ThreadCpuSeconds();
  const uint64_t p = controller_->period();
  // The old plan aside; the new one is opened into fresh members.
  std::vector<OpenEvent> old_events;
  std::vector<Ring> old_rings;
  old_events.swap(events_);
  old_rings.swap(rings_);
  const int old_epoll = epoll_fd_;
  epoll_fd_ = -1;
  const std::vector<EventSpec> old_specs = config_.events.events;
  std::vector<pid_t> tasks;
  absl::Status st = ReopenInto(p, &tasks);
  if (st.ok() && enabled_) {
    // Old off, new on: between the two nothing is sampled, nothing twice.
    st = SetGroupsEnabled(old_events, false);
    if (st.ok()) st = SetGroupsEnabled(events_, true);
    if (!st.ok()) (void)SetGroupsEnabled(old_events, true);
  }
  size_t delivered = 0;
  if (!st.ok()) {
    CloseAll();
    events_.swap(old_events);
    rings_.swap(old_rings);
    epoll_fd_ = old_epoll;
    config_.events.events = old_specs;
    ++reopen_failures_;
    last_reopen_error_ = std::string(st.message());
  } else {
    // The old rings receive nothing more: drain them whole, keep their
    // counters, then unmap them and close their events (the mapping holds
    // the event's file; perf_event_release_kernel() then frees the
    // inherited children).
    for (Ring& r : old_rings) {
      if (!r.closed) {
        for (;;) {
          const uint64_t before = r.reader->consumed_bytes();
          const size_t n = r.reader->Drain(batch_.get(), kBatch, SIZE_MAX);
          if (n > 0) sink(absl::MakeConstSpan(batch_.get(), n));
          delivered += n;
          if (r.reader->Pending() == 0 || r.reader->consumed_bytes() == before)
            break;
        }
        sys_->Unmap(r.base, r.bytes);
      }
      // One entry per CPU, however many re-opens.
      auto it =
          std::find_if(retired_.begin(), retired_.end(),
                       [cpu = r.cpu](const auto& e) { return e.first == cpu; });
      if (it == retired_.end()) {
        retired_.emplace_back(r.cpu, r.reader->counters());
      } else {
        it->second += r.reader->counters();
      }
    }
    for (const OpenEvent& e : old_events) sys_->Close(e.fd);
    if (old_epoll >= 0) close(old_epoll);
    config_.threads = tasks;
    descriptors_needed_ = DescriptorsNeeded(config_, false) + 1;
    drain_limit_.assign(rings_.size(), 0);
    scanned_to_.assign(rings_.size(), 0);
    exit_barrier_.assign(rings_.size(), 0);
    ++reopens_;
    period_reaches_children_ = true;
    period_ioctl_failed_ = false;
    stale_lo_ = stale_hi_ = p;
  }
  last_reopen_cpu_s_ = std::max(0.0, ThreadCpuSeconds() - cpu0);
  reopen_cpu_s_ += last_reopen_cpu_s_;
  return delivered;
}

absl::Status Sampler::ReopenInto(uint64_t period, std::vector<pid_t>* tasks) {
  HOTPAGE_ASSIGN_OR_RETURN(*tasks, LiveTasks());
  // Descriptors: the old events stay open until the new ones run.
  static LinuxFdLimits* const kLinuxLimits = new LinuxFdLimits;
  FdLimits* limits = config_.fd_limits ? config_.fd_limits : kLinuxLimits;
  SamplerConfig plan = config_;
  plan.threads = *tasks;
  HOTPAGE_RETURN_IF_ERROR(
      EnsureDescriptors(DescriptorsNeeded(plan, false) + 1, limits).status());
  for (EventSpec& spec : config_.events.events) {
    if (spec.sampling) spec.attr.sample_period = period;
  }
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) return ErrnoStatus(errno, "epoll_create1");
  reopening_ = true;
  absl::Status st = OpenTasks(*tasks);
  // Tasks forked before their parent's new event opened are not inherited
  // by it: list again and open those, until no new one appears.
  for (int round = 1; st.ok(); ++round) {
    absl::StatusOr<std::vector<pid_t>> now = LiveTasks();
    if (!now.ok()) break;  // every task exited: the old rings hang up too
    std::vector<pid_t> fresh;
    std::set_difference(now->begin(), now->end(), tasks->begin(), tasks->end(),
                        std::back_inserter(fresh));
    if (fresh.empty()) break;
    if (round >= kReopenRounds) {
      st = absl::UnavailableError(
          absl::StrCat("the targets kept creating tasks during ", kReopenRounds,
                       " rounds of opening"));
      break;
    }
    st = OpenTasks(fresh);
    tasks->insert(tasks->end(), fresh.begin(), fresh.end());
    std::sort(tasks->begin(), tasks->end());
  }
  reopening_ = false;
  HOTPAGE_RETURN_IF_ERROR(st);
  FinishRings();
  if (rings_.empty())
    return absl::NotFoundError("no task of the targets is alive");
  return absl::OkStatus();
}

uint64_t Sampler::period() const {
  return controller_ ? controller_->period()
                     : config_.events.events.back().attr.sample_period;
}

RingCounters Sampler::Totals() const {
  RingCounters t;
  for (const Ring& r : rings_) t += r.reader->counters();
  for (const auto& [cpu, c] : retired_) t += c;
  t.forks_followed += forks_followed_;
  return t;
}

std::vector<std::pair<int, RingCounters>> Sampler::PerCpu() const {
  std::vector<std::pair<int, RingCounters>> out;
  for (const Ring& r : rings_) out.emplace_back(r.cpu, r.reader->counters());
  // A re-open's retired rings count for their CPU (one entry per CPU).
  for (const auto& [cpu, c] : retired_) {
    auto it = std::find_if(out.begin(), out.end(), [cpu = cpu](const auto& e) {
      return e.first == cpu;
    });
    if (it == out.end()) {
      out.emplace_back(cpu, c);
    } else {
      it->second += c;
    }
  }
  return out;
}

}  // namespace hotpage
