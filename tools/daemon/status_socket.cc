#include "tools/daemon/status_socket.h"

#include <errno.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "tools/base/state_dir.h"

namespace hotpage {
namespace {

absl::Status Errno(absl::string_view what, int err) {
  return absl::ErrnoToStatus(err, what);
}

absl::StatusOr<sockaddr_un> Address(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(a.sun_path)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": a socket path must be 1 to ",
                     sizeof(a.sun_path) - 1, " bytes"));
  }
  std::memcpy(a.sun_path, path.data(), path.size());
  return a;
}

// Whether a daemon answers at `path` (connect succeeds).
bool SomeoneListens(const sockaddr_un& a) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const bool ok =
      connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof(a)) == 0;
  close(fd);
  return ok;
}

bool WriteAll(int fd, absl::string_view s) {
  while (!s.empty()) {
    const ssize_t n = send(fd, s.data(), s.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    s.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<StatusServer>> StatusServer::Start(
    const std::string& path, Handler handler) {
  absl::StatusOr<sockaddr_un> addr = Address(path);
  if (!addr.ok()) return addr.status();
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": the socket needs a directory of its own"));
  }
  // The directory must be the daemon's alone (created 0700 if missing).
  absl::StatusOr<StateDir> dir = StateDir::Open(
      path.substr(0, slash), "the status socket's directory", "its socket");
  if (!dir.ok()) return dir.status();
  struct stat st;
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, " exists and is not a socket: not replaced"));
    }
    if (SomeoneListens(*addr)) {
      return absl::AlreadyExistsError(
          absl::StrCat("another hotpage daemon answers on ", path,
                       " (one daemon per machine; `hotpage status` asks it)"));
    }
    unlink(path.c_str());  // stale: its daemon died
  }
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Errno("socket", errno);
  // 0600 from the start: umask 0177 around bind, so there is no moment
  // when another user could connect.
  const mode_t old = umask(0177);
  const int rc =
      bind(fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr));
  const int bind_errno = errno;
  umask(old);
  if (rc != 0) {
    close(fd);
    return Errno(absl::StrCat("bind ", path), bind_errno);
  }
  if (listen(fd, 16) != 0) {
    const int e = errno;
    close(fd);
    unlink(path.c_str());
    return Errno("listen", e);
  }
  const int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (efd < 0) {
    const int e = errno;
    close(fd);
    unlink(path.c_str());
    return Errno("eventfd", e);
  }
  std::unique_ptr<StatusServer> s(
      new StatusServer(path, fd, efd, std::move(handler)));
  s->thread_ = std::thread([raw = s.get()] { raw->Serve(); });
  return s;
}

StatusServer::~StatusServer() {
  const uint64_t one = 1;
  (void)!write(stop_fd_, &one, sizeof(one));
  if (thread_.joinable()) thread_.join();
  close(listen_fd_);
  close(stop_fd_);
  unlink(path_.c_str());
}

void StatusServer::Serve() {
  for (;;) {
    pollfd p[2] = {{listen_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (p[1].revents != 0) return;
    if ((p[0].revents & POLLIN) == 0) continue;
    const int c = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) continue;
    ServeOne(c);
    // Reply sent: half-close, then discard what the client still sends
    // (bounded by the 1 s timeout and 64 KiB), so that closing with unread
    // input does not reset the connection before the client read the reply.
    shutdown(c, SHUT_WR);
    char sink[4096];
    for (size_t total = 0; total < (64u << 10);) {
      const ssize_t n = recv(c, sink, sizeof(sink), 0);
      if (n <= 0) break;
      total += static_cast<size_t>(n);
    }
    close(c);
  }
}

void StatusServer::ServeOne(int fd) {
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return;
  timeval tv{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  if (cred.uid != 0 && cred.uid != geteuid()) {
    WriteAll(fd, "error: only root may ask hotpage's status\n");
    return;
  }
  char buf[65];
  size_t got = 0;
  while (got < sizeof(buf) - 1) {
    const ssize_t n = recv(fd, buf + got, sizeof(buf) - 1 - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
    if (std::memchr(buf, '\n', got) != nullptr) break;
  }
  absl::string_view req(buf, got);
  const size_t nl = req.find('\n');
  if (nl == absl::string_view::npos) {
    WriteAll(fd, "error: send one request line\n");
    return;
  }
  req = req.substr(0, nl);
  ++served_;
  WriteAll(fd, handler_(req));
}

absl::StatusOr<std::string> QueryStatus(const std::string& path,
                                        absl::string_view request,
                                        absl::Duration timeout) {
  absl::StatusOr<sockaddr_un> addr = Address(path);
  if (!addr.ok()) return addr.status();
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Errno("socket", errno);
  const int64_t ms = absl::ToInt64Milliseconds(timeout);
  timeval tv{static_cast<time_t>(ms / 1000),
             static_cast<suseconds_t>((ms % 1000) * 1000)};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  if (connect(fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr)) !=
      0) {
    const int e = errno;
    close(fd);
    return absl::UnavailableError(
        absl::StrCat("no hotpage daemon answers on ", path, " (",
                     std::strerror(e), e == EACCES ? "; it is root's only" : "",
                     "): is it running? (systemctl status hotpage)"));
  }
  if (!WriteAll(fd, absl::StrCat(request, "\n"))) {
    const int e = errno;
    close(fd);
    return Errno("send", e);
  }
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      close(fd);
      return Errno("reading the daemon's reply", e);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > (64u << 20)) {
      close(fd);
      return absl::DataLossError("the daemon's reply is over 64 MiB");
    }
  }
  close(fd);
  if (absl::StartsWith(out, "error: ")) {
    return absl::PermissionDeniedError(absl::StripSuffix(out.substr(7), "\n"));
  }
  return out;
}

}  // namespace hotpage
