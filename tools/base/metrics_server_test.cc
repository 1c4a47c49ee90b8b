// MetricsServer over real loopback sockets: GET /metrics, the other
// answers, the address checks, and the limits (a silent client, an
// oversized request, a client that never reads, too many clients) never
// hang the server.

#include "tools/base/metrics_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace hotpage {
namespace {

constexpr char kBody[] =
    "# HELP hotpage_samples_total Samples ingested.\n"
    "# TYPE hotpage_samples_total counter\n"
    "hotpage_samples_total{workload=\"w\",pid=\"42\",cgroup=\"a\"} 7\n";

std::unique_ptr<MetricsServer> StartOn(const std::string& spec,
                                       std::function<std::string()> body,
                                       MetricsServerOptions options = {}) {
  absl::StatusOr<MetricsListenAddress> a = ParseMetricsListen(spec);
  EXPECT_TRUE(a.ok()) << a.status();
  if (!a.ok()) return nullptr;
  absl::StatusOr<std::unique_ptr<MetricsServer>> s =
      MetricsServer::Start(*a, std::move(body), options);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

// A connected socket with 5 s receive and send timeouts (a hung server
// fails the test instead of hanging it).
int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)), 0)
      << strerror(errno);
  return fd;
}

void SendAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n =
        send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;  // the server closed it (an oversized request)
    sent += static_cast<size_t>(n);
  }
}

// Everything the server sends until it closes (or 5 s pass).
std::string ReadAll(int fd) {
  std::string out;
  char buf[65536];
  while (true) {
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

std::string Fetch(int port, const std::string& request) {
  const int fd = Connect(port);
  SendAll(fd, request);
  std::string out = ReadAll(fd);
  close(fd);
  return out;
}

std::string Get(int port, const std::string& path) {
  return Fetch(port, absl::StrCat("GET ", path,
                                  " HTTP/1.1\r\nHost: localhost\r\nAccept: "
                                  "text/plain\r\n\r\n"));
}

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

TEST(MetricsServer, ServesTheTextOnLoopbackWithPortZero) {
  auto server = StartOn("127.0.0.1:0", [] { return std::string(kBody); });
  ASSERT_NE(server, nullptr);
  ASSERT_GT(server->port(), 0);
  EXPECT_EQ(server->url(),
            absl::StrCat("http://127.0.0.1:", server->port(), "/metrics"));
  const std::string r = Get(server->port(), "/metrics");
  EXPECT_TRUE(absl::StartsWith(r, "HTTP/1.1 200 OK\r\n")) << r;
  EXPECT_TRUE(absl::StrContains(
      r, "\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"))
      << r;
  EXPECT_TRUE(absl::StrContains(
      r, absl::StrCat("\r\nContent-Length: ", strlen(kBody), "\r\n")))
      << r;
  EXPECT_TRUE(absl::EndsWith(r, absl::StrCat("\r\n\r\n", kBody))) << r;
  // A query string is ignored; HEAD has the headers only.
  EXPECT_TRUE(absl::EndsWith(Get(server->port(), "/metrics?x=1"), kBody));
  const std::string head =
      Fetch(server->port(), "HEAD /metrics HTTP/1.0\r\n\r\n");
  EXPECT_TRUE(absl::StartsWith(head, "HTTP/1.1 200 OK\r\n")) << head;
  EXPECT_TRUE(absl::EndsWith(head, "\r\n\r\n")) << head;
}

TEST(MetricsServer, OtherPathsAre404OtherMethods405AndGarbage400) {
  auto server = StartOn("127.0.0.1:0", [] { return std::string(kBody); });
  ASSERT_NE(server, nullptr);
  for (const char* path : {"/", "/metricsx", "/metrics/", "/../etc/passwd"}) {
    EXPECT_TRUE(absl::StartsWith(Get(server->port(), path),
                                 "HTTP/1.1 404 Not Found\r\n"))
        << path;
  }
  const std::string post =
      Fetch(server->port(), "POST /metrics HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(absl::StartsWith(post, "HTTP/1.1 405 Method Not Allowed\r\n"))
      << post;
  EXPECT_TRUE(absl::StrContains(post, "\r\nAllow: GET, HEAD\r\n")) << post;
  EXPECT_TRUE(absl::StartsWith(Fetch(server->port(), "hello\r\n\r\n"),
                               "HTTP/1.1 400 Bad Request\r\n"));
}

TEST(MetricsServer, BadOrNonLoopbackAddressesAreRejected) {
  for (const char* ok : {"127.0.0.1:0", "127.1.2.3:9465", "[::1]:0"}) {
    EXPECT_TRUE(ParseMetricsListen(ok).ok()) << ok;
  }
  for (const char* bad :
       {"127.0.0.1:65536", "127.0.0.1:", "127.0.0.1:-1", "127.0.0.1:+80",
        "127.0.0.1:80x", "127.0.0.1:000009465", "9465", "localhost:9465",
        "[::1:80", "::1:80", "", "127.0.0.1:0:0"}) {
    absl::StatusOr<MetricsListenAddress> a = ParseMetricsListen(bad);
    EXPECT_FALSE(a.ok()) << bad;
    EXPECT_TRUE(absl::StrContains(a.status().message(), "127.0.0.1:PORT"))
        << bad << ": " << a.status();
  }
  for (const char* remote :
       {"0.0.0.0:9465", "10.1.2.3:80", "[::]:9465", "[2001:db8::1]:80"}) {
    absl::StatusOr<MetricsListenAddress> a = ParseMetricsListen(remote);
    EXPECT_FALSE(a.ok()) << remote;
    EXPECT_TRUE(absl::StrContains(a.status().message(), "only loopback"))
        << remote << ": " << a.status();
  }
}

TEST(MetricsServer, APortInUseIsAClearError) {
  auto first = StartOn("127.0.0.1:0", [] { return std::string(); });
  ASSERT_NE(first, nullptr);
  absl::StatusOr<MetricsListenAddress> a =
      ParseMetricsListen(absl::StrCat("127.0.0.1:", first->port()));
  ASSERT_TRUE(a.ok());
  absl::StatusOr<std::unique_ptr<MetricsServer>> second =
      MetricsServer::Start(*a, [] { return std::string(); });
  ASSERT_FALSE(second.ok());
  EXPECT_TRUE(absl::StrContains(
      second.status().message(),
      absl::StrCat("--metrics-listen 127.0.0.1:", first->port(), ": bind: ")))
      << second.status();
  EXPECT_TRUE(absl::IsAlreadyExists(second.status()) ||
              absl::StrContains(second.status().message(), "in use"))
      << second.status();
}

TEST(MetricsServer, ASilentClientIsServedAroundAndClosedAtItsTimeout) {
  MetricsServerOptions o;
  o.client_timeout = absl::Milliseconds(300);
  auto server = StartOn(
      "127.0.0.1:0", [] { return std::string(kBody); }, o);
  ASSERT_NE(server, nullptr);
  const int slow = Connect(server->port());
  SendAll(slow, "GET /metr");  // and nothing more
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(absl::EndsWith(Get(server->port(), "/metrics"), kBody));
  EXPECT_LT(SecondsSince(t0), 0.25);  // not behind the silent one
  // The silent one is closed at its timeout, without a response.
  EXPECT_EQ(ReadAll(slow), "");
  EXPECT_LT(SecondsSince(t0), 2.0);
  close(slow);
}

TEST(MetricsServer, AnOversizedRequestIsAnswered431AndClosed) {
  auto server = StartOn("127.0.0.1:0", [] { return std::string(kBody); });
  ASSERT_NE(server, nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  const int fd = Connect(server->port());
  std::string big = "GET /metrics HTTP/1.1\r\n";
  while (big.size() < 64 * 1024)
    big += "X-Filler: aaaaaaaaaaaaaaaaaaaaaaaa\r\n";
  SendAll(fd, big);  // never ends its head
  const std::string r = ReadAll(fd);
  close(fd);
  EXPECT_TRUE(absl::StartsWith(r, "HTTP/1.1 431 ")) << r.substr(0, 80);
  EXPECT_LT(SecondsSince(t0), 2.0);
  EXPECT_TRUE(absl::EndsWith(Get(server->port(), "/metrics"), kBody));
}

TEST(MetricsServer, AClientThatNeverReadsDoesNotHoldUpOthers) {
  MetricsServerOptions o;
  o.client_timeout = absl::Milliseconds(500);
  const std::string large(8 << 20, 'x');
  auto server = StartOn(
      "127.0.0.1:0", [&large] { return large; }, o);
  ASSERT_NE(server, nullptr);
  const int stuck = Connect(server->port());
  const int small = 4096;
  setsockopt(stuck, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  SendAll(stuck, "GET /metrics HTTP/1.1\r\n\r\n");  // never reads the reply
  const auto t0 = std::chrono::steady_clock::now();
  const std::string r = Get(server->port(), "/metrics");
  EXPECT_TRUE(absl::StartsWith(r, "HTTP/1.1 200 OK\r\n"));
  EXPECT_TRUE(absl::EndsWith(r, large.substr(0, 100)));
  EXPECT_LT(SecondsSince(t0), 3.0);
  close(stuck);
}

TEST(MetricsServer, ClientsPastTheLimitGet503) {
  MetricsServerOptions o;
  o.max_clients = 2;
  o.client_timeout = absl::Milliseconds(400);
  auto server = StartOn(
      "127.0.0.1:0", [] { return std::string(kBody); }, o);
  ASSERT_NE(server, nullptr);
  const int a = Connect(server->port());
  const int b = Connect(server->port());
  // Let the server accept both before the third arrives.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_TRUE(absl::StartsWith(Get(server->port(), "/metrics"),
                               "HTTP/1.1 503 Service Unavailable\r\n"));
  // Once the idle ones time out, it serves again.
  EXPECT_EQ(ReadAll(a), "");
  EXPECT_EQ(ReadAll(b), "");
  EXPECT_TRUE(absl::EndsWith(Get(server->port(), "/metrics"), kBody));
  close(a);
  close(b);
}

// Out of descriptors, accept fails and the connection stays queued, so the
// listening socket stays readable: the server must not spin on it.
TEST(MetricsServer, OutOfDescriptorsItWaitsInsteadOfSpinning) {
  auto server = StartOn("127.0.0.1:0", [] { return std::string(kBody); });
  ASSERT_NE(server, nullptr);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(server->port()));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // Both client sockets exist before the limit; then the server's accept
  // of the first takes the last descriptor allowed.
  const int a = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int b = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(a, 0);
  ASSERT_EQ(b, a + 1) << "descriptors not consecutive";
  rlimit saved;
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit tight = saved;
  tight.rlim_cur = static_cast<rlim_t>(b) + 2;  // one more: the server's
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &tight), 0);
  ASSERT_EQ(connect(a, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(connect(b, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)), 0);
  // b waits in the backlog; the server's accept fails with EMFILE.
  timespec t0;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  timespec t1;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
  const double cpu = static_cast<double>(t1.tv_sec - t0.tv_sec) +
                     static_cast<double>(t1.tv_nsec - t0.tv_nsec) / 1e9;
  EXPECT_LT(cpu, 0.05) << "the server spun on the listening socket";
  // With descriptors again, the queued connection is served.
  timeval tv{5, 0};
  setsockopt(b, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  SendAll(b, "GET /metrics HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(absl::EndsWith(ReadAll(b), kBody));
  close(a);
  close(b);
}

TEST(MetricsServer, StopIsPromptWithOpenConnections) {
  auto server = StartOn("127.0.0.1:0", [] { return std::string(kBody); });
  ASSERT_NE(server, nullptr);
  const int idle = Connect(server->port());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto t0 = std::chrono::steady_clock::now();
  server->Stop();
  EXPECT_LT(SecondsSince(t0), 0.5);
  EXPECT_EQ(ReadAll(idle), "");  // closed by the server
  close(idle);
}

}  // namespace
}  // namespace hotpage
