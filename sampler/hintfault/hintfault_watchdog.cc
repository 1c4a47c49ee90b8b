#include "sampler/hintfault/hintfault_watchdog.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tools/base/kernel/proc_stat.h"

namespace hotpage {
namespace {

bool ParseDecimal(absl::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return absl::SimpleAtoi(s, out);
}

uint64_t Sub(uint64_t now, uint64_t base) {
  return now >= base ? now - base : 0;
}

NumaVmstat Delta(const NumaVmstat& now, const NumaVmstat& base) {
  NumaVmstat d;
  d.numa_pte_updates = Sub(now.numa_pte_updates, base.numa_pte_updates);
  d.numa_hint_faults = Sub(now.numa_hint_faults, base.numa_hint_faults);
  d.numa_hint_faults_local =
      Sub(now.numa_hint_faults_local, base.numa_hint_faults_local);
  d.pgpromote_candidate =
      Sub(now.pgpromote_candidate, base.pgpromote_candidate);
  d.pgpromote_success = Sub(now.pgpromote_success, base.pgpromote_success);
  d.numa_pages_migrated =
      Sub(now.numa_pages_migrated, base.numa_pages_migrated);
  return d;
}

}  // namespace

std::string SysctlName(absl::string_view proc_sys_path) {
  std::string s(absl::StripPrefix(proc_sys_path, "/proc/sys/"));
  std::replace(s.begin(), s.end(), '/', '.');
  return s;
}

// --- kernel counters ---------------------------------------------------------

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
  if (!st || st->utime_ticks > UINT64_MAX - st->stime_ticks)
    return std::nullopt;
  return ProcCpu{st->minflt, st->utime_ticks + st->stime_ticks};
}

std::optional<uint64_t> ParseNumaScanSeq(absl::string_view proc_pid_sched) {
  for (absl::string_view line : absl::StrSplit(proc_pid_sched, '\n')) {
    line = absl::StripLeadingAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&line, "mm->numa_scan_seq")) continue;
    line = absl::StripLeadingAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&line, ":")) return std::nullopt;
    uint64_t v = 0;
    if (!ParseDecimal(absl::StripAsciiWhitespace(line), &v))
      return std::nullopt;
    return v;
  }
  return std::nullopt;
}

std::optional<bool> ParseDemotionEnabled(absl::string_view text) {
  const absl::string_view v = absl::StripAsciiWhitespace(text);
  if (v == "true" || v == "1" || v == "y" || v == "Y" || v == "on") return true;
  if (v == "false" || v == "0" || v == "n" || v == "N" || v == "off")
    return false;
  return std::nullopt;
}

// --- watchdog ----------------------------------------------------------------

HintFaultWatchdog::HintFaultWatchdog(HintFaultWatchdogOptions options,
                                     std::vector<HintFaultSysctlChange> changes)
    : options_(options),
      changes_(std::move(changes)),
      overridden_(changes_.size(), false) {}

void HintFaultWatchdog::Observe(const HintFaultObservation& o,
                                std::vector<std::string>* warnings) {
  if (!started_) {
    started_ = true;
    start_ns_ = o.now_ns;
    base_ = last_ = o.vmstat.value_or(NumaVmstat{});
    base_seq_ = last_seq_ = o.scan_seq;
    base_target_ = o.target;
    progress_ns_ = o.now_ns;
    progress_cpu_ticks_ = o.target ? o.target->cpu_ticks : 0;
    stats_.scan_seq_known = o.scan_seq.has_value();
    if (o.demotion_enabled) {
      stats_.demotion_known = true;
      stats_.demotion_enabled = *o.demotion_enabled;
    }
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
  if (o.target && base_target_)
    stats_.target_minor_faults = Sub(o.target->minflt, base_target_->minflt);
  stats_.hint_faults_per_sec =
      stats_.elapsed_s > 0
          ? static_cast<double>(stats_.delta.numa_hint_faults) /
                stats_.elapsed_s
          : 0;

  const double gap_s = static_cast<double>(Sub(o.now_ns, progress_ns_)) / 1e9;
  stats_.longest_scan_gap_s = std::max(stats_.longest_scan_gap_s, gap_s);
  const double period_s = static_cast<double>(options_.scan_period_ms) / 1e3;
  if (progress) {
    if (stats_.scan_stalled) {
      warnings->push_back(
          absl::StrFormat("the kernel scans pid %d again (NUMA hint faults "
                          "resume) after %.1f s without a pass",
                          options_.pid, gap_s));
    }
    stats_.scan_stalled = false;
    progress_ns_ = o.now_ns;
    if (o.target) progress_cpu_ticks_ = o.target->cpu_ticks;
  } else if (o.target && !stats_.scan_stalled) {
    const double cpu_s =
        static_cast<double>(Sub(o.target->cpu_ticks, progress_cpu_ticks_)) /
        options_.clock_ticks_per_sec;
    if (gap_s >= options_.stall_periods * period_s && cpu_s >= period_s) {
      stats_.scan_stalled = true;
      ++stats_.stall_episodes;
      const std::string what =
          o.scan_seq
              ? absl::StrCat("completed no NUMA scan pass of pid ",
                             options_.pid, " (numa_scan_seq ", *o.scan_seq, ")")
              : "made no PTE PROT_NONE and took no hint fault "
                "(numa_pte_updates, numa_hint_faults)";
      warnings->push_back(absl::StrFormat(
          "the kernel %s for %.1f s while the process used %.1f s of CPU (more "
          "than %d scan periods of "
          "%d ms): no new hint faults, so no new samples. Causes seen: the "
          "kernel's 3%% scan-overhead cap "
          "(slow page-table updates, e.g. under emulation), "
          "kernel.numa_balancing changed, or memory "
          "the scanner skips",
          what, gap_s, cpu_s, options_.stall_periods, options_.scan_period_ms));
    }
  }

  // Pages the kernel migrated on its own (system-wide): warn the first time
  // and whenever the count doubles.
  stats_.kernel_migrated_pages = stats_.delta.numa_pages_migrated;
  if (stats_.kernel_migrated_pages > 0 &&
      (warned_migrated_ == 0 ||
       stats_.kernel_migrated_pages >= 2 * warned_migrated_)) {
    warned_migrated_ = stats_.kernel_migrated_pages;
    warnings->push_back(absl::StrCat(
        "the kernel itself migrated ", stats_.kernel_migrated_pages,
        " pages since the start (numa_pages_migrated, system-wide; "
        "pgpromote_success ",
        stats_.delta.pgpromote_success,
        ") despite the promotion rate limit of 0: Linux promotes every "
        "hint-faulted page regardless of "
        "the limit while a fast node has more than max(1 GiB, 1/16 of the "
        "node) free above its "
        "promotion watermark (pgdat_free_space_enough in "
        "kernel/sched/fair.c)"));
  }

  for (size_t i = 0; i < changes_.size() && i < o.sysctls.size(); ++i) {
    if (!o.sysctls[i]) continue;
    const bool differs = *o.sysctls[i] != changes_[i].wanted;
    if (differs && !overridden_[i]) {
      ++stats_.sysctl_overrides;
      warnings->push_back(absl::StrCat(
          SysctlName(changes_[i].path), " is now ", *o.sysctls[i], ", not the ",
          changes_[i].wanted,
          " hotpage set: someone else changed it, so hint-fault sampling ",
          changes_[i].path == kNumaBalancingSysctl
              ? "stops or changes"
              : "may let the kernel promote",
          "; hotpage leaves it and restores the original (",
          changes_[i].original, ") at exit"));
    }
    overridden_[i] = differs;
  }

  // demotion_enabled: warned at each change of a known value.
  if (o.demotion_enabled) {
    if (stats_.demotion_known &&
        *o.demotion_enabled != stats_.demotion_enabled) {
      ++stats_.demotion_changes;
      warnings->push_back(absl::StrCat(
          "demotion_enabled (", kDemotionEnabledPath, ") is now ",
          *o.demotion_enabled ? "true" : "false",
          *o.demotion_enabled
              ? ": the kernel's reclaim demotes, so from its next round "
                "hotpage promotes pages that fault twice into a full fast "
                "tier and leaves what goes to that reclaim"
              : ": the kernel's reclaim no longer demotes, so from its next "
                "round hotpage makes room on the fast tier itself (pages it "
                "never sampled there, from 10 s on)"));
    }
    stats_.demotion_known = true;
    stats_.demotion_enabled = *o.demotion_enabled;
  }
}

}  // namespace hotpage
