#include "migrator/migrator.h"

#include <algorithm>
#include <cerrno>
#include <utility>

#include "absl/strings/str_cat.h"

namespace hotpage {
namespace {

constexpr size_t kMaxBatchPages = 1 << 16;
constexpr int kMaxNode = 1 << 12;  // far above any MAX_NUMNODES in use
constexpr absl::Duration kBurstWindow = absl::Milliseconds(50);

MigratorOptions Sanitize(MigratorOptions o) {
  o.queue_capacity = std::max<size_t>(o.queue_capacity, 1);
  o.batch_pages = std::clamp<size_t>(o.batch_pages, 1, kMaxBatchPages);
  o.max_retries = std::max(o.max_retries, 0);
  if (o.retry_capacity == 0) o.retry_capacity = o.queue_capacity;
  if (o.retry_delay < absl::ZeroDuration())
    o.retry_delay = absl::ZeroDuration();
  return o;
}

double BurstBytesImpl(const MigratorOptions& o, double rate) {
  if (o.burst_bytes > 0) {
    return std::max(o.burst_bytes, static_cast<double>(kHugePageBytes));
  }
  // 50 ms of the rate, but never less than one full batch of base pages
  // (the limiter must not cut calls short of the batch size it was given)
  // nor than one huge page.
  return std::max({rate * absl::ToDoubleSeconds(kBurstWindow),
                   static_cast<double>(o.batch_pages) * kBasePageBytes,
                   static_cast<double>(kHugePageBytes)});
}

double CpuBurst(double budget) {
  return std::max(budget * absl::ToDoubleSeconds(kMigratorCpuWindow), 0.005);
}

bool Terminal(MigratorState s) {
  return s == MigratorState::kStopped || s == MigratorState::kTargetExited ||
         s == MigratorState::kPidReused || s == MigratorState::kFailed;
}

int ErrnoSlot(int err, int slots) {
  return err > 0 && err < slots ? err : slots - 1;
}

}  // namespace

Migrator::Migrator(const MigratorOptions& options, ProcessHandle target,
                   PageMover* mover, Clock* clock)
    : options_(Sanitize(options)),
      target_(std::move(target)),
      mover_(mover),
      clock_(clock != nullptr ? clock : RealClock::Get()),
      pingpong_(options_.pingpong),
      retry_capacity_(options_.retry_capacity),
      bytes_bucket_(options_.rate_limit_bytes_per_sec,
                    BurstBytesImpl(options_, options_.rate_limit_bytes_per_sec),
                    clock_->Now()),
      cpu_bucket_(options_.cpu_budget, CpuBurst(options_.cpu_budget),
                  clock_->Now()) {
  MutexLock lock(&queue_mu_);
  ring_.resize(options_.queue_capacity);
  work_.reserve(options_.batch_pages);
  addrs_.reserve(options_.batch_pages);
  nodes_.reserve(options_.batch_pages);
  status_buf_.reserve(options_.batch_pages);
  group_.reserve(options_.batch_pages);
  index_.reserve(options_.batch_pages);
  flags_.reserve(options_.batch_pages);
  by_page_.reserve(options_.batch_pages);
  MutexLock stats_lock(&stats_mu_);
  moved_log_.resize(options_.moved_log_pages);
}

Migrator::~Migrator() { Stop(); }

absl::Status Migrator::Start() {
  MutexLock lock(&queue_mu_);
  if (state_ != MigratorState::kNotStarted || threaded_) {
    return absl::FailedPreconditionError(
        absl::StrCat("migrator for ", target_.Describe(), " is ",
                     MigratorStateName(state_), "; it starts only once"));
  }
  state_ = MigratorState::kRunning;
  threaded_ = true;
  worker_ = std::thread([this] { ThreadMain(); });
  return absl::OkStatus();
}

void Migrator::Stop() {
  {
    MutexLock lock(&queue_mu_);
    stop_requested_ = true;
    cv_.NotifyAll();
  }
  if (worker_.joinable()) worker_.join();
  // The worker has ended (or never ran): its round-private state is ours.
  MutexLock lock(&queue_mu_);
  if (!Terminal(state_)) {
    state_ = MigratorState::kStopped;
  }
  abandoned_ += size_ + work_.size() + retry_.size();
  size_ = 0;
  in_flight_ = 0;
  work_.clear();
  retry_.clear();
  taken_by_node_.clear();
  cv_.NotifyAll();
}

bool Migrator::Valid(const MoveRequest& r) {
  if (r.page_bytes != kBasePageBytes && r.page_bytes != kHugePageBytes) {
    return false;
  }
  if (r.vaddr == 0 || r.vaddr % r.page_bytes != 0) return false;
  if (r.to_node < 0 || r.to_node >= kMaxNode) return false;
  if (r.from_node < -1 || r.from_node >= kMaxNode) return false;
  return r.from_node != r.to_node;
}

size_t Migrator::Submit(absl::Span<const MoveRequest> requests) {
  const absl::Time now = clock_->Now();
  MutexLock lock(&queue_mu_);
  if (Terminal(state_)) {
    dropped_not_running_ += requests.size();
    return 0;
  }
  const size_t cap = ring_.size();
  size_t n = 0;
  for (const MoveRequest& r : requests) {
    if (!Valid(r)) {
      ++dropped_invalid_;
    } else if (NodeBackedOffAt(r.to_node, now)) {  // node_mu_: a leaf
      ++dropped_node_backoff_;
    } else if (size_ == cap) {
      ++dropped_queue_full_;
    } else {
      MoveRequest& slot = ring_[(head_ + size_) % cap];
      slot = r;
      if (slot.hot_since == absl::InfinitePast()) slot.hot_since = now;
      ++size_;
      ++n;
    }
  }
  submitted_ += n;
  if (n > 0) cv_.NotifyAll();  // the worker may wait for work
  return n;
}

bool Migrator::WaitUntilIdle(absl::Duration timeout) {
  MutexLock lock(&queue_mu_);
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(queue_mu_) {
    return (size_ == 0 && in_flight_ == 0) || Terminal(state_);
  };
  return cv_.WaitWithTimeout(&queue_mu_, timeout, idle);
}

MigratorState Migrator::state() const {
  MutexLock lock(&queue_mu_);
  return state_;
}

absl::Status Migrator::status() const {
  MutexLock lock(&queue_mu_);
  return status_;
}

bool Migrator::Running() const {
  MutexLock lock(&queue_mu_);
  return state_ == MigratorState::kRunning && !stop_requested_;
}

bool Migrator::IsHeld(uint64_t vaddr, absl::Time now) const {
  return pingpong_.IsHeld(vaddr, now);
}

size_t Migrator::ReleaseHolds(absl::Time now) {
  return pingpong_.ReleaseHolds(now);
}

bool Migrator::NodeBackedOffAt(int node, absl::Time now) const {
  MutexLock lock(&node_mu_);
  auto it = backoff_.find(node);
  return it != backoff_.end() && it->second.until > now;
}

bool Migrator::IsNodeBackedOff(int node) const {
  return NodeBackedOffAt(node, clock_->Now());
}

std::vector<int> Migrator::BackedOffNodes(absl::Time now) const {
  MutexLock lock(&node_mu_);
  std::vector<int> nodes;
  for (const auto& [node, b] : backoff_) {
    if (b.until > now) nodes.push_back(node);
  }
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

void Migrator::ClearNodeBackoff(int node) {
  MutexLock lock(&node_mu_);
  backoff_.erase(node);
}

void Migrator::BackOffNode(int node, absl::Time now) {
  MutexLock lock(&node_mu_);
  const absl::Duration max = options_.enomem_backoff;
  if (max <= absl::ZeroDuration()) {
    backoff_[node] = {absl::InfiniteFuture(), absl::InfiniteDuration()};
    return;
  }
  absl::Duration length = std::min(options_.enomem_backoff_first, max);
  if (auto it = backoff_.find(node); it != backoff_.end() &&
                                     it->second.length > absl::ZeroDuration() &&
                                     now - it->second.until < max) {
    length = std::min(2 * it->second.length, max);  // in a row
  }
  backoff_[node] = {now + length, length};
}

void Migrator::NodeTookPages(int node) {
  MutexLock lock(&node_mu_);
  if (auto it = backoff_.find(node); it != backoff_.end())
    it->second.length = absl::ZeroDuration();
}

void Migrator::SetRateLimit(double bytes_per_sec) {
  MutexLock lock(&queue_mu_);
  new_rate_ = bytes_per_sec;
  rate_changed_ = true;
  cv_.NotifyAll();
}

MigratorStats Migrator::Snapshot() const {
  MigratorStats s;
  {
    MutexLock lock(&queue_mu_);
    s.state = state_;
    s.submitted = submitted_;
    s.dropped_queue_full = dropped_queue_full_;
    s.dropped_invalid = dropped_invalid_;
    s.dropped_not_running = dropped_not_running_;
    s.dropped_node_backoff = dropped_node_backoff_;
    s.abandoned = abandoned_;
    s.queue_depth = size_;
    s.queue_capacity = ring_.size();
    s.in_flight = in_flight_;
  }
  {
    MutexLock lock(&stats_mu_);
    const Counters& c = counters_;
    s.promoted_pages = c.promoted_pages;
    s.promoted_bytes = c.promoted_bytes;
    s.demoted_pages = c.demoted_pages;
    s.demoted_bytes = c.demoted_bytes;
    s.skipped_node_backoff = c.skipped_node_backoff;
    s.dropped_retry_full = c.dropped_retry_full;
    s.skipped_held = c.skipped_held;
    s.skipped_stale = c.skipped_stale;
    s.already_on_target = c.already_on_target;
    s.skipped_duplicate = c.skipped_duplicate;
    s.shared_skipped = c.shared_skipped;
    for (int e = 0; e < kErrnoSlots; ++e) {
      if (c.failed[e] != 0) s.failed_pages_by_errno[e] = c.failed[e];
      if (c.call_errors[e] != 0) s.call_errors_by_errno[e] = c.call_errors[e];
    }
    s.retries = c.retries;
    s.retries_exhausted = c.retries_exhausted;
    s.query_calls = c.query_calls;
    s.move_calls = c.move_calls;
    s.pages_queried = c.pages_queried;
    s.pages_attempted = c.pages_attempted;
    s.hot_to_moved = c.hot_to_moved;
    s.rate_limit_wait = c.rate_limit_wait;
    s.cpu_budget_wait = c.cpu_budget_wait;
    s.cpu_time = c.cpu_time;
  }
  const absl::Time now = clock_->Now();
  s.pingpong_pages = pingpong_.pingpong_pages();
  s.held_pages_now = pingpong_.HeldCount(now);
  return s;
}

Migrator::MovedBytes Migrator::MovedBytesOf(absl::Span<const int> nodes) const {
  MovedBytes b;
  MutexLock lock(&stats_mu_);
  for (int n : nodes) {
    if (auto it = counters_.moved_in_bytes.find(n);
        it != counters_.moved_in_bytes.end()) {
      b.in += it->second;
    }
    if (auto it = counters_.moved_out_bytes.find(n);
        it != counters_.moved_out_bytes.end()) {
      b.out += it->second;
    }
  }
  return b;
}

uint64_t Migrator::MovedSince(uint64_t seq, std::vector<MovedPage>* out,
                              bool* lost) const {
  out->clear();
  MutexLock lock(&stats_mu_);
  const uint64_t cap = moved_log_.size();
  const uint64_t oldest = moved_seq_ > cap ? moved_seq_ - cap : 0;
  *lost = seq < moved_seq_ && (cap == 0 || seq < oldest);
  for (uint64_t k = std::max(seq, oldest); cap > 0 && k < moved_seq_; ++k)
    out->push_back(moved_log_[k % cap]);
  return moved_seq_;
}

std::vector<std::pair<int, Migrator::MovedBytes>> Migrator::QueuedBytesByNode()
    const {
  std::map<int, MovedBytes> by_node;
  {
    MutexLock lock(&queue_mu_);
    const size_t cap = ring_.size();
    for (size_t i = 0; i < size_; ++i) {
      const MoveRequest& r = ring_[(head_ + i) % cap];
      by_node[r.to_node].in += r.page_bytes;
      const int from = r.from_node >= 0 ? r.from_node : r.planned_from;
      if (from >= 0) by_node[from].out += r.page_bytes;
    }
    for (size_t n = 0; n < taken_by_node_.size(); ++n) {
      const MovedBytes& t = taken_by_node_[n];
      if (t.in == 0 && t.out == 0) continue;
      by_node[static_cast<int>(n)].in += t.in;
      by_node[static_cast<int>(n)].out += t.out;
    }
  }
  return {by_node.begin(), by_node.end()};
}

// --- The worker ------------------------------------------------------------

void Migrator::ThreadMain() {
  for (;;) {
    const MigratorRound r = RunRound();
    if (r.next == MigratorRound::Next::kDone) return;
    MutexLock lock(&queue_mu_);
    if (stop_requested_) return;
    switch (r.next) {
      case MigratorRound::Next::kMore:
      case MigratorRound::Next::kDone:
        break;
      case MigratorRound::Next::kWaitForWork: {
        // Wake for new work, a rate change is irrelevant here, or Stop().
        auto wake = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(queue_mu_) {
          return stop_requested_ || size_ > 0;
        };
        cv_.WaitWithTimeout(&queue_mu_, r.wait, wake);
        break;
      }
      case MigratorRound::Next::kWaitLimit: {
        // New work does not help while the limit holds; Stop() and a new
        // rate do.
        auto wake = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(queue_mu_) {
          return stop_requested_ || rate_changed_;
        };
        cv_.WaitWithTimeout(&queue_mu_, r.wait, wake);
        break;
      }
    }
  }
}

MigratorRound Migrator::RunOnce() {
  {
    MutexLock lock(&queue_mu_);
    if (threaded_) {
      // Misuse: the thread owns the round state.
      return MigratorRound{MigratorRound::Next::kDone, absl::ZeroDuration(), 0};
    }
    if (state_ == MigratorState::kNotStarted) state_ = MigratorState::kRunning;
  }
  return RunRound();
}

MigratorRound Migrator::RunRound() {
  const absl::Duration cpu0 = clock_->ThreadCpuTime();
  const absl::Time now = clock_->Now();
  {
    MutexLock lock(&queue_mu_);
    if (rate_changed_) {
      bytes_bucket_.SetRate(new_rate_, BurstBytesImpl(options_, new_rate_),
                            now);
      rate_changed_ = false;
    }
  }
  MigratorRound r = DoRound(now);
  const absl::Duration cpu = clock_->ThreadCpuTime() - cpu0;
  cpu_bucket_.Take(absl::ToDoubleSeconds(cpu), clock_->Now());
  {
    MutexLock lock(&stats_mu_);
    counters_.cpu_time += cpu;
  }
  PublishInFlight();
  return r;
}

void Migrator::PublishInFlight() {
  MutexLock lock(&queue_mu_);
  in_flight_ = work_.size() + retry_.size();
  TallyTaken();
  cv_.NotifyAll();  // WaitUntilIdle()
}

void Migrator::TallyTaken() {
  // No lambda here: the thread-safety analysis does not carry the held
  // lock into one.
  for (MovedBytes& t : taken_by_node_) t = MovedBytes{};
  for (const std::vector<Entry>* list : {&work_, &retry_}) {
    for (const Entry& e : *list) {
      const MoveRequest& r = e.req;
      const int from = e.queried && e.actual_from >= 0 ? e.actual_from
                       : r.from_node >= 0              ? r.from_node
                                                       : r.planned_from;
      // Grows only when a node id larger than any before appears.
      const size_t need = static_cast<size_t>(std::max(r.to_node, from)) + 1;
      if (need > taken_by_node_.size()) taken_by_node_.resize(need);
      if (r.to_node >= 0) taken_by_node_[r.to_node].in += r.page_bytes;
      if (from >= 0) taken_by_node_[from].out += r.page_bytes;
    }
  }
}

MigratorRound Migrator::DoRound(absl::Time now) {
  using Next = MigratorRound::Next;
  if (!Running()) {
    return MigratorRound{Next::kDone, absl::ZeroDuration(), 0};
  }
  // CPU budget: a round that overspent leaves a debt to wait out first.
  if (cpu_bucket_.Available(now) < 0) {
    const absl::Duration d = cpu_bucket_.TimeUntil(0, now);
    MutexLock lock(&stats_mu_);
    counters_.cpu_budget_wait += d;
    return MigratorRound{Next::kWaitLimit, d, 0};
  }

  TakeWork(now);
  if (work_.empty()) {
    if (retry_.empty()) {
      return MigratorRound{Next::kWaitForWork, absl::InfiniteDuration(), 0};
    }
    return MigratorRound{Next::kWaitForWork, retry_.front().not_before - now,
                         0};
  }
  Admit(now);

  if (std::any_of(work_.begin(), work_.end(),
                  [](const Entry& e) { return !e.queried; })) {
    if (!CheckTarget()) return MigratorRound{Next::kDone, {}, 0};
    if (!QueryPlacement(now)) return MigratorRound{Next::kDone, {}, 0};
  }
  if (work_.empty()) return MigratorRound{Next::kMore, {}, 0};

  // One target node per call: the oldest request's.
  const int node = work_.front().req.to_node;
  std::vector<size_t>& group = group_;
  group.clear();
  double group_bytes = 0;
  for (size_t i = 0; i < work_.size(); ++i) {
    if (work_[i].req.to_node != node) continue;
    group.push_back(i);
    group_bytes += work_[i].req.page_bytes;
  }
  // Wait for a full call's worth of tokens (or a full bucket) rather than
  // trickling out tiny calls.
  const double need = std::min(group_bytes, bytes_bucket_.capacity());
  const double avail = bytes_bucket_.Available(now);
  if (avail < need) {
    const absl::Duration d = bytes_bucket_.TimeUntil(need, now);
    MutexLock lock(&stats_mu_);
    counters_.rate_limit_wait += d;
    return MigratorRound{Next::kWaitLimit, d, 0};
  }
  size_t n = 0;
  double bytes = 0;
  while (n < group.size() && bytes + work_[group[n]].req.page_bytes <= avail) {
    bytes += work_[group[n]].req.page_bytes;
    ++n;
  }
  bytes_bucket_.Take(bytes, now);
  if (!CheckTarget()) return MigratorRound{Next::kDone, {}, 0};
  size_t moved = 0;
  if (!MoveGroup(group, n, node, &moved)) {
    return MigratorRound{Next::kDone, {}, moved};
  }
  return MigratorRound{Next::kMore, {}, moved};
}

void Migrator::TakeWork(absl::Time now) {
  const size_t batch = options_.batch_pages;
  while (work_.size() < batch && !retry_.empty() &&
         retry_.front().not_before <= now) {
    std::pop_heap(retry_.begin(), retry_.end(), LaterFirst());
    work_.push_back(retry_.back());
    retry_.pop_back();
  }
  size_t duplicates = 0;
  {
    MutexLock lock(&queue_mu_);
    const size_t cap = ring_.size();
    while (work_.size() < batch && size_ > 0) {
      Entry e;
      e.req = ring_[head_];
      head_ = (head_ + 1) % cap;
      --size_;
      work_.push_back(e);
    }
    duplicates = DropDuplicates();
    // Published in the same critical section as the pop, so WaitUntilIdle()
    // never sees the requests in neither place (nor QueuedBytesByNode).
    in_flight_ = work_.size() + retry_.size();
    TallyTaken();
  }
  if (duplicates > 0) {  // queue_mu_ and stats_mu_ are never held together
    MutexLock lock(&stats_mu_);
    counters_.skipped_duplicate += duplicates;
  }
}

size_t Migrator::DropDuplicates() {
  if (work_.size() < 2) return 0;
  by_page_.clear();
  for (size_t i = 0; i < work_.size(); ++i) {
    // A 2 MiB request and a 4 KiB one at the same address are different
    // pages.
    by_page_.push_back({work_[i].req.vaddr, work_[i].req.page_bytes, i});
  }
  std::sort(by_page_.begin(), by_page_.end());
  flags_.assign(work_.size(), 0);
  size_t dropped = 0;
  // Of each run of one page, the newest (highest index: taken last, so
  // submitted last) is kept: it is the latest plan for the page.
  for (size_t k = 0; k + 1 < by_page_.size(); ++k) {
    if (std::get<0>(by_page_[k]) == std::get<0>(by_page_[k + 1]) &&
        std::get<1>(by_page_[k]) == std::get<1>(by_page_[k + 1])) {
      flags_[std::get<2>(by_page_[k])] = 1;
      ++dropped;
    }
  }
  if (dropped == 0) return 0;
  size_t out = 0;
  for (size_t i = 0; i < work_.size(); ++i) {
    if (!flags_[i]) work_[out++] = work_[i];
  }
  work_.resize(out);
  return dropped;
}

void Migrator::Admit(absl::Time now) {
  MutexLock lock(&stats_mu_);
  auto refused = [&](const Entry& e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(stats_mu_) {
    if (pingpong_.IsHeld(e.req.vaddr, now)) {
      ++counters_.skipped_held;
      return true;
    }
    if (NodeBackedOffAt(e.req.to_node, now)) {
      ++counters_.skipped_node_backoff;
      return true;
    }
    return false;
  };
  work_.erase(std::remove_if(work_.begin(), work_.end(), refused), work_.end());
}

bool Migrator::EndOnCallError(long rc) {
  if (rc == -ESRCH) {
    End(MigratorState::kTargetExited, absl::OkStatus());
    return true;
  }
  if (rc == -EPERM) {
    End(MigratorState::kFailed,
        absl::PermissionDeniedError(absl::StrCat(
            "move_pages ", target_.Describe(),
            ": EPERM; moving another process's pages needs CAP_SYS_NICE and "
            "ptrace read access to it (run hotpage as root or grant "
            "cap_sys_nice,cap_sys_ptrace)")));
    return true;
  }
  return false;
}

bool Migrator::TargetStillThere(long rc) {
  // A process that exited between the check and the call is a zombie (or
  // gone) by now: move_pages answers EINVAL for a zombie (no mm), not
  // ESRCH. Re-check before blaming the pages.
  if (CheckTarget()) return true;
  MutexLock lock(&stats_mu_);
  ++counters_.call_errors[ErrnoSlot(static_cast<int>(-rc), kErrnoSlots)];
  return false;
}

bool Migrator::CheckTarget() {
  switch (target_.StillSame()) {
    case TargetState::kSame:
      return true;
    case TargetState::kExited:
      End(MigratorState::kTargetExited, absl::OkStatus());
      return false;
    case TargetState::kReused:
      End(MigratorState::kPidReused,
          absl::FailedPreconditionError(absl::StrCat(
              target_.Describe(),
              " has exited and its pid now names another process (start "
              "time changed from ",
              target_.start_time_ticks(),
              " ticks); no page of the new process was touched. Attach "
              "again to migrate the new process")));
      return false;
    case TargetState::kUnverified:
      End(MigratorState::kFailed,
          absl::FailedPreconditionError(absl::StrCat(
              "cannot verify that ", target_.Describe(),
              " is still the process attached to: /proc/", target_.pid(),
              "/stat is missing or malformed while its pidfd is live; "
              "stopped without moving anything. Check /proc's mount "
              "options (hidepid) and pid namespace")));
      return false;
  }
  return false;
}

MigratorRound Migrator::End(MigratorState state, absl::Status status) {
  MutexLock lock(&queue_mu_);
  if (!Terminal(state_)) {
    state_ = state;
    status_ = std::move(status);
  }
  abandoned_ += size_ + work_.size() + retry_.size();
  size_ = 0;
  work_.clear();
  retry_.clear();
  in_flight_ = 0;
  taken_by_node_.clear();
  cv_.NotifyAll();
  return MigratorRound{MigratorRound::Next::kDone, absl::ZeroDuration(), 0};
}

void Migrator::Fail(int err) {
  ++counters_.failed[ErrnoSlot(err, kErrnoSlots)];
}

bool Migrator::QueryPlacement(absl::Time now) {
  addrs_.clear();
  std::vector<size_t>& idx = index_;
  idx.clear();
  for (size_t i = 0; i < work_.size(); ++i) {
    if (work_[i].queried) continue;
    idx.push_back(i);
    addrs_.push_back(work_[i].req.vaddr);
  }
  status_buf_.assign(addrs_.size(), kPageStatusUnset);
  const long rc =
      mover_->Query(target_.pid(), addrs_, absl::MakeSpan(status_buf_));
  if (rc < 0 && rc != -ESRCH && rc != -EPERM && !TargetStillThere(rc)) {
    return false;
  }
  std::vector<char>& drop = flags_;
  drop.assign(work_.size(), 0);
  {
    MutexLock lock(&stats_mu_);
    ++counters_.query_calls;
    counters_.pages_queried += addrs_.size();
    if (rc < 0) {
      const int err = static_cast<int>(-rc);
      ++counters_.call_errors[ErrnoSlot(err, kErrnoSlots)];
      if (err != ESRCH && err != EPERM) {
        for (size_t k = 0; k < idx.size(); ++k) {
          Fail(err);
          drop[idx[k]] = 1;
        }
      }
    } else {
      for (size_t k = 0; k < idx.size(); ++k) {
        Entry& e = work_[idx[k]];
        const int s = status_buf_[k];
        if (s == kPageStatusUnset) {
          Fail(EIO);  // the kernel wrote nothing: never seen; be safe
          drop[idx[k]] = 1;
        } else if (s < 0) {
          Fail(-s);  // -ENOENT (not present), -EFAULT (not mapped), ...
          drop[idx[k]] = 1;
        } else if (s == e.req.to_node) {
          if (e.maybe_moved) {
            Moved(e, now);  // our aborted group did move it after all
          } else {
            ++counters_.already_on_target;
          }
          drop[idx[k]] = 1;
        } else if (e.req.from_node >= 0 && s != e.req.from_node) {
          ++counters_.skipped_stale;
          drop[idx[k]] = 1;
        } else {
          e.queried = true;
          e.actual_from = s;
        }
      }
    }
  }
  if (EndOnCallError(rc)) return false;
  size_t out = 0;
  for (size_t i = 0; i < work_.size(); ++i) {
    if (!drop[i]) work_[out++] = work_[i];
  }
  work_.resize(out);
  return true;
}

void Migrator::Moved(const Entry& e, absl::Time now) {
  if (e.req.reason == MoveReason::kPromote) {
    ++counters_.promoted_pages;
    counters_.promoted_bytes += e.req.page_bytes;
  } else {
    ++counters_.demoted_pages;
    counters_.demoted_bytes += e.req.page_bytes;
  }
  counters_.hot_to_moved.Record(now - e.req.hot_since);
  counters_.moved_in_bytes[e.req.to_node] += e.req.page_bytes;
  const int from = e.actual_from >= 0 ? e.actual_from : e.req.from_node;
  if (from >= 0) counters_.moved_out_bytes[from] += e.req.page_bytes;
  if (!moved_log_.empty()) {
    MovedPage& m = moved_log_[moved_seq_ % moved_log_.size()];
    m.vaddr = e.req.vaddr;
    m.page_bytes = e.req.page_bytes;
    m.from_node = static_cast<int16_t>(from);
    m.to_node = static_cast<int16_t>(e.req.to_node);
  }
  ++moved_seq_;
  if (e.actual_from >= 0) {
    pingpong_.RecordMove(e.req.vaddr, e.actual_from, e.req.to_node, now);
  }
}

void Migrator::Retry(Entry e, int err, absl::Time now) {
  if (e.attempts >= options_.max_retries) {
    ++counters_.retries_exhausted;
    Fail(err);
    return;
  }
  if (retry_.size() >= retry_capacity_) {
    ++counters_.dropped_retry_full;
    Fail(err);
    return;
  }
  ++e.attempts;
  e.queried = false;
  e.not_before = now + options_.retry_delay * (int64_t{1} << (e.attempts - 1));
  ++counters_.retries;
  retry_.push_back(std::move(e));
  std::push_heap(retry_.begin(), retry_.end(), LaterFirst());
}

bool Migrator::MoveGroup(const std::vector<size_t>& group, size_t n, int node,
                         size_t* moved) {
  const size_t moved_before = *moved;
  addrs_.clear();
  for (size_t k = 0; k < n; ++k) addrs_.push_back(work_[group[k]].req.vaddr);
  nodes_.assign(n, node);
  status_buf_.assign(n, kPageStatusUnset);
  const long rc =
      mover_->Move(target_.pid(), addrs_, nodes_, absl::MakeSpan(status_buf_));
  if (rc < 0 && rc != -ESRCH && rc != -EPERM && !TargetStillThere(rc)) {
    return false;
  }
  const absl::Time after = clock_->Now();
  double unmoved_bytes = 0;
  bool backoff = false;
  {
    MutexLock lock(&stats_mu_);
    ++counters_.move_calls;
    counters_.pages_attempted += n;
    const int call_err = rc < 0 ? static_cast<int>(-rc) : 0;
    if (call_err != 0)
      ++counters_.call_errors[ErrnoSlot(call_err, kErrnoSlots)];
    const bool ended = call_err == ESRCH || call_err == EPERM;
    for (size_t k = 0; k < n && !ended; ++k) {
      Entry& e = work_[group[k]];
      const int s = status_buf_[k];
      if (s == node) {
        Moved(e, after);
        ++*moved;
        continue;
      }
      unmoved_bytes += e.req.page_bytes;
      if (s == kPageStatusUnset) {
        if (call_err == 0) {
          // The kernel gave up on this group (positive return): the page may
          // or may not have moved; the retry's query will tell.
          e.maybe_moved = true;
          Retry(e, EBUSY, after);
        } else {
          if (call_err == ENOMEM) backoff = true;
          Fail(call_err);
        }
      } else if (s == -EBUSY) {
        Retry(e, EBUSY, after);
      } else if (s == -ENOMEM) {
        backoff = true;
        Fail(ENOMEM);
      } else if (s == -EACCES) {
        // Mapped by other processes too: it will not move while they map
        // it, so the policy is told (IsHeld) not to plan it again for a
        // ping-pong hold's time.
        ++counters_.shared_skipped;
        pingpong_.Hold(e.req.vaddr, after, options_.pingpong.hold);
        Fail(EACCES);
      } else if (s < 0) {
        Fail(-s);  // -EFAULT, -ENOENT, ...
      } else {
        ++counters_.skipped_stale;  // another node: not ours to fight
      }
    }
  }
  if (backoff) {
    BackOffNode(node, after);
  } else if (*moved > moved_before) {
    NodeTookPages(node);
  }
  bytes_bucket_.Give(unmoved_bytes, after);
  if (EndOnCallError(rc)) return false;
  // Remove the group's first n entries from work_ (all are settled).
  std::vector<char>& done = flags_;
  done.assign(work_.size(), 0);
  for (size_t k = 0; k < n; ++k) done[group[k]] = 1;
  size_t out = 0;
  for (size_t i = 0; i < work_.size(); ++i) {
    if (!done[i]) work_[out++] = work_[i];
  }
  work_.resize(out);
  return true;
}

}  // namespace hotpage
