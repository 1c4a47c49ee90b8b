#include "tools/daemon/machine_sampler.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "sampler/perf/event_config.h"
#include "tools/base/status_macros.h"

namespace hotpage {

size_t SampleInbox::InboxSamplesFor(uint64_t footprint_pages) {
  if (footprint_pages == 0) return kInboxSamples;
  return static_cast<size_t>(
      std::clamp<uint64_t>(footprint_pages, kMinInboxSamples, kInboxSamples));
}

SampleInbox::SampleInbox(size_t capacity)
    : buf_(new Sample[std::max<size_t>(capacity, 1)]),
      capacity_(std::max<size_t>(capacity, 1)),
      out_(new Sample[std::max<size_t>(capacity, 1)]) {}

bool SampleInbox::Push(const Sample& s) {
  MutexLock l(&mu_);
  if (n_ == capacity_) {
    dropped_full_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  buf_[n_++] = s;
  return true;
}

void SampleInbox::Resize(size_t capacity) {
  capacity = std::max<size_t>(capacity, 1);
  {
    MutexLock l(&mu_);
    if (capacity == capacity_) return;
  }
  // Allocated outside the lock: the routing thread never waits on it.
  std::unique_ptr<Sample[]> buf(new Sample[capacity]);
  std::unique_ptr<Sample[]> out(new Sample[capacity]);
  {
    MutexLock l(&mu_);
    const size_t keep = std::min(n_, capacity);
    std::copy(buf_.get(), buf_.get() + keep, buf.get());
    if (n_ > keep) {
      dropped_full_.fetch_add(n_ - keep, std::memory_order_relaxed);
    }
    n_ = keep;
    buf_.swap(buf);
    capacity_ = capacity;
    // out_ is this (the draining) thread's alone.
    out_.swap(out);
  }
  // The old buffers are freed here, outside the lock.
}

size_t SampleInbox::capacity() const {
  MutexLock l(&mu_);
  return capacity_;
}

void SampleInbox::Wake() {
  MutexLock l(&mu_);
  if (n_ > 0) cv_.NotifyAll();
}

size_t SampleInbox::Drain(absl::Duration timeout, const SampleSink& sink) {
  size_t n = 0;
  {
    MutexLock l(&mu_);
    cv_.WaitWithTimeout(&mu_, timeout, [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
      return n_ > 0;
    });
    n = n_;
    std::copy(buf_.get(), buf_.get() + n, out_.get());
    n_ = 0;
  }
  if (n > 0) {
    received_.fetch_add(n, std::memory_order_relaxed);
    sink(absl::MakeConstSpan(out_.get(), n));
  }
  return n;
}

absl::StatusOr<std::unique_ptr<MachineSampler>> MachineSampler::Create(
    SamplerConfig base, const KernelFs* fs, PerfEventSystem* sys,
    std::ostream* log) {
  if (base.events.events.empty())
    return absl::InvalidArgumentError("no events to open");
  if (base.cpus.empty()) return absl::InvalidArgumentError("no CPUs to sample");
  std::unique_ptr<MachineSampler> m(
      new MachineSampler(std::move(base), fs, sys, log));
  if (m->system_wide_) {
    MutexLock l(&m->poll_mu_);
    HOTPAGE_RETURN_IF_ERROR(m->OpenPollLocked());
  }
  return m;
}

MachineSampler::MachineSampler(SamplerConfig base, const KernelFs* fs,
                               PerfEventSystem* sys, std::ostream* log)
    : base_(std::move(base)), fs_(fs), sys_(sys), log_(log) {
  // System-wide rings need perf_allow_cpu(): CAP_PERFMON (or
  // CAP_SYS_ADMIN) or perf_event_paranoid <= 0 (IncludeExistingThreads
  // probes it into system_wide_permitted).
  system_wide_ = base_.system_wide_permitted;
  if (!system_wide_ && log_ != nullptr) {
    *log_ << "hotpage daemon: system-wide sampling is not permitted (needs "
             "CAP_PERFMON or kernel.perf_event_paranoid <= 0): sampling "
             "each managed process's threads instead, which needs a "
             "descriptor per thread, CPU and event\n";
  }
}

MachineSampler::~MachineSampler() { Stop(); }

absl::Status MachineSampler::OpenPollLocked() {
  SamplerConfig c = base_;
  c.pids.clear();
  c.threads.clear();
  {
    MutexLock l(&mu_);
    for (const Entry& e : map_) c.pids.push_back(e.pid);
    plan_stale_ = false;
  }
  if (system_wide_) {
    // Every process: the pid -> member map is the filter.
    c.all = true;
    c.system_wide = true;
  } else {
    c.all = false;
    c.system_wide = false;
    if (c.pids.empty()) {
      sampler_.reset();
      PublishLocked();
      return absl::OkStatus();
    }
    IncludeExistingThreads(*fs_, &c);
  }
  sampler_.reset();  // its descriptors first: the new plan may need them
  absl::StatusOr<std::unique_ptr<Sampler>> s = Sampler::Open(c, sys_);
  if (!s.ok()) return s.status();
  HOTPAGE_RETURN_IF_ERROR((*s)->Enable());
  sampler_ = std::move(*s);
  PublishLocked();
  return absl::OkStatus();
}

void MachineSampler::SortLocked() {
  std::sort(map_.begin(), map_.end(),
            [](const Entry& a, const Entry& b) { return a.pid < b.pid; });
  if (!system_wide_) {
    plan_stale_ = true;
    ++counters_.reopens;
  }
}

absl::StatusOr<std::shared_ptr<SampleInbox>> MachineSampler::Subscribe(
    const ProcessKey& key, size_t inbox_samples) {
  auto inbox = std::make_shared<SampleInbox>(inbox_samples);
  MutexLock l(&mu_);
  map_.erase(std::remove_if(map_.begin(), map_.end(),
                            [&](const Entry& e) { return e.pid == key.pid; }),
             map_.end());
  map_.push_back({key.pid, key.start_time_ticks, inbox});
  SortLocked();
  return inbox;
}

void MachineSampler::Unsubscribe(const ProcessKey& key,
                                 const SampleInbox* inbox) {
  MutexLock l(&mu_);
  const size_t before = map_.size();
  map_.erase(std::remove_if(map_.begin(), map_.end(),
                            [&](const Entry& e) {
                              return e.pid == key.pid &&
                                     e.start_time_ticks ==
                                         key.start_time_ticks &&
                                     e.inbox.get() == inbox;
                            }),
             map_.end());
  if (map_.size() != before) SortLocked();
}

void MachineSampler::Reconcile(const std::vector<ProcessKey>& live) {
  std::vector<ProcessKey> sorted = live;
  std::sort(sorted.begin(), sorted.end());
  MutexLock l(&mu_);
  const size_t before = map_.size();
  map_.erase(std::remove_if(map_.begin(), map_.end(),
                            [&](const Entry& e) {
                              return !std::binary_search(
                                  sorted.begin(), sorted.end(),
                                  ProcessKey{e.pid, e.start_time_ticks});
                            }),
             map_.end());
  if (map_.size() != before) SortLocked();
}

SampleInbox* MachineSampler::FindLocked(uint32_t pid) const {
  auto it = std::lower_bound(map_.begin(), map_.end(), pid,
                             [](const Entry& e, uint32_t p) {
                               return static_cast<uint32_t>(e.pid) < p;
                             });
  if (it == map_.end() || static_cast<uint32_t>(it->pid) != pid) return nullptr;
  return it->inbox.get();
}

void MachineSampler::Route(absl::Span<const Sample> batch) {
  for (const Sample& s : batch) {
    SampleInbox* inbox = FindLocked(s.pid);
    if (inbox == nullptr) {
      ++counters_.unmapped;
      continue;
    }
    if (!inbox->Push(s)) {
      ++counters_.inbox_full;
      continue;
    }
    ++counters_.routed;
    // Members to wake after the pass: a fixed array; when it is full the
    // rest are woken by their own 50 ms poll timeout.
    SampleInbox** end = touched_.data() + num_touched_;
    if (std::find(touched_.data(), end, inbox) == end &&
        num_touched_ < touched_.size()) {
      touched_[num_touched_++] = inbox;
    }
  }
}

absl::Status MachineSampler::PollOnce(int timeout_ms) {
  MutexLock pl(&poll_mu_);
  bool stale;
  {
    MutexLock l(&mu_);
    stale = plan_stale_;
  }
  if (stale && !system_wide_) HOTPAGE_RETURN_IF_ERROR(OpenPollLocked());
  if (sampler_ == nullptr) {
    // Per task with nothing mapped: nothing to wait for.
    absl::SleepFor(absl::Milliseconds(timeout_ms));
    return absl::OkStatus();
  }
  num_touched_ = 0;
  absl::StatusOr<size_t> n =
      sampler_->Poll(timeout_ms, [this](absl::Span<const Sample> batch)
                                     ABSL_NO_THREAD_SAFETY_ANALYSIS {
                                       MutexLock l(&mu_);
                                       Route(batch);
                                     });
  for (size_t i = 0; i < num_touched_; ++i) touched_[i]->Wake();
  PublishLocked();
  if (!n.ok()) {
    if (absl::IsNotFound(n.status()) && !system_wide_) {
      // Per task: every mapped process exited; reopen when one is mapped.
      sampler_.reset();
      PublishLocked();
      return absl::OkStatus();
    }
    return n.status();
  }
  return absl::OkStatus();
}

void MachineSampler::PublishLocked() {
  PerfSourceStats p;
  size_t events = 0;
  if (sampler_ != nullptr) {
    const RingCounters t = sampler_->Totals();
    p.throttle = t.throttle;
    p.unthrottle = t.unthrottle;
    p.lost = t.lost;
    p.lost_samples = t.lost_samples;
    p.period_errors = sampler_->period_errors();
    events = sampler_->num_events();
  }
  MutexLock l(&mu_);
  perf_stats_ = p;
  num_events_ = events;
}

void MachineSampler::Start() {
  thread_.Start([this] {
    while (!stop_.load(std::memory_order_acquire)) {
      if (absl::Status s = PollOnce(50); !s.ok()) {
        if (log_ != nullptr) {
          *log_ << "hotpage daemon: machine sampler: " << s.message()
                << "; retrying in 1 s\n";
        }
        absl::SleepFor(absl::Seconds(1));
        MutexLock l(&mu_);
        plan_stale_ = true;
      }
    }
  });
}

void MachineSampler::Stop() {
  stop_.store(true, std::memory_order_release);
  thread_.Join();
}

size_t MachineSampler::num_events() const {
  MutexLock l(&mu_);
  return num_events_;
}

size_t MachineSampler::mapped() const {
  MutexLock l(&mu_);
  return map_.size();
}

MachineSamplerCounters MachineSampler::counters() const {
  MutexLock l(&mu_);
  return counters_;
}

std::optional<PerfSourceStats> MachineSampler::PerfStats() const {
  MutexLock l(&mu_);
  return perf_stats_;
}

RoutedAttachSource::~RoutedAttachSource() {
  machine_->Unsubscribe(key_, inbox_.get());
}

void RoutedAttachSource::ResizeInbox(uint64_t footprint_pages) {
  inbox_->Resize(SampleInbox::InboxSamplesFor(footprint_pages));
}

absl::Status RoutedAttachSource::Poll(const SampleSink& sink) {
  inbox_->Drain(absl::Milliseconds(50), sink);
  return absl::OkStatus();
}

MachineSamplerSet::MachineSamplerSet(const KernelFs* fs, PerfEventSystem* sys,
                                     std::ostream* log, bool run_threads)
    : fs_(fs), sys_(sys), log_(log), run_threads_(run_threads) {}

MachineSamplerSet::~MachineSamplerSet() {
  MutexLock l(&mu_);
  for (auto& [key, m] : samplers_) m->Stop();
}

absl::StatusOr<std::unique_ptr<RoutedAttachSource>> MachineSamplerSet::Attach(
    const std::string& source, bool write_faults, const ProcessKey& key,
    std::string* name, uint64_t footprint_pages) {
  const std::string id = absl::StrCat(source, write_faults ? "+wf" : "");
  std::shared_ptr<MachineSampler> m;
  {
    MutexLock l(&mu_);
    auto it = samplers_.find(id);
    if (it != samplers_.end()) {
      m = it->second;
      *name = names_[id];
    }
  }
  // Hint faults are page faults (sampler/hintfault/
  // numa_balancing_controller.h), in bursts after each scan pass.
  const bool hint = source == "hintfault";
  if (m == nullptr) {
    absl::StatusOr<SourceRequest> req =
        ParseSourceRequest(hint ? "pagefault" : source);
    if (!req.ok()) return req.status();
    std::string why;
    absl::StatusOr<EventGroup> events =
        ChooseEvents(*fs_, *req, SamplingOptions(), &why);
    if (!events.ok()) return events.status();
    absl::StatusOr<std::vector<int>> cpus = OnlineCpus(*fs_);
    if (!cpus.ok()) return cpus.status();
    SamplerConfig c;
    c.events = *events;
    c.cpus = *cpus;
    c.all = true;  // IncludeExistingThreads: probe only, list no threads
    IncludeExistingThreads(*fs_, &c);
    c.all = false;
    if (write_faults || hint) SizeRingsForFaultBursts(&c);
    absl::StatusOr<std::unique_ptr<MachineSampler>> made =
        MachineSampler::Create(c, fs_, sys_, log_);
    if (!made.ok()) return made.status();
    m = std::move(*made);
    const std::string n =
        events->events.empty() || hint
            ? source
            : std::string(SampleSourceName(events->events.front().source));
    *name = n;
    if (log_ != nullptr) {
      *log_ << "hotpage daemon: " << n << " sampler for the machine: "
            << (m->system_wide() ? "system-wide rings, " : "per task, ")
            << m->num_events() << " perf events\n";
    }
    MutexLock l(&mu_);
    auto [it, inserted] = samplers_.emplace(id, m);
    if (!inserted) {
      m = it->second;  // another thread opened it first
      *name = names_[id];
    } else {
      names_[id] = n;
      if (run_threads_) m->Start();
    }
  }
  absl::StatusOr<std::shared_ptr<SampleInbox>> inbox =
      m->Subscribe(key, SampleInbox::InboxSamplesFor(footprint_pages));
  if (!inbox.ok()) return inbox.status();
  return std::make_unique<RoutedAttachSource>(m, key, std::move(*inbox));
}

void MachineSamplerSet::Reconcile(const std::vector<ProcessKey>& live) {
  std::vector<std::pair<std::string, std::shared_ptr<MachineSampler>>> unused;
  {
    MutexLock l(&mu_);
    for (auto it = samplers_.begin(); it != samplers_.end();) {
      it->second->Reconcile(live);
      // Only the set holds it: no member's source uses it.
      if (it->second.use_count() == 1) {
        unused.emplace_back(it->first, std::move(it->second));
        names_.erase(it->first);
        it = samplers_.erase(it);
      } else {
        ++it;
      }
    }
  }
  // Their threads stop outside the lock; what they counted stays in their
  // source's row.
  for (auto& [id, m] : unused) {
    m->Stop();
    const MachineSamplerReport row = RowOf(id, *m);
    const double cpu = absl::ToDoubleSeconds(m->ThreadCpuTime());
    MutexLock l(&mu_);
    Retired& r = retired_[id];
    r.totals.source = id;
    r.totals.AddCounts(row);
    r.cpu_seconds += cpu;
  }
  unused.clear();
}

MachineSamplerReport MachineSamplerSet::RowOf(const std::string& id,
                                              const MachineSampler& m) {
  MachineSamplerReport r;
  r.source = id;
  const MachineSamplerCounters c = m.counters();
  r.routed = c.routed;
  r.unmapped = c.unmapped;
  r.inbox_full = c.inbox_full;
  r.reopens = c.reopens;
  if (std::optional<PerfSourceStats> p = m.PerfStats()) {
    r.throttle = p->throttle;
    r.unthrottle = p->unthrottle;
    r.lost = p->lost;
    r.lost_samples = p->lost_samples;
  }
  r.events = m.num_events();
  r.mapped = m.mapped();
  return r;
}

void MachineSamplerSet::Report(MachineReport* out) const {
  MutexLock l(&mu_);
  std::map<std::string, std::pair<MachineSamplerReport, double>> rows;
  for (const auto& [id, r] : retired_) rows[id] = {r.totals, r.cpu_seconds};
  for (const auto& [id, m] : samplers_) {
    const MachineSamplerReport now = RowOf(id, *m);
    auto& [row, cpu] = rows[id];
    row.source = id;
    row.AddCounts(now);
    row.events = now.events;
    row.mapped = now.mapped;
    cpu += absl::ToDoubleSeconds(m->ThreadCpuTime());
  }
  for (const auto& [id, rc] : rows) {
    out->samplers.push_back(rc.first);
    if (run_threads_) {
      out->threads.push_back({absl::StrCat("sampler ", id), rc.second});
    }
  }
}

absl::Status MachineSamplerSet::PollAll(int timeout_ms) {
  std::vector<std::shared_ptr<MachineSampler>> all;
  {
    MutexLock l(&mu_);
    for (auto& [id, m] : samplers_) all.push_back(m);
  }
  for (auto& m : all) HOTPAGE_RETURN_IF_ERROR(m->PollOnce(timeout_ms));
  return absl::OkStatus();
}

size_t MachineSamplerSet::samplers() const {
  MutexLock l(&mu_);
  return samplers_.size();
}

size_t MachineSamplerSet::num_events() const {
  MutexLock l(&mu_);
  size_t n = 0;
  for (const auto& [id, m] : samplers_) n += m->num_events();
  return n;
}

}  // namespace hotpage
