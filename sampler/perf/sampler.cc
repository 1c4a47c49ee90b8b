#include "sampler/perf/sampler.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
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
  if (config->threads.size() * config->cpus.size() > kMaxPerTaskEvents) {
    config->threads.clear();
    config->system_wide = true;
  }
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
          base, system_wide
                    ? ". System-wide sampling needs CAP_PERFMON (or root) or "
                      "kernel.perf_event_paranoid <= 0"
                    : ". Sampling another process needs CAP_PERFMON or ptrace "
                      "access to it, and kernel.perf_event_paranoid <= 2");
    case ENODATA:
      return absl::StrCat(
          base,
          ". This CPU requires mem-loads in a group led by mem-loads-aux; "
          "the kernel did not accept the group");
    case ENOENT:
    case EOPNOTSUPP:
    case ENODEV:
      return absl::StrCat(
          base,
          ". The kernel or CPU does not support this event (no PMU driver, "
          "or a VM without a virtual PMU); try --source pagefault");
    case EINVAL:
      return absl::StrCat(
          base,
          ". The kernel rejected the event configuration (for IBS: "
          "exclude_* bits without swfilt, or a bad period)");
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

Sampler::~Sampler() {
  for (Ring& r : rings_) {
    if (r.base != nullptr) sys_->Unmap(r.base, r.bytes);
  }
  for (int fd : fds_) sys_->Close(fd);
  if (epoll_fd_ >= 0) close(epoll_fd_);
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
  const bool ibs = config_.events.events[0].source == SampleSource::kIbsOp;
  system_wide_ = config_.all || config_.system_wide || ibs;
  if (!config_.all) {
    filter_ = PidFilter(
        std::vector<uint32_t>(config_.pids.begin(), config_.pids.end()));
  }
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t data_bytes = config_.ring_data_pages * page;
  const size_t wakeup =
      config_.wakeup_bytes ? config_.wakeup_bytes : data_bytes / 4;

  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) return ErrnoStatus(errno, "epoll_create1");

  std::vector<pid_t> targets = system_wide_ ? std::vector<pid_t>{-1}
                               : config_.threads.empty() ? config_.pids
                                                         : config_.threads;
  for (int cpu : config_.cpus) {
    Ring ring;
    ring.cpu = cpu;
    std::vector<RingEvent> ring_events;
    for (pid_t pid : targets) {
      int leader = -1;
      for (size_t i = 0; i < config_.events.events.size(); ++i) {
        const EventSpec& spec = config_.events.events[i];
        perf_event_attr attr = spec.attr;
        attr.inherit = system_wide_ ? 0 : 1;
        attr.watermark = 1;
        attr.wakeup_watermark = static_cast<uint32_t>(wakeup);
        // FORK records let the filter follow children in system-wide mode.
        attr.task = (system_wide_ && !config_.all && ring.fd < 0) ? 1 : 0;
        const bool in_group = config_.events.grouped && i > 0;
        if (in_group) attr.disabled = 0;  // enabled with its leader
        int group_fd = in_group ? leader : -1;
        int fd = sys_->Open(&attr, pid, cpu, group_fd, 0);
        if (fd == -ESRCH && i == 0 && !config_.threads.empty() &&
            std::find(config_.pids.begin(), config_.pids.end(), pid) ==
                config_.pids.end()) {
          break;  // a listed thread exited meanwhile
        }
        if (fd < 0) {
          std::string who =
              pid < 0 ? "all processes" : absl::StrCat("pid ", pid);
          return absl::Status(
              ErrnoStatus(-fd, "").code(),
              absl::StrCat(ExplainOpenError(-fd, spec, system_wide_), " [cpu ",
                           cpu, ", ", who, "]"));
        }
        fds_.push_back(fd);
        if (!in_group) leader_fds_.push_back(fd);
        if (i == 0) leader = fd;
        if (spec.sampling) sampling_fds_.push_back(fd);
        uint64_t id = 0;
        if (int rc = sys_->Ioctl(fd, PERF_EVENT_IOC_ID,
                                 reinterpret_cast<unsigned long>(&id));
            rc < 0) {
          return ErrnoStatus(-rc,
                             absl::StrCat("PERF_EVENT_IOC_ID ", spec.name));
        }
        ring_events.push_back(
            {id, PerfEventLayout::FromAttr(attr, spec.source)});
        if (ring.fd < 0) {
          ring.fd = fd;
          ring.bytes = page + data_bytes;
          int err = 0;
          ring.base = sys_->Map(fd, ring.bytes, &err);
          if (ring.base == nullptr) {
            return ErrnoStatus(
                err, absl::StrCat(
                         "mmap of the ", ring.bytes, "-byte ring on cpu ", cpu,
                         err == EPERM ? " (over the perf_event_mlock_kb "
                                        "limit; use a smaller ring)"
                                      : ""));
          }
          epoll_event ev{};
          ev.events = EPOLLIN;
          ev.data.u32 = static_cast<uint32_t>(rings_.size());
          if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) < 0) {
            return ErrnoStatus(errno, "epoll_ctl");
          }
        } else if (int rc = sys_->Ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT,
                                        static_cast<unsigned long>(ring.fd));
                   rc < 0) {
          return ErrnoStatus(
              -rc, absl::StrCat("PERF_EVENT_IOC_SET_OUTPUT on cpu ", cpu));
        }
      }
    }
    // Only events that produce samples matter to the decoder; a single one
    // needs no id lookup.
    std::vector<RingEvent> decoders;
    for (size_t i = 0; i < ring_events.size(); ++i) {
      const EventSpec& spec =
          config_.events.events[i % config_.events.events.size()];
      if (spec.sampling) decoders.push_back(ring_events[i]);
    }
    bool same_layout = true;
    for (const RingEvent& e : decoders) {
      same_layout &= e.layout.source == decoders[0].layout.source &&
                     e.layout.sample_type == decoders[0].layout.sample_type;
    }
    if (same_layout && !decoders.empty()) decoders.resize(1);
    // Per-task events are restricted by the kernel to the targets and
    // everything they spawn (inherit): no filter. System-wide rings see
    // every process: filter unless --all.
    ring.reader = std::make_unique<RingReader>(
        ring.base, page, data_bytes, std::move(decoders),
        (config_.all || !system_wide_) ? nullptr : &filter_);
    rings_.push_back(std::move(ring));
  }

  if (config_.cpu_budget > 0) {
    uint64_t base = config_.events.events.back().attr.sample_period;
    std::function<uint64_t(uint64_t)> norm;
    if (config_.events.events[0].source == SampleSource::kIbsOp) {
      norm = [](uint64_t p) {
        p &= ~uint64_t{0xf};
        return p < 0x90 ? uint64_t{0x90} : p;
      };
    }
    controller_.emplace(base, config_.max_period, config_.cpu_budget,
                        std::move(norm));
  }
  return absl::OkStatus();
}

absl::Status Sampler::Enable() {
  for (int fd : leader_fds_) {
    if (int rc = sys_->Ioctl(fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
        rc < 0) {
      return ErrnoStatus(-rc, "PERF_EVENT_IOC_ENABLE");
    }
  }
  return absl::OkStatus();
}

absl::Status Sampler::Disable() {
  for (int fd : leader_fds_) {
    if (int rc = sys_->Ioctl(fd, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
        rc < 0) {
      return ErrnoStatus(-rc, "PERF_EVENT_IOC_DISABLE");
    }
  }
  return absl::OkStatus();
}

size_t Sampler::DrainRound(const SampleSink& sink, size_t budget, bool* more) {
  size_t total = 0;
  *more = false;
  for (Ring& r : rings_) {
    // Batches of kBatch samples until the ring's byte budget is used or the
    // ring is empty: one batch per ring per Poll capped a burst (a kernel
    // scan pass makes thousands of hint faults at once) at 1024 samples per
    // Poll, and a caller that polls once per second lost the rest to the
    // ring's overflow.
    size_t left = budget;
    for (;;) {
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
  return total;
}

absl::StatusOr<size_t> Sampler::Poll(int timeout_ms, const SampleSink& sink) {
  epoll_event events[64];
  int n = epoll_wait(epoll_fd_, events, 64, timeout_ms);
  if (n < 0 && errno != EINTR) return ErrnoStatus(errno, "epoll_wait");
  // One budgeted pass over every ring (not only the ready ones: rings below
  // their watermark are drained too, so samples do not sit for long).
  bool more = false;
  const size_t delivered =
      DrainRound(sink, config_.budget_bytes_per_ring, &more);
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
  uint64_t before = controller_->period();
  uint64_t after = controller_->Update(cpu_s, wall_s);
  if (after != before) {
    for (int fd : sampling_fds_) {
      uint64_t p = after;
      sys_->Ioctl(fd, PERF_EVENT_IOC_PERIOD,
                  reinterpret_cast<unsigned long>(&p));
    }
  }
  return after;
}

uint64_t Sampler::period() const {
  return controller_ ? controller_->period()
                     : config_.events.events.back().attr.sample_period;
}

RingCounters Sampler::Totals() const {
  RingCounters t;
  for (const Ring& r : rings_) t += r.reader->counters();
  return t;
}

std::vector<std::pair<int, RingCounters>> Sampler::PerCpu() const {
  std::vector<std::pair<int, RingCounters>> out;
  for (const Ring& r : rings_) out.emplace_back(r.cpu, r.reader->counters());
  return out;
}

}  // namespace hotpage
