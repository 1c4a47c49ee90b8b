// The live DaemonMember: one process managed as `hotpage attach` manages
// it (tools/cmd_attach.cc): a ProcessHandle pinned to the process the
// selection saw (same start time, else the pid was reused and the member
// is refused), its own engine, sample source, migrator and LiveMemoryView,
// run by an AttachLoop; the view is wrapped in a FairShareView
// (share_view.h) so the daemon's target holds.
//
// Sources: `auto`, `pebs`, `ibs`, `pagefault` (with `write_faults`, the
// soft-dirty re-arm of attach's --write-faults) through the machine's one
// sampler per source (LiveMemberEnv::samplers: system-wide rings routed by
// pid, machine_sampler.h; without it, a perf sampler per task of the
// member's own; ChooseEvents: PEBS, then IBS, then page faults), and
// `damon`: a target of the machine's one kdamond (LiveMemberEnv::damon,
// machine_damon.h: one context, a target and a filtered scheme per
// process, members added and removed by commit); without it, a kdamond of
// the member's own, which only one member can have (DamonSource takes the
// machine's only hotpage kdamond and its lock).
// `hintfault`: the machine's page-fault sampler, whose faults are the
// kernel's NUMA hint faults while the sysctls sense them
// (sampler/hintfault/numa_balancing_controller.h). One workload must not
// change machine-wide sysctls for the others: the daemon sets them at its
// start (kernel_tiering = "take-over" with a hintfault workload,
// kernel_tiering.h), and a member only checks them (a workload added by a
// reload to a daemon started without one is refused, saying so). Its
// engine takes attach's options for the source (ApplySourceEngineOptions).
//
// Threading: Run() on the member's thread; the setters and Snapshot() on
// the daemon's (see DaemonMember).

#ifndef HOTPAGE_TOOLS_DAEMON_LIVE_MEMBER_H_
#define HOTPAGE_TOOLS_DAEMON_LIVE_MEMBER_H_

#include <cstdint>
#include <ostream>
#include <vector>

#include "policy/placement_types.h"
#include "policy/topology.h"
#include "tools/base/kernel/kernel_fs.h"
#include "tools/daemon/daemon_loop.h"
#include "tools/daemon/machine_damon.h"
#include "tools/daemon/machine_sampler.h"
#include "tools/daemon/migrator_pool.h"
#include "tools/daemon/rounds_dir.h"

namespace hotpage {

struct LiveMemberEnv {
  const KernelFs* fs = nullptr;        // "/"
  const Topology* topology = nullptr;  // at least two tiers
  int interval_ms = 1000;
  bool dry_run = false;
  bool round_lines = false;  // each round's line (--log-level debug)
  // Workloads with `rounds`: each member appends its rounds
  // (tools/round_log.h) to NAME-PID-START.jsonl here (START: the
  // process's start time in clock ticks since boot, so a reused pid gets
  // a file of its own), created by the factory on the daemon's thread and
  // written by the member's loop alone; bounded each and in all
  // (rounds_dir.h). Null: no recording.
  RoundsDir* rounds_dir = nullptr;
  std::ostream* log = nullptr;
  // Perf sources (pebs, ibs, pagefault, auto) come from the machine's
  // sampler set (machine_sampler.h); null: a sampler per member.
  MachineSamplerSet* samplers = nullptr;
  // DAMON members share the machine's one kdamond (machine_damon.h);
  // null: a kdamond per member (only one can run).
  MachineDamon* damon = nullptr;
  // Members' migrators run on the daemon's one migrator thread, the
  // global rate limit shared by weight (migrator_pool.h); null: a
  // migrator thread per member.
  MigratorPool* migrators = nullptr;
  // The kernel's floor under each node's watermarks (tools/kernel_floor.h
  // ReadKernelFloors), applied to every member's rules; empty: the
  // fractions alone.
  std::vector<NodeFloor> kernel_floors;
};

// Everything in `env` must outlive the factory and its members.
MemberFactory LiveMemberFactory(LiveMemberEnv env);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_DAEMON_LIVE_MEMBER_H_
