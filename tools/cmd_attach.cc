// `hotpage attach`: keeps a running process's hot pages in fast memory and
// its cold pages out of the way.
//
// One loop on the main thread: it polls the sample source (DAMON regions,
// or a perf sampler: PEBS, IBS, page faults) into the hotness table, and
// every --interval-ms runs a policy round: scan the table, learn where the
// candidate pages live (move_pages queries), read the process's per-range
// policies and the nodes' free memory, decide (policy/placement.h), and
// hand the moves to the Migrator's own thread (unless --dry-run). The
// table and the round are the PolicyEngine (policy/engine.h) that `hotpage
// simulate` also runs; this file adds the live sources, the LiveMemoryView
// (tools/live_memory_view.h) and the migrator. Stats go
// to --stats-json / --prom-file (atomically replaced) every round.
// SIGINT/SIGTERM/SIGHUP end the loop between rounds; DAMON, the migrator
// and the hintfault source's sysctls are torn down on every exit path.

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "hotness/hotness_table.h"
#include "migrator/migrator.h"
#include "migrator/move_requests.h"
#include "migrator/page_mover.h"
#include "migrator/process_handle.h"
#include "policy/numa_maps.h"
#include "policy/engine.h"
#include "policy/placement.h"
#include "policy/topology.h"
#include "sampler/damon/damon_source.h"
#include "sampler/perf/event_config.h"
#include "sampler/hintfault/numa_balancing_controller.h"
#include "sampler/perf/sampler.h"
#include "sampler/write_fault_rearm.h"
#include "tools/base/atomic_file.h"
#include "tools/base/capabilities.h"
#include "tools/base/clock.h"
#include "tools/base/json_writer.h"
#include "tools/base/kernel_fs.h"
#include "tools/base/parse.h"
#include "tools/base/status_macros.h"
#include "tools/base/termination_signals.h"
#include "tools/live_memory_view.h"
#include "tools/cli.h"

namespace hotpage {
namespace {

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Everything the stats files report.
struct AttachStats {
  uint64_t rounds = 0;
  uint64_t samples = 0;
  uint64_t hot_pages = 0;  // 4 KiB pages at or above the round's hot threshold
  std::map<int, uint64_t> hot_pages_by_node;
  uint64_t planned_promotions = 0;  // pages (4 KiB) the policy chose to promote
  uint64_t planned_demotions = 0;
  uint64_t planned_locality = 0;    // pages (4 KiB) moved by --locality within a tier
  uint64_t promoted_entries = 0;    // table entries promoted (yield denominator)
  uint64_t yield_hits = 0;          // samples that hit promoted entries afterwards
  double cpu_seconds = 0;
  MigratorStats migrator;
  const HintFaultSource* hintfault = nullptr;  // --source hintfault: its watchdog's stats
  const WriteFaultRearm* write_faults = nullptr;  // --write-faults: re-arm stats
  std::string damon_recovered;  // --source damon: the stale kdamond Start removed, if any
};

uint64_t FailedTotal(const MigratorStats& m) {
  uint64_t total = 0;
  for (const auto& [err, n] : m.failed_pages_by_errno) total += n;
  return total;
}

std::string StatsJson(const AttachStats& s, bool dry_run, const std::string& source) {
  JsonWriter w(2);
  w.BeginObject();
  w.Key("promoted_pages");
  w.Uint(s.migrator.promoted_pages);
  w.Key("demoted_pages");
  w.Uint(s.migrator.demoted_pages);
  w.Key("promoted_bytes");
  w.Uint(s.migrator.promoted_bytes);
  w.Key("demoted_bytes");
  w.Uint(s.migrator.demoted_bytes);
  w.Key("failed_pages");
  w.BeginObject();
  for (const auto& [err, n] : s.migrator.failed_pages_by_errno) {
    w.Key(ErrnoName(err));
    w.Uint(n);
  }
  w.EndObject();
  w.Key("failed_pages_total");
  w.Uint(FailedTotal(s.migrator));
  w.Key("pingpong_pages");
  w.Uint(s.migrator.pingpong_pages);
  w.Key("samples");
  w.Uint(s.samples);
  w.Key("hot_pages");
  w.Uint(s.hot_pages);
  w.Key("hot_pages_by_node");
  w.BeginObject();
  for (const auto& [node, n] : s.hot_pages_by_node) {
    w.Key(absl::StrCat(node));
    w.Uint(n);
  }
  w.EndObject();
  w.Key("promotion_yield");
  w.Double(s.promoted_entries ? static_cast<double>(s.yield_hits) / static_cast<double>(s.promoted_entries) : 0.0);
  w.Key("hot_to_moved_ms");
  w.BeginObject();
  w.Key("count");
  w.Uint(s.migrator.hot_to_moved.count());
  w.Key("p50");
  w.Double(absl::ToDoubleMilliseconds(s.migrator.hot_to_moved.Quantile(0.5)));
  w.Key("p99");
  w.Double(absl::ToDoubleMilliseconds(s.migrator.hot_to_moved.Quantile(0.99)));
  w.Key("max");
  w.Double(absl::ToDoubleMilliseconds(s.migrator.hot_to_moved.max()));
  w.EndObject();
  w.Key("planned_promotions");
  w.Uint(s.planned_promotions);
  w.Key("planned_demotions");
  w.Uint(s.planned_demotions);
  w.Key("planned_locality");
  w.Uint(s.planned_locality);
  w.Key("rounds");
  w.Uint(s.rounds);
  w.Key("dry_run");
  w.Bool(dry_run);
  w.Key("source");
  w.String(source);
  w.Key("cpu_seconds");
  w.Double(s.cpu_seconds);
  if (!s.damon_recovered.empty()) {
    w.Key("damon");
    w.BeginObject();
    w.Key("recovered");
    w.String(s.damon_recovered);
    w.EndObject();
  }
  if (s.write_faults != nullptr) {
    const WriteFaultRearmStats& r = s.write_faults->stats();
    w.Key("write_faults");
    w.BeginObject();
    w.Key("rearms");
    w.Uint(r.rearms);
    w.Key("clear_ms_total");
    w.Double(static_cast<double>(r.clear_ns_total) / 1e6);
    w.Key("clear_ms_max");
    w.Double(static_cast<double>(r.clear_ns_max) / 1e6);
    w.Key("interval_ms");
    w.Double(static_cast<double>(r.interval_ns) / 1e6);
    w.EndObject();
  }
  if (s.hintfault != nullptr) {
    w.Key("hintfault");
    s.hintfault->AppendJson(&w);
  }
  w.EndObject();
  return w.str() + "\n";
}

std::string StatsProm(const AttachStats& s) {
  std::string out;
  auto metric = [&](const char* name, const char* help, const std::string& body) {
    absl::StrAppend(&out, "# HELP hotpage_", name, " ", help, "\n# TYPE hotpage_", name, " ",
                    absl::string_view(name).size() > 6 && absl::string_view(name).substr(absl::string_view(name).size() - 6) == "_total" ? "counter" : "gauge", "\n", body);
  };
  metric("promoted_pages_total", "Pages moved to a faster tier.",
         absl::StrCat("hotpage_promoted_pages_total ", s.migrator.promoted_pages, "\n"));
  metric("demoted_pages_total", "Pages moved to a slower tier.",
         absl::StrCat("hotpage_demoted_pages_total ", s.migrator.demoted_pages, "\n"));
  std::string failed;
  for (const auto& [err, n] : s.migrator.failed_pages_by_errno) {
    absl::StrAppend(&failed, "hotpage_failed_pages_total{errno=\"", ErrnoName(err), "\"} ", n, "\n");
  }
  metric("failed_pages_total", "Pages move_pages failed to move, by errno.", failed);
  metric("pingpong_pages_total", "Pages put on hold for moving back and forth.",
         absl::StrCat("hotpage_pingpong_pages_total ", s.migrator.pingpong_pages, "\n"));
  metric("samples_total", "Samples ingested.", absl::StrCat("hotpage_samples_total ", s.samples, "\n"));
  metric("hot_pages", "4 KiB pages at or above the hot threshold.",
         absl::StrCat("hotpage_hot_pages ", s.hot_pages, "\n"));
  std::string by_node;
  for (const auto& [node, n] : s.hot_pages_by_node) {
    absl::StrAppend(&by_node, "hotpage_hot_pages_by_node{node=\"", node, "\"} ", n, "\n");
  }
  metric("hot_pages_by_node", "Hot 4 KiB pages per NUMA node.", by_node);
  metric("promotion_yield", "Samples on promoted pages after promotion, per promoted page.",
         absl::StrFormat("hotpage_promotion_yield %g\n",
                         s.promoted_entries ? static_cast<double>(s.yield_hits) / s.promoted_entries : 0.0));
  return out;
}

absl::StatusOr<std::vector<int>> ParseNodeList(const std::string& text, const Topology& topo) {
  absl::StatusOr<std::vector<int>> nodes = ParseKernelList(text);
  if (!nodes.ok()) return absl::InvalidArgumentError(absl::StrCat("--promote-to: ", nodes.status().message()));
  if (nodes->empty()) return absl::InvalidArgumentError("--promote-to: empty node list");
  for (int n : *nodes) {
    if (topo.FindNode(n) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("--promote-to: node ", n, " is not an online NUMA node"));
    }
  }
  return nodes;
}

}  // namespace

int RunAttach(const std::vector<std::string>& args) {
  const std::vector<FlagSpec> specs = {
      {"pid", "PID", "the process to manage (required)"},
      {"source", "SRC", "auto (default: pebs, ibs, then damon), pebs, ibs, damon, pagefault or hintfault"},
      {"allow-sysctl-changes", "", "consent for --source hintfault to change kernel.numa_balancing and "
                                   "kernel.numa_balancing_promote_rate_limit_MBps while it runs (restored at exit)"},
      {"write-faults", "", "with --source pagefault or hintfault: also see writes to pages on every node, fast "
                           "tier included, by clearing the process's soft-dirty bits every interval"},
      {"promote-to", "NODES", "promote only to these nodes (a preferred-many mask, e.g. 0-1)"},
      {"weights", "W", "spread promotions over the target nodes by weight: kernel (weighted_interleave), auto (HMAT bandwidth) or 0:3,1:1"},
      {"package-aware", "", "prefer target nodes in the package of the CPUs that access the page"},
      {"keep-interleave", "TOL", "keep interleave / weighted interleave ranges within TOL (0..1) of their ratio"},
      {"huge-strict", "", "a 2 MiB page with a preferred node goes only there, never scattered"},
      {"locality", "", "move hot pages accessed from one node only to that node, within the fast tier (needs "
                       "evidence from fast-tier pages: pebs, ibs or --write-faults)"},
      {"rate-limit-mbps", "N", "migration rate limit in MB/s (default 256)"},
      {"interval-ms", "N", "policy round interval (default 1000)"},
      {"duration", "SEC", "stop after SEC seconds (default: until Ctrl-C or the process exits)"},
      {"dry-run", "", "decide and report, move nothing"},
      {"stats-json", "FILE", "rewrite FILE (atomically) with JSON stats every round and at exit"},
      {"prom-file", "FILE", "the same in Prometheus text format (node_exporter textfile)"},
      {"quiet", "", "no live status line"},
  };
  const char* synopsis = "--pid PID [--source SRC] [--promote-to NODES] [--rate-limit-mbps N] [options]";
  const char* description =
      "Samples where PID accesses memory, keeps a decaying hotness table, and every\n"
      "interval promotes hot pages from slower tiers to fast nodes and demotes cold\n"
      "pages when a fast node runs short of free memory, with move_pages(2). Bind\n"
      "policies are never violated; preferred-many masks and --promote-to limit\n"
      "targets. Needs root (CAP_SYS_NICE to move another process's pages; DAMON\n"
      "and perf sampling need CAP_SYS_ADMIN / CAP_PERFMON).\n"
      "\n"
      "--source damon creates its own DAMON kdamond for PID and removes it when hotpage\n"
      "stops; one left by a SIGKILLed hotpage is removed by the next run (state in\n"
      "/run/hotpage). While any other kdamond exists it refuses to start.\n"
      "\n"
      "--source hintfault (with --allow-sysctl-changes) samples the kernel's own NUMA\n"
      "hint faults as page faults: page-precise on machines without PEBS/IBS. It sets\n"
      "kernel.numa_balancing to 2 (tiering; 3 if it was 1) so that only slower-tier\n"
      "pages take hint faults, and kernel.numa_balancing_promote_rate_limit_MBps to 0\n"
      "so that the kernel senses but does not promote, system-wide; both are restored\n"
      "at every exit, and after a crash by the next run (state in /run/hotpage). It\n"
      "warns when the kernel stops scanning or migrates pages itself (it does while a\n"
      "fast node has over 1 GiB free) and reports both under \"hintfault\" in the\n"
      "stats. Ranges with an explicit memory policy are never scanned by the kernel.\n"
      "\n"
      "--write-faults makes the next write to every page of PID fault once, wherever\n"
      "the page is, by writing 4 to /proc/PID/clear_refs every 200 ms or more: without\n"
      "a PMU, the only evidence of which CPUs use pages already on fast memory\n"
      "(--locality needs it). Writes only. The process takes one minor fault per page\n"
      "it writes per interval; the interval stretches so that the clears and those\n"
      "faults (estimated at 1 us each) stay under 3% of a CPU. Its soft-dirty bits\n"
      "(CRIU incremental dumps) are reset. Needs CONFIG_MEM_SOFT_DIRTY (checked).";
  auto usage_error = [](absl::string_view msg) {
    std::cerr << "hotpage attach: " << msg << "\nTry 'hotpage attach --help'.\n";
    return kExitUsage;
  };
  auto fail = [](const absl::Status& s) {
    std::cerr << "hotpage attach: " << s.message() << "\n";
    return kExitFailure;
  };
  absl::StatusOr<ParsedFlags> flags = ParseFlags(args, specs);
  if (!flags.ok()) return usage_error(flags.status().message());
  if (flags->Has("help")) {
    std::cout << FormatUsage("attach", synopsis, description, specs);
    return kExitOk;
  }
  if (!flags->positional().empty()) return usage_error(absl::StrCat("unexpected argument '", flags->positional()[0], "'"));
  absl::StatusOr<int64_t> pid = FlagInt(*flags, "pid", 0, 1, 1 << 22);
  if (!pid.ok()) return usage_error(pid.status().message());
  if (*pid == 0) return usage_error("--pid PID is required");
  absl::StatusOr<int64_t> rate_mbps = FlagInt(*flags, "rate-limit-mbps", 256, 1, 1 << 20);
  absl::StatusOr<int64_t> interval_ms = FlagInt(*flags, "interval-ms", 1000, 50, 3600000);
  absl::StatusOr<double> duration = FlagDouble(*flags, "duration", 0, 0, 1e9);
  for (const absl::Status& s : {rate_mbps.status(), interval_ms.status(), duration.status()}) {
    if (!s.ok()) return usage_error(s.message());
  }
  std::string source_name = flags->Get("source").value_or("auto");
  if (source_name != "auto" && source_name != "pebs" && source_name != "ibs" && source_name != "damon" &&
      source_name != "pagefault" && source_name != "hintfault") {
    return usage_error(
        absl::StrCat("unknown source '", source_name, "' (auto, pebs, ibs, damon, pagefault, hintfault)"));
  }
  if (source_name == "hintfault" && !flags->Has("allow-sysctl-changes")) {
    return usage_error(absl::StrCat("--source hintfault changes ", DescribeHintFaultSysctlChanges(),
                                    ". Pass --allow-sysctl-changes to consent; nothing was changed"));
  }
  if (source_name != "hintfault" && flags->Has("allow-sysctl-changes")) {
    return usage_error("--allow-sysctl-changes is only used by --source hintfault");
  }
  const bool write_faults = flags->Has("write-faults");
  if (write_faults && source_name != "pagefault" && source_name != "hintfault") {
    return usage_error("--write-faults needs a page-fault source: --source pagefault or --source hintfault");
  }
  const bool dry_run = flags->Has("dry-run");
  // Placement options that need no knowledge of the machine are checked
  // here, with the rest of the command line.
  PlacementConfig pcfg;
  if (std::optional<std::string> w = flags->Get("weights")) {
    absl::StatusOr<WeightsConfig> weights = ParseWeights(*w);
    if (!weights.ok()) return usage_error(absl::StrCat("--weights: ", weights.status().message()));
    pcfg.weights = *weights;
  }
  pcfg.package_aware = flags->Has("package-aware");
  pcfg.huge_strict_preferred = flags->Has("huge-strict");
  pcfg.locality = flags->Has("locality");
  if (flags->Has("keep-interleave")) {
    absl::StatusOr<double> tol = FlagDouble(*flags, "keep-interleave", 0, 0, 1);
    if (!tol.ok()) return usage_error(tol.status().message());
    pcfg.interleave_tolerance = *tol;
  }

  // Signals first: TerminationSignalThread blocks SIGINT/SIGTERM in this
  // thread, and threads started later (migrator, DAMON helpers) inherit the
  // mask, so the signal can only reach the signalfd.
  std::atomic<bool> stop{false};
  absl::StatusOr<std::unique_ptr<TerminationSignalThread>> signals =
      TerminationSignalThread::Start([&stop](int) { stop.store(true, std::memory_order_relaxed); },
                                     {SIGINT, SIGTERM, SIGHUP});
  if (!signals.ok()) return fail(signals.status());

  absl::StatusOr<KernelFs> fs = KernelFs::Open("/");
  if (!fs.ok()) return fail(fs.status());
  // Privileges, checked up front so that the error names what is missing
  // rather than surfacing as EPERM from deep inside a round.
  const uint64_t caps = EffectiveCapabilities(*fs);
  if (*pid != getpid() && !dry_run && !HasCapability(caps, kCapSysNice)) {
    return fail(absl::PermissionDeniedError(
        "moving another process's pages needs CAP_SYS_NICE (run as root, or grant it: "
        "setcap cap_sys_nice+ep), and ptrace access to the process"));
  }
  if (source_name == "damon" && !HasCapability(caps, kCapSysAdmin)) {
    return fail(absl::PermissionDeniedError(
        "the damon source writes /sys/kernel/mm/damon/admin, which needs root (CAP_SYS_ADMIN)"));
  }
  if (source_name == "hintfault" && !HasCapability(caps, kCapSysAdmin)) {
    return fail(absl::PermissionDeniedError(
        "the hintfault source writes kernel.numa_balancing, which needs root (CAP_SYS_ADMIN)"));
  }
  SyscallMempolicyProbe probe;
  absl::StatusOr<Topology> topo = DiscoverTopology(*fs, &probe);
  if (!topo.ok()) return fail(topo.status());
  if (topo->tiers.size() < 2) {
    return fail(absl::FailedPreconditionError(absl::StrCat(
        "this machine has ", topo->nodes.size(), " NUMA node(s) in one memory tier: there is no "
        "faster or slower memory to place pages on (see `hotpage topology`)")));
  }
  if (std::optional<std::string> p = flags->Get("promote-to")) {
    absl::StatusOr<std::vector<int>> nodes = ParseNodeList(*p, *topo);
    if (!nodes.ok()) return usage_error(nodes.status().message());
    pcfg.promote_to = *nodes;
  }
  if (absl::Status s = ValidatePlacementConfig(pcfg, *topo); !s.ok()) return usage_error(s.message());
  // The engine (hotness table, scanner, placement; policy/engine.h), the
  // same as `hotpage simulate` runs. One engine for the whole run: the
  // weighted rotation carries over between rounds.
  EngineOptions eopt;
  eopt.interval_ns = static_cast<uint64_t>(*interval_ms) * 1000000;
  eopt.address_space = static_cast<uint32_t>(*pid);
  // A hint fault is one sample per page per kernel scan pass (1 s, or 5-19 s
  // when the kernel's 3% cap slows it): weight 8 outlives the 3 epoch
  // halvings that may pass before the next round sees it (a count of 1
  // became 0 under load and the hot set was missed).
  if (source_name == "hintfault") eopt.sample_weight = 8;
  // The hotness table covers the process's resident pages (policy/engine.h
  // footprint_pages): /proc/PID/statm's second field, in system pages.
  if (absl::StatusOr<std::string> statm = fs->ReadFile(absl::StrCat("/proc/", *pid, "/statm")); statm.ok()) {
    std::vector<std::string> fields = absl::StrSplit(*statm, ' ', absl::SkipEmpty());
    uint64_t resident = 0;
    if (fields.size() >= 2 && absl::SimpleAtoi(fields[1], &resident)) {
      eopt.footprint_pages = resident * (static_cast<uint64_t>(getpagesize()) / 4096);
    }
  }
  absl::StatusOr<std::unique_ptr<PolicyEngine>> engine = PolicyEngine::Create(*topo, pcfg, eopt);
  if (!engine.ok()) return usage_error(engine.status().message());

  // Two guards on the same process: the migrator's (checked before every
  // move_pages call) and the loop's (ends the run when the process exits).
  absl::StatusOr<ProcessHandle> handle = ProcessHandle::Attach(static_cast<pid_t>(*pid), &*fs);
  if (!handle.ok()) return fail(handle.status());
  absl::StatusOr<ProcessHandle> migrator_handle = ProcessHandle::Attach(static_cast<pid_t>(*pid), &*fs);
  if (!migrator_handle.ok()) return fail(migrator_handle.status());

  // Source.
  std::unique_ptr<DamonSource> damon;
  std::unique_ptr<HintFaultSource> hint;  // restores its sysctls when destroyed
  std::unique_ptr<Sampler> sampler;
  std::unique_ptr<WriteFaultRearm> rearm;  // --write-faults
  LinuxPerfEventSystem perf_sys;
  std::string why;
  if (source_name == "auto") {
    SamplerAvailability a = ProbeAvailability(*fs);
    source_name = a.pebs ? "pebs" : a.ibs ? "ibs" : fs->Exists("/sys/kernel/mm/damon/admin") ? "damon" : "pagefault";
    why = absl::StrCat("auto: ", source_name);
  }
  if (source_name == "damon") {
    DamonOptions dopt;
    dopt.warn = [](const std::string& line) { std::cerr << "hotpage attach: " << line << "\n"; };
    absl::StatusOr<std::unique_ptr<DamonSource>> d = DamonSource::Start(static_cast<pid_t>(*pid), dopt);
    if (!d.ok()) return fail(d.status());
    damon = std::move(*d);
    if (why.empty()) why = "DAMON region monitoring";
  } else {
    if (source_name == "hintfault") {
      // The kernel's hint faults reach the page-fault sampler opened below.
      HintFaultOptions hopt;
      hopt.pid = static_cast<pid_t>(*pid);
      const std::vector<int> fast = topo->FastNodes();
      for (const NodeInfo& n : topo->nodes) {
        if (std::find(fast.begin(), fast.end(), n.id) == fast.end()) hopt.slow_nodes.push_back(n.id);
      }
      hopt.check_interval = absl::Milliseconds(*interval_ms);
      hopt.warn = [](const std::string& line) { std::cerr << "hotpage attach: " << line << "\n"; };
      absl::StatusOr<std::unique_ptr<HintFaultSource>> h = HintFaultSource::Start(hopt);
      if (!h.ok()) return fail(h.status());
      hint = std::move(*h);
    }
    absl::StatusOr<SourceRequest> req = ParseSourceRequest(hint ? "pagefault" : source_name);
    absl::StatusOr<EventGroup> events = ChooseEvents(*fs, *req, SamplingOptions(), &why);
    if (!events.ok()) return fail(events.status());
    if (hint) why = absl::StrCat("NUMA hint faults as page-fault samples; ", hint->DescribeChanges(), " until exit");
    absl::StatusOr<std::vector<int>> cpus = OnlineCpus(*fs);
    if (!cpus.ok()) return fail(cpus.status());
    SamplerConfig scfg;
    scfg.events = *events;
    scfg.pids = {static_cast<pid_t>(*pid)};
    scfg.cpus = *cpus;
    // The process's existing threads, each its own task for perf (inherit
    // follows only threads created later).
    IncludeExistingThreads(*fs, &scfg);
    if (hint || write_faults) {
      // A kernel scan pass makes every accessed slow-tier page fault within
      // milliseconds: 6144 samples in one burst in the test guest, while a
      // policy round may keep the loop away from the ring for seconds. The
      // default 256 KiB ring holds 4096 samples; 2 MiB per CPU holds 32768,
      // and one poll may drain all of it. A write-fault re-arm makes every
      // page the process writes fault within milliseconds, the same burst.
      scfg.ring_data_pages = 512;
      scfg.budget_bytes_per_ring = size_t{2} << 20;
    }
    absl::StatusOr<std::unique_ptr<Sampler>> s = Sampler::Open(scfg, &perf_sys);
    if (!s.ok()) return fail(s.status());
    sampler = std::move(*s);
    if (absl::Status st = sampler->Enable(); !st.ok()) return fail(st);
    if (write_faults) {
      // Opened once and bound to this process (write_fault_rearm.h); the
      // handle check after the open proves the pid was not reused before it.
      if (absl::Status probe = ProbeSoftDirty(); !probe.ok()) return fail(probe);
      absl::StatusOr<std::unique_ptr<WriteFaultRearm>> r = StartWriteFaultRearm(
          static_cast<pid_t>(*pid), [&] { return handle->StillSame() == TargetState::kSame; });
      if (!r.ok()) return fail(r.status());
      rearm = std::move(*r);
      why = absl::StrCat(source_name == "pagefault" ? "page faults" : why,
                         "; write faults re-armed on every node every 200 ms or more (soft-dirty)");
    }
  }

  // Migrator.
  SyscallPageMover mover;
  MigratorOptions mopt;
  mopt.rate_limit_bytes_per_sec = static_cast<double>(*rate_mbps) * 1e6;
  Migrator migrator(mopt, std::move(*migrator_handle), &mover);
  if (!dry_run) {
    if (absl::Status s = migrator.Start(); !s.ok()) return fail(s);
  }

  AttachStats stats;
  stats.hintfault = hint.get();
  stats.write_faults = rearm.get();
  if (damon) stats.damon_recovered = damon->recovered();
  auto sink = [&](absl::Span<const Sample> samples) { (*engine)->Ingest(samples); };
  LiveMemoryView view(static_cast<pid_t>(*pid), &mover, &*fs, &*topo, dry_run ? nullptr : &migrator);
  const std::vector<int> fast_nodes = topo->FastNodes();
  (*engine)->RefreshHugeChunks(view);  // THP-backed chunks, before the first samples

  const bool live_line = isatty(STDERR_FILENO) && !flags->Has("quiet");
  // --locality judges pages already on the fast tier by who accesses them:
  // DAMON samples carry no CPU, and page faults without the re-arm stop once
  // a page is resident (hint faults once it is on the top tier).
  if (pcfg.locality && (damon || (!rearm && (source_name == "pagefault" || source_name == "hintfault")))) {
    std::cerr << "hotpage attach: warning: --locality will move nothing with --source " << source_name
              << ": it sees no accesses to pages already on the fast tier"
              << (damon ? " (DAMON samples carry no CPU)" : "; add --write-faults") << "\n";
  }
  std::cerr << "hotpage attach: pid " << *pid << ", source " << source_name << (why.empty() ? "" : " (") << why
            << (why.empty() ? "" : ")") << ", fast nodes " << FormatKernelList(fast_nodes)
            << (dry_run ? ", dry run: nothing will be moved" : "") << "\n";
  const uint64_t start_ns = MonotonicNs();
  (*engine)->Start(start_ns);
  const double cpu_start = ThreadCpuSeconds();
  std::string stop_reason = "the process exited";
  absl::Status loop_error;
  for (;;) {
    if (damon) {
      absl::StatusOr<size_t> n = damon->Poll(sink);
      if (!n.ok()) {
        if (!absl::IsNotFound(n.status())) loop_error = n.status();
        break;  // NotFound: the target exited and DAMON stopped
      }
    } else {
      absl::StatusOr<size_t> n = sampler->Poll(50, sink);
      if (!n.ok()) {
        loop_error = n.status();
        break;
      }
    }
    if (stop.load(std::memory_order_relaxed)) {
      stop_reason = "interrupted";
      break;
    }
    const uint64_t now = MonotonicNs();
    if (*duration > 0 && static_cast<double>(now - start_ns) >= *duration * 1e9) {
      stop_reason = absl::StrCat("--duration ", *duration, " s reached");
      break;
    }
    if (!handle->Alive()) break;
    if (rearm) {
      // Every page-fault sample is a fault the target took: the re-arms'
      // cost to it (write_fault_rearm.h).
      absl::StatusOr<bool> r = rearm->MaybeRearm(now, (*engine)->counters().samples);
      if (!r.ok()) {
        if (absl::IsNotFound(r.status())) break;  // the process exited
        loop_error = r.status();
        stop_reason = "--write-faults failed";
        break;
      }
    }
    if (!dry_run && migrator.state() == MigratorState::kFailed) {
      loop_error = migrator.status();
      stop_reason = "the migrator failed";
      break;
    }
    if (!(*engine)->RoundDue(now)) continue;

    // --- Policy round (policy/engine.h). ---
    const RoundReport report = (*engine)->RunRound(view, now);
    const PlacementDecision& d = report.decision;
    stats.rounds = report.round;
    stats.hot_pages = report.hot_pages;
    stats.hot_pages_by_node = report.hot_pages_by_node;
    stats.samples = (*engine)->counters().samples;
    stats.planned_promotions = (*engine)->counters().planned_promotions;
    stats.planned_demotions = (*engine)->counters().planned_demotions;
    stats.planned_locality += d.locality_bytes / 4096;
    stats.promoted_entries = (*engine)->counters().promoted_entries;
    stats.yield_hits = (*engine)->counters().yield_hits;
    // Demotions first, then promotions (migrator/move_requests.h says why).
    std::vector<MoveRequest> requests;
    AppendMoveRequests(d, absl::Now(), &requests);
    if (!dry_run && !requests.empty()) migrator.Submit(requests);
    stats.migrator = migrator.Snapshot();
    stats.cpu_seconds = ThreadCpuSeconds() - cpu_start;
    const std::string json = StatsJson(stats, dry_run, source_name);
    if (std::optional<std::string> p = flags->Get("stats-json")) {
      if (absl::Status s = WriteFileAtomically(*p, json); !s.ok()) std::cerr << "hotpage attach: " << s.message() << "\n";
    }
    if (std::optional<std::string> p = flags->Get("prom-file")) {
      if (absl::Status s = WriteFileAtomically(*p, StatsProm(stats)); !s.ok()) std::cerr << "hotpage attach: " << s.message() << "\n";
    }
    std::vector<std::string> by_node;
    for (const auto& [node, n] : stats.hot_pages_by_node) by_node.push_back(absl::StrCat(node, ":", n));
    const std::string line = absl::StrFormat(
        "t=%.1fs round=%d samples=%d hot_pages=%d hot_by_node=%s planned_promote=%d planned_demote=%d promoted=%d demoted=%d failed=%d",
        static_cast<double>(now - start_ns) / 1e9, stats.rounds, stats.samples, stats.hot_pages,
        by_node.empty() ? "-" : absl::StrJoin(by_node, ","),
        d.promoted_pages, d.demoted_pages, stats.migrator.promoted_pages, stats.migrator.demoted_pages,
        FailedTotal(stats.migrator));
    if (live_line) {
      std::fprintf(stderr, "\r%s   ", line.c_str());
    } else {
      std::cerr << "hotpage attach: " << line << "\n";
    }
  }
  if (live_line) std::fputs("\n", stderr);
  // Tear down in every case: the source first (DAMON context), then the
  // migrator (pending moves are abandoned and counted).
  if (damon) (void)damon->Stop();
  if (sampler) (void)sampler->Disable();
  if (hint) {
    if (absl::Status s = hint->Stop(); !s.ok()) {
      std::cerr << "hotpage attach: " << s.message() << "\n";
      if (loop_error.ok()) loop_error = s;
    } else {
      std::cerr << "hotpage attach: " << hint->restored() << "\n";
    }
  }
  if (!dry_run) {
    migrator.WaitUntilIdle(absl::Seconds(2));
    migrator.Stop();
  }
  stats.migrator = migrator.Snapshot();
  stats.samples = (*engine)->counters().samples;
  stats.cpu_seconds = ThreadCpuSeconds() - cpu_start;
  if (std::optional<std::string> p = flags->Get("stats-json")) {
    (void)WriteFileAtomically(*p, StatsJson(stats, dry_run, source_name));
  }
  if (std::optional<std::string> p = flags->Get("prom-file")) (void)WriteFileAtomically(*p, StatsProm(stats));
  const double elapsed = static_cast<double>(MonotonicNs() - start_ns) / 1e9;
  std::cerr << absl::StrFormat(
      "hotpage attach: %s after %.1f s; promoted %d pages (planned by --locality: %d), demoted %d, failed %d, "
      "ping-pong %d; %d samples, %d rounds; hotpage CPU %.2f s (%.1f%% of one core)\n",
      stop_reason, elapsed, stats.migrator.promoted_pages, stats.planned_locality, stats.migrator.demoted_pages,
      FailedTotal(stats.migrator),
      stats.migrator.pingpong_pages, stats.samples, stats.rounds, stats.cpu_seconds,
      elapsed > 0 ? 100.0 * stats.cpu_seconds / elapsed : 0.0);
  if (hint) {
    const HintFaultStats h = hint->stats();
    std::cerr << absl::StrFormat(
        "hotpage attach: hint faults %d (%.0f/s, system-wide), kernel scan passes %s, longest gap %.1f s, "
        "pages the kernel migrated itself %d\n",
        h.delta.numa_hint_faults, h.hint_faults_per_sec,
        h.scan_seq_known ? absl::StrCat(h.scan_passes) : std::string("unknown"), h.longest_scan_gap_s,
        h.kernel_migrated_pages);
  }
  if (rearm) {
    const WriteFaultRearmStats& r = rearm->stats();
    std::cerr << absl::StrFormat(
        "hotpage attach: write faults re-armed %d times (every %.0f ms at the end), clearing took %.1f ms in all, "
        "%.2f ms at most\n",
        r.rearms, static_cast<double>(r.interval_ns) / 1e6, static_cast<double>(r.clear_ns_total) / 1e6,
        static_cast<double>(r.clear_ns_max) / 1e6);
  }
  if (!loop_error.ok()) return fail(loop_error);
  return kExitOk;
}

}  // namespace hotpage
