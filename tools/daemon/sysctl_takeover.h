// kernel_tiering = "take-over": the daemon turns the kernel's own movers
// off for as long as it runs and turns them back on when it stops, even
// after a SIGKILL. The same pattern as the hint-fault source
// (sampler/hintfault/numa_balancing_controller.h), over StateDir
// (tools/base/state_dir.h):
//   1. lock STATE_DIR/daemon-sysctls.lock (held while the daemon runs; the
//      kernel drops it when the process dies);
//   2. if STATE_DIR/daemon-sysctls exists (a daemon died without
//      restoring), restore what it says first;
//   3. write the original values to STATE_DIR/daemon-sysctls atomically;
//   4. only then write the new values.
// Restore() writes the originals back and removes the file. Only the three
// known paths are ever written, with values of the form the kernel prints
// (a decimal, or true/false): a state file with anything else is refused,
// not obeyed, because root would act on it.

#ifndef HOTPAGE_TOOLS_DAEMON_SYSCTL_TAKEOVER_H_
#define HOTPAGE_TOOLS_DAEMON_SYSCTL_TAKEOVER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/base/kernel/kernel_fs.h"
#include "tools/base/kernel/sysfs_writer.h"
#include "tools/base/state_dir.h"
#include "tools/daemon/kernel_tiering.h"

namespace hotpage {

class SysctlTakeover {
 public:
  // `dir` and `writer` must outlive the takeover. `recovered` receives a
  // line when step 2 restored a dead daemon's values. FailedPrecondition
  // when another daemon holds the lock.
  static absl::StatusOr<std::unique_ptr<SysctlTakeover>> Apply(
      StateDir* dir, SysfsWriter* writer,
      const std::vector<SysctlChange>& changes, std::string* recovered);
  ~SysctlTakeover();  // Restore(), errors ignored
  SysctlTakeover(const SysctlTakeover&) = delete;
  SysctlTakeover& operator=(const SysctlTakeover&) = delete;

  // Writes the originals back (idempotent) and removes the state file.
  absl::Status Restore();
  // "kernel.numa_balancing 2 -> 0, demotion_enabled true -> false".
  std::string Describe() const;
  // The changed sysctls someone else has set to another value since
  // (read through `fs`), one "kernel.numa_balancing is 0 (hotpage set 2)"
  // each; empty when every one is as set or could not be read. The daemon
  // warns at each change of this list and does not fight it (Restore()
  // still writes the originals).
  std::vector<std::string> Drifted(const KernelFs& fs) const;

 private:
  SysctlTakeover(StateDir* dir, SysfsWriter* writer,
                 std::vector<SysctlChange> changes)
      : dir_(dir), writer_(writer), changes_(std::move(changes)) {}
  StateDir* dir_;
  SysfsWriter* writer_;
  std::vector<SysctlChange> changes_;
  bool restored_ = false;
};

// The state file's strict parser: "path=value" lines of the three known
// paths. Exposed for the fuzzer and tests.
absl::StatusOr<std::vector<SysctlChange>> ParseTakeoverState(
    absl::string_view text);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_DAEMON_SYSCTL_TAKEOVER_H_
