#include "tools/daemon/status_socket.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace hotpage {
namespace {

// A short directory: a socket path has at most 107 bytes, and the test's
// own TEST_TMPDIR is longer than that under Bazel.
std::string TmpDir() {
  char tmpl[] = "/tmp/hpst.XXXXXX";
  const char* d = mkdtemp(tmpl);
  EXPECT_NE(d, nullptr);
  return d ? std::string(d) : std::string("/tmp");
}

TEST(StatusSocketTest, AnswersRequestsAndCleansUp) {
  const std::string dir = TmpDir() + "/run";
  const std::string path = dir + "/h.sock";
  auto server = StatusServer::Start(path, [](absl::string_view req) {
    return absl::StrCat("reply to ", req, "\n");
  });
  ASSERT_TRUE(server.ok()) << server.status();
  struct stat st;
  ASSERT_EQ(lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0077, 0u);  // the directory is the daemon's alone
  absl::StatusOr<std::string> r = QueryStatus(path, "status", absl::Seconds(5));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, "reply to status\n");
  r = QueryStatus(path, "metrics", absl::Seconds(5));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, "reply to metrics\n");
  EXPECT_EQ((*server)->served(), 2u);

  // A second daemon on the same socket is refused.
  auto second = StatusServer::Start(
      path, [](absl::string_view) { return std::string(); });
  EXPECT_EQ(second.status().code(), absl::StatusCode::kAlreadyExists)
      << second.status();

  server->reset();
  EXPECT_NE(lstat(path.c_str(), &st), 0);  // removed
  r = QueryStatus(path, "status", absl::Seconds(1));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(std::string(r.status().message()).find("is it running?"),
            std::string::npos);
}

TEST(StatusSocketTest, StaleSocketIsReplacedButAFileIsNot) {
  const std::string dir = TmpDir() + "/run2";
  const std::string path = dir + "/h.sock";
  {
    auto s = StatusServer::Start(
        path, [](absl::string_view) { return std::string("x"); });
    ASSERT_TRUE(s.ok());
    // Leave a stale socket behind, as a SIGKILLed daemon would: a hard
    // link keeps the inode when the server removes its name.
    ASSERT_EQ(link(path.c_str(), (dir + "/keep").c_str()), 0);
  }
  ASSERT_EQ(rename((dir + "/keep").c_str(), path.c_str()), 0);
  auto s = StatusServer::Start(
      path, [](absl::string_view) { return std::string("new\n"); });
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*QueryStatus(path, "status", absl::Seconds(5)), "new\n");
  s->reset();
  const std::string file = dir + "/f.sock";
  FILE* f = fopen(file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fclose(f);
  auto refused = StatusServer::Start(
      file, [](absl::string_view) { return std::string(); });
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(StatusSocketTest, UnsafeDirectoryIsRefused) {
  const std::string dir = TmpDir() + "/open";
  mkdir(dir.c_str(), 0777);
  chmod(dir.c_str(), 0777);
  auto s = StatusServer::Start(dir + "/h.sock",
                               [](absl::string_view) { return std::string(); });
  EXPECT_FALSE(s.ok());
}

TEST(StatusSocketTest, ARequestWithoutALineGetsAnError) {
  const std::string path = TmpDir() + "/run3/h.sock";
  auto s = StatusServer::Start(
      path, [](absl::string_view) { return std::string("never"); });
  ASSERT_TRUE(s.ok());
  std::string longreq(200, 'x');
  absl::StatusOr<std::string> r = QueryStatus(path, longreq, absl::Seconds(5));
  EXPECT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("one request line"),
            std::string::npos)
      << r.status();
}

}  // namespace
}  // namespace hotpage
