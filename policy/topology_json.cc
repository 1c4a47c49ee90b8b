// TopologyFromJson: reads the `hotpage topology --json` format back
// (TopologyToJson in topology_format.cc), so that `hotpage simulate
// --topology FILE` can simulate a machine captured elsewhere or written by
// hand.
//
// The file is untrusted: every value is type- and range-checked, errors
// name the JSON path ("$.nodes[1].distance[2]: ..."), and the parser
// (ParseJson in tools/base/json.h: nlohmann::json, strict UTF-8, no
// duplicate keys, depth-limited) names the line and column of a syntax
// error. Fuzzed by topology_json_fuzz.cc.

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "policy/topology.h"
#include "tools/base/json.h"
#include "tools/base/status_macros.h"

namespace hotpage {
namespace {

using Value = Json;

// Node ids the rest of hotpage can hold (the hotness table tracks nodes
// 0..62), CPU numbers, distances (SLIT is a byte).
constexpr int64_t kMaxNodeId = 62;
constexpr int64_t kMaxCpu = 65535;
constexpr size_t kMaxNodes = 63;
constexpr size_t kMaxCpusPerNode = 65536;

absl::Status Bad(const std::string& path, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", what));
}

absl::StatusOr<int64_t> Int(const Value& v, const std::string& path, int64_t lo,
                            int64_t hi) {
  if (!v.is_number()) {
    return Bad(path,
               absl::StrCat("expected an integer, found ", v.type_name()));
  }
  auto out_of_range = [&] {
    return Bad(path, absl::StrCat("expected an integer in [", lo, ", ", hi,
                                  "], found ", JsonBrief(v)));
  };
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (hi < 0 || u > static_cast<uint64_t>(hi) ||
        (lo > 0 && u < static_cast<uint64_t>(lo)))
      return out_of_range();
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) {
    const int64_t x = v.get<int64_t>();
    if (x < lo || x > hi) return out_of_range();
    return x;
  }
  // A float with an integral value (1e3, 20480.0) is accepted as before.
  const double d = v.get<double>();
  if (!std::isfinite(d) || d != std::floor(d) || d < static_cast<double>(lo) ||
      d > static_cast<double>(hi)) {
    return out_of_range();
  }
  return static_cast<int64_t>(d);
}

absl::StatusOr<uint64_t> Uint(const Value& v, const std::string& path) {
  if (!v.is_number()) {
    return Bad(path,
               absl::StrCat("expected a byte count, found ", v.type_name()));
  }
  // 2^63: far above any machine, and exactly representable.
  constexpr uint64_t kLimit = uint64_t{1} << 63;
  auto bad = [&] {
    return Bad(path, "expected a non-negative integer below 2^63");
  };
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u >= kLimit) return bad();
    return u;
  }
  if (v.is_number_integer())
    return bad();  // nlohmann keeps only negatives signed
  const double d = v.get<double>();
  if (!std::isfinite(d) || d != std::floor(d) || d < 0 ||
      d >= 9223372036854775808.0) {
    return bad();
  }
  return static_cast<uint64_t>(d);
}

template <typename T>
absl::Status OptInt(const Value* v, const std::string& path, int64_t lo,
                    int64_t hi, std::optional<T>* out) {
  if (v == nullptr || v->is_null()) {
    out->reset();
    return absl::OkStatus();
  }
  HOTPAGE_ASSIGN_OR_RETURN(int64_t x, Int(*v, path, lo, hi));
  *out = static_cast<T>(x);
  return absl::OkStatus();
}

absl::Status OptBool(const Value* v, const std::string& path,
                     std::optional<bool>* out) {
  if (v == nullptr || v->is_null()) {
    out->reset();
    return absl::OkStatus();
  }
  if (!v->is_boolean()) return Bad(path, "expected true, false or null");
  *out = v->get<bool>();
  return absl::OkStatus();
}

absl::Status Bool(const Value* v, const std::string& path, bool* out) {
  if (v == nullptr) return absl::OkStatus();
  if (!v->is_boolean()) return Bad(path, "expected true or false");
  *out = v->get<bool>();
  return absl::OkStatus();
}

absl::Status Str(const Value* v, const std::string& path, std::string* out) {
  if (v == nullptr || v->is_null()) return absl::OkStatus();
  if (!v->is_string()) return Bad(path, "expected a string");
  *out = v->get<std::string>();
  return absl::OkStatus();
}

absl::Status OptStr(const Value* v, const std::string& path,
                    std::optional<std::string>* out) {
  if (v == nullptr || v->is_null()) {
    out->reset();
    return absl::OkStatus();
  }
  if (!v->is_string()) return Bad(path, "expected a string or null");
  *out = v->get<std::string>();
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int>> IntList(const Value* v,
                                         const std::string& path, int64_t lo,
                                         int64_t hi, size_t max_len) {
  std::vector<int> out;
  if (v == nullptr || v->is_null()) return out;
  if (!v->is_array()) return Bad(path, "expected an array of integers");
  if (v->size() > max_len)
    return Bad(path, absl::StrCat("more than ", max_len, " entries"));
  for (size_t i = 0; i < v->size(); ++i) {
    HOTPAGE_ASSIGN_OR_RETURN(
        int64_t x, Int((*v)[i], absl::StrCat(path, "[", i, "]"), lo, hi));
    out.push_back(static_cast<int>(x));
  }
  return out;
}

const Value* Member(const Value& obj, absl::string_view key) {
  return JsonMember(obj, key);
}

// "nodes": [{id, nodes}] lists (tiers, kernel_tiers, packages).
struct Group {
  int id = 0;
  std::vector<int> nodes;
};
absl::StatusOr<std::vector<Group>> Groups(const Value* v,
                                          const std::string& path,
                                          absl::string_view id_key,
                                          int64_t id_hi) {
  std::vector<Group> out;
  if (v == nullptr || v->is_null()) return out;
  if (!v->is_array()) return Bad(path, "expected an array");
  if (v->size() > kMaxNodes)
    return Bad(path, absl::StrCat("more than ", kMaxNodes, " entries"));
  for (size_t i = 0; i < v->size(); ++i) {
    const Value& g = (*v)[i];
    const std::string p = absl::StrCat(path, "[", i, "]");
    if (!g.is_object()) return Bad(p, "expected an object");
    const Value* id = Member(g, id_key);
    if (id == nullptr) return Bad(p, absl::StrCat("missing \"", id_key, "\""));
    Group grp;
    HOTPAGE_ASSIGN_OR_RETURN(int64_t x,
                             Int(*id, absl::StrCat(p, ".", id_key), 0, id_hi));
    grp.id = static_cast<int>(x);
    HOTPAGE_ASSIGN_OR_RETURN(
        grp.nodes,
        IntList(Member(g, "nodes"), p + ".nodes", 0, kMaxNodeId, kMaxNodes));
    out.push_back(std::move(grp));
  }
  return out;
}

absl::StatusOr<TierSource> ParseTierSource(const std::string& s,
                                           const std::string& path) {
  for (TierSource t :
       {TierSource::kKernel, TierSource::kHmat, TierSource::kDistance}) {
    if (s == TierSourceName(t)) return t;
  }
  return Bad(path, absl::StrCat("unknown tier source \"", s,
                                "\" (kernel, hmat, distance)"));
}

absl::StatusOr<SamplerKind> ParseSampler(const std::string& s,
                                         const std::string& path) {
  for (SamplerKind k :
       {SamplerKind::kNone, SamplerKind::kPebs, SamplerKind::kIbs}) {
    if (s == SamplerKindName(k)) return k;
  }
  return Bad(path,
             absl::StrCat("unknown sampler \"", s, "\" (none, pebs, ibs)"));
}

absl::Status ParseNode(const Value& v, const std::string& p, NodeInfo* n) {
  if (!v.is_object()) return Bad(p, "expected an object");
  const Value* id = Member(v, "id");
  if (id == nullptr) return Bad(p, "missing \"id\"");
  HOTPAGE_ASSIGN_OR_RETURN(int64_t x, Int(*id, p + ".id", 0, kMaxNodeId));
  n->id = static_cast<int>(x);
  HOTPAGE_ASSIGN_OR_RETURN(n->cpus, IntList(Member(v, "cpus"), p + ".cpus", 0,
                                            kMaxCpu, kMaxCpusPerNode));
  if (const Value* m = Member(v, "memory_bytes"); m != nullptr) {
    HOTPAGE_ASSIGN_OR_RETURN(n->memory_bytes, Uint(*m, p + ".memory_bytes"));
  }
  if (const Value* m = Member(v, "free_bytes"); m != nullptr) {
    HOTPAGE_ASSIGN_OR_RETURN(n->free_bytes, Uint(*m, p + ".free_bytes"));
  }
  HOTPAGE_ASSIGN_OR_RETURN(
      n->distance,
      IntList(Member(v, "distance"), p + ".distance", 0, 255, kMaxNodes));
  HOTPAGE_RETURN_IF_ERROR(
      OptInt(Member(v, "tier"), p + ".tier", 0, kMaxNodeId, &n->tier));
  if (const Value* pk = Member(v, "package"); pk != nullptr && !pk->is_null()) {
    HOTPAGE_ASSIGN_OR_RETURN(int64_t pkg, Int(*pk, p + ".package", 0, 1 << 20));
    n->package = static_cast<int>(pkg);
  }
  HOTPAGE_RETURN_IF_ERROR(Str(Member(v, "package_source"),
                              p + ".package_source", &n->package_source));
  constexpr int64_t kBig = int64_t{1} << 40;
  HOTPAGE_RETURN_IF_ERROR(OptInt(Member(v, "read_latency_ns"),
                                 p + ".read_latency_ns", 0, kBig,
                                 &n->hmat.read_latency_ns));
  HOTPAGE_RETURN_IF_ERROR(OptInt(Member(v, "write_latency_ns"),
                                 p + ".write_latency_ns", 0, kBig,
                                 &n->hmat.write_latency_ns));
  HOTPAGE_RETURN_IF_ERROR(OptInt(Member(v, "read_bandwidth_mbps"),
                                 p + ".read_bandwidth_mbps", 0, kBig,
                                 &n->hmat.read_bandwidth_mbps));
  HOTPAGE_RETURN_IF_ERROR(OptInt(Member(v, "write_bandwidth_mbps"),
                                 p + ".write_bandwidth_mbps", 0, kBig,
                                 &n->hmat.write_bandwidth_mbps));
  HOTPAGE_ASSIGN_OR_RETURN(
      n->hmat.initiators, IntList(Member(v, "initiators"), p + ".initiators", 0,
                                  kMaxNodeId, kMaxNodes));
  HOTPAGE_RETURN_IF_ERROR(
      OptInt(Member(v, "weight"), p + ".weight", 0, 255, &n->weight));
  // An HMAT latency or bandwidth of 0 would divide by zero in the tier
  // formula; the kernel never reports one.
  if (n->hmat.read_bandwidth_mbps == 0 || n->hmat.read_latency_ns == 0) {
    return Bad(
        p,
        "read_latency_ns and read_bandwidth_mbps must be positive (or null)");
  }
  return absl::OkStatus();
}

absl::Status ParseFeatures(const Value* v, Features* f) {
  if (v == nullptr || v->is_null()) return absl::OkStatus();
  const std::string p = "$.features";
  if (!v->is_object()) return Bad(p, "expected an object");
  HOTPAGE_RETURN_IF_ERROR(Str(Member(*v, "kernel_release"),
                              p + ".kernel_release", &f->kernel_release));
  HOTPAGE_RETURN_IF_ERROR(OptBool(Member(*v, "preferred_many"),
                                  p + ".preferred_many", &f->preferred_many));
  HOTPAGE_RETURN_IF_ERROR(OptBool(Member(*v, "weighted_interleave"),
                                  p + ".weighted_interleave",
                                  &f->weighted_interleave));
  HOTPAGE_RETURN_IF_ERROR(OptBool(Member(*v, "preferred_many_numa_balancing"),
                                  p + ".preferred_many_numa_balancing",
                                  &f->preferred_many_numa_balancing));
  HOTPAGE_RETURN_IF_ERROR(Str(Member(*v, "mempolicy_probe"),
                              p + ".mempolicy_probe", &f->mempolicy_probe));
  HOTPAGE_RETURN_IF_ERROR(OptBool(Member(*v, "weighted_interleave_auto"),
                                  p + ".weighted_interleave_auto",
                                  &f->weighted_interleave_auto));
  HOTPAGE_RETURN_IF_ERROR(OptInt(Member(*v, "numa_balancing"),
                                 p + ".numa_balancing", INT32_MIN, INT32_MAX,
                                 &f->numa_balancing));
  HOTPAGE_RETURN_IF_ERROR(OptBool(Member(*v, "demotion_enabled"),
                                  p + ".demotion_enabled",
                                  &f->demotion_enabled));
  HOTPAGE_RETURN_IF_ERROR(OptStr(Member(*v, "thp"), p + ".thp", &f->thp));
  if (const Value* s = Member(*v, "sampler"); s != nullptr && !s->is_null()) {
    if (!s->is_string()) return Bad(p + ".sampler", "expected a string");
    HOTPAGE_ASSIGN_OR_RETURN(
        f->sampler, ParseSampler(s->get<std::string>(), p + ".sampler"));
  }
  HOTPAGE_RETURN_IF_ERROR(Bool(Member(*v, "pebs_mem_loads"),
                               p + ".pebs_mem_loads", &f->pebs_mem_loads));
  HOTPAGE_RETURN_IF_ERROR(Bool(Member(*v, "pebs_mem_loads_aux"),
                               p + ".pebs_mem_loads_aux",
                               &f->pebs_mem_loads_aux));
  HOTPAGE_RETURN_IF_ERROR(
      Bool(Member(*v, "ibs_op"), p + ".ibs_op", &f->ibs_op));
  HOTPAGE_RETURN_IF_ERROR(OptInt(Member(*v, "perf_event_paranoid"),
                                 p + ".perf_event_paranoid", INT32_MIN,
                                 INT32_MAX, &f->perf_event_paranoid));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Topology> TopologyFromJson(absl::string_view json) {
  HOTPAGE_ASSIGN_OR_RETURN(Value doc, ParseJson(json));
  if (!doc.is_object())
    return Bad("$",
               "expected an object (the output of `hotpage topology --json`)");
  Topology topo;
  HOTPAGE_RETURN_IF_ERROR(Str(Member(doc, "root"), "$.root", &topo.root));
  const Value* nodes = Member(doc, "nodes");
  if (nodes == nullptr || !nodes->is_array() || nodes->empty()) {
    return Bad("$.nodes", "expected a non-empty array of NUMA nodes");
  }
  if (nodes->size() > kMaxNodes) {
    return Bad("$.nodes", absl::StrCat("more than ", kMaxNodes, " nodes"));
  }
  std::set<int> ids, cpus_seen;
  for (size_t i = 0; i < nodes->size(); ++i) {
    const std::string p = absl::StrCat("$.nodes[", i, "]");
    NodeInfo n;
    HOTPAGE_RETURN_IF_ERROR(ParseNode((*nodes)[i], p, &n));
    if (!ids.insert(n.id).second)
      return Bad(p + ".id", absl::StrCat("node ", n.id, " listed twice"));
    if (!topo.nodes.empty() && n.id < topo.nodes.back().id) {
      return Bad(p + ".id", "nodes must be listed in ascending id order");
    }
    for (int c : n.cpus) {
      if (!cpus_seen.insert(c).second)
        return Bad(p + ".cpus", absl::StrCat("cpu ", c, " is on two nodes"));
    }
    topo.nodes.push_back(std::move(n));
  }
  // Distances: one per node (or none), 10 to itself.
  for (size_t i = 0; i < topo.nodes.size(); ++i) {
    const NodeInfo& n = topo.nodes[i];
    if (!n.distance.empty() && n.distance.size() != topo.nodes.size()) {
      return Bad(absl::StrCat("$.nodes[", i, "].distance"),
                 absl::StrCat("has ", n.distance.size(), " entries for ",
                              topo.nodes.size(), " nodes"));
    }
  }
  auto check_members = [&](const std::vector<Group>& gs,
                           const std::string& path) -> absl::Status {
    for (size_t i = 0; i < gs.size(); ++i) {
      for (int n : gs[i].nodes) {
        if (!ids.count(n)) {
          return Bad(absl::StrCat(path, "[", i, "].nodes"),
                     absl::StrCat("node ", n, " is not in $.nodes"));
        }
      }
    }
    return absl::OkStatus();
  };
  HOTPAGE_ASSIGN_OR_RETURN(
      std::vector<Group> tiers,
      Groups(Member(doc, "tiers"), "$.tiers", "rank", kMaxNodeId));
  HOTPAGE_RETURN_IF_ERROR(check_members(tiers, "$.tiers"));
  std::set<int> tiered;
  for (size_t i = 0; i < tiers.size(); ++i) {
    if (tiers[i].id != static_cast<int>(i)) {
      return Bad(absl::StrCat("$.tiers[", i, "].rank"),
                 "tiers must be ranked 0, 1, 2, ... in order");
    }
    for (int n : tiers[i].nodes) {
      if (!tiered.insert(n).second)
        return Bad("$.tiers", absl::StrCat("node ", n, " is in two tiers"));
    }
    topo.tiers.push_back(MemoryTier{tiers[i].id, tiers[i].nodes});
  }
  HOTPAGE_ASSIGN_OR_RETURN(
      std::vector<Group> kt,
      Groups(Member(doc, "kernel_tiers"), "$.kernel_tiers", "id", 1 << 20));
  HOTPAGE_RETURN_IF_ERROR(check_members(kt, "$.kernel_tiers"));
  for (const Group& g : kt)
    topo.kernel_tiers.push_back(KernelTier{g.id, g.nodes});
  HOTPAGE_ASSIGN_OR_RETURN(
      std::vector<Group> pk,
      Groups(Member(doc, "packages"), "$.packages", "id", 1 << 20));
  HOTPAGE_RETURN_IF_ERROR(check_members(pk, "$.packages"));
  for (const Group& g : pk) topo.packages.push_back(Package{g.id, g.nodes});

  if (const Value* s = Member(doc, "tier_source");
      s != nullptr && !s->is_null()) {
    if (!s->is_string()) return Bad("$.tier_source", "expected a string");
    HOTPAGE_ASSIGN_OR_RETURN(
        topo.tier_source,
        ParseTierSource(s->get<std::string>(), "$.tier_source"));
  }
  bool disagree = false;
  HOTPAGE_RETURN_IF_ERROR(Bool(Member(doc, "kernel_tiers_disagree_with_hmat"),
                               "$.kernel_tiers_disagree_with_hmat", &disagree));
  // DeriveTiers records the disagreement as "the kernel's tiers lost to
  // HMAT"; the JSON carries only the flag.
  if (disagree) topo.hmat_disagrees = TierSource::kKernel;
  HOTPAGE_RETURN_IF_ERROR(
      ParseFeatures(Member(doc, "features"), &topo.features));
  if (const Value* w = Member(doc, "warnings"); w != nullptr && !w->is_null()) {
    if (!w->is_array())
      return Bad("$.warnings", "expected an array of strings");
    for (size_t i = 0; i < w->size(); ++i) {
      if (!(*w)[i].is_string())
        return Bad(absl::StrCat("$.warnings[", i, "]"), "expected a string");
      topo.warnings.push_back((*w)[i].get<std::string>());
    }
  }

  // A hand-written file may leave out what hotpage derives: tiers (then
  // derived from HMAT or distance as on a live machine) and packages
  // (grouped by each node's "package").
  if (topo.tiers.empty()) {
    DeriveTiers(topo);
  } else {
    for (NodeInfo& n : topo.nodes) {
      n.tier.reset();
      for (const MemoryTier& t : topo.tiers) {
        if (std::find(t.nodes.begin(), t.nodes.end(), n.id) != t.nodes.end())
          n.tier = t.rank;
      }
    }
  }
  if (Member(doc, "packages") == nullptr) {
    std::map<int, std::vector<int>> by_pkg;
    for (const NodeInfo& n : topo.nodes) by_pkg[n.package].push_back(n.id);
    for (auto& [id, members] : by_pkg)
      topo.packages.push_back(Package{id, members});
  }
  return topo;
}

}  // namespace hotpage
