// dist/hotpage.service keeps hotpage's crash-recovery state: its
// RuntimeDirectory must be the directory StateDir uses by default
// (kDefaultStateDir, tools/base/state_dir.h), under /run, preserved across a
// stop and private to root, or a SIGKILLed daemon's sysctls and kdamond
// would not be undone by the next start.

#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tools/base/state_dir.h"

namespace hotpage {
namespace {

std::string ReadUnit() {
  std::ifstream in(absl::StrCat(getenv("TEST_SRCDIR"), "/",
                                getenv("TEST_WORKSPACE"),
                                "/dist/hotpage.service"));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The value of `key=` on its own line, "" when absent.
std::string Value(const std::string& unit, const std::string& key) {
  std::istringstream lines(unit);
  std::string line;
  while (std::getline(lines, line)) {
    if (absl::StartsWith(line, key + "=")) return line.substr(key.size() + 1);
  }
  return "";
}

TEST(UnitStateDir, RuntimeDirectoryIsTheDefaultStateDir) {
  const std::string unit = ReadUnit();
  ASSERT_FALSE(unit.empty()) << "dist/hotpage.service not found";
  // RuntimeDirectory= is relative to /run (systemd.exec(5)).
  EXPECT_EQ(absl::StrCat("/run/", Value(unit, "RuntimeDirectory")),
            kDefaultStateDir);
  EXPECT_EQ(Value(unit, "RuntimeDirectoryPreserve"), "yes");
  EXPECT_EQ(Value(unit, "RuntimeDirectoryMode"), "0700");
}

}  // namespace
}  // namespace hotpage
