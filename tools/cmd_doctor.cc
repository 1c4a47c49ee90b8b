// `hotpage doctor`: what works on this machine and why not (tools/doctor.h
// computes the facts; this file reads the live values it needs and prints).

#include <sys/resource.h>
#include <unistd.h>

#include <iostream>

#include "absl/strings/str_cat.h"
#include "policy/topology.h"
#include "sampler/write_fault_rearm.h"
#include "tools/base/kernel/kernel_fs.h"
#include "tools/cli.h"
#include "tools/doctor.h"

namespace hotpage {

int RunDoctor(const std::vector<std::string>& args) {
  const std::vector<FlagSpec> specs = {
      {"json", "", "print one JSON object: source, source_ok, facts"},
      {"sysfs-root", "DIR",
       "read DIR/sys/... and DIR/proc/... instead of the live machine (a "
       "copied or fake tree); paths cannot lead out of DIR"},
      {"pid", "PID",
       "also check the target: that it exists, move_pages(2) permission on "
       "it, and descriptors for its threads"},
      {"source", "SRC",
       "the source to check: auto (default: the one attach would take), "
       "pebs, ibs, pagefault, hintfault or damon"},
  };
  const char* synopsis =
      "[--json] [--sysfs-root DIR] [--pid PID] [--source SRC]";
  const char* description =
      "Says what works on this machine for hotpage and why not, one line per\n"
      "fact (\"ok\" or \"no\", the name, what was found, and the fix): the\n"
      "PMUs and their CPUs (PEBS, IBS, hybrid cpu_core/cpu_atom), the source\n"
      "--source auto would take and why, its perf events, the privileges\n"
      "(CAP_PERFMON, CAP_SYS_NICE, CAP_SYS_ADMIN, CAP_SYS_PTRACE,\n"
      "perf_event_paranoid), RLIMIT_NOFILE against the descriptors the plan\n"
      "needs, kernel features (MPOL_PREFERRED_MANY, weighted interleave,\n"
      "memory tiers, HMAT, DAMON and busy kdamonds, soft-dirty), NUMA\n"
      "balancing and demotion when the kernel's own tiering would fight\n"
      "hotpage, and with --pid the move_pages permission on the target.\n"
      "Changes nothing. Exit status 0 when the source can run, 1 when it\n"
      "cannot, 2 on a bad command line.";
  absl::StatusOr<ParsedFlags> flags = ParseFlags(args, specs);
  if (!flags.ok()) {
    std::cerr << "hotpage doctor: " << flags.status().message()
              << "\nTry 'hotpage doctor --help'.\n";
    return kExitUsage;
  }
  if (flags->Has("help")) {
    std::cout << FormatUsage("doctor", synopsis, description, specs);
    return kExitOk;
  }
  if (!flags->positional().empty()) {
    std::cerr << "hotpage doctor: unexpected argument '"
              << flags->positional()[0] << "'\nTry 'hotpage doctor --help'.\n";
    return kExitUsage;
  }
  DoctorEnv env;
  env.source = flags->Get("source").value_or("auto");
  if (flags->Has("pid")) {
    absl::StatusOr<int64_t> pid = FlagInt(*flags, "pid", 0, 1, 1 << 22);
    if (!pid.ok()) {
      std::cerr << "hotpage doctor: " << pid.status().message()
                << "\nTry 'hotpage doctor --help'.\n";
      return kExitUsage;
    }
    env.pid = *pid;
  }
  const std::string root = flags->Get("sysfs-root").value_or("/");
  absl::StatusOr<KernelFs> fs = KernelFs::Open(root);
  if (!fs.ok()) {
    std::cerr << "hotpage doctor: " << fs.status().message() << "\n";
    return kExitFailure;
  }
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
    env.nofile_soft = rl.rlim_cur;
    env.nofile_hard = rl.rlim_max;
  }
  env.uid = getuid();
  env.gid = getgid();
  SyscallMempolicyProbe mempolicy;
  if (fs->is_live()) {
    // Costs one write fault on hotpage's own memory (write_fault_rearm.h).
    env.soft_dirty_probe = ProbeSoftDirty();
    env.mempolicy_probe = &mempolicy;
  }
  absl::StatusOr<DoctorReport> report = Diagnose(*fs, env);
  if (!report.ok()) {
    std::cerr << "hotpage doctor: " << report.status().message()
              << "\nTry 'hotpage doctor --help'.\n";
    return kExitUsage;
  }
  std::cout << (flags->Has("json") ? DoctorToJson(*report)
                                   : DoctorToText(*report));
  std::cout.flush();
  if (!std::cout.good()) return kExitFailure;
  return report->source_ok ? kExitOk : kExitFailure;
}

}  // namespace hotpage
