#include "tools/simulate/sim_fault_source.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "sampler/write_fault_rearm.h"
#include "tools/simulate/sim_baselines.h"

namespace hotpage {
namespace {

struct PageRef {
  uint64_t vaddr = 0;
  uint64_t generation = 0;  // writefault: the re-arm it last faulted in
};

class HintFaultSource : public SimFaultSource {
 public:
  HintFaultSource(const SimulatedMemory& memory,
                  const NumaScannerOptions& options)
      : scanner_(memory, options),
        first_touches_fault_(!options.present_at_start) {}

  void Start(uint64_t start_ns) override { scanner_.Start(start_ns); }
  uint64_t next_event_ns() const override { return scanner_.next_scan_ns(); }
  void Advance(uint64_t now_ns) override { scanner_.Advance(now_ns); }
  bool Fault(const Sample& s, int node) override {
    const auto [i, added] = pages_.FindOrAdd(s.vaddr);
    if (added) scanner_.AddPage(s.vaddr);
    if (!scanner_.Access(i, node)) {
      // A first touch (the header): the page-fault event counts it too.
      if (!added || !first_touches_fault_) return false;
      ++first_touches_;
      return true;
    }
    ++faults_;
    return true;
  }
  void AppendDetails(
      std::vector<std::pair<std::string, uint64_t>>* out) const override {
    out->insert(out->end(),
                {{"source_faults", faults_},
                 {"first_touch_faults", first_touches_},
                 {"scans", scanner_.scans()},
                 {"pte_updates", scanner_.pte_updates()},
                 {"scan_period_ms", scanner_.scan_period_ns() / 1000000},
                 {"scan_cost_ms", scanner_.scan_cost_ns() / 1000000}});
  }

 private:
  SampledPages<PageRef> pages_;
  NumaScanner scanner_;
  const bool first_touches_fault_;
  uint64_t faults_ = 0;
  uint64_t first_touches_ = 0;
};

// The re-arm's clear_refs: a new generation; a page whose last fault was
// in an older one is write-protected again.
class GenerationClearRefs : public ClearRefsFile {
 public:
  explicit GenerationClearRefs(uint64_t* generation)
      : generation_(generation) {}
  int ClearSoftDirty() override {
    ++*generation_;
    return 0;
  }

 private:
  uint64_t* generation_;
};

class WriteFaultSource : public SimFaultSource {
 public:
  WriteFaultSource() {
    WriteFaultRearmOptions o;
    o.clock = [this] { return now_ns_; };
    rearm_ = std::make_unique<WriteFaultRearm>(
        std::make_unique<GenerationClearRefs>(&generation_), o);
  }

  void Start(uint64_t start_ns) override { now_ns_ = start_ns; }
  bool Fault(const Sample& s, int node) override {
    // Before the first re-arm nothing is write-protected (attach re-arms
    // at its first poll); a page never written since is (generation 0).
    if (!(s.flags & kSampleStore) || generation_ == 0) return false;
    PageRef& p = pages_[pages_.FindOrAdd(s.vaddr).first];
    if (p.generation == generation_) return false;
    p.generation = generation_;
    ++faults_;
    return true;
  }
  void Poll(uint64_t now_ns, uint64_t faults_total) override {
    now_ns_ = now_ns;
    // GenerationClearRefs never fails: the status is always OK.
    (void)rearm_->MaybeRearm(now_ns, faults_total);
  }
  void AppendDetails(
      std::vector<std::pair<std::string, uint64_t>>* out) const override {
    out->insert(out->end(),
                {{"source_faults", faults_},
                 {"rearms", rearm_->stats().rearms},
                 {"rearm_interval_ms", rearm_->stats().interval_ns / 1000000}});
  }

 private:
  uint64_t now_ns_ = 0;
  uint64_t generation_ = 0;
  std::unique_ptr<WriteFaultRearm> rearm_;
  SampledPages<PageRef> pages_;
  uint64_t faults_ = 0;
};

}  // namespace

absl::StatusOr<SimSource> ParseSimSource(absl::string_view name) {
  if (name == "trace") return SimSource::kTrace;
  if (name == "hintfault") return SimSource::kHintFault;
  if (name == "writefault") return SimSource::kWriteFault;
  return absl::InvalidArgumentError(
      absl::StrCat("--source '", name,
                   "': one of trace (every sample), hintfault (the NUMA "
                   "scanner's hint faults), writefault (write faults after "
                   "soft-dirty re-arms)"));
}

const char* SimSourceName(SimSource source) {
  switch (source) {
    case SimSource::kTrace:
      return "trace";
    case SimSource::kHintFault:
      return "hintfault";
    case SimSource::kWriteFault:
      return "writefault";
  }
  return "trace";
}

const char* AttachSourceName(SimSource source) {
  switch (source) {
    case SimSource::kTrace:
      return "trace";
    case SimSource::kHintFault:
      return "hintfault";
    case SimSource::kWriteFault:
      return "pagefault";
  }
  return "trace";
}

std::unique_ptr<SimFaultSource> SimFaultSource::Create(
    SimSource source, const SimulatedMemory& memory,
    const SimFaultSourceOptions& options) {
  switch (source) {
    case SimSource::kTrace:
      return nullptr;
    case SimSource::kHintFault:
      return std::make_unique<HintFaultSource>(memory, options.scanner);
    case SimSource::kWriteFault:
      return std::make_unique<WriteFaultSource>();
  }
  return nullptr;
}

Sample FaultSample(const Sample& access) {
  Sample f;
  f.time_ns = access.time_ns;
  f.vaddr = access.vaddr;
  f.period = 1;
  f.pid = access.pid;
  f.tid = access.tid;
  f.cpu = access.cpu;
  f.source = SampleSource::kPageFault;
  f.flags = access.flags & kSampleStore;
  return f;
}

}  // namespace hotpage
