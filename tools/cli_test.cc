#include "tools/cli.h"

#include "gtest/gtest.h"

namespace hotpage {
namespace {

const std::vector<FlagSpec> kSpecs = {
    {"json", "", "json"},
    {"sysfs-root", "DIR", "root"},
};

TEST(ParseFlags, ValuesBooleansAndPositionals) {
  auto f = ParseFlags({"--json", "--sysfs-root", "/x", "pos", "--", "--json"}, kSpecs);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(f->Has("json"));
  EXPECT_EQ(f->Get("sysfs-root"), "/x");
  EXPECT_EQ(f->positional(), (std::vector<std::string>{"pos", "--json"}));
}

TEST(ParseFlags, EqualsForm) {
  auto f = ParseFlags({"--sysfs-root=/y"}, kSpecs);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->Get("sysfs-root"), "/y");
  EXPECT_FALSE(f->Has("json"));
}

TEST(ParseFlags, ErrorsNameTheFlag) {
  auto unknown = ParseFlags({"--jsn"}, kSpecs);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("--jsn"), std::string::npos);
  auto missing = ParseFlags({"--sysfs-root"}, kSpecs);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("needs a value (DIR)"), std::string::npos);
  auto boolval = ParseFlags({"--json=yes"}, kSpecs);
  ASSERT_FALSE(boolval.ok());
  EXPECT_NE(boolval.status().message().find("takes no value"), std::string::npos);
  auto twice = ParseFlags({"--json", "--json"}, kSpecs);
  EXPECT_FALSE(twice.ok());
  auto dash = ParseFlags({"-x"}, kSpecs);
  EXPECT_FALSE(dash.ok());
}

TEST(ParseFlags, HelpIsAlwaysKnown) {
  auto f = ParseFlags({"-h"}, kSpecs);
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->Has("help"));
}

TEST(FormatUsage, ListsEveryFlag) {
  std::string u = FormatUsage("topology", "[--json]", "Shows.", kSpecs);
  EXPECT_NE(u.find("Usage: hotpage topology [--json]"), std::string::npos);
  EXPECT_NE(u.find("--sysfs-root DIR"), std::string::npos);
  EXPECT_NE(u.find("--help"), std::string::npos);
}

}  // namespace
}  // namespace hotpage
