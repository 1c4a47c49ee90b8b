#include "tools/simulate/svg/sim_svg.h"

#include <algorithm>

#include "tools/simulate/svg/svg_report.h"

namespace hotpage {

namespace {
simulate::SvgReportBuilderOptions BuilderOptions(uint64_t interval_ms) {
  simulate::SvgReportBuilderOptions o;
  o.start_s = 0;
  o.interval_s = static_cast<double>(std::max<uint64_t>(interval_ms, 1)) / 1e3;
  return o;
}
}  // namespace

SvgObserver::SvgObserver(const Topology& topology, uint64_t interval_ms)
    : fast_nodes_(topology.FastNodes()),
      interval_s_(static_cast<double>(std::max<uint64_t>(interval_ms, 1)) /
                  1e3),
      builder_(BuilderOptions(interval_ms)) {}

bool SvgObserver::IsFast(int node) const {
  return std::find(fast_nodes_.begin(), fast_nodes_.end(), node) !=
         fast_nodes_.end();
}

void SvgObserver::OnStart(const std::vector<std::string>& policies,
                          uint64_t start_ns) {
  start_ns_ = start_ns;
  subject_ = 0;
  for (size_t i = 0; i < policies.size(); ++i) {
    if (policies[i] == "hotpage") subject_ = i;
  }
  if (subject_ == 0) {
    // No hotpage: the first policy that places pages (not the oracle).
    for (size_t i = 0; i < policies.size(); ++i) {
      if (policies[i] != "oracle") {
        subject_ = i;
        break;
      }
    }
  }
  subject_name_ = policies.empty() ? "" : policies[subject_];
  series_.clear();
  for (const std::string& p : policies)
    series_.push_back(builder_.AddPolicy(p, p == "oracle"));
}

void SvgObserver::OnAccess(size_t policy, uint64_t time_ns, uint64_t vaddr,
                           int node, bool fast) {
  if (policy != subject_) return;
  const double t = Seconds(time_ns);
  builder_.AddAccess(t, vaddr);
  const uint64_t page = vaddr & ~uint64_t{4095};
  if (placed_.insert(page).second) {
    builder_.AddPage(t, page,
                     fast ? simulate::Tier::kFast : simulate::Tier::kSlow);
  }
}

void SvgObserver::OnMove(size_t policy, uint64_t time_ns, uint64_t vaddr,
                         int from, int to) {
  if (policy != subject_) return;
  const uint64_t page = vaddr & ~uint64_t{4095};
  if (!placed_.contains(page) || IsFast(from) == IsFast(to))
    return;  // lateral moves: same tier
  builder_.MovePage(Seconds(time_ns), page,
                    IsFast(to) ? simulate::Tier::kFast : simulate::Tier::kSlow);
}

void SvgObserver::OnIntervalEnd(uint64_t index, uint64_t start_ns,
                                uint64_t end_ns,
                                const std::vector<PolicyTally>& tallies) {
  const double mid = (Seconds(start_ns) + Seconds(end_ns)) / 2;
  for (size_t i = 0; i < tallies.size() && i < series_.size(); ++i) {
    const PolicyTally& t = tallies[i];
    if (t.samples == 0) continue;
    builder_.AddPolicyAccess(series_[i], mid, true, t.fast_samples);
    builder_.AddPolicyAccess(series_[i], mid, false,
                             t.samples - t.fast_samples);
  }
}

absl::Status SvgObserver::Write(const std::string& path,
                                const std::string& title,
                                const std::string& subtitle, uint64_t end_ns) {
  simulate::SvgReport report =
      builder_.Finish(title, subtitle, subject_name_, Seconds(end_ns));
  return simulate::WriteSvgFile(report, path);
}

}  // namespace hotpage
