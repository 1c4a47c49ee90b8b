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

}  // namespace
}  // namespace hotpage
