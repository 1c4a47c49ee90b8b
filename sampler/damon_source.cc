#include "sampler/damon_source.h"

#include <time.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <cerrno>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "tools/base/clock.h"
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
    "DAMON's sysfs files are root's, mode 0600 (reading and writing them needs root or "
    "CAP_DAC_OVERRIDE); run hotpage as root: ";

// Upper bound on tried regions read per Poll, whatever the options say.
constexpr size_t kMaxTriedRegionsHard = size_t{1} << 17;

Mutex& RegistryMu() {
  static Mutex* mu = new Mutex;
  return *mu;
}

std::vector<DamonSource*>& Registry() ABSL_EXCLUSIVE_LOCKS_REQUIRED(RegistryMu()) {
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
    return absl::InvalidArgumentError("DAMON sample_us must be > 0 (default 5000)");
  }
  if (o.aggr_us < o.sample_us || o.aggr_us % o.sample_us != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "DAMON aggr_us (", o.aggr_us, ") must be a multiple of sample_us (", o.sample_us,
        "); e.g. sample_us 5000, aggr_us 100000"));
  }
  if (o.aggr_us / o.sample_us > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "DAMON aggr_us / sample_us is ", o.aggr_us / o.sample_us,
        "; keep it at most 65535 (20 is typical)"));
  }
  if (o.update_us < o.aggr_us) {
    return absl::InvalidArgumentError(absl::StrCat("DAMON update_us (", o.update_us,
                                                   ") must be at least aggr_us (", o.aggr_us,
                                                   ")"));
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
    return absl::InvalidArgumentError(
        absl::StrCat("DAMON admin_dir \"", o.admin_dir, "\" must be an absolute path"));
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
    absl::Status st = s->TeardownLocked("torn down by TeardownAll (termination signal)");
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
      max_nr_accesses_(static_cast<uint32_t>(options.aggr_us / options.sample_us)),
      batch_(new Sample[kBatch]) {}

absl::StatusOr<std::unique_ptr<DamonSource>> DamonSource::Start(pid_t pid,
                                                                 const DamonOptions& options) {
  HOTPAGE_ASSIGN_OR_RETURN(KernelFs fs, KernelFs::Open("/"));
  HOTPAGE_ASSIGN_OR_RETURN(std::unique_ptr<LiveSysfsWriter> writer, LiveSysfsWriter::Open("/"));
  return Start(pid, options, std::move(fs), std::move(writer));
}

absl::StatusOr<std::unique_ptr<DamonSource>> DamonSource::Start(
    pid_t pid, const DamonOptions& options, KernelFs fs, std::unique_ptr<SysfsWriter> writer) {
  HOTPAGE_RETURN_IF_ERROR(ValidateDamonOptions(options));
  if (pid <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("DAMON target pid ", pid, " is not valid"));
  }
  if (writer == nullptr) return absl::InvalidArgumentError("DAMON source needs a SysfsWriter");
  std::unique_ptr<DamonSource> src(
      new DamonSource(pid, options, std::move(fs), std::move(writer)));
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

absl::Status DamonSource::Write(absl::string_view rel, absl::string_view value) {
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
  return absl::Status(s.code(), absl::StrCat(s.message(), "; removing the half-made DAMON "
                                                          "context also failed: ",
                                             td.message()));
}

absl::Status DamonSource::CheckFree() {
  const std::string admin = options_.admin_dir;
  if (!fs_.Exists(admin)) {
    return absl::UnimplementedError(absl::StrCat(
        "DAMON sysfs interface not found: ", fs_.Display(admin),
        " does not exist. This kernel lacks CONFIG_DAMON_SYSFS (Linux 5.18+) or sysfs is "
        "not mounted; use another sample source (e.g. --source pagefault)"));
  }
  auto nr_or = ReadIntRetry(kNrKdamonds);
  if (!nr_or.ok()) {
    if (nr_or.status().code() == absl::StatusCode::kPermissionDenied) {
      return Annotate(nr_or.status(), kNeedsRoot);
    }
    return nr_or.status();
  }
  const int64_t nr = *nr_or;
  if (nr != 0) {
    // Say who holds it, as far as sysfs tells.
    std::vector<std::string> holders;
    for (int64_t i = 0; i < std::min<int64_t>(nr, 4); ++i) {
      const std::string k = absl::StrCat("kdamonds/", i);
      auto state = ReadRetry(absl::StrCat(k, "/state"));
      auto kpid = ReadRetry(absl::StrCat(k, "/pid"));
      auto ops = ReadRetry(absl::StrCat(k, "/contexts/0/operations"));
      auto target = ReadRetry(absl::StrCat(k, "/contexts/0/targets/0/pid_target"));
      std::string h = absl::StrCat("kdamond ", i, ": state ", state.ok() ? *state : "?",
                                   ", thread pid ", kpid.ok() ? *kpid : "?");
      if (ops.ok()) absl::StrAppend(&h, ", ", *ops);
      if (target.ok() && ops.ok() && *ops != "paddr") absl::StrAppend(&h, " target pid ", *target);
      holders.push_back(std::move(h));
    }
    if (nr > 4) holders.push_back("...");
    return absl::FailedPreconditionError(absl::StrCat(
        "DAMON is already in use: ", fs_.Display(AdminPath(kNrKdamonds)), " is ", nr, " (",
        absl::StrJoin(holders, "; "),
        "). hotpage creates its own kdamond and writes nr_kdamonds only when it is 0: the "
        "count is global and writing it destroys every existing kdamond, including these. "
        "Stop the other DAMON user (e.g. `damo stop`), or if these kdamonds are stale, "
        "remove them (echo off > ", fs_.Display(AdminPath("kdamonds/N/state")),
        " for each running one, then echo 0 > ", fs_.Display(AdminPath(kNrKdamonds)),
        ") and retry"));
  }
  if (!fs_.Exists(absl::StrCat("/proc/", pid_))) {
    return absl::NotFoundError(
        absl::StrCat("no such process: pid ", pid_, " (", fs_.Display(absl::StrCat("/proc/", pid_)),
                     " does not exist)"));
  }
  return absl::OkStatus();
}

absl::Status DamonSource::SetupLocked() {
  HOTPAGE_RETURN_IF_ERROR(CheckFree());
  {
    int err = WriteRetry(kNrKdamonds, "1");
    if (err != 0) {
      absl::Status s = WriteErrorStatus(err, "1", writer_->Display(AdminPath(kNrKdamonds)));
      if (err == EBUSY) {
        return Annotate(s, "DAMON became busy (another user started a kdamond after hotpage "
                           "found none): ");
      }
      if (err == EACCES || err == EPERM) return Annotate(s, kNeedsRoot);
      return s;
    }
  }
  owned_ = true;
  HOTPAGE_RETURN_IF_ERROR(Annotate(Configure(), absl::StrCat("configuring DAMON for pid ",
                                                             pid_, ": ")));
  auto kpid = ReadRetry(absl::StrCat(kKdamond, "/pid"));
  if (kpid.ok()) stats_.kdamond_pid = std::atoi(kpid->c_str());
  return absl::OkStatus();
}

absl::Status DamonSource::Configure() {
  const std::string c = kContext;
  const std::string s = kScheme;
  const std::string attrs = c + "/monitoring_attrs";
  HOTPAGE_RETURN_IF_ERROR(Write(absl::StrCat(kKdamond, "/contexts/nr_contexts"), "1"));
  // Kernels that list their operations sets (6.2+) tell us up front whether
  // vaddr monitoring was built in (CONFIG_DAMON_VADDR).
  auto avail = fs_.ReadFile(AdminPath(c + "/avail_operations"));
  if (avail.ok() && avail->find("vaddr") == std::string::npos) {
    return absl::UnimplementedError(absl::StrCat(
        fs_.Display(AdminPath(c + "/avail_operations")), " does not list vaddr: this kernel's "
        "DAMON cannot monitor virtual addresses (CONFIG_DAMON_VADDR); use another source"));
  }
  HOTPAGE_RETURN_IF_ERROR(Write(c + "/operations", "vaddr"));
  HOTPAGE_RETURN_IF_ERROR(
      Write(attrs + "/intervals/sample_us", absl::StrCat(options_.sample_us)));
  HOTPAGE_RETURN_IF_ERROR(Write(attrs + "/intervals/aggr_us", absl::StrCat(options_.aggr_us)));
  HOTPAGE_RETURN_IF_ERROR(
      Write(attrs + "/intervals/update_us", absl::StrCat(options_.update_us)));
  HOTPAGE_RETURN_IF_ERROR(
      Write(attrs + "/nr_regions/min", absl::StrCat(options_.min_nr_regions)));
  HOTPAGE_RETURN_IF_ERROR(
      Write(attrs + "/nr_regions/max", absl::StrCat(options_.max_nr_regions)));
  HOTPAGE_RETURN_IF_ERROR(Write(c + "/targets/nr_targets", "1"));
  HOTPAGE_RETURN_IF_ERROR(Write(c + "/targets/0/pid_target", absl::StrCat(pid_)));
  wrote_target_ = true;
  HOTPAGE_RETURN_IF_ERROR(Write(c + "/schemes/nr_schemes", "1"));
  HOTPAGE_RETURN_IF_ERROR(Write(s + "/action", "stat"));
  // A new scheme's access pattern is 0..0 everywhere and matches nothing.
  const std::string p = s + "/access_pattern";
  HOTPAGE_RETURN_IF_ERROR(Write(p + "/sz/min", "0"));
  HOTPAGE_RETURN_IF_ERROR(
      Write(p + "/sz/max", absl::StrCat(std::numeric_limits<uint64_t>::max())));
  HOTPAGE_RETURN_IF_ERROR(Write(p + "/nr_accesses/min", "0"));
  HOTPAGE_RETURN_IF_ERROR(
      Write(p + "/nr_accesses/max", absl::StrCat(std::numeric_limits<uint32_t>::max())));
  HOTPAGE_RETURN_IF_ERROR(Write(p + "/age/min", "0"));
  HOTPAGE_RETURN_IF_ERROR(
      Write(p + "/age/max", absl::StrCat(std::numeric_limits<uint32_t>::max())));
  absl::Status on = Write(absl::StrCat(kKdamond, "/state"), "on");
  if (!on.ok()) {
    if (!fs_.Exists(absl::StrCat("/proc/", pid_))) {
      return Annotate(on, absl::StrCat("target pid ", pid_, " exited before monitoring began: "));
    }
    return Annotate(on, "the kernel refused to start the kdamond (dmesg may say why): ");
  }
  return absl::OkStatus();
}

// --- Teardown ------------------------------------------------------------

absl::Status DamonSource::VerifyOwnership() {
  const std::string nr_path = fs_.Display(AdminPath(kNrKdamonds));
  auto nr = ReadIntRetry(kNrKdamonds);
  if (!nr.ok()) {
    return Annotate(nr.status(), "cannot tell whether DAMON's kdamond is still hotpage's, so "
                                 "not removing it: ");
  }
  if (*nr != 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        nr_path, " is ", *nr, ", not the 1 kdamond hotpage created: someone else rewrote "
        "DAMON's kdamonds; leaving them alone"));
  }
  // What we wrote so far must still be there. A context that was not yet
  // configured has no target or operations to compare.
  auto target = ReadIntRetry(absl::StrCat(kContext, "/targets/0/pid_target"));
  auto ops = ReadRetry(absl::StrCat(kContext, "/operations"));
  const bool foreign_ops = ops.ok() && *ops != "vaddr";  // vaddr is also the default
  const bool foreign_target =
      target.ok() && (wrote_target_ ? *target != pid_ : (*target != 0 && *target != pid_));
  if (foreign_ops || foreign_target) {
    return absl::FailedPreconditionError(absl::StrCat(
        "kdamond 0 monitors pid ", target.ok() ? absl::StrCat(*target) : "?", " with ",
        ops.ok() ? *ops : "?",
        " operations, not hotpage's vaddr context for pid ", pid_,
        ": someone else replaced it; leaving it alone"));
  }
  return absl::OkStatus();
}

absl::Status DamonSource::TeardownLocked(absl::string_view why) {
  if (torn_down_) return teardown_status_;
  torn_down_ = true;
  teardown_why_ = std::string(why);
  if (!owned_) return teardown_status_;  // nothing of ours exists
  owned_ = false;
  absl::Status own = VerifyOwnership();
  if (!own.ok()) {
    teardown_status_ = own;
    return own;
  }
  const std::string state_rel = absl::StrCat(kKdamond, "/state");
  absl::Status off_status;
  auto state = ReadRetry(state_rel);
  if (!state.ok() || *state != "off") {
    int err = WriteRetry(state_rel, "off");
    // EPERM: the kdamond stopped by itself between the read and the write.
    if (err != 0 && err != EPERM) {
      off_status = WriteErrorStatus(err, "off", writer_->Display(AdminPath(state_rel)));
    }
  }
  int err = WriteRetry(kNrKdamonds, "0");
  if (err != 0) {
    absl::Status s = WriteErrorStatus(err, "0", writer_->Display(AdminPath(kNrKdamonds)));
    teardown_status_ = absl::Status(
        s.code(), absl::StrCat("removing hotpage's DAMON kdamond (", why, "): ", s.message(),
                               off_status.ok() ? "" : "; turning it off first: ",
                               off_status.message()));
  }
  return teardown_status_;
}

// --- Poll ----------------------------------------------------------------

absl::Status DamonSource::KdamondStopped() {
  const bool exited = !fs_.Exists(absl::StrCat("/proc/", pid_));
  const std::string why =
      exited ? absl::StrCat("target pid ", pid_, " exited")
             : absl::StrCat("the kdamond was turned off by someone else (",
                            fs_.Display(AdminPath(absl::StrCat(kKdamond, "/state"))),
                            " reads off; pid ", pid_, " still exists)");
  absl::Status td = TeardownLocked(why);
  return absl::NotFoundError(absl::StrCat(
      "DAMON monitoring of pid ", pid_, " ended: ", why,
      td.ok() ? "; its DAMON context was removed"
              : absl::StrCat("; removing its DAMON context failed: ", td.message())));
}

absl::Status DamonSource::ReadRegions() {
  const std::string dir = AdminPath(absl::StrCat(kScheme, "/tried_regions"));
  HOTPAGE_ASSIGN_OR_RETURN(std::vector<std::string> names, fs_.ListDir(dir));
  const size_t limit = std::min<size_t>(
      std::max<size_t>(size_t{2} * options_.max_nr_regions, 64), kMaxTriedRegionsHard);
  auto indices = SortTriedRegionIndices(names, limit);
  if (!indices.ok()) return Annotate(indices.status(), absl::StrCat(fs_.Display(dir), ": "));
  regions_.clear();
  regions_.reserve(indices->size());
  for (uint32_t i : *indices) {
    const std::string rdir = absl::StrCat(dir, "/", i);
    HOTPAGE_ASSIGN_OR_RETURN(std::string start, fs_.ReadFile(rdir + "/start"));
    HOTPAGE_ASSIGN_OR_RETURN(std::string end, fs_.ReadFile(rdir + "/end"));
    HOTPAGE_ASSIGN_OR_RETURN(std::string nr, fs_.ReadFile(rdir + "/nr_accesses"));
    HOTPAGE_ASSIGN_OR_RETURN(std::string age, fs_.ReadFile(rdir + "/age"));
    auto r = ParseDamonRegion({start, end, nr, age});
    if (!r.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("DAMON tried region ", fs_.Display(rdir), "/", r.status().message()));
    }
    regions_.push_back(*r);
  }
  stats_.regions_fixed += NormalizeRegions(regions_);
  stats_.regions += regions_.size();
  return absl::OkStatus();
}

absl::Status DamonSource::PollLocked() {
  if (torn_down_ || !owned_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "DAMON source for pid ", pid_, " is no longer running (", teardown_why_, ")"));
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
  absl::Status read = ReadRegions();
  stats_.read_ns += MonotonicNs() - t1;
  if (read.ok() && regions_.empty()) ++stats_.empty_updates;
  return read;
}

absl::StatusOr<size_t> DamonSource::Poll(const SampleSink& sink) {
  {
    // Holds mu_ only for the sysfs part, so that TeardownAll waits at most
    // for one update; the conversion below touches owner-thread state only.
    MutexLock l(&mu_);
    HOTPAGE_RETURN_IF_ERROR(PollLocked());
  }
  const uint64_t now_ns = MonotonicNs();
  Sample proto;
  proto.time_ns = now_ns;
  proto.period = max_nr_accesses_;
  proto.pid = static_cast<uint32_t>(pid_);
  proto.source = SampleSource::kDamon;
  proto.flags = kSampleRegion;
  const size_t cap = options_.max_samples_per_poll == 0 ? std::numeric_limits<size_t>::max()
                                                        : options_.max_samples_per_poll;
  size_t delivered = 0, dropped = 0, fill = 0;
  Sample* batch = batch_.get();
  ForEachChunk(regions_, options_.chunk_bytes, max_nr_accesses_,
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
  MutexLock l(&mu_);
  stats_.samples += delivered;
  stats_.samples_dropped += dropped;
  return delivered;
}

}  // namespace hotpage
