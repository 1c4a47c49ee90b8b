#include "tools/daemon/rounds_dir.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hotpage {
namespace {

// Bytes as KiB below a MiB, else MiB, one decimal (for the log).
std::string SizeText(uint64_t bytes) {
  if (bytes < (1 << 20)) {
    return absl::StrFormat("%.1f KiB", static_cast<double>(bytes) / 1024);
  }
  return absl::StrFormat("%.1f MiB", static_cast<double>(bytes) / (1 << 20));
}

}  // namespace

RoundsPrunePlan PlanRoundsPrune(std::vector<StateDir::FileInfo> files,
                                const absl::flat_hash_set<std::string>& live,
                                uint64_t max_bytes) {
  RoundsPrunePlan plan;
  for (const StateDir::FileInfo& f : files) {
    plan.total_bytes += f.size_bytes;
    if (live.contains(f.name)) plan.live_bytes += f.size_bytes;
  }
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) {
    return std::tie(a.mtime_ns, a.name) < std::tie(b.mtime_ns, b.name);
  });
  uint64_t total = plan.total_bytes;
  for (const StateDir::FileInfo& f : files) {
    if (total <= max_bytes) break;
    if (live.contains(f.name)) continue;
    plan.remove.push_back(f);
    plan.removed_bytes += f.size_bytes;
    total -= f.size_bytes;
  }
  plan.over = total > max_bytes;
  return plan;
}

RoundsDir::File::~File() { dir_->Release(name_); }

RoundsDir::RoundsDir(StateDir dir, uint64_t file_max_bytes,
                     uint64_t dir_max_bytes, std::ostream* log)
    : path_(dir.path()),
      file_max_bytes_(file_max_bytes),
      dir_max_bytes_(dir_max_bytes),
      log_(log),
      dir_(std::move(dir)) {}

absl::StatusOr<std::unique_ptr<RoundsDir::File>> RoundsDir::Create(
    absl::string_view name) {
  if (!absl::EndsWith(name, kRoundsFileSuffix)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rounds file ", name, ": must end in ", kRoundsFileSuffix));
  }
  MutexLock l(&mu_);
  PruneLocked();
  absl::StatusOr<std::unique_ptr<AppendOnlyFile>> f =
      dir_.CreateAppendOnly(name);
  if (!f.ok()) return f.status();
  (*f)->set_max_bytes(file_max_bytes_);
  live_.emplace_back(name);
  return std::unique_ptr<File>(
      new File(this, std::string(name), *std::move(f)));
}

void RoundsDir::Prune() {
  MutexLock l(&mu_);
  PruneLocked();
}

void RoundsDir::Release(const std::string& name) {
  MutexLock l(&mu_);
  if (auto it = std::find(live_.begin(), live_.end(), name); it != live_.end())
    live_.erase(it);
}

void RoundsDir::PruneLocked() {
  absl::StatusOr<std::vector<StateDir::FileInfo>> files =
      dir_.List(kRoundsFileSuffix);
  if (!files.ok()) {
    *log_ << "hotpage daemon: warning: rounds: " << files.status().message()
          << "; nothing pruned\n";
    return;
  }
  const absl::flat_hash_set<std::string> live(live_.begin(), live_.end());
  const RoundsPrunePlan plan =
      PlanRoundsPrune(*std::move(files), live, dir_max_bytes_);
  size_t removed = 0;
  uint64_t removed_bytes = 0;
  for (const StateDir::FileInfo& f : plan.remove) {
    if (absl::Status s = dir_.Remove(f.name); !s.ok()) {
      *log_ << "hotpage daemon: warning: rounds: " << s.message() << "\n";
      continue;
    }
    ++removed;
    removed_bytes += f.size_bytes;
  }
  if (removed > 0) {
    *log_ << "hotpage daemon: rounds: removed " << removed
          << " file(s) of ended processes from " << path_ << " ("
          << SizeText(removed_bytes) << ", the least recently written first) "
          << "to keep its rounds files within rounds_dir_max_bytes ("
          << SizeText(dir_max_bytes_) << ")\n";
  }
  if (plan.over && !said_over_) {
    *log_ << "hotpage daemon: warning: rounds: the files of running "
          << "processes in " << path_ << " hold " << SizeText(plan.live_bytes)
          << ", past rounds_dir_max_bytes (" << SizeText(dir_max_bytes_)
          << "); they are not removed while written, and each stops at "
          << "rounds_max_bytes (" << SizeText(file_max_bytes_) << ")\n";
  }
  said_over_ = plan.over;
}

}  // namespace hotpage
