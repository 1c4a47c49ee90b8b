// `hotpage record|attach --print-events [--sysfs-root DIR]`: prints the
// event plan (sampler/perf/event_plan_json.h) the command would open and
// exits 0, without opening any event, starting any process or touching the
// target. With --sysfs-root the plan is for the machine a copied or fake
// tree describes (read through KernelFs, paths cannot leave DIR); libpfm4
// cannot be pointed at a tree (it detects the CPU by CPUID), so the plan
// then uses the kernel's sysfs aliases and says so in `encoder_note`.

#ifndef HOTPAGE_TOOLS_PRINT_EVENTS_H_
#define HOTPAGE_TOOLS_PRINT_EVENTS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "tools/cli.h"

namespace hotpage {

// The two flags both commands take.
const std::vector<FlagSpec>& PrintEventsFlagSpecs();

// Runs --print-events for `command` ("record" or "attach") from its parsed
// flags: source (record's and attach's names), pid (repeatable for record),
// all, system-wide, sample-period, ldlat, stores, l3-miss-only,
// sysfs-root. `has_command`: record was given "-- COMMAND" (one task).
// Returns the exit status (usage errors are 2, as everywhere).
int RunPrintEvents(absl::string_view command, const ParsedFlags& flags,
                   bool has_command);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_PRINT_EVENTS_H_
