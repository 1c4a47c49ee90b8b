#include "sampler/hintfault_source.h"

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

constexpr char kStateHeader[] = "hotpage-hintfault-state 1";
constexpr size_t kMaxStateBytes = 4096;
constexpr size_t kMaxStateLines = 16;
constexpr char kScanPeriodMinDebugfs[] = "/sys/kernel/debug/sched/numa_balancing/scan_period_min_ms";

bool IsKnownSysctl(absl::string_view path) {
  return path == kNumaBalancingSysctl || path == kPromoteRateLimitSysctl;
}

// A sysctl value hotpage reads or restores: 1 to 10 decimal digits.
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

uint64_t Sub(uint64_t now, uint64_t base) { return now >= base ? now - base : 0; }

NumaVmstat Delta(const NumaVmstat& now, const NumaVmstat& base) {
  NumaVmstat d;
  d.numa_pte_updates = Sub(now.numa_pte_updates, base.numa_pte_updates);
  d.numa_hint_faults = Sub(now.numa_hint_faults, base.numa_hint_faults);
  d.numa_hint_faults_local = Sub(now.numa_hint_faults_local, base.numa_hint_faults_local);
  d.pgpromote_candidate = Sub(now.pgpromote_candidate, base.pgpromote_candidate);
  d.pgpromote_success = Sub(now.pgpromote_success, base.pgpromote_success);
  d.numa_pages_migrated = Sub(now.numa_pages_migrated, base.numa_pages_migrated);
  return d;
}

}  // namespace

std::string SysctlName(absl::string_view proc_sys_path) {
  std::string s(absl::StripPrefix(proc_sys_path, "/proc/sys/"));
  std::replace(s.begin(), s.end(), '/', '.');
  return s;
}

std::string DescribeHintFaultSysctlChanges() {
  return "kernel.numa_balancing (to 2, memory tiering; 3 if it was 1 or 3) and "
         "kernel.numa_balancing_promote_rate_limit_MBps (to 0), system-wide, while hotpage runs; "
         "they are restored at exit (after a crash or SIGKILL, by the next `hotpage attach "
         "--source hintfault`)";
}

absl::StatusOr<std::string> WantedNumaBalancing(absl::string_view original) {
  uint64_t v = 0;
  if (!IsSysctlNumber(original) || !ParseDecimal(original, &v)) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel.numa_balancing reads \"", absl::CEscape(original.substr(0, 32)),
                     "\", not a number"));
  }
  return absl::StrCat(2 | (v & 1));
}

// --- state file -----------------------------------------------------------------

std::string FormatHintFaultState(const HintFaultState& state) {
  std::string out = absl::StrCat(kStateHeader, "\npid ", state.pid, "\nstart_time ",
                                 state.start_time_ticks, "\n");
  for (const HintFaultSysctlChange& c : state.changes) {
    absl::StrAppend(&out, "sysctl ", c.path, " ", c.original, " ", c.wanted, "\n");
  }
  return out;
}

absl::StatusOr<HintFaultState> ParseHintFaultState(absl::string_view text) {
  if (text.size() > kMaxStateBytes) {
    return absl::InvalidArgumentError(absl::StrCat("larger than ", kMaxStateBytes, " bytes"));
  }
  HintFaultState st;
  bool header = false, have_pid = false;
  size_t line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    if (line.empty()) continue;
    if (line_no > kMaxStateLines) return absl::InvalidArgumentError("too many lines");
    auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat("line ", line_no, " (\"",
                                                     absl::CEscape(line.substr(0, 80)), "\"): ", why));
    };
    if (!header) {
      if (line != kStateHeader) return bad(absl::StrCat("expected \"", kStateHeader, "\""));
      header = true;
      continue;
    }
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ');
    uint64_t v = 0;
    if (f[0] == "pid" && f.size() == 2) {
      if (have_pid || !ParseDecimal(f[1], &v) || v == 0 || v > (1u << 22)) return bad("bad pid");
      st.pid = static_cast<int64_t>(v);
      have_pid = true;
    } else if (f[0] == "start_time" && f.size() == 2) {
      if (!ParseDecimal(f[1], &v)) return bad("bad start_time");
      st.start_time_ticks = v;
    } else if (f[0] == "sysctl" && f.size() == 4) {
      if (!IsKnownSysctl(f[1])) return bad("not a sysctl hotpage changes");
      if (!IsSysctlNumber(f[2]) || !IsSysctlNumber(f[3])) return bad("values must be decimal numbers");
      for (const HintFaultSysctlChange& c : st.changes) {
        if (c.path == f[1]) return bad("sysctl listed twice");
      }
      st.changes.push_back({std::string(f[1]), std::string(f[2]), std::string(f[3])});
    } else {
      return bad("unknown line");
    }
  }
  if (!header) return absl::InvalidArgumentError("empty");
  if (!have_pid) return absl::InvalidArgumentError("no pid line");
  return st;
}

// --- kernel counters ----------------------------------------------------------

std::optional<NumaVmstat> ParseNumaVmstat(absl::string_view text) {
  NumaVmstat v;
  bool pte = false, hint = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    const size_t sp = line.find(' ');
    if (sp == absl::string_view::npos) continue;
    const absl::string_view name = line.substr(0, sp);
    uint64_t n = 0;
    if (!ParseDecimal(line.substr(sp + 1), &n)) continue;
    if (name == "numa_pte_updates") {
      v.numa_pte_updates = n;
      pte = true;
    } else if (name == "numa_hint_faults") {
      v.numa_hint_faults = n;
      hint = true;
    } else if (name == "numa_hint_faults_local") {
      v.numa_hint_faults_local = n;
    } else if (name == "pgpromote_candidate") {
      v.pgpromote_candidate = n;
    } else if (name == "pgpromote_success") {
      v.pgpromote_success = n;
    } else if (name == "numa_pages_migrated") {
      v.numa_pages_migrated = n;
    }
  }
  if (!pte || !hint) return std::nullopt;
  return v;
}

std::optional<ProcCpu> ParseProcStatCpu(absl::string_view text) {
  std::optional<ProcStat> st = ParseProcStat(text);
  if (!st || st->utime_ticks > UINT64_MAX - st->stime_ticks) return std::nullopt;
  return ProcCpu{st->minflt, st->utime_ticks + st->stime_ticks};
}

std::optional<uint64_t> ParseNumaScanSeq(absl::string_view proc_pid_sched) {
  for (absl::string_view line : absl::StrSplit(proc_pid_sched, '\n')) {
    line = absl::StripLeadingAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&line, "mm->numa_scan_seq")) continue;
    line = absl::StripLeadingAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&line, ":")) return std::nullopt;
    uint64_t v = 0;
    if (!ParseDecimal(absl::StripAsciiWhitespace(line), &v)) return std::nullopt;
    return v;
  }
  return std::nullopt;
}

// --- watchdog ---------------------------------------------------------------------

HintFaultWatchdog::HintFaultWatchdog(HintFaultWatchdogOptions options,
                                     std::vector<HintFaultSysctlChange> changes)
    : options_(options), changes_(std::move(changes)), overridden_(changes_.size(), false) {}

void HintFaultWatchdog::Observe(const HintFaultObservation& o, std::vector<std::string>* warnings) {
  if (!started_) {
    started_ = true;
    start_ns_ = o.now_ns;
    base_ = last_ = o.vmstat.value_or(NumaVmstat{});
    base_seq_ = last_seq_ = o.scan_seq;
    base_target_ = o.target;
    progress_ns_ = o.now_ns;
    progress_cpu_ticks_ = o.target ? o.target->cpu_ticks : 0;
    stats_.scan_seq_known = o.scan_seq.has_value();
    return;
  }
  ++stats_.checks;
  stats_.elapsed_s = static_cast<double>(Sub(o.now_ns, start_ns_)) / 1e9;

  // Scan progress: a completed pass of the target's mm, or failing that
  // (no /proc/PID/sched) any PTE made PROT_NONE or hint fault anywhere.
  bool progress = false;
  if (o.scan_seq && last_seq_) {
    progress = *o.scan_seq != *last_seq_;
    if (base_seq_) stats_.scan_passes = Sub(*o.scan_seq, *base_seq_);
    stats_.scan_seq_known = true;
  } else if (o.vmstat) {
    progress = o.vmstat->numa_pte_updates != last_.numa_pte_updates ||
               o.vmstat->numa_hint_faults != last_.numa_hint_faults;
  }
  if (o.vmstat) {
    stats_.delta = Delta(*o.vmstat, base_);
    last_ = *o.vmstat;
  }
  if (o.scan_seq) last_seq_ = o.scan_seq;
  if (o.target && base_target_) stats_.target_minor_faults = Sub(o.target->minflt, base_target_->minflt);
  stats_.hint_faults_per_sec =
      stats_.elapsed_s > 0 ? static_cast<double>(stats_.delta.numa_hint_faults) / stats_.elapsed_s : 0;

  const double gap_s = static_cast<double>(Sub(o.now_ns, progress_ns_)) / 1e9;
  stats_.longest_scan_gap_s = std::max(stats_.longest_scan_gap_s, gap_s);
  const double period_s = static_cast<double>(options_.scan_period_ms) / 1e3;
  if (progress) {
    if (stats_.scan_stalled) {
      warnings->push_back(absl::StrFormat(
          "the kernel scans pid %d again (NUMA hint faults resume) after %.1f s without a pass",
          options_.pid, gap_s));
    }
    stats_.scan_stalled = false;
    progress_ns_ = o.now_ns;
    if (o.target) progress_cpu_ticks_ = o.target->cpu_ticks;
  } else if (o.target && !stats_.scan_stalled) {
    const double cpu_s = static_cast<double>(Sub(o.target->cpu_ticks, progress_cpu_ticks_)) /
                         options_.clock_ticks_per_sec;
    if (gap_s >= options_.stall_periods * period_s && cpu_s >= period_s) {
      stats_.scan_stalled = true;
      ++stats_.stall_episodes;
      const std::string what =
          o.scan_seq ? absl::StrCat("completed no NUMA scan pass of pid ", options_.pid, " (numa_scan_seq ",
                                    *o.scan_seq, ")")
                     : "made no PTE PROT_NONE and took no hint fault (numa_pte_updates, numa_hint_faults)";
      warnings->push_back(absl::StrFormat(
          "the kernel %s for %.1f s while the process used %.1f s of CPU (more than %d scan periods of "
          "%d ms): no new hint faults, so no new samples. Causes seen: the kernel's 3%% scan-overhead cap "
          "(slow page-table updates, e.g. under emulation), kernel.numa_balancing changed, or memory "
          "the scanner skips",
          what, gap_s, cpu_s, options_.stall_periods, options_.scan_period_ms));
    }
  }

  // Pages the kernel migrated on its own (system-wide): warn the first time
  // and whenever the count doubles.
  stats_.kernel_migrated_pages = stats_.delta.numa_pages_migrated;
  if (stats_.kernel_migrated_pages > 0 &&
      (warned_migrated_ == 0 || stats_.kernel_migrated_pages >= 2 * warned_migrated_)) {
    warned_migrated_ = stats_.kernel_migrated_pages;
    warnings->push_back(absl::StrCat(
        "the kernel itself migrated ", stats_.kernel_migrated_pages,
        " pages since the start (numa_pages_migrated, system-wide; pgpromote_success ",
        stats_.delta.pgpromote_success,
        ") despite the promotion rate limit of 0: Linux promotes every hint-faulted page regardless of "
        "the limit while a fast node has more than max(1 GiB, 1/16 of the node) free above its "
        "promotion watermark (pgdat_free_space_enough in kernel/sched/fair.c)"));
  }

  for (size_t i = 0; i < changes_.size() && i < o.sysctls.size(); ++i) {
    if (!o.sysctls[i]) continue;
    const bool differs = *o.sysctls[i] != changes_[i].wanted;
    if (differs && !overridden_[i]) {
      ++stats_.sysctl_overrides;
      warnings->push_back(absl::StrCat(
          SysctlName(changes_[i].path), " is now ", *o.sysctls[i], ", not the ", changes_[i].wanted,
          " hotpage set: someone else changed it, so hint-fault sampling ",
          changes_[i].path == kNumaBalancingSysctl ? "stops or changes" : "may let the kernel promote",
          "; hotpage leaves it and restores the original (", changes_[i].original, ") at exit"));
    }
    overridden_[i] = differs;
  }
}

// --- the source ----------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<HintFaultSource>> HintFaultSource::Start(const HintFaultOptions& options) {
  HOTPAGE_ASSIGN_OR_RETURN(KernelFs fs, KernelFs::Open("/"));
  HOTPAGE_ASSIGN_OR_RETURN(std::unique_ptr<LiveSysfsWriter> writer, LiveSysfsWriter::Open("/"));
  return Start(options, std::move(fs), std::move(writer));
}

absl::StatusOr<std::unique_ptr<HintFaultSource>> HintFaultSource::Start(
    const HintFaultOptions& options, KernelFs fs, std::unique_ptr<SysfsWriter> writer) {
  if (options.pid <= 0) return absl::InvalidArgumentError("hintfault source: no target pid");
  std::unique_ptr<HintFaultSource> s(new HintFaultSource(options, std::move(fs), std::move(writer)));
  HOTPAGE_RETURN_IF_ERROR(s->Setup());
  return s;
}

HintFaultSource::HintFaultSource(const HintFaultOptions& options, KernelFs fs,
                                 std::unique_ptr<SysfsWriter> writer)
    : options_(options), fs_(std::move(fs)), writer_(std::move(writer)) {}

HintFaultSource::~HintFaultSource() {
  absl::Status s = Stop();
  if (!s.ok()) Warn(std::string(s.message()));
}

void HintFaultSource::Warn(const std::string& line) const {
  if (options_.warn) {
    options_.warn(line);
  } else {
    std::cerr << "hotpage: " << line << "\n";
  }
}

absl::Status HintFaultSource::OpenStateDir() {
  if (options_.state_dir.empty()) return absl::InvalidArgumentError("empty hint-fault state directory");
  HOTPAGE_ASSIGN_OR_RETURN(StateDir dir,
                           StateDir::Open(options_.state_dir, "the hint-fault state directory", "sysctl state"));
  state_dir_.emplace(std::move(dir));
  HOTPAGE_ASSIGN_OR_RETURN(bool locked, state_dir_->TryLock(kHintFaultLockName));
  if (!locked) return absl::FailedPreconditionError(LockHolderDescription());
  return absl::OkStatus();
}

std::string HintFaultSource::LockHolderDescription() const {
  std::string who = "another process";
  if (absl::StatusOr<std::optional<std::string>> text = state_dir_->Read(kHintFaultStateName, kMaxStateBytes);
      text.ok() && *text) {
    if (absl::StatusOr<HintFaultState> st = ParseHintFaultState(**text); st.ok()) {
      who = absl::StrCat("another hotpage (pid ", st->pid, ")");
    }
  }
  return absl::StrCat(who, " holds ", options_.state_dir, "/", kHintFaultLockName,
                      " and with it the NUMA hint-fault sysctls; only one `--source hintfault` can run at a "
                      "time: stop it first");
}

absl::Status HintFaultSource::RestoreChanges(const std::vector<HintFaultSysctlChange>& changes,
                                             std::string* done) {
  absl::Status first;
  std::vector<std::string> ok, failed;
  for (auto it = changes.rbegin(); it != changes.rend(); ++it) {
    std::string note;
    if (absl::StatusOr<std::string> now = fs_.ReadTrimmed(it->path); now.ok() && *now != it->wanted &&
                                                                      *now != it->original) {
      note = absl::StrCat(" (it was ", *now, ", set by someone else)");
    }
    absl::Status s = writer_->Write(it->path, it->original);
    if (s.ok()) {
      ok.push_back(absl::StrCat(SysctlName(it->path), "=", it->original, note));
    } else {
      failed.push_back(absl::StrCat("sysctl -w ", SysctlName(it->path), "=", it->original));
      if (first.ok()) first = s;
    }
  }
  std::reverse(ok.begin(), ok.end());
  *done = absl::StrJoin(ok, ", ");
  if (!first.ok()) {
    return absl::Status(first.code(),
                        absl::StrCat("could not restore the NUMA sysctls: ", first.message(),
                                     "; restore them by hand (", absl::StrJoin(failed, "; "), ") and remove ",
                                     options_.state_dir, "/", kHintFaultStateName));
  }
  return absl::OkStatus();
}

absl::Status HintFaultSource::RecoverStale() {
  const std::string shown = absl::StrCat(options_.state_dir, "/", kHintFaultStateName);
  HOTPAGE_ASSIGN_OR_RETURN(std::optional<std::string> text, state_dir_->Read(kHintFaultStateName, kMaxStateBytes));
  if (!text) return absl::OkStatus();
  absl::StatusOr<HintFaultState> st = ParseHintFaultState(*text);
  if (!st.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        shown, " is left over but unreadable (", st.status().message(),
        "): check kernel.numa_balancing and kernel.numa_balancing_promote_rate_limit_MBps by hand, then "
        "remove the file"));
  }
  std::string done;
  HOTPAGE_RETURN_IF_ERROR(RestoreChanges(st->changes, &done));
  HOTPAGE_RETURN_IF_ERROR(state_dir_->Remove(kHintFaultStateName));
  recovered_ = absl::StrCat("restored ", done.empty() ? "nothing" : done,
                            " left changed by hotpage pid ", st->pid,
                            ", which exited without restoring them (", shown, ")");
  Warn(recovered_);
  return absl::OkStatus();
}

absl::Status HintFaultSource::WriteState(const HintFaultState& state) {
  return state_dir_->WriteAtomically(kHintFaultStateName, FormatHintFaultState(state));
}

void HintFaultSource::RemoveState() { (void)state_dir_->Remove(kHintFaultStateName); }

absl::Status HintFaultSource::Setup() {
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
        "cannot read kernel.numa_balancing_promote_rate_limit_MBps (", rl.status().message(),
        "): it exists from Linux 6.0; without it the kernel would promote every hint-faulted page itself. "
        "Use another --source"));
  }
  if (!IsSysctlNumber(*rl)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "kernel.numa_balancing_promote_rate_limit_MBps reads \"", absl::CEscape(rl->substr(0, 32)),
        "\", not a number"));
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
      if (absl::StatusOr<std::string> back = fs_.ReadTrimmed(c.path); back.ok() && *back != c.wanted) {
        s = absl::FailedPreconditionError(absl::StrCat(SysctlName(c.path), " reads ", *back, " after writing ",
                                                       c.wanted, ": the kernel does not take it"));
      }
      changes_.push_back(c);  // written: restore it whatever the read-back said
    }
    if (!s.ok()) {
      std::string done;
      absl::Status r = RestoreChanges(changes_, &done);
      changes_.clear();
      if (r.ok()) RemoveState();
      const bool perm = absl::IsPermissionDenied(s) || absl::StrContains(s.message(), "EPERM") ||
                        absl::StrContains(s.message(), "EACCES");
      return absl::Status(s.code(), absl::StrCat("set ", SysctlName(c.path), " to ", c.wanted, ": ",
                                                 s.message(), perm ? " (needs root: CAP_SYS_ADMIN)" : "",
                                                 r.ok() ? "" : absl::StrCat("; ", r.message())));
    }
  }

  if (absl::StatusOr<int64_t> p = fs_.ReadInt(kScanPeriodMinDebugfs); p.ok() && *p > 0) {
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

void HintFaultSource::CountUnscannable() {
  absl::StatusOr<std::string> nm = fs_.ReadFile(absl::StrCat("/proc/", options_.pid, "/numa_maps"));
  if (!nm.ok()) return;
  absl::StatusOr<std::vector<NumaMapsRange>> ranges = ParseNumaMaps(*nm);
  if (!ranges.ok()) return;
  uint64_t pages = 0;
  std::string example;
  for (const NumaMapsRange& r : *ranges) {
    // task_numa_work skips VMAs without MPOL_F_MOF (explicit policies
    // without MPOL_F_NUMA_BALANCING) and hugetlbfs.
    const bool scanned = !r.huge && (r.mode == MempolicyMode::kDefault || r.numa_balancing);
    if (scanned) continue;
    uint64_t here = 0;
    for (const auto& [node, n] : r.pages_on_node) {
      if (std::find(options_.slow_nodes.begin(), options_.slow_nodes.end(), node) != options_.slow_nodes.end()) {
        here += n * (r.page_size / 4096);
      }
    }
    if (here > 0 && example.empty()) {
      example = absl::StrFormat("%s at 0x%x", r.huge ? "hugetlbfs" : MempolicyModeName(r.mode), r.start);
    }
    pages += here;
  }
  unscannable_slow_pages_ = pages;
  if (pages > 0) {
    Warn(absl::StrFormat(
        "%d pages (%.1f MiB) of pid %d on slow nodes lie in ranges the kernel's NUMA scanner never visits "
        "(e.g. %s: an explicit memory policy without MPOL_F_NUMA_BALANCING, or hugetlbfs): they take no "
        "hint faults, so this source cannot see them",
        pages, static_cast<double>(pages) * 4096 / (1 << 20), options_.pid, example));
  }
}

HintFaultObservation HintFaultSource::Observe() const {
  HintFaultObservation o;
  o.now_ns = MonotonicNs();
  if (absl::StatusOr<std::string> v = fs_.ReadFile("/proc/vmstat"); v.ok()) o.vmstat = ParseNumaVmstat(*v);
  if (absl::StatusOr<std::string> s = fs_.ReadFile(absl::StrCat("/proc/", options_.pid, "/sched")); s.ok()) {
    o.scan_seq = ParseNumaScanSeq(*s);
  }
  if (absl::StatusOr<std::string> s = fs_.ReadFile(absl::StrCat("/proc/", options_.pid, "/stat")); s.ok()) {
    o.target = ParseProcStatCpu(*s);
  }
  for (const HintFaultSysctlChange& c : changes_) {
    absl::StatusOr<std::string> v = fs_.ReadTrimmed(c.path);
    o.sysctls.push_back(v.ok() ? std::optional<std::string>(*v) : std::nullopt);
  }
  return o;
}

void HintFaultSource::CheckNow() {
  const HintFaultObservation o = Observe();
  std::vector<std::string> warnings;
  {
    MutexLock l(&mu_);
    if (watchdog_ == nullptr) return;
    watchdog_->Observe(o, &warnings);
  }
  for (const std::string& w : warnings) Warn(w);
}

void HintFaultSource::Run() {
  const double cpu0 = ThreadCpuSeconds();
  for (;;) {
    {
      MutexLock l(&mu_);
      auto stop = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_thread_; };
      if (cv_.WaitWithTimeout(&mu_, options_.check_interval, stop)) break;
    }
    CheckNow();
    MutexLock l(&mu_);
    watchdog_->mutable_stats().watchdog_cpu_seconds = ThreadCpuSeconds() - cpu0;
  }
}

absl::Status HintFaultSource::Stop() {
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

std::string HintFaultSource::DescribeChanges() const {
  std::vector<std::string> parts;
  for (const HintFaultSysctlChange& c : changes_) {
    parts.push_back(absl::StrCat(SysctlName(c.path), " ", c.original, " -> ", c.wanted));
  }
  return absl::StrJoin(parts, ", ");
}

std::string HintFaultSource::restored() const { return restored_; }

HintFaultStats HintFaultSource::stats() const {
  MutexLock l(&mu_);
  return watchdog_ ? watchdog_->stats() : HintFaultStats{};
}

void HintFaultSource::AppendJson(JsonWriter* w) const {
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
