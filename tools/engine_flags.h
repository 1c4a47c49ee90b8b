// The engine flags: the placement rules of policy/placement.h as command-line
// flags, parsed in one place for every command that runs the policy engine.
//
// `hotpage attach` runs the engine on a live process and `hotpage simulate`
// runs the same engine on a trace; both take these flags with the same
// --help lines and the same error messages, so that every rule attach can
// apply can also be scored in the simulator:
//
//   --promote-to NODES    PlacementConfig::promote_to (needs the machine)
//   --weights W           PlacementConfig::weights    (rule W)
//   --package-aware       PlacementConfig::package_aware (rule P)
//   --keep-interleave TOL PlacementConfig::interleave_tolerance (rule I)
//   --huge-strict         PlacementConfig::huge_strict_preferred (rule H)
//   --locality            PlacementConfig::locality (rule L)
//
// A command lists EngineFlagSpecs() among its own flags, calls
// ParseEngineFlags() with the rest of its command line (everything that
// needs no knowledge of the machine), and ApplyMachineEngineFlags() once it
// knows the machine (a live topology, or the simulator's). What a rule
// needs from its input (numa_maps ranges, accessor CPUs, huge pages) is the
// caller's to provide; a caller that cannot provide it says so.

#ifndef HOTPAGE_TOOLS_ENGINE_FLAGS_H_
#define HOTPAGE_TOOLS_ENGINE_FLAGS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "policy/placement.h"
#include "policy/topology.h"
#include "tools/cli.h"

namespace hotpage {

// The flags above with their --help lines, in the order commands list them.
const std::vector<FlagSpec>& EngineFlagSpecs();

// Reads --weights, --package-aware, --keep-interleave, --huge-strict and
// --locality from `flags` into `config` (other fields untouched).
// InvalidArgument naming the flag for a malformed value (a usage error).
absl::Status ParseEngineFlags(const ParsedFlags& flags,
                              PlacementConfig* config);

// Reads --promote-to NODES, each of which must be a node of `topology`,
// then checks the whole `config` against it (ValidatePlacementConfig: the
// weights resolve, e.g. --weights auto needs HMAT bandwidth). Errors are
// usage errors and name the flag or the node.
absl::Status ApplyMachineEngineFlags(const ParsedFlags& flags,
                                     const Topology& topology,
                                     PlacementConfig* config);

// The engine flags given, as a command line ("--weights 0:3,1:1
// --package-aware"), in EngineFlagSpecs() order; empty when none was.
std::string EngineFlagsSummary(const ParsedFlags& flags);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_ENGINE_FLAGS_H_
