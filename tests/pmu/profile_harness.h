// ProfileRun: `hotpage record` run in-process on a machine profile
// (tests/pmu/profiles/NAME) over a FakePerfKernel
// (sampler/perf/testing/fake_perf_kernel.h), for the end-to-end profile
// tests.
//
// Start() copies the profile into a fresh tree, forks a target process
// (a child that waits in pause()) and adds its /proc/PID/stat to the tree,
// so that ProcessHandle attaches to it as to any process; the fake kernel
// knows the same task. Record() runs RecordMain() (tools/cmd_env.h) with
// --pid TARGET, plays the scripted accesses once every opened event is
// enabled, and returns the exit code, stderr and the samples of the trace.

#ifndef HOTPAGE_TESTS_PMU_PROFILE_HARNESS_H_
#define HOTPAGE_TESTS_PMU_PROFILE_HARNESS_H_

#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sampler/perf/testing/fake_perf_kernel.h"
#include "sampler/sample.h"
#include "tools/base/kernel/fake_tree.h"
#include "tools/base/kernel/kernel_fs.h"
#include "tools/cmd_env.h"
#include "tools/self_memory_fake.h"

namespace hotpage {

struct RecordResult {
  int exit_code = -1;
  std::string err;              // stderr
  std::vector<Sample> samples;  // the trace's, in file order
  std::string trace_source;     // the trace header's source
  std::string stats_json;       // attach: the last --stats-json
};

class ProfileRun {
 public:
  // The profile's directory in the runfiles.
  static std::string ProfileDir(const std::string& name);
  // Copies the profile's files (not the runfiles' symlinks) under `dest`.
  static void CopyProfile(const std::string& name, const std::string& dest);
  explicit ProfileRun(const std::string& name);
  ~ProfileRun();

  pid_t target() const { return target_; }
  // Another process to record (record --pid for each); returns its pid.
  pid_t AddTarget();
  // Runs after the script was delivered (e.g. to make a task exit).
  void set_after_script(std::function<void(FakePerfKernel&)> f) {
    after_script_ = std::move(f);
  }
  FakePerfKernel& kernel() { return *kernel_; }
  // What `attach --source hintfault` calls instead of taking over the
  // live sysctls (CommandEnv::start_hintfault).
  void set_start_hintfault(HintFaultStart f) {
    start_hintfault_ = std::move(f);
  }
  // attach's own memory policy (CommandEnv::self_mempolicy): records the
  // Set calls; its Threads() counts the threads of this process that the
  // command started (1 while it has started none).
  FakeSelfMempolicy& self_mempolicy() { return self_mempolicy_; }
  FakeTree& tree() { return tree_; }
  // Re-reads the tree (after tests changed files in it).
  void Reload();

  // Writes CapEff into /proc/self/status and the fake's cap_perfmon.
  void SetPrivileged(bool privileged);
  // Writes kernel.perf_event_paranoid into the tree and the fake.
  void SetParanoid(int64_t paranoid);

  RecordResult Record(const std::vector<std::string>& extra_args,
                      const std::vector<FakeAccess>& script);

  // `hotpage attach --pid TARGET --dry-run` for a short while: the tree
  // gets two memory tiers (tests/testdata/sysfs/dram-cxl's nodes, node 0
  // holding the profile's CPUs) and the target's /proc files, copied from
  // the live ones.
  RecordResult Attach(const std::vector<std::string>& extra_args,
                      const std::vector<FakeAccess>& script);

 private:
  FakeTree tree_;
  pid_t target_ = -1;
  std::vector<pid_t> more_targets_;
  std::function<void(FakePerfKernel&)> after_script_;
  std::optional<KernelFs> fs_;
  std::unique_ptr<FakePerfKernel> kernel_;
  HintFaultStart start_hintfault_;
  FakeSelfMempolicy self_mempolicy_;

  template <typename Main>
  RecordResult Run(Main main, const std::vector<std::string>& args,
                   const std::vector<FakeAccess>& script);
};

// `n` loads by the target on each CPU in `cpus`, 1 ms apart (below every
// throttle), at distinct addresses, each with its own weight and data_src.
std::vector<FakeAccess> LoadsOnCpus(pid_t pid, const std::vector<int>& cpus,
                                    int n, bool page_fault = false);

// An L3-hit, a remote-DRAM and a local-DRAM load, as Intel's PEBS reports
// them (perf_mem_data_src): the script cycles through them.
uint64_t ScriptDataSrc(int i);

}  // namespace hotpage

#endif  // HOTPAGE_TESTS_PMU_PROFILE_HARNESS_H_
