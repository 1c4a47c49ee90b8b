// The daemon's configuration: `hotpage daemon --config FILE`
// (/etc/hotpage/hotpage.toml by default), TOML through Debian's toml11.
//
// The file has one [daemon] table for the machine-wide settings and one
// [[workload]] table per workload to manage. A workload is selected by
// exactly one of: a cgroup v2 path (every process in it or its descendants,
// including ones that start later), a process name (comm, exact), a
// command-line pattern (POSIX extended regex over /proc/PID/cmdline with
// NULs as spaces), a pid, or `all` (every process whose resident set is
// above `min_rss`). Its placement options are the engine flags of
// `hotpage attach` (tools/engine_flags.h) under the same names and checked
// by the same parsers, so a config says nothing attach could not:
//
//   [daemon]
//   interval_ms = 1000            # round interval
//   rate_limit_mbps = 256         # global migration budget, shared
//   kernel_tiering = "refuse"     # refuse | coexist | take-over
//   socket = "/run/hotpage/hotpage.sock"
//   state_dir = "/run/hotpage"
//   prom_file = "/var/lib/prometheus/node-exporter/hotpage.prom"
//   log_level = "info"            # debug | info | warning | error
//   self_memory = "slow"          # slow | local | NODE: hotpage's own
//                                 # memory (tools/self_memory.h)
//   rounds_dir = "/var/log/hotpage/rounds"  # for workloads' `rounds`
//   rounds_max_bytes = "64MiB"    # per process's file
//   rounds_dir_max_bytes = "1GiB" # all of them: ended processes' files
//                                 # go, oldest first (default 16 x the
//                                 # per-file bound)
//
//   [[workload]]
//   name = "cache"                # unique; labels metrics and status
//   cgroup = "system.slice/memcached.service"
//   source = "auto"               # auto, pebs, ibs, pagefault, damon,
//                                 # hintfault (needs take-over)
//   write_faults = false          # with pagefault: attach's --write-faults
//   promote_to = "0"              # node list, as --promote-to
//   weights = "0:3,1:1"           # as --weights
//   package_aware = false
//   locality = false
//   keep_interleave = 0.1         # as --keep-interleave
//   huge_strict = false
//   rate_share = 1                # relative share of rate_limit_mbps
//   fast_floor = "2GiB"           # bytes (B, KiB, MiB, GiB, TiB) or "25%"
//   fast_cap = "50%"              #   of the fast tier
//   rounds = false                # each round's decision as a JSON line,
//                                 # as attach's --rounds, in rounds_dir:
//                                 # NAME-PID-START.jsonl, one per process
//
// Everything is validated before anything runs: unknown keys and tables
// (a typo must not silently fall back to a default), wrong types, values
// out of range, duplicate names, a selector missing or given twice, a
// cgroup path that is not a plain relative path under /sys/fs/cgroup, a
// regex that does not compile, floors above caps, percent floors summing
// past 100%. Every error names the file, the line and the key. The parser
// takes untrusted text (any user who can write the file chose it, but a
// reload must never crash the daemon): it bounds the size and the nesting
// depth before toml11 sees it (toml11's parser recurses per level), and it
// is fuzzed (daemon_config_fuzz.cc).

#ifndef HOTPAGE_TOOLS_DAEMON_DAEMON_CONFIG_H_
#define HOTPAGE_TOOLS_DAEMON_DAEMON_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "policy/placement.h"
#include "tools/self_memory.h"

namespace hotpage {

inline constexpr char kDefaultDaemonConfigPath[] = "/etc/hotpage/hotpage.toml";
inline constexpr size_t kMaxDaemonConfigBytes = 1 << 20;
inline constexpr int kMaxDaemonConfigDepth = 16;
inline constexpr size_t kMaxWorkloads = 256;
inline constexpr uint64_t kMinRoundsMaxBytes = 64ull << 10;
inline constexpr uint64_t kMaxRoundsMaxBytes = 1ull << 40;
inline constexpr uint64_t kMaxRoundsDirMaxBytes = 16ull << 40;
// rounds_dir_max_bytes when not given: this many files at their bound.
inline constexpr uint64_t kRoundsDirDefaultFiles = 16;

enum class KernelTieringMode { kRefuse, kCoexist, kTakeOver };
absl::string_view KernelTieringModeName(KernelTieringMode m);

// A share of the fast tier: bytes, or a percentage of its capacity.
struct FastShare {
  bool set = false;
  bool percent = false;
  double value = 0;  // bytes, or percent in [0, 100]
  // Bytes for a fast tier of `capacity_bytes`; 0 when unset (a floor of 0)
  // and `capacity_bytes` when unset as a cap (no cap).
  uint64_t Resolve(uint64_t capacity_bytes, bool is_cap) const;
};

enum class SelectorKind { kCgroup, kComm, kCmdline, kPid, kAll };
absl::string_view SelectorKindName(SelectorKind k);

struct WorkloadConfig {
  std::string name;
  int line = 0;  // of its [[workload]] header, for messages
  SelectorKind selector = SelectorKind::kPid;
  // kCgroup: relative to the cgroup v2 root, no "." or ".." components;
  // kComm: the exact comm (at most 15 bytes, as the kernel keeps it);
  // kCmdline: an extended regex; kPid: the pid in decimal; kAll: empty.
  std::string match;
  std::string source = "auto";
  // With source "pagefault": re-arm write faults (soft-dirty) so pages
  // the process keeps writing fault again (attach's --write-faults).
  bool write_faults = false;
  // Each round's decision appended to the process's file in rounds_dir
  // (tools/round_log.h: the lines `hotpage attach --rounds` writes). A
  // reload that turns it on or off applies to processes managed after it.
  bool rounds = false;
  std::string promote_to;     // node list; checked against the machine later
  PlacementConfig placement;  // weights, package_aware, locality, ...
  double rate_share = 1;      // relative weight of the global budget
  FastShare fast_floor;
  FastShare fast_cap;
};

struct DaemonConfig {
  std::string path;
  int interval_ms = 1000;
  int rate_limit_mbps = 256;
  KernelTieringMode kernel_tiering = KernelTieringMode::kRefuse;
  std::string socket = "/run/hotpage/hotpage.sock";
  std::string state_dir = "/run/hotpage";
  std::string prom_file;  // empty: none
  // Where workloads with `rounds` write their rounds files, one per
  // process (empty: none may). Checked as state_dir is (tools/base/
  // state_dir.h: created 0700, nobody else may write it); the files are
  // 0600. A file stops growing at rounds_max_bytes, saying so once; the
  // files of ended processes are removed, the least recently written
  // first, while the directory's rounds files add up to more than
  // rounds_dir_max_bytes (tools/daemon/rounds_dir.h). Not given, it is
  // kRoundsDirDefaultFiles x rounds_max_bytes; given, at least
  // rounds_max_bytes (room for one live file).
  std::string rounds_dir;
  uint64_t rounds_max_bytes = 64ull << 20;
  uint64_t rounds_dir_max_bytes = kRoundsDirDefaultFiles * (64ull << 20);
  std::string log_level = "info";
  uint64_t min_rss_bytes = 64ull << 20;  // for `all = true`
  // Where the daemon's own memory goes (`--self-memory` overrides it); a
  // node is checked against the machine at start-up. Given = in the file.
  SelfMemoryRequest self_memory;
  std::vector<WorkloadConfig> workloads;
};

// Parses and validates `text` (the contents of `path`, which is used only
// in messages). InvalidArgument "PATH:LINE: KEY: reason" on any error.
absl::StatusOr<DaemonConfig> ParseDaemonConfig(absl::string_view text,
                                               absl::string_view path);

// Reads `path` (at most kMaxDaemonConfigBytes; a regular file) and parses
// it. NotFound when it does not exist.
absl::StatusOr<DaemonConfig> LoadDaemonConfig(const std::string& path);

// Some workload takes source "hintfault" (which only kernel_tiering =
// "take-over" allows: the daemon then sets the sysctls for it,
// tools/daemon/kernel_tiering.h).
bool UsesHintFaults(const DaemonConfig& cfg);

// "2GiB", "512 MiB", "4096", "1.5GiB" -> bytes. InvalidArgument otherwise.
absl::StatusOr<uint64_t> ParseByteSize(absl::string_view text);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_DAEMON_DAEMON_CONFIG_H_
