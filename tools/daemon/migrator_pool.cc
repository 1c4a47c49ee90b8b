#include "tools/daemon/migrator_pool.h"

#include <algorithm>

namespace hotpage {

MigratorPool::MigratorPool(double rate_limit_bytes_per_sec, Clock* clock,
                           absl::Duration idle_poll)
    : clock_(clock),
      idle_poll_(idle_poll),
      rate_limit_(rate_limit_bytes_per_sec) {}

MigratorPool::~MigratorPool() { Stop(); }

void MigratorPool::Add(Migrator* m, double weight) {
  MutexLock l(&mu_);
  Member mem;
  mem.m = m;
  mem.weight = weight > 0 ? weight : 1;
  members_.push_back(mem);
  ShareLocked();
}

void MigratorPool::SetWeight(Migrator* m, double weight) {
  MutexLock l(&mu_);
  for (Member& mem : members_) {
    if (mem.m == m) mem.weight = weight > 0 ? weight : 1;
  }
  ShareLocked();
}

void MigratorPool::Remove(Migrator* m) {
  MutexLock l(&mu_);
  // No new round starts on it; wait for the one in progress (a move call).
  for (Member& mem : members_) {
    if (mem.m == m) mem.removed = true;
  }
  cv_.WaitWithTimeout(&mu_, absl::InfiniteDuration(),
                      [this, m]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
                        for (const Member& mem : members_) {
                          if (mem.m == m && mem.running) return false;
                        }
                        return true;
                      });
  members_.erase(std::remove_if(members_.begin(), members_.end(),
                                [m](const Member& x) { return x.m == m; }),
                 members_.end());
  ShareLocked();
}

void MigratorPool::SetRateLimit(double bytes_per_sec) {
  MutexLock l(&mu_);
  rate_limit_ = bytes_per_sec;
  ShareLocked();
}

size_t MigratorPool::members() const {
  MutexLock l(&mu_);
  return members_.size();
}

std::vector<int> MigratorPool::BackedOffNodes() const {
  std::vector<int> out;
  MutexLock l(&mu_);
  for (const Member& m : members_) {
    if (m.removed) continue;
    for (int n : m.m->BackedOffNodes()) out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void MigratorPool::ShareLocked() {
  double busy = 0;
  for (const Member& mem : members_) {
    if (mem.busy) busy += mem.weight;
  }
  for (Member& mem : members_) {
    double rate = 0;  // unlimited
    if (rate_limit_ > 0) {
      // An idle member: what it would get by becoming busy.
      const double total = mem.busy ? busy : busy + mem.weight;
      rate = rate_limit_ * mem.weight / total;
    }
    if (rate != mem.rate) {
      mem.m->SetRateLimit(rate);
      mem.rate = rate;
    }
  }
}

absl::Duration MigratorPool::RunPass() {
  using Next = MigratorRound::Next;
  MutexLock pass(&pass_mu_);
  std::vector<Migrator*> due;
  const absl::Time now = clock_->Now();
  {
    MutexLock l(&mu_);
    for (const Member& mem : members_) {
      if (mem.due <= now && !mem.removed) due.push_back(mem.m);
    }
  }
  for (Migrator* m : due) {
    {
      MutexLock l(&mu_);
      Member* mem = FindLocked(m);
      if (mem == nullptr || mem->removed) continue;  // Remove() came first
      mem->running = true;
    }
    const absl::Duration cpu0 = clock_->ThreadCpuTime();
    const MigratorRound r = m->RunOnce();
    in_members_ns_.fetch_add(
        absl::ToInt64Nanoseconds(clock_->ThreadCpuTime() - cpu0),
        std::memory_order_relaxed);
    const absl::Time after = clock_->Now();
    MutexLock l(&mu_);
    Member* mem = FindLocked(m);  // still there: Remove() waits for running
    mem->running = false;
    cv_.NotifyAll();
    switch (r.next) {
      case Next::kMore:
        mem->busy = true;
        mem->due = after;
        break;
      case Next::kWaitLimit:
        mem->busy = true;
        mem->due = after + r.wait;
        break;
      case Next::kWaitForWork:
        mem->busy = false;
        mem->due = after + std::min(r.wait, idle_poll_);
        break;
      case Next::kDone:
        mem->busy = false;
        mem->due = absl::InfiniteFuture();
        break;
    }
  }
  MutexLock l(&mu_);
  ShareLocked();
  absl::Time next = now + idle_poll_;
  for (const Member& mem : members_) next = std::min(next, mem.due);
  return std::max(next - clock_->Now(), absl::ZeroDuration());
}

MigratorPool::Member* MigratorPool::FindLocked(Migrator* m) {
  for (Member& mem : members_) {
    if (mem.m == m) return &mem;
  }
  return nullptr;
}

void MigratorPool::Start() {
  thread_.Start([this] {
    while (!stop_.load(std::memory_order_acquire)) {
      const absl::Duration wait = RunPass();
      if (wait > absl::ZeroDuration()) absl::SleepFor(wait);
    }
  });
}

void MigratorPool::Stop() {
  stop_.store(true, std::memory_order_release);
  thread_.Join();
}

MigratorPool::CpuTimes MigratorPool::Cpu() const {
  CpuTimes c;
  c.thread = thread_.CpuTime();
  c.in_members =
      absl::Nanoseconds(in_members_ns_.load(std::memory_order_relaxed));
  return c;
}

}  // namespace hotpage
