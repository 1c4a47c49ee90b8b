#include "tools/base/termination_signals.h"

#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "tools/base/status_macros.h"

namespace hotpage {

absl::StatusOr<std::unique_ptr<TerminationSignalThread>>
TerminationSignalThread::Start(Callback on_signal, std::vector<int> signals) {
  sigset_t set;
  sigemptyset(&set);
  for (int s : signals) sigaddset(&set, s);
  sigset_t old;
  int err = pthread_sigmask(SIG_BLOCK, &set, &old);
  if (err != 0) return ErrnoStatus(err, "pthread_sigmask(SIG_BLOCK)");
  int sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) {
    err = errno;
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return ErrnoStatus(err, "signalfd");
  }
  int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (efd < 0) {
    err = errno;
    close(sfd);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return ErrnoStatus(err, "eventfd");
  }
  std::unique_ptr<TerminationSignalThread> t(
      new TerminationSignalThread(std::move(on_signal), sfd, efd, old));
  // The new thread inherits the blocked mask from this one.
  t->thread_ = std::thread([p = t.get()] { p->Run(); });
  return t;
}

void TerminationSignalThread::Run() {
  pollfd fds[2] = {{signal_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
  for (;;) {
    int n = poll(fds, 2, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;  // destructor
    if (fds[0].revents == 0) continue;
    signalfd_siginfo info;
    for (;;) {
      ssize_t r = read(signal_fd_, &info, sizeof(info));
      if (r != static_cast<ssize_t>(sizeof(info))) break;  // EAGAIN: drained
      received_.fetch_add(1, std::memory_order_relaxed);
      if (cb_) cb_(static_cast<int>(info.ssi_signo));
    }
  }
}

TerminationSignalThread::~TerminationSignalThread() {
  uint64_t one = 1;
  ssize_t r = write(stop_fd_, &one, sizeof(one));
  (void)r;  // an eventfd write of 1 cannot fail short of overflow
  if (thread_.joinable()) thread_.join();
  close(signal_fd_);
  close(stop_fd_);
  pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

}  // namespace hotpage
