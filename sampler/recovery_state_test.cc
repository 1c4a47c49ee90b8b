// Tests of the one crash-recovery state-file format (recovery_state.h):
// the generic strictness rules and both kinds' records. (The DAMON record's
// own cases are in damon/damon_source_test.cc, next to the source that
// acts on it.)

#include "sampler/recovery_state.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace hotpage {
namespace {

constexpr char kNb[] = "/proc/sys/kernel/numa_balancing";
constexpr char kRl[] =
    "/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps";

TEST(HintFaultParse, StateRoundTrips) {
  HintFaultState st;
  st.pid = 1234;
  st.start_time_ticks = 5678;
  st.changes = {{kNb, "1", "3"}, {kRl, "65536", "0"}};
  const std::string text = FormatHintFaultState(st);
  EXPECT_EQ(text,
            "hotpage-hintfault-state 1\npid 1234\nstart_time 5678\n"
            "sysctl /proc/sys/kernel/numa_balancing 1 3\n"
            "sysctl /proc/sys/kernel/numa_balancing_promote_rate_limit_MBps "
            "65536 0\n");
  absl::StatusOr<HintFaultState> back = ParseHintFaultState(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->pid, 1234);
  EXPECT_EQ(back->start_time_ticks, 5678u);
  ASSERT_EQ(back->changes.size(), 2u);
  EXPECT_EQ(back->changes[1].original, "65536");
}

TEST(HintFaultParse, StateIsStrictAboutWhatItWouldRestore) {
  const std::string head = "hotpage-hintfault-state 1\npid 7\n";
  // Only the two known sysctls, decimal values, each once: a corrupt or
  // planted file must never make hotpage write elsewhere.
  for (const std::string& bad : {
           std::string("pid 7\n"),
           std::string("hotpage-hintfault-state 2\npid 7\n"),
           std::string("hotpage-hintfault-state 1\n"),
           head + "sysctl /proc/sys/vm/drop_caches 0 3\n",
           head + "sysctl /etc/passwd 0 2\n",
           head + "sysctl /proc/sys/kernel/numa_balancing 0; 2\n",
           head + "sysctl /proc/sys/kernel/numa_balancing -1 2\n",
           head + "sysctl /proc/sys/kernel/numa_balancing 12345678901 2\n",
           head + "sysctl /proc/sys/kernel/numa_balancing 0 2\nsysctl "
                  "/proc/sys/kernel/numa_balancing 0 2\n",
           head + "pid 8\n",
           std::string("hotpage-hintfault-state 1\npid 0\n"),
           head + "bogus\n",
           head + std::string(5000, '\n'),
       }) {
    EXPECT_FALSE(ParseHintFaultState(bad).ok()) << bad;
  }
  EXPECT_TRUE(ParseHintFaultState(head).ok());
}

// The generic parser over a kind with a repeated key: counts, order and
// what a missing line is called.
std::string CheckNothing(absl::string_view) { return ""; }

TEST(RecoveryState, OneFormatForEveryKind) {
  const RecoveryStateKind kind{
      "test", true, {{"a", 1, 1, nullptr}, {"b", 0, 3, &CheckNothing}}};
  RecoveryState st;
  st.pid = 12;
  st.start_time_ticks = 34;
  st.fields = {{"b", "x y"}, {"a", "1"}, {"b", "z"}};
  const std::string text = FormatRecoveryState(kind, st);
  // The kind's key order, repeated keys in their own order.
  EXPECT_EQ(text,
            "hotpage-test-state 1\npid 12\nstart_time 34\na 1\nb x y\nb z\n");
  absl::StatusOr<RecoveryState> back = ParseRecoveryState(kind, text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->pid, 12);
  EXPECT_EQ(back->start_time_ticks, 34u);
  ASSERT_EQ(back->fields.size(), 3u);
  EXPECT_EQ(back->fields[1].second, "x y");

  const std::string h = "hotpage-test-state 1\npid 1\nstart_time 1\n";
  struct Case {
    std::string text;
    std::string why;
  };
  for (const Case& c : std::vector<Case>{
           {h + "b 1\n", "no a line"},
           {"hotpage-test-state 1\n", "no pid, start_time, a line"},
           {h + "a 1\na 2\n", "a listed twice"},
           {h + "a 1\nb 1\nb 2\nb 3\nb 4\n", "too many lines"},
           {h + "start_time 2\na 1\n", "start_time listed twice"},
           {h + "c 1\n", "unknown line"},
           {h + "a 1", "no final newline"},
           {"hotpage-damon-state 1\npid 1\nstart_time 1\na 1\n",
            "expected \"hotpage-test-state 1\""},
       }) {
    absl::StatusOr<RecoveryState> r = ParseRecoveryState(kind, c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_TRUE(absl::IsInvalidArgument(r.status()));
    EXPECT_TRUE(absl::StrContains(r.status().message(), c.why))
        << c.text << " -> " << r.status();
  }
}

// Files written by the per-source writers before the formats were merged
// (the seeds in testdata/recovery_state_corpus are such files) still parse.
TEST(RecoveryState, FilesOfTheEarlierWritersStillParse) {
  absl::StatusOr<DamonState> d = ParseDamonState(
      "hotpage-damon-state 1\npid 1234\nstart_time 5678\nkdamond 0\ntarget_pid "
      "4321\noperations vaddr\n");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->target_pid, 4321);
  absl::StatusOr<HintFaultState> h = ParseHintFaultState(
      "hotpage-hintfault-state 1\npid 1234\nstart_time 5678\n"
      "sysctl /proc/sys/kernel/numa_balancing 0 2\n"
      "sysctl /proc/sys/kernel/numa_balancing_promote_rate_limit_MBps 65536 "
      "0\n");
  ASSERT_TRUE(h.ok()) << h.status();
  ASSERT_EQ(h->changes.size(), 2u);
  EXPECT_EQ(h->changes[1].path, kRl);
  // One kind's file is not the other's.
  EXPECT_FALSE(ParseHintFaultState(FormatDamonState(*d)).ok());
  EXPECT_FALSE(ParseDamonState(FormatHintFaultState(*h)).ok());
}

}  // namespace
}  // namespace hotpage
