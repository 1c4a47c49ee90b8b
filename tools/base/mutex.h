// Mutex, MutexLock and CondVar: std::mutex and std::condition_variable
// with abseil's thread-safety annotations. Use these, not absl::Mutex.
//
// Why not absl::Mutex: Debian's abseil is a prebuilt library without TSan
// instrumentation, so TSan cannot see absl::Mutex's acquire/release (its
// fast path is atomics inside the uninstrumented .so) and reports every
// access to state guarded by one as a data race. std::mutex goes through
// pthread_mutex_*, which TSan intercepts, so `bazel test --config=tsan`
// checks the real locking; the ABSL_* annotations keep clang's
// -Wthread-safety (--config=clang) checking it statically too.

#ifndef HOTPAGE_TOOLS_BASE_MUTEX_H_
#define HOTPAGE_TOOLS_BASE_MUTEX_H_

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"

namespace hotpage {

class ABSL_LOCKABLE Mutex {
 public:
  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  std::mutex& native() { return mu_; }

 private:
  std::mutex mu_;
};

class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) {
    mu_->Lock();
  }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

class CondVar {
 public:
  // Waits, with `mu` held, until pred() is true or `timeout` passes
  // (InfiniteDuration: no timeout). Returns pred().
  template <typename Pred>
  bool WaitWithTimeout(Mutex* mu, absl::Duration timeout, Pred pred)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    std::unique_lock<std::mutex> lock(mu->native(), std::adopt_lock);
    bool result;
    if (timeout == absl::InfiniteDuration()) {
      cv_.wait(lock, pred);
      result = true;
    } else {
      // Bounded so that steady_clock::now() + timeout cannot overflow.
      const absl::Duration bounded =
          std::min(std::max(timeout, absl::ZeroDuration()), absl::Hours(24));
      result = cv_.wait_for(lock, absl::ToChronoNanoseconds(bounded), pred);
    }
    lock.release();  // `mu` stays held, as on entry
    return result;
  }

  void NotifyAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_BASE_MUTEX_H_
