#include "sampler/damon/damon_source.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "tools/base/clock.h"
#include "tools/base/kernel/proc_stat.h"
#include "tools/base/status_macros.h"

namespace hotpage {
namespace {

constexpr char kNrKdamonds[] = "kdamonds/nr_kdamonds";
constexpr char kKdamond[] = "kdamonds/0";
constexpr char kContext[] = "kdamonds/0/contexts/0";
constexpr char kScheme[] = "kdamonds/0/contexts/0/schemes/0";

// DAMON's sysfs store handlers take their global lock with mutex_trylock and
// answer EBUSY when another writer holds it (briefly: another DAMON user's
// command). 40 x 5 ms rides that out; a kdamond that is really busy fails
// after 0.2 s.
constexpr int kBusyRetries = 40;
constexpr absl::Duration kBusyBackoff = absl::Milliseconds(5);

constexpr char kNeedsRoot[] =
    "DAMON's sysfs files are root's, mode 0600 (reading and writing them needs "
    "root or "
    "CAP_DAC_OVERRIDE); run hotpage as root: ";

// Upper bound on tried regions read per Poll, whatever the options say.
constexpr size_t kMaxTriedRegionsHard = size_t{1} << 17;

Mutex& RegistryMu() {
  static Mutex* mu = new Mutex;
  return *mu;
}

std::vector<DamonSource*>& Registry()
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(RegistryMu()) {
  static auto* sources = new std::vector<DamonSource*>;
  return *sources;
}

absl::Status Annotate(const absl::Status& s, absl::string_view prefix) {
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(prefix, s.message()));
}

}  // namespace

absl::Status ValidateDamonOptions(const DamonOptions& o) {
  if (o.sample_us == 0) {
    return absl::InvalidArgumentError(
        "DAMON sample_us must be > 0 (default 5000)");
  }
  if (o.aggr_us < o.sample_us || o.aggr_us % o.sample_us != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "DAMON aggr_us (", o.aggr_us, ") must be a multiple of sample_us (",
        o.sample_us, "); e.g. sample_us 5000, aggr_us 100000"));
  }
  if (o.aggr_us / o.sample_us > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("DAMON aggr_us / sample_us is ", o.aggr_us / o.sample_us,
                     "; keep it at most 65535 (20 is typical)"));
  }
  if (o.update_us < o.aggr_us) {
    return absl::InvalidArgumentError(
        absl::StrCat("DAMON update_us (", o.update_us,
                     ") must be at least aggr_us (", o.aggr_us, ")"));
  }
  if (o.min_nr_regions < 3 || o.max_nr_regions < o.min_nr_regions ||
      o.max_nr_regions > 65536) {
    return absl::InvalidArgumentError(absl::StrCat(
        "DAMON nr_regions min ", o.min_nr_regions, " max ", o.max_nr_regions,
        ": need 3 <= min <= max <= 65536 (default 100 and 1000)"));
  }
  if (o.chunk_bytes < 4096 || o.chunk_bytes > (uint64_t{1} << 30) ||
      (o.chunk_bytes & (o.chunk_bytes - 1)) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "DAMON chunk_bytes ", o.chunk_bytes,
        " must be a power of two from 4096 to 1 GiB (default 2 MiB)"));
  }
  if (o.admin_dir.empty() || o.admin_dir[0] != '/') {
    return absl::InvalidArgumentError(absl::StrCat(
        "DAMON admin_dir \"", o.admin_dir, "\" must be an absolute path"));
  }
  if (o.state_dir.empty() || o.state_dir[0] != '/') {
    return absl::InvalidArgumentError(absl::StrCat(
        "DAMON state_dir \"", o.state_dir,
        "\" must be an absolute path (default ", kDefaultStateDir, ")"));
  }
  return absl::OkStatus();
}

// --- Registry ------------------------------------------------------------

void DamonSource::Register(DamonSource* s) {
  MutexLock l(&RegistryMu());
  Registry().push_back(s);
}

void DamonSource::Unregister(DamonSource* s) {
  MutexLock l(&RegistryMu());
  auto& r = Registry();
  r.erase(std::remove(r.begin(), r.end(), s), r.end());
}

absl::Status DamonSource::TeardownAll() {
  // Lock order everywhere: registry, then a source's mu_.
  MutexLock l(&RegistryMu());
  absl::Status first;
  for (DamonSource* s : Registry()) {
    MutexLock sl(&s->mu_);
    absl::Status st =
        s->TeardownLocked("torn down by TeardownAll (termination signal)");
    if (first.ok() && !st.ok()) first = st;
  }
  return first;
}

// --- Lifetime ------------------------------------------------------------

DamonSource::DamonSource(pid_t pid, const DamonOptions& options, KernelFs fs,
                         std::unique_ptr<SysfsWriter> writer)
    : pid_(pid),
      options_(options),
      fs_(std::move(fs)),
      writer_(std::move(writer)),
      max_nr_accesses_(
          static_cast<uint32_t>(options.aggr_us / options.sample_us)),
      batch_(new Sample[kBatch]) {}

absl::StatusOr<std::unique_ptr<DamonSource>> DamonSource::Start(
    pid_t pid, const DamonOptions& options) {
  HOTPAGE_ASSIGN_OR_RETURN(KernelFs fs, KernelFs::Open("/"));
  HOTPAGE_ASSIGN_OR_RETURN(std::unique_ptr<LiveSysfsWriter> writer,
                           LiveSysfsWriter::Open("/"));
  return Start(pid, options, std::move(fs), std::move(writer));
}

absl::StatusOr<std::unique_ptr<DamonSource>> DamonSource::Start(
    pid_t pid, const DamonOptions& options, KernelFs fs,
    std::unique_ptr<SysfsWriter> writer) {
  return StartPinned(pid, 0, options, std::move(fs), std::move(writer));
}

absl::StatusOr<std::unique_ptr<DamonSource>> DamonSource::StartPinned(
    pid_t pid, uint64_t start_time_ticks, const DamonOptions& options,
    KernelFs fs, std::unique_ptr<SysfsWriter> writer) {
  HOTPAGE_RETURN_IF_ERROR(ValidateDamonOptions(options));
  if (pid <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("DAMON target pid ", pid, " is not valid"));
  }
  if (writer == nullptr)
    return absl::InvalidArgumentError("DAMON source needs a SysfsWriter");
  std::unique_ptr<DamonSource> src(
      new DamonSource(pid, options, std::move(fs), std::move(writer)));
  {
    MutexLock l(&src->mu_);
    src->slots_.push_back(Slot{pid, start_time_ticks, false, 0});
  }
  // Registered before anything is created, so that a termination signal
  // during setup either aborts it or tears down what exists so far.
  Register(src.get());
  HOTPAGE_RETURN_IF_ERROR(src->Setup());  // on error, ~DamonSource unregisters
  return src;
}

DamonSource::~DamonSource() {
  Unregister(this);
  MutexLock l(&mu_);
  (void)TeardownLocked("source destroyed");
}

absl::Status DamonSource::Stop() {
  MutexLock l(&mu_);
  return TeardownLocked("stopped");
}

bool DamonSource::running() const {
  MutexLock l(&mu_);
  return owned_ && !torn_down_;
}

DamonStats DamonSource::stats() const {
  MutexLock l(&mu_);
  return stats_;
}

std::string DamonSource::AdminPath(absl::string_view rel) const {
  return absl::StrCat(options_.admin_dir, "/", rel);
}

std::string DamonSource::recovered() const {
  MutexLock l(&mu_);
  return recovered_;
}

void DamonSource::Warn(const std::string& line) const {
  if (options_.warn) {
    options_.warn(line);
  } else {
    std::cerr << "hotpage: " << line << "\n";
  }
}

// --- Writes --------------------------------------------------------------

int DamonSource::WriteRetry(absl::string_view rel, absl::string_view value) {
  const std::string path = AdminPath(rel);
  int err = 0;
  for (int attempt = 0;; ++attempt) {
    err = writer_->WriteErrno(path, value);
    if (err != EBUSY || attempt >= kBusyRetries) break;
    ++stats_.ebusy_retries;
    absl::SleepFor(kBusyBackoff);
  }
  return err;
}

// DAMON's show() handlers also take its lock with trylock: a read while a
// command is in flight (this or another process's update) fails EBUSY, which
// KernelFs reports as Unavailable. Retry like writes.
absl::StatusOr<std::string> DamonSource::ReadRetry(absl::string_view rel) {
  const std::string path = AdminPath(rel);
  for (int attempt = 0;; ++attempt) {
    absl::StatusOr<std::string> s = fs_.ReadTrimmed(path);
    if (s.ok() || s.status().code() != absl::StatusCode::kUnavailable ||
        attempt >= kBusyRetries) {
      return s;
    }
    ++stats_.ebusy_retries;
    absl::SleepFor(kBusyBackoff);
  }
}

absl::StatusOr<int64_t> DamonSource::ReadIntRetry(absl::string_view rel) {
  HOTPAGE_ASSIGN_OR_RETURN(std::string s, ReadRetry(rel));
  std::optional<uint64_t> v = ParseUnsigned(s, uint64_t{1} << 62);
  if (!v) {
    return absl::InvalidArgumentError(absl::StrCat(
        fs_.Display(AdminPath(rel)), ": expected a decimal integer, found \"",
        s.substr(0, 40), "\""));
  }
  return static_cast<int64_t>(*v);
}

absl::Status DamonSource::Write(absl::string_view rel,
                                absl::string_view value) {
  int err = WriteRetry(rel, value);
  if (err == 0) return absl::OkStatus();
  return WriteErrorStatus(err, value, writer_->Display(AdminPath(rel)));
}

// --- Setup ---------------------------------------------------------------

absl::Status DamonSource::Setup() {
  MutexLock l(&mu_);
  if (torn_down_) {
    return absl::CancelledError(absl::StrCat("DAMON setup for pid ", pid_,
                                             " cancelled: ", teardown_why_));
  }
  absl::Status s = SetupLocked();
  if (s.ok()) return s;
  absl::Status td = TeardownLocked("setup failed");
  if (td.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(s.message(),
                                             "; removing the half-made DAMON "
                                             "context also failed: ",
                                             td.message()));
}

absl::Status DamonSource::CheckFree() {
  const std::string admin = options_.admin_dir;
  if (!fs_.Exists(admin)) {
    return absl::UnimplementedError(absl::StrCat(
        "DAMON sysfs interface not found: ", fs_.Display(admin),
        " does not exist. This kernel lacks CONFIG_DAMON_SYSFS (Linux 5.18+) "
        "or sysfs is "
        "not mounted; use another sample source (e.g. --source pagefault)"));
  }
  HOTPAGE_RETURN_IF_ERROR(LockStateDir());
  auto nr_or = ReadIntRetry(kNrKdamonds);
  if (!nr_or.ok()) {
    if (nr_or.status().code() == absl::StatusCode::kPermissionDenied) {
      return Annotate(nr_or.status(), kNeedsRoot);
    }
    return nr_or.status();
  }
  const int64_t nr = *nr_or;
  std::string note;  // what hotpage's state file said, if anything
  bool removed_stale = false;
  if (nr != 0) {
    HOTPAGE_ASSIGN_OR_RETURN(removed_stale, RemoveStale(nr, &note));
  }
  if (nr != 0 && !removed_stale) {
    // Say who holds it, as far as sysfs tells.
    std::vector<std::string> holders;
    for (int64_t i = 0; i < std::min<int64_t>(nr, 4); ++i) {
      const std::string k = absl::StrCat("kdamonds/", i);
      auto state = ReadRetry(absl::StrCat(k, "/state"));
      auto kpid = ReadRetry(absl::StrCat(k, "/pid"));
      auto ops = ReadRetry(absl::StrCat(k, "/contexts/0/operations"));
      auto target =
          ReadRetry(absl::StrCat(k, "/contexts/0/targets/0/pid_target"));
      std::string h =
          absl::StrCat("kdamond ", i, ": state ", state.ok() ? *state : "?",
                       ", thread pid ", kpid.ok() ? *kpid : "?");
      if (ops.ok()) absl::StrAppend(&h, ", ", *ops);
      if (target.ok() && ops.ok() && *ops != "paddr")
        absl::StrAppend(&h, " target pid ", *target);
      holders.push_back(std::move(h));
    }
    if (nr > 4) holders.push_back("...");
    return absl::FailedPreconditionError(absl::StrCat(
        "DAMON is already in use: ", fs_.Display(AdminPath(kNrKdamonds)),
        " is ", nr, " (", absl::StrJoin(holders, "; "), "). ", note,
        note.empty() ? "" : ". ",
        "hotpage creates its own kdamond and writes nr_kdamonds only when it "
        "is 0: the "
        "count is global and writing it destroys every existing kdamond, "
        "including these. "
        "Stop the other DAMON user (e.g. `damo stop`), or if these kdamonds "
        "are stale, "
        "remove them (echo off > ",
        fs_.Display(AdminPath("kdamonds/N/state")),
        " for each running one, then echo 0 > ",
        fs_.Display(AdminPath(kNrKdamonds)), ") and retry"));
  }
  if (!fs_.Exists(absl::StrCat("/proc/", pid_))) {
    return absl::NotFoundError(absl::StrCat(
        "no such process: pid ", pid_, " (",
        fs_.Display(absl::StrCat("/proc/", pid_)), " does not exist)"));
  }
  return absl::OkStatus();
}

absl::Status DamonSource::LockStateDir() {
  HOTPAGE_ASSIGN_OR_RETURN(
      StateDir dir, StateDir::Open(options_.state_dir,
                                   "the DAMON state directory", "DAMON state"));
  state_dir_.emplace(std::move(dir));
  HOTPAGE_ASSIGN_OR_RETURN(bool locked, state_dir_->TryLock(kDamonLockName));
  if (locked) return absl::OkStatus();
  std::string who = "another process";
  if (absl::StatusOr<std::optional<std::string>> text =
          state_dir_->Read(kDamonStateName, kMaxRecoveryStateBytes);
      text.ok() && *text) {
    if (absl::StatusOr<DamonState> st = ParseDamonState(**text); st.ok()) {
      who = absl::StrCat("another hotpage (pid ", st->pid, ", monitoring pid ",
                         st->target_pid, ")");
    }
  }
  return absl::FailedPreconditionError(
      absl::StrCat(who, " holds ", state_dir_->Display(kDamonLockName),
                   " and with it DAMON's kdamond; only one `--source damon` "
                   "can run at a time: stop it first"));
}

absl::StatusOr<bool> DamonSource::RemoveStale(int64_t nr, std::string* note) {
  const std::string shown = state_dir_->Display(kDamonStateName);
  absl::StatusOr<std::optional<std::string>> text =
      state_dir_->Read(kDamonStateName, kMaxRecoveryStateBytes);
  if (!text.ok()) {
    *note = absl::StrCat("hotpage's state file could not be read (",
                         text.status().message(), ")");
    return false;
  }
  if (!text->has_value()) return false;  // no hotpage left these
  absl::StatusOr<DamonState> st = ParseDamonState(**text);
  if (!st.ok()) {
    *note =
        absl::StrCat(shown, " is left over but unreadable (",
                     st.status().message(), "): hotpage does not act on it");
    return false;
  }
  // The lock is ours, so the writer of the file is gone. Is its kdamond
  // still there, unchanged?
  std::string differs;
  if (nr != 1) {
    differs = absl::StrCat("nr_kdamonds is ", nr, ", not 1");
  } else {
    absl::StatusOr<std::string> ops =
        ReadRetry(absl::StrCat(kContext, "/operations"));
    absl::StatusOr<int64_t> target =
        ReadIntRetry(absl::StrCat(kContext, "/targets/0/pid_target"));
    if (!ops.ok()) {
      differs = absl::StrCat("kdamond 0 has no readable context (",
                             ops.status().message(), ")");
    } else if (*ops != st->operations) {
      differs = absl::StrCat("kdamond 0 uses ", *ops, " operations");
    } else if (!target.ok()) {
      differs = absl::StrCat("kdamond 0 has no readable target (",
                             target.status().message(), ")");
    } else if (*target != st->target_pid) {
      differs = absl::StrCat("kdamond 0 monitors pid ", *target);
    }
  }
  const std::string said = absl::StrCat(shown, " says hotpage pid ", st->pid,
                                        " (no longer running) created kdamond ",
                                        st->kdamond, " with ", st->operations,
                                        " operations for pid ", st->target_pid);
  if (!differs.empty()) {
    *note = absl::StrCat(said, ", but ", differs,
                         ": not that kdamond, so hotpage leaves it alone");
    return false;
  }
  if (absl::Status s =
          RemoveKdamond(absl::StrCat("stale, left by hotpage pid ", st->pid));
      !s.ok()) {
    return absl::Status(
        s.code(),
        absl::StrCat(said, "; removing that stale kdamond failed: ",
                     s.message(), ". Remove it by hand (echo off > ",
                     fs_.Display(AdminPath(absl::StrCat(kKdamond, "/state"))),
                     ", then echo 0 > ", fs_.Display(AdminPath(kNrKdamonds)),
                     ") and retry"));
  }
  (void)state_dir_->Remove(kDamonStateName);  // rewritten below in any case
  recovered_ = absl::StrCat(
      "removed a stale hotpage kdamond left by pid ", st->pid, " (target pid ",
      st->target_pid, "), which exited without removing it (", shown, ")");
  Warn(recovered_);
  return true;
}

absl::Status DamonSource::WriteState() {
  DamonState st;
  st.pid = getpid();
  st.start_time_ticks = SelfStartTimeTicks(fs_);
  st.kdamond = 0;  // kKdamond
  st.target_pid = slots_.empty() ? pid_ : slots_[0].pid;
  st.operations = "vaddr";
  HOTPAGE_RETURN_IF_ERROR(
      state_dir_->WriteAtomically(kDamonStateName, FormatDamonState(st)));
  wrote_state_ = true;
  return absl::OkStatus();
}

void DamonSource::ReleaseState(bool remove) {
  if (!state_dir_) return;
  if (wrote_state_ && remove) {
    (void)state_dir_->Remove(kDamonStateName);
    wrote_state_ = false;
  }
  state_dir_->Unlock();
}

absl::Status DamonSource::SetupLocked() {
  HOTPAGE_RETURN_IF_ERROR(CheckFree());
  // Before the kdamond exists: a SIGKILL from here on leaves a file that
  // names it.
  HOTPAGE_RETURN_IF_ERROR(WriteState());
  {
    int err = WriteRetry(kNrKdamonds, "1");
    if (err != 0) {
      absl::Status s =
          WriteErrorStatus(err, "1", writer_->Display(AdminPath(kNrKdamonds)));
      if (err == EBUSY) {
        return Annotate(
            s,
            "DAMON became busy (another user started a kdamond after hotpage "
            "found none): ");
      }
      if (err == EACCES || err == EPERM) return Annotate(s, kNeedsRoot);
      return s;
    }
  }
  owned_ = true;
  HOTPAGE_RETURN_IF_ERROR(Annotate(
      Configure(), absl::StrCat("configuring DAMON for pid ", pid_, ": ")));
  auto kpid = ReadRetry(absl::StrCat(kKdamond, "/pid"));
  if (kpid.ok()) stats_.kdamond_pid = std::atoi(kpid->c_str());
  // `on` resolved the pid number: if the process the caller pinned is
  // still there with its start time, that number was its throughout.
  if (slots_[0].start_time_ticks != 0) {
    std::optional<uint64_t> now = StartTimeOf(pid_);
    if (now && *now != slots_[0].start_time_ticks) {
      ++stats_.reused_pids;
      return absl::FailedPreconditionError(
          absl::StrCat("pid ", pid_,
                       " was reused by another process before DAMON "
                       "monitoring began"));
    }
  }
  return absl::OkStatus();
}

absl::Status DamonSource::WidenPattern(const std::string& s) {
  // A new scheme's access pattern is 0..0 everywhere and matches nothing.
  const std::string p = s + "/access_pattern";
  HOTPAGE_RETURN_IF_ERROR(Write(p + "/sz/min", "0"));
  HOTPAGE_RETURN_IF_ERROR(
      Write(p + "/sz/max", absl::StrCat(std::numeric_limits<uint64_t>::max())));
  HOTPAGE_RETURN_IF_ERROR(Write(p + "/nr_accesses/min", "0"));
  HOTPAGE_RETURN_IF_ERROR(
      Write(p + "/nr_accesses/max",
            absl::StrCat(std::numeric_limits<uint32_t>::max())));
  HOTPAGE_RETURN_IF_ERROR(Write(p + "/age/min", "0"));
  return Write(p + "/age/max",
               absl::StrCat(std::numeric_limits<uint32_t>::max()));
}

absl::Status DamonSource::Configure() {
  const std::string c = kContext;
  const std::string s = kScheme;
  const std::string attrs = c + "/monitoring_attrs";
  HOTPAGE_RETURN_IF_ERROR(
      Write(absl::StrCat(kKdamond, "/contexts/nr_contexts"), "1"));
  // Kernels that list their operations sets (6.2+) tell us up front whether
  // vaddr monitoring was built in (CONFIG_DAMON_VADDR).
  auto avail = fs_.ReadFile(AdminPath(c + "/avail_operations"));
  if (avail.ok() && avail->find("vaddr") == std::string::npos) {
    return absl::UnimplementedError(
        absl::StrCat(fs_.Display(AdminPath(c + "/avail_operations")),
                     " does not list vaddr: this kernel's "
                     "DAMON cannot monitor virtual addresses "
                     "(CONFIG_DAMON_VADDR); use another source"));
  }
  HOTPAGE_RETURN_IF_ERROR(Write(c + "/operations", "vaddr"));
  HOTPAGE_RETURN_IF_ERROR(
      Write(attrs + "/intervals/sample_us", absl::StrCat(options_.sample_us)));
  HOTPAGE_RETURN_IF_ERROR(
      Write(attrs + "/intervals/aggr_us", absl::StrCat(options_.aggr_us)));
  HOTPAGE_RETURN_IF_ERROR(
      Write(attrs + "/intervals/update_us", absl::StrCat(options_.update_us)));
  HOTPAGE_RETURN_IF_ERROR(
      Write(attrs + "/nr_regions/min", absl::StrCat(options_.min_nr_regions)));
  HOTPAGE_RETURN_IF_ERROR(
      Write(attrs + "/nr_regions/max", absl::StrCat(options_.max_nr_regions)));
  HOTPAGE_RETURN_IF_ERROR(Write(c + "/targets/nr_targets", "1"));
  HOTPAGE_RETURN_IF_ERROR(
      Write(c + "/targets/0/pid_target", absl::StrCat(pid_)));
  wrote_target_ = true;
  HOTPAGE_RETURN_IF_ERROR(Write(c + "/schemes/nr_schemes", "1"));
  HOTPAGE_RETURN_IF_ERROR(Write(s + "/action", "stat"));
  HOTPAGE_RETURN_IF_ERROR(WidenPattern(s));
  absl::Status on = Write(absl::StrCat(kKdamond, "/state"), "on");
  if (!on.ok()) {
    if (!fs_.Exists(absl::StrCat("/proc/", pid_))) {
      return Annotate(on, absl::StrCat("target pid ", pid_,
                                       " exited before monitoring began: "));
    }
    return Annotate(
        on, "the kernel refused to start the kdamond (dmesg may say why): ");
  }
  return absl::OkStatus();
}

// --- Teardown ------------------------------------------------------------

absl::Status DamonSource::VerifyOwnership() {
  const std::string nr_path = fs_.Display(AdminPath(kNrKdamonds));
  auto nr = ReadIntRetry(kNrKdamonds);
  if (!nr.ok()) {
    return Annotate(
        nr.status(),
        "cannot tell whether DAMON's kdamond is still hotpage's, so "
        "not removing it: ");
  }
  if (*nr != 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        nr_path, " is ", *nr,
        ", not the 1 kdamond hotpage created: someone else rewrote "
        "DAMON's kdamonds; leaving them alone"));
  }
  // What we wrote so far must still be there. A context that was not yet
  // configured has no target or operations to compare.
  auto target = ReadIntRetry(absl::StrCat(kContext, "/targets/0/pid_target"));
  auto ops = ReadRetry(absl::StrCat(kContext, "/operations"));
  const bool foreign_ops =
      ops.ok() && *ops != "vaddr";  // vaddr is also the default
  const pid_t ours = slots_.empty() ? pid_ : slots_[0].pid;
  const bool foreign_target =
      target.ok() &&
      (wrote_target_ ? *target != ours : (*target != 0 && *target != ours));
  if (foreign_ops || foreign_target) {
    return absl::FailedPreconditionError(absl::StrCat(
        "kdamond 0 monitors pid ", target.ok() ? absl::StrCat(*target) : "?",
        " with ", ops.ok() ? *ops : "?",
        " operations, not hotpage's vaddr context for pid ", ours,
        ": someone else replaced it; leaving it alone"));
  }
  return absl::OkStatus();
}

absl::Status DamonSource::TeardownLocked(absl::string_view why) {
  if (torn_down_) return teardown_status_;
  torn_down_ = true;
  teardown_why_ = std::string(why);
  if (!owned_) {  // nothing of ours exists
    ReleaseState(/*remove=*/true);
    return teardown_status_;
  }
  owned_ = false;
  absl::Status own = VerifyOwnership();
  if (!own.ok()) {
    teardown_status_ = own;
    // Known not ours (FailedPrecondition): the file would name someone
    // else's kdamond. Unreadable: keep it for the next Start to check.
    ReleaseState(/*remove=*/absl::IsFailedPrecondition(own));
    return own;
  }
  teardown_status_ = RemoveKdamond(why);
  // Kept when the removal failed, so that the next Start retries it.
  ReleaseState(/*remove=*/teardown_status_.ok());
  return teardown_status_;
}

absl::Status DamonSource::RemoveKdamond(absl::string_view why) {
  const std::string state_rel = absl::StrCat(kKdamond, "/state");
  absl::Status off_status;
  auto state = ReadRetry(state_rel);
  if (!state.ok() || *state != "off") {
    int err = WriteRetry(state_rel, "off");
    // EPERM: the kdamond stopped by itself between the read and the write.
    if (err != 0 && err != EPERM) {
      off_status =
          WriteErrorStatus(err, "off", writer_->Display(AdminPath(state_rel)));
    }
  }
  int err = WriteRetry(kNrKdamonds, "0");
  if (err != 0) {
    absl::Status s =
        WriteErrorStatus(err, "0", writer_->Display(AdminPath(kNrKdamonds)));
    return absl::Status(
        s.code(),
        absl::StrCat("removing hotpage's DAMON kdamond (", why,
                     "): ", s.message(),
                     off_status.ok() ? "" : "; turning it off first: ",
                     off_status.message()));
  }
  return absl::OkStatus();
}

// --- Poll ----------------------------------------------------------------

absl::Status DamonSource::KdamondStopped() {
  const bool exited = !fs_.Exists(absl::StrCat("/proc/", pid_));
  const std::string why =
      exited ? absl::StrCat("target pid ", pid_, " exited")
             : absl::StrCat(
                   "the kdamond was turned off by someone else (",
                   fs_.Display(AdminPath(absl::StrCat(kKdamond, "/state"))),
                   " reads off; pid ", pid_, " still exists)");
  absl::Status td = TeardownLocked(why);
  return absl::NotFoundError(absl::StrCat(
      "DAMON monitoring of pid ", pid_, " ended: ", why,
      td.ok() ? "; its DAMON context was removed"
              : absl::StrCat("; removing its DAMON context failed: ",
                             td.message())));
}

absl::Status DamonSource::ReadRegions() {
  HOTPAGE_RETURN_IF_ERROR(ReadRegionsOf(0, &regions_));
  stats_.regions += regions_.size();
  return absl::OkStatus();
}

absl::Status DamonSource::ReadRegionsOf(int scheme,
                                        std::vector<DamonRegion>* out) {
  const std::string dir =
      AdminPath(absl::StrCat(kContext, "/schemes/", scheme, "/tried_regions"));
  HOTPAGE_ASSIGN_OR_RETURN(std::vector<std::string> names, fs_.ListDir(dir));
  const size_t limit = std::min<size_t>(
      std::max<size_t>(size_t{2} * options_.max_nr_regions, 64),
      kMaxTriedRegionsHard);
  auto indices = SortTriedRegionIndices(names, limit);
  if (!indices.ok())
    return Annotate(indices.status(), absl::StrCat(fs_.Display(dir), ": "));
  std::vector<DamonRegion>& regions = *out;
  regions.clear();
  regions.reserve(indices->size());
  for (uint32_t i : *indices) {
    const std::string rdir = absl::StrCat(dir, "/", i);
    HOTPAGE_ASSIGN_OR_RETURN(std::string start, fs_.ReadFile(rdir + "/start"));
    HOTPAGE_ASSIGN_OR_RETURN(std::string end, fs_.ReadFile(rdir + "/end"));
    HOTPAGE_ASSIGN_OR_RETURN(std::string nr,
                             fs_.ReadFile(rdir + "/nr_accesses"));
    HOTPAGE_ASSIGN_OR_RETURN(std::string age, fs_.ReadFile(rdir + "/age"));
    auto r = ParseDamonRegion({start, end, nr, age});
    if (!r.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "DAMON tried region ", fs_.Display(rdir), "/", r.status().message()));
    }
    regions.push_back(*r);
  }
  stats_.regions_fixed += NormalizeRegions(regions);
  return absl::OkStatus();
}

absl::Status DamonSource::PollLocked() {
  HOTPAGE_RETURN_IF_ERROR(UpdateLocked());
  const uint64_t t1 = MonotonicNs();
  absl::Status read = ReadRegions();
  stats_.read_ns += MonotonicNs() - t1;
  if (read.ok() && regions_.empty()) ++stats_.empty_updates;
  return read;
}

absl::Status DamonSource::UpdateLocked() {
  if (torn_down_ || !owned_) {
    return absl::FailedPreconditionError(
        absl::StrCat("DAMON source for pid ", pid_, " is no longer running (",
                     teardown_why_, ")"));
  }
  const std::string state_rel = absl::StrCat(kKdamond, "/state");
  const uint64_t t0 = MonotonicNs();
  int err = WriteRetry(state_rel, "update_schemes_tried_regions");
  const uint64_t t1 = MonotonicNs();
  stats_.update_ns += t1 - t0;
  if (err != 0) {
    auto state = ReadRetry(state_rel);
    if (state.ok() && *state == "off") return KdamondStopped();
    return WriteErrorStatus(err, "update_schemes_tried_regions",
                            writer_->Display(AdminPath(state_rel)));
  }
  ++stats_.polls;
  return absl::OkStatus();
}

absl::StatusOr<size_t> DamonSource::Poll(const SampleSink& sink) {
  {
    // Holds mu_ only for the sysfs part, so that TeardownAll waits at most
    // for one update; the conversion below touches owner-thread state only.
    MutexLock l(&mu_);
    HOTPAGE_RETURN_IF_ERROR(PollLocked());
  }
  size_t dropped = 0;
  const size_t delivered = Emit(pid_, regions_, sink, &dropped);
  MutexLock l(&mu_);
  stats_.samples += delivered;
  stats_.samples_dropped += dropped;
  return delivered;
}

size_t DamonSource::Emit(pid_t pid, const std::vector<DamonRegion>& regions,
                         const SampleSink& sink, size_t* dropped_out) {
  const uint64_t now_ns = MonotonicNs();
  Sample proto;
  proto.time_ns = now_ns;
  proto.period = max_nr_accesses_;
  proto.pid = static_cast<uint32_t>(pid);
  proto.source = SampleSource::kDamon;
  proto.flags = kSampleRegion;
  const size_t cap = options_.max_samples_per_poll == 0
                         ? std::numeric_limits<size_t>::max()
                         : options_.max_samples_per_poll;
  size_t delivered = 0, dropped = 0, fill = 0;
  Sample* batch = batch_.get();
  ForEachChunk(regions, options_.chunk_bytes, max_nr_accesses_,
               [&](uint64_t vaddr, uint32_t count) {
                 for (uint32_t k = 0; k < count; ++k) {
                   if (delivered + fill >= cap) {
                     dropped += count - k;
                     return true;  // keep counting what is dropped
                   }
                   batch[fill] = proto;
                   batch[fill].vaddr = vaddr;
                   if (++fill == kBatch) {
                     sink(absl::MakeConstSpan(batch, fill));
                     delivered += fill;
                     fill = 0;
                   }
                 }
                 return true;
               });
  if (fill > 0) {
    sink(absl::MakeConstSpan(batch, fill));
    delivered += fill;
  }
  *dropped_out += dropped;
  return delivered;
}

// --- Several targets -------------------------------------------------------

pid_t DamonSource::SelfPid() const {
  return options_.self_pid > 0 ? options_.self_pid : getpid();
}

std::optional<uint64_t> DamonSource::StartTimeOf(pid_t pid) const {
  absl::StatusOr<std::string> text =
      fs_.ReadFile(absl::StrCat("/proc/", pid, "/stat"));
  if (!text.ok()) return std::nullopt;
  std::optional<ProcStat> st = ParseProcStat(*text);
  if (!st) return std::nullopt;
  return st->start_time_ticks;
}

size_t DamonSource::targets() const {
  MutexLock l(&mu_);
  size_t n = 0;
  for (const Slot& s : slots_) n += s.free ? 0 : 1;
  return n;
}

size_t DamonSource::FreeSlots(bool include_gone) {
  const pid_t self = SelfPid();
  size_t n = 0;
  for (Slot& s : slots_) {
    if (s.free) {
      s.pid = self;
      continue;
    }
    const std::optional<uint64_t> t = StartTimeOf(s.pid);
    const bool reused =
        t.has_value() && s.start_time_ticks != 0 && *t != s.start_time_ticks;
    if (reused || (include_gone && !t.has_value())) {
      if (reused) ++stats_.reused_pids;
      s.free = true;
      s.pid = self;
      ++n;
    }
  }
  return n;
}

void DamonSource::TrimFreeSlots() {
  // DAMON needs one target; the caller stops the source when none is used.
  while (slots_.size() > 1 && slots_.back().free) slots_.pop_back();
}

absl::Status DamonSource::WriteLayout() {
  const std::string c = kContext;
  const size_t n = slots_.size();
  HOTPAGE_RETURN_IF_ERROR(Write(c + "/targets/nr_targets", absl::StrCat(n)));
  for (size_t i = 0; i < n; ++i) {
    HOTPAGE_RETURN_IF_ERROR(
        Write(absl::StrCat(c, "/targets/", i, "/pid_target"),
              absl::StrCat(slots_[i].pid)));
  }
  wrote_target_ = true;
  HOTPAGE_RETURN_IF_ERROR(Write(c + "/schemes/nr_schemes", absl::StrCat(n)));
  for (size_t i = 0; i < n; ++i) {
    const std::string s = absl::StrCat(c, "/schemes/", i);
    HOTPAGE_RETURN_IF_ERROR(Write(s + "/action", "stat"));
    if (slots_[i].free) continue;  // the 0..0 pattern: lists nothing
    HOTPAGE_RETURN_IF_ERROR(WidenPattern(s));
    // Only target i's regions: 6.12 filters OUT regions for which
    // (index == target_idx) == matching.
    HOTPAGE_RETURN_IF_ERROR(Write(s + "/filters/nr_filters", "1"));
    HOTPAGE_RETURN_IF_ERROR(Write(s + "/filters/0/type", "target"));
    HOTPAGE_RETURN_IF_ERROR(
        Write(s + "/filters/0/damon_target_idx", absl::StrCat(i)));
    HOTPAGE_RETURN_IF_ERROR(Write(s + "/filters/0/matching", "N"));
  }
  multi_ = true;
  return absl::OkStatus();
}

absl::Status DamonSource::CommitLayout() {
  const std::string state_rel = absl::StrCat(kKdamond, "/state");
  for (int attempt = 0; attempt < 4; ++attempt) {
    // Every pid is resolved again by the commit: none may be gone.
    FreeSlots(/*include_gone=*/true);
    TrimFreeSlots();
    // The state file names target 0 before the kernel does.
    HOTPAGE_RETURN_IF_ERROR(WriteState());
    HOTPAGE_RETURN_IF_ERROR(WriteLayout());
    const int err = WriteRetry(state_rel, "commit");
    ++stats_.commits;
    absl::StatusOr<std::string> state = ReadRetry(state_rel);
    if (state.ok() && *state == "off") {
      // 6.12: the commit failed inside the kdamond, which stopped. Start
      // it again from the same parameters (every slot starts afresh).
      FreeSlots(/*include_gone=*/true);
      TrimFreeSlots();
      HOTPAGE_RETURN_IF_ERROR(WriteState());
      HOTPAGE_RETURN_IF_ERROR(WriteLayout());
      HOTPAGE_RETURN_IF_ERROR(
          Annotate(Write(state_rel, "on"),
                   "restarting hotpage's kdamond after a commit stopped it: "));
      ++stats_.restarts;
      for (Slot& s : slots_) s.deliver_after_ns = 0;
      if (auto kpid = ReadRetry(absl::StrCat(kKdamond, "/pid")); kpid.ok()) {
        stats_.kdamond_pid = std::atoi(kpid->c_str());
      }
    } else if (err != 0) {
      // 6.15+ validates a commit and refuses it, the kdamond unchanged.
      if (attempt < 3) continue;
      return WriteErrorStatus(err, "commit",
                              writer_->Display(AdminPath(state_rel)));
    }
    // A process alive with its pinned start time held its pid across the
    // commit, so the commit resolved that process. Any other is freed (its
    // regions are never delivered) and committed away.
    if (FreeSlots(/*include_gone=*/false) == 0) return absl::OkStatus();
  }
  return absl::OkStatus();  // slots found reused are free: never delivered
}

absl::StatusOr<int> DamonSource::AddTarget(pid_t pid,
                                           uint64_t start_time_ticks) {
  MutexLock l(&mu_);
  if (torn_down_ || !owned_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "hotpage's DAMON context is no longer running (", teardown_why_, ")"));
  }
  if (pid <= 0 || start_time_ticks == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("DAMON target pid ", pid, " needs its start time"));
  }
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (!slots_[i].free && slots_[i].pid == pid &&
        slots_[i].start_time_ticks == start_time_ticks) {
      return static_cast<int>(i);
    }
  }
  const std::optional<uint64_t> now = StartTimeOf(pid);
  if (!now || *now != start_time_ticks) {
    return absl::FailedPreconditionError(absl::StrCat(
        "pid ", pid, now ? " was reused by another process" : " exited",
        " before DAMON could monitor it"));
  }
  size_t slot = 0;
  while (slot < slots_.size() && !slots_[slot].free) ++slot;
  Slot s{pid, start_time_ticks, false, 0};
  if (slot < slots_.size()) {
    // The running target at this index keeps the last process's regions
    // until DAMON re-reads the mappings (update_us), and its counts need a
    // full aggregation interval of the new process.
    s.deliver_after_ns =
        MonotonicNs() + (options_.update_us + 2 * options_.aggr_us) * 1000;
    slots_[slot] = s;
  } else {
    slots_.push_back(s);
  }
  absl::Status c = CommitLayout();
  const bool ours = slot < slots_.size() && !slots_[slot].free &&
                    slots_[slot].pid == pid &&
                    slots_[slot].start_time_ticks == start_time_ticks;
  if (!c.ok()) {
    if (ours) {
      slots_[slot].free = true;
      slots_[slot].pid = SelfPid();
    }
    return Annotate(c, absl::StrCat("adding pid ", pid, " to DAMON: "));
  }
  if (!ours) {
    return absl::FailedPreconditionError(absl::StrCat(
        "pid ", pid, " exited or was reused while DAMON took it on"));
  }
  return static_cast<int>(slot);
}

absl::Status DamonSource::RemoveTarget(int slot) {
  MutexLock l(&mu_);
  if (torn_down_ || !owned_) return absl::OkStatus();
  if (slot < 0 || static_cast<size_t>(slot) >= slots_.size() ||
      slots_[slot].free) {
    return absl::OkStatus();
  }
  slots_[slot].free = true;
  slots_[slot].pid = SelfPid();
  bool any = false;
  for (const Slot& s : slots_) any = any || !s.free;
  if (!any) return absl::OkStatus();  // the owner stops the source
  return Annotate(CommitLayout(), "removing a DAMON target: ");
}

absl::StatusOr<size_t> DamonSource::PollSlots(const DamonSlotSink& sink) {
  std::vector<std::pair<int, pid_t>> ready;
  {
    MutexLock l(&mu_);
    HOTPAGE_RETURN_IF_ERROR(UpdateLocked());
    const uint64_t t1 = MonotonicNs();
    if (slot_regions_.size() < slots_.size()) {
      slot_regions_.resize(slots_.size());
    }
    bool any = false;
    for (size_t i = 0; i < slots_.size(); ++i) {
      const Slot& s = slots_[i];
      if (s.free || t1 < s.deliver_after_ns) continue;
      std::vector<DamonRegion>& r = slot_regions_[i];
      HOTPAGE_RETURN_IF_ERROR(
          ReadRegionsOf(multi_ ? static_cast<int>(i) : 0, &r));
      stats_.regions += r.size();
      any = any || !r.empty();
      ready.emplace_back(static_cast<int>(i), s.pid);
    }
    if (!any) ++stats_.empty_updates;
    stats_.read_ns += MonotonicNs() - t1;
  }
  size_t delivered = 0, dropped = 0;
  for (const auto& [slot, pid] : ready) {
    const int sl = slot;
    delivered += Emit(
        pid, slot_regions_[slot],
        [&](absl::Span<const Sample> b) { sink(sl, b); }, &dropped);
  }
  MutexLock l(&mu_);
  stats_.samples += delivered;
  stats_.samples_dropped += dropped;
  return delivered;
}

}  // namespace hotpage
