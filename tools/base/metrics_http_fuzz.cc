// Fuzz target for the --metrics-listen endpoint's input (metrics_server.h):
// the HTTP request head any local process can send to a root process, and
// the flag's address. Checks the contracts, not only the absence of
// crashes:
//  - every response is an HTTP/1.1 status line with a Content-Length equal
//    to the body that follows (none for HEAD);
//  - 200 only for GET or HEAD of /metrics over HTTP/1.x, and the body
//    callback runs only then;
//  - a parsed --metrics-listen address is a loopback one (127.0.0.0/8 or
//    ::1) with a port in 0..65535.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"
#include "tools/base/metrics_server.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view in(reinterpret_cast<const char*>(data), size);
  (void)hotpage::MetricsHttpHeadComplete(in);
  int calls = 0;
  const std::string r = hotpage::MetricsHttpAnswer(in, [&calls] {
    ++calls;
    return std::string("hotpage_up 1\n");
  });
  if (!absl::StartsWith(r, "HTTP/1.1 ")) std::abort();
  const bool ok = absl::StartsWith(r, "HTTP/1.1 200 ");
  if (ok != (calls == 1) || calls > 1) std::abort();
  if (ok) {
    absl::string_view line = in.substr(0, in.find('\n'));
    if (!absl::StartsWith(line, "GET /metrics") &&
        !absl::StartsWith(line, "HEAD /metrics")) {
      std::abort();
    }
  }
  // Content-Length matches what follows the head (0 bytes for HEAD).
  const size_t cl = r.find("\r\nContent-Length: ");
  const size_t end = r.find("\r\n\r\n");
  if (cl == std::string::npos || end == std::string::npos) std::abort();
  const size_t from = cl + 18;
  uint64_t length = 0;
  if (!absl::SimpleAtoi(
          absl::string_view(r).substr(from, r.find("\r\n", from) - from),
          &length)) {
    std::abort();
  }
  const size_t body = r.size() - (end + 4);
  const bool head_only = ok && absl::StartsWith(in, "HEAD ");
  if (body != (head_only ? 0 : length)) std::abort();

  auto a = hotpage::ParseMetricsListen(in);
  if (a.ok()) {
    if (a->port < 0 || a->port > 65535) std::abort();
    if (!absl::StartsWith(a->host, "127.") && a->host != "::1") std::abort();
  }
  return 0;
}
