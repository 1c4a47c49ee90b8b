#include "tools/daemon/thread_cpu.h"

#include <pthread.h>

#include <algorithm>
#include <utility>

namespace hotpage {

CpuTimedThread::~CpuTimedThread() { Join(); }

void CpuTimedThread::Start(std::function<void()> body) {
  thread_ = std::thread([this, body = std::move(body)] {
    clockid_t id;
    if (pthread_getcpuclockid(pthread_self(), &id) == 0) {
      clock_ = id;
      has_clock_.store(true, std::memory_order_release);
    }
    body();
    timespec ts;
    int64_t ns = 0;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0) {
      ns = static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
    }
    final_ns_.store(ns, std::memory_order_release);
  });
}

void CpuTimedThread::Join() {
  if (thread_.joinable()) thread_.join();
}

absl::Duration CpuTimedThread::CpuTime() const {
  if (const int64_t f = final_ns_.load(std::memory_order_acquire); f >= 0) {
    return absl::Nanoseconds(f);
  }
  if (!has_clock_.load(std::memory_order_acquire)) return absl::ZeroDuration();
  timespec ts;
  if (clock_gettime(clock_, &ts) == 0) return absl::DurationFromTimespec(ts);
  // The thread ended between the two loads: its final reading is stored
  // (before it exited, so before its clock stopped reading).
  return absl::Nanoseconds(
      std::max<int64_t>(0, final_ns_.load(std::memory_order_acquire)));
}

}  // namespace hotpage
