#include "tools/base/atomic_file.h"

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

}  // namespace
}  // namespace hotpage
