#include "tools/engine_flags.h"

#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "tools/base/parse.h"

namespace hotpage {
namespace {

// ValidatePlacementConfig names an option by its config key ("weights:
// node 9 ...", "promote_to: ..."); here it is given as a flag ("--weights:
// node 9 ...", "--promote-to: ...").
std::string SpellAsFlag(absl::string_view message) {
  for (const FlagSpec& spec : EngineFlagSpecs()) {
    const std::string key =
        absl::StrCat(absl::StrReplaceAll(spec.name, {{"-", "_"}}), ":");
    if (absl::StartsWith(message, key)) {
      return absl::StrCat("--", spec.name, ":", message.substr(key.size()));
    }
  }
  return std::string(message);
}

}  // namespace

const std::vector<FlagSpec>& EngineFlagSpecs() {
  static const std::vector<FlagSpec>* const specs = new std::vector<FlagSpec>{
      {"promote-to", "NODES",
       "promote only to these nodes (a preferred-many mask, e.g. 0-1)"},
      {"weights", "W",
       "spread promotions over the target nodes by weight: kernel "
       "(weighted_interleave), auto (HMAT bandwidth) or 0:3,1:1"},
      {"package-aware", "",
       "prefer target nodes in the package of the CPUs that access the page"},
      {"keep-interleave", "TOL",
       "keep interleave / weighted interleave ranges within TOL (0..1) of "
       "their ratio"},
      {"huge-strict", "",
       "a 2 MiB page with a preferred node goes only there, never scattered"},
      {"locality", "",
       "move hot pages accessed from one node only to that node, within the "
       "fast tier (needs "
       "evidence from fast-tier pages: pebs, ibs or --write-faults)"},
  };
  return *specs;
}

absl::Status ParseEngineFlags(const ParsedFlags& flags,
                              PlacementConfig* config) {
  if (std::optional<std::string> w = flags.Get("weights")) {
    absl::StatusOr<WeightsConfig> weights = ParseWeights(*w);
    if (!weights.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--weights: ", weights.status().message()));
    }
    config->weights = *weights;
  }
  config->package_aware = flags.Has("package-aware");
  config->huge_strict_preferred = flags.Has("huge-strict");
  config->locality = flags.Has("locality");
  if (flags.Has("keep-interleave")) {
    absl::StatusOr<double> tol = FlagDouble(flags, "keep-interleave", 0, 0, 1);
    if (!tol.ok()) return absl::InvalidArgumentError(tol.status().message());
    config->interleave_tolerance = *tol;
  }
  return absl::OkStatus();
}

absl::Status ApplyMachineEngineFlags(const ParsedFlags& flags,
                                     const Topology& topology,
                                     PlacementConfig* config) {
  if (std::optional<std::string> p = flags.Get("promote-to")) {
    absl::StatusOr<std::vector<int>> nodes = ParseKernelList(*p);
    if (!nodes.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--promote-to: ", nodes.status().message()));
    }
    if (nodes->empty())
      return absl::InvalidArgumentError("--promote-to: empty node list");
    for (int n : *nodes) {
      if (topology.FindNode(n) == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--promote-to: node ", n, " is not an online NUMA node"));
      }
    }
    config->promote_to = *nodes;
  }
  absl::Status s = ValidatePlacementConfig(*config, topology);
  if (!s.ok()) return absl::InvalidArgumentError(SpellAsFlag(s.message()));
  return absl::OkStatus();
}

std::string EngineFlagsSummary(const ParsedFlags& flags) {
  std::vector<std::string> parts;
  for (const FlagSpec& spec : EngineFlagSpecs()) {
    if (!flags.Has(spec.name)) continue;
    if (spec.value_name.empty()) {
      parts.push_back(absl::StrCat("--", spec.name));
    } else {
      parts.push_back(absl::StrCat("--", spec.name, " ",
                                   flags.Get(spec.name).value_or("")));
    }
  }
  return absl::StrJoin(parts, " ");
}

}  // namespace hotpage
