// `hotpage simulate`: replays a recorded trace through hotpage's policy
// engine (the one `hotpage attach` runs) and the baselines over a simulated
// tiered memory, and prints how each would have placed the pages.
// The work is in tools/simulate/ (sim_run.h and what it includes); this
// file is the command line and the output.

#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "tools/base/atomic_file.h"
#include "tools/base/clock.h"
#include "tools/cli.h"
#include "tools/engine_flags.h"
#include "tools/round_log.h"
#include "tools/simulate/sim_machine.h"
#include "tools/simulate/sim_report.h"
#include "tools/simulate/sim_run.h"
#include "tools/simulate/svg/sim_svg.h"

namespace hotpage {
namespace {}  // namespace

int RunSimulate(const std::vector<std::string>& args) {
  std::vector<FlagSpec> specs = {
      {"topology", "PRESET|FILE",
       "the machine: dram+cxl (default), 2pkg+cxl, 3tier, or a `hotpage "
       "topology --json` file"},
      {"ratio", "1:N", "fast tier = footprint / (1 + N) pages (default 1:4)"},
      {"fast-capacity", "SIZE",
       "fast tier size instead of --ratio (e.g. 64M, 1G)"},
      {"policy", "NAME",
       "hotpage, first-touch, oracle, tpp, tpp-ideal, memtis, arms, hemem, "
       "colloid or all (default)"},
      {"first-touch-node", "N",
       "place every page first on node N (as an mbind MPOL_PREFERRED before "
       "the first touch), not on the sampling CPU's node"},
      {"interval-ms", "N",
       "hotpage's round interval and the report's interval (default 1000)"},
      {"rate-limit-mbps", "N",
       "the hotpage policy's migration rate limit in MB/s (default 256)"},
      {"pid", "PID",
       "simulate this process (default: the one with most samples)"},
      {"source", "SRC",
       "what the hotpage policy sees of the trace: trace (every sample, the "
       "default), hintfault (only the NUMA hint faults the kernel's scanner "
       "would cause and the first touches, as `attach --source hintfault` "
       "sees them, through attach's first-touch filter) or "
       "writefault (only the first store to a page after each soft-dirty "
       "re-arm, as `attach --source pagefault --write-faults`)"},
      {"kernel-demotion", "",
       "the kernel demotes on reclaim under the hotpage policy "
       "(/sys/kernel/mm/numa/demotion_enabled true): a move into a full "
       "node demotes its least recently accessed pages, and with --source "
       "hintfault hotpage promotes into a full fast tier and leaves the "
       "victims to that reclaim, as attach does there"},
  };
  // The engine flags after --pid (tools/engine_flags.h), as attach has them.
  specs.insert(specs.end(), EngineFlagSpecs().begin(), EngineFlagSpecs().end());
  specs.insert(
      specs.end(),
      {
          {"report", "FILE", "write the per-interval and total report as JSON"},
          {"rounds", "FILE",
           "write each round of the hotpage policy as a JSON line: what its "
           "engine saw (fast-tier share and baseline, change window, "
           "latencies), why candidates stayed (skip reasons) and every move "
           "it planned (tools/round_log.h)"},
          {"svg", "FILE",
           "write a picture: accesses over address and time, the hotpage "
           "policy's "
           "tiers and moves, every policy's fast-tier share"},
          {"quiet", "", "no progress bar"},
      });
  const char* synopsis =
      "TRACE [--topology PRESET|FILE] [--ratio 1:N | --fast-capacity SIZE] "
      "[--policy NAME] [options]";
  const std::string description = absl::StrCat(
      "Replays TRACE (.hpt from `hotpage record`/`import`, or a perf.data file "
      "from\n"
      "`perf record -d`) in time order through simulated tiered memory and "
      "compares\n"
      "placement policies on the same samples. Every sample is an access, "
      "served by\n"
      "the node its page is on at that moment; pages are placed on first touch "
      "as the\n"
      "kernel does (the sampling CPU's node, then the nearest node with "
      "room).\n"
      "\n"
      "Policies: hotpage = the engine and migrator `hotpage attach` runs "
      "(same\n"
      "defaults, --rate-limit-mbps; pages move in simulated memory); "
      "first-touch = no\n"
      "migration; oracle = each interval's hottest pages on the fast tier at "
      "no cost\n"
      "(an upper bound); tpp = the kernel's NUMA-balancing tiering mode "
      "with its NUMA\n"
      "scanner: a sample of a page the scanner armed is a hint fault, "
      "promoted when\n"
      "it comes within 1 s of the scan; demote least recently sampled under "
      "pressure);\n"
      "tpp-ideal = the same without the scanner (promote on the second "
      "sample within\n"
      "1 s); memtis = Memtis' histogram threshold with periodic cooling; "
      "arms = ARMS'\n"
      "short and long moving averages, a change detector and a cost/benefit "
      "test;\n"
      "hemem = HeMem's fixed read/write thresholds with halving on cooling; "
      "colloid =\n"
      "a count ranking that balances the tiers' loaded latencies. A single "
      "policy\n"
      "runs beside the oracle.\n"
      "\n"
      "Machine: the topology's nodes scaled to the trace's footprint F "
      "(distinct 4 KiB\n"
      "pages of the process): the fast tier gets F / (1 + N) pages for --ratio "
      "1:N\n"
      "(or --fast-capacity), split over its nodes; middle tiers keep the "
      "machine's\n"
      "proportions to it; each node of the slowest tier holds 2 F (never "
      "full).\n"
      "Latency and bandwidth per node from HMAT. Presets: ",
      absl::StrJoin(PresetNames(), ", "),
      ".\n"
      "\n"
      "Prints one row per policy: fast-tier share of the accesses, as % of "
      "the\n"
      "oracle's, modelled average latency, pages promoted and demoted, MB "
      "migrated,\n"
      "ping-pongs (returns to a tier left within 60 s). The same inputs give "
      "a\n"
      "byte-identical --report.\n"
      "\n"
      "Engine flags: the hotpage policy applies --promote-to, --weights,\n"
      "--package-aware, --huge-strict and --locality as `hotpage attach` "
      "does. The\n"
      "machine is the topology's: --weights kernel takes its "
      "weighted-interleave\n"
      "weights (1 on the presets), auto its HMAT bandwidth; packages and the "
      "CPUs'\n"
      "nodes come from it too. A trace records no memory policies "
      "(numa_maps), so\n"
      "--keep-interleave is refused (no range is interleaved) and "
      "--huge-strict needs\n"
      "--promote-to (a huge page's preferred node); huge pages are the "
      "trace's 2 MiB\n"
      "region samples (DAMON).");
  auto usage_error = [](absl::string_view msg) {
    std::cerr << "hotpage simulate: " << msg
              << "\nTry 'hotpage simulate --help'.\n";
    return kExitUsage;
  };
  auto fail = [](const absl::Status& s) {
    std::cerr << "hotpage simulate: " << s.message() << "\n";
    return kExitFailure;
  };
  absl::StatusOr<ParsedFlags> flags = ParseFlags(args, specs);
  if (!flags.ok()) return usage_error(flags.status().message());
  if (flags->Has("help")) {
    std::cout << FormatUsage("simulate", synopsis, description, specs);
    return kExitOk;
  }
  if (flags->positional().size() != 1)
    return usage_error("give exactly one trace (.hpt or perf.data)");
  SimulateOptions opt;
  opt.trace = flags->positional()[0];
  opt.topology = flags->Get("topology").value_or("dram+cxl");
  opt.policy = flags->Get("policy").value_or("all");
  if (flags->Has("ratio") && flags->Has("fast-capacity")) {
    return usage_error("give --ratio or --fast-capacity, not both");
  }
  if (std::optional<std::string> r = flags->Get("ratio")) {
    absl::StatusOr<uint64_t> n = ParseRatio(*r);
    if (!n.ok()) return usage_error(n.status().message());
    opt.capacity.ratio_n = *n;
  }
  if (std::optional<std::string> c = flags->Get("fast-capacity")) {
    absl::StatusOr<uint64_t> b = ParseSize(*c);
    if (!b.ok()) return usage_error(b.status().message());
    opt.capacity.fast_bytes = *b;
  }
  absl::StatusOr<int64_t> interval =
      FlagInt(*flags, "interval-ms", 1000, 1, 3600000);
  absl::StatusOr<int64_t> rate =
      FlagInt(*flags, "rate-limit-mbps", 256, 1, 1 << 20);
  absl::StatusOr<int64_t> pid = FlagInt(*flags, "pid", -1, 0, (1 << 22) - 1);
  absl::StatusOr<int64_t> ft_node =
      FlagInt(*flags, "first-touch-node", -1, 0, 1023);
  for (const absl::Status& s :
       {interval.status(), rate.status(), pid.status(), ft_node.status()}) {
    if (!s.ok()) return usage_error(s.message());
  }
  opt.interval_ms = static_cast<uint64_t>(*interval);
  opt.rate_limit_mbps = static_cast<uint64_t>(*rate);
  if (*pid >= 0) opt.pid = static_cast<uint32_t>(*pid);
  opt.first_touch_node = static_cast<int>(*ft_node);
  if (std::optional<std::string> src = flags->Get("source")) {
    absl::StatusOr<SimSource> parsed = ParseSimSource(*src);
    if (!parsed.ok()) return usage_error(parsed.status().message());
    opt.source = *parsed;
  }
  opt.kernel_demotion = flags->Has("kernel-demotion");
  if (opt.policy != "all") {
    bool known = false;
    for (const std::string& n : AllPolicyNames()) known |= n == opt.policy;
    if (!known) {
      return usage_error(absl::StrCat("unknown policy '", opt.policy, "' (",
                                      absl::StrJoin(AllPolicyNames(), ", "),
                                      ", all)"));
    }
  }
  if (absl::Status s = ParseEngineFlags(*flags, &opt.placement); !s.ok())
    return usage_error(s.message());
  absl::StatusOr<Topology> topology = LoadTopology(opt.topology);
  if (!topology.ok()) return usage_error(topology.status().message());
  if (absl::Status s =
          ApplyMachineEngineFlags(*flags, *topology, &opt.placement);
      !s.ok())
    return usage_error(s.message());
  if (absl::Status s = CheckSimulatedPlacement(opt.placement); !s.ok())
    return usage_error(s.message());
  opt.engine_flags = EngineFlagsSummary(*flags);

  const bool progress = isatty(STDERR_FILENO) && !flags->Has("quiet");
  double last_draw = 0;
  if (progress) {
    opt.progress = [&](int pass, uint64_t read, uint64_t total) {
      const double now = MonotonicSeconds();
      if (read < total && now - last_draw < 0.1) return;
      last_draw = now;
      const double f =
          total ? static_cast<double>(read) / static_cast<double>(total) : 1.0;
      const int filled = static_cast<int>(f * 30);
      std::fprintf(stderr,
                   "\rhotpage simulate: pass %d/2 %s [%s%s] %3.0f%% of %.1f MB",
                   pass, pass == 1 ? "(survey)" : "(replay)",
                   std::string(filled, '#').c_str(),
                   std::string(30 - filled, '.').c_str(), 100 * f,
                   static_cast<double>(total) / 1e6);
    };
  }
  std::unique_ptr<SvgObserver> svg;
  if (flags->Has("svg")) {
    svg = std::make_unique<SvgObserver>(*topology, opt.interval_ms);
    opt.observer = svg.get();
  }
  // --rounds: the hotpage policy's rounds, one line each as it ends.
  std::optional<std::string> rounds_path = flags->Get("rounds");
  std::string rounds_text;
  if (rounds_path) {
    if (opt.policy != "all" && opt.policy != "hotpage") {
      return usage_error(
          absl::StrCat("--rounds records the hotpage policy; --policy ",
                       opt.policy, " does not run it"));
    }
    opt.hotpage_rounds = [&rounds_text](const RoundReport& report,
                                        uint64_t start_ns) {
      AppendRoundLine(report, start_ns, &rounds_text);
    };
  }
  // The outputs are written after the run: a path that cannot be written
  // fails now, not after minutes of replay.
  for (const char* output : {"report", "rounds", "svg"}) {
    if (std::optional<std::string> path = flags->Get(output)) {
      if (absl::Status s = CheckCanWriteFileAtomically(*path); !s.ok())
        return fail(s);
    }
  }
  const double start = MonotonicSeconds();
  absl::StatusOr<SimulateResult> r = SimulateTrace(opt);
  if (progress) std::fputs("\r\033[K", stderr);
  if (!r.ok()) return fail(r.status());
  const double elapsed = MonotonicSeconds() - start;
  if (!r->notes.empty()) std::cerr << "hotpage simulate: " << r->notes;

  std::cout << ComparisonTable(*r->sim);
  if (std::optional<std::string> path = flags->Get("report")) {
    if (absl::Status s =
            WriteFileAtomically(*path, ReportJson(r->info, *r->sim));
        !s.ok())
      return fail(s);
  }
  if (rounds_path) {
    if (absl::Status s = WriteFileAtomically(*rounds_path, rounds_text);
        !s.ok())
      return fail(s);
  }
  if (svg) {
    const std::string path = *flags->Get("svg");
    std::string base = opt.trace.substr(opt.trace.find_last_of('/') + 1);
    const std::string subtitle =
        absl::StrCat(opt.topology, ", ", r->info.capacity, ", interval ",
                     opt.interval_ms, " ms; tiers and moves: ", svg->subject());
    if (absl::Status s =
            svg->Write(path, absl::StrCat("hotpage simulate: ", base), subtitle,
                       r->sim->last_ns());
        !s.ok()) {
      return fail(s);
    }
  }
  const SimMachine& m = *r->machine;
  std::vector<std::string> caps;
  for (const SimNodeCapacity& c : m.capacities)
    caps.push_back(absl::StrCat(c.node, ":", c.pages));
  const uint64_t late = r->info.late_samples + r->sim->late_samples();
  std::cerr << absl::StrFormat(
      "hotpage simulate: %d samples of pid %d over %.1f s (%s), footprint %d "
      "pages, fast tier %d "
      "pages (%s; pages per node %s), %d policies in %.1f s%s\n",
      r->sim->samples(), r->info.pid,
      static_cast<double>(r->sim->last_ns() - r->sim->start_ns()) / 1e9,
      r->info.trace_format, m.footprint_pages, m.fast_pages, r->info.capacity,
      absl::StrJoin(caps, " "), r->sim->policies().size(), elapsed,
      late > 0 ? absl::StrCat("; ", late,
                              " samples arrived more than 1 s out of time "
                              "order and were replayed late")
               : "");
  return kExitOk;
}

}  // namespace hotpage
