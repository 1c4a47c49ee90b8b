// JSON and plain-text renderings of a Topology (`hotpage topology`).

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "policy/topology.h"
#include "tools/base/json_writer.h"
#include "tools/base/parse.h"

namespace hotpage {
namespace {

std::string Bytes(uint64_t b) {
  constexpr double kKi = 1024.0;
  double v = static_cast<double>(b);
  if (v >= kKi * kKi * kKi)
    return absl::StrFormat("%.1f GiB", v / (kKi * kKi * kKi));
  if (v >= kKi * kKi) return absl::StrFormat("%.0f MiB", v / (kKi * kKi));
  if (v >= kKi) return absl::StrFormat("%.0f KiB", v / kKi);
  return absl::StrCat(b, " B");
}

template <typename T>
std::string OrDash(const std::optional<T>& v, absl::string_view unit = "") {
  if (!v) return "-";
  return absl::StrCat(*v, unit);
}

std::string YesNo(const std::optional<bool>& v) {
  if (!v) return "unknown";
  return *v ? "yes" : "no";
}

// Left-aligned columns, two spaces apart.
std::string Columns(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& r : rows) {
    if (width.size() < r.size()) width.resize(r.size(), 0);
    for (size_t i = 0; i < r.size(); ++i)
      width[i] = std::max(width[i], r[i].size());
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line = "  ";
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line.append(width[i] - r[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace

std::string TopologyToJson(const Topology& topo) {
  JsonWriter w(2);
  w.BeginObject();
  w.Key("root");
  w.String(topo.root);
  w.Key("nodes");
  w.BeginArray();
  for (const NodeInfo& n : topo.nodes) {
    w.BeginObject();
    w.Key("id");
    w.Int(n.id);
    w.Key("cpus");
    w.IntArray(n.cpus);
    w.Key("has_cpus");
    w.Bool(n.has_cpus());
    w.Key("memory_bytes");
    w.Uint(n.memory_bytes);
    w.Key("free_bytes");
    w.Uint(n.free_bytes);
    w.Key("distance");
    w.IntArray(n.distance);
    w.Key("tier");
    w.Optional(n.tier);
    w.Key("package");
    w.Int(n.package);
    w.Key("package_source");
    w.String(n.package_source);
    w.Key("read_latency_ns");
    w.Optional(n.hmat.read_latency_ns);
    w.Key("write_latency_ns");
    w.Optional(n.hmat.write_latency_ns);
    w.Key("read_bandwidth_mbps");
    w.Optional(n.hmat.read_bandwidth_mbps);
    w.Key("write_bandwidth_mbps");
    w.Optional(n.hmat.write_bandwidth_mbps);
    w.Key("initiators");
    w.IntArray(n.hmat.initiators);
    w.Key("weight");
    w.Optional(n.weight);
    w.EndObject();
  }
  w.EndArray();

  w.Key("tiers");
  w.BeginArray();
  for (const MemoryTier& t : topo.tiers) {
    w.BeginObject();
    w.Key("rank");
    w.Int(t.rank);
    w.Key("nodes");
    w.IntArray(t.nodes);
    w.EndObject();
  }
  w.EndArray();
  w.Key("tier_source");
  w.String(TierSourceName(topo.tier_source));
  w.Key("kernel_tiers");
  w.BeginArray();
  for (const KernelTier& t : topo.kernel_tiers) {
    w.BeginObject();
    w.Key("id");
    w.Int(t.id);
    w.Key("nodes");
    w.IntArray(t.nodes);
    w.EndObject();
  }
  w.EndArray();
  w.Key("kernel_tiers_disagree_with_hmat");
  w.Bool(topo.hmat_disagrees.has_value());

  w.Key("packages");
  w.BeginArray();
  for (const Package& p : topo.packages) {
    w.BeginObject();
    w.Key("id");
    w.Int(p.id);
    w.Key("nodes");
    w.IntArray(p.nodes);
    w.EndObject();
  }
  w.EndArray();

  const Features& f = topo.features;
  w.Key("features");
  w.BeginObject();
  w.Key("kernel_release");
  w.String(f.kernel_release);
  w.Key("preferred_many");
  w.Optional(f.preferred_many);
  w.Key("weighted_interleave");
  w.Optional(f.weighted_interleave);
  w.Key("preferred_many_numa_balancing");
  w.Optional(f.preferred_many_numa_balancing);
  w.Key("mempolicy_probe");
  w.String(f.mempolicy_probe);
  w.Key("weighted_interleave_auto");
  w.Optional(f.weighted_interleave_auto);
  w.Key("numa_balancing");
  w.Optional(f.numa_balancing);
  w.Key("demotion_enabled");
  w.Optional(f.demotion_enabled);
  w.Key("thp");
  w.Optional(f.thp);
  w.Key("sampler");
  w.String(SamplerKindName(f.sampler));
  w.Key("pebs_mem_loads");
  w.Bool(f.pebs_mem_loads);
  w.Key("pebs_mem_loads_aux");
  w.Bool(f.pebs_mem_loads_aux);
  w.Key("ibs_op");
  w.Bool(f.ibs_op);
  w.Key("perf_event_paranoid");
  w.Optional(f.perf_event_paranoid);
  w.EndObject();

  w.Key("warnings");
  w.BeginArray();
  for (const std::string& s : topo.warnings) w.String(s);
  w.EndArray();
  w.EndObject();
  return w.str() + "\n";
}

std::string TopologyToTable(const Topology& topo) {
  std::string out;
  const Features& f = topo.features;
  absl::StrAppend(&out, "Memory topology of ",
                  topo.root == "/" ? "this machine" : topo.root,
                  f.kernel_release.empty()
                      ? ""
                      : absl::StrCat(" (Linux ", f.kernel_release, ")"),
                  "\n\n");

  std::vector<std::vector<std::string>> rows;
  rows.push_back({"NODE", "CPUS", "MEMORY", "FREE", "TIER", "PKG", "READ LAT",
                  "WRITE LAT", "READ BW", "WRITE BW", "INITIATORS", "WEIGHT",
                  "DISTANCES"});
  for (const NodeInfo& n : topo.nodes) {
    rows.push_back({
        absl::StrCat(n.id),
        n.cpus.empty() ? "(none)" : FormatKernelList(n.cpus),
        Bytes(n.memory_bytes),
        Bytes(n.free_bytes),
        OrDash(n.tier),
        absl::StrCat(n.package),
        OrDash(n.hmat.read_latency_ns, " ns"),
        OrDash(n.hmat.write_latency_ns, " ns"),
        OrDash(n.hmat.read_bandwidth_mbps, " MB/s"),
        OrDash(n.hmat.write_bandwidth_mbps, " MB/s"),
        n.hmat.initiators.empty() ? "-" : FormatKernelList(n.hmat.initiators),
        OrDash(n.weight),
        absl::StrJoin(n.distance, " "),
    });
  }
  out += Columns(rows);

  absl::StrAppend(&out, "\nTiers (source: ", TierSourceName(topo.tier_source),
                  ")\n");
  rows.clear();
  for (const MemoryTier& t : topo.tiers) {
    std::string role = topo.tiers.size() == 1 ? "only tier"
                       : t.rank == 0          ? "fast"
                                              : "slow";
    rows.push_back({absl::StrCat("rank ", t.rank), role,
                    absl::StrCat("nodes ", FormatKernelList(t.nodes))});
  }
  out += Columns(rows);
  if (!topo.kernel_tiers.empty()) {
    std::vector<std::string> kt;
    for (const KernelTier& t : topo.kernel_tiers) {
      kt.push_back(absl::StrCat("memory_tier", t.id, "={",
                                FormatKernelList(t.nodes), "}"));
    }
    absl::StrAppend(
        &out, "  kernel: ", absl::StrJoin(kt, " "),
        topo.hmat_disagrees ? "  (disagrees with HMAT; HMAT used)" : "", "\n");
  } else {
    out += "  kernel: no memory tiers in sysfs\n";
  }

  out += "\nPackages\n";
  rows.clear();
  for (const Package& p : topo.packages) {
    std::vector<std::string> members;
    for (int id : p.nodes) {
      const NodeInfo* n = topo.FindNode(id);
      std::string how = n->package_source == "cpu" ? "CPUs"
                        : n->package_source == "hmat-initiator"
                            ? "memory-only, by HMAT initiator"
                            : "memory-only, by distance";
      members.push_back(absl::StrCat(id, " (", how, ")"));
    }
    rows.push_back({absl::StrCat("package ", p.id),
                    absl::StrCat("nodes ", absl::StrJoin(members, ", "))});
  }
  out += Columns(rows);

  out += "\nKernel features\n";
  rows.clear();
  rows.push_back(
      {"MPOL_PREFERRED_MANY",
       absl::StrCat(
           YesNo(f.preferred_many),
           f.preferred_many_numa_balancing
               ? absl::StrCat(" (with MPOL_F_NUMA_BALANCING: ",
                              YesNo(f.preferred_many_numa_balancing), ")")
               : "",
           f.mempolicy_probe == "sysfs" ? " [inferred from the tree]" : "")});
  rows.push_back(
      {"MPOL_WEIGHTED_INTERLEAVE",
       absl::StrCat(
           YesNo(f.weighted_interleave),
           f.weighted_interleave_auto
               ? absl::StrCat(
                     " (auto weights: ", YesNo(f.weighted_interleave_auto), ")")
               : "",
           f.mempolicy_probe == "sysfs" ? " [inferred from the tree]" : "")});
  std::string nb = "unknown";
  if (f.numa_balancing) {
    nb = absl::StrCat(*f.numa_balancing);
    if (*f.numa_balancing == 0) nb += " (off)";
    if (*f.numa_balancing == 1) nb += " (NUMA balancing)";
    if (*f.numa_balancing == 2) nb += " (memory tiering)";
    if (*f.numa_balancing == 3) nb += " (balancing + tiering)";
  }
  rows.push_back({"numa_balancing", nb});
  rows.push_back({"demotion_enabled", YesNo(f.demotion_enabled)});
  rows.push_back({"transparent hugepages", f.thp.value_or("unknown")});
  std::string sampler = SamplerKindName(f.sampler);
  if (f.sampler == SamplerKind::kPebs)
    sampler +=
        f.pebs_mem_loads_aux ? " (mem-loads, mem-loads-aux)" : " (mem-loads)";
  if (f.sampler == SamplerKind::kIbs) sampler += " (ibs_op)";
  if (f.sampler == SamplerKind::kNone)
    sampler +=
        " (no PEBS mem-loads, no AMD ibs_op PMU: use DAMON or software "
        "sources)";
  rows.push_back({"memory sampler", sampler});
  rows.push_back({"perf_event_paranoid", OrDash(f.perf_event_paranoid)});
  out += Columns(rows);

  if (!topo.warnings.empty()) {
    out += "\nWarnings\n";
    for (const std::string& wmsg : topo.warnings)
      absl::StrAppend(&out, "  ", wmsg, "\n");
  }
  return out;
}

}  // namespace hotpage
