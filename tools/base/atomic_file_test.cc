#include "tools/base/atomic_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "tools/base/kernel/fake_tree.h"

namespace hotpage {
namespace {

std::string Slurp(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(WriteFileAtomically, WritesAndReplaces) {
  FakeTree t;
  const std::string p = t.root() + "/stats.json";
  ASSERT_TRUE(WriteFileAtomically(p, "one").ok());
  EXPECT_EQ(Slurp(p), "one");
  ASSERT_TRUE(WriteFileAtomically(p, "two, longer").ok());
  EXPECT_EQ(Slurp(p), "two, longer");
  // No temporary files left behind.
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(t.root()))
    files += e.is_regular_file();
  EXPECT_EQ(files, 1);
}

TEST(WriteFileAtomically, ReplacesAPlantedSymlinkInsteadOfFollowingIt) {
  FakeTree t;
  t.Write("/victim", "precious");
  const std::string p = t.root() + "/stats.json";
  t.Symlink(t.root() + "/victim", "/stats.json");
  ASSERT_TRUE(WriteFileAtomically(p, "stats").ok());
  EXPECT_EQ(Slurp(t.root() + "/victim"), "precious");
  EXPECT_EQ(Slurp(p), "stats");
  struct stat st;
  ASSERT_EQ(lstat(p.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
}

TEST(WriteFileAtomically, MissingDirectoryIsAnError) {
  auto s = WriteFileAtomically("/nonexistent/dir/x.json", "x");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/nonexistent/dir/x.json"), std::string::npos);
}

TEST(CheckCanWriteFileAtomically, SaysWhatTheWriteWouldSayAndWritesNothing) {
  FakeTree t;
  const std::string p = t.root() + "/out.json";
  EXPECT_TRUE(CheckCanWriteFileAtomically(p).ok());
  // Nothing left behind: not the file, not the probe.
  DIR* d = opendir(t.root().c_str());
  ASSERT_NE(d, nullptr);
  int entries = 0;
  while (dirent* e = readdir(d)) {
    if (std::string(e->d_name) != "." && std::string(e->d_name) != "..")
      ++entries;
  }
  closedir(d);
  EXPECT_EQ(entries, 0);

  absl::Status s = CheckCanWriteFileAtomically("/nonexistent/dir/x.svg");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cannot write /nonexistent/dir/x.svg: "),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("ENOENT"), std::string::npos) << s.message();

  s = CheckCanWriteFileAtomically(t.root());  // a directory
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("EISDIR"), std::string::npos) << s.message();

  EXPECT_FALSE(CheckCanWriteFileAtomically("").ok());
}

TEST(AppendOnlyFile, StartsEmptyAndGrowsByEachAppend) {
  FakeTree t;
  t.Write("/rounds.jsonl", "an old run's lines\n");
  const std::string p = t.root() + "/rounds.jsonl";
  absl::StatusOr<std::unique_ptr<AppendOnlyFile>> f =
      AppendOnlyFile::Create(p, 0600);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(Slurp(p), "");  // replaced, not appended to
  ASSERT_TRUE((*f)->Append("one\n").ok());
  EXPECT_EQ(Slurp(p), "one\n");  // readable while it grows
  ASSERT_TRUE((*f)->Append("two\n").ok());
  EXPECT_EQ(Slurp(p), "one\ntwo\n");
  struct stat st;
  ASSERT_EQ(stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  f->reset();
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(t.root()))
    files += e.is_regular_file();
  EXPECT_EQ(files, 1);  // no temporary file left
}

TEST(AppendOnlyFile, ReplacesAPlantedSymlinkInsteadOfFollowingIt) {
  FakeTree t;
  t.Write("/victim", "precious");
  const std::string p = t.root() + "/rounds.jsonl";
  t.Symlink(t.root() + "/victim", "/rounds.jsonl");
  absl::StatusOr<std::unique_ptr<AppendOnlyFile>> f = AppendOnlyFile::Create(p);
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_TRUE((*f)->Append("line\n").ok());
  EXPECT_EQ(Slurp(t.root() + "/victim"), "precious");
  EXPECT_EQ(Slurp(p), "line\n");
  struct stat st;
  ASSERT_EQ(lstat(p.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
}

TEST(AppendOnlyFile, AHardLinkAtTheNameIsReplacedNotTruncated) {
  FakeTree t;
  t.Write("/victim", "precious");
  const std::string p = t.root() + "/rounds.jsonl";
  ASSERT_EQ(link((t.root() + "/victim").c_str(), p.c_str()), 0);
  absl::StatusOr<std::unique_ptr<AppendOnlyFile>> f = AppendOnlyFile::Create(p);
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_TRUE((*f)->Append("line\n").ok());
  EXPECT_EQ(Slurp(t.root() + "/victim"), "precious");
  EXPECT_EQ(Slurp(p), "line\n");
}

TEST(AppendOnlyFile, MissingDirectoryOrEmptyPathIsAnError) {
  absl::StatusOr<std::unique_ptr<AppendOnlyFile>> f =
      AppendOnlyFile::Create("/nonexistent/dir/x.jsonl");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("/nonexistent/dir/x.jsonl"),
            std::string::npos);
  EXPECT_FALSE(AppendOnlyFile::Create("").ok());
}

TEST(AppendOnlyFile, AnAppendPastTheBoundWritesNothing) {
  FakeTree t;
  const std::string p = t.root() + "/rounds.jsonl";
  absl::StatusOr<std::unique_ptr<AppendOnlyFile>> f = AppendOnlyFile::Create(p);
  ASSERT_TRUE(f.ok()) << f.status();
  (*f)->set_max_bytes(10);
  ASSERT_TRUE((*f)->Append("12345\n").ok());
  ASSERT_TRUE((*f)->Append("123\n").ok());  // exactly 10
  absl::Status s = (*f)->Append("x");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_NE(s.message().find(p), std::string::npos) << s;
  EXPECT_NE(s.message().find("10 bytes"), std::string::npos) << s;
  EXPECT_EQ(Slurp(p), "12345\n123\n");  // whole appends only
  EXPECT_EQ((*f)->bytes(), 10u);
}

TEST(AppendOnlyFile, CreateAtTakesPlainNamesInTheDirectoryOnly) {
  FakeTree t;
  t.Write("/d/victim", "precious");
  t.Symlink(t.root() + "/d/victim", "/d/a.jsonl");
  const int dir = open((t.root() + "/d").c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(dir, 0);
  absl::StatusOr<std::unique_ptr<AppendOnlyFile>> f =
      AppendOnlyFile::CreateAt(dir, "a.jsonl", "DIR/a.jsonl", 0600);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ((*f)->path(), "DIR/a.jsonl");
  ASSERT_TRUE((*f)->Append("line\n").ok());
  EXPECT_EQ(Slurp(t.root() + "/d/victim"), "precious");
  EXPECT_EQ(Slurp(t.root() + "/d/a.jsonl"), "line\n");
  struct stat st;
  ASSERT_EQ(lstat((t.root() + "/d/a.jsonl").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  for (const char* bad : {"", ".", "..", "../a.jsonl", "x/a.jsonl"}) {
    absl::StatusOr<std::unique_ptr<AppendOnlyFile>> b =
        AppendOnlyFile::CreateAt(dir, bad, "bad", 0600);
    EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_FALSE(std::filesystem::exists(t.root() + "/a.jsonl"));
  close(dir);
}

}  // namespace
}  // namespace hotpage
