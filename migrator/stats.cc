#include "migrator/stats.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/base/status_macros.h"

namespace hotpage {

int LatencyHistogram::BucketOf(absl::Duration d) {
  const int64_t us = absl::ToInt64Microseconds(d);
  if (us < 1) return 0;
  // bucket i holds [2^(i-1), 2^i): i = floor(log2(us)) + 1.
  const int b = 64 - __builtin_clzll(static_cast<uint64_t>(us));
  return std::min(b, kBuckets - 1);
}

absl::Duration LatencyHistogram::BucketUpperBound(int bucket) {
  if (bucket >= kBuckets - 1) return absl::InfiniteDuration();
  return absl::Microseconds(int64_t{1} << bucket);
}

void LatencyHistogram::Record(absl::Duration d) {
  if (d < absl::ZeroDuration()) d = absl::ZeroDuration();
  ++buckets_[BucketOf(d)];
  ++count_;
  sum_ += d;
  max_ = std::max(max_, d);
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  for (int i = 0; i < kBuckets; ++i) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  max_ = std::max(max_, other.max_);
}

absl::Duration LatencyHistogram::Mean() const {
  return count_ == 0 ? absl::ZeroDuration() : sum_ / count_;
}

absl::Duration LatencyHistogram::Quantile(double q) const {
  if (count_ == 0) return absl::ZeroDuration();
  q = std::clamp(q, 0.0, 1.0);
  // Rank of the q-quantile, 1-based: the smallest value with at least
  // ceil(q * count) values at or below it.
  const uint64_t rank =
      std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(q * count_)));
  uint64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += buckets_[i];
    if (seen >= rank) return std::min(BucketUpperBound(i), max_);
  }
  return max_;
}

const char* MigratorStateName(MigratorState s) {
  switch (s) {
    case MigratorState::kNotStarted:
      return "not_started";
    case MigratorState::kRunning:
      return "running";
    case MigratorState::kStopped:
      return "stopped";
    case MigratorState::kTargetExited:
      return "target_exited";
    case MigratorState::kPidReused:
      return "pid_reused";
    case MigratorState::kFailed:
      return "failed";
  }
  return "?";
}

uint64_t MigratorStats::failed_pages() const {
  uint64_t n = 0;
  for (const auto& [err, count] : failed_pages_by_errno) n += count;
  return n;
}

uint64_t MigratorStats::settled() const {
  return moved_pages() + failed_pages() + skipped_held + skipped_node_backoff +
         skipped_stale + already_on_target + skipped_duplicate + abandoned;
}

uint64_t MigratorStats::failed(int err) const {
  auto it = failed_pages_by_errno.find(err);
  return it == failed_pages_by_errno.end() ? 0 : it->second;
}

namespace {

std::string ErrnoMap(const std::map<int, uint64_t>& m) {
  std::string out = "{";
  for (const auto& [err, count] : m) {
    if (out.size() > 1) out += ",";
    absl::StrAppend(&out, ErrnoName(err), ":", count);
  }
  return out + "}";
}

std::string Mib(uint64_t bytes) {
  return absl::StrFormat("%.1f MiB", bytes / 1048576.0);
}

}  // namespace

std::string MigratorStats::ToString() const {
  return absl::StrCat(
      "state=", MigratorStateName(state), " promoted=", promoted_pages, " (",
      Mib(promoted_bytes), ") demoted=", demoted_pages, " (",
      Mib(demoted_bytes), ") failed=", ErrnoMap(failed_pages_by_errno),
      " call_errors=", ErrnoMap(call_errors_by_errno), " retries=", retries,
      " retries_exhausted=", retries_exhausted, " submitted=", submitted,
      " dropped{queue_full=", dropped_queue_full, " invalid=", dropped_invalid,
      " not_running=", dropped_not_running,
      " node_backoff=", dropped_node_backoff,
      " retry_full=", dropped_retry_full, " abandoned=", abandoned,
      "} skipped{held=", skipped_held, " node_backoff=", skipped_node_backoff,
      " stale=", skipped_stale, " on_target=", already_on_target,
      " duplicate=", skipped_duplicate, " shared=", shared_skipped,
      "} pingpong_pages=", pingpong_pages, " held_now=", held_pages_now,
      " calls{query=", query_calls, " move=", move_calls,
      "} hot_to_moved{n=", hot_to_moved.count(),
      " p50=", absl::FormatDuration(hot_to_moved.Quantile(0.5)),
      " p99=", absl::FormatDuration(hot_to_moved.Quantile(0.99)),
      " max=", absl::FormatDuration(hot_to_moved.max()),
      "} rate_limit_wait=", absl::FormatDuration(rate_limit_wait),
      " cpu_budget_wait=", absl::FormatDuration(cpu_budget_wait),
      " cpu=", absl::FormatDuration(cpu_time), " queue=", queue_depth, "/",
      queue_capacity, " in_flight=", in_flight);
}

}  // namespace hotpage
