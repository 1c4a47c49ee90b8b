#include "tools/base/kernel/sysfs_writer.h"

#include <cerrno>
#include <string>

#include "gtest/gtest.h"
#include "tools/base/kernel/fake_sysfs_writer.h"
#include "tools/base/kernel/fake_tree.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {
namespace {

TEST(LiveSysfsWriter, WritesWholeValueUnderTheRoot) {
  FakeTree tree;
  tree.Write("/sys/kernel/x/attr", "1000\n");
  auto w = LiveSysfsWriter::Open(tree.root());
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_FALSE((*w)->is_live());
  ASSERT_TRUE((*w)->Write("/sys/kernel/x/attr", "10").ok());
  auto fs = KernelFs::Open(tree.root());
  // Truncated, then written in one piece: not "1000" overwritten to "1000".
  EXPECT_EQ(*fs->ReadFile("/sys/kernel/x/attr"), "10");
}

TEST(LiveSysfsWriter, MissingAttributeIsNotCreatedAndErrorNamesValueAndFile) {
  FakeTree tree;
  tree.Mkdir("/sys/kernel/x");
  auto w = LiveSysfsWriter::Open(tree.root());
  ASSERT_TRUE(w.ok());
  EXPECT_EQ((*w)->WriteErrno("/sys/kernel/x/nope", "on"), ENOENT);
  absl::Status s = (*w)->Write("/sys/kernel/x/nope", "on");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(
      s.message().find("write \"on\" to " + tree.root() + "/sys/kernel/x/nope"),
      std::string::npos)
      << s;
  EXPECT_NE(s.message().find("ENOENT"), std::string::npos) << s;
  auto fs = KernelFs::Open(tree.root());
  EXPECT_FALSE(fs->Exists("/sys/kernel/x/nope"));
}

TEST(LiveSysfsWriter, RefusesSymlinksAndStaysInsideTheRoot) {
  FakeTree tree;
  tree.Write("/etc/target", "old");
  tree.Symlink("/etc/target", "/sys/link");
  auto w = LiveSysfsWriter::Open(tree.root());
  ASSERT_TRUE(w.ok());
  // O_NOFOLLOW: the last component may not be a symlink.
  EXPECT_EQ((*w)->WriteErrno("/sys/link", "new"), ELOOP);
  // ".." cannot climb out of the root: this resolves to <root>/etc/target.
  EXPECT_EQ((*w)->WriteErrno("/../../../../etc/target", "in"), 0);
  auto fs = KernelFs::Open(tree.root());
  EXPECT_EQ(*fs->ReadFile("/etc/target"), "in");
  EXPECT_EQ((*w)->WriteErrno("/", "x"), EISDIR);
}

TEST(LiveSysfsWriter, NonPrintableValueIsQuotedSafely) {
  absl::Status s =
      WriteErrorStatus(EINVAL, std::string("a\nb\0c", 5), "/sys/f");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("write \"a?b?c\" to /sys/f: EINVAL"),
            std::string::npos)
      << s;
}

TEST(LiveSysfsWriter, RootMustExist) {
  EXPECT_FALSE(LiveSysfsWriter::Open("/nonexistent/hotpage").ok());
  EXPECT_FALSE(LiveSysfsWriter::Open("").ok());
}

TEST(FakeSysfsLog, RecordsInOrderStoresAndInjects) {
  FakeTree tree;
  tree.Write("/sys/a", "0\n");
  tree.Write("/sys/state", "off\n");
  FakeSysfsLog log(&tree);
  log.set_hook([&](absl::string_view path, absl::string_view value) -> int {
    if (value == "bad") return EINVAL;
    if (path == "/sys/state" && value == "cmd") return FakeSysfsLog::kHandled;
    return 0;
  });
  auto w = log.NewWriter();
  EXPECT_TRUE(w->Write("/sys/a", "1").ok());
  EXPECT_EQ(w->WriteErrno("/sys/a", "bad"), EINVAL);
  EXPECT_TRUE(w->Write("/sys/state", "cmd").ok());
  EXPECT_EQ(w->WriteErrno("/sys/missing", "1"), ENOENT);
  EXPECT_EQ(log.Lines(), (std::vector<std::string>{
                             "/sys/a=1", "/sys/a=bad !EINVAL", "/sys/state=cmd",
                             "/sys/missing=1 !ENOENT"}));
  auto fs = KernelFs::Open(tree.root());
  EXPECT_EQ(*fs->ReadFile("/sys/a"), "1");
  EXPECT_EQ(*fs->ReadTrimmed("/sys/state"), "off");  // handled: not stored
  EXPECT_EQ(w->Display("/sys/a"), tree.root() + "/sys/a");
}

}  // namespace
}  // namespace hotpage
