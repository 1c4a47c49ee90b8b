// Effective capabilities of this process, from /proc/self/status (CapEff),
// read through KernelFs so tests can fake them. Used to say up front which
// capability a command lacks instead of failing later with EPERM.

#ifndef HOTPAGE_TOOLS_BASE_KERNEL_CAPABILITIES_H_
#define HOTPAGE_TOOLS_BASE_KERNEL_CAPABILITIES_H_

#include <cstdint>

#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {

// Bit numbers from <linux/capability.h>.
inline constexpr int kCapSysAdmin = 21;
inline constexpr int kCapSysNice = 23;
inline constexpr int kCapPerfmon = 38;

// The CapEff mask; 0 when it cannot be read or parsed.
uint64_t EffectiveCapabilities(const KernelFs& fs);

inline bool HasCapability(uint64_t caps, int cap) { return (caps >> cap) & 1; }

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_BASE_KERNEL_CAPABILITIES_H_
