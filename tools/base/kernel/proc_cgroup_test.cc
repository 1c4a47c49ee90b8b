#include "tools/base/kernel/proc_cgroup.h"

#include "gtest/gtest.h"

namespace hotpage {
namespace {

TEST(CgroupV2Path, TheUnifiedLineWithoutItsSlash) {
  EXPECT_EQ(CgroupV2Path("0::/system.slice/memcached.service\n"),
            "system.slice/memcached.service");
  // Hybrid hierarchy: v1 lines first, the "0::" line anywhere.
  EXPECT_EQ(CgroupV2Path("12:memory:/a\n1:name=systemd:/b\n0::/c/d\n"), "c/d");
  EXPECT_EQ(CgroupV2Path("0::/\n"), "");
}

TEST(CgroupV2Path, NoUnifiedLine) {
  EXPECT_EQ(CgroupV2Path(""), std::nullopt);
  EXPECT_EQ(CgroupV2Path("12:memory:/a\n"), std::nullopt);
  // "10::/x" is not hierarchy 0.
  EXPECT_EQ(CgroupV2Path("10::/x\n"), std::nullopt);
}

}  // namespace
}  // namespace hotpage
