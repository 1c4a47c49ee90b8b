// LineLog: the daemon's log. One line per event, from any thread, with a
// severity; journald-friendly when stderr is not a terminal; rate limited.
//
//  - Severity: error, warning, info, debug; lines below --log-level are
//    dropped. Lines written through stream() are info, or warning when they
//    contain "warning:" (the words the AttachLoop and sources already use).
//  - journald: when stderr is not a terminal (systemd connects it to the
//    journal), each line starts with the syslog priority "<3>", "<4>",
//    "<6>" or "<7>" that sd-daemon(3) documents, so `journalctl -p warning`
//    filters; on a terminal the plain text.
//  - Rate limit: at most kBurst lines in any one second; the lines dropped
//    are counted and reported by the next line that passes ("N lines
//    suppressed"), so a flapping process cannot flood the journal.
//  - One write(2) per line (lines are shorter than PIPE_BUF in practice),
//    under a mutex: lines of different threads never interleave.

#ifndef HOTPAGE_TOOLS_DAEMON_LINE_LOG_H_
#define HOTPAGE_TOOLS_DAEMON_LINE_LOG_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/base/mutex.h"

namespace hotpage {

enum class LogLevel { kError = 3, kWarning = 4, kInfo = 6, kDebug = 7 };
absl::StatusOr<LogLevel> ParseLogLevel(absl::string_view s);

class LineLog {
 public:
  static constexpr int kBurst = 50;
  // `write` receives each finished line (default: write(2) to fd 2);
  // `now_s` the clock for the rate limit (default: CLOCK_MONOTONIC).
  LineLog(LogLevel level, bool journald,
          std::function<void(absl::string_view)> write = nullptr,
          std::function<double()> now_s = nullptr);
  ~LineLog();

  void Log(LogLevel level, absl::string_view line) ABSL_LOCKS_EXCLUDED(mu_);
  void set_level(LogLevel level) ABSL_LOCKS_EXCLUDED(mu_);
  // A stream whose every '\n'-terminated line goes to Log(). Each thread
  // gets its own buffer, so partial lines of two threads never mix.
  std::ostream& stream() { return *stream_; }

 private:
  class Buf;
  mutable Mutex mu_;
  LogLevel level_ ABSL_GUARDED_BY(mu_);
  const bool journald_;
  std::function<void(absl::string_view)> write_;
  std::function<double()> now_s_;
  double window_start_ ABSL_GUARDED_BY(mu_) = -1;
  int in_window_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t suppressed_ ABSL_GUARDED_BY(mu_) = 0;
  std::unique_ptr<Buf> buf_;
  std::unique_ptr<std::ostream> stream_;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_DAEMON_LINE_LOG_H_
