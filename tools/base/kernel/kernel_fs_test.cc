#include "tools/base/kernel/kernel_fs.h"

#include <string>

#include "gtest/gtest.h"
#include "tools/base/kernel/fake_tree.h"

namespace hotpage {
namespace {

TEST(KernelFs, ReadsUnderRootAndNamesFilesInErrors) {
  FakeTree tree;
  tree.Write("/sys/devices/system/node/online", "0-1\n");
  tree.Write("/sys/x/int", "42\n");
  tree.Write("/sys/x/garbage", "forty two\n");
  auto fs = KernelFs::Open(tree.root());
  ASSERT_TRUE(fs.ok()) << fs.status();
  EXPECT_FALSE(fs->is_live());

  auto online = fs->ReadList("/sys/devices/system/node/online");
  ASSERT_TRUE(online.ok()) << online.status();
  EXPECT_EQ(*online, (std::vector<int>{0, 1}));
  EXPECT_EQ(*fs->ReadInt("/sys/x/int"), 42);

  auto bad = fs->ReadInt("/sys/x/garbage");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(tree.root() + "/sys/x/garbage"),
            std::string::npos)
      << bad.status();
  EXPECT_NE(bad.status().message().find("forty two"), std::string::npos);

  auto missing = fs->ReadFile("/sys/nothing");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("ENOENT"), std::string::npos);
  EXPECT_NE(missing.status().message().find(tree.root() + "/sys/nothing"),
            std::string::npos);
}

TEST(KernelFs, ReadAtReadsByPosition) {
  FakeTree tree;
  tree.Write("/proc/1/pagemap", "0123456789");
  auto fs = KernelFs::Open(tree.root());
  ASSERT_TRUE(fs.ok()) << fs.status();
  EXPECT_EQ(*fs->ReadAt("/proc/1/pagemap", 3, 4), "3456");
  EXPECT_EQ(*fs->ReadAt("/proc/1/pagemap", 8, 4), "89");  // short at the end
  EXPECT_EQ(*fs->ReadAt("/proc/1/pagemap", 20, 4), "");
  EXPECT_FALSE(fs->ReadAt("/proc/1/none", 0, 8).ok());
  EXPECT_FALSE(
      fs->ReadAt("/proc/1/pagemap", 0, KernelFs::kMaxFileBytes + 1).ok());
}

TEST(KernelFs, SymlinksStayInsideTheRoot) {
  FakeTree tree;
  tree.Write("/etc/secret", "inside\n");
  // An absolute symlink in the tree resolves against the tree, not "/".
  tree.Symlink("/etc/secret", "/sys/link_abs");
  // A ".." chain cannot climb above the root either.
  tree.Symlink("../../../../../../../../etc/secret", "/sys/a/link_up");
  auto fs = KernelFs::Open(tree.root());
  ASSERT_TRUE(fs.ok());
  EXPECT_EQ(*fs->ReadTrimmed("/sys/link_abs"), "inside");
  EXPECT_EQ(*fs->ReadTrimmed("/sys/a/link_up"), "inside");
  EXPECT_EQ(*fs->ReadTrimmed("/../../etc/secret"), "inside");
}

TEST(KernelFs, ListDirSortedAndExists) {
  FakeTree tree;
  tree.Mkdir("/sys/d/node1");
  tree.Mkdir("/sys/d/node0");
  tree.Write("/sys/d/online", "0\n");
  auto fs = KernelFs::Open(tree.root());
  auto names = fs->ListDir("/sys/d");
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, (std::vector<std::string>{"node0", "node1", "online"}));
  EXPECT_TRUE(fs->Exists("/sys/d/node0"));
  EXPECT_FALSE(fs->Exists("/sys/d/node7"));
  EXPECT_FALSE(fs->ListDir("/sys/none").ok());
}

TEST(KernelFs, OversizedFileIsAnError) {
  FakeTree tree;
  tree.Write("/sys/big", std::string(KernelFs::kMaxFileBytes + 1, '1'));
  auto fs = KernelFs::Open(tree.root());
  auto big = fs->ReadFile("/sys/big");
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(KernelFs, RootMustBeADirectory) {
  EXPECT_FALSE(KernelFs::Open("/nonexistent/hotpage").ok());
  EXPECT_FALSE(KernelFs::Open("").ok());
}

TEST(KernelFs, LiveRootReadsProc) {
  auto fs = KernelFs::Open("/");
  ASSERT_TRUE(fs.ok());
  EXPECT_TRUE(fs->is_live());
  EXPECT_TRUE(fs->ReadFile("/proc/self/status").ok());
  // /proc/self/exe is a magic link: never followed.
  EXPECT_FALSE(fs->ReadFile("/proc/self/exe").ok());
}

}  // namespace
}  // namespace hotpage
