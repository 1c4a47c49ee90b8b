// MigratorPool: the daemon's one migrator thread. Each member (one process
// of one workload) keeps its own Migrator (migrator/migrator.h: its queue,
// retries, ping-pong holds, per-page accounting, pinned to its process by
// a pidfd), run in synchronous mode (Migrator::RunOnce) by the pool's one
// thread instead of a thread of its own.
//
// The global rate limit is shared by weight (the workload's rate_share,
// split over its processes) and is work-conserving: each pass gives every
// busy member (its last round had work or waited on its rate limit)
//   rate_i = rate_limit x weight_i / (sum of the busy members' weights)
// and an idle member the rate it would get if it became busy. So two
// workloads with shares 1:3 that both have more to move than the budget
// allows move 1:3, and a workload that moves nothing leaves its share to
// the others (migrator_pool_test.cc). The rates are each migrator's own
// token bucket (Migrator::SetRateLimit), so a member's moves are charged
// to its share only.
//
// Rounds: a member runs when due: at once after a round with more work,
// after its wait for a rate limit or CPU budget, and every `idle_poll`
// (or at its next retry) when it had no work (Submit() does not wake the
// pool). CPU budget: each migrator's own (its rounds' CPU time on the
// pool's thread).
//
// CPU: each member's rounds are measured by its own migrator (its
// cpu_time, in the member's cpu_seconds); the pool's thread spends more
// than that (choosing, sharing, waking), which is in no member's. Cpu()
// gives both, measured on the pool's thread: the thread's whole CPU time
// (CpuTimedThread) and the part spent inside members' rounds.
//
// Threading: Add, Remove, SetWeight, SetRateLimit from any thread; Remove
// waits only for the member's own round in progress (one move call), after
// which the caller may Stop() and destroy its migrator. RunPass from one thread
// (the pool's, or a test's over a FakeClock).

#ifndef HOTPAGE_TOOLS_DAEMON_MIGRATOR_POOL_H_
#define HOTPAGE_TOOLS_DAEMON_MIGRATOR_POOL_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "migrator/migrator.h"
#include "tools/base/clock.h"
#include "tools/base/mutex.h"
#include "tools/daemon/thread_cpu.h"

namespace hotpage {

class MigratorPool {
 public:
  // `rate_limit_bytes_per_sec` <= 0: unlimited. `clock` must outlive the
  // pool (the migrators' clock).
  MigratorPool(double rate_limit_bytes_per_sec, Clock* clock,
               absl::Duration idle_poll = absl::Milliseconds(10));
  ~MigratorPool();  // Stop()
  MigratorPool(const MigratorPool&) = delete;
  MigratorPool& operator=(const MigratorPool&) = delete;

  // `m` runs in synchronous mode from now on (never Start() it); weight > 0.
  void Add(Migrator* m, double weight) ABSL_LOCKS_EXCLUDED(mu_);
  void SetWeight(Migrator* m, double weight) ABSL_LOCKS_EXCLUDED(mu_);
  // Waits for `m`'s round in progress; the pool does not touch it again.
  void Remove(Migrator* m) ABSL_LOCKS_EXCLUDED(mu_);
  void SetRateLimit(double bytes_per_sec) ABSL_LOCKS_EXCLUDED(mu_);

  // Runs every due member once and recomputes the shares. Returns how long
  // until the next member is due (at most idle_poll).
  absl::Duration RunPass() ABSL_LOCKS_EXCLUDED(mu_, pass_mu_);
  // RunPass on a thread of its own until Stop().
  void Start();
  void Stop();

  size_t members() const ABSL_LOCKS_EXCLUDED(mu_);
  // The nodes some member's migrator is backed off from now (the kernel
  // answered ENOMEM: Migrator::BackedOffNodes), ascending, each once.
  std::vector<int> BackedOffNodes() const ABSL_LOCKS_EXCLUDED(mu_);

  struct CpuTimes {
    absl::Duration thread;      // the pool's thread, all of it (Start())
    absl::Duration in_members;  // of which inside members' RunOnce
    // What no member's cpu_seconds holds.
    absl::Duration own() const {
      return std::max(thread - in_members, absl::ZeroDuration());
    }
  };
  CpuTimes Cpu() const;

 private:
  struct Member {
    Migrator* m = nullptr;
    double weight = 1;
    bool busy = true;  // unknown until its first round: counted busy
    absl::Time due = absl::InfinitePast();
    double rate = -1;      // last set
    bool running = false;  // its round runs now (outside mu_)
    bool removed = false;  // Remove() waits; no new round
  };
  void ShareLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Member* FindLocked(Migrator* m) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Clock* const clock_;
  const absl::Duration idle_poll_;
  // One pass at a time (RunPass's callers); never held by Remove, which
  // waits only for the member's own round (a lock held across whole passes
  // back to back could starve it: std::mutex is not fair).
  Mutex pass_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable Mutex mu_;
  CondVar cv_;  // a round ended
  std::vector<Member> members_ ABSL_GUARDED_BY(mu_);
  double rate_limit_ ABSL_GUARDED_BY(mu_);
  // Nanoseconds of the clock's ThreadCpuTime inside members' rounds
  // (the migrators' own measure); written by RunPass's thread, read by
  // Cpu() (relaxed: a counter).
  std::atomic<int64_t> in_members_ns_{0};
  std::atomic<bool> stop_{false};
  CpuTimedThread thread_;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_DAEMON_MIGRATOR_POOL_H_
