#include "tools/daemon/machine_damon.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace hotpage {

// A member's view: its inbox, drained as the perf members' are.
class MachineDamon::Source : public AttachSource {
 public:
  Source(MachineDamon* machine, ProcessKey key, uint64_t generation,
         std::shared_ptr<SampleInbox> inbox)
      : machine_(machine),
        key_(key),
        generation_(generation),
        inbox_(std::move(inbox)) {}
  ~Source() override { machine_->Detach(key_, inbox_.get()); }

  absl::Status Poll(const SampleSink& sink) override {
    // One DAMON update per aggregation interval (0.1 s by default).
    inbox_->Drain(absl::Milliseconds(200), sink);
    if (std::string why = machine_->Ended(generation_); !why.empty()) {
      return absl::UnavailableError(
          absl::StrCat("DAMON monitoring ended: ", why));
    }
    return absl::OkStatus();
  }
  void Stop() override {}

 private:
  MachineDamon* const machine_;
  const ProcessKey key_;
  const uint64_t generation_;
  const std::shared_ptr<SampleInbox> inbox_;
};

MachineDamon::MachineDamon(DamonOptions options, std::ostream* log)
    : MachineDamon(
          std::move(options),
          []() -> absl::StatusOr<
                   std::pair<KernelFs, std::unique_ptr<SysfsWriter>>> {
            absl::StatusOr<KernelFs> f = KernelFs::Open("/");
            if (!f.ok()) return f.status();
            absl::StatusOr<std::unique_ptr<LiveSysfsWriter>> w =
                LiveSysfsWriter::Open("/");
            if (!w.ok()) return w.status();
            return std::make_pair(std::move(*f),
                                  std::unique_ptr<SysfsWriter>(std::move(*w)));
          },
          log) {}

MachineDamon::MachineDamon(DamonOptions options, Opener open, std::ostream* log)
    : options_(std::move(options)), open_(std::move(open)), log_(log) {}

MachineDamon::~MachineDamon() {
  Stop();
  std::shared_ptr<DamonSource> s;
  {
    MutexLock l(&mu_);
    s = std::move(source_);
  }
  if (s) (void)s->Stop();
}

void MachineDamon::Log(const std::string& line) {
  if (log_ != nullptr) *log_ << "hotpage daemon: damon: " << line << "\n";
}

absl::StatusOr<std::unique_ptr<AttachSource>> MachineDamon::Attach(
    const ProcessKey& key) {
  MutexLock l(&mu_);
  if (source_ && !source_->running()) {
    // Ended earlier (PollOnce told its members); start afresh.
    EndLocked("the kdamond stopped");
    source_.reset();
  }
  int slot = 0;
  if (source_) {
    absl::StatusOr<int> s = source_->AddTarget(key.pid, key.start_time_ticks);
    if (s.ok()) {
      slot = *s;
    } else if (source_->running()) {
      return s.status();
    } else {
      // The kdamond ended in between (its targets exited, or it was
      // turned off): its members are told, this one gets a new kdamond.
      EndLocked(std::string(s.status().message()));
      source_.reset();
    }
  }
  if (!source_) {
    auto opened = open_();
    if (!opened.ok()) return opened.status();
    absl::StatusOr<std::unique_ptr<DamonSource>> s = DamonSource::StartPinned(
        key.pid, key.start_time_ticks, options_, std::move(opened->first),
        std::move(opened->second));
    if (!s.ok()) return s.status();
    source_ = std::move(*s);
    ++generation_;  // entries of an earlier kdamond are routed nothing
  }
  auto inbox = std::make_shared<SampleInbox>();
  entries_.push_back(Entry{key, slot, generation_, inbox});
  return std::unique_ptr<AttachSource>(
      new Source(this, key, generation_, std::move(inbox)));
}

void MachineDamon::Detach(const ProcessKey& key, const SampleInbox* inbox) {
  std::shared_ptr<DamonSource> stop;
  {
    MutexLock l(&mu_);
    auto it = std::find_if(
        entries_.begin(), entries_.end(),
        [&](const Entry& e) { return e.key == key && e.inbox.get() == inbox; });
    if (it == entries_.end()) return;
    const int slot = it->slot;
    const bool current = it->generation == generation_;
    entries_.erase(it);
    if (!current || !source_) return;
    bool others = false;
    for (const Entry& e : entries_) {
      others = others || (e.generation == generation_ && e.slot >= 0);
    }
    if (!others) {
      // The last member: DAMON is free again.
      stop = std::move(source_);
    } else if (slot >= 0) {
      if (absl::Status s = source_->RemoveTarget(slot); !s.ok()) {
        Log(absl::StrCat("removing pid ", key.pid, ": ", s.message()));
      }
    }
  }
  if (stop) {
    if (absl::Status s = stop->Stop(); !s.ok()) Log(std::string(s.message()));
  }
}

void MachineDamon::Reconcile(const std::vector<ProcessKey>& live) {
  MutexLock l(&mu_);
  if (!source_) return;
  for (Entry& e : entries_) {
    if (e.slot < 0 || e.generation != generation_) continue;
    if (std::find(live.begin(), live.end(), e.key) != live.end()) continue;
    // Gone or reused: never routed again, its target committed away.
    const int slot = e.slot;
    e.slot = -1;
    bool others = false;
    for (const Entry& o : entries_) {
      others = others || (o.generation == generation_ && o.slot >= 0);
    }
    if (!others) continue;  // the last source's destruction tears down
    if (absl::Status s = source_->RemoveTarget(slot); !s.ok()) {
      Log(absl::StrCat("removing pid ", e.key.pid, ": ", s.message()));
    }
  }
}

std::string MachineDamon::Ended(uint64_t generation) const {
  MutexLock l(&mu_);
  return generation <= ended_generation_ ? ended_why_ : std::string();
}

void MachineDamon::EndLocked(const std::string& why) {
  if (ended_generation_ >= generation_) return;
  ended_generation_ = generation_;
  ended_why_ = why.empty() ? "the kdamond stopped" : why;
  Log(absl::StrCat("monitoring ended: ", ended_why_));
}

void MachineDamon::Route(int slot, absl::Span<const Sample> batch) {
  std::shared_ptr<SampleInbox> inbox;
  {
    MutexLock l(&mu_);
    for (const Entry& e : entries_) {
      if (e.slot == slot && e.generation == generation_) {
        inbox = e.inbox;
        // Only this process's samples, whatever the slot says.
        for (const Sample& s : batch) {
          if (s.pid == static_cast<uint32_t>(e.key.pid)) inbox->Push(s);
        }
        break;
      }
    }
  }
  if (inbox) inbox->Wake();
}

absl::Status MachineDamon::PollOnce() {
  std::shared_ptr<DamonSource> s;
  uint64_t gen = 0;
  {
    MutexLock l(&mu_);
    s = source_;
    gen = generation_;
  }
  if (!s) return absl::OkStatus();
  absl::StatusOr<size_t> n = s->PollSlots(
      [this](int slot, absl::Span<const Sample> b) { Route(slot, b); });
  if (n.ok()) return absl::OkStatus();
  MutexLock l(&mu_);
  if (source_ != s) return absl::OkStatus();  // stopped or replaced meanwhile
  if (gen == generation_ && !s->running()) {
    // Its members are told (Ended); the next Attach starts a new one.
    EndLocked(std::string(n.status().message()));
    source_.reset();
  }
  return n.status();
}

void MachineDamon::Start() {
  thread_ = std::thread([this] {
    while (!stop_.load(std::memory_order_relaxed)) {
      bool idle = false;
      {
        MutexLock l(&mu_);
        idle = source_ == nullptr;
      }
      if (idle) {
        absl::SleepFor(absl::Milliseconds(50));
        continue;
      }
      absl::Status s = PollOnce();
      if (!s.ok()) {
        bool again = false;
        {
          MutexLock l(&mu_);
          again = last_error_ == s.message();
          last_error_ = std::string(s.message());
        }
        if (!again) Log(std::string(s.message()));
        absl::SleepFor(absl::Milliseconds(100));
      }
    }
  });
}

void MachineDamon::Stop() {
  stop_.store(true, std::memory_order_relaxed);
  if (thread_.joinable()) thread_.join();
}

bool MachineDamon::running() const {
  MutexLock l(&mu_);
  return source_ && source_->running();
}

size_t MachineDamon::targets() const {
  MutexLock l(&mu_);
  return source_ ? source_->targets() : 0;
}

std::optional<DamonStats> MachineDamon::stats() const {
  MutexLock l(&mu_);
  if (!source_) return std::nullopt;
  return source_->stats();
}

}  // namespace hotpage
