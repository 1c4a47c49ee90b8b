// compare_report: turns the guests' result lines of the tiering comparison
// (tests/compare/run_compare.sh) into the markdown table and the JSON file.
//
// Each guest run ends with one line
//
//   COMPARE-RESULT topo=dram+cxl mech=tiering shape=clusters rep=1 k=v ...
//
// whose keys come from compare_check: the run's label, the Watcher's results
// (compare_watch.h: hot_pages, phases, t90_K / end_frac_K per phase in
// seconds from the phase's start (-1: never), moved_pages, moves_seen,
// pingpong_seen, area_nodeN, hot_nodeN, bind_pages, bind_off_max,
// bind_off_end, vm_<vmstat counter> deltas), the workload's own counters
// (passes, touches, data_ok) and, for hotpage runs, hotpage's stats file
// (hp_promoted, hp_demoted, hp_pingpong, hp_failed, hp_samples, hp_rounds,
// hp_cpu_s, hp_source). Values contain no spaces. Lines
//
//   COMPARE-NOTE free text
//
// (a mechanism skipped, a run that failed) are listed under the tables.
// Everything else on the console is ignored.
//
// Runs of the same (topo, mech, shape) are grouped; a cell shows the single
// value, or "min-max" over the repeats.

#ifndef HOTPAGE_TESTS_COMPARE_COMPARE_REPORT_H_
#define HOTPAGE_TESTS_COMPARE_COMPARE_REPORT_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hotpage {
namespace compare {

struct RunResult {
  std::vector<std::pair<std::string, std::string>> kv;  // in line order

  std::optional<std::string> Get(absl::string_view key) const;
  std::optional<double> Number(absl::string_view key) const;
  std::string GetOr(absl::string_view key, absl::string_view fallback) const;
};

struct Results {
  std::vector<RunResult> runs;
  std::vector<std::string> notes;
};

// One "COMPARE-RESULT k=v ..." line (anything before the marker is
// ignored). InvalidArgument on a token without '=', an empty key, a
// duplicate key, or a missing topo/mech/shape.
absl::StatusOr<RunResult> ParseResultLine(absl::string_view line);

// Every result and note line of a console log or results file. Malformed
// result lines become notes saying so, they are not dropped silently.
Results ParseResults(absl::string_view text);

// hotpage's --stats-json file -> "hp_promoted=N hp_demoted=N ..." (see
// above). InvalidArgument when it is not JSON or lacks promoted_pages.
absl::StatusOr<std::string> HotpageStatsKv(absl::string_view json);

// hot_set_workload's closing line ("hot_set_workload: N passes, N phases, N
// touches, N counted, N bad pages") -> "passes=N touches=N data_ok=0|1".
// NotFound when the log has no such line (the workload did not finish).
absl::StatusOr<std::string> WorkloadLogKv(absl::string_view log);

// The markdown report: the table of the two-tier guest (dram+cxl), the
// weights table of the two-fast-node guest (2pkg+cxl), the goal check
// against the kernel's tiering mode, then the notes.
std::string FormatMarkdown(const Results& results);

// {"runs": [{key: value, ...}, ...], "notes": [...]}: numbers as numbers.
std::string FormatJson(const Results& results);

// Exposed for tests: a cell for the values of `key` over `runs` ("1.2",
// "1.2-1.9", "never", "1.2-never"; "-" when no run has the key). Negative
// values read "never" when never_if_negative.
std::string RangeCell(const std::vector<const RunResult*>& runs,
                      absl::string_view key, int decimals,
                      bool never_if_negative);

}  // namespace compare
}  // namespace hotpage

#endif  // HOTPAGE_TESTS_COMPARE_COMPARE_REPORT_H_
