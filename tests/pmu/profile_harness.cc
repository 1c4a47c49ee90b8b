#include "tests/pmu/profile_harness.h"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "sampler/trace/trace_reader.h"
#include "tools/cmd_env.h"

namespace hotpage {

std::string ProfileRun::ProfileDir(const std::string& name) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* ws = std::getenv("TEST_WORKSPACE");
  return absl::StrCat(srcdir ? srcdir : ".", "/", ws ? ws : "hotpage",
                      "/tests/pmu/profiles/", name);
}

void ProfileRun::CopyProfile(const std::string& name, const std::string& dest) {
  // Symlinks are followed: the copy holds the files themselves.
  std::filesystem::copy(ProfileDir(name), dest,
                        std::filesystem::copy_options::recursive |
                            std::filesystem::copy_options::overwrite_existing);
}

namespace {

// A process that waits in pause(), with its /proc/PID/stat in `tree`.
pid_t StartTarget(FakeTree& tree) {
  const pid_t pid = fork();
  if (pid == 0) {
    for (;;) pause();
  }
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::stringstream stat;
  stat << in.rdbuf();
  tree.Write(absl::StrCat("/proc/", pid, "/stat"), stat.str());
  return pid;
}

void StopTarget(pid_t pid) {
  if (pid > 0) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
}

}  // namespace

ProfileRun::ProfileRun(const std::string& name) {
  CopyProfile(name, tree_.root());
  target_ = StartTarget(tree_);
  Reload();
}

ProfileRun::~ProfileRun() {
  kernel_.reset();
  StopTarget(target_);
  for (pid_t p : more_targets_) StopTarget(p);
}

pid_t ProfileRun::AddTarget() {
  const pid_t pid = StartTarget(tree_);
  more_targets_.push_back(pid);
  kernel_->AddTask(pid);
  return pid;
}

void ProfileRun::Reload() {
  fs_.reset();
  absl::StatusOr<KernelFs> fs = KernelFs::Open(tree_.root());
  ASSERT_TRUE(fs.ok()) << fs.status();
  fs_.emplace(std::move(*fs));
  absl::StatusOr<FakeKernelConfig> config = LoadMachineProfile(*fs_);
  ASSERT_TRUE(config.ok()) << config.status();
  kernel_ = std::make_unique<FakePerfKernel>(std::move(*config));
  kernel_->AddTask(target_);
}

void ProfileRun::SetPrivileged(bool privileged) {
  tree_.Write(
      "/proc/self/status",
      absl::StrCat("Name:\thotpage\nCapEff:\t",
                   privileged ? "000001ffffffffff" : "0000000000000000", "\n"));
  kernel_->mutable_config().cap_perfmon = privileged;
}

void ProfileRun::SetParanoid(int64_t paranoid) {
  tree_.Write("/proc/sys/kernel/perf_event_paranoid",
              absl::StrCat(paranoid, "\n"));
  kernel_->mutable_config().paranoid = paranoid;
}

template <typename Main>
RecordResult ProfileRun::Run(Main main, const std::vector<std::string>& args,
                             const std::vector<FakeAccess>& script) {
  RecordResult r;
  bool played = false;
  FakePerfKernel* k = kernel_.get();
  kernel_->set_on_enable([&] {
    if (!played && k->all_enabled()) {
      played = true;
      k->DeliverAll(script);
      if (after_script_) after_script_(*k);
    }
  });
  // stderr into a file for the duration of the run.
  const std::string err_path = absl::StrCat(tree_.root(), "/stderr.txt");
  fflush(stderr);
  const int saved = dup(2);
  const int errfd = open(err_path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
  dup2(errfd, 2);
  close(errfd);
  // The threads the command starts: this process's, less those it had.
  SyscallSelfMempolicy live;
  const absl::StatusOr<int> before = live.Threads();
  self_mempolicy_.threads_fn = [&live, before]() -> absl::StatusOr<int> {
    absl::StatusOr<int> now = live.Threads();
    if (!now.ok() || !before.ok()) return now;
    return *now - *before + 1;
  };
  r.exit_code = main(args, CommandEnv{&*fs_, kernel_.get(), start_hintfault_,
                                      &self_mempolicy_});
  self_mempolicy_.threads_fn = nullptr;
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  kernel_->set_on_enable(nullptr);
  std::ifstream in(err_path);
  std::stringstream err;
  err << in.rdbuf();
  r.err = err.str();
  std::cerr << "--- stderr ---\n" << r.err << "---\n";
  return r;
}

RecordResult ProfileRun::Record(const std::vector<std::string>& extra_args,
                                const std::vector<FakeAccess>& script) {
  const std::string out = absl::StrCat(tree_.root(), "/out.hpt");
  std::vector<std::string> args = {"--pid",  absl::StrCat(target_), "-o",
                                   out,      "--duration",          "0.3",
                                   "--quiet"};
  for (pid_t p : more_targets_) {
    args.push_back("--pid");
    args.push_back(absl::StrCat(p));
  }
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  RecordResult r = Run(RecordMain, args, script);
  if (r.exit_code != 0) return r;
  absl::StatusOr<std::unique_ptr<TraceReader>> reader = TraceReader::Open(out);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return r;
  r.trace_source = (*reader)->header().source;
  for (;;) {
    absl::StatusOr<absl::Span<const Sample>> block = (*reader)->Next();
    EXPECT_TRUE(block.ok()) << block.status();
    if (!block.ok() || block->empty()) break;
    r.samples.insert(r.samples.end(), block->begin(), block->end());
  }
  return r;
}

RecordResult ProfileRun::Attach(const std::vector<std::string>& extra_args,
                                const std::vector<FakeAccess>& script) {
  // Two tiers from the captured 6.12 guest: its node and memory-tier
  // directories, with node 0 holding this profile's CPUs.
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* ws = std::getenv("TEST_WORKSPACE");
  const std::string tiers =
      absl::StrCat(srcdir ? srcdir : ".", "/", ws ? ws : "hotpage",
                   "/tests/testdata/sysfs/dram-cxl");
  for (const char* dir :
       {"/sys/devices/system/node", "/sys/devices/virtual/memory_tiering",
        "/sys/kernel/mm"}) {
    std::filesystem::create_directories(tree_.root() + dir);
    std::filesystem::copy(
        tiers + dir, tree_.root() + dir,
        std::filesystem::copy_options::recursive |
            std::filesystem::copy_options::overwrite_existing);
  }
  absl::StatusOr<std::vector<int>> cpus =
      fs_->ReadList("/sys/devices/system/cpu/online");
  EXPECT_TRUE(cpus.ok());
  std::string list;
  for (int c : cpus.ok() ? *cpus : std::vector<int>{}) {
    absl::StrAppend(&list, list.empty() ? "" : ",", c);
    tree_.Write(absl::StrCat("/sys/devices/system/cpu/cpu", c,
                             "/topology/physical_package_id"),
                "0\n");
  }
  tree_.Write("/sys/devices/system/node/node0/cpulist", list + "\n");
  for (const char* f : {"numa_maps", "maps", "statm", "smaps"}) {
    std::ifstream in(absl::StrCat("/proc/", target_, "/", f));
    std::stringstream text;
    text << in.rdbuf();
    tree_.Write(absl::StrCat("/proc/", target_, "/", f), text.str());
  }
  const std::string stats = absl::StrCat(tree_.root(), "/stats.json");
  std::vector<std::string> args = {"--pid",        absl::StrCat(target_),
                                   "--dry-run",    "--duration",
                                   "0.5",          "--interval-ms",
                                   "100",          "--quiet",
                                   "--stats-json", stats};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  RecordResult r = Run(AttachMain, args, script);
  std::ifstream in(stats);
  std::stringstream text;
  text << in.rdbuf();
  r.stats_json = text.str();
  return r;
}

uint64_t ScriptDataSrc(int i) {
  switch (i % 3) {
    case 0:  // L3 hit
      return PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, HIT) | PERF_MEM_S(LVL, L3) |
             PERF_MEM_S(LVLNUM, L3) | PERF_MEM_S(TLB, HIT) |
             PERF_MEM_S(TLB, L1);
    case 1:  // remote DRAM
      return PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, HIT) |
             PERF_MEM_S(LVL, REM_RAM1) | PERF_MEM_S(LVLNUM, RAM) |
             PERF_MEM_S(REMOTE, REMOTE) | PERF_MEM_S(TLB, HIT) |
             PERF_MEM_S(TLB, L1);
    default:  // local DRAM
      return PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, HIT) |
             PERF_MEM_S(LVL, LOC_RAM) | PERF_MEM_S(LVLNUM, RAM) |
             PERF_MEM_S(TLB, HIT) | PERF_MEM_S(TLB, L1);
  }
}

std::vector<FakeAccess> LoadsOnCpus(pid_t pid, const std::vector<int>& cpus,
                                    int n, bool page_fault) {
  std::vector<FakeAccess> out;
  int i = 0;
  for (int k = 0; k < n; ++k) {
    for (int cpu : cpus) {
      FakeAccess a;
      a.pid = pid;
      a.tid = pid;
      a.cpu = cpu;
      a.addr = 0x7f0000000000ull + uint64_t(i) * 4096 + 64 * (i % 7);
      a.weight = 40 + 10 * static_cast<uint32_t>(i);
      a.data_src = ScriptDataSrc(i);
      a.time_ns = 1'000'000 * uint64_t(i + 1);
      a.page_fault = page_fault;
      out.push_back(a);
      ++i;
    }
  }
  return out;
}

}  // namespace hotpage
