// sim_hotset: the hot-set-on-fast-memory time line of `hotpage simulate`,
// for comparing the simulator with a real kernel on the same workload
// (tests/compare/calibrate.sh).
//
//   sim_hotset TRACE --policy P [--topology T] [--fast-capacity SIZE]
//              [--first-touch-node N] [--until-s S] [--no-scan-cost]
//              [--scan-ns-per-pte N] [--interval-ms N] [--source SRC]
//
// TRACE is a trace hot_set_workload wrote itself (--trace_out): its
// header's event_config says "hot_set_workload period=N start_ns=T
// switch_ns=T1,T2,...", which cut the run into phases. The hot set of phase
// K is the set of pages sampled in phase K that were not sampled in phase
// K-1 (the workload's sets are disjoint; a thread finishes its pass after a
// switch, so the previous set shows briefly). The simulation runs P (and
// the oracle) through SimulateTrace with an observer that follows every
// page of the sets: its first touch (the node that served its first
// access) and its moves. For phases 0 and 1 it prints, as
// tests/compare's checker measures them in a guest:
//   t90_K        seconds from the phase's start until >= 90% of its set is
//                on a fast node (-1: not within the phase)
//   end_frac_K   the set's share on fast nodes when the phase ends
//   moved_pages  pages moved (any direction) from the start until --until-s
//                (default: the end of phase 1), like pgmigrate_success
// --interval-ms is the hotpage policy's round (`hotpage simulate
// --interval-ms`; tests/compare runs attach with 500), --source what it
// sees of the trace (trace, hintfault, writefault: sim_fault_source.h; the
// guest's hotpage-hintfault and hotpage-writefault). The header's pte_ns
// (the guest's measured cost of changing a PTE) is the NUMA scanner's
// scan_ns_per_pte (its 3% CPU cap: the tpp model's, and hotpage's with
// --source hintfault) unless --no-scan-cost (--scan-ns-per-pte sets it
// instead). It prints the policy's own
// counters (Details()) too:
//   SIM-HOTSET policy=P t90_0=.. end_frac_0=.. t90_1=.. end_frac_1=..
//   moved_pages=N set_0=N set_1=N pte_ns=N <details>
// then the time series of each set's share on fast nodes, at its phase's
// start and every 0.5 s after, to the phase's end:
//   SIM-HOTSET-SERIES policy=P step_ms=500 series_0=F,F,... series_1=...

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "sampler/trace/trace_reader.h"
#include "tools/simulate/sim_machine.h"
#include "tools/simulate/sim_run.h"

namespace hotpage {
namespace {

struct Phases {
  std::vector<uint64_t> bounds;  // start, switches..., then the last sample
};

// The phase boundaries from the header, and the sets of phases 0 and 1.
absl::Status ReadPhases(const std::string& path, Phases* phases,
                        absl::flat_hash_map<uint64_t, int>* set_of,
                        uint64_t* pte_ns) {
  absl::StatusOr<std::unique_ptr<TraceReader>> r = TraceReader::Open(path);
  if (!r.ok()) return r.status();
  uint64_t start = 0;
  std::vector<uint64_t> switches;
  for (absl::string_view field :
       absl::StrSplit((*r)->header().event_config, ' ')) {
    if (absl::ConsumePrefix(&field, "start_ns=")) {
      if (!absl::SimpleAtoi(field, &start))
        return absl::InvalidArgumentError("bad start_ns in the header");
    } else if (absl::ConsumePrefix(&field, "pte_ns=")) {
      if (!absl::SimpleAtoi(field, pte_ns))
        return absl::InvalidArgumentError("bad pte_ns in the header");
    } else if (absl::ConsumePrefix(&field, "switch_ns=")) {
      for (absl::string_view t :
           absl::StrSplit(field, ',', absl::SkipEmpty())) {
        uint64_t v;
        if (!absl::SimpleAtoi(t, &v))
          return absl::InvalidArgumentError("bad switch_ns in the header");
        switches.push_back(v);
      }
    }
  }
  if (start == 0 || switches.empty()) {
    return absl::InvalidArgumentError(
        path +
        ": no start_ns/switch_ns in the header's event_config (not a "
        "hot_set_workload --trace_out trace with a switch)");
  }
  phases->bounds.push_back(start);
  for (uint64_t t : switches) phases->bounds.push_back(t);
  std::vector<absl::flat_hash_map<uint64_t, bool>> seen(2);
  uint64_t last = start;
  for (;;) {
    absl::StatusOr<absl::Span<const Sample>> b = (*r)->Next();
    if (!b.ok()) return b.status();
    if (b->empty()) break;
    for (const Sample& s : *b) {
      last = std::max(last, s.time_ns);
      // The last phase so far runs to the end of the trace.
      int phase = -1;
      for (size_t k = 0; k < phases->bounds.size() && k < 2; ++k) {
        if (s.time_ns >= phases->bounds[k] &&
            (k + 1 == phases->bounds.size() ||
             s.time_ns < phases->bounds[k + 1]))
          phase = static_cast<int>(k);
      }
      if (phase >= 0) seen[phase][s.vaddr / kSimPageBytes] = true;
    }
  }
  if (phases->bounds.size() == 2) phases->bounds.push_back(last);
  for (const auto& [page, unused] : seen[0]) (*set_of)[page] = 0;
  for (const auto& [page, unused] : seen[1]) {
    if (!seen[0].contains(page)) (*set_of)[page] = 1;
  }
  return absl::OkStatus();
}

class HotSetObserver : public SimObserver {
 public:
  static constexpr uint64_t kSeriesStepNs = 500000000;
  HotSetObserver(const Phases& phases,
                 const absl::flat_hash_map<uint64_t, int>& set_of,
                 uint64_t until_ns)
      : phases_(phases), set_of_(set_of), until_ns_(until_ns) {
    for (const auto& [page, set] : set_of) ++set_size_[set];
  }

  void OnStart(const std::vector<std::string>& policies,
               uint64_t start_ns) override {
    state_.assign(policies.size(), PolicyState());
  }
  void OnAccess(size_t policy, uint64_t time_ns, uint64_t vaddr, int node,
                bool fast) override {
    PolicyState& p = state_[policy];
    Tick(p, time_ns);
    auto [it, inserted] = p.fast.try_emplace(vaddr / kSimPageBytes, fast);
    if (inserted && fast) Count(p, vaddr, +1, time_ns);
  }
  void OnMove(size_t policy, uint64_t time_ns, uint64_t vaddr, int from,
              int to) override {
    PolicyState& p = state_[policy];
    Tick(p, time_ns);
    if (time_ns < until_ns_) ++p.moved;
    bool& fast = p.fast[vaddr / kSimPageBytes];
    const bool now_fast = fast_nodes_.contains(to);
    if (now_fast != fast) Count(p, vaddr, now_fast ? +1 : -1, time_ns);
    fast = now_fast;
  }

  void set_fast_nodes(const std::vector<int>& nodes) {
    for (int n : nodes) fast_nodes_[n] = true;
  }
  void Finish(size_t policy) { Tick(state_[policy], UINT64_MAX); }
  // "series_0=F,F,... series_1=..." (the set's share on fast nodes at the
  // phase's start and every 0.5 s after).
  std::string Series(size_t policy) const {
    const PolicyState& p = state_[policy];
    std::string out;
    for (int k = 0; k < 2; ++k) {
      out += k == 0 ? "series_" : " series_";
      out += std::to_string(k) + "=";
      for (size_t i = 0; i < p.series[k].size(); ++i) {
        char v[16];
        std::snprintf(v, sizeof(v), "%s%.2f", i ? "," : "", p.series[k][i]);
        out += v;
      }
    }
    return out;
  }
  std::string Line(size_t policy) const {
    const PolicyState& p = state_[policy];
    char buf[256];
    std::snprintf(buf, sizeof(buf),
                  "t90_0=%.2f end_frac_0=%.3f t90_1=%.2f end_frac_1=%.3f "
                  "moved_pages=%llu set_0=%llu set_1=%llu",
                  p.t90[0], p.end_frac[0], p.t90[1], p.end_frac[1],
                  static_cast<unsigned long long>(p.moved),
                  static_cast<unsigned long long>(set_size_[0]),
                  static_cast<unsigned long long>(set_size_[1]));
    return buf;
  }

 private:
  struct PolicyState {
    absl::flat_hash_map<uint64_t, bool> fast;  // page -> on a fast node
    uint64_t count[2] = {0, 0};                // set pages on fast nodes
    double t90[2] = {-1, -1};
    std::vector<double> series[2];  // the set's share every kSeriesStepNs
    uint64_t next_point[2] = {0, 0};
    double end_frac[2] = {0, 0};
    bool ended[2] = {false, false};
    uint64_t moved = 0;
  };
  double Frac(const PolicyState& p, int k) const {
    return set_size_[k] ? static_cast<double>(p.count[k]) /
                              static_cast<double>(set_size_[k])
                        : 0;
  }
  // Phase ends (and starts already at 90%) up to `now`, before its event;
  // the time series' points up to `now`.
  void Tick(PolicyState& p, uint64_t now) {
    for (int k = 0; k < 2; ++k) {
      if (p.next_point[k] == 0) p.next_point[k] = phases_.bounds[k];
      while (p.next_point[k] <= now &&
             p.next_point[k] < phases_.bounds[k + 1]) {
        p.series[k].push_back(Frac(p, k));
        p.next_point[k] += kSeriesStepNs;
      }
    }
    for (int k = 0; k < 2; ++k) {
      if (p.ended[k] || now < phases_.bounds[k + 1]) continue;
      p.ended[k] = true;
      p.end_frac[k] = Frac(p, k);
    }
    for (int k = 0; k < 2; ++k) Check(p, k, std::max(now, phases_.bounds[k]));
  }
  void Check(PolicyState& p, int k, uint64_t now) {
    if (p.t90[k] >= 0 || p.ended[k] || now < phases_.bounds[k] ||
        now == UINT64_MAX)
      return;
    if (Frac(p, k) >= 0.9)
      p.t90[k] = static_cast<double>(now - phases_.bounds[k]) * 1e-9;
  }
  void Count(PolicyState& p, uint64_t vaddr, int delta, uint64_t now) {
    auto it = set_of_.find(vaddr / kSimPageBytes);
    if (it == set_of_.end()) return;
    p.count[it->second] += delta;
    Check(p, it->second, now);
  }

  const Phases& phases_;
  const absl::flat_hash_map<uint64_t, int>& set_of_;
  const uint64_t until_ns_;
  uint64_t set_size_[2] = {0, 0};
  absl::flat_hash_map<int, bool> fast_nodes_;
  std::vector<PolicyState> state_;
};

int Main(int argc, char** argv) {
  SimulateOptions opt;
  double until_s = -1;
  bool scan_cost = true;
  int64_t forced_pte_ns = -1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "sim_hotset: " << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--policy") {
      opt.policy = value();
    } else if (a == "--source") {
      absl::StatusOr<SimSource> src = ParseSimSource(value());
      if (!src.ok()) {
        std::cerr << "sim_hotset: " << src.status().message() << "\n";
        return 2;
      }
      opt.source = *src;
    } else if (a == "--topology") {
      opt.topology = value();
    } else if (a == "--fast-capacity") {
      absl::StatusOr<uint64_t> b = ParseSize(value());
      if (!b.ok()) {
        std::cerr << "sim_hotset: " << b.status().message() << "\n";
        return 2;
      }
      opt.capacity.fast_bytes = *b;
    } else if (a == "--first-touch-node") {
      if (!absl::SimpleAtoi(value(), &opt.first_touch_node)) return 2;
    } else if (a == "--no-scan-cost") {
      scan_cost = false;
    } else if (a == "--scan-ns-per-pte") {
      if (!absl::SimpleAtoi(value(), &forced_pte_ns)) return 2;
    } else if (a == "--interval-ms") {
      if (!absl::SimpleAtoi(value(), &opt.interval_ms) || opt.interval_ms == 0)
        return 2;
    } else if (a == "--until-s") {
      if (!absl::SimpleAtod(value(), &until_s)) return 2;
    } else if (opt.trace.empty() && a[0] != '-') {
      opt.trace = a;
    } else {
      std::cerr << "sim_hotset: unknown argument " << a
                << " (see the header of sim_hotset.cc)\n";
      return 2;
    }
  }
  if (opt.trace.empty() || opt.policy == "all") {
    std::cerr << "sim_hotset: give a trace and one --policy\n";
    return 2;
  }
  Phases phases;
  absl::flat_hash_map<uint64_t, int> set_of;
  uint64_t pte_ns = 0;
  if (absl::Status s = ReadPhases(opt.trace, &phases, &set_of, &pte_ns);
      !s.ok()) {
    std::cerr << "sim_hotset: " << s.message() << "\n";
    return 1;
  }
  // The guest's measured PTE cost drives the tpp scanner's 3% cap, unless
  // --no-scan-cost.
  if (scan_cost) opt.scan_ns_per_pte = pte_ns;
  if (forced_pte_ns >= 0)
    opt.scan_ns_per_pte = static_cast<uint64_t>(forced_pte_ns);
  const uint64_t until_ns =
      until_s < 0 ? phases.bounds[2]
                  : phases.bounds[0] + static_cast<uint64_t>(until_s * 1e9);
  HotSetObserver observer(phases, set_of, until_ns);
  absl::StatusOr<Topology> topo = LoadTopology(opt.topology);
  if (!topo.ok()) {
    std::cerr << "sim_hotset: " << topo.status().message() << "\n";
    return 2;
  }
  std::vector<int> fast;  // tier rank 0, as SimulatedMemory::is_fast()
  for (const NodeInfo& n : topo->nodes)
    if (n.tier.has_value() && *n.tier == 0) fast.push_back(n.id);
  observer.set_fast_nodes(fast);
  opt.observer = &observer;
  absl::StatusOr<SimulateResult> r = SimulateTrace(opt);
  if (!r.ok()) {
    std::cerr << "sim_hotset: " << r.status().message() << "\n";
    return 1;
  }
  const int index = r->sim->IndexOf(opt.policy);
  if (index < 0) return 1;
  observer.Finish(static_cast<size_t>(index));
  std::string details;
  for (const auto& [k, v] : r->sim->policies()[index]->Details())
    details += " " + k + "=" + std::to_string(v);
  std::printf("SIM-HOTSET policy=%s source=%s %s pte_ns=%llu%s\n",
              opt.policy.c_str(), SimSourceName(opt.source),
              observer.Line(static_cast<size_t>(index)).c_str(),
              static_cast<unsigned long long>(opt.scan_ns_per_pte),
              details.c_str());
  std::printf(
      "SIM-HOTSET-SERIES policy=%s step_ms=%llu %s\n", opt.policy.c_str(),
      static_cast<unsigned long long>(HotSetObserver::kSeriesStepNs / 1000000),
      observer.Series(static_cast<size_t>(index)).c_str());
  return 0;
}

}  // namespace
}  // namespace hotpage

int main(int argc, char** argv) { return hotpage::Main(argc, argv); }
