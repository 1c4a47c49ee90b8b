// compare_check: the guest-side checker of the tiering comparison
// (tests/compare/compare_guest.sh). Two steps:
//
//   compare_check watch --pid PID --layout FILE --until-s S --out FILE
//                       [--fast-nodes 0,1] [--interval-ms 100] [--scan-ms 1000]
//                       [--vmstat-before FILE]
//       Watches hot_set_workload PID (compare_watch.h) until S seconds after
//       the workload's start (the layout's phase-0 switch_ns) or until it
//       exits, then writes "key=value ..." to --out (and stdout).
//   compare_check finish --watch FILE --label "topo=.. mech=.. shape=.."
//                        [--workload-log FILE] [--stats-json FILE]
//       Prints the run's one line "COMPARE-RESULT <label> <watch>
//       <workload> <hotpage stats>" (compare_report.h), and a
//       "COMPARE-NOTE ..." line for each piece that is missing.
//
// Exit status: 0 done, 1 the work failed (message on stderr), 2 usage.

#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "migrator/page_mover.h"
#include "tests/compare/compare_report.h"
#include "tests/compare/compare_watch.h"
#include "tools/base/clock.h"
#include "tools/base/parse.h"
#include "tools/cli.h"

namespace hotpage {
namespace compare {
namespace {

absl::StatusOr<std::string> ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

int Usage(absl::string_view msg) {
  std::cerr << "compare_check: " << msg
            << "\nTry 'compare_check watch --help' or 'compare_check finish "
               "--help'.\n";
  return kExitUsage;
}

int Watch(const std::vector<std::string>& args) {
  const std::vector<FlagSpec> specs = {
      {"pid", "PID", "the hot_set_workload process (required)"},
      {"layout", "FILE", "its --layout file (required)"},
      {"until-s", "S", "stop S seconds after the workload's start (required)"},
      {"out", "FILE", "write the results (key=value ...) here (required)"},
      {"fast-nodes", "NODES", "nodes that count as fast memory (default 0)"},
      {"interval-ms", "N", "hot-set sample interval (default 100)"},
      {"scan-ms", "N", "whole-area scan interval (default 1000)"},
      {"vmstat-before", "FILE",
       "a /proc/vmstat snapshot taken before the mechanism started"},
  };
  absl::StatusOr<ParsedFlags> flags = ParseFlags(args, specs);
  if (!flags.ok()) return Usage(flags.status().message());
  if (flags->Has("help")) {
    std::cout << FormatUsage(
        "compare_check watch",
        "--pid PID --layout FILE --until-s S --out FILE [options]",
        "Watches where a hot_set_workload's current hot set is (move_pages "
        "query)\n"
        "and what moved, until S seconds after its start; see compare_watch.h.",
        specs);
    return kExitOk;
  }
  absl::StatusOr<int64_t> pid = FlagInt(*flags, "pid", 0, 1, 1 << 22);
  absl::StatusOr<double> until_s = FlagDouble(*flags, "until-s", 0, 0.1, 86400);
  absl::StatusOr<int64_t> interval_ms =
      FlagInt(*flags, "interval-ms", 100, 10, 60000);
  absl::StatusOr<int64_t> scan_ms =
      FlagInt(*flags, "scan-ms", 1000, 10, 600000);
  for (const absl::Status& s : {pid.status(), until_s.status(),
                                interval_ms.status(), scan_ms.status()}) {
    if (!s.ok()) return Usage(s.message());
  }
  if (!flags->Has("pid") || !flags->Has("layout") || !flags->Has("until-s") ||
      !flags->Has("out")) {
    return Usage("--pid, --layout, --until-s and --out are required");
  }
  WatchOptions opt;
  if (std::optional<std::string> f = flags->Get("fast-nodes")) {
    absl::StatusOr<std::vector<int>> nodes = ParseKernelList(*f);
    if (!nodes.ok() || nodes->empty())
      return Usage(absl::StrCat("--fast-nodes: bad node list '", *f, "'"));
    opt.fast_nodes = *nodes;
  }
  opt.scan_interval_ns = static_cast<uint64_t>(*scan_ms) * 1000000;
  std::string vmstat_before;
  if (std::optional<std::string> f = flags->Get("vmstat-before")) {
    absl::StatusOr<std::string> v = ReadWhole(*f);
    if (!v.ok()) return Usage(v.status().message());
    vmstat_before = *v;
  }
  SyscallPageMover mover;
  const std::string layout_path = *flags->Get("layout");
  Watcher::Env env;
  env.mover = &mover;
  env.pid = static_cast<pid_t>(*pid);
  env.read_layout = [&] { return ReadWhole(layout_path); };
  env.read_vmstat = [] { return ReadWhole("/proc/vmstat"); };
  env.now_ns = MonotonicNs;
  Watcher w(opt, env);
  if (absl::Status s = w.Begin(vmstat_before); !s.ok()) {
    std::cerr << "compare_check: " << s.message() << "\n";
    return kExitFailure;
  }
  const uint64_t until_ns = static_cast<uint64_t>(*until_s * 1e9);
  for (;;) {
    absl::Status s = w.Sample();
    if (absl::IsNotFound(s)) break;  // the workload exited
    if (!s.ok()) {
      std::cerr << "compare_check: " << s.message() << "\n";
      return kExitFailure;
    }
    if (MonotonicNs() >= w.start_ns() + until_ns) break;
    usleep(static_cast<useconds_t>(*interval_ms * 1000));
  }
  if (absl::Status s = w.End(); !s.ok()) {
    std::cerr << "compare_check: " << s.message() << "\n";
    return kExitFailure;
  }
  const std::string kv = w.ResultKv();
  std::ofstream out(*flags->Get("out"));
  out << kv << "\n";
  if (!out.flush()) {
    std::cerr << "compare_check: cannot write " << *flags->Get("out") << "\n";
    return kExitFailure;
  }
  std::cout << kv << "\n";
  return kExitOk;
}

int Finish(const std::vector<std::string>& args) {
  const std::vector<FlagSpec> specs = {
      {"watch", "FILE", "the --out file of `compare_check watch` (required)"},
      {"label", "KV", "\"topo=.. mech=.. shape=.. rep=..\" (required)"},
      {"workload-log", "FILE", "hot_set_workload's stdout (its closing line)"},
      {"stats-json", "FILE", "hotpage attach's --stats-json file"},
  };
  absl::StatusOr<ParsedFlags> flags = ParseFlags(args, specs);
  if (!flags.ok()) return Usage(flags.status().message());
  if (flags->Has("help")) {
    std::cout << FormatUsage(
        "compare_check finish",
        "--watch FILE --label KV [--workload-log F] [--stats-json F]",
        "Prints the run's COMPARE-RESULT line (see compare_report.h).", specs);
    return kExitOk;
  }
  if (!flags->Has("watch") || !flags->Has("label"))
    return Usage("--watch and --label are required");
  std::string line = absl::StrCat("COMPARE-RESULT ", *flags->Get("label"));
  std::vector<std::string> notes;
  absl::StatusOr<std::string> watch = ReadWhole(*flags->Get("watch"));
  if (!watch.ok()) {
    // Without the watcher's results the run has nothing to compare.
    std::cout << "COMPARE-NOTE " << *flags->Get("label")
              << ": no result: " << watch.status().message() << "\n";
    return kExitFailure;
  }
  absl::StrAppend(&line, " ", absl::StripAsciiWhitespace(*watch));
  if (std::optional<std::string> f = flags->Get("workload-log")) {
    absl::StatusOr<std::string> log = ReadWhole(*f);
    absl::StatusOr<std::string> kv =
        log.ok() ? WorkloadLogKv(*log) : log.status();
    if (kv.ok()) {
      absl::StrAppend(&line, " ", *kv);
    } else {
      notes.push_back(std::string(kv.status().message()));
    }
  }
  if (std::optional<std::string> f = flags->Get("stats-json")) {
    absl::StatusOr<std::string> json = ReadWhole(*f);
    absl::StatusOr<std::string> kv =
        json.ok() ? HotpageStatsKv(*json) : json.status();
    if (kv.ok()) {
      absl::StrAppend(&line, " ", *kv);
    } else {
      notes.push_back(std::string(kv.status().message()));
    }
  }
  // The line must parse: a label with a space or a duplicate key would
  // otherwise be lost on the host.
  if (absl::StatusOr<RunResult> r = ParseResultLine(line); !r.ok()) {
    std::cerr << "compare_check: result line does not parse: "
              << r.status().message() << "\n";
    return kExitFailure;
  }
  for (const std::string& n : notes)
    std::cout << "COMPARE-NOTE " << *flags->Get("label") << ": " << n << "\n";
  std::cout << line << "\n";
  return kExitOk;
}

}  // namespace
}  // namespace compare
}  // namespace hotpage

int main(int argc, char** argv) {
  using hotpage::compare::Usage;
  if (argc < 2) return Usage("want a step: watch or finish");
  const std::string step = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (step == "watch") return hotpage::compare::Watch(args);
  if (step == "finish") return hotpage::compare::Finish(args);
  if (step == "--help" || step == "-h") {
    std::cout << "compare_check watch|finish ... (see --help of each; "
                 "tests/compare/README.md)\n";
    return 0;
  }
  return Usage(absl::StrCat("unknown step '", step, "'"));
}
