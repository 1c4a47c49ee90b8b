// AttachLoop: the sample -> decide -> move loop of `hotpage attach` for one
// process, as a class whose kernel-facing pieces are injected, so that the
// whole loop (rounds, dry run, every way it ends, teardown, stats) runs in
// unit tests without a kernel. `hotpage attach` (tools/cmd_attach.cc) builds
// the live pieces and runs it; an agent managing several processes would run
// one per process.
//
// How the pieces fit:
//
// clang-format off
//   AttachSource::Poll ---samples---> PolicyEngine::Ingest (hotness table)
//   every interval:  PolicyEngine::RunRound(MemoryView) -> PlacementDecision
//                    -> AppendMoveRequests (stamped with the Clock)
//                    -> Migrator::Submit (moves on the migrator's thread)
//                    -> AttachStatsSink::Publish, the status line
//   at the end:      AttachSource::Stop, the hint-fault sysctls restored,
//                    the migrator drained (2 s at most) and stopped,
//                    final stats, the summary lines
// clang-format on
//
// Injected: the AttachSource (perf sampler or DAMON live, tools/attach/
// live_sources.h; a scripted source in tests), the PolicyEngine, the
// MemoryView (LiveMemoryView over a PageMover and a KernelFs), the Migrator
// (its PageMover and Clock), the Clock, the AttachStatsSink (the stats
// files), whether the target is alive, and the termination flag that the
// signal thread sets. Optional: the write-fault re-arm and the hint-fault
// source, whose stats and teardown the loop reports.
//
// One clock. Rounds are timed, and move requests are stamped (hot_since),
// with `clock`, which must be the Migrator's clock too: the migrator computes
// hot_to_moved as its clock's time of the move minus hot_since. (attach once
// stamped requests with absl::Now(), wall time, against the migrator's
// CLOCK_MONOTONIC: every hot_to_moved was negative and recorded as 0.) The
// engine and the samples use the same CLOCK_MONOTONIC in ns
// (absl::ToUnixNanos of the clock's Now(); RealClock's epoch is boot).
//
// Ending, checked between polls in this order, each with the reason the
// summary line gives: the source reports the target gone (NotFound) or fails
// ("the process exited"; a failure is also the returned error); the
// termination flag ("interrupted"); --duration ("--duration N s reached");
// the target no longer alive ("the process exited"); the write-fault re-arm
// finds the target gone ("the process exited") or fails ("--write-faults
// failed"); the migrator failed ("the migrator failed"). A stop that comes
// while a round runs ends it early where the view allows
// (MemoryView::Interrupted: the daemon's FairShareView stops the placement
// queries at the next query call, EngineOptions::placement_query_batch_pages),
// and a round that saw the flag set, or was
// interrupted, submits nothing: no move of a half-made decision is queued,
// and the loop ends at its next step. Teardown runs on every one of these
// paths.
//
// A fast tier the source cannot see. The hint-fault source sees no page
// on the fast tier (tiering mode scans none), so when that tier is full of
// pages hotpage never promoted, room comes only from the engine's sweep,
// which demotes pages it never sampled to find out (policy/engine.h,
// "Pages the table does not track"; not in the first 10 s), and hot pages
// wait meanwhile (without the sweep no page moved on any bundled trace
// whose fast tier first touch filled: tools/simulate/README.md "Without a
// PMU, under pressure"). After three rounds in a row that promoted nothing
// and skipped hot pages for want of room, the loop says so once on the
// log, with what would see the fast tier (a PMU source, or DAMON).
//
// Threading: one thread for sampling and rounds. Run() polls the source and
// runs the rounds on the calling thread; only the moves run on the
// Migrator's own thread. The hotness table, built for concurrent writers and
// scanners, so has only one writer, and its scanner runs on that thread
// between polls. While a round runs nobody drains the perf rings; they hold
// 4096 samples per CPU by default (32768 with --write-faults or hint faults;
// DAMON buffers in the kernel), and what overflows is counted as lost.
// Measured with attach_round_benchmark (-c opt, CPU time on this shared
// 2-core VM; the engine's own work over an in-memory view), plus the live
// node queries at about 1 us per page:
//
//   live entries   round (engine)   + queries   rings overflow above
//   64k            ~0.09 s          ~0.15 s     ~27k samples/s per CPU
//   256k           ~0.45 s          ~0.7 s      ~6k samples/s per CPU
//   1M             ~1.2-1.6 s       ~2.2-2.6 s  ~1.7k samples/s per CPU
//
// Ingest runs at ~60M samples/s, so polling itself costs nothing. PEBS at
// its default period (kDefaultPebsPeriod, 50000: at most ~20k samples/s
// per CPU at the worst-case load rate, event_config.h) gives tens to a few
// thousand samples/s per busy CPU, so up to a few hundred thousand live
// entries one thread keeps up, and it keeps the engine single-threaded
// (policy/engine.h). At a million entries the round alone outlasts the
// default 1 s interval: a round thread would keep the rings drained but
// rounds would still fall behind, so the remedy there is a cheaper round
// (the scanner already works in budgeted steps), then a round thread, which
// needs the engine's Ingest-side state (promoted set, huge chunks) split from
// the round's first.

#ifndef HOTPAGE_TOOLS_ATTACH_ATTACH_LOOP_H_
#define HOTPAGE_TOOLS_ATTACH_ATTACH_LOOP_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "migrator/migrator.h"
#include "policy/engine.h"
#include "sampler/hintfault/first_touch_filter.h"
#include "sampler/hintfault/numa_balancing_controller.h"
#include "sampler/perf/sampler.h"
#include "sampler/write_fault_rearm.h"
#include "tools/attach/attach_stats.h"
#include "tools/base/atomic_file.h"
#include "tools/base/clock.h"

namespace hotpage {

// Where the loop's samples come from.
class AttachSource {
 public:
  virtual ~AttachSource() = default;
  // Waits for samples (up to the source's own poll interval: 50 ms for the
  // perf sampler, one DAMON aggregation) and hands them to `sink`. OK: poll
  // again. NotFound: the target exited and the source stopped (the loop
  // ends cleanly). Any other error ends the loop with that error.
  virtual absl::Status Poll(const SampleSink& sink) = 0;
  // Stops sampling and undoes what the source set up (DAMON's kdamond).
  // Called once, on every exit path of Run(); errors are not reported.
  virtual void Stop() = 0;
  // Perf sources: the kernel's throttle and loss records so far, for the
  // stats and the status line; nullopt for other sources.
  virtual std::optional<PerfSourceStats> PerfStats() const {
    return std::nullopt;
  }
};

struct AttachLoopOptions {
  bool dry_run = false;     // decide and report, move nothing
  double duration_s = 0;    // > 0: end after this long
  std::string source_name;  // for the stats ("source") and the summary
  bool live_line = false;   // status line rewritten in place (a terminal)
  // Starts every line on the log ("hotpage attach: "; the daemon names the
  // workload and pid). Per-round lines only when round_lines.
  std::string log_prefix = "hotpage attach: ";
  bool round_lines = true;
  // Who the stats are about (pid, comm, workload, cgroup, version): the
  // JSON's identity fields and every Prometheus series' labels.
  AttachIdentity identity;
};

// The pieces the loop runs with. Everything must outlive the loop.
struct AttachLoopParts {
  AttachSource* source = nullptr;
  PolicyEngine* engine = nullptr;
  MemoryView* view = nullptr;
  // Started by Run() unless dry run, drained and stopped at its end. Its
  // clock must be `clock`.
  Migrator* migrator = nullptr;
  // The caller runs, drains and stops the migrator (the daemon's one
  // migrator thread, tools/daemon/migrator_pool.h): Run() neither starts
  // nor stops it.
  bool migrator_external = false;
  Clock* clock = nullptr;
  AttachStatsSink* stats = nullptr;
  // Whether the target process is still alive (ProcessHandle::Alive).
  std::function<bool()> target_alive;
  // Set (by the signal thread) to end the run between rounds.
  const std::atomic<bool>* stop = nullptr;
  // Optional: --write-faults re-arm, driven every poll.
  WriteFaultRearm* rearm = nullptr;
  // Optional: --source hintfault; stopped (sysctls restored) at the end.
  NumaBalancingController* hintfault = nullptr;
  // Optional, hint faults: the target's resident set in 4 KiB pages (0:
  // unknown). Set, the loop filters the samples for first touches before
  // the engine sees them (sampler/hintfault/first_touch_filter.h), which
  // reads it every 10 ms and when a batch's unseen pages meet an empty
  // budget.
  std::function<uint64_t()> resident_pages;
  // With resident_pages: the resident set read before the source started
  // (0: unknown, read at Run's start instead). The filter's baseline: the
  // first touches whose samples wait in the source's ring or inbox when
  // the loop starts are growth since this reading.
  uint64_t resident_before_source = 0;
  // --source damon: the stale kdamond removed at start, for the stats.
  std::string damon_recovered;
  // Status lines and the summary.
  std::ostream* log = &std::cerr;
  // Optional (--rounds): each round that ends with a decision appended as
  // a JSON line (tools/round_log.h; its time from Run's start). A failed
  // write is said once on `log` and ends the recording, not the run.
  AppendOnlyFile* rounds = nullptr;
  // Optional: called on the loop's thread before each round, so that an
  // owner on another thread can hand over changes (the daemon's reloaded
  // rules: PolicyEngine::Reconfigure) at a point where no round runs.
  std::function<void()> before_round;
  // Optional: the CPU time the stats report as cpu_seconds (from Run's
  // start). `hotpage attach` passes ProcessCpuTime (tools/base/clock.h),
  // every thread of the process: this loop, the migrator, the hint-fault
  // watchdog, the signal and metrics threads. Empty: the loop thread's
  // alone (`clock`->ThreadCpuTime()), for an owner that runs several loops
  // in one process and adds each one's migrator itself (the daemon).
  std::function<absl::Duration()> cpu_time;
  // Optional: the wall clock for the stats' timestamp, ns since the Unix
  // epoch. Empty: CLOCK_REALTIME (RealtimeNs).
  std::function<int64_t()> wall_ns;
};

class AttachLoop {
 public:
  AttachLoop(const AttachLoopOptions& options, AttachLoopParts parts);
  AttachLoop(const AttachLoop&) = delete;
  AttachLoop& operator=(const AttachLoop&) = delete;

  // Starts the migrator (unless dry run) and the engine's clock, loops until
  // one of the endings in the file comment, tears down and prints the
  // summary. Returns OK for a clean end, else what failed (the source, the
  // re-arm, the migrator, the hint-fault sysctls' restore). Call once.
  absl::Status Run();

  // After Run(): why it ended (the summary line's first words).
  const std::string& stop_reason() const { return stop_reason_; }
  // The last stats published.
  const AttachStats& stats() const { return stats_; }

 private:
  uint64_t NowNs() const;
  absl::Duration CpuTime() const;
  // Stamps the stats with the wall time and CPU seconds, then publishes.
  void PublishStats(bool final);
  // Polls once and checks every ending; false: the loop ends.
  bool Step(uint64_t* now_ns);
  // Between rounds: the engine's promotions of pages that just arrived
  // (PolicyEngine::PlaceArrivals), handed to the migrator at once.
  // The view's migrator still holds moves to do (MemoryView::QueuedMoves).
  bool MovesQueued() const;
  void Arrivals(uint64_t now_ns);
  void Round(uint64_t now_ns);
  void Teardown();

  const AttachLoopOptions options_;
  AttachLoopParts parts_;
  AttachStats stats_;
  SampleSink sink_;
  // With parts_.resident_pages: the filter and the samples it kept
  // (reused).
  std::unique_ptr<FirstTouchFilter> first_touch_;
  std::vector<Sample> kept_;
  std::vector<MoveRequest> requests_;  // one round's, reused
  // The due round has waited for arrivals at least once
  // (AttachStats::rounds_waited_for_arrivals).
  bool round_waited_ = false;
  // Rounds in a row with the hint-fault source that promoted nothing and
  // skipped hot pages for want of room; whether the log said so (the file
  // comment, "A fast tier the source cannot see").
  int blind_full_rounds_ = 0;
  bool blind_full_said_ = false;
  uint64_t start_ns_ = 0;
  // --rounds: the line being written; set after a failed write.
  std::string round_line_;
  bool rounds_failed_ = false;
  absl::Duration cpu_start_;
  std::string stop_reason_ = "the process exited";
  absl::Status error_;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_ATTACH_ATTACH_LOOP_H_
