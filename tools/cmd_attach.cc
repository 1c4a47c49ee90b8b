// `hotpage attach`: keeps a running process's hot pages in fast memory and
// its cold pages out of the way.
//
// This file reads the command line, checks privileges, discovers the
// machine and starts the live pieces: the sample source (DAMON regions, or
// a perf sampler: PEBS, IBS, page faults, with the hint-fault sysctls and
// the write-fault re-arm where asked), the policy engine (policy/engine.h,
// the same as `hotpage simulate` runs), the LiveMemoryView
// (tools/live_memory_view.h) and the Migrator with its own thread (unless
// --dry-run). The loop itself - poll the source into the hotness table,
// every --interval-ms a policy round whose moves go to the migrator, stats
// to --stats-json / --prom-file (atomically replaced; the Prometheus text
// also served on --metrics-listen, tools/base/metrics_server.h) every
// round, labelled by workload, pid and cgroup (tools/attach/attach_stats.h),
// the end
// on SIGINT/SIGTERM/SIGHUP, --duration or the process's exit, and the
// teardown of DAMON, the migrator and the hintfault source's sysctls on
// every exit path - is AttachLoop (tools/attach/attach_loop.h).

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "migrator/migrator.h"
#include "migrator/page_mover.h"
#include "migrator/process_handle.h"
#include "policy/engine.h"
#include "policy/placement.h"
#include "policy/topology.h"
#include "sampler/damon/damon_source.h"
#include "sampler/hintfault/numa_balancing_controller.h"
#include "sampler/perf/event_config.h"
#include "sampler/perf/sampler.h"
#include "sampler/write_fault_rearm.h"
#include "tools/attach/attach_engine.h"
#include "tools/attach/attach_loop.h"
#include "tools/attach/attach_stats.h"
#include "tools/attach/live_sources.h"
#include "tools/attach/source_choice.h"
#include "tools/base/atomic_file.h"
#include "tools/base/clock.h"
#include "tools/base/kernel/capabilities.h"
#include "tools/base/kernel/kernel_fs.h"
#include "tools/base/kernel/proc_stat.h"
#include "tools/base/metrics_server.h"
#include "tools/base/parse.h"
#include "tools/base/status_macros.h"
#include "tools/base/termination_signals.h"
#include "tools/cli.h"
#include "tools/cmd_env.h"
#include "tools/engine_flags.h"
#include "tools/kernel_floor.h"
#include "tools/live_memory_view.h"
#include "tools/print_events.h"
#include "tools/self_memory.h"
#include "tools/version.h"

namespace hotpage {
namespace {

int UsageError(absl::string_view msg) {
  std::cerr << "hotpage attach: " << msg << "\nTry 'hotpage attach --help'.\n";
  return kExitUsage;
}

int Fail(const absl::Status& s) {
  std::cerr << "hotpage attach: " << s.message() << "\n";
  return kExitFailure;
}

// The command line, checked as far as it can be without the machine.
struct AttachArgs {
  ParsedFlags flags;
  int64_t pid = 0;
  int64_t rate_mbps = 0;
  int64_t interval_ms = 0;
  double duration = 0;
  std::string source_name;  // "auto" until ResolveAutoSource
  bool write_faults = false;
  bool dry_run = false;
  PlacementConfig pcfg;
  std::optional<std::string> workload;                 // --workload
  std::optional<MetricsListenAddress> metrics_listen;  // --metrics-listen
  SelfMemoryRequest self_memory;                       // --self-memory
};

// Parses `args` into `a`. Returns the exit code when the command ends here
// (--help, a usage error), nullopt to go on.
std::optional<int> ParseAttachArgs(const std::vector<std::string>& args,
                                   AttachArgs* a) {
  static const std::vector<FlagSpec> specs = [] {
    std::vector<FlagSpec> v = {
        {"pid", "PID", "the process to manage (required)"},
        {"source", "SRC",
         "auto (default: pebs, ibs, hint faults where permitted, write "
         "faults, page faults, then damon; says why), pebs, ibs, damon, "
         "pagefault or hintfault"},
        {"allow-sysctl-changes", "",
         "consent for --source hintfault (or auto, which then prefers it "
         "without PEBS/IBS) to change kernel.numa_balancing and "
         "kernel.numa_balancing_promote_rate_limit_MBps while it runs "
         "(restored at exit)"},
        {"write-faults", "",
         "with --source pagefault or hintfault: also see writes to pages on "
         "every node, fast "
         "tier included, by clearing the process's soft-dirty bits every "
         "interval"},
    };
    v.insert(v.end(), PrintEventsFlagSpecs().begin(),
             PrintEventsFlagSpecs().end());
    // The engine flags (tools/engine_flags.h), shared with `simulate`.
    v.insert(v.end(), EngineFlagSpecs().begin(), EngineFlagSpecs().end());
    v.insert(
        v.end(),
        {
            {"rate-limit-mbps", "N",
             "migration rate limit in MB/s (default 256)"},
            {"interval-ms", "N", "policy round interval (default 1000)"},
            {"duration", "SEC",
             "stop after SEC seconds (default: until Ctrl-C or the process "
             "exits)"},
            {"dry-run", "", "decide and report, move nothing"},
            {"stats-json", "FILE",
             "rewrite FILE (atomically) with JSON stats every round and at "
             "exit"},
            {"rounds", "FILE",
             "append each round to FILE (created new, mode 0600) as a JSON "
             "line: what the engine saw, why hot pages stayed, every move it "
             "planned (planned, not their outcome: the stats have that)"},
            {"prom-file", "FILE",
             "the same in Prometheus text format (node_exporter textfile), "
             "every series labelled workload, pid and cgroup"},
            {"workload", "NAME",
             "the workload label of the metrics (default: the process's "
             "comm)"},
            {"metrics-listen", "ADDR",
             "serve the --prom-file text at http://ADDR/metrics; ADDR is "
             "127.0.0.1:PORT or [::1]:PORT (loopback only: others are "
             "refused), PORT 0 picks a free port (logged)"},
            {"quiet", "",
             "no per-round status lines (start-up, warnings and the summary "
             "stay)"},
            {"self-memory", "WHERE", kSelfMemoryFlagHelp},
        });
    return v;
  }();
  const char* synopsis =
      "--pid PID [--source SRC] [--promote-to NODES] [--rate-limit-mbps N] "
      "[options]";
  const char* description =
      "Samples where PID accesses memory, keeps a decaying hotness table, and "
      "every\n"
      "interval promotes hot pages from slower tiers to fast nodes and demotes "
      "cold\n"
      "pages when a fast node runs short of free memory, with move_pages(2). "
      "Bind\n"
      "policies are never violated; preferred-many masks and --promote-to "
      "limit\n"
      "targets. Needs root (CAP_SYS_NICE to move another process's pages; "
      "DAMON\n"
      "and perf sampling need CAP_SYS_ADMIN / CAP_PERFMON).\n"
      "\n"
      "--source auto (the default) takes PEBS or IBS where a PMU has them; "
      "without,\n"
      "the page-precise sources before DAMON, whose 2 MiB regions promote "
      "several\n"
      "times the hot set: NUMA hint faults where permitted (root, and "
      "either\n"
      "--allow-sysctl-changes or the sysctls already as hintfault sets "
      "them), else\n"
      "write faults (--write-faults, where soft-dirty works), else page "
      "faults, and\n"
      "DAMON only when no page-fault event can be opened. One line on "
      "stderr says\n"
      "what it chose and why each better source was passed over.\n"
      "\n"
      "--source damon creates its own DAMON kdamond for PID and removes it "
      "when hotpage\n"
      "stops; one left by a SIGKILLed hotpage is removed by the next run "
      "(state in\n"
      "/run/hotpage). While any other kdamond exists it refuses to start.\n"
      "\n"
      "--source hintfault (with --allow-sysctl-changes) samples the kernel's "
      "own NUMA\n"
      "hint faults as page faults: page-precise on machines without PEBS/IBS. "
      "It sets\n"
      "kernel.numa_balancing to 2 (tiering; 3 if it was 1) so that only "
      "slower-tier\n"
      "pages take hint faults, and "
      "kernel.numa_balancing_promote_rate_limit_MBps to 0\n"
      "so that the kernel senses but does not promote, system-wide; both are "
      "restored\n"
      "at every exit, and after a crash by the next run (state in "
      "/run/hotpage). It\n"
      "warns when the kernel stops scanning or migrates pages itself (it does "
      "while a\n"
      "fast node has over 1 GiB free) and reports both under \"hintfault\" in "
      "the\n"
      "stats. Ranges with an explicit memory policy are never scanned by the "
      "kernel.\n"
      "The page-fault event counts first touches too: while the process's "
      "resident set\n"
      "grows, as many faults on pages not seen before as it gained pages "
      "are dropped,\n"
      "not promoted (first_touches_dropped in the stats).\n"
      "The source sees no page on the fast tier. Where the kernel demotes on "
      "reclaim\n"
      "(/sys/kernel/mm/numa/demotion_enabled true; attach follows it as it "
      "changes and\n"
      "leaves it as it is), a page that faults in two scan passes is "
      "promoted even into\n"
      "a full fast tier and the kernel's LRU picks what leaves "
      "(reclaim_promotions in\n"
      "the stats; the two faults must come within repeat_window_s, 10 s cut "
      "to the\n"
      "shortest stay of the pages the kernel sent back);\n"
      "otherwise room there comes from demoting pages never sampled, from 10 "
      "s on.\n"
      "\n"
      "--write-faults makes the next write to every page of PID fault once, "
      "wherever\n"
      "the page is, by writing 4 to /proc/PID/clear_refs every 200 ms or more: "
      "without\n"
      "a PMU, the only evidence of which CPUs use pages already on fast "
      "memory\n"
      "(--locality needs it). Writes only. The process takes one minor fault "
      "per page\n"
      "it writes per interval; the interval stretches so that the clears and "
      "those\n"
      "faults (estimated at 1 us each) stay under 3% of a CPU. Its soft-dirty "
      "bits\n"
      "(CRIU incremental dumps) are reset. Needs CONFIG_MEM_SOFT_DIRTY "
      "(checked).\n"
      "\n"
      "Metrics: --stats-json has pid, comm, workload, cgroup (v2 path from\n"
      "/proc/PID/cgroup), version and timestamp (CLOCK_REALTIME, RFC 3339 UTC\n"
      "and Unix seconds); --prom-file and --metrics-listen carry every one of\n"
      "its metrics, each series labelled workload, pid and cgroup, so two\n"
      "attaches never write the same series. For node_exporter's textfile\n"
      "collector give each attach its own file in the collector's directory:\n"
      "--prom-file /var/lib/prometheus/node-exporter/hotpage-PID.prom (the\n"
      "collector reads *.prom; the file is replaced atomically). Two\n"
      "--metrics-listen endpoints need two ports (or PORT 0 each). "
      "cpu_seconds\n"
      "is every hotpage thread's CPU time (the process CPU clock).\n"
      "\n"
      "hotpage's own memory (the hotness table and the engine's state, about "
      "200 bytes\n"
      "per tracked page) is kept off the fast tier: --self-memory slow, the "
      "default,\n"
      "prefers the slowest tier's nodes (MPOL_PREFERRED_MANY, or "
      "MPOL_PREFERRED on\n"
      "its first node before Linux 5.15) for every hotpage thread; the kernel "
      "falls\n"
      "back to other nodes when they are full. A policy hotpage was started "
      "with\n"
      "(numactl) is kept unless slow is named. One start-up line says what is "
      "in force.";
  absl::StatusOr<ParsedFlags> flags = ParseFlags(args, specs);
  if (!flags.ok()) return UsageError(flags.status().message());
  if (flags->Has("help")) {
    std::cout << FormatUsage("attach", synopsis, description, specs);
    return kExitOk;
  }
  if (flags->Has("print-events"))
    return RunPrintEvents("attach", *flags, false);
  if (flags->Has("sysfs-root"))
    return UsageError("--sysfs-root is only used with --print-events");
  if (!flags->positional().empty())
    return UsageError(
        absl::StrCat("unexpected argument '", flags->positional()[0], "'"));
  absl::StatusOr<int64_t> pid = FlagInt(*flags, "pid", 0, 1, 1 << 22);
  if (!pid.ok()) return UsageError(pid.status().message());
  if (*pid == 0) return UsageError("--pid PID is required");
  absl::StatusOr<int64_t> rate_mbps =
      FlagInt(*flags, "rate-limit-mbps", 256, 1, 1 << 20);
  absl::StatusOr<int64_t> interval_ms =
      FlagInt(*flags, "interval-ms", 1000, 50, 3600000);
  absl::StatusOr<double> duration = FlagDouble(*flags, "duration", 0, 0, 1e9);
  for (const absl::Status& s :
       {rate_mbps.status(), interval_ms.status(), duration.status()}) {
    if (!s.ok()) return UsageError(s.message());
  }
  std::string source_name = flags->Get("source").value_or("auto");
  if (source_name != "auto" && source_name != "pebs" && source_name != "ibs" &&
      source_name != "damon" && source_name != "pagefault" &&
      source_name != "hintfault") {
    return UsageError(
        absl::StrCat("unknown source '", source_name,
                     "' (auto, pebs, ibs, damon, pagefault, hintfault)"));
  }
  if (source_name == "hintfault" && !flags->Has("allow-sysctl-changes")) {
    return UsageError(absl::StrCat(
        "--source hintfault changes ", DescribeHintFaultSysctlChanges(),
        ". Pass --allow-sysctl-changes to consent; nothing was changed"));
  }
  if (source_name != "hintfault" && source_name != "auto" &&
      flags->Has("allow-sysctl-changes")) {
    return UsageError(
        "--allow-sysctl-changes is only used by --source hintfault (and by "
        "--source auto, which may choose it)");
  }
  const bool write_faults = flags->Has("write-faults");
  if (write_faults && source_name != "pagefault" &&
      source_name != "hintfault") {
    return UsageError(
        "--write-faults needs a page-fault source: --source pagefault or "
        "--source hintfault");
  }
  const bool dry_run = flags->Has("dry-run");
  // Placement options that need no knowledge of the machine are checked
  // here, with the rest of the command line.
  PlacementConfig pcfg;
  if (absl::Status s = ParseEngineFlags(*flags, &pcfg); !s.ok())
    return UsageError(s.message());
  if (std::optional<std::string> w = flags->Get("workload")) {
    if (absl::Status s = ValidateWorkloadName(*w); !s.ok())
      return UsageError(s.message());
    a->workload = *w;
  }
  if (std::optional<std::string> l = flags->Get("metrics-listen")) {
    absl::StatusOr<MetricsListenAddress> addr = ParseMetricsListen(*l);
    if (!addr.ok()) return UsageError(addr.status().message());
    a->metrics_listen = *addr;
  }
  if (std::optional<std::string> m = flags->Get("self-memory")) {
    absl::StatusOr<SelfMemoryRequest> req = ParseSelfMemory(*m);
    if (!req.ok())
      return UsageError(
          absl::StrCat("--self-memory: ", req.status().message()));
    a->self_memory = *req;
  }
  a->flags = std::move(*flags);
  a->pid = *pid;
  a->rate_mbps = *rate_mbps;
  a->interval_ms = *interval_ms;
  a->duration = *duration;
  a->source_name = source_name;
  a->write_faults = write_faults;
  a->dry_run = dry_run;
  a->pcfg = pcfg;
  return std::nullopt;
}

// Privileges, checked up front so that the error names what is missing
// rather than surfacing as EPERM from deep inside a round.
absl::Status CheckPrivileges(const KernelFs& fs, const AttachArgs& a) {
  const uint64_t caps = EffectiveCapabilities(fs);
  if (a.pid != getpid() && !a.dry_run && !HasCapability(caps, kCapSysNice)) {
    return absl::PermissionDeniedError(
        "moving another process's pages needs CAP_SYS_NICE (run as root, or "
        "grant it: "
        "setcap cap_sys_nice+ep), and ptrace access to the process");
  }
  if (a.source_name == "damon" && !HasCapability(caps, kCapSysAdmin)) {
    return absl::PermissionDeniedError(
        "the damon source writes /sys/kernel/mm/damon/admin, which needs root "
        "(CAP_SYS_ADMIN)");
  }
  if (a.source_name == "hintfault" && !HasCapability(caps, kCapSysAdmin)) {
    return absl::PermissionDeniedError(
        "the hintfault source writes kernel.numa_balancing, which needs root "
        "(CAP_SYS_ADMIN)");
  }
  return absl::OkStatus();
}

// The machine, with at least two memory tiers.
absl::StatusOr<Topology> DiscoverTiers(const KernelFs& fs) {
  SyscallMempolicyProbe probe;
  absl::StatusOr<Topology> topo = DiscoverTopology(fs, &probe);
  if (!topo.ok()) return topo.status();
  if (topo->tiers.size() < 2) {
    return absl::FailedPreconditionError(absl::StrCat(
        "this machine has ", topo->nodes.size(),
        " NUMA node(s) in one memory tier: there is no "
        "faster or slower memory to place pages on (see `hotpage topology`)"));
  }
  return topo;
}

// The engine (hotness table, scanner, placement; policy/engine.h), the
// same as `hotpage simulate` runs. One engine for the whole run: the
// weighted rotation carries over between rounds.
absl::StatusOr<std::unique_ptr<PolicyEngine>> MakeEngine(const AttachArgs& a,
                                                         const KernelFs& fs,
                                                         const Topology& topo) {
  const EngineOptions eopt =
      AttachEngineOptions(fs, a.pid, a.interval_ms, a.source_name);
  return PolicyEngine::Create(topo, a.pcfg, eopt);
}

// The live sample source and what goes with it.
struct LiveSource {
  std::unique_ptr<DamonSource> damon;
  std::unique_ptr<NumaBalancingController>
      hint;  // restores its sysctls when destroyed
  std::unique_ptr<Sampler> sampler;
  std::unique_ptr<WriteFaultRearm> rearm;  // --write-faults
  std::unique_ptr<AttachSource> source;    // what the loop polls
  std::string name;                        // auto resolved
  std::string why;
};

// Chooses (--source auto) and starts the source for `a.pid`. `handle`
// proves the write-fault re-arm's file is the target's.
absl::Status StartSource(const AttachArgs& a, const KernelFs& fs,
                         const Topology& topo, const ProcessHandle& handle,
                         const CommandEnv& env, LiveSource* out) {
  std::string& source_name = out->name;
  source_name = a.source_name;
  std::string& why = out->why;
  if (source_name == "damon") {
    DamonOptions dopt;
    dopt.warn = [](const std::string& line) {
      std::cerr << "hotpage attach: " << line << "\n";
    };
    absl::StatusOr<std::unique_ptr<DamonSource>> d =
        DamonSource::Start(static_cast<pid_t>(a.pid), dopt);
    if (!d.ok()) return d.status();
    out->damon = std::move(*d);
    if (why.empty()) why = "DAMON region monitoring";
  } else {
    const bool hint = source_name == "hintfault";
    absl::StatusOr<SourceRequest> req =
        ParseSourceRequest(hint ? "pagefault" : source_name);
    absl::StatusOr<EventGroup> events =
        ChooseEvents(fs, *req, SamplingOptions(), &why);
    if (!events.ok()) return events.status();
    absl::StatusOr<std::vector<int>> cpus = OnlineCpus(fs);
    if (!cpus.ok()) return cpus.status();
    SamplerConfig scfg;
    scfg.events = *events;
    scfg.pids = {static_cast<pid_t>(a.pid)};
    scfg.cpus = *cpus;
    // The process's existing threads, each its own task for perf (inherit
    // follows only threads created later).
    IncludeExistingThreads(fs, &scfg);
    if (hint || a.write_faults) SizeRingsForFaultBursts(&scfg);
    absl::StatusOr<std::unique_ptr<Sampler>> s = Sampler::Open(scfg, env.perf);
    if (!s.ok()) return s.status();
    out->sampler = std::move(*s);
    if (absl::Status st = out->sampler->Enable(); !st.ok()) return st;
    if (hint) {
      // The sysctls after the sampler is on: for a task that has run longer
      // than the scan delay (1 s) the kernel's first tick in tiering mode
      // starts a scan pass, whose hint faults come within milliseconds; a
      // fault before the sampler is enabled is never seen, and its page
      // waits for the next pass (a scan period or more later).
      NumaBalancingOptions hopt;
      hopt.pid = static_cast<pid_t>(a.pid);
      const std::vector<int> fast = topo.FastNodes();
      for (const NodeInfo& n : topo.nodes) {
        if (std::find(fast.begin(), fast.end(), n.id) == fast.end())
          hopt.slow_nodes.push_back(n.id);
      }
      hopt.check_interval = absl::Milliseconds(a.interval_ms);
      hopt.warn = [](const std::string& line) {
        std::cerr << "hotpage attach: " << line << "\n";
      };
      absl::StatusOr<std::unique_ptr<NumaBalancingController>> h =
          env.start_hintfault ? env.start_hintfault(hopt)
                              : NumaBalancingController::Start(hopt);
      if (!h.ok()) return h.status();
      out->hint = std::move(*h);
      why = absl::StrCat("NUMA hint faults as page-fault samples; ",
                         out->hint->DescribeChanges(), " until exit");
    }
    if (out->sampler->system_wide())
      why = absl::StrCat(why, "; system-wide: ", out->sampler->reason());
    if (a.write_faults) {
      // Opened once and bound to this process (write_fault_rearm.h); the
      // handle check after the open proves the pid was not reused before it.
      if (absl::Status probe = ProbeSoftDirty(); !probe.ok()) return probe;
      absl::StatusOr<std::unique_ptr<WriteFaultRearm>> r = StartWriteFaultRearm(
          static_cast<pid_t>(a.pid),
          [&] { return handle.StillSame() == TargetState::kSame; });
      if (!r.ok()) return r.status();
      out->rearm = std::move(*r);
      why = absl::StrCat(source_name == "pagefault" ? "page faults" : why,
                         "; write faults re-armed on every node every 200 ms "
                         "or more (soft-dirty)");
    }
  }

  if (out->damon) {
    out->source = std::make_unique<DamonAttachSource>(out->damon.get());
  } else {
    out->source = std::make_unique<SamplerAttachSource>(out->sampler.get());
  }
  return absl::OkStatus();
}

// Stops what StartSource started, newest first (the hintfault controller
// restores its sysctls when destroyed).
void StopSource(LiveSource* src) {
  src->source.reset();
  src->rearm.reset();
  src->sampler.reset();
  src->hint.reset();
  src->damon.reset();
  src->why.clear();
}

// Starts the named source, or for --source auto probes the machine,
// chooses (tools/attach/source_choice.h), starts the choice and, when it
// fails to start, the next one down the order (OpenAutoSource); says on
// stderr what failed, what it took and why. `a` then reads as if the
// source had been named.
absl::Status StartChosenSource(const KernelFs& fs, const Topology& topo,
                               const ProcessHandle& handle,
                               const CommandEnv& env, AttachArgs* a,
                               LiveSource* out) {
  if (a->source_name != "auto")
    return StartSource(*a, fs, topo, handle, env, out);
  const pid_t pid = static_cast<pid_t>(a->pid);
  const std::function<absl::Status()> probe_soft_dirty =
      [pid]() -> absl::Status {
    HOTPAGE_RETURN_IF_ERROR(ProbeSoftDirty());
    return OpenClearRefs(pid).status();
  };
  const SourceCapabilities caps = ProbeSourceCapabilities(
      fs, a->flags.Has("allow-sysctl-changes"), probe_soft_dirty);
  absl::StatusOr<SourceChoice> choice = OpenAutoSource(
      caps,
      [&](const SourceChoice& c) {
        AttachArgs tried = *a;
        tried.source_name = c.source;
        tried.write_faults = c.write_faults;
        const absl::Status s = StartSource(tried, fs, topo, handle, env, out);
        if (!s.ok()) StopSource(out);
        return s;
      },
      [](const std::string& line) {
        std::cerr << "hotpage attach: " << line << "\n";
      },
      probe_soft_dirty);
  if (!choice.ok()) return choice.status();
  std::cerr << "hotpage attach: " << choice->reason << "\n";
  a->source_name = choice->source;
  a->write_faults = choice->write_faults;
  return absl::OkStatus();
}

}  // namespace

// The start-up lines on stderr: what runs, and a warning when --locality
// cannot work with the chosen source.
void PrintStartup(const AttachArgs& a, const LiveSource& src,
                  const Topology& topo, const SelfMemoryReport& self_memory) {
  // --locality judges pages already on the fast tier by who accesses them:
  // DAMON samples carry no CPU, and page faults without the re-arm stop once
  // a page is resident (hint faults once it is on the top tier).
  if (a.pcfg.locality &&
      (src.damon ||
       (!src.rearm && (src.name == "pagefault" || src.name == "hintfault")))) {
    std::cerr << "hotpage attach: warning: --locality will move nothing with "
                 "--source "
              << src.name
              << ": it sees no accesses to pages already on the fast tier"
              << (src.damon ? " (DAMON samples carry no CPU)"
                            : "; add --write-faults")
              << "\n";
  }
  std::cerr << "hotpage attach: pid " << a.pid << ", source " << src.name
            << (src.why.empty() ? "" : " (") << src.why
            << (src.why.empty() ? "" : ")") << ", fast nodes "
            << FormatKernelList(topo.FastNodes())
            << (a.dry_run ? ", dry run: nothing will be moved" : "") << "\n";
  std::cerr << "hotpage attach: " << self_memory.line << "\n";
}

int RunAttach(const std::vector<std::string>& args) {
  absl::StatusOr<KernelFs> fs = KernelFs::Open("/");
  if (!fs.ok()) return Fail(fs.status());
  LinuxPerfEventSystem perf;
  return AttachMain(args, CommandEnv{&*fs, &perf, {}, nullptr});
}

int AttachMain(const std::vector<std::string>& args, const CommandEnv& env) {
  AttachArgs a;
  if (std::optional<int> done = ParseAttachArgs(args, &a)) return *done;
  const KernelFs* fs = env.fs;
  if (absl::Status s = CheckPrivileges(*fs, a); !s.ok()) return Fail(s);
  absl::StatusOr<Topology> topo = DiscoverTiers(*fs);
  if (!topo.ok()) return Fail(topo.status());
  // hotpage's own memory policy (tools/self_memory.h), before the first
  // thread: set_mempolicy sets this thread's, and every thread started
  // from here on (signals, metrics, migrator, hint-fault watchdog, write-
  // fault re-arm, DAMON helpers) inherits it. DiscoverTiers' mempolicy
  // probe thread has been joined.
  SelfMemoryReport self_memory;
  {
    absl::StatusOr<SelfMemoryPolicy> policy =
        ChooseSelfMemoryPolicy(a.self_memory, *topo);
    if (!policy.ok())
      return UsageError(
          absl::StrCat("--self-memory: ", policy.status().message()));
    SyscallSelfMempolicy live;
    absl::StatusOr<SelfMemoryReport> r = ApplySelfMemoryPolicy(
        a.self_memory, *policy,
        env.self_mempolicy != nullptr ? *env.self_mempolicy : live);
    if (!r.ok()) return Fail(r.status());
    self_memory = std::move(*r);
    if (!self_memory.warning.empty())
      std::cerr << "hotpage attach: warning: " << self_memory.warning << "\n";
  }
  // Signals next, before any other thread: TerminationSignalThread blocks
  // SIGINT/SIGTERM in this thread, and threads started later (migrator,
  // DAMON helpers) inherit the mask, so the signal can only reach the
  // signalfd.
  std::atomic<bool> stop{false};
  absl::StatusOr<std::unique_ptr<TerminationSignalThread>> signals =
      TerminationSignalThread::Start(
          [&stop](int) { stop.store(true, std::memory_order_relaxed); },
          {SIGINT, SIGTERM, SIGHUP});
  if (!signals.ok()) return Fail(signals.status());
  // The stats files, and the endpoint serving the last Prometheus text
  // (started here, after the signal thread, so that its thread inherits the
  // blocked signals, and before any source changes the machine, so that a
  // port in use fails the run with nothing to undo).
  // Their paths are checked now, for the same reason as --rounds below:
  // a write that would fail at every publication fails the run at once.
  for (const char* output : {"stats-json", "prom-file"}) {
    if (std::optional<std::string> path = a.flags.Get(output)) {
      if (absl::Status s = CheckCanWriteFileAtomically(*path); !s.ok())
        return Fail(s);
    }
  }
  AttachStatsFiles stats_files(a.flags.Get("stats-json"),
                               a.flags.Get("prom-file"), &std::cerr,
                               /*keep_prom=*/a.metrics_listen.has_value());
  // --rounds: created now, before anything changes the machine, so that a
  // bad path fails the run with nothing to undo. 0600: it lists the
  // process's addresses.
  std::unique_ptr<AppendOnlyFile> rounds_file;
  if (std::optional<std::string> path = a.flags.Get("rounds")) {
    absl::StatusOr<std::unique_ptr<AppendOnlyFile>> f =
        AppendOnlyFile::Create(*path, 0600);
    if (!f.ok()) return Fail(f.status());
    rounds_file = std::move(*f);
  }
  std::unique_ptr<MetricsServer> metrics_server;
  if (a.metrics_listen) {
    absl::StatusOr<std::unique_ptr<MetricsServer>> m = MetricsServer::Start(
        *a.metrics_listen, [&stats_files] { return stats_files.LatestProm(); });
    if (!m.ok()) return Fail(m.status());
    metrics_server = std::move(*m);
    std::cerr << "hotpage attach: metrics on " << metrics_server->url() << "\n";
  }
  if (absl::Status s = ApplyMachineEngineFlags(a.flags, *topo, &a.pcfg);
      !s.ok())
    return UsageError(s.message());
  // No node's low watermark below the kernel's own floor there
  // (tools/kernel_floor.h), read once: below it the kernel reclaims for,
  // and then refuses, the pages the migrator moves onto the node.
  if (absl::StatusOr<std::vector<NodeFloor>> floors = ReadKernelFloors(*fs);
      floors.ok()) {
    for (const std::string& line : ApplyKernelFloors(*floors, *topo, &a.pcfg))
      std::cerr << "hotpage attach: " << line << "\n";
  } else {
    std::cerr << "hotpage attach: warning: watermarks from the fractions "
                 "alone, without the kernel's floor: "
              << floors.status().message() << "\n";
  }
  // Two guards on the same process: the migrator's (checked before every
  // move_pages call) and the loop's (ends the run when the process exits).
  absl::StatusOr<ProcessHandle> handle =
      ProcessHandle::Attach(static_cast<pid_t>(a.pid), &*fs);
  if (!handle.ok()) return Fail(handle.status());
  absl::StatusOr<ProcessHandle> migrator_handle =
      ProcessHandle::Attach(static_cast<pid_t>(a.pid), &*fs);
  if (!migrator_handle.ok()) return Fail(migrator_handle.status());
  // The process exists: probe its clear_refs for --source auto. The source
  // starts before the engine is made: its sample weight depends on the
  // source auto takes.
  LiveSource src;
  // Before the source: the first-touch filter's baseline (attach_loop.h).
  const uint64_t resident_before_source = ResidentPages4K(*fs, a.pid);
  if (absl::Status s = StartChosenSource(*fs, *topo, *handle, env, &a, &src);
      !s.ok())
    return Fail(s);
  absl::StatusOr<std::unique_ptr<PolicyEngine>> engine =
      MakeEngine(a, *fs, *topo);
  if (!engine.ok()) return UsageError(engine.status().message());

  // The migrator and the loop share one monotonic clock (attach_loop.h).
  SyscallPageMover mover;
  MigratorOptions mopt;
  mopt.rate_limit_bytes_per_sec = static_cast<double>(a.rate_mbps) * 1e6;
  Migrator migrator(mopt, std::move(*migrator_handle), &mover,
                    RealClock::Get());
  LiveMemoryView view(static_cast<pid_t>(a.pid), &mover, &*fs, &*topo,
                      a.dry_run ? nullptr : &migrator);
  // THP-backed chunks, before the first samples.
  (*engine)->RefreshHugeChunks(view);
  PrintStartup(a, src, *topo, self_memory);
  AttachLoopOptions lopt;
  lopt.dry_run = a.dry_run;
  lopt.duration_s = a.duration;
  lopt.source_name = src.name;
  lopt.live_line = isatty(STDERR_FILENO) && !a.flags.Has("quiet");
  // --quiet: no per-round line at all, on a terminal or not (the start-up
  // lines, warnings and the summary stay).
  lopt.round_lines = !a.flags.Has("quiet");
  lopt.identity = ReadAttachIdentity(*fs, a.pid, a.workload, VersionNumber());
  AttachLoopParts parts{
      .source = src.source.get(),
      .engine = engine->get(),
      .view = &view,
      .migrator = &migrator,
      .clock = RealClock::Get(),
      .stats = &stats_files,
      .target_alive = [&handle] { return handle->Alive(); },
      .stop = &stop,
      .rearm = src.rearm.get(),
      .hintfault = src.hint.get(),
      // Hint faults: the first-touch filter's budget (attach_loop.h).
      .resident_pages = src.hint != nullptr
                            ? std::function<uint64_t()>([fs, pid = a.pid] {
                                return ResidentPages4K(*fs, pid);
                              })
                            : nullptr,
      .resident_before_source = resident_before_source,
      .damon_recovered = src.damon ? src.damon->recovered() : std::string(),
      .log = &std::cerr,
      .rounds = rounds_file.get(),
      // The table grows with the process (tools/attach/attach_engine.h).
      // and follows demotion_enabled (FollowKernelDemotion: the hint-fault
      // watchdog reads it every check and says on stderr when it changes).
      .before_round =
          [engine = engine->get(), fs, pid = a.pid, hint = src.hint.get()] {
            GrowWithProcess(*engine, *fs, pid, std::cerr);
            if (hint != nullptr)
              FollowKernelDemotion(*engine, hint->DemotionEnabled());
          },
      // Every thread's CPU: the loop, the migrator, the hint-fault
      // watchdog, the signal and metrics threads.
      .cpu_time = ProcessCpuTime,
      .wall_ns = nullptr};
  absl::Status s = AttachLoop(lopt, std::move(parts)).Run();
  return s.ok() ? kExitOk : Fail(s);
}

}  // namespace hotpage
