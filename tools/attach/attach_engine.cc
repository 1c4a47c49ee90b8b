#include "tools/attach/attach_engine.h"

#include "absl/status/statusor.h"
#include "sampler/hintfault/hintfault_watchdog.h"
#include "tools/base/kernel/proc_stat.h"

namespace hotpage {

bool SourceSeesEveryAccess(absl::string_view source_name) {
  // The daemon's sampler names its source by its first event
  // (SampleSourceName): "pebs-load" or "ibs-op" for the same samplers.
  return source_name == "pebs" || source_name == "ibs" ||
         source_name == "damon" || source_name == "pebs-load" ||
         source_name == "ibs-op";
}

void ApplySourceEngineOptions(absl::string_view source_name,
                              bool kernel_demotes, EngineOptions* o) {
  if (source_name == "hintfault") {
    o->sample_weight = 8;
    // Tiering mode's scanner makes no top-tier page fault: each sample is a
    // slow-tier page, placed as it arrives (PolicyEngine::PlaceArrivals).
    o->slow_tier_samples = true;
    // The kernel's reclaim demotes by its LRU, which sees the fast tier's
    // accesses (policy/engine.h, "The kernel's LRU as the fast tier's
    // evidence").
    o->reclaim_makes_room = kernel_demotes;
  }
  // The sweep of pages never sampled on the fast tier: sources that see
  // every access (such a page is cold), and hint faults, which see no page
  // there: the sweep then probes, and a hot page it demotes faults back
  // and is kept (policy/engine.h, "Pages the table does not track"), unless
  // the kernel's reclaim picks the victims (the engine then skips it).
  o->sweep_untracked_fast =
      SourceSeesEveryAccess(source_name) || source_name == "hintfault";
}

bool KernelDemotes(const KernelFs& fs) {
  absl::StatusOr<std::string> s = fs.ReadTrimmed(kDemotionEnabledPath);
  return s.ok() && ParseDemotionEnabled(*s).value_or(false);
}

bool FollowKernelDemotion(PolicyEngine& engine,
                          std::optional<bool> kernel_demotes) {
  if (!kernel_demotes) return false;
  // Without slow_tier_samples the option has no effect (reclaim_makes_room
  // stays false): nothing changes.
  const bool before = engine.reclaim_makes_room();
  engine.SetReclaimMakesRoom(*kernel_demotes);
  return engine.reclaim_makes_room() != before;
}

EngineOptions AttachEngineOptions(const KernelFs& fs, int64_t pid,
                                  int64_t interval_ms,
                                  absl::string_view source_name) {
  EngineOptions o;
  o.interval_ns = static_cast<uint64_t>(interval_ms) * 1000000;
  o.address_space = static_cast<uint32_t>(pid);
  ApplySourceEngineOptions(source_name, KernelDemotes(fs), &o);
  o.footprint_pages = ResidentPages4K(fs, pid);
  o.table_by_footprint = true;
  return o;
}

void GrowWithProcess(PolicyEngine& engine, const KernelFs& fs, int64_t pid,
                     std::ostream& log) {
  absl::StatusOr<bool> grown = engine.GrowTable(ResidentPages4K(fs, pid));
  if (!grown.ok()) {
    log << "hotpage attach: pid " << pid
        << ": hotness table not grown: " << grown.status().message() << "\n";
  }
}

}  // namespace hotpage
