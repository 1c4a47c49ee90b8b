// compare_table: the host side of the tiering comparison. Reads the result
// files (or whole guest console logs) of tests/compare/run_compare.sh and
// prints the markdown report (compare_report.h); optionally writes it and a
// JSON file.
//
//   compare_table [--md FILE] [--json FILE] RESULTS...
//
// Exit status: 0, 1 when a file cannot be read or written or no run
// produced a result, 2 usage.

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/compare/compare_report.h"
#include "tools/cli.h"

int main(int argc, char** argv) {
  using hotpage::FlagSpec;
  const std::vector<FlagSpec> specs = {
      {"md", "FILE", "also write the markdown report to FILE"},
      {"json", "FILE",
       "write every run's results and the notes as JSON to FILE"},
  };
  absl::StatusOr<hotpage::ParsedFlags> flags = hotpage::ParseFlags(
      std::vector<std::string>(argv + 1, argv + argc), specs);
  if (!flags.ok()) {
    std::cerr << "compare_table: " << flags.status().message()
              << "\nTry 'compare_table --help'.\n";
    return hotpage::kExitUsage;
  }
  if (flags->Has("help")) {
    std::cout << hotpage::FormatUsage(
        "compare_table", "[--md FILE] [--json FILE] RESULTS...",
        "Tabulates the COMPARE-RESULT / COMPARE-NOTE lines of the given files\n"
        "(tests/compare/README.md explains the columns).",
        specs);
    return hotpage::kExitOk;
  }
  if (flags->positional().empty()) {
    std::cerr << "compare_table: no results file given\nTry 'compare_table "
                 "--help'.\n";
    return hotpage::kExitUsage;
  }
  std::string all;
  for (const std::string& path : flags->positional()) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::cerr << "compare_table: cannot read " << path << "\n";
      return hotpage::kExitFailure;
    }
    std::ostringstream s;
    s << in.rdbuf();
    all += s.str();
    all += "\n";
  }
  const hotpage::compare::Results results = hotpage::compare::ParseResults(all);
  const std::string md = hotpage::compare::FormatMarkdown(results);
  std::cout << md;
  auto write = [](const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out.flush()) {
      std::cerr << "compare_table: cannot write " << path << "\n";
      return false;
    }
    return true;
  };
  if (std::optional<std::string> p = flags->Get("md"); p && !write(*p, md))
    return hotpage::kExitFailure;
  if (std::optional<std::string> p = flags->Get("json");
      p && !write(*p, hotpage::compare::FormatJson(results))) {
    return hotpage::kExitFailure;
  }
  if (results.runs.empty()) {
    std::cerr << "compare_table: no COMPARE-RESULT line in the given files\n";
    return hotpage::kExitFailure;
  }
  return hotpage::kExitOk;
}
