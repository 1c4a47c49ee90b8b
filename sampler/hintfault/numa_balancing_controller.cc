#include "sampler/hintfault/numa_balancing_controller.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <iostream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tools/base/clock.h"
#include "tools/base/kernel/numa_maps.h"
#include "tools/base/kernel/proc_stat.h"
#include "tools/base/state_dir.h"
#include "tools/base/status_macros.h"

namespace hotpage {
namespace {

constexpr char kScanPeriodMinDebugfs[] =
    "/sys/kernel/debug/sched/numa_balancing/scan_period_min_ms";

bool IsSysctlNumber(absl::string_view v) {
  if (v.empty() || v.size() > 10) return false;
  for (char c : v) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool ParseDecimal(absl::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return absl::SimpleAtoi(s, out);
}

}  // namespace

std::string DescribeHintFaultSysctlChanges() {
  return "kernel.numa_balancing (to 2, memory tiering; 3 if it was 1 or 3) and "
         "kernel.numa_balancing_promote_rate_limit_MBps (to 0), system-wide, "
         "while hotpage runs; "
         "they are restored at exit (after a crash or SIGKILL, by the next "
         "`hotpage attach "
         "--source hintfault`)";
}

absl::StatusOr<std::string> WantedNumaBalancing(absl::string_view original) {
  uint64_t v = 0;
  if (!IsSysctlNumber(original) || !ParseDecimal(original, &v)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kernel.numa_balancing reads \"", absl::CEscape(original.substr(0, 32)),
        "\", not a number"));
  }
  return absl::StrCat(2 | (v & 1));
}

// --- the source
// ----------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<NumaBalancingController>>
NumaBalancingController::Start(const NumaBalancingOptions& options) {
  HOTPAGE_ASSIGN_OR_RETURN(KernelFs fs, KernelFs::Open("/"));
  HOTPAGE_ASSIGN_OR_RETURN(std::unique_ptr<LiveSysfsWriter> writer,
                           LiveSysfsWriter::Open("/"));
  return Start(options, std::move(fs), std::move(writer));
}

absl::StatusOr<std::unique_ptr<NumaBalancingController>>
NumaBalancingController::Start(const NumaBalancingOptions& options, KernelFs fs,
                               std::unique_ptr<SysfsWriter> writer) {
  if (options.pid <= 0)
    return absl::InvalidArgumentError("hintfault source: no target pid");
  std::unique_ptr<NumaBalancingController> s(
      new NumaBalancingController(options, std::move(fs), std::move(writer)));
  HOTPAGE_RETURN_IF_ERROR(s->Setup());
  return s;
}

NumaBalancingController::NumaBalancingController(
    const NumaBalancingOptions& options, KernelFs fs,
    std::unique_ptr<SysfsWriter> writer)
    : options_(options), fs_(std::move(fs)), writer_(std::move(writer)) {}

NumaBalancingController::~NumaBalancingController() {
  absl::Status s = Stop();
  if (!s.ok()) Warn(std::string(s.message()));
}

void NumaBalancingController::Warn(const std::string& line) const {
  if (options_.warn) {
    options_.warn(line);
  } else {
    std::cerr << "hotpage: " << line << "\n";
  }
}

absl::Status NumaBalancingController::OpenStateDir() {
  if (options_.state_dir.empty())
    return absl::InvalidArgumentError("empty hint-fault state directory");
  HOTPAGE_ASSIGN_OR_RETURN(
      StateDir dir,
      StateDir::Open(options_.state_dir, "the hint-fault state directory",
                     "sysctl state"));
  state_dir_.emplace(std::move(dir));
  HOTPAGE_ASSIGN_OR_RETURN(bool locked,
                           state_dir_->TryLock(kHintFaultLockName));
  if (!locked) return absl::FailedPreconditionError(LockHolderDescription());
  return absl::OkStatus();
}

std::string NumaBalancingController::LockHolderDescription() const {
  std::string who = "another process";
  if (absl::StatusOr<std::optional<std::string>> text =
          state_dir_->Read(kHintFaultStateName, kMaxRecoveryStateBytes);
      text.ok() && *text) {
    if (absl::StatusOr<HintFaultState> st = ParseHintFaultState(**text);
        st.ok()) {
      who = absl::StrCat("another hotpage (pid ", st->pid, ")");
    }
  }
  return absl::StrCat(who, " holds ", options_.state_dir, "/",
                      kHintFaultLockName,
                      " and with it the NUMA hint-fault sysctls; only one "
                      "`--source hintfault` can run at a "
                      "time: stop it first");
}

absl::Status NumaBalancingController::RestoreChanges(
    const std::vector<HintFaultSysctlChange>& changes, std::string* done) {
  absl::Status first;
  std::vector<std::string> ok, failed;
  for (auto it = changes.rbegin(); it != changes.rend(); ++it) {
    std::string note;
    if (absl::StatusOr<std::string> now = fs_.ReadTrimmed(it->path);
        now.ok() && *now != it->wanted && *now != it->original) {
      note = absl::StrCat(" (it was ", *now, ", set by someone else)");
    }
    absl::Status s = writer_->Write(it->path, it->original);
    if (s.ok()) {
      ok.push_back(absl::StrCat(SysctlName(it->path), "=", it->original, note));
    } else {
      failed.push_back(
          absl::StrCat("sysctl -w ", SysctlName(it->path), "=", it->original));
      if (first.ok()) first = s;
    }
  }
  std::reverse(ok.begin(), ok.end());
  *done = absl::StrJoin(ok, ", ");
  if (!first.ok()) {
    return absl::Status(
        first.code(),
        absl::StrCat("could not restore the NUMA sysctls: ", first.message(),
                     "; restore them by hand (", absl::StrJoin(failed, "; "),
                     ") and remove ", options_.state_dir, "/",
                     kHintFaultStateName));
  }
  return absl::OkStatus();
}

absl::Status NumaBalancingController::RecoverStale() {
  const std::string shown =
      absl::StrCat(options_.state_dir, "/", kHintFaultStateName);
  HOTPAGE_ASSIGN_OR_RETURN(
      std::optional<std::string> text,
      state_dir_->Read(kHintFaultStateName, kMaxRecoveryStateBytes));
  if (!text) return absl::OkStatus();
  absl::StatusOr<HintFaultState> st = ParseHintFaultState(*text);
  if (!st.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        shown, " is left over but unreadable (", st.status().message(),
        "): check kernel.numa_balancing and "
        "kernel.numa_balancing_promote_rate_limit_MBps by hand, then "
        "remove the file"));
  }
  std::string done;
  HOTPAGE_RETURN_IF_ERROR(RestoreChanges(st->changes, &done));
  HOTPAGE_RETURN_IF_ERROR(state_dir_->Remove(kHintFaultStateName));
  recovered_ =
      absl::StrCat("restored ", done.empty() ? "nothing" : done,
                   " left changed by hotpage pid ", st->pid,
                   ", which exited without restoring them (", shown, ")");
  Warn(recovered_);
  return absl::OkStatus();
}

absl::Status NumaBalancingController::WriteState(const HintFaultState& state) {
  return state_dir_->WriteAtomically(kHintFaultStateName,
                                     FormatHintFaultState(state));
}

void NumaBalancingController::RemoveState() {
  (void)state_dir_->Remove(kHintFaultStateName);
}

absl::Status NumaBalancingController::Setup() {
  HOTPAGE_RETURN_IF_ERROR(OpenStateDir());
  HOTPAGE_RETURN_IF_ERROR(RecoverStale());

  // Originals. Both files must exist: without the rate limit (before Linux
  // 6.0) tiering mode would promote every hint-faulted page by itself.
  absl::StatusOr<std::string> nb = fs_.ReadTrimmed(kNumaBalancingSysctl);
  if (!nb.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot read kernel.numa_balancing (", nb.status().message(),
        "): the hintfault source needs a kernel with CONFIG_NUMA_BALANCING"));
  }
  absl::StatusOr<std::string> rl = fs_.ReadTrimmed(kPromoteRateLimitSysctl);
  if (!rl.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot read kernel.numa_balancing_promote_rate_limit_MBps (",
        rl.status().message(),
        "): it exists from Linux 6.0; without it the kernel would promote "
        "every hint-faulted page itself. "
        "Use another --source"));
  }
  if (!IsSysctlNumber(*rl)) {
    return absl::FailedPreconditionError(
        absl::StrCat("kernel.numa_balancing_promote_rate_limit_MBps reads \"",
                     absl::CEscape(rl->substr(0, 32)), "\", not a number"));
  }
  HOTPAGE_ASSIGN_OR_RETURN(std::string nb_wanted, WantedNumaBalancing(*nb));
  const std::vector<HintFaultSysctlChange> plan = {
      {kNumaBalancingSysctl, *nb, nb_wanted},
      {kPromoteRateLimitSysctl, *rl, "0"},
  };

  // The state file first: a crash from here on is recoverable.
  HintFaultState state;
  state.pid = getpid();
  state.start_time_ticks = SelfStartTimeTicks(fs_);
  state.changes = plan;
  HOTPAGE_RETURN_IF_ERROR(WriteState(state));

  for (const HintFaultSysctlChange& c : plan) {
    absl::Status s = writer_->Write(c.path, c.wanted);
    if (s.ok()) {
      if (absl::StatusOr<std::string> back = fs_.ReadTrimmed(c.path);
          back.ok() && *back != c.wanted) {
        s = absl::FailedPreconditionError(absl::StrCat(
            SysctlName(c.path), " reads ", *back, " after writing ", c.wanted,
            ": the kernel does not take it"));
      }
      changes_.push_back(c);  // written: restore it whatever the read-back said
    }
    if (!s.ok()) {
      std::string done;
      absl::Status r = RestoreChanges(changes_, &done);
      changes_.clear();
      if (r.ok()) RemoveState();
      const bool perm = absl::IsPermissionDenied(s) ||
                        absl::StrContains(s.message(), "EPERM") ||
                        absl::StrContains(s.message(), "EACCES");
      return absl::Status(
          s.code(),
          absl::StrCat("set ", SysctlName(c.path), " to ", c.wanted, ": ",
                       s.message(), perm ? " (needs root: CAP_SYS_ADMIN)" : "",
                       r.ok() ? "" : absl::StrCat("; ", r.message())));
    }
  }

  if (absl::StatusOr<int64_t> p = fs_.ReadInt(kScanPeriodMinDebugfs);
      p.ok() && *p > 0) {
    scan_period_ms_ = static_cast<uint64_t>(*p);
  }
  CountUnscannable();
  HintFaultWatchdogOptions wopt;
  wopt.pid = options_.pid;
  wopt.scan_period_ms = scan_period_ms_;
  wopt.stall_periods = options_.stall_periods;
  const long ticks = sysconf(_SC_CLK_TCK);
  if (ticks > 0) wopt.clock_ticks_per_sec = static_cast<double>(ticks);
  {
    MutexLock l(&mu_);
    watchdog_ = std::make_unique<HintFaultWatchdog>(wopt, changes_);
    watchdog_->mutable_stats().recovered = recovered_;
    watchdog_->mutable_stats().unscannable_slow_pages = unscannable_slow_pages_;
  }
  CheckNow();  // the baseline
  thread_ = std::thread([this] { Run(); });
  return absl::OkStatus();
}

void NumaBalancingController::CountUnscannable() {
  absl::StatusOr<std::string> nm =
      fs_.ReadFile(absl::StrCat("/proc/", options_.pid, "/numa_maps"));
  if (!nm.ok()) return;
  absl::StatusOr<std::vector<NumaMapsRange>> ranges = ParseNumaMaps(*nm);
  if (!ranges.ok()) return;
  uint64_t pages = 0;
  std::string example;
  for (const NumaMapsRange& r : *ranges) {
    // task_numa_work skips VMAs without MPOL_F_MOF (explicit policies
    // without MPOL_F_NUMA_BALANCING) and hugetlbfs.
    const bool scanned =
        !r.huge && (r.mode == MempolicyMode::kDefault || r.numa_balancing);
    if (scanned) continue;
    uint64_t here = 0;
    for (const auto& [node, n] : r.pages_on_node) {
      if (std::find(options_.slow_nodes.begin(), options_.slow_nodes.end(),
                    node) != options_.slow_nodes.end()) {
        here += n * (r.page_size / 4096);
      }
    }
    if (here > 0 && example.empty()) {
      example = absl::StrFormat(
          "%s at 0x%x", r.huge ? "hugetlbfs" : MempolicyModeName(r.mode),
          r.start);
    }
    pages += here;
  }
  unscannable_slow_pages_ = pages;
  if (pages > 0) {
    Warn(
        absl::StrFormat("%d pages (%.1f MiB) of pid %d on slow nodes lie in "
                        "ranges the kernel's NUMA scanner never visits "
                        "(e.g. %s: an explicit memory policy without "
                        "MPOL_F_NUMA_BALANCING, or hugetlbfs): they take no "
                        "hint faults, so this source cannot see them",
                        pages, static_cast<double>(pages) * 4096 / (1 << 20),
                        options_.pid, example));
  }
}

HintFaultObservation NumaBalancingController::Observe() const {
  HintFaultObservation o;
  o.now_ns = MonotonicNs();
  if (absl::StatusOr<std::string> v = fs_.ReadFile("/proc/vmstat"); v.ok())
    o.vmstat = ParseNumaVmstat(*v);
  if (absl::StatusOr<std::string> s =
          fs_.ReadFile(absl::StrCat("/proc/", options_.pid, "/sched"));
      s.ok()) {
    o.scan_seq = ParseNumaScanSeq(*s);
  }
  if (absl::StatusOr<std::string> s =
          fs_.ReadFile(absl::StrCat("/proc/", options_.pid, "/stat"));
      s.ok()) {
    o.target = ParseProcStatCpu(*s);
  }
  for (const HintFaultSysctlChange& c : changes_) {
    absl::StatusOr<std::string> v = fs_.ReadTrimmed(c.path);
    o.sysctls.push_back(v.ok() ? std::optional<std::string>(*v) : std::nullopt);
  }
  if (absl::StatusOr<std::string> d = fs_.ReadTrimmed(kDemotionEnabledPath);
      d.ok()) {
    o.demotion_enabled = ParseDemotionEnabled(*d);
  }
  return o;
}

void NumaBalancingController::CheckNow() {
  const HintFaultObservation o = Observe();
  std::vector<std::string> warnings;
  {
    MutexLock l(&mu_);
    if (watchdog_ == nullptr) return;
    watchdog_->Observe(o, &warnings);
  }
  for (const std::string& w : warnings) Warn(w);
}

void NumaBalancingController::Run() {
  const double cpu0 = ThreadCpuSeconds();
  for (;;) {
    {
      MutexLock l(&mu_);
      auto stop = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stop_thread_;
      };
      if (cv_.WaitWithTimeout(&mu_, options_.check_interval, stop)) break;
    }
    CheckNow();
    MutexLock l(&mu_);
    watchdog_->mutable_stats().watchdog_cpu_seconds = ThreadCpuSeconds() - cpu0;
  }
}

absl::Status NumaBalancingController::Stop() {
  if (stopped_) return stop_status_;
  stopped_ = true;
  if (thread_.joinable()) {
    {
      MutexLock l(&mu_);
      stop_thread_ = true;
      cv_.NotifyAll();
    }
    thread_.join();
  }
  if (!changes_.empty()) {
    std::string done;
    stop_status_ = RestoreChanges(changes_, &done);
    if (stop_status_.ok()) {
      restored_ = absl::StrCat("restored ", done);
      RemoveState();
      changes_.clear();
    }
  }
  if (state_dir_) state_dir_->Unlock();
  return stop_status_;
}

std::string NumaBalancingController::DescribeChanges() const {
  std::vector<std::string> parts;
  for (const HintFaultSysctlChange& c : changes_) {
    parts.push_back(
        absl::StrCat(SysctlName(c.path), " ", c.original, " -> ", c.wanted));
  }
  return absl::StrJoin(parts, ", ");
}

std::string NumaBalancingController::restored() const { return restored_; }

HintFaultStats NumaBalancingController::stats() const {
  MutexLock l(&mu_);
  return watchdog_ ? watchdog_->stats() : HintFaultStats{};
}

std::optional<bool> NumaBalancingController::DemotionEnabled() const {
  MutexLock l(&mu_);
  if (watchdog_ == nullptr || !watchdog_->stats().demotion_known)
    return std::nullopt;
  return watchdog_->stats().demotion_enabled;
}

void NumaBalancingController::AppendJson(JsonWriter* w) const {
  const HintFaultStats s = stats();
  w->BeginObject();
  w->Key("numa_pte_updates");
  w->Uint(s.delta.numa_pte_updates);
  w->Key("numa_hint_faults");
  w->Uint(s.delta.numa_hint_faults);
  w->Key("numa_hint_faults_local");
  w->Uint(s.delta.numa_hint_faults_local);
  w->Key("pgpromote_candidate");
  w->Uint(s.delta.pgpromote_candidate);
  w->Key("pgpromote_success");
  w->Uint(s.delta.pgpromote_success);
  w->Key("numa_pages_migrated");
  w->Uint(s.delta.numa_pages_migrated);
  w->Key("kernel_migrated_pages");
  w->Uint(s.kernel_migrated_pages);
  w->Key("hint_faults_per_sec");
  w->Double(s.hint_faults_per_sec);
  w->Key("scan_passes");
  if (s.scan_seq_known) {
    w->Uint(s.scan_passes);
  } else {
    w->Null();
  }
  w->Key("longest_scan_gap_s");
  w->Double(s.longest_scan_gap_s);
  w->Key("scan_stalled");
  w->Bool(s.scan_stalled);
  w->Key("stall_episodes");
  w->Uint(s.stall_episodes);
  w->Key("sysctl_overrides");
  w->Uint(s.sysctl_overrides);
  w->Key("demotion_enabled");
  if (s.demotion_known) {
    w->Bool(s.demotion_enabled);
  } else {
    w->Null();
  }
  w->Key("demotion_changes");
  w->Uint(s.demotion_changes);
  w->Key("unscannable_slow_pages");
  w->Uint(s.unscannable_slow_pages);
  w->Key("target_minor_faults");
  w->Uint(s.target_minor_faults);
  w->Key("watchdog_cpu_seconds");
  w->Double(s.watchdog_cpu_seconds);
  w->Key("recovered");
  w->String(s.recovered);
  w->EndObject();
}

}  // namespace hotpage
