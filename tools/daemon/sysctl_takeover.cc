#include "tools/daemon/sysctl_takeover.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "sampler/hintfault/hintfault_watchdog.h"
#include "sampler/recovery_state.h"

namespace hotpage {
namespace {

constexpr char kLock[] = "daemon-sysctls.lock";
constexpr char kState[] = "daemon-sysctls";

bool Decimal(absl::string_view v, int64_t max) {
  int64_t x;
  return !v.empty() && v.size() <= 19 &&
         v.find_first_not_of("0123456789") == absl::string_view::npos &&
         absl::SimpleAtoi(v, &x) && x >= 0 && x <= max;
}

bool ValidValue(absl::string_view path, absl::string_view v) {
  if (path == kNumaBalancingSysctl) return Decimal(v, 3);
  if (path == kDemotionEnabledPath) return v == "true" || v == "false";
  // The kernel keeps it as an unsigned int of MB/s.
  if (path == kPromoteRateLimitSysctl) return Decimal(v, 0xffffffffLL);
  return false;
}

std::string ShortName(absl::string_view path) {
  if (path == kNumaBalancingSysctl) return "kernel.numa_balancing";
  if (path == kPromoteRateLimitSysctl) {
    return "kernel.numa_balancing_promote_rate_limit_MBps";
  }
  return "demotion_enabled";
}

}  // namespace

absl::StatusOr<std::vector<SysctlChange>> ParseTakeoverState(
    absl::string_view text) {
  std::vector<SysctlChange> out;
  if (text.size() > 4096) {
    return absl::InvalidArgumentError("state file too large");
  }
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    const size_t eq = line.find('=');
    if (eq == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("bad line '", line, "'"));
    }
    const absl::string_view path = line.substr(0, eq);
    const absl::string_view value = line.substr(eq + 1);
    if (!ValidValue(path, value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("refusing to restore '", line, "'"));
    }
    for (const SysctlChange& c : out) {
      if (c.path == path) {
        return absl::InvalidArgumentError(absl::StrCat(path, " listed twice"));
      }
    }
    out.push_back({std::string(path), std::string(value), std::string()});
  }
  return out;
}

absl::StatusOr<std::unique_ptr<SysctlTakeover>> SysctlTakeover::Apply(
    StateDir* dir, SysfsWriter* writer,
    const std::vector<SysctlChange>& changes, std::string* recovered) {
  for (const SysctlChange& c : changes) {
    if (!ValidValue(c.path, c.from) || !ValidValue(c.path, c.to)) {
      return absl::InvalidArgumentError(
          absl::StrCat("not a change the daemon makes: ", c.path, " ", c.from,
                       " -> ", c.to));
    }
  }
  absl::StatusOr<bool> locked = dir->TryLock(kLock);
  if (!locked.ok()) return locked.status();
  if (!*locked) {
    return absl::FailedPreconditionError(
        absl::StrCat("another hotpage daemon holds ", dir->Display(kLock),
                     ": it has taken over the kernel's tiering already"));
  }
  // A daemon that died without restoring: restore its originals first.
  absl::StatusOr<std::optional<std::string>> stale = dir->Read(kState, 4096);
  if (!stale.ok()) return stale.status();
  if (stale->has_value()) {
    absl::StatusOr<std::vector<SysctlChange>> old = ParseTakeoverState(**stale);
    if (!old.ok()) {
      return absl::DataLossError(
          absl::StrCat(dir->Display(kState), ": ", old.status().message(),
                       "; check the values by hand and remove the file"));
    }
    std::vector<std::string> done;
    for (const SysctlChange& c : *old) {
      if (absl::Status s = writer->Write(c.path, c.from); !s.ok()) return s;
      done.push_back(absl::StrCat(ShortName(c.path), " = ", c.from));
    }
    if (absl::Status s = dir->Remove(kState); !s.ok()) return s;
    if (recovered != nullptr) {
      *recovered = absl::StrCat(
          "restored what a previous daemon changed and did not restore: ",
          absl::StrJoin(done, ", "));
    }
  }
  if (changes.empty()) {
    return std::unique_ptr<SysctlTakeover>(new SysctlTakeover(dir, writer, {}));
  }
  std::string state;
  for (const SysctlChange& c : changes) {
    absl::StrAppend(&state, c.path, "=", c.from, "\n");
  }
  if (absl::Status s = dir->WriteAtomically(kState, state); !s.ok()) return s;
  std::unique_ptr<SysctlTakeover> t(new SysctlTakeover(dir, writer, changes));
  for (size_t i = 0; i < changes.size(); ++i) {
    if (absl::Status s = writer->Write(changes[i].path, changes[i].to);
        !s.ok()) {
      t->changes_.resize(i);  // restore only what was changed
      (void)t->Restore();
      return s;
    }
  }
  return t;
}

std::vector<std::string> SysctlTakeover::Drifted(const KernelFs& fs) const {
  std::vector<std::string> out;
  if (restored_) return out;
  for (const SysctlChange& c : changes_) {
    absl::StatusOr<std::string> now = fs.ReadTrimmed(c.path);
    // demotion_enabled reads "true"/"false", as written.
    if (!now.ok() || *now == c.to) continue;
    out.push_back(absl::StrCat(ShortName(c.path), " is ", *now,
                               " (hotpage set ", c.to, ")"));
  }
  return out;
}

absl::Status SysctlTakeover::Restore() {
  if (restored_) return absl::OkStatus();
  absl::Status first;
  for (auto it = changes_.rbegin(); it != changes_.rend(); ++it) {
    if (absl::Status s = writer_->Write(it->path, it->from);
        !s.ok() && first.ok()) {
      first = s;
    }
  }
  if (!first.ok()) return first;  // the state file stays for the next run
  restored_ = true;
  absl::Status s = dir_->Remove(kState);
  dir_->Unlock();
  return s;
}

SysctlTakeover::~SysctlTakeover() { (void)Restore(); }

std::string SysctlTakeover::Describe() const {
  std::vector<std::string> parts;
  for (const SysctlChange& c : changes_) {
    parts.push_back(absl::StrCat(ShortName(c.path), " ", c.from, " -> ", c.to));
  }
  return absl::StrJoin(parts, ", ");
}

}  // namespace hotpage
