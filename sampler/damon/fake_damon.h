// FakeDamonKernel: DAMON's sysfs interface (mm/damon/sysfs.c,
// sysfs-schemes.c, core.c as of Linux 6.12) played on a FakeTree, with
// SEVERAL targets per context, per-scheme DAMOS filters and online commit,
// for tests of the shared (multi-target) DamonSource and of the daemon's
// MachineDamon.
//
// What it models (each point checked against the kernel source; see
// sampler/damon/damon_source.h, "Several processes in one context"):
//   - The sysfs files are parameters only: nothing reaches the running
//     kdamond before `on` or `commit` is written to kdamonds/0/state.
//   - nr_targets, nr_schemes and filters/nr_filters re-create EVERY child
//     directory with defaults (damon_sysfs_targets_add_dirs() and friends
//     remove the old ones first): pid_target 0; action stat, an access
//     pattern of 0..0 (matches nothing); filter type anon, matching N.
//   - `on` and `commit` resolve each pid_target with find_get_pid(): a pid
//     without a /proc/PID is EINVAL for `on`; for `commit` 6.12 returns
//     success to the writer and STOPS the kdamond (the commit callback's
//     error breaks kdamond_fn's loop; 6.15 added input validation).
//   - commit matches targets BY INDEX (damon_commit_targets()): index i of
//     the running context takes the pid of sysfs target i and keeps its
//     regions; extra running targets are destroyed, new ones appended. A
//     pid changed in place keeps the old process's regions, so the next
//     update still reports the OLD process's regions for that index (one
//     update here; in the kernel until the next ops update).
//   - update_schemes_tried_regions: each scheme's tried_regions get the
//     regions of every target that passes its filters (a filter of type
//     target filters out a region when (index == target_idx) == matching),
//     numbered 0, 1, ... across targets, WITHOUT saying which target.
//     A scheme whose sz max is 0 matches nothing. A target whose process
//     exited contributes nothing; when every target's process exited the
//     kdamond stops by itself.
//   - Filter types of 6.12: anon, memcg, young, addr, target (others
//     EINVAL); a filter's index file is damon_target_idx (as the kernel
//     names the attribute), not target_idx.
//
// Single-threaded (the DamonSource under test serializes its writes).

#ifndef HOTPAGE_SAMPLER_DAMON_FAKE_DAMON_H_
#define HOTPAGE_SAMPLER_DAMON_FAKE_DAMON_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sampler/damon/damon_region.h"
#include "tools/base/kernel/fake_sysfs_writer.h"
#include "tools/base/kernel/fake_tree.h"
#include "tools/base/kernel/kernel_fs.h"
#include "tools/base/kernel/sysfs_writer.h"

namespace hotpage {

class FakeDamonKernel {
 public:
  static constexpr char kAdmin[] = "/sys/kernel/mm/damon/admin";
  // The pid /proc/self/stat names (the tests' "hotpage").
  static constexpr pid_t kSelfPid = 99;

  FakeDamonKernel();

  // A process: /proc/PID/stat with this start time (field 22).
  void AddProcess(pid_t pid, uint64_t start_time_ticks);
  // The process exits: /proc/PID goes; targets on it see nothing more, and
  // the kdamond stops when no target's process is left.
  void ExitProcess(pid_t pid);
  // What DAMON finds in process `pid` (sorted, non-overlapping).
  void SetRegions(pid_t pid, std::vector<DamonRegion> regions);

  // Runs `fn` when "rel=value" is written, before the kernel acts on it
  // (once).
  void BeforeWrite(const std::string& what, std::function<void()> fn) {
    before_[what] = std::move(fn);
  }

  KernelFs Fs() const;
  std::unique_ptr<SysfsWriter> NewWriter() { return log_.NewWriter(); }
  std::string state_dir() const { return tree_.root() + "/run/hotpage"; }
  FakeTree& tree() { return tree_; }
  std::string Read(absl::string_view rel) const;
  // Writes relative to the admin dir ("kdamonds/0/state=commit").
  std::vector<std::string> Writes() const;
  void ClearWrites() { log_.clear(); }

  // The running context.
  bool running() const { return running_; }
  // Pid of each running target, by index.
  std::vector<pid_t> running_targets() const;
  // Per index: a number that changes whenever that index's monitoring
  // starts afresh (its pid changed, or the kdamond was started again).
  std::vector<uint64_t> generations() const;
  int ons() const { return ons_; }
  int commits() const { return commits_; }

 private:
  struct Filter {
    std::string type;
    bool matching = false;
    int target_idx = 0;
  };
  struct Scheme {
    bool matches_nothing = true;
    std::vector<Filter> filters;
  };
  struct Target {
    pid_t pid = 0;
    uint64_t generation = 0;
    pid_t stale_pid = 0;  // reported instead of pid for one update
  };

  static std::string Path(absl::string_view rel);
  int Hook(absl::string_view path, absl::string_view value);
  int State(absl::string_view value);
  bool Alive(pid_t pid) const;
  // Reads the sysfs parameters; false if a pid_target has no process.
  bool ReadParams(std::vector<pid_t>* pids, std::vector<Scheme>* schemes) const;
  void UpdateTriedRegions();
  void Stop();
  void RemoveAll(const std::string& path);

  FakeTree tree_;
  FakeSysfsLog log_;
  std::map<pid_t, std::vector<DamonRegion>> regions_;
  bool running_ = false;
  std::vector<Target> targets_;
  std::vector<Scheme> schemes_;
  uint64_t next_generation_ = 1;
  int ons_ = 0;
  int commits_ = 0;
  std::map<std::string, std::function<void()>> before_;
};

}  // namespace hotpage

#endif  // HOTPAGE_SAMPLER_DAMON_FAKE_DAMON_H_
