// `hotpage record`: live memory-access sampling into a .hpt trace.
//
//   hotpage record (--pid PID ... | --all | -- COMMAND [ARGS]) -o FILE.hpt
//
// Threading: the main thread polls the per-CPU rings and writes the trace;
// a TerminationSignalThread turns SIGINT/SIGTERM into a stop flag, so
// Ctrl-C ends the recording between two polls and the file is always
// closed properly (end block with the final counters).

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "migrator/process_handle.h"
#include "policy/topology.h"
#include "sampler/perf/event_config.h"
#include "sampler/perf/sampler.h"
#include "sampler/reorder_buffer.h"
#include "sampler/trace/trace_writer.h"
#include "sampler/write_fault_rearm.h"
#include "tools/attach/source_choice.h"
#include "tools/base/clock.h"
#include "tools/base/kernel/kernel_fs.h"
#include "tools/base/status_macros.h"
#include "tools/base/termination_signals.h"
#include "tools/cli.h"
#include "tools/cmd_env.h"
#include "tools/print_events.h"

namespace hotpage {
namespace {

// A --pid argument: a process id, or a usage error.
absl::StatusOr<pid_t> ParsePid(const std::string& text) {
  int64_t pid = 0;
  if (!absl::SimpleAtoi(text, &pid) || pid <= 0 || pid > (1 << 22)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--pid wants a process id, got '", text, "'"));
  }
  return static_cast<pid_t>(pid);
}

std::string Count(uint64_t n) {
  if (n >= 10000000) return absl::StrFormat("%.1fM", n / 1e6);
  if (n >= 10000) return absl::StrFormat("%.1fk", n / 1e3);
  return absl::StrCat(n);
}

CpuCounters ToTraceCounters(int cpu, const RingCounters& c) {
  CpuCounters out;
  out.cpu = static_cast<uint32_t>(cpu);
  out.lost = c.lost + c.lost_samples;
  out.throttled = c.throttle;
  out.unthrottled = c.unthrottle;
  // Samples of the targets that could not be kept. (Other processes'
  // samples in system-wide mode are not the target's: not counted here.)
  out.skipped =
      c.filtered_zero + c.filtered_kernel + c.malformed + c.unknown_event;
  return out;
}

}  // namespace

int RunRecord(const std::vector<std::string>& args) {
  absl::StatusOr<KernelFs> fs = KernelFs::Open("/");
  if (!fs.ok()) {
    std::cerr << "hotpage record: " << fs.status().message() << "\n";
    return kExitFailure;
  }
  LinuxPerfEventSystem sys;
  return RecordMain(args, CommandEnv{&*fs, &sys, {}, nullptr});
}

int RecordMain(const std::vector<std::string>& args, const CommandEnv& env) {
  const std::vector<FlagSpec> specs = {
      {"pid", "PID",
       "sample this process and its threads and children (repeatable)", true},
      {"all", "",
       "sample every process (system-wide; needs CAP_PERFMON or root)"},
      {"output", "FILE", "write the trace here (required)", false, 'o'},
      {"source", "SRC", "auto (default), pebs, ibs or pagefault"},
      {"duration", "SEC",
       "stop after SEC seconds (default: until Ctrl-C or the targets exit)"},
      {"sample-period", "N",
       "events per sample (default: 50000 PEBS, 1500000 IBS, 1 page faults, "
       "raised when kernel.perf_event_max_sample_rate is below 40000)"},
      {"ldlat", "CYCLES", "PEBS load-latency threshold (default 30)"},
      {"stores", "", "also sample stores (PEBS)"},
      {"l3-miss-only", "",
       "IBS: only ops that missed L3 (Zen 4+); a sample's period then "
       "understates the ops it stands for"},
      {"cpu-budget", "PCT",
       "keep the sampling thread under PCT% of one core by raising the period "
       "(default 2; 0 = fixed period)"},
      {"ring-kib", "KIB", "ring buffer per CPU (power of two, default 256)"},
      {"system-wide", "",
       "one system-wide event per CPU with a pid filter, instead of per-task "
       "events"},
      {"write-faults", "",
       "with --source pagefault and --pid or a command: also record repeated "
       "writes, on every "
       "node, by clearing the targets' soft-dirty bits every 200 ms or more "
       "(see attach --help)"},
      {"quiet", "", "no progress line"},
      PrintEventsFlagSpecs()[0],
      PrintEventsFlagSpecs()[1],
  };
  const char* synopsis =
      "(--pid PID ... | --all | -- COMMAND [ARGS...]) -o FILE.hpt [options]";
  const char* description =
      "Samples memory accesses (data address, CPU, pid/tid, latency, data "
      "source)\n"
      "with the best source the machine has (--source auto: Intel PEBS, then "
      "AMD\n"
      "IBS, then software page faults, which see first touches only) into a "
      ".hpt\n"
      "trace. With -- COMMAND, hotpage starts the command and samples it from "
      "its\n"
      "first instruction. Ctrl-C ends the recording cleanly; the trace is "
      "complete.\n"
      "--write-faults turns the page-fault source from first touches into a "
      "sampler of\n"
      "writes: the next write to every page of the targets faults once per "
      "interval.\n"
      "Progress (samples/s, lost, period) is shown on a terminal.";
  // Everything after "--" is the command to run.
  std::vector<std::string> own = args, command;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") {
      own.assign(args.begin(), args.begin() + i);
      command.assign(args.begin() + i + 1, args.end());
      break;
    }
  }
  auto usage_error = [](absl::string_view msg) {
    std::cerr << "hotpage record: " << msg
              << "\nTry 'hotpage record --help'.\n";
    return kExitUsage;
  };
  absl::StatusOr<ParsedFlags> flags = ParseFlags(own, specs);
  if (!flags.ok()) return usage_error(flags.status().message());
  if (flags->Has("help")) {
    std::cout << FormatUsage("record", synopsis, description, specs);
    return kExitOk;
  }
  if (flags->Has("print-events")) {
    return RunPrintEvents("record", *flags, !command.empty());
  }
  if (flags->Has("sysfs-root"))
    return usage_error("--sysfs-root is only used with --print-events");
  if (!flags->positional().empty()) {
    return usage_error(absl::StrCat("unexpected argument '",
                                    flags->positional()[0],
                                    "' (a command to run goes after --)"));
  }
  const std::vector<std::string> pid_args = flags->GetAll("pid");
  const int modes = (pid_args.empty() ? 0 : 1) + (flags->Has("all") ? 1 : 0) +
                    (command.empty() ? 0 : 1);
  if (modes != 1)
    return usage_error("give exactly one of --pid PID, --all, or -- COMMAND");
  std::optional<std::string> out_path = flags->Get("output");
  if (!out_path) return usage_error("-o FILE.hpt is required");

  absl::StatusOr<SourceRequest> source =
      ParseSourceRequest(flags->Get("source").value_or("auto"));
  if (!source.ok()) return usage_error(source.status().message());
  const bool write_faults = flags->Has("write-faults");
  if (write_faults && flags->Get("source").value_or("auto") != "pagefault") {
    return usage_error("--write-faults needs --source pagefault");
  }
  if (write_faults && flags->Has("all")) {
    return usage_error(
        "--write-faults re-arms named processes: use --pid PID or -- COMMAND, "
        "not --all");
  }
  absl::StatusOr<double> duration = FlagDouble(*flags, "duration", 0, 0, 1e9);
  absl::StatusOr<int64_t> period =
      FlagInt(*flags, "sample-period", 0, 1, int64_t{1} << 40);
  absl::StatusOr<int64_t> ldlat = FlagInt(*flags, "ldlat", 30, 1, 65535);
  absl::StatusOr<double> budget = FlagDouble(*flags, "cpu-budget", 2, 0, 100);
  absl::StatusOr<int64_t> ring_kib =
      FlagInt(*flags, "ring-kib", 256, 8, 1 << 20);
  for (const absl::Status& s :
       {duration.status(), period.status(), ldlat.status(), budget.status(),
        ring_kib.status()}) {
    if (!s.ok()) return usage_error(s.message());
  }
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t ring_pages = static_cast<size_t>(*ring_kib) * 1024 / page;
  if (ring_pages == 0 || (ring_pages & (ring_pages - 1)) != 0) {
    return usage_error(absl::StrCat("--ring-kib ", *ring_kib,
                                    " is not a power-of-two number of pages"));
  }

  auto fail = [](const absl::Status& s) {
    std::cerr << "hotpage record: " << s.message() << "\n";
    return kExitFailure;
  };
  const KernelFs* fs = env.fs;

  // Targets.
  // Targets are guarded by ProcessHandle (pidfd + start time): a thread id
  // is refused, an exit is noticed, a recycled pid is never mistaken.
  std::vector<ProcessHandle> targets;
  pid_t child = -1;
  int go_fd = -1;
  if (!command.empty()) {
    // The child waits on a pipe until the events are open and enabled, so
    // that its first access is sampled, then execs the command.
    int go[2];
    if (pipe2(go, O_CLOEXEC) != 0) return fail(ErrnoStatus(errno, "pipe"));
    child = fork();
    if (child < 0) return fail(ErrnoStatus(errno, "fork"));
    if (child == 0) {
      close(go[1]);
      char c;
      if (read(go[0], &c, 1) != 1) _exit(127);  // the recorder gave up
      std::vector<char*> argv;
      for (const std::string& a : command)
        argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execvp(argv[0], argv.data());
      std::fprintf(stderr, "hotpage record: cannot run %s: %s\n", argv[0],
                   std::strerror(errno));
      _exit(127);
    }
    close(go[0]);
    go_fd = go[1];
    absl::StatusOr<ProcessHandle> t = ProcessHandle::Attach(child, &*fs);
    if (!t.ok()) return fail(t.status());
    targets.push_back(std::move(*t));
  }
  auto kill_child = [&]() {
    if (child > 0) {
      if (go_fd >= 0) close(go_fd);
      kill(child, SIGKILL);
      waitpid(child, nullptr, 0);
    }
  };
  for (const std::string& p : pid_args) {
    absl::StatusOr<pid_t> pid = ParsePid(p);
    if (!pid.ok()) return usage_error(pid.status().message());
    absl::StatusOr<ProcessHandle> t = ProcessHandle::Attach(*pid, &*fs);
    if (!t.ok() && absl::IsInvalidArgument(t.status()))
      return usage_error(t.status().message());
    if (!t.ok()) return fail(t.status());
    targets.push_back(std::move(*t));
  }

  // Events.
  SamplingOptions opt;
  opt.sample_period = static_cast<uint64_t>(*period);
  opt.ldlat_cycles = static_cast<int>(*ldlat);
  opt.pebs_stores = flags->Has("stores");
  opt.ibs_l3_miss_only = flags->Has("l3-miss-only");
  absl::StatusOr<std::vector<int>> cpus = OnlineCpus(*fs);
  if (!cpus.ok()) {
    kill_child();
    return fail(cpus.status());
  }
  SamplerConfig cfg;
  cfg.all = flags->Has("all");
  cfg.system_wide = flags->Has("system-wide");
  for (const ProcessHandle& t : targets) cfg.pids.push_back(t.pid());
  cfg.cpus = *cpus;
  // Existing threads of the targets are separate tasks to perf (inherit
  // follows only threads created later): list them, or with very many go
  // system-wide with the pid filter.
  IncludeExistingThreads(*fs, &cfg);
  // Lists the targets' tasks again when the budget changes the period, so
  // the per-task events are re-opened for inherited threads and children
  // (sampler.h, "Period changes").
  cfg.fs = &*fs;
  cfg.ring_data_pages = ring_pages;
  cfg.cpu_budget = *budget / 100.0;
  // Opening a source: its events, then every ring.
  std::string why;
  absl::StatusOr<EventGroup> events = absl::UnknownError("no source opened");
  absl::StatusOr<std::unique_ptr<Sampler>> sampler =
      absl::UnknownError("no source opened");
  auto open_source = [&](SourceRequest req) -> absl::Status {
    events = ChooseEvents(*fs, req, opt, &why);
    if (!events.ok()) return events.status();
    cfg.events = *events;
    sampler = Sampler::Open(cfg, env.perf);
    return sampler.status();
  };
  absl::Status opened;
  if (*source == SourceRequest::kAuto) {
    // PEBS, IBS, page faults, each weighed for privilege, the next tried
    // when one fails to open (tools/attach/source_choice.h).
    SourceCapabilities caps = ProbeSourceCapabilities(*fs, false, [] {
      return absl::UnimplementedError("not used by record");
    });
    caps.perf_sources_only = true;
    caps.system_wide = cfg.all || cfg.system_wide;
    absl::StatusOr<SourceChoice> choice = OpenAutoSource(
        caps,
        [&](const SourceChoice& c) {
          absl::StatusOr<SourceRequest> req = ParseSourceRequest(c.source);
          return req.ok() ? open_source(*req) : req.status();
        },
        [](const std::string& line) {
          std::cerr << "hotpage record: " << line << "\n";
        });
    if (choice.ok()) why = choice->reason;
    opened = choice.status();
  } else {
    opened = open_source(*source);
  }
  if (!opened.ok()) {
    kill_child();
    return fail(opened);
  }

  // Trace.
  TraceHeader header;
  header.sample_period = (*sampler)->period();
  header.start_realtime_ns = RealtimeNs();
  header.start_clock_ns = MonotonicNs();
  header.source = SampleSourceName(events->events.back().source);
  header.event_config = events->Describe();
  if (write_faults)
    header.event_config +=
        "; write faults re-armed every 200 ms or more (soft-dirty)";
  SyscallMempolicyProbe probe;
  if (absl::StatusOr<Topology> topo = DiscoverTopology(*fs, &probe);
      topo.ok()) {
    header.topology_json = TopologyToJson(*topo);
  }
  absl::StatusOr<std::unique_ptr<TraceWriter>> writer =
      TraceWriter::Create(*out_path, header);
  if (!writer.ok()) {
    kill_child();
    return fail(writer.status());
  }

  std::atomic<bool> stop{false};
  absl::StatusOr<std::unique_ptr<TerminationSignalThread>> signals =
      TerminationSignalThread::Start(
          [&stop](int) { stop.store(true, std::memory_order_relaxed); });
  if (!signals.ok()) {
    kill_child();
    return fail(signals.status());
  }

  const bool progress = isatty(STDERR_FILENO) && !flags->Has("quiet");
  std::cerr << "hotpage record: " << why << "\n  events: " << events->Describe()
            << " on " << cpus->size() << " CPUs, "
            << ((*sampler)->system_wide()
                    ? absl::StrCat("system-wide: ", (*sampler)->reason())
                    : "per task")
            << "\n";
  if (absl::Status s = (*sampler)->Enable(); !s.ok()) {
    kill_child();
    return fail(s);
  }
  // --write-faults: one re-arm per target, each file opened once and bound
  // to its process, checked against the target's handle right after.
  std::vector<std::unique_ptr<WriteFaultRearm>> rearms;
  if (write_faults) {
    if (absl::Status probe = ProbeSoftDirty(); !probe.ok()) {
      kill_child();
      return fail(probe);
    }
    for (const ProcessHandle& t : targets) {
      absl::StatusOr<std::unique_ptr<WriteFaultRearm>> r = StartWriteFaultRearm(
          t.pid(), [&] { return t.StillSame() == TargetState::kSame; });
      if (!r.ok()) {
        kill_child();
        return fail(r.status());
      }
      rearms.push_back(std::move(*r));
    }
  }
  if (go_fd >= 0) {
    if (write(go_fd, "g", 1) != 1) {
      kill_child();
      return fail(ErrnoStatus(errno, "starting the command"));
    }
    close(go_fd);
    go_fd = -1;
  }

  absl::Status write_status;
  uint64_t samples = 0;
  // Samples go to the trace in time order: the rings are drained one after
  // another, so the reorder buffer holds them until a poll that emptied
  // every ring proves nothing older is still unread (reorder_buffer.h).
  SampleReorderBuffer reorder;
  auto write = [&](absl::Span<const Sample> batch) {
    if (write_status.ok()) write_status = (*writer)->Append(batch);
  };
  auto sink = [&](absl::Span<const Sample> batch) {
    samples += batch.size();
    reorder.Add(batch, write);
  };
  // Slack for a sample stamped just before a poll but not yet in its ring
  // (the kernel writes it from the event's own context, microseconds later).
  constexpr uint64_t kReorderSlackNs = 10'000'000;
  auto sync_counters = [&]() {
    for (const auto& [cpu, c] : (*sampler)->PerCpu()) {
      absl::Status s = (*writer)->SetCounters(ToTraceCounters(cpu, c));
      if (write_status.ok() && !s.ok()) write_status = s;
    }
  };
  const double start = MonotonicSeconds();
  double last_tick = start, last_cpu = ThreadCpuSeconds(), cpu_total = 0;
  uint64_t last_samples = 0;
  std::string stop_reason = "the targets exited";
  int child_status = 0;
  for (;;) {
    const uint64_t poll_start_ns = MonotonicNs();
    absl::StatusOr<size_t> n = (*sampler)->Poll(100, sink);
    if (!n.ok()) write_status = n.status();
    if (n.ok() && (*sampler)->last_poll_complete() &&
        poll_start_ns > kReorderSlackNs) {
      reorder.Release(poll_start_ns - kReorderSlackNs, write);
    }
    // Every sample is a fault some target took: each re-arm is charged
    // with all of them since its previous one (conservative).
    for (auto& r : rearms) {
      absl::StatusOr<bool> done = r->MaybeRearm(MonotonicNs(), samples);
      if (!done.ok() && !absl::IsNotFound(done.status()) && write_status.ok()) {
        write_status = done.status();  // NotFound: that target exited
      }
    }
    if (!write_status.ok()) break;
    const double now = MonotonicSeconds();
    if (stop.load(std::memory_order_relaxed)) {
      stop_reason = "interrupted";
      break;
    }
    if (*duration > 0 && now - start >= *duration) {
      stop_reason = absl::StrCat("--duration ", *duration, " s reached");
      break;
    }
    if (!cfg.all) {
      bool all_gone = true;
      for (const ProcessHandle& t : targets) all_gone &= !t.Alive();
      if (all_gone) break;
    }
    if (now - last_tick >= 1.0) {
      const double cpu_now = ThreadCpuSeconds();
      cpu_total += cpu_now - last_cpu;
      (*sampler)->AdaptPeriod(cpu_now - last_cpu, now - last_tick);
      sync_counters();
      if (write_status.ok()) write_status = (*writer)->Flush();
      if (progress) {
        RingCounters t = (*sampler)->Totals();
        std::fprintf(stderr,
                     "\r  %6.1f s  %8s samples  %8s/s  lost %s  throttled %s  "
                     "period %llu   ",
                     now - start, Count(samples).c_str(),
                     Count(static_cast<uint64_t>((samples - last_samples) /
                                                 (now - last_tick)))
                         .c_str(),
                     Count(t.lost + t.lost_samples).c_str(),
                     Count(t.throttle).c_str(),
                     static_cast<unsigned long long>((*sampler)->period()));
      }
      last_tick = now;
      last_cpu = cpu_now;
      last_samples = samples;
    }
  }
  if (progress) std::fputs("\n", stderr);
  (void)(*sampler)->Disable();
  (*sampler)->Flush(sink);
  reorder.Drain(write);
  sync_counters();
  if (write_status.ok()) write_status = (*writer)->Close();
  cpu_total += ThreadCpuSeconds() - last_cpu;
  const double elapsed = MonotonicSeconds() - start;
  if (child > 0) {
    if (stop_reason != "the targets exited") kill(child, SIGTERM);
    waitpid(child, &child_status, 0);
  }
  if (!write_status.ok()) return fail(write_status);

  RingCounters t = (*sampler)->Totals();
  std::cerr << absl::StrFormat(
      "hotpage record: %s; %llu samples in %.1f s to %s (%.1f MB, %.1f "
      "bytes/sample)\n"
      "  lost %llu, throttled %llu, skipped %llu (no/kernel address), other "
      "processes' %llu; "
      "period %llu; sampler CPU %.2f%% of one core\n",
      stop_reason, static_cast<unsigned long long>(samples), elapsed, *out_path,
      (*writer)->bytes_written() / 1e6,
      samples ? static_cast<double>((*writer)->bytes_written()) /
                    static_cast<double>(samples)
              : 0.0,
      static_cast<unsigned long long>(t.lost + t.lost_samples),
      static_cast<unsigned long long>(t.throttle),
      static_cast<unsigned long long>(t.filtered_zero + t.filtered_kernel),
      static_cast<unsigned long long>(t.filtered_pid),
      static_cast<unsigned long long>((*sampler)->period()),
      elapsed > 0 ? 100.0 * cpu_total / elapsed : 0.0);
  if ((*sampler)->reopens() + (*sampler)->reopen_failures() > 0) {
    std::cerr << "hotpage record: the period changed; per-task events "
                 "re-opened "
              << (*sampler)->reopens()
              << " times so that inherited threads and children follow it";
    if ((*sampler)->reopen_failures() > 0) {
      std::cerr << ", " << (*sampler)->reopen_failures()
                << " failed (the old events kept sampling): "
                << (*sampler)->last_reopen_error();
    }
    std::cerr << "\n";
  }
  if (!(*sampler)->period_reaches_children()) {
    std::cerr << "hotpage record: threads and children created before the "
                 "last period change sampled at an older period (each "
                 "sample records its own)\n";
  }
  if (t.ibs_non_memory + t.aux_dropped > 0) {
    std::cerr << "hotpage record: not memory accesses, not lost: "
              << t.ibs_non_memory
              << " IBS ops that were neither loads nor stores, "
              << t.aux_dropped << " mem-loads-aux group leader samples\n";
  }
  if (!rearms.empty()) {
    uint64_t n = 0;
    for (const auto& r : rearms) n += r->stats().rearms;
    std::cerr << "hotpage record: write faults re-armed " << n << " times over "
              << rearms.size() << " process(es)\n";
  }
  if (reorder.late() > 0) {
    std::cerr << "hotpage record: " << reorder.late()
              << " samples were read after later ones had been written (a ring "
                 "fell behind); they are in the "
                 "trace, out of time order\n";
  }
  if (child > 0 && WIFEXITED(child_status) && WEXITSTATUS(child_status) != 0 &&
      stop_reason == "the targets exited") {
    std::cerr << "hotpage record: the command exited with status "
              << WEXITSTATUS(child_status) << "\n";
  }
  return kExitOk;
}

}  // namespace hotpage
