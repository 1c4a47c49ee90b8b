// Fuzz target for tools/daemon/daemon_config.h (and the take-over state
// file's parser, sysctl_takeover.h): the config parser takes a
// file any admin (or a bad deploy) wrote and is re-run on every SIGHUP, so
// it must never crash, hang or accept what it then cannot honour. Each input
// is parsed as is, and spliced into a valid config at a position taken from
// its first bytes (so a gcc run without coverage guidance still reaches the
// parser's deep paths). Properties: an accepted config has 1 to
// kMaxWorkloads workloads with unique names, one selector each, floors not
// above caps, a self_memory node in the kernel's range.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

#include "absl/strings/string_view.h"
#include "tools/daemon/daemon_config.h"
#include "tools/daemon/sysctl_takeover.h"

namespace {

constexpr char kSeed[] = R"([daemon]
interval_ms = 500
rate_limit_mbps = 128
kernel_tiering = "coexist"
min_rss = "1GiB"
self_memory = "slow"

[[workload]]
name = "cache"
cgroup = "system.slice/memcached.service"
weights = "0:3,1:1"
fast_floor = "25%"
fast_cap = "50%"

[[workload]]
name = "db"
cmdline = "^postgres: .*"
keep_interleave = 0.1
fast_floor = "1GiB"
)";

void Check(absl::string_view text) {
  auto cfg = hotpage::ParseDaemonConfig(text, "fuzz.toml");
  if (!cfg.ok()) return;
  if (cfg->workloads.empty() ||
      cfg->workloads.size() > hotpage::kMaxWorkloads) {
    std::abort();
  }
  if (cfg->self_memory.choice == hotpage::SelfMemoryChoice::kNode &&
      (cfg->self_memory.node < 0 ||
       cfg->self_memory.node > hotpage::kMaxSelfMemoryNode)) {
    std::abort();
  }
  std::set<std::string> names;
  for (const auto& w : cfg->workloads) {
    if (!names.insert(w.name).second) std::abort();
    const uint64_t cap = uint64_t{1} << 34;
    if (w.fast_floor.Resolve(cap, false) > cap) std::abort();
    if (w.fast_floor.percent == w.fast_cap.percent && w.fast_floor.set &&
        w.fast_cap.set && w.fast_floor.value > w.fast_cap.value) {
      std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view in(reinterpret_cast<const char*>(data), size);
  Check(in);
  // The take-over state file is read back as root: only the two known
  // sysctls with their kernel-printed values may come out of it.
  if (auto st = hotpage::ParseTakeoverState(in); st.ok()) {
    for (const auto& c : *st) {
      if (c.path != "/proc/sys/kernel/numa_balancing" &&
          c.path != "/sys/kernel/mm/numa/demotion_enabled") {
        std::abort();
      }
    }
  }
  if (size >= 2) {
    const std::string tail(in.substr(2));
    std::string seed(kSeed);
    const size_t at = ((data[0] | (data[1] << 8)) >> 1) % (seed.size() + 1);
    if (data[0] & 1) {
      seed.insert(at, tail);  // text inserted into a valid config
    } else {                  // or a corrupted byte range of the same length
      seed.replace(at, std::min(tail.size(), seed.size() - at), tail);
    }
    Check(seed);
  }
  return 0;
}
