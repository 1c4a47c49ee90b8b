// SvgObserver: feeds the SVG picture (svg_report_builder.h) from a running
// simulation (SimObserver), so `hotpage simulate --svg` never holds the
// trace: the heatmap counts the subject policy's accesses (every sample,
// once), its tiers come from first-touch placement and its moves, and the
// chart has every policy's fast-tier share per interval (the oracle's
// included, dashed). Memory: the builder's bound plus one entry per page
// of the footprint (which pages were placed already).

#ifndef HOTPAGE_TOOLS_SIMULATE_SVG_SIM_SVG_H_
#define HOTPAGE_TOOLS_SIMULATE_SVG_SIM_SVG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "policy/topology.h"
#include "tools/simulate/sim_policy.h"
#include "tools/simulate/svg/svg_report_builder.h"

namespace hotpage {

class SvgObserver : public SimObserver {
 public:
  // `topology`: the simulated machine (its fastest tier is "fast");
  // `interval_ms`: the report's interval. The picture's subject is the
  // "hotpage" policy when it runs, else the first policy.
  SvgObserver(const Topology& topology, uint64_t interval_ms);

  void OnStart(const std::vector<std::string>& policies,
               uint64_t start_ns) override;
  void OnAccess(size_t policy, uint64_t time_ns, uint64_t vaddr, int node,
                bool fast) override;
  void OnMove(size_t policy, uint64_t time_ns, uint64_t vaddr, int from,
              int to) override;
  void OnIntervalEnd(uint64_t index, uint64_t start_ns, uint64_t end_ns,
                     const std::vector<PolicyTally>& tallies) override;

  // Renders the picture to `path` (atomically). `end_ns`: the last sample.
  absl::Status Write(const std::string& path, const std::string& title,
                     const std::string& subtitle, uint64_t end_ns);
  const std::string& subject() const { return subject_name_; }

 private:
  double Seconds(uint64_t t) const {
    return t >= start_ns_ ? static_cast<double>(t - start_ns_) / 1e9 : 0.0;
  }
  bool IsFast(int node) const;

  std::vector<int> fast_nodes_;
  double interval_s_;
  uint64_t start_ns_ = 0;
  size_t subject_ = 0;
  std::string subject_name_;
  std::vector<int> series_;  // builder policy id per simulation policy
  simulate::SvgReportBuilder builder_;
  absl::flat_hash_set<uint64_t> placed_;  // subject's pages already placed
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_SIMULATE_SVG_SIM_SVG_H_
