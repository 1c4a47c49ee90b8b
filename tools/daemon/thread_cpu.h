// CpuTimedThread: a std::thread whose CPU time any thread can read, while
// it runs (its per-thread CPU clock, pthread_getcpuclockid(3) and
// clock_gettime(2)) and after it ended (the last reading it took of its own
// clock on its way out). The daemon's machine-level threads (the machine
// sampler's routing thread, the migrator pool's thread) run on it, so that
// their CPU time, which is in no member's cpu_seconds, is reported once for
// the machine (daemon_loop.h, MachineReport).
//
// Threading: Start and Join from one owner thread; CpuTime from any
// thread, at any time (0 before Start).

#ifndef HOTPAGE_TOOLS_DAEMON_THREAD_CPU_H_
#define HOTPAGE_TOOLS_DAEMON_THREAD_CPU_H_

#include <time.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>

#include "absl/time/time.h"

namespace hotpage {

class CpuTimedThread {
 public:
  CpuTimedThread() = default;
  ~CpuTimedThread();  // Join()
  CpuTimedThread(const CpuTimedThread&) = delete;
  CpuTimedThread& operator=(const CpuTimedThread&) = delete;

  // Runs `body` on a new thread. Call once.
  void Start(std::function<void()> body);
  void Join();
  bool joinable() const { return thread_.joinable(); }

  // The thread's CPU time (user + system) so far; its total once it ended.
  absl::Duration CpuTime() const;

 private:
  std::thread thread_;
  // The thread's CPU clock, written by the thread before it stores
  // has_clock_ (release); CpuTime reads it after has_clock_ (acquire).
  clockid_t clock_{};
  std::atomic<bool> has_clock_{false};
  // The thread's own last reading, stored (release) as its last act; -1
  // while it runs. Once its clock no longer reads (the thread is gone),
  // this is set.
  std::atomic<int64_t> final_ns_{-1};
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_DAEMON_THREAD_CPU_H_
