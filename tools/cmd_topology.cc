// `hotpage topology`: the machine's memory topology as the kernel sees it.

#include <cstdio>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "policy/topology.h"
#include "tools/base/kernel/kernel_fs.h"
#include "tools/cli.h"

namespace hotpage {

int RunTopology(const std::vector<std::string>& args) {
  const std::vector<FlagSpec> specs = {
      {"json", "", "print JSON instead of a table"},
      {"sysfs-root", "DIR",
       "read DIR/sys/... and DIR/proc/... instead of the live machine (a "
       "copied or fake "
       "tree); mempolicy support is then inferred, not probed"},
  };
  const char* synopsis = "[--json] [--sysfs-root DIR]";
  const char* description =
      "Shows every online NUMA node (CPUs, memory, free memory, SLIT "
      "distances,\n"
      "HMAT latency/bandwidth and initiators, weighted-interleave weight), "
      "the\n"
      "memory tiers and where they came from (kernel, hmat or distance), CPU\n"
      "packages, and the kernel features hotpage uses (MPOL_PREFERRED_MANY,\n"
      "MPOL_WEIGHTED_INTERLEAVE, NUMA balancing, demotion, THP, PEBS/IBS).\n"
      "Needs no privileges.";
  absl::StatusOr<ParsedFlags> flags = ParseFlags(args, specs);
  if (!flags.ok()) {
    std::cerr << "hotpage topology: " << flags.status().message()
              << "\nTry 'hotpage topology --help'.\n";
    return kExitUsage;
  }
  if (flags->Has("help")) {
    std::cout << FormatUsage("topology", synopsis, description, specs);
    return kExitOk;
  }
  if (!flags->positional().empty()) {
    std::cerr << "hotpage topology: unexpected argument '"
              << flags->positional()[0]
              << "'\nTry 'hotpage topology --help'.\n";
    return kExitUsage;
  }
  const std::string root = flags->Get("sysfs-root").value_or("/");
  absl::StatusOr<KernelFs> fs = KernelFs::Open(root);
  if (!fs.ok()) {
    std::cerr << "hotpage topology: " << fs.status().message() << "\n";
    return kExitFailure;
  }
  SyscallMempolicyProbe probe;
  absl::StatusOr<Topology> topo =
      DiscoverTopology(*fs, fs->is_live() ? &probe : nullptr);
  if (!topo.ok()) {
    std::cerr << "hotpage topology: " << topo.status().message() << "\n";
    return kExitFailure;
  }
  std::cout << (flags->Has("json") ? TopologyToJson(*topo)
                                   : TopologyToTable(*topo));
  std::cout.flush();
  return std::cout.good() ? kExitOk : kExitFailure;
}

}  // namespace hotpage
