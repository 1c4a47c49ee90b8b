#include "migrator/process_handle.h"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "tools/base/status_macros.h"

namespace hotpage {
namespace {

// A stat line is far below this; anything longer is not one.
constexpr size_t kMaxStatBytes = 64 << 10;

bool ParseDecimal(absl::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return absl::SimpleAtoi(s, out);
}

bool ParseSigned(absl::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return absl::SimpleAtoi(s, out);
}

}  // namespace

std::optional<ProcStat> ParseProcStat(absl::string_view text) {
  if (text.size() > kMaxStatBytes) return std::nullopt;
  ProcStat st;
  // "pid (": the pid runs up to the first space, followed by '('.
  const size_t open = text.find(" (");
  if (open == absl::string_view::npos) return std::nullopt;
  if (!ParseSigned(text.substr(0, open), &st.pid) || st.pid <= 0) {
    return std::nullopt;
  }
  const size_t close = text.rfind(')');
  if (close == absl::string_view::npos || close < open + 2) return std::nullopt;
  st.comm = std::string(text.substr(open + 2, close - (open + 2)));

  // Fields 3.. follow "') '", separated by single spaces in the kernel's
  // output; accept any ASCII whitespace.
  absl::string_view rest = text.substr(close + 1);
  if (rest.empty() || !absl::ascii_isspace(static_cast<unsigned char>(rest[0]))) {
    return std::nullopt;
  }
  constexpr int kFirstField = 3;
  constexpr int kStartTimeField = 22;
  int field = kFirstField;
  size_t i = 0;
  while (field <= kStartTimeField) {
    while (i < rest.size() && absl::ascii_isspace(static_cast<unsigned char>(rest[i]))) ++i;
    if (i == rest.size()) return std::nullopt;
    size_t j = i;
    while (j < rest.size() && !absl::ascii_isspace(static_cast<unsigned char>(rest[j]))) ++j;
    absl::string_view tok = rest.substr(i, j - i);
    if (field == 3) {
      if (tok.size() != 1) return std::nullopt;
      st.state = tok[0];
    } else if (field == 4) {
      if (!ParseSigned(tok, &st.ppid)) return std::nullopt;
    } else if (field == kStartTimeField) {
      if (!ParseDecimal(tok, &st.start_time_ticks)) return std::nullopt;
    }
    ++field;
    i = j;
  }
  return st;
}

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
      return absl::NotFoundError(absl::StrCat("pid ", pid, ": no such process"));
    }
    if (err == EINVAL || err == ENOENT) {
      // pidfd_open() without PIDFD_THREAD takes thread-group leaders only:
      // older kernels answer EINVAL for another thread, newer ones ENOENT
      // (seen on 6.18).
      return absl::InvalidArgumentError(absl::StrCat(
          "pid ", pid, " is a thread, not a process (pidfd_open: ",
          ErrnoName(err), "): attach to its process id, Tgid in /proc/",
          pid, "/status"));
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
