// hotpage's own memory: where the kernel puts the pages of hotpage's own
// data (the hotness table, the policy engine's maps, the sample buffers and
// queues: about 200 bytes per tracked page, 200 MB at 1M pages).
//
// Without a policy the kernel allocates them where the allocating thread
// runs (first touch): the local node, which is the fast DRAM tier hotpage
// is keeping for the workloads' hot pages. `--self-memory` (attach and
// daemon) and `self_memory` ([daemon] in the config) choose instead:
//   slow   (the default) MPOL_PREFERRED_MANY over the slowest tier's nodes
//          where the kernel accepts it (5.15+, Topology::features.
//          preferred_many), else MPOL_PREFERRED on the slowest tier's
//          lowest node; nothing on a machine with one memory tier. A
//          policy hotpage was started with (numactl, a systemd
//          NUMAPolicy=) is kept unless slow was asked for by name.
//   local  no policy: first touch, as before this option existed.
//   NODE   MPOL_PREFERRED on that node, which must be online with memory.
// Preferred, never bind: when the preferred nodes are full the kernel
// falls back to the others, so hotpage's memory never fails for want of
// slow memory. A task policy without MPOL_F_MOF also keeps the kernel's
// NUMA balancing from scanning (and promoting) hotpage's own pages.
//
// The policy is the process's only if every thread has it: set_mempolicy(2)
// sets the calling thread's, and a thread inherits its creator's policy
// when it is created. ApplySelfMemoryPolicy must therefore run on the main
// thread before any other thread starts (attach and daemon call it before
// TerminationSignalThread::Start, their first thread); it refuses when the
// process already has another thread. What the main thread allocated
// before it (arguments, the topology: tens of KiB) stays where it is.
// Memory the kernel allocates for hotpage on a chosen node is not affected:
// the perf rings are on each CPU's node.
//
// The kernel interface is SelfMempolicy: get/set_mempolicy(2) and the
// thread count, on the calling thread and this process only. Tests use
// FakeSelfMempolicy (self_memory_fake.h).

#ifndef HOTPAGE_TOOLS_SELF_MEMORY_H_
#define HOTPAGE_TOOLS_SELF_MEMORY_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "policy/topology.h"

namespace hotpage {

// Mode numbers of <linux/mempolicy.h> that topology.h does not spell out.
inline constexpr int kMpolDefault = 0;
inline constexpr int kMpolPreferred = 1;

// --self-memory's help, the same on attach and daemon.
inline constexpr char kSelfMemoryFlagHelp[] =
    "where hotpage's own memory (its tables) goes: slow (default: preferred "
    "on the slowest tier's nodes), local (first touch: the node its threads "
    "run on, i.e. the fast tier) or a node number (preferred there)";

// The largest node id a request may name: the kernel's MAX_NUMNODES is at
// most 1 << NODES_SHIFT = 1024.
inline constexpr int kMaxSelfMemoryNode = 1023;

enum class SelfMemoryChoice { kSlow, kLocal, kNode };

struct SelfMemoryRequest {
  SelfMemoryChoice choice = SelfMemoryChoice::kSlow;
  int node = -1;       // kNode: the node
  bool given = false;  // named by a flag or the config, not the default
};

// "slow", "local" or a node number (decimal, 0 to kMaxSelfMemoryNode).
// InvalidArgument naming the accepted values otherwise. The result has
// given = true.
absl::StatusOr<SelfMemoryRequest> ParseSelfMemory(absl::string_view text);

// "slow", "local" or the node number: what ParseSelfMemory reads back.
std::string SelfMemoryRequestName(const SelfMemoryRequest& request);

// The process-wide policy a request means on a machine.
struct SelfMemoryPolicy {
  int mode = kMpolDefault;  // kMpolDefault: set nothing
  std::vector<int> nodes;   // ascending; empty with kMpolDefault
  std::string why;          // "the slowest tier", "one memory tier", ...
};

// Chooses the policy for `request` on `topology` (pure). InvalidArgument
// when a node was named that is not online with memory; the message names
// the nodes that are ("node 7 is not an online node with memory (nodes
// with memory: 0-1)"), for the caller to prefix with the flag or key.
absl::StatusOr<SelfMemoryPolicy> ChooseSelfMemoryPolicy(
    const SelfMemoryRequest& request, const Topology& topology);

// The policy in words, the one wording of `hotpage daemon --check` and of
// the start-up line (SelfMemoryReport::line): "preferred on node 1 (the
// slowest tier)", "preferred on nodes 2-3 (the slowest tier,
// MPOL_PREFERRED_MANY)", or its `why` when it sets nothing ("first touch:
// one memory tier, no slower memory to prefer").
std::string DescribeSelfMemoryPolicy(const SelfMemoryPolicy& policy);

// The kernel interface: the calling thread's memory policy, and this
// process's thread count. Nothing here can touch another process.
class SelfMempolicy {
 public:
  virtual ~SelfMempolicy() = default;
  // Threads in this process, the caller included; an error when it cannot
  // be read (no /proc): the caller then does not check.
  virtual absl::StatusOr<int> Threads() = 0;
  // The calling thread's mode, flags masked off (get_mempolicy(2) with no
  // address and no flags).
  virtual absl::StatusOr<int> CurrentMode() = 0;
  // set_mempolicy(2) on the calling thread. `nodes` are ids up to
  // kMaxSelfMemoryNode.
  virtual absl::Status Set(int mode, const std::vector<int>& nodes) = 0;
};

// The live interface: /proc/self/task, get_mempolicy(2), set_mempolicy(2).
class SyscallSelfMempolicy : public SelfMempolicy {
 public:
  // Waits up to 100 ms for threads that were joined but have not yet left
  // /proc/self/task (the kernel wakes the joiner before it releases the
  // thread): DiscoverTopology's probe thread, just before.
  absl::StatusOr<int> Threads() override;
  absl::StatusOr<int> CurrentMode() override;
  absl::Status Set(int mode, const std::vector<int>& nodes) override;
};

// What is in force for hotpage's own memory after ApplySelfMemoryPolicy.
struct SelfMemoryReport {
  std::string requested;  // SelfMemoryRequestName
  // "preferred-many", "preferred", "default" (first touch) or "inherited"
  // (the policy hotpage was started with, kept).
  std::string mode;
  std::vector<int> nodes;  // of preferred-many and preferred
  // For the start-up summary: "hotpage's own memory: " and
  // DescribeSelfMemoryPolicy ("preferred on node 1 (the slowest tier)"), or
  // what was kept or failed instead.
  std::string line;
  // Set when the default's set_mempolicy failed and hotpage goes on with
  // first touch: a warning for the log.
  std::string warning;
};

// Sets `policy` (ChooseSelfMemoryPolicy's for `request`) on the calling
// thread through `kernel`. Call it on the main thread before any other
// thread starts: FailedPrecondition when the process has another thread
// (a start-up order bug: the threads started before would keep first
// touch). A failing set_mempolicy is an error when the request was given,
// and a warning (report.warning, first touch) for the default.
absl::StatusOr<SelfMemoryReport> ApplySelfMemoryPolicy(
    const SelfMemoryRequest& request, const SelfMemoryPolicy& policy,
    SelfMempolicy& kernel);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_SELF_MEMORY_H_
