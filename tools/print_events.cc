#include "tools/print_events.h"

#include <sys/resource.h>

#include <cstdint>
#include <iostream>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "sampler/perf/event_config.h"
#include "sampler/perf/event_plan_json.h"
#include "sampler/perf/sampler.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {

const std::vector<FlagSpec>& PrintEventsFlagSpecs() {
  static const std::vector<FlagSpec> specs = {
      {"print-events", "",
       "print the perf event plan as JSON (events, PMUs, CPUs, groups, "
       "descriptors needed) and exit without opening anything"},
      {"sysfs-root", "DIR",
       "with --print-events: plan for the machine DIR/sys and DIR/proc "
       "describe (a copied or fake tree), using the kernel's sysfs aliases"},
  };
  return specs;
}

int RunPrintEvents(absl::string_view command, const ParsedFlags& flags,
                   bool has_command) {
  const std::string prefix = absl::StrCat("hotpage ", command, ": ");
  auto usage_error = [&](absl::string_view msg) {
    std::cerr << prefix << msg << "\nTry 'hotpage " << command << " --help'.\n";
    return kExitUsage;
  };
  auto fail = [&](const absl::Status& s) {
    std::cerr << prefix << s.message() << "\n";
    return kExitFailure;
  };
  // Sources without perf events, and attach's names for perf ones.
  std::string source_name = flags.Get("source").value_or("auto");
  if (source_name == "damon") {
    return usage_error(
        "--source damon opens no perf events: there is no event plan to "
        "print");
  }
  if (source_name == "hintfault") source_name = "pagefault";
  absl::StatusOr<SourceRequest> req = ParseSourceRequest(source_name);
  if (!req.ok()) return usage_error(req.status().message());
  absl::StatusOr<int64_t> period =
      FlagInt(flags, "sample-period", 0, 1, int64_t{1} << 40);
  absl::StatusOr<int64_t> ldlat = FlagInt(flags, "ldlat", 30, 1, 65535);
  if (!period.ok()) return usage_error(period.status().message());
  if (!ldlat.ok()) return usage_error(ldlat.status().message());
  SamplingOptions opt;
  opt.sample_period = static_cast<uint64_t>(*period);
  opt.ldlat_cycles = static_cast<int>(*ldlat);
  opt.pebs_stores = flags.Has("stores");
  opt.ibs_l3_miss_only = flags.Has("l3-miss-only");

  const std::optional<std::string> root = flags.Get("sysfs-root");
  absl::StatusOr<KernelFs> fs = KernelFs::Open(root.value_or("/"));
  if (!fs.ok()) return fail(fs.status());
  std::string why;
  absl::StatusOr<EventGroup> g = ChooseEvents(*fs, *req, opt, &why);
  if (!g.ok()) return fail(g.status());
  absl::StatusOr<std::vector<int>> cpus = OnlineCpus(*fs);
  if (!cpus.ok()) return fail(cpus.status());

  EventPlanContext ctx;
  const SampleSource src = g->events.back().source;
  ctx.source = src == SampleSource::kIbsOp       ? "ibs"
               : src == SampleSource::kPageFault ? "pagefault"
                                                 : "pebs";
  ctx.why = why;
  ctx.online_cpus = *cpus;
  // The sampler's rule (sampler.h): system-wide for --all, --system-wide
  // and IBS; otherwise one event per target thread and CPU.
  ctx.per_task = !flags.Has("all") && !flags.Has("system-wide") &&
                 src != SampleSource::kIbsOp;
  ctx.tasks = 1;
  if (ctx.per_task && !has_command) {
    // Each target's existing threads are tasks of their own (inherit only
    // follows threads created later): count them where the tree lists
    // them, else the process itself.
    size_t tasks = 0;
    for (const std::string& p : flags.GetAll("pid")) {
      int pid = 0;
      if (!absl::SimpleAtoi(p, &pid) || pid <= 0 || pid > (1 << 22)) {
        return usage_error(
            absl::StrCat("--pid wants a process id, got '", p, "'"));
      }
      absl::StatusOr<std::vector<pid_t>> threads = ListThreads(*fs, pid);
      tasks += threads.ok() ? threads->size() : 1;
    }
    if (tasks > 0) ctx.tasks = tasks;
  }
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    ctx.rlimit_nofile = static_cast<uint64_t>(rl.rlim_cur);
  }
  if (!fs->is_live()) {
    // The CPU model libpfm4 would see is the tree's (DIR/proc/cpuinfo),
    // never this machine's: libpfm4 reads CPUID, so it is not asked at all.
    std::string cpu_note;
    std::optional<CpuModel> model;
    if (absl::StatusOr<std::string> text = fs->ReadFile("/proc/cpuinfo");
        text.ok()) {
      model = ParseCpuinfo(*text);
      cpu_note = model ? absl::StrCat(fs->Display("/proc/cpuinfo"), " says ",
                                      DescribeCpuModel(*model))
                       : absl::StrCat(fs->Display("/proc/cpuinfo"),
                                      " names no x86 vendor, family and model");
    } else {
      cpu_note = absl::StrCat("the tree has no ", fs->Display("/proc/cpuinfo"),
                              ": the CPU model is unknown");
    }
    const std::optional<std::string> pmu =
        model ? LibpfmPmuForCpu(*model) : std::nullopt;
    if (model) ctx.cpu_model = DescribeCpuModel(*model);
    if (pmu) ctx.libpfm_pmu = *pmu;
    if (g->encoder != "software" && src != SampleSource::kIbsOp) {
      std::string libpfm;
      if (pmu && (*pmu == "snb" || *pmu == "snb_ep")) {
        libpfm = absl::StrCat(
            "; libpfm4 knows it as ", *pmu,
            " but cannot encode MEM_TRANS_RETIRED:LOAD_LATENCY there, so "
            "that machine would use the kernel's alias as well");
      } else if (pmu) {
        libpfm = absl::StrCat(
            "; on that machine libpfm4 would encode ", *pmu,
            "::MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=", opt.ldlat_cycles);
      } else if (model) {
        libpfm = "; hotpage's table of libpfm4 models does not name its PMU";
      }
      ctx.encoder_note = absl::StrCat(
          "--sysfs-root ", fs->root(), ": ", cpu_note, libpfm,
          ". libpfm4 detects the CPU by CPUID of the machine it runs on and "
          "cannot be pointed at the tree, so the plan uses the kernel's "
          "sysfs aliases");
    }
  }
  std::cout << EventPlanToJson(*g, ctx);
  std::cout.flush();
  return std::cout.good() ? kExitOk : kExitFailure;
}

}  // namespace hotpage
