#include "tools/base/kernel/proc_stat.h"

#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tools/base/kernel/fake_tree.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {
namespace {

// A stat line as the kernel prints it (52 fields; starttime is field 22;
// minflt 1234, utime 5, stime 7).
std::string StatLine(int64_t pid, absl::string_view comm, char state,
                     uint64_t start) {
  return absl::StrCat(pid, " (", comm, ") ", std::string(1, state),
                      " 1 100 100 0 -1 4194560 1234 0 0 0 5 7 0 0 20 0 1 0 ",
                      start,
                      " 12345678 300 18446744073709551615 1 1 0 0 0 0 0 0 0 "
                      "0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
}

TEST(ParseProcStatTest, PlainLine) {
  auto st = ParseProcStat(StatLine(4242, "cat", 'R', 987654321));
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->pid, 4242);
  EXPECT_EQ(st->comm, "cat");
  EXPECT_EQ(st->state, 'R');
  EXPECT_EQ(st->ppid, 1);
  EXPECT_EQ(st->start_time_ticks, 987654321u);
}

TEST(ParseProcStatTest, CommWithSpacesAndParentheses) {
  for (absl::string_view comm :
       {"a b", "(x)", ") R 1 2 3 4", "((", "))", "a) (b", "", " ",
        "x) S 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 9 77 (y"}) {
    auto st = ParseProcStat(StatLine(7, comm, 'S', 5555));
    ASSERT_TRUE(st.has_value()) << "comm '" << comm << "'";
    EXPECT_EQ(st->comm, comm);
    EXPECT_EQ(st->start_time_ticks, 5555u) << "comm '" << comm << "'";
    EXPECT_EQ(st->state, 'S');
  }
}

TEST(ParseProcStatTest, RejectsMalformed) {
  EXPECT_FALSE(ParseProcStat(""));
  EXPECT_FALSE(ParseProcStat("12 (cat"));
  EXPECT_FALSE(ParseProcStat("cat) R 1"));
  EXPECT_FALSE(ParseProcStat("x (cat) R 1 2 3"));
  EXPECT_FALSE(ParseProcStat("-3 (cat) R 1 2 3"));
  EXPECT_FALSE(ParseProcStat("12 (cat) R 1 2 3 4 5 6 7 8 9"));  // too short
  EXPECT_FALSE(ParseProcStat("12 (cat)R 1"));
  std::string bad_start = StatLine(1, "a", 'S', 1);
  bad_start.replace(bad_start.find(" 1 12345678"), 2, " x");
  EXPECT_FALSE(ParseProcStat(bad_start));
  EXPECT_FALSE(ParseProcStat(StatLine(1, "a", 'S', 1).substr(0, 40)));
  // State must be one character.
  std::string two_state = StatLine(1, "a", 'S', 1);
  two_state.replace(two_state.find(") S"), 3, ") SS");
  EXPECT_FALSE(ParseProcStat(two_state));
  // A start time that overflows uint64.
  std::string big =
      absl::StrCat("1 (a) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 ",
                   "99999999999999999999999 1\n");
  EXPECT_FALSE(ParseProcStat(big));
}

TEST(ParseProcStatTest, ToleratesTabsAndMissingNewline) {
  std::string line = StatLine(9, "t", 'S', 42);
  line.pop_back();
  for (char& c : line) {
    if (c == ' ' && &c > &line[line.find(')')]) c = '\t';
  }
  line[line.find(")") + 1] = ' ';
  auto st = ParseProcStat(line);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->start_time_ticks, 42u);
}

// The fields the hint-fault watchdog reads (10, 14, 15), also behind a
// comm that looks like fields.
TEST(ParseProcStatTest, FaultAndCpuCounters) {
  auto st = ParseProcStat(StatLine(4242, "cat", 'R', 987654321));
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->minflt, 1234u);
  EXPECT_EQ(st->utime_ticks, 5u);
  EXPECT_EQ(st->stime_ticks, 7u);
  auto weird = ParseProcStat(
      "4321 (a (weird) name) R 1 1 1 0 -1 4194304 67746 0 0 0 2301 3 0 0 20 "
      "0 1 0 777 0 0\n");
  ASSERT_TRUE(weird.has_value());
  EXPECT_EQ(weird->comm, "a (weird) name");
  EXPECT_EQ(weird->minflt, 67746u);
  EXPECT_EQ(weird->utime_ticks, 2301u);
  EXPECT_EQ(weird->stime_ticks, 3u);
  EXPECT_EQ(weird->start_time_ticks, 777u);
  // A counter that is not a decimal number makes the line malformed.
  const std::string good = StatLine(1, "a", 'S', 1);
  const std::pair<std::string, std::string> kBad[] = {
      {" 1234 ", " 12x4 "}, {" 5 7 ", " x 7 "}, {" 5 7 ", " 5 -7 "}};
  for (const auto& [from, to] : kBad) {
    std::string bad = good;
    bad.replace(bad.find(from), from.size(), to);
    EXPECT_FALSE(ParseProcStat(bad)) << bad;
  }
}

// The kernel's own line for this process.
TEST(ParseProcStatTest, ThisProcess) {
  std::ifstream in("/proc/self/stat");
  const std::string text((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
  auto st = ParseProcStat(text);
  ASSERT_TRUE(st.has_value()) << text;
  EXPECT_EQ(st->pid, getpid());
  EXPECT_EQ(st->ppid, getppid());
  EXPECT_GT(st->start_time_ticks, 0u);
  auto fs = KernelFs::Open("/");
  ASSERT_TRUE(fs.ok());
  EXPECT_EQ(SelfStartTimeTicks(*fs), st->start_time_ticks);
}

TEST(SelfStartTimeTicksTest, FieldTwentyTwoOrZero) {
  FakeTree tree;
  auto fs = KernelFs::Open(tree.root());
  ASSERT_TRUE(fs.ok());
  EXPECT_EQ(SelfStartTimeTicks(*fs), 0u);  // no /proc/self/stat
  tree.Write("/proc/self/stat",
             "99 (hot page) R 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 4242 0 "
             "0\n");
  EXPECT_EQ(SelfStartTimeTicks(*fs), 4242u);
  tree.Write("/proc/self/stat", "99 (hot page) R 1 1");
  EXPECT_EQ(SelfStartTimeTicks(*fs), 0u);
}

TEST(ParseStatmResidentTest, SecondField) {
  EXPECT_EQ(ParseStatmResident("12345 678 90 1 0 400 0\n"), 678u);
  EXPECT_EQ(ParseStatmResident("1 2"), 2u);
  EXPECT_EQ(ParseStatmResident(""), std::nullopt);
  EXPECT_EQ(ParseStatmResident("12345"), std::nullopt);
  EXPECT_EQ(ParseStatmResident("1 -2 3"), std::nullopt);
  EXPECT_EQ(ParseStatmResident("1 x 3"), std::nullopt);
  EXPECT_EQ(ParseStatmResident("1 99999999999999999999999 3"), std::nullopt);
}

TEST(ParseStatmResidentTest, ResidentPagesIn4KiB) {
  FakeTree tree;
  auto fs = KernelFs::Open(tree.root());
  ASSERT_TRUE(fs.ok());
  EXPECT_EQ(ResidentPages4K(*fs, 77), 0u);  // no such process
  tree.Write("/proc/77/statm", "5000 1200 300 10 0 900 0\n");
  EXPECT_EQ(ResidentPages4K(*fs, 77),
            1200u * static_cast<uint64_t>(getpagesize()) / 4096);
  tree.Write("/proc/77/statm", "5000\n");
  EXPECT_EQ(ResidentPages4K(*fs, 77), 0u);
}

}  // namespace
}  // namespace hotpage
