// The one parser of /proc/PID/cgroup for cgroup v2 (proc(5)).
//
// proc_cgroup_show() in kernel/cgroup/cgroup.c prints one line per
// hierarchy, "ID:CONTROLLERS:PATH"; the v2 (unified) hierarchy is the line
// with id 0 and an empty controller list, "0::/PATH".
//
// Who reads it: the daemon's workload selection (tools/daemon/
// workload_select.h: which configured cgroup a process is in) and
// attach's stats (tools/attach/attach_stats.h: the `cgroup` label).
//
// Untrusted input in the sense that the file is the kernel's but the path
// names a cgroup a delegated owner may have created: the result is only
// compared and printed, never opened.

#ifndef HOTPAGE_TOOLS_BASE_KERNEL_PROC_CGROUP_H_
#define HOTPAGE_TOOLS_BASE_KERNEL_PROC_CGROUP_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace hotpage {

// The path of the "0::" line of a /proc/PID/cgroup text, without its
// leading '/' ("" for the root cgroup); nullopt when there is no such line
// (cgroup v1 only, or not a cgroup file).
std::optional<std::string> CgroupV2Path(absl::string_view text);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_BASE_KERNEL_PROC_CGROUP_H_
