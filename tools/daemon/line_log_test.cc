#include "tools/daemon/line_log.h"

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace hotpage {
namespace {

struct Capture {
  Mutex mu;
  std::string text;
  double now = 0;
};

std::unique_ptr<LineLog> Make(Capture* c, LogLevel level, bool journald) {
  return std::make_unique<LineLog>(
      level, journald,
      [c](absl::string_view s) {
        MutexLock l(&c->mu);
        c->text.append(s.data(), s.size());
      },
      [c] { return c->now; });
}

TEST(LineLogTest, LevelsAndJournaldPriorities) {
  Capture c;
  auto log = Make(&c, LogLevel::kInfo, /*journald=*/true);
  log->Log(LogLevel::kError, "e");
  log->Log(LogLevel::kWarning, "w");
  log->Log(LogLevel::kInfo, "i");
  log->Log(LogLevel::kDebug, "d");  // below the level
  log->stream() << "hotpage daemon: warning: streamed" << 42 << "\n";
  log->stream() << "plain\n";
  EXPECT_EQ(c.text,
            "<3>e\n<4>w\n<6>i\n<4>hotpage daemon: warning: streamed42\n"
            "<6>plain\n");
}

TEST(LineLogTest, TerminalGetsPlainLinesAndQuietDropsInfo) {
  Capture c;
  auto log = Make(&c, LogLevel::kWarning, /*journald=*/false);
  log->Log(LogLevel::kInfo, "round");
  log->Log(LogLevel::kWarning, "careful");
  EXPECT_EQ(c.text, "careful\n");
}

TEST(LineLogTest, RateLimitedWithACount) {
  Capture c;
  auto log = Make(&c, LogLevel::kInfo, false);
  for (int i = 0; i < 80; ++i) log->Log(LogLevel::kInfo, absl::StrCat(i));
  log->Log(LogLevel::kError, "errors always pass");
  c.now = 1.5;
  log->Log(LogLevel::kInfo, "later");
  const std::vector<std::string> lines =
      absl::StrSplit(c.text, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), static_cast<size_t>(LineLog::kBurst) + 3);
  // The count of what was dropped comes with the next line that passes.
  EXPECT_EQ(lines[LineLog::kBurst],
            "hotpage daemon: warning: 30 log lines suppressed (more than 50 "
            "in a second)");
  EXPECT_EQ(lines[LineLog::kBurst + 1], "errors always pass");
  EXPECT_EQ(lines.back(), "later");
}

TEST(LineLogTest, ThreadsNeverInterleaveWithinALine) {
  Capture c;
  auto log = Make(&c, LogLevel::kInfo, false);
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t) {
    ts.emplace_back([&log, t] {
      for (int i = 0; i < 10; ++i) {
        log->stream() << "thread " << t << " line " << i << " end\n";
      }
    });
  }
  for (auto& t : ts) t.join();
  for (absl::string_view line :
       absl::StrSplit(c.text, '\n', absl::SkipEmpty())) {
    if (absl::StrContains(line, "suppressed")) continue;
    EXPECT_TRUE(absl::StartsWith(line, "thread ")) << line;
    EXPECT_TRUE(absl::EndsWith(line, " end")) << line;
  }
}

}  // namespace
}  // namespace hotpage
