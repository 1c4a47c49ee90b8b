#include "tools/self_memory.h"

#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "tools/base/parse.h"

namespace hotpage {
namespace {

// <linux/mempolicy.h>: the mode flags get_mempolicy may OR into the mode.
constexpr int kMpolModeFlags = (1 << 15) | (1 << 14) | (1 << 13);

// A nodemask of kMaxSelfMemoryNode + 1 bits, as set_mempolicy(2) reads it.
constexpr size_t kMaskBits = kMaxSelfMemoryNode + 1;
constexpr size_t kWordBits = 8 * sizeof(unsigned long);

std::string NodeWord(const std::vector<int>& nodes) {
  return nodes.size() == 1 ? "node" : "nodes";
}

std::string ModeName(int mode) {
  switch (mode) {
    case kMpolDefault:
      return "default";
    case kMpolPreferred:
      return "preferred";
    case kMpolPreferredMany:
      return "preferred-many";
  }
  return absl::StrCat("mode ", mode);
}

// The kernel's name of a mode get_mempolicy returns (as numa_maps prints
// it), for the line that says an inherited policy is kept.
std::string KernelModeName(int mode) {
  switch (mode) {
    case 0:
      return "default";
    case 1:
      return "prefer";
    case 2:
      return "bind";
    case 3:
      return "interleave";
    case 4:
      return "local";
    case 5:
      return "prefer (many)";
    case 6:
      return "weighted interleave";
  }
  return absl::StrCat("mode ", mode);
}

std::string NodesWithMemory(const Topology& topo) {
  std::vector<int> ids;
  for (const NodeInfo& n : topo.nodes) {
    if (n.memory_bytes > 0) ids.push_back(n.id);
  }
  return ids.empty() ? std::string("none") : FormatKernelList(ids);
}

}  // namespace

absl::StatusOr<SelfMemoryRequest> ParseSelfMemory(absl::string_view text) {
  SelfMemoryRequest r;
  r.given = true;
  if (text == "slow") return r;
  if (text == "local") {
    r.choice = SelfMemoryChoice::kLocal;
    return r;
  }
  int node = -1;
  // Digits only: no sign, no spaces, no "0x".
  const bool digits =
      !text.empty() && text.size() <= 4 &&
      std::all_of(text.begin(), text.end(), [](char c) {
        return absl::ascii_isdigit(static_cast<unsigned char>(c));
      });
  if (digits && absl::SimpleAtoi(text, &node) && node >= 0 &&
      node <= kMaxSelfMemoryNode) {
    r.choice = SelfMemoryChoice::kNode;
    r.node = node;
    return r;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("'", text, "' is not slow, local or a node number (0 to ",
                   kMaxSelfMemoryNode, ")"));
}

std::string SelfMemoryRequestName(const SelfMemoryRequest& request) {
  switch (request.choice) {
    case SelfMemoryChoice::kSlow:
      return "slow";
    case SelfMemoryChoice::kLocal:
      return "local";
    case SelfMemoryChoice::kNode:
      return absl::StrCat(request.node);
  }
  return "?";
}

absl::StatusOr<SelfMemoryPolicy> ChooseSelfMemoryPolicy(
    const SelfMemoryRequest& request, const Topology& topology) {
  SelfMemoryPolicy p;
  switch (request.choice) {
    case SelfMemoryChoice::kLocal:
      p.why = "first touch, where its threads run (local)";
      return p;
    case SelfMemoryChoice::kNode: {
      const NodeInfo* n = topology.FindNode(request.node);
      if (n == nullptr || n->memory_bytes == 0 || request.node < 0 ||
          request.node > kMaxSelfMemoryNode) {
        return absl::InvalidArgumentError(absl::StrCat(
            "node ", request.node,
            " is not an online node with memory (nodes with memory: ",
            NodesWithMemory(topology), ")"));
      }
      p.mode = kMpolPreferred;
      p.nodes = {request.node};
      p.why = n->tier ? absl::StrCat("as asked; tier ", *n->tier, " of ",
                                     topology.tiers.size())
                      : std::string("as asked");
      return p;
    }
    case SelfMemoryChoice::kSlow:
      break;
  }
  if (topology.tiers.size() < 2) {
    p.why = "first touch: one memory tier, no slower memory to prefer";
    return p;
  }
  std::vector<int> slow;
  for (int id : topology.tiers.back().nodes) {
    if (id >= 0 && id <= kMaxSelfMemoryNode) slow.push_back(id);
  }
  std::sort(slow.begin(), slow.end());
  if (slow.empty()) {
    p.why = "first touch: the slowest tier's node ids are out of range";
    return p;
  }
  // MPOL_PREFERRED_MANY lets the kernel take the nearest of the slow nodes
  // to the allocating CPU; one node is all MPOL_PREFERRED takes.
  if (slow.size() > 1 && topology.features.preferred_many == true) {
    p.mode = kMpolPreferredMany;
    p.nodes = slow;
    p.why = "the slowest tier";
  } else if (slow.size() > 1) {
    p.mode = kMpolPreferred;
    p.nodes = {slow.front()};
    p.why = absl::StrCat(
        "the slowest tier's first node; this kernel has no "
        "MPOL_PREFERRED_MANY for all of ",
        FormatKernelList(slow));
  } else {
    // One slow node: the same as preferred-many over it, on every kernel.
    p.mode = kMpolPreferred;
    p.nodes = slow;
    p.why = "the slowest tier";
  }
  return p;
}

std::string DescribeSelfMemoryPolicy(const SelfMemoryPolicy& policy) {
  if (policy.mode == kMpolDefault) return policy.why;
  return absl::StrCat(
      "preferred on ", NodeWord(policy.nodes), " ",
      FormatKernelList(policy.nodes), " (", policy.why,
      policy.mode == kMpolPreferredMany ? ", MPOL_PREFERRED_MANY" : "", ")");
}

absl::StatusOr<int> SyscallSelfMempolicy::Threads() {
  int count = 0;
  for (int attempt = 0; attempt < 100; ++attempt) {
    DIR* d = opendir("/proc/self/task");
    if (d == nullptr) {
      return absl::UnavailableError(
          absl::StrCat("/proc/self/task: ", std::strerror(errno)));
    }
    count = 0;
    while (const dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') ++count;
    }
    closedir(d);
    if (count <= 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return count;
}

absl::StatusOr<int> SyscallSelfMempolicy::CurrentMode() {
  int mode = 0;
  if (syscall(SYS_get_mempolicy, &mode, nullptr, 0ul, nullptr, 0ul) != 0) {
    return absl::ErrnoToStatus(errno, "get_mempolicy");
  }
  return mode & ~kMpolModeFlags;
}

absl::Status SyscallSelfMempolicy::Set(int mode,
                                       const std::vector<int>& nodes) {
  unsigned long mask[kMaskBits / kWordBits] = {};
  for (int n : nodes) {
    if (n < 0 || n > kMaxSelfMemoryNode) {
      return absl::InvalidArgumentError(absl::StrCat("node ", n));
    }
    mask[n / kWordBits] |= 1ul << (n % kWordBits);
  }
  // maxnode is one more than the bits the kernel reads (get_nodes
  // decrements it).
  if (syscall(SYS_set_mempolicy, mode, nodes.empty() ? nullptr : mask,
              nodes.empty() ? 0ul
                            : static_cast<unsigned long>(kMaskBits + 1)) != 0) {
    return absl::ErrnoToStatus(errno, "set_mempolicy");
  }
  return absl::OkStatus();
}

absl::StatusOr<SelfMemoryReport> ApplySelfMemoryPolicy(
    const SelfMemoryRequest& request, const SelfMemoryPolicy& policy,
    SelfMempolicy& kernel) {
  // Unreadable (no /proc): nothing to check against, go on.
  if (absl::StatusOr<int> threads = kernel.Threads();
      threads.ok() && *threads > 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "hotpage's own memory policy must be set before any other thread "
        "starts; this process already has ",
        *threads, " threads, which would keep first touch"));
  }
  SelfMemoryReport r;
  r.requested = SelfMemoryRequestName(request);
  const std::string prefix = "hotpage's own memory: ";
  if (policy.mode == kMpolDefault) {
    r.mode = "default";
    r.line = absl::StrCat(prefix, DescribeSelfMemoryPolicy(policy));
    return r;
  }
  // A policy hotpage was started with (numactl, systemd's NUMAPolicy=) was
  // someone's choice: only a request by name overrides it.
  if (!request.given) {
    if (absl::StatusOr<int> m = kernel.CurrentMode();
        m.ok() && *m != kMpolDefault) {
      r.mode = "inherited";
      r.line = absl::StrCat(prefix, "the policy hotpage was started with (",
                            KernelModeName(*m),
                            "), kept; asking for slow by name overrides it");
      return r;
    }
  }
  const std::string what =
      absl::StrCat(ModeName(policy.mode), " on ", NodeWord(policy.nodes), " ",
                   FormatKernelList(policy.nodes));
  if (absl::Status s = kernel.Set(policy.mode, policy.nodes); !s.ok()) {
    const std::string failed =
        absl::StrCat("set_mempolicy(", what, ") failed: ", s.message());
    if (request.given) {
      return absl::Status(s.code(), absl::StrCat(prefix, failed));
    }
    r.mode = "default";
    r.line = absl::StrCat(prefix, "first touch (", failed, ")");
    r.warning = absl::StrCat(prefix, failed,
                             "; it stays where its threads run (first touch)");
    return r;
  }
  r.mode = ModeName(policy.mode);
  r.nodes = policy.nodes;
  r.line = absl::StrCat(prefix, DescribeSelfMemoryPolicy(policy));
  return r;
}

}  // namespace hotpage
