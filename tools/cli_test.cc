#include "tools/cli.h"

#include "gtest/gtest.h"

namespace hotpage {
namespace {

const std::vector<FlagSpec> kSpecs = {
    {"json", "", "json"},
    {"sysfs-root", "DIR", "root"},
};

TEST(ParseFlags, ValuesBooleansAndPositionals) {
  auto f = ParseFlags({"--json", "--sysfs-root", "/x", "pos", "--", "--json"},
                      kSpecs);
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
  EXPECT_NE(missing.status().message().find("needs a value (DIR)"),
            std::string::npos);
  auto boolval = ParseFlags({"--json=yes"}, kSpecs);
  ASSERT_FALSE(boolval.ok());
  EXPECT_NE(boolval.status().message().find("takes no value"),
            std::string::npos);
  auto twice = ParseFlags({"--json", "--json"}, kSpecs);
  EXPECT_FALSE(twice.ok());
  auto dash = ParseFlags({"-x"}, kSpecs);
  EXPECT_FALSE(dash.ok());
}

TEST(ParseFlags, RepeatableShortAndNumbers) {
  const std::vector<FlagSpec> specs = {
      {"pid", "PID", "target", /*repeatable=*/true},
      {"output", "FILE", "out", false, 'o'},
      {"period", "N", "p"},
      {"budget", "PCT", "b"},
  };
  auto f = ParseFlags({"--pid", "1", "--pid=2", "-o", "x.hpt", "--period", "12",
                       "--budget", "2.5"},
                      specs);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->GetAll("pid"), (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(f->Get("output"), "x.hpt");
  EXPECT_EQ(*FlagInt(*f, "period", 0, 1, 100), 12);
  EXPECT_EQ(*FlagInt(*f, "missing", 7, 1, 100), 7);
  EXPECT_DOUBLE_EQ(*FlagDouble(*f, "budget", 0, 0, 100), 2.5);
  auto range = FlagInt(*f, "period", 0, 20, 100);
  ASSERT_FALSE(range.ok());
  EXPECT_NE(range.status().message().find("from 20 to 100, got '12'"),
            std::string::npos);
  EXPECT_FALSE(ParseFlags({"-x"}, specs).ok());
  EXPECT_NE(FormatUsage("record", "", "", specs).find("-o, --output FILE"),
            std::string::npos);
  EXPECT_NE(FormatUsage("record", "", "", specs).find("--pid PID ..."),
            std::string::npos);
}

TEST(ParseFlags, HelpIsAlwaysKnown) {
  auto f = ParseFlags({"-h"}, kSpecs);
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->Has("help"));
}

TEST(AsksForVersion, AnywhereBeforeDoubleDash) {
  EXPECT_TRUE(AsksForVersion({"--version"}));
  EXPECT_TRUE(AsksForVersion({"--pid", "1", "--version"}));
  EXPECT_FALSE(AsksForVersion({"--pid", "1"}));
  EXPECT_FALSE(AsksForVersion({"--", "cmd", "--version"}));
  EXPECT_FALSE(AsksForVersion({"--versions"}));
  EXPECT_FALSE(AsksForVersion({}));
}

TEST(FormatUsage, ListsEveryFlag) {
  std::string u = FormatUsage("topology", "[--json]", "Shows.", kSpecs);
  EXPECT_NE(u.find("Usage: hotpage topology [--json]"), std::string::npos);
  EXPECT_NE(u.find("--sysfs-root DIR"), std::string::npos);
  EXPECT_NE(u.find("--help"), std::string::npos);
}

}  // namespace
}  // namespace hotpage
