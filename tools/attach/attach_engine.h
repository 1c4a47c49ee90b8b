// The engine `hotpage attach` runs for one process (policy/engine.h), and
// how its hotness table follows the process.
//
// The table is sized by the process's resident set (/proc/PID/statm), not
// by the whole fast tier, and grows with it at round boundaries, as the
// daemon's members' tables do (EngineOptions::table_by_footprint,
// PolicyEngine::GrowTable). Sized by the fast tier, a 50k-page process in
// the guest had a 524k-slot table whose scans cost 0.1-0.35 s a round
// under emulation, before its first decision.

#ifndef HOTPAGE_TOOLS_ATTACH_ATTACH_ENGINE_H_
#define HOTPAGE_TOOLS_ATTACH_ATTACH_ENGINE_H_

#include <cstdint>
#include <optional>
#include <ostream>

#include "absl/strings/string_view.h"
#include "policy/engine.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {

// Whether `source_name` samples every access to every tier (pebs, ibs,
// damon; or the sampler's own name of its first event, SampleSourceName:
// pebs-load, ibs-op, as a daemon member's "auto" resolves), so that a page it
// never sampled is cold (EngineOptions::sweep_untracked_fast). Write faults see
// no reads, hint faults no fast-tier page.
bool SourceSeesEveryAccess(absl::string_view source_name);

// What `source_name`'s samples call for in `o`, and nothing else: a
// hint-fault sample weighted 8 and placed as it arrives
// (EngineOptions::slow_tier_samples), the sweep of pages never sampled on
// the fast tier only for sources that see every access. attach's options
// (below) and the simulator's hotpage policy with a fault source
// (tools/simulate/sim_fault_source.h) both take them from here. The
// sweep of pages never sampled on the fast tier runs for the sources that
// see every access and for hint faults (policy/engine.h says why).
// `kernel_demotes`: the kernel demotes on reclaim (demotion_enabled); with
// hint faults its LRU then picks what leaves the fast tier instead of the
// sweep (EngineOptions::reclaim_makes_room).
void ApplySourceEngineOptions(absl::string_view source_name,
                              bool kernel_demotes, EngineOptions* o);

// Whether /sys/kernel/mm/numa/demotion_enabled reads true through `fs`
// (false when absent, unreadable or malformed: ParseDemotionEnabled).
bool KernelDemotes(const KernelFs& fs);

// Where the engine runs with a slow-tier source (hint faults), sets its
// reclaim_makes_room to `kernel_demotes` (demotion_enabled as the hint-fault
// watchdog last read it; nullopt: not read, no change) and returns whether
// that changed it. attach calls it before each round, so the engine follows
// a demotion_enabled changed while it runs (the watchdog says so on
// stderr); until then it keeps what KernelDemotes read at the start.
bool FollowKernelDemotion(PolicyEngine& engine,
                          std::optional<bool> kernel_demotes);

// The options for process `pid` sampled by `source_name` (the source
// attach runs, after --source auto chose): one round per interval_ms, the
// table sized by the resident set read through `fs` (0 when unreadable:
// the engine's minimum), and ApplySourceEngineOptions: a hint-fault sample
// weighted 8 (one sample
// per page per kernel scan pass, 1-19 s apart, must outlive the 3 epoch
// halvings that may pass before the next round sees it: a count of 1
// became 0 under load and the hot set was missed). Pages never sampled on
// the fast tier are swept for victims (EngineOptions::
// sweep_untracked_fast) with pebs, ibs and damon, which see every access.
// With hint faults where the kernel demotes on reclaim (KernelDemotes),
// promotions go into a full fast node and its reclaim makes the room.
EngineOptions AttachEngineOptions(const KernelFs& fs, int64_t pid,
                                  int64_t interval_ms,
                                  absl::string_view source_name);

// At a round boundary, on the thread that ingests (nothing ingests
// meanwhile): grows `engine`'s table to the process's resident set if it
// outgrew it (never shrinks). A failure is said on `log` and the old table
// kept.
void GrowWithProcess(PolicyEngine& engine, const KernelFs& fs, int64_t pid,
                     std::ostream& log);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_ATTACH_ATTACH_ENGINE_H_
