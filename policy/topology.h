// Topology: the machine's memory as the kernel sees it, and hotpage's
// reading of it (tiers, packages) for placement decisions.
//
// DiscoverTopology() reads sysfs/procfs through a KernelFs (the live "/" or
// a copied/fake tree) and never touches anything else, except for the
// optional MempolicyProbe that asks the live kernel which memory-policy
// modes it accepts. The result is a plain value: the policy engine and the
// replay simulator take it as input, tests build it from fake trees.
//
// Tiers. Three sources, best first:
//   kernel   /sys/devices/virtual/memory_tiering/memory_tierN/nodelist, used
//            when the kernel's tiers separate the online memory nodes into
//            two or more tiers;
//   hmat     ACPI HMAT performance (nodeN/access0/initiators/{read,write}_
//            {latency,bandwidth}), turned into an abstract distance exactly
//            as mm/memory-tiers.c does (mt_perf_to_adistance: DRAM = 576,
//            scaled by latency ratio times inverse bandwidth ratio against
//            the best CPU node; tier id = adistance / 128), used when every
//            memory node has HMAT data and it separates them;
//   distance SLIT: nodes with CPUs are rank 0; CPU-less memory nodes are
//            ranked by their distance to the nearest CPU node.
// A kernel that lumps every node in one tier while HMAT clearly separates
// them (a real failure seen with other tools) gives tier_source "hmat",
// with the kernel's tiers still reported (kernel_tiers) and a warning.
// Known limit of the distance fallback: a CPU-less node that is really
// DRAM (kernel memory-tiers.c example 2) looks slower than it is; only
// HMAT or the kernel can tell.
//
// Packages. CPU nodes are grouped by their CPUs' physical_package_id.
// A CPU-less node joins the package of its HMAT initiator (access0), else
// that of its nearest CPU node by distance (ties: lowest node id).

#ifndef HOTPAGE_POLICY_TOPOLOGY_H_
#define HOTPAGE_POLICY_TOPOLOGY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {

// HMAT performance of a memory node as seen from its best initiators
// (nodeN/access0/initiators/). Absent values stay std::nullopt.
struct HmatPerf {
  std::optional<int64_t> read_latency_ns;
  std::optional<int64_t> write_latency_ns;
  std::optional<int64_t> read_bandwidth_mbps;   // MB/s, as the kernel reports
  std::optional<int64_t> write_bandwidth_mbps;  // MB/s
  std::vector<int> initiators;                  // node ids

  bool complete() const { return read_latency_ns && read_bandwidth_mbps; }
};

struct NodeInfo {
  int id = 0;
  std::vector<int> cpus;
  uint64_t memory_bytes = 0;
  uint64_t free_bytes = 0;
  // SLIT row: distance[i] is the distance to the i-th online node (the order
  // of Topology::nodes), as /sys/devices/system/node/nodeN/distance lists it.
  std::vector<int> distance;
  HmatPerf hmat;
  std::optional<int> tier;    // rank in Topology::tiers; 0 is the fastest
  int package = 0;            // Topology::packages id
  std::optional<int> weight;  // weighted-interleave weight, when exposed
  // Which rule attached this node to its package: "cpu", "hmat-initiator"
  // or "distance".
  std::string package_source;

  bool has_cpus() const { return !cpus.empty(); }
};

struct MemoryTier {
  int rank = 0;  // 0 is the fastest
  std::vector<int> nodes;
};

// A tier as the kernel names it: memory_tier<id>.
struct KernelTier {
  int id = 0;
  std::vector<int> nodes;
};

struct Package {
  int id = 0;
  std::vector<int> nodes;
};

enum class TierSource { kKernel, kHmat, kDistance };
const char* TierSourceName(TierSource s);

enum class SamplerKind { kNone, kPebs, kIbs };
const char* SamplerKindName(SamplerKind s);

struct Features {
  std::string kernel_release;  // /proc/sys/kernel/osrelease
  // Whether set_mempolicy accepts these modes. "syscall" when probed on the
  // live kernel, "sysfs" when inferred from a tree (--sysfs-root).
  std::optional<bool> preferred_many;
  std::optional<bool> weighted_interleave;
  // MPOL_PREFERRED_MANY | MPOL_F_NUMA_BALANCING (NUMA-balancing promotion
  // under a preferred-many policy); probed only on the live kernel.
  std::optional<bool> preferred_many_numa_balancing;
  std::string mempolicy_probe;                   // "syscall", "sysfs"
  std::optional<bool> weighted_interleave_auto;  // .../weighted_interleave/auto
  std::optional<int64_t> numa_balancing;  // /proc/sys/kernel/numa_balancing
  std::optional<bool> demotion_enabled;  // /sys/kernel/mm/numa/demotion_enabled
  std::optional<std::string> thp;        // transparent_hugepage/enabled
  SamplerKind sampler = SamplerKind::kNone;
  bool pebs_mem_loads = false;  // cpu (or cpu_core) PMU has mem-loads
  bool pebs_mem_loads_aux =
      false;            // that PMU has mem-loads-aux (SPR and later)
  bool ibs_op = false;  // ibs_op PMU present
  std::optional<int64_t> perf_event_paranoid;
};

struct Topology {
  std::string root;  // where it was read from ("/" on the live machine)
  std::vector<NodeInfo> nodes;    // online nodes, ascending id
  std::vector<MemoryTier> tiers;  // by rank, fastest first
  TierSource tier_source = TierSource::kDistance;
  std::vector<KernelTier> kernel_tiers;      // empty if the kernel has none
  std::optional<TierSource> hmat_disagrees;  // set when kernel != HMAT
  std::vector<Package> packages;             // ascending id
  Features features;
  // Optional files that were present but unreadable or malformed, each
  // naming the file. Essential files (node list, cpulist, meminfo,
  // distance) fail discovery instead.
  std::vector<std::string> warnings;

  const NodeInfo* FindNode(int id) const;
  // Nodes in rank 0: where hot pages belong.
  std::vector<int> FastNodes() const;
  // Distance between two online nodes, or nullopt if unknown.
  std::optional<int> Distance(int from, int to) const;
};

// Asks the running kernel whether set_mempolicy accepts a mode. The live
// implementation probes on a short-lived thread (memory policy is per
// thread, so nothing else in the process is affected); tests inject fakes.
class MempolicyProbe {
 public:
  virtual ~MempolicyProbe() = default;
  // Returns true/false when the kernel answered, nullopt when it could not
  // be asked (e.g. seccomp, EPERM).
  virtual std::optional<bool> Supports(int mode, unsigned flags, int node) = 0;
};

// The live probe: syscall(SYS_set_mempolicy) on a dedicated thread.
class SyscallMempolicyProbe : public MempolicyProbe {
 public:
  std::optional<bool> Supports(int mode, unsigned flags, int node) override;
};

// Mode numbers from <linux/mempolicy.h>, spelled out because older headers
// lack the newest ones.
inline constexpr int kMpolPreferredMany = 5;
inline constexpr int kMpolWeightedInterleave = 6;
inline constexpr unsigned kMpolFNumaBalancing = 1u << 13;

// Reads the topology. `probe` may be null: mempolicy support is then
// inferred from sysfs and the kernel release.
absl::StatusOr<Topology> DiscoverTopology(const KernelFs& fs,
                                          MempolicyProbe* probe);

// Derives tiers and packages from what DiscoverTopology read; exposed for
// tests that build a Topology by hand. Fills nodes[].tier, tiers,
// tier_source, hmat_disagrees, nodes[].package, packages.
void DeriveTiers(Topology& topo);
void DerivePackages(Topology& topo,
                    const std::vector<std::optional<int>>& cpu_package_of_node);

// The kernel's abstract distance for a node's HMAT performance relative to
// reference DRAM performance (mm/memory-tiers.c mt_perf_to_adistance).
int64_t AbstractDistance(const HmatPerf& perf, const HmatPerf& dram);

// Output.
std::string TopologyToJson(const Topology& topo);
std::string TopologyToTable(const Topology& topo);

// Reads TopologyToJson's format back (topology_json.cc): `hotpage simulate
// --topology FILE`. Untrusted input: every value is checked and errors name
// the JSON path. "tiers" and "packages" may be left out (then derived as on
// a live machine: DeriveTiers, each node's "package"); unknown keys are
// ignored. TopologyFromJson(TopologyToJson(t)) == t for every discovered t.
absl::StatusOr<Topology> TopologyFromJson(absl::string_view json);

}  // namespace hotpage

#endif  // HOTPAGE_POLICY_TOPOLOGY_H_
