#include "migrator/process_handle.h"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tools/base/status_macros.h"

namespace hotpage {

const char* TargetStateName(TargetState s) {
  switch (s) {
    case TargetState::kSame:
      return "same";
    case TargetState::kExited:
      return "exited";
    case TargetState::kReused:
      return "reused";
    case TargetState::kUnverified:
      return "unverified";
  }
  return "?";
}

absl::StatusOr<ProcessHandle> ProcessHandle::Attach(pid_t pid,
                                                    const KernelFs* fs) {
  if (pid <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("pid ", pid, ": not a process id (want > 0)"));
  }
  // pidfd first: if the stat read below shows a live process with the pid
  // and the pidfd is still unreadable afterwards, both name one process.
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    const int err = errno;
    if (err == ESRCH) {
      return absl::NotFoundError(
          absl::StrCat("pid ", pid, ": no such process"));
    }
    if (err == EINVAL || err == ENOENT) {
      // pidfd_open() without PIDFD_THREAD takes thread-group leaders only:
      // older kernels answer EINVAL for another thread, newer ones ENOENT
      // (seen on 6.18).
      return absl::InvalidArgumentError(absl::StrCat(
          "pid ", pid,
          " is a thread, not a process (pidfd_open: ", ErrnoName(err),
          "): attach to its process id, Tgid in /proc/", pid, "/status"));
    }
    if (err != ENOSYS && err != EPERM) {
      return ErrnoStatus(err, absl::StrCat("pidfd_open pid ", pid));
    }
    pidfd = -1;  // Pre-5.3 kernel or a sandbox: start time alone.
  }
  const std::string path = absl::StrCat("/proc/", pid, "/stat");
  absl::StatusOr<std::string> text = fs->ReadFile(path);
  if (!text.ok()) {
    if (pidfd >= 0) close(pidfd);
    if (absl::IsNotFound(text.status())) {
      return absl::NotFoundError(absl::StrCat(
          "pid ", pid, ": no such process (", fs->Display(path), " missing)"));
    }
    return text.status();
  }
  std::optional<ProcStat> st = ParseProcStat(*text);
  if (!st || st->pid != pid) {
    if (pidfd >= 0) close(pidfd);
    return absl::InvalidArgumentError(absl::StrCat(
        fs->Display(path), ": not a /proc/PID/stat line for pid ", pid));
  }
  ProcessHandle h(pid, pidfd, st->start_time_ticks, st->comm, fs);
  if (st->state == 'Z' || st->state == 'X' || h.PidfdExited()) {
    return absl::FailedPreconditionError(
        absl::StrCat(h.Describe(), " has already exited"));
  }
  return h;
}

ProcessHandle ProcessHandle::ForSimulation(pid_t pid) {
  ProcessHandle h(pid, /*pidfd=*/-1, /*start=*/0, "simulated", /*fs=*/nullptr);
  h.simulated_ = true;
  return h;
}

ProcessHandle::ProcessHandle(ProcessHandle&& other) noexcept
    : pid_(other.pid_),
      pidfd_(std::exchange(other.pidfd_, -1)),
      start_time_ticks_(other.start_time_ticks_),
      comm_(std::move(other.comm_)),
      fs_(other.fs_),
      simulated_(other.simulated_) {}

ProcessHandle& ProcessHandle::operator=(ProcessHandle&& other) noexcept {
  if (this != &other) {
    if (pidfd_ >= 0) close(pidfd_);
    pid_ = other.pid_;
    pidfd_ = std::exchange(other.pidfd_, -1);
    start_time_ticks_ = other.start_time_ticks_;
    comm_ = std::move(other.comm_);
    fs_ = other.fs_;
    simulated_ = other.simulated_;
  }
  return *this;
}

ProcessHandle::~ProcessHandle() {
  if (pidfd_ >= 0) close(pidfd_);
}

std::string ProcessHandle::Describe() const {
  return absl::StrCat("pid ", pid_, " (", comm_, ")");
}

bool ProcessHandle::PidfdExited() const {
  if (pidfd_ < 0) return false;
  pollfd p = {pidfd_, POLLIN, 0};
  int rc;
  do {
    rc = poll(&p, 1, 0);
  } while (rc < 0 && errno == EINTR);
  // A pidfd polls readable once the process has exited.
  return rc > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR)) != 0;
}

std::optional<ProcStat> ProcessHandle::ReadStat() const {
  absl::StatusOr<std::string> text =
      fs_->ReadFile(absl::StrCat("/proc/", pid_, "/stat"));
  if (!text.ok()) return std::nullopt;
  return ParseProcStat(*text);
}

bool ProcessHandle::Alive() const {
  if (simulated_) return true;
  if (pidfd_ >= 0) return !PidfdExited();
  return StillSame() == TargetState::kSame;
}

TargetState ProcessHandle::StillSame() const {
  if (simulated_) return TargetState::kSame;
  std::optional<ProcStat> st = ReadStat();
  // Order matters: the pidfd is polled after the read (file comment).
  const bool exited = PidfdExited();
  if (exited) return TargetState::kExited;
  if (!st) {
    // Without a pidfd a missing stat means the process is gone. With a live
    // pidfd it is not gone, yet unverifiable (hidepid, another /proc).
    return pidfd_ >= 0 ? TargetState::kUnverified : TargetState::kExited;
  }
  if (st->pid != pid_ || st->start_time_ticks != start_time_ticks_) {
    return TargetState::kReused;
  }
  if (st->state == 'Z' || st->state == 'X') return TargetState::kExited;
  return TargetState::kSame;
}

}  // namespace hotpage
