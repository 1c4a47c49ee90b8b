// `hotpage attach --source hintfault` (tools/cmd_attach.cc StartSource):
// the page-fault sampler is open and enabled before the sysctls that turn
// the kernel's scanner on are written. For a task that has run longer than
// the scan delay the kernel's first tick in tiering mode starts a scan
// pass, whose hint faults come within milliseconds (in the 6.12 guest of
// tests/compare, with attach started 2 s after the workload: the first
// pass's 6,144 faults came before the sampler was on, and the pages were
// seen a scan period later). AttachMain runs in-process over the fake perf
// kernel, with the take-over replaced by a hook that records what the
// sampler's events were when it was called and then fails the run.

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "sampler/hintfault/numa_balancing_controller.h"
#include "tests/pmu/profile_harness.h"

namespace hotpage {
namespace {

TEST(AttachHintFaultOrderTest, TheSamplerIsEnabledBeforeTheSysctlsAreWritten) {
  ProfileRun m("skylake_sp");
  m.SetPrivileged(true);
  int calls = 0;
  size_t open_fds = 0;
  bool enabled = false;
  m.set_start_hintfault(
      [&](const NumaBalancingOptions& opt)
          -> absl::StatusOr<std::unique_ptr<NumaBalancingController>> {
        ++calls;
        EXPECT_EQ(opt.pid, m.target());
        open_fds = m.kernel().open_fds();
        enabled = m.kernel().all_enabled();
        return absl::UnavailableError("no sysctls in this test");
      });
  const RecordResult r =
      m.Attach({"--source", "hintfault", "--allow-sysctl-changes"}, {});
  ASSERT_EQ(calls, 1) << r.err;
  EXPECT_GT(open_fds, 0u) << "the sampler was not open";
  EXPECT_TRUE(enabled) << "the sampler was not enabled";
  // The take-over's failure ends the run, and says so.
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(r.err, "no sysctls in this test")) << r.err;
}

}  // namespace
}  // namespace hotpage
