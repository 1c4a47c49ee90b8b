#include "tools/simulate/sim_run.h"

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/base/status_macros.h"
#include "tools/simulate/sim_arms.h"
#include "tools/simulate/sim_baselines.h"
#include "tools/simulate/sim_colloid.h"
#include "tools/simulate/sim_hemem.h"
#include "tools/simulate/sim_hotpage.h"
#include "tools/simulate/sim_trace.h"

namespace hotpage {

std::vector<std::string> AllPolicyNames() {
  return {"oracle", "hotpage", "first-touch", "tpp",    "tpp-ideal",
          "memtis", "arms",    "hemem",       "colloid"};
}

uint64_t MemtisCoolingSamples(uint64_t samples, uint64_t duration_ns) {
  if (duration_ns == 0) return std::max<uint64_t>(samples, 1);
  const long double per_4s =
      static_cast<long double>(samples) * 4e9L / duration_ns;
  return std::max<uint64_t>(static_cast<uint64_t>(per_4s + 0.5L), 1);
}

absl::Status CheckSimulatedPlacement(const PlacementConfig& placement) {
  if (placement.interleave_tolerance >= 0) {
    return absl::InvalidArgumentError(
        "--keep-interleave: a trace records no memory policies (numa_maps "
        "ranges) and the simulator places every page under the default "
        "policy, so no range is interleaved and the rule could never act; "
        "see its effect live with `hotpage attach --dry-run "
        "--keep-interleave TOL`");
  }
  if (placement.huge_strict_preferred && placement.promote_to.empty()) {
    return absl::InvalidArgumentError(
        "--huge-strict: a huge page's preferred node comes from its range's "
        "prefer / prefer (many) policy, which a trace does not record, or "
        "from --promote-to: give --promote-to NODES");
  }
  return absl::OkStatus();
}

absl::StatusOr<Topology> LoadTopology(const std::string& topology) {
  for (const std::string& p : PresetNames()) {
    if (topology == p) return PresetTopology(p);
  }
  std::ifstream in(topology, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat(
        "--topology '", topology, "': neither a preset (",
        absl::StrJoin(PresetNames(), ", "),
        ") nor a readable file (write one with `hotpage topology --json`)"));
  }
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  absl::StatusOr<Topology> t = TopologyFromJson(text);
  if (!t.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--topology ", topology, ": ", t.status().message()));
  }
  return t;
}

absl::StatusOr<std::vector<std::unique_ptr<SimPolicy>>> BuildPolicies(
    const std::vector<std::string>& names, const SimMachine& machine,
    const SimulateOptions& options, uint64_t memtis_cooling_samples) {
  std::vector<std::unique_ptr<SimPolicy>> out;
  auto memory = [&](bool reclaim_demotes)
      -> absl::StatusOr<std::unique_ptr<SimulatedMemory>> {
    SimulatedMemoryOptions o;
    o.reclaim_demotes = reclaim_demotes;
    o.capacities = machine.capacities;
    o.expected_pages = machine.footprint_pages;
    o.first_touch_node = options.first_touch_node;
    // The hint-fault source's sweep of pages it never saw (attach reads
    // the same from numa_maps).
    o.report_ranges = options.source == SimSource::kHintFault;
    return SimulatedMemory::Create(machine.topology, o);
  };
  for (const std::string& name : names) {
    // The peers model their own demotions (tpp its kswapd); the kernel's
    // reclaim is the hotpage policy's only.
    absl::StatusOr<std::unique_ptr<SimulatedMemory>> mem =
        memory(name == "hotpage" && options.kernel_demotion);
    if (!mem.ok()) return mem.status();
    if (name == "oracle") {
      out.push_back(std::make_unique<OraclePolicy>(OracleTiersOf(**mem)));
    } else if (name == "hotpage") {
      HotpagePolicyOptions h;
      h.placement = options.placement;
      h.engine.interval_ns = options.interval_ms * 1000000;
      h.engine.address_space = options.pid.value_or(0);
      h.engine.footprint_pages = machine.footprint_pages;
      h.migrator.rate_limit_bytes_per_sec =
          static_cast<double>(options.rate_limit_mbps) * 1e6;
      h.source = options.source;
      h.kernel_demotion = options.kernel_demotion;
      h.fault.scanner.present_at_start = options.first_touch_node >= 0;
      h.fault.scanner.scan_ns_per_pte = options.scan_ns_per_pte;
      absl::StatusOr<std::unique_ptr<HotpagePolicy>> p =
          HotpagePolicy::Create(machine.topology, std::move(*mem), h);
      if (!p.ok()) return p.status();
      out.push_back(std::move(*p));
    } else if (name == "first-touch") {
      out.push_back(std::make_unique<FirstTouchPolicy>(std::move(*mem)));
    } else if (name == "tpp" || name == "tpp-ideal") {
      TppOptions t;
      t.scanner = name == "tpp";
      t.present_at_start = options.first_touch_node >= 0;
      t.scan_ns_per_pte = options.scan_ns_per_pte;
      out.push_back(std::make_unique<TppPolicy>(std::move(*mem), t));
    } else if (name == "memtis") {
      MemtisOptions m;
      m.cooling_samples = memtis_cooling_samples;
      out.push_back(std::make_unique<MemtisPolicy>(std::move(*mem), m));
    } else if (name == "arms") {
      out.push_back(
          std::make_unique<ArmsPolicy>(std::move(*mem), ArmsOptions{}));
    } else if (name == "hemem") {
      out.push_back(
          std::make_unique<HememPolicy>(std::move(*mem), HememOptions{}));
    } else if (name == "colloid") {
      ColloidOptions c;
      c.cooling_samples = memtis_cooling_samples;
      out.push_back(std::make_unique<ColloidPolicy>(std::move(*mem), c));
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown policy '", name, "' (",
                       absl::StrJoin(AllPolicyNames(), ", "), ", all)"));
    }
  }
  return out;
}

absl::StatusOr<SimulateResult> SimulateTrace(const SimulateOptions& options) {
  std::vector<std::string> names;
  if (options.policy == "all") {
    names = AllPolicyNames();
  } else if (options.policy == "oracle") {
    names = {"oracle"};
  } else {
    bool known = false;
    for (const std::string& n : AllPolicyNames()) known |= n == options.policy;
    if (!known) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown policy '", options.policy, "' (",
                       absl::StrJoin(AllPolicyNames(), ", "), ", all)"));
    }
    names = {"oracle", options.policy};
  }
  absl::StatusOr<Topology> topo = LoadTopology(options.topology);
  if (!topo.ok()) return topo.status();
  HOTPAGE_RETURN_IF_ERROR(CheckSimulatedPlacement(options.placement));
  HOTPAGE_RETURN_IF_ERROR(ValidatePlacementConfig(options.placement, *topo));

  // Pass 1: pids, footprints, time span.
  absl::StatusOr<TraceSurvey> survey =
      SurveyTrace(options.trace, [&](uint64_t r, uint64_t t) {
        if (options.progress) options.progress(1, r, t);
      });
  if (!survey.ok()) return survey.status();
  SimulateResult result;
  uint32_t pid = survey->busiest_pid();
  if (options.pid) {
    if (!survey->pids.count(*options.pid)) {
      std::vector<std::string> pids;
      for (const auto& [p, s] : survey->pids) {
        if (pids.size() < 10)
          pids.push_back(absl::StrCat(p, " (", s.samples, " samples)"));
      }
      return absl::NotFoundError(
          absl::StrCat(options.trace, ": no samples of pid ", *options.pid,
                       "; the trace has ", absl::StrJoin(pids, ", "),
                       survey->pids.size() > 10 ? ", ..." : ""));
    }
    pid = *options.pid;
  } else if (survey->pids.size() > 1) {
    const PidSurvey& s = survey->pids.at(pid);
    result.notes += absl::StrCat(
        "the trace has ", survey->pids.size(), " processes; simulating pid ",
        pid, ", the one with most samples (", s.samples, " of ",
        survey->samples, "); choose another with --pid\n");
  }
  const PidSurvey& ps = survey->pids.at(pid);

  absl::StatusOr<SimMachine> machine =
      ScaleMachine(*topo, ps.footprint_pages, options.capacity);
  if (!machine.ok()) return machine.status();
  result.machine = std::make_unique<SimMachine>(std::move(*machine));
  const uint64_t cooling =
      MemtisCoolingSamples(ps.samples, ps.last_ns - ps.first_ns);
  SimulateOptions popt = options;
  popt.pid = pid;
  absl::StatusOr<std::vector<std::unique_ptr<SimPolicy>>> policies =
      BuildPolicies(names, *result.machine, popt, cooling);
  if (!policies.ok()) return policies.status();
  result.sim = std::make_unique<Simulation>(
      std::move(*policies), options.interval_ms * 1000000, options.observer);
  // --rounds: each hotpage round with the replay's start (its first sample,
  // which comes before any round).
  if (const int h = result.sim->IndexOf("hotpage");
      options.hotpage_rounds && h >= 0) {
    auto* hotpage =
        dynamic_cast<HotpagePolicy*>(result.sim->policies()[h].get());
    if (hotpage != nullptr) {
      hotpage->set_round_listener(
          [cb = options.hotpage_rounds, sim = result.sim.get()](
              const RoundReport& r) { cb(r, sim->start_ns()); });
    }
  }

  // Pass 2: the replay.
  absl::StatusOr<std::unique_ptr<TraceSource>> src =
      TraceSource::Open(options.trace);
  if (!src.ok()) return src.status();
  SampleOrderer orderer;
  std::vector<Sample> mine;
  mine.reserve(4096);
  Simulation& sim = *result.sim;
  auto feed = [&sim](absl::Span<const Sample> s) { sim.Feed(s); };
  uint64_t batches = 0;
  for (;;) {
    absl::StatusOr<absl::Span<const Sample>> b = (*src)->Next();
    if (!b.ok()) return b.status();
    if (b->empty()) break;
    mine.clear();
    for (const Sample& s : *b) {
      if (s.pid == pid) mine.push_back(s);
    }
    orderer.Push(mine, feed);
    if (options.progress && (++batches & 15) == 0) {
      options.progress(2, (*src)->bytes_read(), (*src)->total_bytes());
    }
  }
  orderer.Finish(feed);
  sim.Finish();
  if (options.progress)
    options.progress(2, (*src)->total_bytes(), (*src)->total_bytes());

  SimRunInfo& info = result.info;
  info.trace = options.trace;
  info.trace_format = survey->format;
  info.pid = pid;
  info.trace_samples = survey->samples;
  info.pids_in_trace = survey->pids.size();
  info.out_of_order = orderer.out_of_order();
  info.late_samples = orderer.late_samples();
  info.topology = options.topology;
  info.capacity = options.capacity.fast_bytes
                      ? absl::StrCat("fast-capacity ",
                                     *options.capacity.fast_bytes, " bytes")
                      : absl::StrCat("ratio 1:", options.capacity.ratio_n);
  info.interval_ms = options.interval_ms;
  info.rate_limit_mbps = options.rate_limit_mbps;
  info.engine_flags = options.engine_flags;
  info.source = SimSourceName(options.source);
  info.kernel_demotion = options.kernel_demotion;
  info.memtis_cooling_samples = cooling;
  info.machine = result.machine.get();
  return result;
}

}  // namespace hotpage
