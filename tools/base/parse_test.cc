#include "tools/base/parse.h"

#include "gtest/gtest.h"

namespace hotpage {
namespace {

TEST(ParseKernelList, RangesAndSingles) {
  auto v = ParseKernelList("0-3,8,10-11\n");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
}

TEST(ParseKernelList, EmptyIsEmpty) {
  auto v = ParseKernelList("\n");
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->empty());
}

TEST(ParseKernelList, OverlapsAreMerged) {
  auto v = ParseKernelList("3,0-4,2");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST(ParseKernelList, RejectsGarbageAndNamesIt) {
  for (const char* bad :
       {"a", "1-", "-1", "3-1", "1,,2", "99999999999", "0-70000", "1 2"}) {
    auto v = ParseKernelList(bad);
    EXPECT_FALSE(v.ok()) << bad;
    EXPECT_NE(v.status().message().find("bad list element"),
              absl::string_view::npos)
        << bad;
  }
}

TEST(ParseKernelList, HostileRepeatsStayBounded) {
  std::string many;
  for (int i = 0; i < 200; ++i) many += "0-65535,";
  many += "1";
  auto v = ParseKernelList(many);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->size(), 65536u);
}

TEST(FormatKernelList, Compacts) {
  EXPECT_EQ(FormatKernelList({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(FormatKernelList({}), "");
  EXPECT_EQ(FormatKernelList({5}), "5");
}

TEST(ParseInt, Strict) {
  EXPECT_EQ(ParseInt(" 42\n"), 42);
  EXPECT_EQ(ParseInt("-1"), -1);
  EXPECT_FALSE(ParseInt("").has_value());
  EXPECT_FALSE(ParseInt("4 2").has_value());
  EXPECT_FALSE(ParseInt("+4").has_value());
  EXPECT_FALSE(ParseInt("0x10").has_value());
  EXPECT_FALSE(ParseInt("99999999999999999999").has_value());
}

TEST(ParseIntRow, Distances) {
  auto row = ParseIntRow("10 20 30\n");
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(*row, (std::vector<int64_t>{10, 20, 30}));
  EXPECT_FALSE(ParseIntRow("10 x 30").has_value());
  EXPECT_FALSE(ParseIntRow("1 2 3", 2).has_value());
}

TEST(ParseBracketChoice, Selection) {
  EXPECT_EQ(ParseBracketChoice("always [madvise] never\n"), "madvise");
  EXPECT_FALSE(ParseBracketChoice("always madvise never").has_value());
  EXPECT_FALSE(ParseBracketChoice("[]").has_value());
  EXPECT_FALSE(ParseBracketChoice("[a b]").has_value());
}

TEST(ParseNodeMeminfo, ReadsKbAsBytes) {
  const char* text =
      "Node 1 MemTotal:        1048576 kB\n"
      "Node 1 MemFree:          524288 kB\n"
      "Node 1 HugePages_Total:     0\n";
  EXPECT_EQ(ParseNodeMeminfo(text, "MemTotal"), 1048576ull * 1024);
  EXPECT_EQ(ParseNodeMeminfo(text, "MemFree"), 524288ull * 1024);
  EXPECT_EQ(ParseNodeMeminfo(text, "HugePages_Total"), 0u);
  EXPECT_FALSE(ParseNodeMeminfo(text, "MemUsed").has_value());
  EXPECT_FALSE(
      ParseNodeMeminfo("Node 1 MemTotal: lots kB", "MemTotal").has_value());
  EXPECT_FALSE(
      ParseNodeMeminfo("Node 1 MemTotal: 5 MB", "MemTotal").has_value());
  // "MemTotalX:" is not "MemTotal:".
  EXPECT_FALSE(
      ParseNodeMeminfo("Node 1 MemTotalX: 5 kB", "MemTotal").has_value());
}

}  // namespace
}  // namespace hotpage
