// Not fighting the kernel: what else on this machine moves pages between
// tiers, and what the daemon does about it (config `kernel_tiering`).
//
// Movers detected (DetectKernelMovers, through KernelFs, at start and every
// minute):
//   - NUMA balancing, /proc/sys/kernel/numa_balancing: bit 0
//     NUMA_BALANCING_NORMAL (moves pages toward the CPU that touches them),
//     bit 1 NUMA_BALANCING_MEMORY_TIERING (promotes hint-faulted slow-tier
//     pages: the kernel's own tiering, TPP; kernel/sched/fair.c
//     should_numa_migrate_memory()). Either moves pages hotpage placed.
//   - Demotion in reclaim, /sys/kernel/mm/numa/demotion_enabled
//     (mm/vmscan.c can_demote()): kswapd moves cold fast-tier pages down
//     instead of reclaiming them. It works with hotpage rather than against
//     it (hotpage demotes cold pages too), but it acts on its own LRU view.
//   - Another DAMON user: a kdamond under /sys/kernel/mm/damon/admin whose
//     state is "on" and that is not the daemon's own (DAMOS migrate_hot /
//     migrate_cold schemes move pages; damo and memtierd drive them).
//   - numad: a process named numad (it rebinds and migrates whole
//     processes between nodes).
//
// DecideKernelTiering:
//   refuse    (the default) any mover but demotion: do not start, and say
//             which one and what to change; demotion alone is reported.
//   coexist   start anyway, with a warning per mover.
//   take-over clear the NUMA balancing bits that move pages
//             (numa_balancing -> 0) and demotion_enabled -> false, to be
//             restored at exit (the changes are returned; applying and
//             restoring them is the daemon's, with the crash-recovery state
//             the hint-fault source keeps); another DAMON user or numad
//             cannot be taken over: those refuse, naming them.
//             With `hint_faults` (a workload takes source "hintfault"):
//             the kernel senses and hotpage moves, as `attach --source
//             hintfault` sets it (sampler/hintfault/
//             numa_balancing_controller.h): numa_balancing -> 2 (the
//             tiering scanner alone: slow-tier pages take hint faults; the
//             NORMAL bit, which moves pages, is cleared as above) and
//             kernel.numa_balancing_promote_rate_limit_MBps -> 0 (the
//             kernel promotes none of them itself). Without
//             CONFIG_NUMA_BALANCING it refuses.

#ifndef HOTPAGE_TOOLS_DAEMON_KERNEL_TIERING_H_
#define HOTPAGE_TOOLS_DAEMON_KERNEL_TIERING_H_

#include <sys/types.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "tools/base/kernel/kernel_fs.h"
#include "tools/daemon/daemon_config.h"

namespace hotpage {

struct KernelMovers {
  int64_t numa_balancing = -1;  // -1: file missing (no CONFIG_NUMA_BALANCING)
  int demotion_enabled = -1;    // -1 missing, 0 false, 1 true
  // kernel.numa_balancing_promote_rate_limit_MBps; -1: file missing.
  int64_t promote_rate_limit_mbps = -1;
  std::vector<std::string> busy_kdamonds;  // "kdamonds/0", state "on"
  std::vector<pid_t> numad_pids;
};

// `own_kdamonds`: the kdamond directories the daemon itself runs
// ("kdamonds/0"), which are not another user.
KernelMovers DetectKernelMovers(const KernelFs& fs,
                                const std::set<std::string>& own_kdamonds);

struct SysctlChange {
  std::string path;  // e.g. "/proc/sys/kernel/numa_balancing"
  std::string from;
  std::string to;
};

struct TieringDecision {
  bool start = true;
  std::vector<std::string> messages;  // one line each: what and the fix
  std::vector<SysctlChange> changes;  // take-over only
};

// `hint_faults`: some workload takes source "hintfault", which only
// take-over allows (daemon_config.h); the sysctls are then set for it.
TieringDecision DecideKernelTiering(const KernelMovers& movers,
                                    KernelTieringMode mode,
                                    const std::string& config_path,
                                    bool hint_faults = false);

// The sysctls as hint-fault sensing needs them (the decision above with
// hint_faults): the tiering bit set and the NORMAL bit clear
// (numa_balancing 2), and a promotion rate limit of 0. A live member with
// source "hintfault" checks this before it starts (a workload added by a
// reload after a start without one finds them otherwise).
bool SysctlsSenseHintFaults(const KernelMovers& movers);

// numa_balancing and its promotion rate limit only (the rest of
// KernelMovers left unknown): what SysctlsSenseHintFaults reads, without
// DetectKernelMovers' walk of /proc.
KernelMovers ReadNumaBalancingSysctls(const KernelFs& fs);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_DAEMON_KERNEL_TIERING_H_
