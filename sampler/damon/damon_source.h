// DamonSource: region-level access samples from the kernel's DAMON, for
// machines without PEBS or IBS (most VMs). It creates its OWN kdamond with
// one virtual-address context for one target process through
// /sys/kernel/mm/damon/admin, reads the access frequency of the monitored
// regions after every aggregation interval, and turns them into Samples.
//
// Setup (Start), the exact write sequence; paths relative to the admin dir,
// K = kdamonds/0, C = K/contexts/0, S = C/schemes/0:
//   flock STATE_DIR/damon.lock           held until teardown (below)
//   read  kdamonds/nr_kdamonds           must be 0, else remove a stale
//                                        kdamond of ours or refuse (below)
//   write STATE_DIR/damon-state          names this process and the target
//   write kdamonds/nr_kdamonds   1       from here on the kdamond is ours
//   write K/contexts/nr_contexts 1
//   write C/operations           vaddr
//   write C/monitoring_attrs/intervals/{sample_us,aggr_us,update_us}
//   write C/monitoring_attrs/nr_regions/{min,max}
//   write C/targets/nr_targets   1
//   write C/targets/0/pid_target PID
//   write C/schemes/nr_schemes   1
//   write S/action               stat
//   write S/access_pattern/{sz,nr_accesses,age}/{min,max}
//                                0 and the type's maximum: a new scheme's
//                                ranges are all 0..0 and match NOTHING
//   write K/state                on
//
// Poll: `update_schemes_tried_regions` to K/state (blocks for about one
// aggregation interval, 0.11 s at the default 100 ms), then
// S/tried_regions/<N>/{start,end,nr_accesses,age} in numeric order.
//
// Teardown (Stop, the destructor, errors after the kdamond became ours,
// target exit, TeardownAll on SIGTERM/SIGINT): only if the kdamond is still
// ours (nr_kdamonds reads 1, C's target is our pid, C's operations vaddr),
// `off` to K/state if it reads `on` (EPERM = it already stopped), then
// `0` to kdamonds/nr_kdamonds, retried on EBUSY (DAMON's sysfs lock is
// taken with trylock). That last write cleans up in every case, including a
// target that exited (the kdamond then stops by itself, state reads `off`,
// the update command fails with EINVAL and `off` with EPERM). Then the
// state file is removed and the lock released. If the `0` write fails the
// state file stays, so that the next Start can retry the removal.
//
// After a SIGKILL (the OOM killer, systemd's stop timeout) nothing tears
// down: the kdamond runs until its target exits (then stops by itself) and
// nr_kdamonds stays 1. The next Start cleans up, with the design of the
// hint-fault controller (hintfault/numa_balancing_controller.h,
// tools/base/state_dir.h): while a source runs it holds an exclusive flock on
// STATE_DIR/damon.lock (default /run/hotpage; the kernel releases it when the
// process dies, so a free lock means a dead writer) and, written atomically
// BEFORE nr_kdamonds = 1, STATE_DIR/damon-state (format: DamonState,
// sampler/recovery_state.h). When Start finds nr_kdamonds != 0, the lock free,
// a state file that parses, and a kdamond that still looks like the one the
// file names (nr_kdamonds reads 1, C's operations read `vaddr`, C's target is
// the file's target pid), it removes that kdamond exactly as the teardown above
// does, says so through DamonOptions::warn ("removed a stale hotpage kdamond
// left by pid N (target pid M)"), removes the file and starts as usual. In
// every other case it refuses as before and adds what the state file said: no
// file (not hotpage's), a file naming another target (someone replaced it), a
// file that does not parse (never acted on). A lock held by a live process is
// refused, naming the pid its state file gives. A dead run's file with
// nr_kdamonds 0 (its kdamond is gone) is simply replaced. The state
// directory is root-owned or ours, never group/other-writable, opened
// O_NOFOLLOW.
// The check is as good as sysfs allows: a foreign vaddr kdamond that
// someone created for the same target pid after hotpage died (destroying
// hotpage's) is indistinguishable from hotpage's and would be removed.
//
// Why refuse when nr_kdamonds != 0: the count is global and writing it
// destroys every existing kdamond, including other users' (damo, another
// agent). hotpage never writes it unless it read 0 first, and never writes
// 0 unless the one kdamond there is recognisably its own (or, after a
// SIGKILL, a dead hotpage's, as above). Two hotpage processes cannot race
// between that read and their write of 1 (they share the lock); hotpage
// and another DAMON user still could. The kernel's EBUSY for a running
// kdamond narrows but does not close that window (sysfs offers no
// compare-and-swap).
//
// ----------------------------------------------------------------------
// What a consumer of the Samples must assume (region-level evidence):
//
// DAMON checks the Accessed bit of ONE randomly chosen page per region per
// sample interval (sample_us) and reports, per aggregation interval
// (aggr_us), in how many of its N = aggr_us / sample_us checks it found the
// region accessed: nr_accesses in [0, N]. Regions are adaptive (between
// min_nr_regions and max_nr_regions for the whole process, each at most
// 1/min_nr_regions of the monitored bytes); DAMON CANNOT see a hot page
// inside a colder region, only regions whose pages are accessed alike. A hot
// set interleaved page by page with cold pages is invisible; contiguous hot
// clusters are found (measured in the guest: tests/damon/README.md).
//
// Each Poll covers ONE aggregation interval and emits, for every naturally
// aligned chunk of `chunk_bytes` (default 2 MiB) that the regions cover with
// a nonzero count (the overlap-weighted mean nr_accesses of the regions in
// the chunk, see ForEachChunk), `count` identical Samples:
//   source  = SampleSource::kDamon; flags has kSampleRegion
//   pid     = the target; tid = 0, cpu = 0 (unknown)
//   vaddr   = the chunk's first monitored byte (the chunk start when the
//             chunk is fully inside regions); the evidence is for the whole
//             chunk [vaddr & ~(chunk_bytes - 1), + chunk_bytes), NOT for the
//             page at vaddr. With the default chunk it maps 1:1 to a 2 MiB
//             hotness entry.
//   period  = N, the number of checks in the interval: each Sample is one
//             positive check out of `period`, so count / period estimates the
//             fraction of sample intervals in which the chunk was accessed
//             (0..1). It is NOT a count of memory accesses and is not
//             comparable with a PEBS period: weigh DAMON evidence per source.
//   time_ns = CLOCK_MONOTONIC when the interval's results were read.
//   weight, paddr, data_src = 0; level, tlb = unknown.
// Chunks with count 0 produce no Sample (absence of samples = not seen
// accessed, as for every source); regions() has the raw regions, idle ones
// included. Successive Polls cover disjoint aggregation intervals; when Poll
// is called less often than aggr_us the intervals between are not seen.
// Samples per Poll <= N x (monitored bytes / chunk_bytes), capped by
// max_samples_per_poll (the excess is counted, not delivered).
// ----------------------------------------------------------------------
//
// ----------------------------------------------------------------------
// Several processes in one context (AddTarget, RemoveTarget, PollSlots; the
// daemon's MachineDamon, tools/daemon/machine_damon.h):
//
// One kdamond, one vaddr context, one target per process. What the kernel
// does, from its source (6.12: mm/damon/sysfs.c, sysfs-schemes.c, core.c;
// the fake in fake_damon.h plays exactly this):
//   - tried_regions do not say which target a region came from, so target
//     i gets its own scheme i (action stat, the widened pattern) with one
//     DAMOS filter: filters/0/type = target, damon_target_idx = i (the
//     file is named so: __ATTR_RW_MODE(damon_target_idx, 0600) in
//     sysfs-schemes.c; damo writes it too), matching = N.
//     6.12's filters filter OUT what matches ((index == target_idx) ==
//     matching), so matching N keeps exactly target i's regions
//     (__damos_filter_out()); the filter is applied before the region is
//     recorded (damos_apply_scheme(): damos_filter_out() precedes the
//     before_damos_apply callback that fills tried_regions). Type `target`
//     exists since 6.6 (later kernels add `allow`, default N = reject,
//     which keeps this meaning). Scheme i then lists target i's regions
//     only; schemes of free slots keep the 0..0 pattern and list nothing.
//   - `commit` to kdamonds/0/state applies the sysfs parameters to the
//     running context (damon_commit_ctx(), 6.11+): targets are matched BY
//     INDEX (damon_commit_targets()): index i keeps its regions and takes
//     sysfs target i's pid, targets past the new count are destroyed, new
//     ones appended (their regions appear at the next ops update, <=
//     update_us). So removing a target in the middle would hand every
//     later index the regions of the process before it. Slots therefore
//     never move: a slot whose process left becomes FREE (it monitors
//     this process, options.self_pid, which is alive while we commit and
//     cannot be reused; its scheme matches nothing), trailing free slots
//     are dropped, and a new process takes the lowest free slot. A reused
//     slot reports the previous process's regions until DAMON's next ops
//     update re-reads the mappings, so its regions are withheld for
//     update_us + 2 x aggr_us after the commit.
//   - nr_targets, nr_schemes and nr_filters re-create every child directory
//     with defaults, so every change rewrites the whole layout (targets,
//     schemes, filters), then commits. Nothing reaches the kdamond before
//     the commit.
//   - Each pid_target is resolved again at every commit (find_get_pid()):
//     a number whose process exited is EINVAL, one reused by another
//     process would be monitored. Before a commit every slot's process is
//     checked (gone: freed); after it, each slot's start time must still be
//     the one its caller gave (a process alive with the same start time
//     held its pid throughout, so the commit resolved it): a mismatch frees
//     the slot and commits again, and its regions are never delivered.
//   - On 6.12 a commit that fails (a pid that vanished in between) is NOT
//     reported to the writer: the kdamond stops (the commit callback's
//     error ends kdamond_fn; 6.15 validates first and returns the error).
//     After every commit `state` is read: `off` means it stopped, and the
//     source starts it again (`on`, dead slots freed first), counted in
//     DamonStats::restarts; every slot's monitoring then starts afresh.
//   - DAMON's nr_regions bounds and the region size limit (monitored bytes
//     / min_nr_regions) are per context, so targets share them: with more
//     processes, each gets coarser regions. Free slots add this process's
//     mappings to the monitored bytes until they are dropped or reused.
//   - The state file keeps naming target 0's pid (rewritten before a
//     commit that changes it), so a SIGKILLed daemon's kdamond is found and
//     removed by the next Start as for one target.
// The first target is Start's pid (slot 0). Until a second one is added
// the layout is the single-target one above (scheme 0 without a filter).
// ----------------------------------------------------------------------
//
// Limits: one DamonSource per machine at a time (it takes kdamond 0 and
// needs nr_kdamonds to be 0). A SIGKILLed hotpage cannot tear down; the
// next Start does (above). A hotpage killed after its state file but before
// it wrote the target pid leaves a kdamond the next Start cannot recognise:
// it refuses with instructions to clean up by hand.
//
// Threading: one owner thread calls Poll/Stop; any thread may call
// TeardownAll() (the SIGTERM/SIGINT path: see termination_signals.h; do NOT
// call it from a signal handler: it takes locks and does file I/O). Every
// method serializes on the source's mutex, so a teardown waits for an
// in-flight Poll (at most about one aggregation interval) and the next Poll
// returns FailedPrecondition.

#ifndef HOTPAGE_SAMPLER_DAMON_DAMON_SOURCE_H_
#define HOTPAGE_SAMPLER_DAMON_DAMON_SOURCE_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "sampler/damon/damon_region.h"
#include "sampler/recovery_state.h"
#include "sampler/sample.h"
#include "tools/base/kernel/kernel_fs.h"
#include "tools/base/kernel/sysfs_writer.h"
#include "tools/base/mutex.h"
#include "tools/base/state_dir.h"

namespace hotpage {

// Same type as in sampler/perf/sampler.h (an alias may be redeclared).
using SampleSink = std::function<void(absl::Span<const Sample>)>;

struct DamonOptions {
  // DAMON's monitoring attributes. Intervals: the values tested in the
  // guest (tests/damon/README.md); N = aggr_us / sample_us = 20 checks per
  // interval.
  uint64_t sample_us = 5000;
  uint64_t aggr_us = 100000;
  uint64_t update_us = 1000000;  // how often DAMON re-reads the target's VMAs
  // DAMON never lets a region grow beyond (monitored bytes / min_nr_regions),
  // so min_nr_regions is the resolution knob: 100 keeps regions of a 200 MiB
  // process at about 2 MiB. Measured in the 6.12 TCG guest (192 MiB, 8 hot
  // clusters of 2 MiB, tests/damon, host shared with other builds): with
  // 100, 90% of a new hot set was found 0.8-2.5 s after a switch (2-6
  // refreshes; 5.7 s once on a heavily loaded host), precision 0.96-1.0
  // once settled; with DAMON's usual 10, 4.2-4.5 s (22-24 refreshes), and
  // the first hot set was still at recall 0.5-0.6 after 3-5 s. Reading the
  // regions costs 4 small sysfs files per region per Poll: 0.15-0.26 s for
  // about 125 regions under TCG (not measured on hardware). The kernel
  // wants min >= 3.
  uint32_t min_nr_regions = 100;
  uint32_t max_nr_regions = 1000;
  // Evidence granularity of the Samples (power of two, 4 KiB .. 1 GiB).
  uint64_t chunk_bytes = uint64_t{2} << 20;
  // Upper bound on Samples delivered by one Poll (0: no bound).
  size_t max_samples_per_poll = size_t{1} << 20;
  // Where DAMON's sysfs lives (as the kernel spells it, under the KernelFs
  // root).
  std::string admin_dir = "/sys/kernel/mm/damon/admin";
  // Where the lock and the state file live (a real absolute path, NOT under
  // the KernelFs root; tests use a temporary directory).
  std::string state_dir = kDefaultStateDir;
  // The pid a free slot of a multi-target context monitors (0: this
  // process, getpid()). Tests name their fake's process.
  pid_t self_pid = 0;
  // Notices (a stale kdamond removed), one line each without a trailing
  // newline (default: "hotpage: <line>" on stderr). Called from Start.
  std::function<void(const std::string&)> warn;
};

inline constexpr char kDamonLockName[] = "damon.lock";
inline constexpr char kDamonStateName[] = "damon-state";

// The state file STATE_DIR/damon-state holds a DamonState in the shared
// recovery-state format (sampler/recovery_state.h: FormatDamonState,
// ParseDamonState).

// Checks ranges (sample_us > 0, aggr_us a multiple of sample_us with
// N <= 65535, update_us >= aggr_us, 3 <= min_nr_regions <= max_nr_regions
// <= 65536, chunk_bytes, absolute admin_dir and state_dir). The message
// names the option and what to use.
absl::Status ValidateDamonOptions(const DamonOptions& options);

struct DamonStats {
  uint64_t polls = 0;
  uint64_t regions = 0;          // regions read, all polls
  uint64_t samples = 0;          // Samples delivered
  uint64_t samples_dropped = 0;  // over max_samples_per_poll
  uint64_t regions_fixed = 0;    // clipped/dropped by NormalizeRegions
  uint64_t ebusy_retries = 0;
  // Updates that returned no region at all although the kdamond runs: 6.12
  // gives up collecting after 2 aggregation intervals of jiffies, which a
  // starved kdamond can miss. That interval is then simply not seen.
  uint64_t empty_updates = 0;
  uint64_t update_ns = 0;  // wall time in the update command, all polls
  uint64_t read_ns = 0;    // wall time reading tried_regions, all polls
  int kdamond_pid = -1;    // the kernel thread, as read after `on`
  // Several targets: commits written, kdamond restarts after a commit
  // stopped it (6.12), slots freed because their pid was reused.
  uint64_t commits = 0;
  uint64_t restarts = 0;
  uint64_t reused_pids = 0;
};

// Samples of one slot's process (PollSlots); pid is in every Sample.
using DamonSlotSink = std::function<void(int slot, absl::Span<const Sample>)>;

class DamonSource {
 public:
  // Live machine: reads and writes under "/".
  static absl::StatusOr<std::unique_ptr<DamonSource>> Start(
      pid_t pid, const DamonOptions& options);
  // Reads through `fs` and writes through `writer` (both rooted at the same
  // tree; tests pass a FakeTree and a FakeSysfsLog writer).
  static absl::StatusOr<std::unique_ptr<DamonSource>> Start(
      pid_t pid, const DamonOptions& options, KernelFs fs,
      std::unique_ptr<SysfsWriter> writer);
  // As above for the process (pid, start time) the caller pinned: the start
  // time is checked again after `on` (FailedPrecondition when the pid was
  // reused in between; nothing is delivered for it). Slot 0.
  static absl::StatusOr<std::unique_ptr<DamonSource>> StartPinned(
      pid_t pid, uint64_t start_time_ticks, const DamonOptions& options,
      KernelFs fs, std::unique_ptr<SysfsWriter> writer);

  // Tears down (see Stop) if not done yet.
  ~DamonSource();
  DamonSource(const DamonSource&) = delete;
  DamonSource& operator=(const DamonSource&) = delete;

  // Waits for the next aggregation interval's results and delivers them to
  // `sink` as Samples in batches (the sink must not call back into this
  // source). Returns the number of Samples delivered. An update that
  // yields no region at all (6.12 gives up after 2 aggregation intervals of
  // jiffies, which a starved kdamond can miss; seen right after Start and
  // under TCG on a loaded host) delivers nothing and counts in
  // DamonStats::empty_updates; regions() is then empty.
  // Errors:
  //   NotFound: the kdamond stopped (state reads `off`): the target exited
  //     (the message says so when /proc/PID is gone) or someone turned it
  //     off. The context has been torn down; the source is finished.
  //   FailedPrecondition: the source was stopped or torn down before.
  //   others (a malformed tried region names its file): the context keeps
  //     running; the caller decides (destroying the source tears down).
  absl::StatusOr<size_t> Poll(const SampleSink& sink) ABSL_LOCKS_EXCLUDED(mu_);

  // --- Several targets (see "Several processes in one context") ---
  // Monitors process (pid, start time) too: a free slot or a new one, the
  // whole layout rewritten and committed. Returns its slot. Errors:
  // FailedPrecondition when the pid is gone or was reused (start time
  // differs) before or across the commit (the slot is freed again);
  // NotFound when the kdamond ended; others from sysfs.
  absl::StatusOr<int> AddTarget(pid_t pid, uint64_t start_time_ticks)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Stops monitoring the slot's process (the slot becomes free; trailing
  // free slots are dropped), committed at once. Other slots keep their
  // index, pid and regions. Unknown or free slots: OK, nothing written.
  absl::Status RemoveTarget(int slot) ABSL_LOCKS_EXCLUDED(mu_);
  // One aggregation interval, as Poll, for every slot in use: each slot's
  // scheme's regions become that process's Samples (pid = its pid), handed
  // to `sink` with the slot (not under the source's lock; the sink must not
  // call back). Slots freed or reused since their caller added them, and
  // slots within their stale window, deliver nothing. Returns the Samples
  // delivered. Errors as Poll.
  absl::StatusOr<size_t> PollSlots(const DamonSlotSink& sink)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Slots in use (processes monitored).
  size_t targets() const ABSL_LOCKS_EXCLUDED(mu_);

  // Turns monitoring off and removes the kdamond, if it is still ours.
  // Idempotent: later calls return the first call's status. Never touches a
  // kdamond that is not recognisably ours (FailedPrecondition says why).
  absl::Status Stop() ABSL_LOCKS_EXCLUDED(mu_);

  // Tears down every DamonSource of this process that has not been torn
  // down; returns OK or the first error (every source is attempted). For
  // the termination path of `hotpage attach`: call it from an ordinary
  // thread woken by a signalfd or self-pipe (TerminationSignalThread), never
  // from a signal handler. Sources stay valid objects; their Poll then
  // returns FailedPrecondition.
  static absl::Status TeardownAll();

  // The regions of the last successful Poll, sorted by start, including
  // idle ones. Owner thread only.
  const std::vector<DamonRegion>& regions() const { return regions_; }
  // N: checks per aggregation interval, the `period` of every Sample.
  uint32_t max_nr_accesses() const { return max_nr_accesses_; }
  pid_t pid() const { return pid_; }
  const DamonOptions& options() const { return options_; }
  DamonStats stats() const ABSL_LOCKS_EXCLUDED(mu_);
  // False once torn down (by Stop, an error, target exit or TeardownAll).
  bool running() const ABSL_LOCKS_EXCLUDED(mu_);

  // Paths (as the kernel spells them) for messages and tests.
  std::string AdminPath(absl::string_view rel) const;

  // What Start removed before starting ("removed a stale hotpage kdamond
  // left by pid N ..."), empty if nothing.
  std::string recovered() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  DamonSource(pid_t pid, const DamonOptions& options, KernelFs fs,
              std::unique_ptr<SysfsWriter> writer);

  absl::Status Setup() ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status SetupLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckFree() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Opens the state directory and takes the lock; refuses (naming the
  // holder) when another process has it.
  absl::Status LockStateDir() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // nr_kdamonds reads nr != 0: removes the kdamond a dead hotpage left (true)
  // or explains in *note why it is not one (false; errors: its removal
  // failed).
  absl::StatusOr<bool> RemoveStale(int64_t nr, std::string* note)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status WriteState() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes our state file if `remove` (and we wrote one); releases the lock.
  void ReleaseState(bool remove) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // `off` to K/state unless it reads off, then `0` to nr_kdamonds (EBUSY
  // retried): the removal itself, without the ownership check.
  absl::Status RemoveKdamond(absl::string_view why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Warn(const std::string& line) const;
  absl::Status Configure() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Tears down if ours and not yet done; records and returns the status.
  absl::Status TeardownLocked(absl::string_view why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status VerifyOwnership() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A write with EBUSY retries (DAMON's sysfs lock is a trylock).
  int WriteRetry(absl::string_view rel, absl::string_view value)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Write(absl::string_view rel, absl::string_view value)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reads with EBUSY retries (DAMON's show() handlers use the same trylock).
  absl::StatusOr<std::string> ReadRetry(absl::string_view rel)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<int64_t> ReadIntRetry(absl::string_view rel)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status PollLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The update command (one aggregation interval); NotFound when the
  // kdamond stopped (torn down).
  absl::Status UpdateLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes the widened access pattern of scheme dir `s` (relative).
  absl::Status WidenPattern(const std::string& s)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status ReadRegions() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status KdamondStopped() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // One target of the context. Free: pid is options.self_pid's, nothing
  // is delivered.
  struct Slot {
    pid_t pid = 0;
    uint64_t start_time_ticks = 0;  // 0: not pinned (Start)
    bool free = false;
    uint64_t deliver_after_ns = 0;  // stale regions before this
  };
  // Writes the whole multi-target layout (targets, schemes, filters).
  absl::Status WriteLayout() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Frees dead slots, writes the layout, commits, restarts a kdamond the
  // commit stopped, then frees slots whose pid was reused (and commits
  // again, a few times at most).
  absl::Status CommitLayout() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // /proc/PID/stat's start time; nullopt when unreadable (gone).
  std::optional<uint64_t> StartTimeOf(pid_t pid) const;
  // Frees every slot whose process is gone (`reused` false) or whose start
  // time differs from its pinned one (`reused` true). Returns how many.
  size_t FreeSlots(bool reused) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void TrimFreeSlots() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  pid_t SelfPid() const;
  // Reads scheme `scheme`'s tried regions into `out` (normalized).
  absl::Status ReadRegionsOf(int scheme, std::vector<DamonRegion>* out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Regions to Samples of `pid` (the Poll contract), in batches to `sink`.
  size_t Emit(pid_t pid, const std::vector<DamonRegion>& regions,
              const SampleSink& sink, size_t* dropped);

  static void Register(DamonSource* s);
  static void Unregister(DamonSource* s);

  const pid_t pid_;
  const DamonOptions options_;
  const KernelFs fs_;
  const std::unique_ptr<SysfsWriter> writer_;
  uint32_t max_nr_accesses_ = 0;

  mutable Mutex mu_;
  bool owned_ ABSL_GUARDED_BY(mu_) = false;      // we wrote nr_kdamonds = 1
  bool torn_down_ ABSL_GUARDED_BY(mu_) = false;  // teardown attempted
  bool wrote_target_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<Slot> slots_ ABSL_GUARDED_BY(mu_);        // index = DAMON target
  bool multi_ ABSL_GUARDED_BY(mu_) = false;             // the filtered layout
  std::vector<std::vector<DamonRegion>> slot_regions_;  // PollSlots only
  absl::Status teardown_status_ ABSL_GUARDED_BY(mu_);
  std::optional<StateDir> state_dir_
      ABSL_GUARDED_BY(mu_);                        // locked while running
  bool wrote_state_ ABSL_GUARDED_BY(mu_) = false;  // damon-state is ours
  std::string recovered_ ABSL_GUARDED_BY(mu_);
  std::string teardown_why_ ABSL_GUARDED_BY(mu_);
  DamonStats stats_ ABSL_GUARDED_BY(mu_);
  std::vector<DamonRegion>
      regions_;                      // owner thread (written under mu_ in Poll)
  std::unique_ptr<Sample[]> batch_;  // Poll only
  static constexpr size_t kBatch = 1024;
};

}  // namespace hotpage

#endif  // HOTPAGE_SAMPLER_DAMON_DAMON_SOURCE_H_
