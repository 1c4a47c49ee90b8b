// Reader of a NUMA node's meminfo (/sys/devices/system/node/nodeN/meminfo,
// drivers/base/node.c node_read_meminfo), through KernelFs so tests can fake
// it. The text format is parsed by ParseNodeMeminfo (tools/base/parse.h);
// this file only names the file and says what a missing one means.
//
// Used every round by attach's memory view (tools/live_memory_view.h) for
// the free memory the watermarks compare against.

#ifndef HOTPAGE_TOOLS_BASE_KERNEL_NODE_MEMINFO_H_
#define HOTPAGE_TOOLS_BASE_KERNEL_NODE_MEMINFO_H_

#include <cstdint>
#include <optional>

#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {

// MemFree of node `node` now, in bytes. std::nullopt if the file is missing,
// unreadable or has no valid MemFree line: the caller treats the node's
// free memory as unknown.
std::optional<uint64_t> ReadNodeFreeBytes(const KernelFs& fs, int node);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_BASE_KERNEL_NODE_MEMINFO_H_
