#include "policy/topology.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <set>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "sampler/perf/pmu_probe.h"
#include "tools/base/parse.h"
#include "tools/base/status_macros.h"

namespace hotpage {
namespace {

constexpr char kNodeDir[] = "/sys/devices/system/node";
constexpr char kTierDir[] = "/sys/devices/virtual/memory_tiering";
constexpr char kWeightDir[] = "/sys/kernel/mm/mempolicy/weighted_interleave";

// mm/memory-tiers.c: MEMTIER_CHUNK_BITS 7, DRAM adistance 4.5 chunks.
constexpr int64_t kMemtierChunkBits = 7;
constexpr int64_t kMemtierAdistanceDram =
    (4 << kMemtierChunkBits) + (1 << (kMemtierChunkBits - 1));

std::string NodePath(int node, absl::string_view rest) {
  return absl::StrCat(kNodeDir, "/node", node, rest);
}

// Reads an optional integer; absent -> nullopt silently, malformed ->
// nullopt plus a warning naming the file.
std::optional<int64_t> OptionalInt(const KernelFs& fs, const std::string& path,
                                   std::vector<std::string>& warnings) {
  if (!fs.Exists(path)) return std::nullopt;
  absl::StatusOr<int64_t> v = fs.ReadInt(path);
  if (!v.ok()) {
    warnings.push_back(std::string(v.status().message()));
    return std::nullopt;
  }
  return *v;
}

std::optional<bool> OptionalBool(const KernelFs& fs, const std::string& path,
                                 std::vector<std::string>& warnings) {
  if (!fs.Exists(path)) return std::nullopt;
  absl::StatusOr<std::string> s = fs.ReadTrimmed(path);
  if (!s.ok()) {
    warnings.push_back(std::string(s.status().message()));
    return std::nullopt;
  }
  if (*s == "true" || *s == "1" || *s == "Y") return true;
  if (*s == "false" || *s == "0" || *s == "N") return false;
  warnings.push_back(absl::StrCat(fs.Display(path),
                                  ": expected true/false, found \"",
                                  absl::CEscape(s->substr(0, 40)), "\""));
  return std::nullopt;
}

// "memory_tier35" -> 35.
std::optional<int> TierIdFromName(absl::string_view name) {
  if (!absl::ConsumePrefix(&name, "memory_tier")) return std::nullopt;
  std::optional<int64_t> id = ParseInt(name);
  if (!id || *id < 0 || *id > (1 << 20) || name.empty() || name[0] == '-')
    return std::nullopt;
  return static_cast<int>(*id);
}

// "node12" -> 12.
std::optional<int> NodeIdFromName(absl::string_view name) {
  if (!absl::ConsumePrefix(&name, "node")) return std::nullopt;
  if (name.empty() ||
      !absl::ascii_isdigit(static_cast<unsigned char>(name[0]))) {
    return std::nullopt;
  }
  std::optional<int64_t> id = ParseInt(name);
  if (!id || *id < 0 || *id > kMaxListId) return std::nullopt;
  return static_cast<int>(*id);
}

absl::Status ReadNode(const KernelFs& fs, NodeInfo& node, size_t online_count,
                      std::vector<std::string>& warnings) {
  const int id = node.id;
  if (!fs.Exists(NodePath(id, ""))) {
    return absl::NotFoundError(
        absl::StrCat("node ", id, " is listed in ",
                     fs.Display(absl::StrCat(kNodeDir, "/online")), " but ",
                     fs.Display(NodePath(id, "")), " does not exist"));
  }
  HOTPAGE_ASSIGN_OR_RETURN(node.cpus, fs.ReadList(NodePath(id, "/cpulist")));

  const std::string meminfo_path = NodePath(id, "/meminfo");
  HOTPAGE_ASSIGN_OR_RETURN(std::string meminfo, fs.ReadFile(meminfo_path));
  std::optional<uint64_t> total = ParseNodeMeminfo(meminfo, "MemTotal");
  std::optional<uint64_t> free = ParseNodeMeminfo(meminfo, "MemFree");
  if (!total || !free) {
    return absl::InvalidArgumentError(
        absl::StrCat(fs.Display(meminfo_path), ": no valid \"Node ", id,
                     " MemTotal:/MemFree: <n> kB\" lines"));
  }
  node.memory_bytes = *total;
  node.free_bytes = *free;

  const std::string dist_path = NodePath(id, "/distance");
  HOTPAGE_ASSIGN_OR_RETURN(std::string dist, fs.ReadFile(dist_path));
  std::optional<std::vector<int64_t>> row = ParseIntRow(dist);
  if (!row || row->size() != online_count) {
    return absl::InvalidArgumentError(absl::StrCat(
        fs.Display(dist_path), ": expected ", online_count,
        " distances (one per online node), found \"",
        absl::CEscape(absl::StripAsciiWhitespace(dist).substr(0, 60)), "\""));
  }
  for (int64_t d : *row) {
    if (d < 0 || d > 255) {
      return absl::InvalidArgumentError(absl::StrCat(
          fs.Display(dist_path), ": distance ", d, " out of range 0..255"));
    }
    node.distance.push_back(static_cast<int>(d));
  }

  // HMAT: optional.
  const std::string access0 = NodePath(id, "/access0/initiators");
  if (fs.Exists(access0)) {
    node.hmat.read_latency_ns =
        OptionalInt(fs, access0 + "/read_latency", warnings);
    node.hmat.write_latency_ns =
        OptionalInt(fs, access0 + "/write_latency", warnings);
    node.hmat.read_bandwidth_mbps =
        OptionalInt(fs, access0 + "/read_bandwidth", warnings);
    node.hmat.write_bandwidth_mbps =
        OptionalInt(fs, access0 + "/write_bandwidth", warnings);
    for (std::optional<int64_t>* v :
         {&node.hmat.read_latency_ns, &node.hmat.write_latency_ns,
          &node.hmat.read_bandwidth_mbps, &node.hmat.write_bandwidth_mbps}) {
      // The kernel reports 0 for "not provided"; negative is garbage.
      if (v->has_value() && **v <= 0) v->reset();
    }
    absl::StatusOr<std::vector<std::string>> names = fs.ListDir(access0);
    if (names.ok()) {
      for (const std::string& n : *names) {
        if (std::optional<int> init = NodeIdFromName(n))
          node.hmat.initiators.push_back(*init);
      }
      std::sort(node.hmat.initiators.begin(), node.hmat.initiators.end());
    } else {
      warnings.push_back(std::string(names.status().message()));
    }
  }
  return absl::OkStatus();
}

// Most common physical_package_id among the node's CPUs.
std::optional<int> CpuPackageOfNode(const KernelFs& fs, const NodeInfo& node,
                                    std::vector<std::string>& warnings) {
  std::map<int64_t, int> votes;
  for (int cpu : node.cpus) {
    std::optional<int64_t> pkg =
        OptionalInt(fs,
                    absl::StrCat("/sys/devices/system/cpu/cpu", cpu,
                                 "/topology/physical_package_id"),
                    warnings);
    if (pkg && *pkg >= 0 && *pkg <= kMaxListId) ++votes[*pkg];
  }
  if (votes.empty()) {
    if (node.has_cpus()) {
      warnings.push_back(
          absl::StrCat("node ", node.id,
                       ": no readable physical_package_id for its CPUs; "
                       "treating it as its own package"));
    }
    return std::nullopt;
  }
  if (votes.size() > 1) {
    warnings.push_back(absl::StrCat("node ", node.id, ": CPUs span ",
                                    votes.size(),
                                    " packages; using the most common"));
  }
  auto best =
      std::max_element(votes.begin(), votes.end(),
                       [](auto& a, auto& b) { return a.second < b.second; });
  return static_cast<int>(best->first);
}

void ReadFeatures(const KernelFs& fs, Topology& topo, MempolicyProbe* probe) {
  Features& f = topo.features;
  std::vector<std::string>& w = topo.warnings;
  if (absl::StatusOr<std::string> rel =
          fs.ReadTrimmed("/proc/sys/kernel/osrelease");
      rel.ok()) {
    f.kernel_release = rel->substr(0, 128);
  }
  f.numa_balancing = OptionalInt(fs, "/proc/sys/kernel/numa_balancing", w);
  f.perf_event_paranoid =
      OptionalInt(fs, "/proc/sys/kernel/perf_event_paranoid", w);
  f.demotion_enabled =
      OptionalBool(fs, "/sys/kernel/mm/numa/demotion_enabled", w);
  f.weighted_interleave_auto =
      OptionalBool(fs, absl::StrCat(kWeightDir, "/auto"), w);
  const std::string thp_path = "/sys/kernel/mm/transparent_hugepage/enabled";
  if (fs.Exists(thp_path)) {
    absl::StatusOr<std::string> thp = fs.ReadFile(thp_path);
    if (thp.ok()) f.thp = ParseBracketChoice(*thp);
    if (!f.thp)
      w.push_back(absl::StrCat(fs.Display(thp_path), ": no [selected] mode"));
  }

  // Samplers: the probe the sampler itself uses (sampler/perf/pmu_probe.h),
  // so that topology reports what attach would pick.
  const PmuProbe pmu = ProbePmu(fs);
  f.pebs_mem_loads = pmu.pebs();
  f.pebs_mem_loads_aux = pmu.pebs_mem_loads_aux;
  f.ibs_op = pmu.ibs_op;
  f.sampler = f.pebs_mem_loads ? SamplerKind::kPebs
              : f.ibs_op       ? SamplerKind::kIbs
                               : SamplerKind::kNone;

  // Mempolicy modes: ask the kernel when we can, else infer.
  int probe_node = -1;
  for (const NodeInfo& n : topo.nodes) {
    if (n.memory_bytes > 0) {
      probe_node = n.id;
      break;
    }
  }
  if (probe != nullptr && probe_node >= 0) {
    f.mempolicy_probe = "syscall";
    f.preferred_many = probe->Supports(kMpolPreferredMany, 0, probe_node);
    f.weighted_interleave =
        probe->Supports(kMpolWeightedInterleave, 0, probe_node);
    if (f.preferred_many.value_or(false)) {
      f.preferred_many_numa_balancing =
          probe->Supports(kMpolPreferredMany, kMpolFNumaBalancing, probe_node);
    }
  } else {
    f.mempolicy_probe = "sysfs";
    const bool wi_dir = fs.Exists(kWeightDir);
    f.weighted_interleave = wi_dir;
    // MPOL_PREFERRED_MANY: Linux 5.15. Weighted interleave (6.9) implies it.
    int major = 0, minor = 0;
    std::vector<absl::string_view> parts =
        absl::StrSplit(f.kernel_release, '.');
    if (parts.size() >= 2 && absl::SimpleAtoi(parts[0], &major)) {
      absl::string_view mn = parts[1];
      size_t digits = 0;
      while (digits < mn.size() &&
             absl::ascii_isdigit(static_cast<unsigned char>(mn[digits])))
        ++digits;
      if (absl::SimpleAtoi(mn.substr(0, digits), &minor)) {
        f.preferred_many = major > 5 || (major == 5 && minor >= 15);
      }
    }
    if (wi_dir) f.preferred_many = true;
  }
}

}  // namespace

const char* TierSourceName(TierSource s) {
  switch (s) {
    case TierSource::kKernel:
      return "kernel";
    case TierSource::kHmat:
      return "hmat";
    case TierSource::kDistance:
      return "distance";
  }
  return "?";
}

const char* SamplerKindName(SamplerKind s) {
  switch (s) {
    case SamplerKind::kNone:
      return "none";
    case SamplerKind::kPebs:
      return "pebs";
    case SamplerKind::kIbs:
      return "ibs";
  }
  return "?";
}

const NodeInfo* Topology::FindNode(int id) const {
  for (const NodeInfo& n : nodes) {
    if (n.id == id) return &n;
  }
  return nullptr;
}

std::vector<int> Topology::FastNodes() const {
  if (tiers.empty()) return {};
  return tiers.front().nodes;
}

std::optional<int> Topology::Distance(int from, int to) const {
  const NodeInfo* a = FindNode(from);
  if (a == nullptr) return std::nullopt;
  for (size_t i = 0; i < nodes.size() && i < a->distance.size(); ++i) {
    if (nodes[i].id == to) return a->distance[i];
  }
  return std::nullopt;
}

std::optional<bool> SyscallMempolicyProbe::Supports(int mode, unsigned flags,
                                                    int node) {
  if (node < 0 || node >= 1024) return std::nullopt;
  std::optional<bool> result;
  // Memory policy is per thread: probing on a throw-away thread leaves the
  // caller's (and every other thread's) policy untouched.
  std::thread t([&] {
    unsigned long mask[1024 / (8 * sizeof(unsigned long))] = {};
    mask[node / (8 * sizeof(unsigned long))] =
        1ul << (node % (8 * sizeof(unsigned long)));
    long rc = syscall(SYS_set_mempolicy, mode | static_cast<int>(flags), mask,
                      static_cast<unsigned long>(sizeof(mask) * 8));
    if (rc == 0) {
      result = true;
      syscall(SYS_set_mempolicy, 0 /* MPOL_DEFAULT */, nullptr, 0ul);
    } else if (errno == EINVAL) {
      result = false;
    }
  });
  t.join();
  return result;
}

int64_t AbstractDistance(const HmatPerf& perf, const HmatPerf& dram) {
  // Missing write values: assume symmetric (the kernel sums read + write).
  auto lat = [](const HmatPerf& p) {
    return *p.read_latency_ns + p.write_latency_ns.value_or(*p.read_latency_ns);
  };
  auto bw = [](const HmatPerf& p) {
    return *p.read_bandwidth_mbps +
           p.write_bandwidth_mbps.value_or(*p.read_bandwidth_mbps);
  };
  // Same order of operations as the kernel (integer, left to right), in 64
  // bits: the kernel's int version overflowed on large bandwidths until
  // 2025 ("mm/memory-tier: fix abstract distance calculation overflow").
  return kMemtierAdistanceDram * lat(perf) / lat(dram) * bw(dram) / bw(perf);
}

void DeriveTiers(Topology& topo) {
  topo.tiers.clear();
  topo.hmat_disagrees.reset();
  std::vector<const NodeInfo*> mem;
  for (const NodeInfo& n : topo.nodes) {
    if (n.memory_bytes > 0) mem.push_back(&n);
  }
  // Each candidate source maps node id -> sort key (lower is faster).
  using Keys = std::map<int, int64_t>;
  auto distinct = [](const Keys& k) {
    std::set<int64_t> s;
    for (auto& [node, key] : k) s.insert(key);
    return s.size();
  };

  Keys kernel;
  for (const KernelTier& t : topo.kernel_tiers) {
    for (int n : t.nodes) {
      if (topo.FindNode(n) != nullptr) kernel[n] = t.id;
    }
  }
  const bool kernel_separates = distinct(kernel) >= 2;

  Keys hmat;
  const HmatPerf* dram = nullptr;
  for (const NodeInfo* n : mem) {
    if (!n->has_cpus() || !n->hmat.complete()) continue;
    if (dram == nullptr || *n->hmat.read_latency_ns < *dram->read_latency_ns)
      dram = &n->hmat;
  }
  if (dram != nullptr) {
    for (const NodeInfo* n : mem) {
      if (!n->hmat.complete()) {
        hmat.clear();
        break;
      }
      hmat[n->id] = AbstractDistance(n->hmat, *dram) >> kMemtierChunkBits;
    }
  }
  const bool hmat_separates = distinct(hmat) >= 2;

  // Every memory node has HMAT data: HMAT's verdict stands even when it
  // says "one tier" (a CPU-less node that is really DRAM).
  const bool hmat_complete = !hmat.empty();

  Keys chosen;
  if (kernel_separates) {
    topo.tier_source = TierSource::kKernel;
    chosen = kernel;
    // Nodes the kernel did not place (e.g. hot-added late) sort last.
    for (const NodeInfo* n : mem) chosen.emplace(n->id, INT64_MAX);
  } else if (hmat_separates) {
    topo.tier_source = TierSource::kHmat;
    chosen = hmat;
    if (!topo.kernel_tiers.empty()) {
      topo.hmat_disagrees = TierSource::kKernel;
      topo.warnings.push_back(absl::StrCat(
          "the kernel puts every memory node in one tier (memory_tier",
          topo.kernel_tiers.front().id,
          ") but HMAT separates them; using HMAT. Check the firmware's HMAT "
          "and the kernel's memory-tier drivers"));
    }
  } else if (hmat_complete) {
    // Kernel and HMAT agree on a single tier (or the kernel has none).
    topo.tier_source =
        topo.kernel_tiers.empty() ? TierSource::kHmat : TierSource::kKernel;
    chosen = hmat;
  } else {
    topo.tier_source = TierSource::kDistance;
    bool any_cpu = false;
    for (const NodeInfo* n : mem) any_cpu |= n->has_cpus();
    for (const NodeInfo* n : mem) {
      if (n->has_cpus() || !any_cpu) {
        chosen[n->id] = 0;
        continue;
      }
      int nearest = 255;
      for (size_t i = 0; i < topo.nodes.size() && i < n->distance.size(); ++i) {
        if (topo.nodes[i].has_cpus())
          nearest = std::min(nearest, n->distance[i]);
      }
      chosen[n->id] = nearest;
    }
  }

  // Rank distinct keys.
  std::map<int64_t, std::vector<int>> by_key;
  for (auto& [node, key] : chosen) by_key[key].push_back(node);
  int rank = 0;
  for (auto& [key, nodes] : by_key) {
    std::sort(nodes.begin(), nodes.end());
    topo.tiers.push_back(MemoryTier{rank, nodes});
    for (NodeInfo& n : topo.nodes) {
      if (std::find(nodes.begin(), nodes.end(), n.id) != nodes.end())
        n.tier = rank;
    }
    ++rank;
  }
}

void DerivePackages(
    Topology& topo,
    const std::vector<std::optional<int>>& cpu_package_of_node) {
  // Package ids: the hardware's physical_package_id; CPU nodes without one
  // get fresh ids above every real one.
  int next_synthetic = 0;
  for (const std::optional<int>& p : cpu_package_of_node) {
    if (p) next_synthetic = std::max(next_synthetic, *p + 1);
  }
  std::map<int, int> pkg_of;  // node id -> package, CPU nodes first
  for (size_t i = 0; i < topo.nodes.size(); ++i) {
    NodeInfo& n = topo.nodes[i];
    if (!n.has_cpus()) continue;
    std::optional<int> p =
        i < cpu_package_of_node.size() ? cpu_package_of_node[i] : std::nullopt;
    n.package = p ? *p : next_synthetic++;
    n.package_source = "cpu";
    pkg_of[n.id] = n.package;
  }
  for (size_t i = 0; i < topo.nodes.size(); ++i) {
    NodeInfo& n = topo.nodes[i];
    if (n.has_cpus()) continue;
    // 1. HMAT initiator that is a CPU node; among several, the nearest.
    std::optional<int> best;
    int best_dist = INT32_MAX;
    for (int init : n.hmat.initiators) {
      auto it = pkg_of.find(init);
      if (it == pkg_of.end()) continue;
      int d = topo.Distance(n.id, init).value_or(INT32_MAX - 1);
      if (!best || d < best_dist) {
        best = it->second;
        best_dist = d;
      }
    }
    if (best) {
      n.package = *best;
      n.package_source = "hmat-initiator";
      continue;
    }
    // 2. Nearest CPU node by SLIT distance; ties to the lowest node id.
    for (size_t j = 0; j < topo.nodes.size() && j < n.distance.size(); ++j) {
      if (!topo.nodes[j].has_cpus()) continue;
      if (!best || n.distance[j] < best_dist) {
        best = topo.nodes[j].package;
        best_dist = n.distance[j];
      }
    }
    n.package = best.value_or(0);
    n.package_source = best ? "distance" : "none";
  }
  std::map<int, std::vector<int>> groups;
  for (const NodeInfo& n : topo.nodes) groups[n.package].push_back(n.id);
  topo.packages.clear();
  for (auto& [id, nodes] : groups) topo.packages.push_back(Package{id, nodes});
}

absl::StatusOr<Topology> DiscoverTopology(const KernelFs& fs,
                                          MempolicyProbe* probe) {
  Topology topo;
  topo.root = fs.root();
  const std::string online_path = absl::StrCat(kNodeDir, "/online");
  absl::StatusOr<std::vector<int>> online = fs.ReadList(online_path);
  if (!online.ok()) {
    if (absl::IsNotFound(online.status())) {
      return absl::NotFoundError(absl::StrCat(
          online.status().message(),
          ". Is sysfs mounted, and does the kernel have CONFIG_NUMA? With "
          "--sysfs-root, the tree must hold sys/devices/system/node/online"));
    }
    return online.status();
  }
  if (online->empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(fs.Display(online_path), ": no online NUMA node"));
  }
  for (int id : *online) {
    NodeInfo n;
    n.id = id;
    topo.nodes.push_back(std::move(n));
  }
  for (NodeInfo& n : topo.nodes) {
    HOTPAGE_RETURN_IF_ERROR(ReadNode(fs, n, topo.nodes.size(), topo.warnings));
  }

  // Kernel memory tiers.
  if (fs.Exists(kTierDir)) {
    absl::StatusOr<std::vector<std::string>> names = fs.ListDir(kTierDir);
    if (names.ok()) {
      for (const std::string& name : *names) {
        std::optional<int> id = TierIdFromName(name);
        if (!id) continue;
        std::string list_path = absl::StrCat(kTierDir, "/", name, "/nodelist");
        absl::StatusOr<std::vector<int>> nodes = fs.ReadList(list_path);
        if (!nodes.ok()) {
          topo.warnings.push_back(std::string(nodes.status().message()));
          continue;
        }
        if (!nodes->empty())
          topo.kernel_tiers.push_back(KernelTier{*id, *nodes});
      }
      std::sort(
          topo.kernel_tiers.begin(), topo.kernel_tiers.end(),
          [](const KernelTier& a, const KernelTier& b) { return a.id < b.id; });
    } else {
      topo.warnings.push_back(std::string(names.status().message()));
    }
  }

  // Weighted-interleave weights.
  for (NodeInfo& n : topo.nodes) {
    std::optional<int64_t> w =
        OptionalInt(fs, absl::StrCat(kWeightDir, "/node", n.id), topo.warnings);
    if (w && *w >= 0 && *w <= 255) n.weight = static_cast<int>(*w);
  }

  std::vector<std::optional<int>> cpu_pkg;
  for (const NodeInfo& n : topo.nodes)
    cpu_pkg.push_back(CpuPackageOfNode(fs, n, topo.warnings));

  DeriveTiers(topo);
  DerivePackages(topo, cpu_pkg);
  ReadFeatures(fs, topo, probe);
  return topo;
}

}  // namespace hotpage
