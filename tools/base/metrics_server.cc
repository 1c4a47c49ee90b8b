#include "tools/base/metrics_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tools/base/clock.h"

namespace hotpage {
namespace {

constexpr char kContentType[] = "text/plain; version=0.0.4; charset=utf-8";

absl::Status Errno(absl::string_view what, int err) {
  return absl::Status(absl::ErrnoToStatusCode(err),
                      absl::StrCat(what, ": ", strerror(err)));
}

std::string Response(absl::string_view status, absl::string_view type,
                     absl::string_view body, bool head,
                     absl::string_view extra_headers = "") {
  return absl::StrCat("HTTP/1.1 ", status, "\r\nContent-Type: ", type,
                      "\r\nContent-Length: ", body.size(), "\r\n",
                      extra_headers, "Connection: close\r\n\r\n",
                      head ? absl::string_view() : body);
}

std::string TextResponse(absl::string_view status, absl::string_view body) {
  return Response(status, "text/plain; charset=utf-8", body, false);
}

// One connection: reading its request, writing the response, then
// draining what the client still sends until it closes (closing with
// unread data would reset the connection and could discard the response
// before the client read it).
struct Client {
  enum class State { kReading, kWriting, kDraining };
  int fd = -1;
  State state = State::kReading;
  std::string in;
  std::string out;
  size_t sent = 0;
  uint64_t deadline_ns = 0;
};

}  // namespace

std::string MetricsHttpAnswer(absl::string_view head,
                              const std::function<std::string()>& body) {
  absl::string_view line = head.substr(0, head.find('\n'));
  if (absl::EndsWith(line, "\r")) line.remove_suffix(1);
  std::vector<absl::string_view> parts = absl::StrSplit(line, ' ');
  if (parts.size() != 3 || !absl::StartsWith(parts[2], "HTTP/1.") ||
      parts[1].empty() || parts[1][0] != '/') {
    return TextResponse("400 Bad Request", "bad request line\n");
  }
  const bool head_only = parts[0] == "HEAD";
  if (parts[0] != "GET" && !head_only) {
    return Response("405 Method Not Allowed", "text/plain; charset=utf-8",
                    "only GET and HEAD\n", false, "Allow: GET, HEAD\r\n");
  }
  absl::string_view path = parts[1].substr(0, parts[1].find('?'));
  if (path != "/metrics") {
    return TextResponse("404 Not Found", "not found; try /metrics\n");
  }
  return Response("200 OK", kContentType, body(), head_only);
}

bool MetricsHttpHeadComplete(absl::string_view in) {
  return absl::StrContains(in, "\r\n\r\n") || absl::StrContains(in, "\n\n");
}

absl::StatusOr<MetricsListenAddress> ParseMetricsListen(
    absl::string_view spec) {
  const std::string usage = absl::StrCat(
      "--metrics-listen '", spec, "': expected 127.0.0.1:PORT or [::1]:PORT");
  MetricsListenAddress a;
  const size_t colon = spec.rfind(':');
  if (colon == absl::string_view::npos) {
    return absl::InvalidArgumentError(usage);
  }
  absl::string_view host = spec.substr(0, colon);
  absl::string_view port = spec.substr(colon + 1);
  int p = -1;
  if (port.empty() || port.size() > 5 ||
      !std::all_of(port.begin(), port.end(),
                   [](char c) { return c >= '0' && c <= '9'; }) ||
      !absl::SimpleAtoi(port, &p) || p > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat(usage, " (PORT is 0 to 65535; 0 picks a free one)"));
  }
  a.port = p;
  bool loopback = false;
  if (absl::ConsumePrefix(&host, "[")) {
    if (!absl::ConsumeSuffix(&host, "]")) {
      return absl::InvalidArgumentError(usage);
    }
    sockaddr_in6 sa{};
    sa.sin6_family = AF_INET6;
    sa.sin6_port = htons(static_cast<uint16_t>(p));
    if (inet_pton(AF_INET6, std::string(host).c_str(), &sa.sin6_addr) != 1) {
      return absl::InvalidArgumentError(usage);
    }
    loopback = IN6_IS_ADDR_LOOPBACK(&sa.sin6_addr);
    std::memcpy(&a.addr, &sa, sizeof(sa));
    a.addr_len = sizeof(sa);
  } else {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<uint16_t>(p));
    if (inet_pton(AF_INET, std::string(host).c_str(), &sa.sin_addr) != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(usage, " (the host must be an IP address, not a name)"));
    }
    loopback = (ntohl(sa.sin_addr.s_addr) >> 24) == 127;
    std::memcpy(&a.addr, &sa, sizeof(sa));
    a.addr_len = sizeof(sa);
  }
  if (!loopback) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--metrics-listen '", spec,
        "': refused: only loopback addresses (127.0.0.0/8, [::1]) are served, "
        "because hotpage runs as root and the endpoint has no "
        "authentication. For a Prometheus on another host, use --prom-file "
        "with node_exporter's textfile collector, or a proxy"));
  }
  a.host = std::string(host);
  return a;
}

absl::StatusOr<std::unique_ptr<MetricsServer>> MetricsServer::Start(
    const MetricsListenAddress& address, std::function<std::string()> body,
    MetricsServerOptions options) {
  const std::string where = absl::StrCat(
      "--metrics-listen ", address.addr.ss_family == AF_INET6 ? "[" : "",
      address.host, address.addr.ss_family == AF_INET6 ? "]" : "", ":",
      address.port);
  const int fd = socket(address.addr.ss_family,
                        SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return Errno(absl::StrCat(where, ": socket"), errno);
  // A restarted hotpage can bind again while the old connections linger
  // in TIME_WAIT; a port another socket listens on stays EADDRINUSE.
  const int one = 1;
  (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd, reinterpret_cast<const sockaddr*>(&address.addr),
           address.addr_len) != 0) {
    const int err = errno;
    close(fd);
    return Errno(absl::StrCat(where, ": bind"), err);
  }
  if (listen(fd, 16) != 0) {
    const int err = errno;
    close(fd);
    return Errno(absl::StrCat(where, ": listen"), err);
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len) != 0) {
    const int err = errno;
    close(fd);
    return Errno(absl::StrCat(where, ": getsockname"), err);
  }
  const int port =
      ntohs(bound.ss_family == AF_INET6
                ? reinterpret_cast<const sockaddr_in6*>(&bound)->sin6_port
                : reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);
  const int wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake < 0) {
    const int err = errno;
    close(fd);
    return Errno(absl::StrCat(where, ": eventfd"), err);
  }
  std::unique_ptr<MetricsServer> s(new MetricsServer(
      fd, wake, port,
      address.addr.ss_family == AF_INET6 ? absl::StrCat("[", address.host, "]")
                                         : address.host,
      std::move(body), options));
  s->thread_ = std::thread([raw = s.get()] { raw->Serve(); });
  return s;
}

MetricsServer::MetricsServer(int listen_fd, int wake_fd, int port,
                             std::string host,
                             std::function<std::string()> body,
                             MetricsServerOptions options)
    : listen_fd_(listen_fd),
      wake_fd_(wake_fd),
      port_(port),
      host_(std::move(host)),
      body_(std::move(body)),
      options_(options) {}

MetricsServer::~MetricsServer() {
  Stop();
  close(listen_fd_);
  close(wake_fd_);
}

void MetricsServer::Stop() {
  if (!thread_.joinable()) return;
  const uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof(one));
  thread_.join();
}

std::string MetricsServer::url() const {
  return absl::StrCat("http://", host_, ":", port_, "/metrics");
}

void MetricsServer::Serve() {
  const uint64_t timeout_ns =
      static_cast<uint64_t>(absl::ToInt64Nanoseconds(options_.client_timeout));
  std::vector<Client> clients;
  // Open connections are closed however the loop ends.
  struct CloseAll {
    std::vector<Client>* clients;
    ~CloseAll() {
      for (const Client& c : *clients) close(c.fd);
    }
  } close_all{&clients};
  std::vector<pollfd> fds;
  char buf[4096];
  // After accept fails for want of descriptors or memory (EMFILE, ENFILE,
  // ENOBUFS, ENOMEM), the pending connection stays queued and the listening
  // socket stays readable: accepting pauses for 100 ms instead of spinning.
  uint64_t accept_paused_until_ns = 0;
  while (true) {
    const uint64_t before = MonotonicNs();
    const bool accepting = before >= accept_paused_until_ns;
    fds.clear();
    fds.push_back({wake_fd_, POLLIN, 0});
    fds.push_back({listen_fd_, static_cast<short>(accepting ? POLLIN : 0), 0});
    uint64_t next_deadline = accepting ? UINT64_MAX : accept_paused_until_ns;
    for (const Client& c : clients) {
      fds.push_back({c.fd,
                     static_cast<short>(
                         c.state == Client::State::kWriting ? POLLOUT : POLLIN),
                     0});
      next_deadline = std::min(next_deadline, c.deadline_ns);
    }
    int wait_ms = -1;
    if (next_deadline != UINT64_MAX) {
      const uint64_t now = MonotonicNs();
      wait_ms = next_deadline <= now
                    ? 0
                    : static_cast<int>(std::min<uint64_t>(
                          (next_deadline - now) / 1000000 + 1, 60000));
    }
    if (poll(fds.data(), fds.size(), wait_ms) < 0 && errno != EINTR) return;
    if (fds[0].revents != 0) return;  // Stop()

    const uint64_t now = MonotonicNs();
    // Serve the connections polled (clients[i] is fds[i + 2]); new ones
    // are appended after them below.
    for (size_t i = 0; i < clients.size(); ++i) {
      Client& c = clients[i];
      const short ev = fds[i + 2].revents;
      if (ev == 0) continue;
      if (c.state == Client::State::kWriting) {
        const ssize_t n = send(c.fd, c.out.data() + c.sent,
                               c.out.size() - c.sent, MSG_NOSIGNAL);
        if (n < 0 && errno != EAGAIN && errno != EINTR) {
          c.deadline_ns = 0;  // closed below
        } else if (n > 0) {
          c.sent += static_cast<size_t>(n);
          if (c.sent == c.out.size()) {
            shutdown(c.fd, SHUT_WR);
            c.state = Client::State::kDraining;
          }
        }
        continue;
      }
      const ssize_t n = recv(c.fd, buf, sizeof(buf), 0);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (n <= 0) {
        c.deadline_ns = 0;  // closed by the client, or an error
        continue;
      }
      if (c.state == Client::State::kDraining) continue;
      c.in.append(buf, static_cast<size_t>(n));
      std::string response;
      if (MetricsHttpHeadComplete(c.in)) {
        response = MetricsHttpAnswer(c.in, body_);
      } else if (c.in.size() > options_.max_request_bytes) {
        response = TextResponse("431 Request Header Fields Too Large",
                                "request too large\n");
      } else {
        continue;
      }
      c.in.clear();
      c.in.shrink_to_fit();
      c.out = std::move(response);
      c.state = Client::State::kWriting;
    }
    // Close what ended or ran out of time.
    for (size_t i = 0; i < clients.size();) {
      if (clients[i].deadline_ns <= now) {
        close(clients[i].fd);
        clients[i] = std::move(clients.back());
        clients.pop_back();
      } else {
        ++i;
      }
    }
    if (fds[1].revents != 0) {
      // Accept what is waiting; past max_clients, answer 503 and close.
      while (true) {
        const int fd =
            accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
          if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
              errno == ENOMEM) {
            accept_paused_until_ns = now + 100000000;
          }
          break;
        }
        if (static_cast<int>(clients.size()) >= options_.max_clients) {
          const std::string busy =
              TextResponse("503 Service Unavailable", "busy\n");
          (void)!send(fd, busy.data(), busy.size(), MSG_NOSIGNAL);
          close(fd);
          continue;
        }
        Client c;
        c.fd = fd;
        c.deadline_ns = now + timeout_ns;
        clients.push_back(std::move(c));
      }
    }
  }
}

}  // namespace hotpage
