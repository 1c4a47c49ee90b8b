// CommandEnv: the machine a subcommand runs on, injected, so that tests run
// `record` (and `attach`) in-process over a machine profile
// (tests/pmu/profiles/) and a FakePerfKernel
// (sampler/perf/testing/fake_perf_kernel.h). RunRecord() is RecordMain()
// with the live machine: KernelFs at "/" and LinuxPerfEventSystem.
//
// Only the kernel seams are injected (every sysfs/procfs read, every
// perf_event_open/mmap/ioctl, attach's hint-fault sysctl take-over, which
// writes the live /proc/sys, and attach's own memory policy); the
// process's other system calls (fork, signals, pidfd, the trace file) stay
// real.

#ifndef HOTPAGE_TOOLS_CMD_ENV_H_
#define HOTPAGE_TOOLS_CMD_ENV_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sampler/hintfault/numa_balancing_controller.h"
#include "sampler/perf/perf_event_system.h"
#include "tools/base/kernel/kernel_fs.h"
#include "tools/self_memory.h"

namespace hotpage {

// Starts `attach --source hintfault`'s sysctl take-over
// (NumaBalancingController::Start, which writes the live /proc/sys).
using HintFaultStart =
    std::function<absl::StatusOr<std::unique_ptr<NumaBalancingController>>(
        const NumaBalancingOptions&)>;

struct CommandEnv {
  const KernelFs* fs = nullptr;     // sysfs and procfs
  PerfEventSystem* perf = nullptr;  // perf events
  // Empty: NumaBalancingController::Start.
  HintFaultStart start_hintfault;
  // hotpage's own memory policy (tools/self_memory.h); null:
  // SyscallSelfMempolicy, which sets the calling process's.
  SelfMempolicy* self_mempolicy = nullptr;
};

// `hotpage record` (cmd_record.cc) on `env`; args as RunRecord's.
int RecordMain(const std::vector<std::string>& args, const CommandEnv& env);

// `hotpage attach` (cmd_attach.cc) on `env`; args as RunAttach's.
int AttachMain(const std::vector<std::string>& args, const CommandEnv& env);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_CMD_ENV_H_
