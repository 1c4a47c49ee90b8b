// hotpage: keeps a workload's hot pages in fast memory and its cold pages
// out of the way, on tiered-memory Linux machines.

#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "tools/build_commit.h"  // generated: HOTPAGE_GIT_COMMIT
#include "tools/cli.h"
#include "tools/version.h"

namespace hotpage {
namespace {

constexpr Subcommand kSubcommands[] = {
    {"topology",
     "show NUMA nodes, memory tiers, HMAT, packages and kernel features",
     &RunTopology},
    {"attach",
     "keep a process's hot pages on fast memory and cold pages off it",
     &RunAttach},
    {"record", "sample memory accesses of processes into an .hpt trace",
     &RunRecord},
    {"import", "convert a perf.data file into an .hpt trace", &RunImport},
    {"dump", "print an .hpt trace: one sample per line, then its counts",
     &RunDump},
    {"simulate",
     "replay a trace through hotpage and baseline policies on simulated tiers",
     &RunSimulate},
    {"doctor",
     "say what works on this machine for hotpage, why not, and the fix",
     &RunDoctor},
    {"daemon",
     "manage every configured workload (cgroups, names, pids) as a service",
     &RunDaemon},
    {"status", "ask the running daemon about its workloads", &RunStatus},
};

void PrintUsage(std::ostream& os) {
  os << "Usage: hotpage COMMAND [OPTIONS]\n\n"
        "A page-placement engine for tiered memory (DRAM + CXL or slower NUMA "
        "nodes).\n\n"
        "Commands:\n";
  for (const Subcommand& c : kSubcommands) {
    std::string name = c.name;
    os << "  " << name
       << std::string(name.size() < 12 ? 12 - name.size() : 1, ' ') << c.summary
       << "\n";
  }
  os << "\nOptions:\n"
        "  -h, --help  show this help ('hotpage COMMAND --help' shows a "
        "command's)\n"
        "  --version   print the version and the git commit hotpage was built "
        "from\n"
        "              (every command takes it)\n";
}

}  // namespace
}  // namespace hotpage

int main(int argc, char** argv) {
  using hotpage::kSubcommands;
  if (argc < 2) {
    hotpage::PrintUsage(std::cerr);
    return hotpage::kExitUsage;
  }
  std::string cmd = argv[1];
  if (cmd == "--version") {
    std::cout << hotpage::VersionLine(HOTPAGE_GIT_COMMIT) << "\n";
    return hotpage::kExitOk;
  }
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    if (cmd == "help" && argc >= 3) {
      for (const hotpage::Subcommand& c : kSubcommands) {
        if (c.name == std::string(argv[2])) return c.run({"--help"});
      }
    }
    hotpage::PrintUsage(std::cout);
    return hotpage::kExitOk;
  }
  for (const hotpage::Subcommand& c : kSubcommands) {
    if (cmd != c.name) continue;
    std::vector<std::string> args(argv + 2, argv + argc);
    if (hotpage::AsksForVersion(args)) {
      std::cout << hotpage::VersionLine(HOTPAGE_GIT_COMMIT) << "\n";
      return hotpage::kExitOk;
    }
    return c.run(args);
  }
  std::cerr << "hotpage: unknown command '" << cmd << "'\n\n";
  hotpage::PrintUsage(std::cerr);
  return hotpage::kExitUsage;
}
