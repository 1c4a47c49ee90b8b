// The daemon's status socket: `hotpage status` asks the running daemon
// over a unix stream socket (/run/hotpage/hotpage.sock by default).
//
// Protocol: the client sends one request line ("status" or "metrics",
// at most 64 bytes, '\n'-terminated) and reads the reply until the server
// closes. One request per connection; a connection that sends nothing
// within a second is dropped, so a stuck client cannot hold the server.
//
// Who may ask: the socket is created mode 0600 in a directory that
// StateDir (tools/base/state_dir.h) has checked is the daemon's alone, and
// every connection's SO_PEERCRED uid must be root or the daemon's own
// effective uid: the status names other people's processes and cgroups.
// A stale socket file (a daemon that was SIGKILLed) is replaced only when
// nothing answers on it; when another daemon does, Start() refuses, so two
// daemons never share a socket.
//
// Threading: the server runs one thread that serves connections one at a
// time; `handler` is called on it.

#ifndef HOTPAGE_TOOLS_DAEMON_STATUS_SOCKET_H_
#define HOTPAGE_TOOLS_DAEMON_STATUS_SOCKET_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace hotpage {

class StatusServer {
 public:
  using Handler = std::function<std::string(absl::string_view request)>;
  static absl::StatusOr<std::unique_ptr<StatusServer>> Start(
      const std::string& path, Handler handler);
  ~StatusServer();  // stops the thread and removes the socket file
  StatusServer(const StatusServer&) = delete;
  StatusServer& operator=(const StatusServer&) = delete;
  uint64_t served() const { return served_; }

 private:
  StatusServer(std::string path, int listen_fd, int stop_fd, Handler h)
      : path_(std::move(path)),
        listen_fd_(listen_fd),
        stop_fd_(stop_fd),
        handler_(std::move(h)) {}
  void Serve();
  void ServeOne(int fd);

  const std::string path_;
  const int listen_fd_;
  const int stop_fd_;
  Handler handler_;
  std::thread thread_;
  uint64_t served_ = 0;  // written by the server thread only
};

// Sends `request` to the daemon at `path` and returns its reply.
// Unavailable with a hint when no daemon listens there.
absl::StatusOr<std::string> QueryStatus(const std::string& path,
                                        absl::string_view request,
                                        absl::Duration timeout);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_DAEMON_STATUS_SOCKET_H_
