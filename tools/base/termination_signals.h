// TerminationSignalThread: turns SIGINT/SIGTERM into an ordinary function
// call on an ordinary thread, so that cleanup that takes locks, allocates
// and writes files (DamonSource::TeardownAll, final stats) never runs inside
// a signal handler, where none of that is async-signal-safe.
//
// How: Start() blocks the signals in the calling thread with
// pthread_sigmask; threads created afterwards inherit the mask, so the
// signals stay pending on the process and only a signalfd consumes them. A
// dedicated thread waits (poll) on that signalfd and on an eventfd used to
// stop it, and calls `on_signal(signo)` for each signal received. There is
// no handler at all, hence nothing async-signal-unsafe to get wrong.
//
// Call Start() from main() BEFORE creating any other thread: a thread that
// existed earlier keeps an unblocked mask, and the kernel may deliver the
// signal to it with the default action (terminate) instead of queuing it.
//
// The destructor stops and joins the thread and restores the previous mask
// in the destroying thread (others keep theirs); a signal that arrives after
// that takes its default action again.

#ifndef HOTPAGE_TOOLS_BASE_TERMINATION_SIGNALS_H_
#define HOTPAGE_TOOLS_BASE_TERMINATION_SIGNALS_H_

#include <signal.h>

#include <atomic>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"

namespace hotpage {

class TerminationSignalThread {
 public:
  using Callback = std::function<void(int signo)>;

  static absl::StatusOr<std::unique_ptr<TerminationSignalThread>> Start(
      Callback on_signal, std::vector<int> signals = {SIGINT, SIGTERM});
  ~TerminationSignalThread();
  TerminationSignalThread(const TerminationSignalThread&) = delete;
  TerminationSignalThread& operator=(const TerminationSignalThread&) = delete;

  // Signals handled so far. Relaxed load: a statistic, no data hangs on it.
  int received() const { return received_.load(std::memory_order_relaxed); }

 private:
  TerminationSignalThread(Callback cb, int sfd, int efd, sigset_t old_mask)
      : cb_(std::move(cb)),
        signal_fd_(sfd),
        stop_fd_(efd),
        old_mask_(old_mask) {}
  void Run();

  Callback cb_;
  int signal_fd_ = -1;
  int stop_fd_ = -1;
  sigset_t old_mask_;
  std::atomic<int> received_{0};
  std::thread thread_;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_BASE_TERMINATION_SIGNALS_H_
