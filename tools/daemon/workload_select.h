// Which processes each configured workload manages, and how that changes
// between rounds.
//
// SelectProcesses() reads /proc through KernelFs (so tests run on FakeTree
// trees) and returns, for each workload of the config in order, the
// processes it selects now:
//   cgroup   every process whose cgroup v2 path (the "0::" line of
//            /proc/PID/cgroup) is the configured path or below it; so a
//            process that starts in the cgroup later is picked up at the
//            next selection. The path is compared as text: nothing under
//            /sys/fs/cgroup is opened, so no path a delegated (unprivileged)
//            cgroup owner controls is ever followed.
//   comm     /proc/PID/comm equal to the configured name;
//   cmdline  the extended regex matches /proc/PID/cmdline with its NULs as
//            spaces (at most the first 4 KiB);
//   pid      that pid, if it exists;
//   all      every user process whose resident set (/proc/PID/statm) is at
//            least the config's min_rss.
// Never selected: kernel threads (empty cmdline), zombies, and the daemon
// itself. A process selected by several workloads belongs to the first in
// the file (one owner, so two workloads never move the same page).
//
// Every selected process carries its start time (field 22 of
// /proc/PID/stat), so that a pid reused by another process between two
// selections is seen as one process leaving and another arriving, never
// as the same workload member (Reconcile). What acts on a process later
// still checks ProcessHandle::StillSame before every move_pages batch.
//
// A process that exits while it is read is skipped, never an error.

#ifndef HOTPAGE_TOOLS_DAEMON_WORKLOAD_SELECT_H_
#define HOTPAGE_TOOLS_DAEMON_WORKLOAD_SELECT_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/base/kernel/kernel_fs.h"
#include "tools/daemon/daemon_config.h"

namespace hotpage {

struct ProcessKey {
  pid_t pid = 0;
  uint64_t start_time_ticks = 0;
  bool operator==(const ProcessKey& o) const {
    return pid == o.pid && start_time_ticks == o.start_time_ticks;
  }
  bool operator<(const ProcessKey& o) const {
    return pid != o.pid ? pid < o.pid : start_time_ticks < o.start_time_ticks;
  }
};

struct SelectedProcess {
  ProcessKey key;
  std::string comm;
  std::string cgroup;  // the v2 path without its leading '/'
  uint64_t rss_bytes = 0;
};

// One entry per config workload, in config order; each list ascending by
// pid. `self` is the daemon's own pid (never selected).
absl::StatusOr<std::vector<std::vector<SelectedProcess>>> SelectProcesses(
    const KernelFs& fs, const DaemonConfig& config, pid_t self);

// What changed between two selections of one workload (both ascending).
// A pid whose start time differs is in both `left` and `arrived`.
struct SelectionChange {
  std::vector<ProcessKey> arrived;
  std::vector<ProcessKey> left;
};
SelectionChange Reconcile(const std::vector<SelectedProcess>& before,
                          const std::vector<SelectedProcess>& now);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_DAEMON_WORKLOAD_SELECT_H_
