#include "tools/daemon/line_log.h"

#include <time.h>
#include <unistd.h>

#include <map>
#include <streambuf>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace hotpage {

absl::StatusOr<LogLevel> ParseLogLevel(absl::string_view s) {
  if (s == "error") return LogLevel::kError;
  if (s == "warning") return LogLevel::kWarning;
  if (s == "info") return LogLevel::kInfo;
  if (s == "debug") return LogLevel::kDebug;
  return absl::InvalidArgumentError(
      absl::StrCat("log level '", s, "': one of error, warning, info, debug"));
}

// Per-thread line buffers: a thread's partial line waits in its own
// string until its '\n'.
class LineLog::Buf : public std::streambuf {
 public:
  explicit Buf(LineLog* log) : log_(log) {}

 protected:
  int overflow(int c) override {
    if (c == traits_type::eof()) return 0;
    std::string& line = Mine();
    if (c == '\n') {
      Emit(line);
      line.clear();
    } else if (line.size() < 4096) {
      line.push_back(static_cast<char>(c));
    }
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    for (std::streamsize i = 0; i < n; ++i) overflow(s[i]);
    return n;
  }

 private:
  std::string& Mine() {
    MutexLock l(&mu_);
    return lines_[std::this_thread::get_id()];
  }
  void Emit(const std::string& line) {
    const LogLevel level =
        absl::StrContains(line, "warning:") ? LogLevel::kWarning
        : absl::StrContains(line, "error:") ? LogLevel::kError
                                            : LogLevel::kInfo;
    log_->Log(level, line);
  }
  LineLog* const log_;
  Mutex mu_;
  // The map's nodes do not move, so a thread's string stays valid while
  // others are added.
  std::map<std::thread::id, std::string> lines_ ABSL_GUARDED_BY(mu_);
};

LineLog::LineLog(LogLevel level, bool journald,
                 std::function<void(absl::string_view)> write,
                 std::function<double()> now_s)
    : level_(level),
      journald_(journald),
      write_(std::move(write)),
      now_s_(std::move(now_s)) {
  if (!write_) {
    write_ = [](absl::string_view s) {
      (void)!::write(STDERR_FILENO, s.data(), s.size());
    };
  }
  if (!now_s_) {
    now_s_ = [] {
      timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
    };
  }
  buf_ = std::make_unique<Buf>(this);
  stream_ = std::make_unique<std::ostream>(buf_.get());
}

LineLog::~LineLog() = default;

void LineLog::set_level(LogLevel level) {
  MutexLock l(&mu_);
  level_ = level;
}

void LineLog::Log(LogLevel level, absl::string_view line) {
  MutexLock l(&mu_);
  if (static_cast<int>(level) > static_cast<int>(level_)) return;
  const double now = now_s_();
  if (window_start_ < 0 || now - window_start_ >= 1.0) {
    window_start_ = now;
    in_window_ = 0;
  }
  if (++in_window_ > kBurst && level != LogLevel::kError) {
    ++suppressed_;
    return;
  }
  std::string out;
  if (suppressed_ > 0) {
    absl::StrAppend(
        &out, journald_ ? "<4>" : "", "hotpage daemon: warning: ", suppressed_,
        " log lines suppressed (more than ", kBurst, " in a second)\n");
    suppressed_ = 0;
  }
  absl::StrAppend(&out,
                  journald_ ? absl::StrCat("<", static_cast<int>(level), ">")
                            : std::string(),
                  line, "\n");
  write_(out);
}

}  // namespace hotpage
