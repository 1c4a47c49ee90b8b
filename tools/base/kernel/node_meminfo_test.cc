#include "tools/base/kernel/node_meminfo.h"

#include "gtest/gtest.h"
#include "tools/base/kernel/fake_tree.h"

namespace hotpage {
namespace {

TEST(ReadNodeFreeBytesTest, MemFreeInBytesOrUnknown) {
  FakeTree tree;
  tree.Write("/sys/devices/system/node/node0/meminfo",
             "Node 0 MemTotal:       1048576 kB\n"
             "Node 0 MemFree:         524288 kB\n");
  tree.Write("/sys/devices/system/node/node1/meminfo",
             "Node 1 MemTotal:       1048576 kB\n");
  auto fs = KernelFs::Open(tree.root());
  ASSERT_TRUE(fs.ok());
  EXPECT_EQ(ReadNodeFreeBytes(*fs, 0), uint64_t{524288} * 1024);
  EXPECT_FALSE(ReadNodeFreeBytes(*fs, 1).has_value());  // no MemFree
  EXPECT_FALSE(ReadNodeFreeBytes(*fs, 2).has_value());  // no file
}

}  // namespace
}  // namespace hotpage
