// `hotpage attach` (tools/cmd_attach.cc AttachMain) sets its own memory
// policy (tools/self_memory.h) once, on the main thread, before it starts
// any thread: set_mempolicy(2) is per thread and inherited only by threads
// created after it, so a thread started before (the signal thread, the
// metrics server, the migrator) would keep allocating on the fast tier.
// AttachMain runs in-process on a machine profile with the two tiers of
// tests/testdata/sysfs/dram-cxl; the policy goes to FakeSelfMempolicy,
// whose thread count is this process's threads that attach started.

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/pmu/profile_harness.h"
#include "tools/self_memory.h"

namespace hotpage {
namespace {

TEST(AttachSelfMemoryTest, TheSlowTierIsPreferredBeforeAnyThreadStarts) {
  ProfileRun m("skylake_sp");
  m.SetPrivileged(true);
  FakeSelfMempolicy& kernel = m.self_mempolicy();
  const RecordResult r = m.Attach({}, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(kernel.calls.size(), 1u) << r.err;
  EXPECT_EQ(kernel.calls[0].mode, kMpolPreferred);
  EXPECT_EQ(kernel.calls[0].nodes, std::vector<int>{1});
  // Threads() was asked (and said 1: otherwise the run fails with
  // "before any other thread starts").
  EXPECT_EQ(kernel.threads_calls, 1);
  EXPECT_FALSE(absl::StrContains(r.err, "before any other thread")) << r.err;
  EXPECT_TRUE(absl::StrContains(
      r.err,
      "hotpage attach: hotpage's own memory: preferred on node 1 (the "
      "slowest tier)\n"))
      << r.err;
}

TEST(AttachSelfMemoryTest, LocalSetsNothing) {
  ProfileRun m("skylake_sp");
  m.SetPrivileged(true);
  const RecordResult r = m.Attach({"--self-memory", "local"}, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(m.self_mempolicy().calls.empty());
  EXPECT_TRUE(absl::StrContains(r.err,
                                "hotpage's own memory: first touch, where its "
                                "threads run (local)"))
      << r.err;
}

TEST(AttachSelfMemoryTest, ANodeIsCheckedAgainstTheMachine) {
  ProfileRun m("skylake_sp");
  m.SetPrivileged(true);
  RecordResult r = m.Attach({"--self-memory=0"}, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(m.self_mempolicy().calls.size(), 1u);
  EXPECT_EQ(m.self_mempolicy().calls[0].nodes, std::vector<int>{0});
  r = m.Attach({"--self-memory", "5"}, {});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(absl::StrContains(
      r.err,
      "hotpage attach: --self-memory: node 5 is not an online node with "
      "memory (nodes with memory: 0-1)"))
      << r.err;
  EXPECT_EQ(m.self_mempolicy().calls.size(), 1u);
}

}  // namespace
}  // namespace hotpage
