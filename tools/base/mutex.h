// Mutex and MutexLock: std::mutex with abseil's thread-safety annotations.
//
// Why not absl::Mutex: Debian's abseil is a prebuilt library without TSan
// instrumentation, so TSan cannot see absl::Mutex's acquire/release (its
// fast path is atomics inside the uninstrumented .so) and reports every
// access to state guarded by one as a data race. std::mutex goes through
// pthread_mutex_*, which TSan intercepts, so `bazel test --config=tsan`
// checks the real locking; the ABSL_* annotations keep clang's
// -Wthread-safety (--config=clang) checking it statically too.
// (migrator/sync.h on the migrator branch has the same pair plus a CondVar;
// they belong together here.)

#ifndef HOTPAGE_TOOLS_BASE_MUTEX_H_
#define HOTPAGE_TOOLS_BASE_MUTEX_H_

#include <mutex>

#include "absl/base/thread_annotations.h"

namespace hotpage {

class ABSL_LOCKABLE Mutex {
 public:
  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }

 private:
  std::mutex mu_;
};

class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_BASE_MUTEX_H_
