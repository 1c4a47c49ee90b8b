// Parsers for a process's memory layout and per-range memory policies:
// /proc/PID/numa_maps (mm/mempolicy.c mpol_to_str + fs/proc/task_mmu.c
// show_numa_map) and /proc/PID/maps (for range ends, which numa_maps does
// not print).
//
// numa_maps line: "<start-hex> <policy> [key=value | flag]..." where policy
// is "<mode>[=<flags>][:<nodelist>]":
//   mode   default | prefer | bind | interleave | weighted interleave |
//          local | prefer (many)
//   flags  static | relative, optionally "|balancing" (MPOL_F_NUMA_BALANCING)
// Tokens after the policy: N<node>=<pages>, kernelpagesize_kB=, anon=,
// dirty=, mapped=, mapmax=, swapcache=, active=, writeback=, file=<path>
// (spaces and newlines in paths are octal-escaped by the kernel), heap,
// stack, huge. Unknown tokens are ignored (newer kernels add some).
//
// Untrusted input (the target process controls its file names): bounded,
// never crashes; numa_maps_fuzz.cc drives it under libFuzzer.

#ifndef HOTPAGE_TOOLS_BASE_KERNEL_NUMA_MAPS_H_
#define HOTPAGE_TOOLS_BASE_KERNEL_NUMA_MAPS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hotpage {

enum class MempolicyMode {
  kDefault,
  kPreferred,
  kBind,
  kInterleave,
  kWeightedInterleave,
  kLocal,
  kPreferredMany,
};
const char* MempolicyModeName(MempolicyMode mode);

struct NumaMapsRange {
  uint64_t start = 0;
  uint64_t end = 0;  // from /proc/PID/maps (JoinWithMaps); 0 until then
  MempolicyMode mode = MempolicyMode::kDefault;
  std::vector<int> nodes;  // policy nodemask (empty for default/local)
  bool static_nodes = false;
  bool relative_nodes = false;
  bool numa_balancing = false;                          // MPOL_F_NUMA_BALANCING
  std::vector<std::pair<int, uint64_t>> pages_on_node;  // N<node>=<pages>
  uint64_t page_size = 4096;                            // kernelpagesize_kB
  bool anon = false;                                    // anon=N present
  bool heap = false;
  bool stack = false;
  bool huge = false;  // hugetlbfs
  std::string file;

  // Whether the policy forbids placing this range's pages on `node`.
  bool Forbids(int node) const;
};

// Limits against hostile input.
inline constexpr size_t kMaxNumaMapsLines = 1 << 20;

// Parses the whole file. A malformed line is an error naming its number
// and quoting it; blank lines are skipped.
absl::StatusOr<std::vector<NumaMapsRange>> ParseNumaMaps(
    absl::string_view text);

// Parses one policy string ("bind=static|balancing:0-1", "prefer (many):0,2").
absl::Status ParsePolicy(absl::string_view policy, NumaMapsRange* out);

struct MapsRange {
  uint64_t start = 0;
  uint64_t end = 0;
  std::string perms;  // "rw-p"
};
// Parses /proc/PID/maps (only start, end and permissions are kept).
absl::StatusOr<std::vector<MapsRange>> ParseProcMaps(absl::string_view text);

// One VMA of /proc/PID/smaps, only what THP detection needs.
struct SmapsVma {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t anonymous_bytes = 0;  // "Anonymous:" (kB in the file)
  uint64_t anon_huge_bytes = 0;  // "AnonHugePages:" (THP-backed anonymous)
};
// Parses /proc/PID/smaps: header lines ("start-end perms offset dev inode
// [path]") start a VMA; "Anonymous:" and "AnonHugePages:" lines fill it;
// other fields are skipped. Untrusted input: bounded, malformed header or
// value lines are errors naming the line.
absl::StatusOr<std::vector<SmapsVma>> ParseSmaps(absl::string_view text);

// Fills NumaMapsRange::end from maps (matching by start address). Ranges
// with no match keep end = 0 and are reported by the return value.
size_t JoinWithMaps(std::vector<NumaMapsRange>& ranges,
                    const std::vector<MapsRange>& maps);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_BASE_KERNEL_NUMA_MAPS_H_
