// MetricsServer: the --metrics-listen endpoint of `hotpage attach` and
// `hotpage daemon`. An HTTP/1.x server on a loopback address that answers
// `GET /metrics` (and HEAD) with the Prometheus text the caller's callback
// returns (Content-Type: text/plain; version=0.0.4), 404 for any other
// path, 405 for any other method; one request per connection.
//
// Why hand-written (about 300 lines) rather than Debian's
// libcpp-httplib-dev (0.11.4 in bookworm): the endpoint serves one
// read-only document to a scraper, and httplib would bring an 8,000-line
// header compiled into the binary, a pool of at least 8 worker threads per
// server, and parsers for what is never used here (keep-alive, chunked and
// multipart bodies, ranges, regex routing) into a process that runs as
// root. This server parses only the request line, on one thread, with
// every limit explicit.
//
// Security (hotpage runs as root; the endpoint has no authentication):
//  - Loopback only: ParseMetricsListen refuses any address outside
//    127.0.0.0/8 and ::1, outright (there is no flag to allow others).
//    Prometheus on another host scrapes node_exporter's textfile collector
//    (--prom-file), or a proxy the operator chooses.
//  - Bounded: a request (line and headers) may hold max_request_bytes
//    (8 KiB; 431 beyond), at most max_clients connections are open at
//    once (more are answered 503 and closed), and each connection has
//    client_timeout (5 s) for the whole exchange, reading and writing: a
//    slow or silent client (slowloris), or one that never reads its
//    response, is closed then.
//  - Never blocks its owner: the server's thread does all socket work with
//    non-blocking sockets and poll(2). The callback runs on that thread and
//    must only copy text the owner published (AttachStatsFiles::LatestProm,
//    DaemonLoop::MetricsProm: a string copied under a mutex).
//
// Threading: Start() starts the one thread; the destructor (or Stop())
// wakes it through an eventfd and joins it. Start it after
// TerminationSignalThread::Start (tools/base/termination_signals.h), so its
// thread inherits the blocked termination signals. Writes use MSG_NOSIGNAL,
// so a client that went away never raises SIGPIPE.

#ifndef HOTPAGE_TOOLS_BASE_METRICS_SERVER_H_
#define HOTPAGE_TOOLS_BASE_METRICS_SERVER_H_

#include <sys/socket.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace hotpage {

// A parsed --metrics-listen value.
struct MetricsListenAddress {
  std::string host;  // "127.0.0.1" or "::1", as given
  int port = 0;      // 0: the kernel picks a free port
  sockaddr_storage addr{};
  socklen_t addr_len = 0;
};

// "127.0.0.1:PORT" (any 127.x.y.z) or "[::1]:PORT", PORT 0-65535.
// InvalidArgument naming what is wrong; a non-loopback address is refused
// with why and what to use instead.
absl::StatusOr<MetricsListenAddress> ParseMetricsListen(absl::string_view spec);

// The request parser, exposed for its fuzzer (metrics_http_fuzz.cc):
// whether `in` holds a whole request head (up to the blank line after the
// headers), and the response to one: 200 with body() for GET or HEAD of
// /metrics (a query string is ignored) over HTTP/1.x, else 400 (a bad
// request line), 404 (another path) or 405 (another method). Only the
// request line is read; body() is called only for a 200.
bool MetricsHttpHeadComplete(absl::string_view in);
std::string MetricsHttpAnswer(absl::string_view head,
                              const std::function<std::string()>& body);

struct MetricsServerOptions {
  size_t max_request_bytes = 8192;
  int max_clients = 16;
  absl::Duration client_timeout = absl::Seconds(5);
};

class MetricsServer {
 public:
  // Binds and listens (errors name the address and errno: EADDRINUSE
  // when the port is taken), then serves on its own thread. `body` returns
  // the text for GET /metrics; called on the server's thread.
  static absl::StatusOr<std::unique_ptr<MetricsServer>> Start(
      const MetricsListenAddress& address, std::function<std::string()> body,
      MetricsServerOptions options = {});

  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Stops serving and joins the thread (open connections are closed).
  // Idempotent.
  void Stop();

  // The port bound (the kernel's choice for port 0).
  int port() const { return port_; }
  // "http://127.0.0.1:PORT/metrics" ("[::1]" for IPv6).
  std::string url() const;

 private:
  MetricsServer(int listen_fd, int wake_fd, int port, std::string host,
                std::function<std::string()> body,
                MetricsServerOptions options);
  void Serve();

  const int listen_fd_;
  const int wake_fd_;
  const int port_;
  const std::string host_;
  const std::function<std::string()> body_;
  const MetricsServerOptions options_;
  std::thread thread_;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_BASE_METRICS_SERVER_H_
