// `hotpage daemon`: the machine's agent (tools/daemon/daemon_loop.h), and
// `hotpage status`, which asks it (tools/daemon/status_socket.h).
//
// Start-up, in order: the config (rejected with FILE:LINE: KEY: reason),
// the kernel's own movers against `kernel_tiering` (refuse: exit 1 saying
// what to change), the machine (at least two memory tiers), the daemon's
// own memory policy (tools/self_memory.h; on this thread before any other
// starts, so that every thread has it), signals (SIGINT/SIGTERM stop,
// SIGHUP reloads; before any other thread, see termination_signals.h), the
// take-over of the movers' sysctls, the status socket (one daemon per
// socket), then one supervisor tick per interval until a stop signal. SIGHUP
// re-reads the file: a bad one is rejected with its line and the running config
// stays. Every minute the kernel's movers are checked again and a new one is
// reported. At the end every member is stopped and joined, the sysctls
// restored, the socket removed.
//
// systemd (Type=notify): READY=1 once the first tick ran, WATCHDOG=1 every
// tick, STOPPING=1 at the end, through $NOTIFY_SOCKET as sd_notify(3)
// documents (one datagram on a unix socket; an abstract address when the
// path starts with '@'). Hand-written rather than linking libsystemd for
// three fixed messages.

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "policy/placement.h"
#include "policy/topology.h"
#include "sampler/perf/perf_event_system.h"
#include "tools/base/atomic_file.h"
#include "tools/base/clock.h"
#include "tools/base/json.h"
#include "tools/base/kernel/kernel_fs.h"
#include "tools/base/kernel/node_meminfo.h"
#include "tools/base/kernel/sysfs_writer.h"
#include "tools/base/metrics_server.h"
#include "tools/base/state_dir.h"
#include "tools/base/termination_signals.h"
#include "tools/cli.h"
#include "tools/daemon/daemon_config.h"
#include "tools/daemon/daemon_loop.h"
#include "tools/daemon/kernel_tiering.h"
#include "tools/daemon/line_log.h"
#include "tools/daemon/live_member.h"
#include "tools/daemon/machine_check.h"
#include "tools/daemon/machine_damon.h"
#include "tools/daemon/machine_sampler.h"
#include "tools/daemon/migrator_pool.h"
#include "tools/daemon/rounds_dir.h"
#include "tools/daemon/status_socket.h"
#include "tools/daemon/sysctl_takeover.h"
#include "tools/daemon/workload_select.h"
#include "tools/kernel_floor.h"
#include "tools/self_memory.h"

namespace hotpage {
namespace {

constexpr char kDaemonExample[] = R"(Example /etc/hotpage/hotpage.toml:

  [daemon]
  interval_ms = 1000
  rate_limit_mbps = 256          # shared by every workload
  kernel_tiering = "refuse"      # refuse | coexist | take-over
  rounds_dir = "/var/log/hotpage"

  [[workload]]
  name = "cache"
  cgroup = "system.slice/memcached.service"
  fast_floor = "4GiB"            # kept however hot the others are
  fast_cap = "60%"               # never more than this of the fast tier
  rounds = true                  # each round's decisions, below

  [[workload]]
  name = "batch"
  comm = "spark-worker"          # or cmdline = "REGEX", pid = N, all = true
  weights = "0:3,1:1"
  rate_share = 0.5

Without PEBS or IBS, `source = "hintfault"` (with kernel_tiering =
"take-over") samples the kernel's NUMA hint faults, as `hotpage attach
--source hintfault` does: while the daemon runs, kernel.numa_balancing is 2
and its promotion rate limit 0 (the kernel's scanner senses, hotpage alone
moves), both restored at exit.

A workload with `rounds = true` has each process's rounds recorded in
rounds_dir as NAME-PID-START.jsonl (START: the process's start time in
clock ticks since boot): one JSON line per round, as `hotpage attach
--rounds` writes them (every planned move with its reason and trigger,
and the evidence the round weighed). The directory is created 0700 and
refused if anyone but root can write it; the files are 0600. A file stops
at rounds_max_bytes (default 64MiB), saying so once in the log. The files
of processes that ended stay until the directory's rounds files pass
rounds_dir_max_bytes (default 16 x rounds_max_bytes; at least
rounds_max_bytes): then the least recently written go first, at start-up,
before each new file and once a minute. A running process's file is never
removed.
)";

// sd_notify(3): one datagram to $NOTIFY_SOCKET; nothing when unset.
void Notify(const char* state) {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (path == nullptr || path[0] == '\0') return;
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  const size_t len = std::strlen(path);
  if (len >= sizeof(a.sun_path)) return;
  std::memcpy(a.sun_path, path, len);
  if (a.sun_path[0] == '@') a.sun_path[0] = '\0';  // abstract namespace
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  (void)!sendto(fd, state, std::strlen(state), MSG_NOSIGNAL,
                reinterpret_cast<const sockaddr*>(&a),
                static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + len));
  close(fd);
}

int Usage(const std::string& cmd, absl::string_view msg) {
  std::cerr << "hotpage " << cmd << ": " << msg << "\nTry 'hotpage " << cmd
            << " --help'.\n";
  return kExitUsage;
}

int Fail(const std::string& cmd, absl::string_view msg) {
  std::cerr << "hotpage " << cmd << ": " << msg << "\n";
  return kExitFailure;
}

uint64_t FastCapacity(const Topology& topo) {
  uint64_t bytes = 0;
  for (int n : topo.FastNodes()) {
    if (const NodeInfo* info = topo.FindNode(n)) bytes += info->memory_bytes;
  }
  return bytes;
}

// `--check`: the config, what each workload selects now, what the kernel's
// movers mean under it, and the machine: its tiers, the nodes the config
// names (machine_check.h) and where hotpage's own memory would go. Exit 0
// when the daemon would start.
int Check(const DaemonConfig& cfg, const KernelFs& fs,
          const std::optional<SelfMemoryRequest>& self_memory_flag) {
  std::cout << "config " << cfg.path << ": OK, " << cfg.workloads.size()
            << " workload(s)\n";
  absl::StatusOr<std::vector<std::vector<SelectedProcess>>> sel =
      SelectProcesses(fs, cfg, getpid());
  for (size_t i = 0; i < cfg.workloads.size(); ++i) {
    const WorkloadConfig& w = cfg.workloads[i];
    std::cout << "  " << w.name << ": " << SelectorKindName(w.selector)
              << (w.match.empty() ? "" : " ") << w.match << ", source "
              << w.source;
    if (w.rounds) {
      std::cout << ", rounds recorded in " << cfg.rounds_dir << " (at most "
                << cfg.rounds_max_bytes << " bytes a process, "
                << cfg.rounds_dir_max_bytes << " in all)";
    }
    if (sel.ok()) {
      std::cout << "; selects " << (*sel)[i].size() << " process(es) now";
      size_t shown = 0;
      for (const SelectedProcess& p : (*sel)[i]) {
        if (shown++ == 8) {
          std::cout << " ...";
          break;
        }
        std::cout << " " << p.key.pid << "(" << p.comm << ")";
      }
    }
    std::cout << "\n";
  }
  if (!sel.ok()) std::cout << "  selection: " << sel.status().message() << "\n";
  const TieringDecision d =
      DecideKernelTiering(DetectKernelMovers(fs, {}), cfg.kernel_tiering,
                          cfg.path, UsesHintFaults(cfg));
  for (const std::string& m : d.messages) std::cout << "kernel: " << m << "\n";
  // The machine, as start-up reads it (machine_check.h): its tiers, the
  // workloads' rules and hotpage's own memory against its nodes.
  bool start = d.start;
  SyscallMempolicyProbe probe;
  absl::StatusOr<Topology> topo = DiscoverTopology(fs, &probe);
  if (!topo.ok()) {
    std::cout << "machine: " << topo.status().message() << "\n";
    start = false;
  } else {
    // A second problem is worth knowing with the first: the config's are
    // checked on a machine of one tier too.
    if (absl::Status tiers = CheckTiers(*topo); !tiers.ok()) {
      std::cout << "machine: " << tiers.message() << "\n";
      start = false;
    } else {
      std::cout << "machine: " << DescribeTiers(*topo) << "\n";
    }
    std::vector<NodeFloor> floors;
    if (absl::StatusOr<std::vector<NodeFloor>> f = ReadKernelFloors(fs);
        f.ok()) {
      floors = std::move(*f);
    }
    const ConfigOnMachine on_machine =
        ResolveConfigOnMachine(cfg, *topo, floors, self_memory_flag);
    for (const std::string& p : on_machine.Problems()) {
      std::cout << "config: " << p << "\n";
      start = false;
    }
    if (on_machine.self_memory.ok()) {
      std::cout << "hotpage's own memory: "
                << DescribeSelfMemoryPolicy(*on_machine.self_memory) << "\n";
    }
  }
  std::cout << (start ? "the daemon would start\n"
                      : "the daemon would refuse to start\n");
  return start ? kExitOk : kExitFailure;
}

}  // namespace

int RunDaemon(const std::vector<std::string>& args) {
  const std::vector<FlagSpec> specs = {
      {"config", "FILE",
       absl::StrCat("the configuration (default ", kDefaultDaemonConfigPath,
                    ")")},
      {"check", "",
       "check the config against this machine (its tiers, the nodes the "
       "config names), show what each workload selects now and what the "
       "kernel's own tiering means for it, then exit (0: it would start)"},
      {"dry-run", "", "decide and report, move nothing"},
      {"log-level", "L",
       "error, warning, info (default) or debug; the config's log_level "
       "otherwise"},
      {"quiet", "", "only warnings and errors (--log-level warning)"},
      {"metrics-listen", "ADDR",
       "serve the metrics (the prom_file text) at http://ADDR/metrics; ADDR "
       "is 127.0.0.1:PORT or [::1]:PORT (loopback only: others are "
       "refused), PORT 0 picks a free port (logged)"},
      {"self-memory", "WHERE",
       absl::StrCat(kSelfMemoryFlagHelp,
                    "; the config's self_memory "
                    "otherwise")},
  };
  const std::string synopsis =
      "[--config FILE] [--check] [--dry-run] "
      "[--log-level L] [--quiet] [--metrics-listen ADDR] "
      "[--self-memory WHERE]";
  const std::string description = absl::StrCat(
      "Manages every workload the config selects (cgroups, process names,\n"
      "command-line patterns, pids, or every process above a size): each\n"
      "process is run as `hotpage attach` runs one, the fast tier is shared\n"
      "by floors, caps and benefit when it runs short, one migration budget\n"
      "is shared by rate_share. SIGHUP reloads the config (a bad one is\n"
      "rejected and the running one stays; kept workloads keep their\n"
      "hotness); SIGTERM stops within about a second. `hotpage status` asks\n"
      "it over its socket. Needs root (move_pages of other users' processes,\n"
      "perf events or DAMON).\n\n"
      "Metrics (prom_file in [daemon], `hotpage status --metrics`,\n"
      "--metrics-listen) are labelled by workload, pid and cgroup; the\n"
      "machine's own (each machine sampler's routed, unmapped, inbox-full,\n"
      "throttle and lost counts; the CPU of the migrator thread and the\n"
      "samplers' threads, which no workload's cpu_seconds holds; the\n"
      "daemon's total CPU) are counted once, labelled daemon=SOCKET. Two "
      "daemons\n"
      "writing to node_exporter's textfile collector need their own files\n"
      "(prom_file = \"/var/lib/prometheus/node-exporter/hotpage-NAME.prom\")\n"
      "and distinct workload names, and two endpoints two ports.\n\n"
      "The daemon's own memory (each workload's tables and engine state, "
      "about 200\n"
      "bytes per tracked page) is kept off the fast tier: self_memory = "
      "\"slow\" (the\n"
      "default) prefers the slowest tier's nodes for every daemon thread "
      "(the kernel\n"
      "falls back to other nodes when they are full); \"local\" leaves it "
      "to first\n"
      "touch, a node number prefers that node. It is set at start-up (a "
      "reload\n"
      "that changes it is rejected) and shown in the log, under "
      "\"machine\" in\n"
      "`hotpage status --json` and as hotpage_daemon_self_memory_info.\n\n"
      "A config is checked against this machine before anything runs, at "
      "start,\n"
      "on reload and by --check: a workload's promote_to or weights, or "
      "self_memory,\n"
      "naming a node the machine lacks is refused with its file and line.\n\n",
      kDaemonExample);
  absl::StatusOr<ParsedFlags> flags = ParseFlags(args, specs);
  if (!flags.ok()) return Usage("daemon", flags.status().message());
  if (flags->Has("help")) {
    std::cout << FormatUsage("daemon", synopsis, description, specs);
    return kExitOk;
  }
  if (!flags->positional().empty()) {
    return Usage("daemon", absl::StrCat("unexpected argument '",
                                        flags->positional()[0], "'"));
  }
  std::optional<LogLevel> level;
  if (std::optional<std::string> l = flags->Get("log-level")) {
    absl::StatusOr<LogLevel> p = ParseLogLevel(*l);
    if (!p.ok()) return Usage("daemon", p.status().message());
    level = *p;
  }
  if (flags->Has("quiet")) level = LogLevel::kWarning;
  std::optional<MetricsListenAddress> metrics_listen;
  if (std::optional<std::string> l = flags->Get("metrics-listen")) {
    absl::StatusOr<MetricsListenAddress> addr = ParseMetricsListen(*l);
    if (!addr.ok()) return Usage("daemon", addr.status().message());
    metrics_listen = *addr;
  }
  std::optional<SelfMemoryRequest> self_memory_flag;
  if (std::optional<std::string> m = flags->Get("self-memory")) {
    absl::StatusOr<SelfMemoryRequest> req = ParseSelfMemory(*m);
    if (!req.ok()) {
      return Usage("daemon",
                   absl::StrCat("--self-memory: ", req.status().message()));
    }
    self_memory_flag = *req;
  }

  const std::string path =
      flags->Get("config").value_or(kDefaultDaemonConfigPath);
  absl::StatusOr<DaemonConfig> cfg = LoadDaemonConfig(path);
  if (!cfg.ok()) return Fail("daemon", cfg.status().message());
  absl::StatusOr<KernelFs> fs = KernelFs::Open("/");
  if (!fs.ok()) return Fail("daemon", fs.status().message());
  if (flags->Has("check")) return Check(*cfg, *fs, self_memory_flag);

  absl::StatusOr<LogLevel> cfg_level = ParseLogLevel(cfg->log_level);
  LineLog log(level.value_or(cfg_level.ok() ? *cfg_level : LogLevel::kInfo),
              /*journald=*/!isatty(STDERR_FILENO));
  std::ostream& out = log.stream();

  // The kernel's own movers.
  const TieringDecision d =
      DecideKernelTiering(DetectKernelMovers(*fs, {}), cfg->kernel_tiering,
                          cfg->path, UsesHintFaults(*cfg));
  for (const std::string& m : d.messages) {
    log.Log(d.start ? LogLevel::kWarning : LogLevel::kError,
            absl::StrCat("hotpage daemon: ", m));
  }
  if (!d.start) return kExitFailure;

  SyscallMempolicyProbe probe;
  absl::StatusOr<Topology> topo = DiscoverTopology(*fs, &probe);
  if (!topo.ok()) return Fail("daemon", topo.status().message());
  if (absl::Status tiers = CheckTiers(*topo); !tiers.ok())
    return Fail("daemon", tiers.message());
  // No node's low watermark below the kernel's own floor there
  // (tools/kernel_floor.h), read once: the members' engines
  // (LiveMemberEnv::kernel_floors) and the fast tier's free memory below
  // (fast_free) compare against the same watermarks.
  std::vector<NodeFloor> kernel_floors;
  absl::Status floors_status;
  if (absl::StatusOr<std::vector<NodeFloor>> f = ReadKernelFloors(*fs);
      f.ok()) {
    kernel_floors = std::move(*f);
  } else {
    floors_status = f.status();
  }

  // The config against this machine (machine_check.h), resolved once: the
  // policy for the daemon's own memory (the flag's, else the config's) is
  // set next, the workloads' problems are refused after it.
  const ConfigOnMachine on_machine =
      ResolveConfigOnMachine(*cfg, *topo, kernel_floors, self_memory_flag);
  // The daemon's own memory (tools/self_memory.h): on this thread, before
  // the first thread starts (the signal thread, next), so that every
  // thread (members, migrator pool, machine samplers and DAMON, the status
  // and metrics servers) inherits it. DiscoverTopology's mempolicy probe
  // thread has been joined.
  SelfMemoryReport self_memory;
  {
    if (!on_machine.self_memory.ok()) {
      const absl::string_view m = on_machine.self_memory.status().message();
      return self_memory_flag ? Usage("daemon", m) : Fail("daemon", m);
    }
    SyscallSelfMempolicy live;
    absl::StatusOr<SelfMemoryReport> r =
        ApplySelfMemoryPolicy(self_memory_flag.value_or(cfg->self_memory),
                              *on_machine.self_memory, live);
    if (!r.ok()) return Fail("daemon", r.status().message());
    self_memory = std::move(*r);
    if (!self_memory.warning.empty()) {
      log.Log(LogLevel::kWarning,
              absl::StrCat("hotpage daemon: warning: ", self_memory.warning));
    }
    log.Log(LogLevel::kInfo,
            absl::StrCat("hotpage daemon: ", self_memory.line));
  }

  // Every workload's rules against this machine: a node it names that the
  // machine lacks is refused now, not found out process by process. The
  // self-memory problem returned above.
  if (!on_machine.workload_problems.empty()) {
    return Fail("daemon", absl::StrJoin(on_machine.workload_problems, "; "));
  }

  // Signals before any other thread (termination_signals.h).
  std::atomic<bool> stop{false};
  std::atomic<bool> reload{false};
  absl::StatusOr<std::unique_ptr<TerminationSignalThread>> signals =
      TerminationSignalThread::Start(
          [&](int signo) {
            if (signo == SIGHUP) {
              reload.store(true, std::memory_order_relaxed);
            } else {
              stop.store(true, std::memory_order_relaxed);
            }
          },
          {SIGINT, SIGTERM, SIGHUP});
  if (!signals.ok()) return Fail("daemon", signals.status().message());

  absl::StatusOr<StateDir> state =
      StateDir::Open(cfg->state_dir, "the daemon's state directory",
                     "the take-over record and the status socket");
  if (!state.ok()) return Fail("daemon", state.status().message());
  // Workloads' rounds files (DaemonConfig::rounds_dir): a directory nobody
  // else can write, as the state directory, opened once; a reload cannot
  // move it or change its bounds. Pruned at once (rounds_dir.h), so that
  // a restart with a lower bound applies it before any new file.
  std::optional<RoundsDir> rounds_dir;
  if (!cfg->rounds_dir.empty()) {
    absl::StatusOr<StateDir> r =
        StateDir::Open(cfg->rounds_dir, "the rounds directory (rounds_dir)",
                       "the workloads' rounds files");
    if (!r.ok()) return Fail("daemon", r.status().message());
    rounds_dir.emplace(*std::move(r), cfg->rounds_max_bytes,
                       cfg->rounds_dir_max_bytes, &out);
    rounds_dir->Prune();
  }
  absl::StatusOr<std::unique_ptr<LiveSysfsWriter>> writer =
      LiveSysfsWriter::Open("/");
  if (!writer.ok()) return Fail("daemon", writer.status().message());
  std::unique_ptr<SysctlTakeover> takeover;
  {
    std::string recovered;
    absl::StatusOr<std::unique_ptr<SysctlTakeover>> t =
        SysctlTakeover::Apply(&*state, writer->get(), d.changes, &recovered);
    if (!t.ok()) return Fail("daemon", t.status().message());
    takeover = std::move(*t);
    if (!recovered.empty()) {
      log.Log(LogLevel::kWarning, absl::StrCat("hotpage daemon: ", recovered));
    }
    if (!d.changes.empty()) {
      log.Log(LogLevel::kInfo,
              absl::StrCat("hotpage daemon: took over the kernel's tiering: ",
                           takeover->Describe(), " until exit"));
    }
  }

  const absl::Time started = absl::Now();
  // One perf sampler per source for the machine (machine_sampler.h); it
  // outlives the loop and its members.
  LinuxPerfEventSystem perf_sys;
  MachineSamplerSet samplers(&*fs, &perf_sys, &out);
  // One kdamond for every DAMON member (machine_damon.h).
  DamonOptions damon_options;
  damon_options.state_dir = cfg->state_dir;
  damon_options.warn = [&out](const std::string& line) {
    out << "hotpage daemon: damon: " << line << "\n";
  };
  MachineDamon damon(damon_options, &out);
  damon.Start();
  // One migrator thread for every member (migrator_pool.h).
  MigratorPool migrators(static_cast<double>(cfg->rate_limit_mbps) * 1e6,
                         RealClock::Get());
  migrators.Start();
  if (!floors_status.ok()) {
    log.Log(LogLevel::kWarning,
            absl::StrCat("hotpage daemon: watermarks from the fractions "
                         "alone, without the kernel's floor: ",
                         floors_status.message()));
  }
  PlacementConfig watermarks;
  for (const std::string& line :
       ApplyKernelFloors(kernel_floors, *topo, &watermarks)) {
    log.Log(LogLevel::kInfo, absl::StrCat("hotpage daemon: ", line));
  }
  LiveMemberEnv env;
  env.kernel_floors = kernel_floors;
  env.samplers = &samplers;
  env.damon = &damon;
  env.migrators = &migrators;
  env.fs = &*fs;
  env.topology = &*topo;
  env.interval_ms = cfg->interval_ms;
  env.dry_run = flags->Has("dry-run");
  env.round_lines = level == LogLevel::kDebug;
  env.rounds_dir = rounds_dir ? &*rounds_dir : nullptr;
  env.log = &out;
  DaemonParts parts;
  parts.fs = &*fs;
  parts.factory = LiveMemberFactory(env);
  parts.fast_capacity_bytes = FastCapacity(*topo);
  parts.fast_free = [&fs, &topo, &migrators, &watermarks] {
    // Each fast node's free memory, read once, against the members'
    // watermarks (policy/placement.h, raised to the kernel's floor) and the
    // kernel's refusals (AddNodeFree).
    FastTierFree f;
    const std::vector<int> refused = migrators.BackedOffNodes();
    for (int n : topo->FastNodes()) {
      const std::optional<uint64_t> free = ReadNodeFreeBytes(*fs, n);
      if (!free) continue;
      const NodeWatermarks wm = WatermarksFor(watermarks, *topo, n);
      AddNodeFree(*free, wm.low_bytes, wm.high_bytes,
                  std::binary_search(refused.begin(), refused.end(), n), f);
    }
    return f;
  };
  parts.self = getpid();
  parts.on_selection = [&samplers,
                        &damon](const std::vector<ProcessKey>& live) {
    samplers.Reconcile(live);
    damon.Reconcile(live);
  };
  parts.log = &out;
  parts.uptime_s = [started] {
    return absl::ToDoubleSeconds(absl::Now() - started);
  };
  // The machine's own counters and threads, once (machine_report.h).
  parts.machine = [&samplers, &migrators, &self_memory] {
    MachineReport m;
    m.self_memory = MachineSelfMemory{self_memory.requested, self_memory.mode,
                                      self_memory.nodes};
    // Called by Tick, on this (the supervisor's) thread.
    m.threads.push_back({"supervisor", ThreadCpuSeconds()});
    m.threads.push_back(
        {"migrator", absl::ToDoubleSeconds(migrators.Cpu().own())});
    samplers.Report(&m);
    return m;
  };
  parts.process_cpu_s = [] { return absl::ToDoubleSeconds(ProcessCpuTime()); };
  // The socket is this daemon's alone (StatusServer refuses a second).
  parts.instance = cfg->socket;
  parts.stop = &stop;
  DaemonLoop loop(*cfg, parts);

  const std::string socket_path = cfg->socket;
  absl::StatusOr<std::unique_ptr<StatusServer>> server = StatusServer::Start(
      socket_path, [&loop](absl::string_view req) -> std::string {
        if (req == "metrics") return loop.MetricsProm();
        if (req == "status") {
          return absl::StrCat(loop.StatusJson(), "\n");
        }
        return "error: unknown request (status or metrics)\n";
      });
  if (!server.ok()) return Fail("daemon", server.status().message());
  // The metrics endpoint: its thread only copies the text the last tick
  // published (DaemonLoop::MetricsProm), so it never holds up a tick.
  std::unique_ptr<MetricsServer> metrics_server;
  if (metrics_listen) {
    absl::StatusOr<std::unique_ptr<MetricsServer>> m = MetricsServer::Start(
        *metrics_listen, [&loop] { return loop.MetricsProm(); });
    if (!m.ok()) return Fail("daemon", m.status().message());
    metrics_server = std::move(*m);
    log.Log(LogLevel::kInfo,
            absl::StrCat("hotpage daemon: metrics on ", metrics_server->url()));
  }

  log.Log(LogLevel::kInfo,
          absl::StrCat("hotpage daemon: ", cfg->workloads.size(),
                       " workload(s) from ", cfg->path, "; fast nodes ",
                       absl::StrJoin(topo->FastNodes(), ","), "; status on ",
                       socket_path, env.dry_run ? "; dry run" : ""));
  bool ready = false;
  absl::Time last_notify = absl::Now();
  absl::Time next_movers_check = absl::Now() + absl::Minutes(1);
  // The live rounds files grow between new ones: the directory's bound is
  // checked again once a minute (a listing of one directory).
  absl::Time next_rounds_prune = absl::Now() + absl::Minutes(1);
  std::vector<std::string> takeover_drift;  // Drifted() at the last look
  while (!stop.load(std::memory_order_relaxed)) {
    if (reload.exchange(false)) {
      absl::StatusOr<DaemonConfig> next = LoadDaemonConfig(path);
      if (!next.ok()) {
        log.Log(LogLevel::kError,
                absl::StrCat("hotpage daemon: reload rejected, the running "
                             "config stays: ",
                             next.status().message()));
      } else if (next->socket != loop.config().socket ||
                 next->state_dir != loop.config().state_dir ||
                 next->rounds_dir != loop.config().rounds_dir ||
                 next->rounds_max_bytes != loop.config().rounds_max_bytes ||
                 next->rounds_dir_max_bytes !=
                     loop.config().rounds_dir_max_bytes ||
                 next->kernel_tiering != loop.config().kernel_tiering ||
                 (!self_memory_flag &&
                  SelfMemoryRequestName(next->self_memory) !=
                      SelfMemoryRequestName(loop.config().self_memory))) {
        log.Log(LogLevel::kError,
                "hotpage daemon: reload rejected: socket, state_dir, "
                "rounds_dir, rounds_max_bytes, rounds_dir_max_bytes, "
                "kernel_tiering and self_memory change only with a "
                "restart; the running config stays");
      } else if (absl::Status s = CheckConfigOnMachine(
                     *next, *topo, kernel_floors, self_memory_flag);
                 !s.ok()) {
        log.Log(LogLevel::kError,
                absl::StrCat("hotpage daemon: reload rejected, the running "
                             "config stays: ",
                             s.message()));
      } else {
        migrators.SetRateLimit(static_cast<double>(next->rate_limit_mbps) *
                               1e6);
        loop.Reload(*next);
      }
    }
    loop.Tick();
    if (!loop.config().prom_file.empty()) {
      if (absl::Status s =
              WriteFileAtomically(loop.config().prom_file, loop.MetricsProm());
          !s.ok()) {
        log.Log(LogLevel::kWarning,
                absl::StrCat("hotpage daemon: warning: ", s.message()));
      }
    }
    Notify(ready ? "WATCHDOG=1" : "READY=1");
    last_notify = absl::Now();
    ready = true;
    // Someone else changed a sysctl the take-over set (with hint faults:
    // numa_balancing off stops the samples, a rate limit above 0 lets the
    // kernel promote too): said at each change, not fought.
    if (std::vector<std::string> drift = takeover->Drifted(*fs);
        drift != takeover_drift) {
      if (!drift.empty()) {
        log.Log(LogLevel::kWarning,
                absl::StrCat(
                    "hotpage daemon: warning: ", absl::StrJoin(drift, ", "),
                    ": changed by someone else; not fought, and "
                    "the originals are still restored at exit"));
      }
      takeover_drift = std::move(drift);
    }
    if (rounds_dir && absl::Now() >= next_rounds_prune) {
      next_rounds_prune = absl::Now() + absl::Minutes(1);
      rounds_dir->Prune();
    }
    if (absl::Now() >= next_movers_check) {
      next_movers_check = absl::Now() + absl::Minutes(1);
      const TieringDecision again = DecideKernelTiering(
          DetectKernelMovers(*fs, damon.running()
                                      ? std::set<std::string>{"kdamonds/0"}
                                      : std::set<std::string>{}),
          KernelTieringMode::kCoexist, loop.config().path);
      if (loop.config().kernel_tiering != KernelTieringMode::kTakeOver) {
        for (const std::string& m : again.messages) {
          log.Log(LogLevel::kWarning, absl::StrCat("hotpage daemon: ", m));
        }
      }
    }
    // Sleep out the interval in short steps: a stop signal is seen within
    // 50 ms.
    const absl::Time wake =
        absl::Now() + absl::Milliseconds(loop.config().interval_ms);
    while (!stop.load(std::memory_order_relaxed) &&
           !reload.load(std::memory_order_relaxed) && absl::Now() < wake) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      // The watchdog hears from this loop at least every 5 s, whatever
      // interval_ms is (the unit's WatchdogSec is 30 s).
      if (absl::Now() - last_notify >= absl::Seconds(5)) {
        Notify("WATCHDOG=1");
        last_notify = absl::Now();
      }
    }
  }
  Notify("STOPPING=1");
  metrics_server.reset();
  loop.Stop();
  server->reset();
  if (absl::Status s = takeover->Restore(); !s.ok()) {
    log.Log(LogLevel::kError, absl::StrCat("hotpage daemon: ", s.message()));
    return kExitFailure;
  }
  log.Log(LogLevel::kInfo, "hotpage daemon: stopped");
  return kExitOk;
}

int RunStatus(const std::vector<std::string>& args) {
  const std::vector<FlagSpec> specs = {
      {"json", "", "print the daemon's JSON document"},
      {"metrics", "", "print the daemon's metrics (Prometheus text)"},
      {"socket", "PATH",
       "the daemon's socket (default /run/hotpage/"
       "hotpage.sock, or the config's)"},
      {"config", "FILE", "read the socket's path from this config"},
  };
  const char* synopsis = "[--json | --metrics] [--socket PATH | --config FILE]";
  const char* description =
      "Asks the running `hotpage daemon` for each workload's processes,\n"
      "fast-tier bytes and share, floor and cap use, target, hot set,\n"
      "promotions, demotions, yield and regret (samples on promoted pages\n"
      "while fast, on demoted pages while slow, per move), CPU and errors,\n"
      "and for the machine's\n"
      "own: the daemon's whole CPU (every member plus the migrator and\n"
      "sampler threads) and each machine sampler's routed, unmapped,\n"
      "inbox-full, throttle and lost counts. Root only.";
  absl::StatusOr<ParsedFlags> flags = ParseFlags(args, specs);
  if (!flags.ok()) return Usage("status", flags.status().message());
  if (flags->Has("help")) {
    std::cout << FormatUsage("status", synopsis, description, specs);
    return kExitOk;
  }
  if (!flags->positional().empty()) {
    return Usage("status", absl::StrCat("unexpected argument '",
                                        flags->positional()[0], "'"));
  }
  if (flags->Has("json") && flags->Has("metrics")) {
    return Usage("status", "--json and --metrics are exclusive");
  }
  std::string socket = "/run/hotpage/hotpage.sock";
  if (std::optional<std::string> c = flags->Get("config")) {
    absl::StatusOr<DaemonConfig> cfg = LoadDaemonConfig(*c);
    if (!cfg.ok()) return Fail("status", cfg.status().message());
    socket = cfg->socket;
  }
  if (std::optional<std::string> s = flags->Get("socket")) socket = *s;
  absl::StatusOr<std::string> reply = QueryStatus(
      socket, flags->Has("metrics") ? "metrics" : "status", absl::Seconds(5));
  if (!reply.ok()) return Fail("status", reply.status().message());
  if (flags->Has("json") || flags->Has("metrics")) {
    std::cout << *reply;
    return std::cout.good() ? kExitOk : kExitFailure;
  }
  absl::StatusOr<Json> doc = ParseJson(*reply);
  if (!doc.ok()) {
    return Fail("status", absl::StrCat("the daemon's reply is not JSON: ",
                                       doc.status().message()));
  }
  auto num = [](const Json& o, absl::string_view key) {
    const Json* v = JsonMember(o, key);
    return v != nullptr && v->is_number() ? v->get<double>() : 0.0;
  };
  auto gib = [](const Json& o, absl::string_view key) {
    const Json* v = JsonMember(o, key);
    if (v == nullptr || !v->is_number()) return std::string("-");
    return absl::StrFormat("%.2fG", v->get<double>() / (1u << 30));
  };
  std::cout << absl::StrFormat(
      "%-16s %5s %10s %7s %10s %10s %10s %9s %9s %6s %6s\n", "WORKLOAD",
      "PROCS", "FAST", "SHARE", "TARGET", "FLOOR", "CAP", "PROMOTED", "DEMOTED",
      "YIELD", "REGRET");
  const Json* workloads = JsonMember(*doc, "workloads");
  if (workloads != nullptr && workloads->is_array()) {
    for (const Json& w : *workloads) {
      const Json* name = JsonMember(w, "name");
      const Json* procs = JsonMember(w, "processes");
      std::cout << absl::StrFormat(
          "%-16s %5d %10s %6.1f%% %10s %10s %10s %9.0f %9.0f %6.2f %6.2f\n",
          name != nullptr && name->is_string() ? name->get<std::string>()
                                               : std::string("?"),
          procs != nullptr && procs->is_array() ? procs->size() : 0,
          gib(w, "fast_bytes"), 100 * num(w, "fast_share"),
          gib(w, "target_bytes"), gib(w, "floor_bytes"), gib(w, "cap_bytes"),
          num(w, "promoted_pages"), num(w, "demoted_pages"), num(w, "yield"),
          num(w, "regret"));
    }
  }
  // The machine's own, once.
  if (const Json* m = JsonMember(*doc, "machine");
      m != nullptr && m->is_object()) {
    std::cout << absl::StrFormat("daemon CPU %.2f s (machine threads %.2f s)\n",
                                 num(*doc, "cpu_seconds"),
                                 num(*m, "cpu_seconds"));
    // Where the daemon's own memory goes (cmd_daemon's start-up).
    if (const Json* self = JsonMember(*m, "self_memory");
        self != nullptr && self->is_object()) {
      const Json* mode = JsonMember(*self, "mode");
      const Json* nodes = JsonMember(*self, "nodes");
      const Json* requested = JsonMember(*self, "requested");
      std::vector<int> ids;
      if (nodes != nullptr && nodes->is_array()) {
        for (const Json& n : *nodes) {
          if (n.is_number_integer()) ids.push_back(n.get<int>());
        }
      }
      std::cout << "daemon memory: "
                << (mode != nullptr && mode->is_string()
                        ? mode->get<std::string>()
                        : std::string("?"))
                << (ids.empty() ? "" : " on node(s) ")
                << absl::StrJoin(ids, ",") << " (self_memory "
                << (requested != nullptr && requested->is_string()
                        ? requested->get<std::string>()
                        : std::string("?"))
                << ")\n";
    }
    const Json* samplers = JsonMember(*m, "samplers");
    if (samplers != nullptr && samplers->is_array()) {
      for (const Json& r : *samplers) {
        const Json* src = JsonMember(r, "source");
        std::cout << absl::StrFormat(
            "sampler %s: %.0f samples routed, %.0f unmapped, %.0f inbox "
            "full, %.0f throttled, %.0f lost\n",
            src != nullptr && src->is_string() ? src->get<std::string>()
                                               : std::string("?"),
            num(r, "routed"), num(r, "unmapped"), num(r, "inbox_full"),
            num(r, "throttle"), num(r, "lost"));
      }
    }
  }
  return std::cout.good() ? kExitOk : kExitFailure;
}

}  // namespace hotpage
