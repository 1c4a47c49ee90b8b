#include "migrator/simulated_migrator.h"

#include <algorithm>
#include <cerrno>

namespace hotpage {
namespace {

constexpr int kMaxNode = 1 << 12;  // as the Migrator's validity check

MigratorOptions Sanitized(MigratorOptions o) {
  o.queue_capacity = std::max<size_t>(o.queue_capacity, 1);
  o.batch_pages = std::clamp<size_t>(o.batch_pages, 1, 1 << 16);
  return o;
}

}  // namespace

absl::Time SimTime(uint64_t ns) {
  return absl::UnixEpoch() + absl::Hours(1) + absl::Nanoseconds(static_cast<int64_t>(ns));
}

SimulatedMigrator::SimulatedMigrator(const MigratorOptions& options, const MigrationCost& cost,
                                     SimulatedMemory* memory, uint64_t start_ns)
    : options_(Sanitized(options)),
      cost_(cost),
      memory_(memory),
      pingpong_(options_.pingpong),
      bucket_(options_.rate_limit_bytes_per_sec,
              MigratorBurstBytes(options_, options_.rate_limit_bytes_per_sec), SimTime(start_ns)),
      cursor_ns_(start_ns) {
  work_.reserve(options_.batch_pages);
  group_.reserve(options_.batch_pages);
  done_.reserve(options_.batch_pages);
}

bool SimulatedMigrator::Valid(const MoveRequest& r) {
  if (r.page_bytes != kBasePageBytes && r.page_bytes != kHugePageBytes) return false;
  if (r.vaddr == 0 || r.vaddr % r.page_bytes != 0) return false;
  if (r.to_node < 0 || r.to_node >= kMaxNode) return false;
  if (r.from_node < -1 || r.from_node >= kMaxNode) return false;
  return r.from_node != r.to_node;
}

bool SimulatedMigrator::BackedOff(int node, uint64_t now_ns) const {
  auto it = backoff_until_ns_.find(node);
  return it != backoff_until_ns_.end() && it->second > now_ns;
}

size_t SimulatedMigrator::Submit(absl::Span<const MoveRequest> requests, uint64_t now_ns) {
  size_t n = 0;
  for (const MoveRequest& r : requests) {
    if (!Valid(r)) {
      ++stats_.dropped_invalid;
    } else if (BackedOff(r.to_node, now_ns)) {
      ++stats_.dropped_node_backoff;
    } else if (queue_.size() >= options_.queue_capacity) {
      ++stats_.dropped_queue_full;
    } else {
      queue_.push_back(r);
      ++n;
    }
  }
  stats_.submitted += n;
  if (n > 0 && idle_) {
    idle_ = false;
    cursor_ns_ = std::max(cursor_ns_, now_ns);
  }
  return n;
}

void SimulatedMigrator::RunUntil(uint64_t now_ns) {
  while (!idle_ && cursor_ns_ <= now_ns) Step();
}

void SimulatedMigrator::Step() {
  const uint64_t now = cursor_ns_;
  const absl::Time now_t = SimTime(now);
  ++stats_.rounds;
  // TakeWork: top the work list up to a batch from the queue.
  while (work_.size() < options_.batch_pages && !queue_.empty()) {
    work_.push_back(Entry{queue_.front()});
    queue_.pop_front();
  }
  if (work_.empty()) {
    idle_ = true;
    return;
  }
  // Admit: holds and back-offs.
  work_.erase(std::remove_if(work_.begin(), work_.end(),
                             [&](const Entry& e) {
                               if (pingpong_.IsHeld(e.req.vaddr, now_t)) {
                                 ++stats_.skipped_held;
                                 return true;
                               }
                               if (BackedOff(e.req.to_node, now)) {
                                 ++stats_.skipped_node_backoff;
                                 return true;
                               }
                               return false;
                             }),
              work_.end());
  // QueryPlacement for entries not queried yet.
  work_.erase(std::remove_if(work_.begin(), work_.end(),
                             [&](Entry& e) {
                               if (e.queried) return false;
                               const int s = memory_->NodeOf(e.req.vaddr);
                               if (s < 0) {
                                 ++stats_.failed_enoent;
                                 return true;
                               }
                               if (s == e.req.to_node) {
                                 ++stats_.already_on_target;
                                 return true;
                               }
                               if (e.req.from_node >= 0 && s != e.req.from_node) {
                                 ++stats_.skipped_stale;
                                 return true;
                               }
                               e.queried = true;
                               e.actual_from = s;
                               return false;
                             }),
              work_.end());
  if (work_.empty()) return;  // kMore: the next round starts now

  // One target node per call: the oldest request's.
  const int node = work_.front().req.to_node;
  group_.clear();
  double group_bytes = 0;
  for (size_t i = 0; i < work_.size(); ++i) {
    if (work_[i].req.to_node != node) continue;
    group_.push_back(i);
    group_bytes += work_[i].req.page_bytes;
  }
  const double need = std::min(group_bytes, bucket_.unlimited() ? group_bytes : bucket_.capacity());
  const double avail = bucket_.Available(now_t);
  if (avail < need) {
    ++stats_.rate_limit_waits;
    cursor_ns_ = now + static_cast<uint64_t>(absl::ToInt64Nanoseconds(bucket_.TimeUntil(need, now_t)));
    if (cursor_ns_ == now) ++cursor_ns_;
    return;
  }
  size_t n = 0;
  double bytes = 0;
  while (n < group_.size() && bytes + work_[group_[n]].req.page_bytes <= avail) {
    bytes += work_[group_[n]].req.page_bytes;
    ++n;
  }
  bucket_.Take(bytes, now_t);
  ++stats_.move_calls;
  uint64_t call_ns = cost_.per_call_ns;
  memory_->AddOverheadNs(cost_.per_call_ns);
  double unmoved = 0;
  bool backoff = false;
  for (size_t k = 0; k < n; ++k) {
    const Entry& e = work_[group_[k]];
    // A 2 MiB request moves its 512 base pages (the simulated memory knows
    // 4 KiB pages only); charged as one request, as the Migrator does.
    bool any_moved = false, enomem = false;
    for (uint64_t off = 0; off < e.req.page_bytes; off += kBasePageBytes) {
      const int before = memory_->NodeOf(e.req.vaddr + off);
      if (before < 0) continue;
      const SimulatedMemory::MoveResult r = memory_->Move(e.req.vaddr + off, node, now);
      call_ns += r.cost_ns;
      if (r.status == node) {
        if (before == node) continue;
        any_moved = true;
        const int bt = memory_->tier(before), nt = memory_->tier(node);
        ++(nt < bt ? stats_.promoted_pages : nt > bt ? stats_.demoted_pages : stats_.lateral_pages);
        stats_.moved_bytes += kBasePageBytes;
      } else if (r.status == -ENOMEM) {
        enomem = true;
      }
    }
    if (any_moved) {
      if (e.actual_from >= 0 &&
          pingpong_.RecordMove(e.req.vaddr, e.actual_from, node, now_t)) {
        ++stats_.pingpong_pages;
      }
    } else {
      unmoved += e.req.page_bytes;
    }
    if (enomem) {
      ++stats_.failed_enomem;
      backoff = true;
    }
  }
  if (backoff) {
    const uint64_t d = static_cast<uint64_t>(absl::ToInt64Nanoseconds(options_.enomem_backoff));
    backoff_until_ns_[node] = d > 0 ? now + d : UINT64_MAX;
  }
  bucket_.Give(unmoved, now_t);
  // Remove the call's entries (all settled).
  done_.assign(work_.size(), 0);
  for (size_t k = 0; k < n; ++k) done_[group_[k]] = 1;
  size_t out = 0;
  for (size_t i = 0; i < work_.size(); ++i) {
    if (!done_[i]) work_[out++] = work_[i];
  }
  work_.resize(out);
  cursor_ns_ = now + std::max<uint64_t>(call_ns, 1);
}

bool SimulatedMigrator::IsHeld(uint64_t vaddr, uint64_t now_ns) const {
  return pingpong_.IsHeld(vaddr, SimTime(now_ns));
}

std::vector<int> SimulatedMigrator::BackedOffNodes(uint64_t now_ns) const {
  std::vector<int> out;
  for (const auto& [node, until] : backoff_until_ns_) {
    if (until > now_ns) out.push_back(node);
  }
  return out;
}

SimulatedMigratorStats SimulatedMigrator::stats() const {
  SimulatedMigratorStats s = stats_;
  s.queue_depth = queue_.size() + work_.size();
  return s;
}

}  // namespace hotpage
