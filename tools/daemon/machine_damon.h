// MachineDamon: the daemon's one DAMON context for every member whose
// workload has source = "damon", as MachineSampler (machine_sampler.h) is
// its one perf sampler. ONE kdamond with one vaddr context and one target
// per process (DamonSource's multi-target mode: sampler/damon/
// damon_source.h, "Several processes in one context", which says what the
// kernel does and why: a scheme with a `target` filter per target, because
// tried_regions do not say which target a region came from; slots that
// never move, because `commit` matches targets by index).
//
// Lifetime of the kdamond: started (nr_kdamonds 0 -> 1, the lock and state
// file of DamonSource) when the first DAMON member attaches, its process
// as target 0; each further member adds a target with one `commit` of the
// running kdamond; a member that leaves (its source destroyed, or its
// process no longer selected: Reconcile) is removed with one `commit`, the
// other members' targets keep their index, pid and regions (no restart);
// the last one to leave tears the kdamond down, so DAMON is free again.
//
// Routing: one thread runs PollOnce (one `update_schemes_tried_regions`,
// about one aggregation interval) and pushes each slot's Samples into the
// inbox (SampleInbox, machine_sampler.h) of the member that owns the slot,
// only if the Sample's pid is that member's. A pid reused by another
// process is never monitored for the old member: the member pinned its
// process (pid, start time); DamonSource checks that start time before and
// after every commit and never delivers a slot whose process changed; and
// Reconcile (each daemon round) removes the target of every (pid, start
// time) the selection no longer sees, before the new process can be
// attached as a member of its own.
//
// When the kdamond ends under us (every target exited, someone turned it
// off, a restart failed) the members' sources return Unavailable from Poll
// (their loops end, the daemon reaps them and picks their processes up
// again at the next round, on a new kdamond).
//
// Threading: Attach, Reconcile and the sources' destructors from any
// thread (the daemon's, members'); PollOnce from one thread at a time (the
// thread Start() runs, or a test's). The MachineDamon must outlive every
// source it hands out.

#ifndef HOTPAGE_TOOLS_DAEMON_MACHINE_DAMON_H_
#define HOTPAGE_TOOLS_DAEMON_MACHINE_DAMON_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sampler/damon/damon_source.h"
#include "tools/attach/attach_loop.h"
#include "tools/base/kernel/kernel_fs.h"
#include "tools/base/kernel/sysfs_writer.h"
#include "tools/base/mutex.h"
#include "tools/daemon/machine_sampler.h"
#include "tools/daemon/workload_select.h"

namespace hotpage {

class MachineDamon {
 public:
  // Opens the reader and writer a new kdamond's DamonSource uses (live:
  // both rooted at "/"; tests: a FakeDamonKernel's).
  using Opener = std::function<
      absl::StatusOr<std::pair<KernelFs, std::unique_ptr<SysfsWriter>>>()>;
  // Live machine.
  MachineDamon(DamonOptions options, std::ostream* log);
  MachineDamon(DamonOptions options, Opener open, std::ostream* log);
  ~MachineDamon();  // Stop(); tears the kdamond down if one runs
  MachineDamon(const MachineDamon&) = delete;
  MachineDamon& operator=(const MachineDamon&) = delete;

  // A source for process `key` (pinned by the caller): its own target of
  // the machine's kdamond, started if none runs. The subscription ends with
  // the source. Errors: the process is gone or its pid was reused
  // (FailedPrecondition), DAMON unavailable or held by someone else (as
  // DamonSource::Start says).
  absl::StatusOr<std::unique_ptr<AttachSource>> Attach(const ProcessKey& key)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The daemon's selection this round: targets of processes not in `live`
  // are removed (one commit); their members' inboxes get nothing more.
  void Reconcile(const std::vector<ProcessKey>& live) ABSL_LOCKS_EXCLUDED(mu_);

  // One update of every target's regions, routed. OK with nothing to do
  // when no kdamond runs.
  absl::Status PollOnce() ABSL_LOCKS_EXCLUDED(mu_);
  // PollOnce on a thread of its own until Stop() (errors logged once each).
  void Start();
  void Stop();

  bool running() const ABSL_LOCKS_EXCLUDED(mu_);
  size_t targets() const ABSL_LOCKS_EXCLUDED(mu_);
  std::optional<DamonStats> stats() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  class Source;
  struct Entry {
    ProcessKey key;
    int slot = -1;  // -1: removed (Reconcile); the source still exists
    uint64_t generation = 0;
    std::shared_ptr<SampleInbox> inbox;
  };
  void Detach(const ProcessKey& key, const SampleInbox* inbox)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Empty when the member's kdamond is running, else why it ended.
  std::string Ended(uint64_t generation) const ABSL_LOCKS_EXCLUDED(mu_);
  void Route(int slot, absl::Span<const Sample> batch) ABSL_LOCKS_EXCLUDED(mu_);
  // The kdamond ended (`why`): members of this generation are told.
  void EndLocked(const std::string& why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Log(const std::string& line);

  const DamonOptions options_;
  const Opener open_;
  std::ostream* const log_;

  mutable Mutex mu_;
  std::shared_ptr<DamonSource> source_ ABSL_GUARDED_BY(mu_);
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;  // of source_
  uint64_t ended_generation_ ABSL_GUARDED_BY(mu_) = 0;
  std::string ended_why_ ABSL_GUARDED_BY(mu_);
  std::vector<Entry> entries_ ABSL_GUARDED_BY(mu_);
  std::string last_error_ ABSL_GUARDED_BY(mu_);

  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_DAEMON_MACHINE_DAMON_H_
