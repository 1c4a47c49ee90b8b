// compare_watch: the ground-truth side of the tiering comparison
// (tests/compare). It watches a running hot_set_workload from outside and
// measures what any placement mechanism did to it -- the kernel's NUMA
// balancing or tiering mode, DAMON's migrate_hot/migrate_cold schemes, or
// hotpage -- with the same yardstick for all of them:
//
//   - where the workload's CURRENT hot set is (move_pages with nodes=NULL on
//     the workload's pid, every interval, ~100 ms): the time from the start
//     of each phase until >= 90% of that phase's hot set is on a fast node,
//     and the fraction at the end of the phase;
//   - the whole area and the bind range, every scan interval (~1 s, a scan of
//     50k pages costs ~40 ms of a TCG vCPU): pages that changed node, pages
//     seen coming back to a node they had left (ping-pong), bind-range pages
//     found off their bind node, and where the area's pages are at the end;
//   - /proc/vmstat deltas over the run (pgmigrate_success counts every
//     migration, the kernel's and move_pages(2) alike).
//
// Everything the kernel provides comes through seams (PageMover, and
// functions returning the layout file, /proc/vmstat and the clock), so the
// logic is tested with FakePageMover and canned text (compare_lib_test).
//
// Threading: single-threaded; the guest checker calls Sample() in a loop.

#ifndef HOTPAGE_TESTS_COMPARE_COMPARE_WATCH_H_
#define HOTPAGE_TESTS_COMPARE_COMPARE_WATCH_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "migrator/page_mover.h"

namespace hotpage {
namespace compare {

inline constexpr uint64_t kPageBytes = 4096;

// hot_set_workload's --layout file (see the header of
// tests/workloads/hot_set_workload.cc): base, bytes, phase, switch_ns, one
// `hot START END` line per run of hot pages, and an optional
// `bind START END NODE` line. Unknown keys are skipped (forward compatible).
struct WorkloadLayout {
  uint64_t base = 0;
  uint64_t bytes = 0;
  uint64_t phase = 0;
  uint64_t switch_ns = 0;  // CLOCK_MONOTONIC of the start of this phase
  std::vector<std::pair<uint64_t, uint64_t>> hot;  // [start, end)
  uint64_t bind_start = 0, bind_end = 0;
  int bind_node = -1;

  uint64_t hot_pages() const;
};

// Parses a layout file. Errors (InvalidArgument, naming the line) on a
// missing base/bytes, no hot run, a malformed number, a hot run outside the
// area or not page aligned.
absl::StatusOr<WorkloadLayout> ParseLayout(absl::string_view text);

// The `phase N` value of a layout file without parsing the rest (a layout
// of the interleaved shape has ~6000 lines); -1 if absent or malformed.
int64_t PeekLayoutPhase(absl::string_view text);

// /proc/vmstat ("name value" lines) as a map; malformed lines are skipped.
std::map<std::string, uint64_t> ParseVmstat(absl::string_view text);

// The counters reported as deltas, in output order. Counters missing from
// the kernel read as 0.
const std::vector<std::string>& VmstatKeys();

// Per page of the area: the node it was last seen on, the nodes it has been
// on, how often it moved, whether it came back to a node it had left.
// Nodes 0..63. Observe() must be called with the same number of pages each
// time; negative statuses (not present) are ignored.
class MoveTracker {
 public:
  void Observe(const std::vector<int>& nodes);
  uint64_t moved_pages() const { return moved_pages_; }  // moved at least once
  uint64_t moves() const { return moves_; }              // node changes seen
  uint64_t pingpong_pages() const { return pingpong_pages_; }
  // Pages per node in the last observation.
  const std::map<int, uint64_t>& last_by_node() const { return last_by_node_; }

 private:
  struct PageState {
    int8_t node = -1;
    uint8_t moves = 0;  // saturates
    bool pingpong = false;
    uint64_t visited = 0;  // bit per node
  };
  std::vector<PageState> pages_;
  uint64_t moved_pages_ = 0, moves_ = 0, pingpong_pages_ = 0;
  std::map<int, uint64_t> last_by_node_;
};

struct WatchOptions {
  std::vector<int> fast_nodes = {0};
  double target_fraction = 0.9;
  uint64_t scan_interval_ns = 1000000000;  // whole area + bind range
};

// Results of one phase of the workload.
struct PhaseResult {
  uint64_t phase = 0;
  uint64_t hot_pages = 0;
  double t90_s = -1;  // seconds from the phase's start; -1: never
  double end_fraction = 0;
  double max_fraction = 0;
  uint64_t samples = 0;
};

class Watcher {
 public:
  struct Env {
    PageMover* mover = nullptr;
    pid_t pid = 0;
    std::function<absl::StatusOr<std::string>()> read_layout;
    std::function<absl::StatusOr<std::string>()> read_vmstat;
    std::function<uint64_t()> now_ns;  // CLOCK_MONOTONIC (the layout's clock)
  };

  Watcher(WatchOptions options, Env env)
      : options_(std::move(options)), env_(std::move(env)) {}

  // Takes the vmstat baseline: `vmstat_before` when not empty (a snapshot
  // taken before the mechanism was switched on), else /proc/vmstat now.
  absl::Status Begin(absl::string_view vmstat_before = "");

  // One observation of the current hot set, and a scan of the whole area
  // when the scan interval has passed. NotFound when the process is gone
  // (move_pages ESRCH); the results so far stay valid.
  absl::Status Sample();

  // Final scan and the vmstat deltas.
  absl::Status End();

  // CLOCK_MONOTONIC of the workload's start (phase 0's switch_ns), or of
  // the first Sample() when the first layout seen was already past phase 0.
  uint64_t start_ns() const { return start_ns_; }
  const std::vector<PhaseResult>& phases() const { return phases_; }
  const MoveTracker& moves() const { return moves_; }
  uint64_t bind_pages() const { return bind_pages_; }
  uint64_t bind_off_max() const { return bind_off_max_; }
  const std::map<std::string, int64_t>& vmstat_delta() const {
    return vmstat_delta_;
  }
  // Seconds from start_ns() of the scans (every scan interval) at which the
  // kernel's numa_pte_updates had grown since the previous scan: when the
  // kernel's NUMA scanner ran (it marks PTEs; hint faults follow). At most
  // kMaxScanTimes entries.
  const std::vector<double>& kernel_scan_times() const {
    return kernel_scan_times_;
  }
  static constexpr size_t kMaxScanTimes = 40;

  // "key=value ..." of every result (see compare_report.h for the keys).
  std::string ResultKv() const;

 private:
  absl::Status LoadLayoutIfChanged();
  absl::Status Scan();
  bool IsFast(int node) const;

  WatchOptions options_;
  Env env_;
  WorkloadLayout layout_;
  bool have_layout_ = false;
  std::vector<uint64_t> hot_addrs_;
  std::vector<uint64_t> area_addrs_;  // area, then bind range
  std::vector<int> status_;
  std::map<int, uint64_t> hot_by_node_;  // current hot set, last sample
  std::vector<PhaseResult> phases_;
  MoveTracker moves_;
  uint64_t bind_pages_ = 0, bind_off_max_ = 0, bind_off_last_ = 0;
  uint64_t last_scan_ns_ = 0;
  uint64_t start_ns_ = 0;
  bool scanned_ = false;
  std::map<std::string, uint64_t> vmstat_before_;
  uint64_t last_pte_updates_ = 0;
  std::vector<double> kernel_scan_times_;
  std::map<std::string, int64_t> vmstat_delta_;
};

}  // namespace compare
}  // namespace hotpage

#endif  // HOTPAGE_TESTS_COMPARE_COMPARE_WATCH_H_
