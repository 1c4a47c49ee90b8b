// The live AttachSources (attach_loop.h): the perf sampler (PEBS, IBS, page
// faults, hint faults as page faults; sampler/sampler.h) and DAMON
// (sampler/damon_source.h). Each wraps an already started source and only
// adapts Poll and Stop to the loop's contract; starting them, with the
// choices and messages that go with it, stays with the caller.

#ifndef HOTPAGE_TOOLS_ATTACH_LIVE_SOURCES_H_
#define HOTPAGE_TOOLS_ATTACH_LIVE_SOURCES_H_

#include "absl/status/status.h"
#include "sampler/damon/damon_source.h"
#include "sampler/perf/sampler.h"
#include "tools/attach/attach_loop.h"

namespace hotpage {

// Polls the rings for up to 50 ms; Stop() disables the events. Every Poll
// error ends the loop as an error (never as "the target exited").
class SamplerAttachSource : public AttachSource {
 public:
  explicit SamplerAttachSource(Sampler* sampler) : sampler_(sampler) {}
  absl::Status Poll(const SampleSink& sink) override;
  void Stop() override;
  std::optional<PerfSourceStats> PerfStats() const override;

 private:
  Sampler* const sampler_;
};

// One DAMON aggregation per Poll; NotFound once the target exited and DAMON
// stopped. Stop() tears the kdamond down.
class DamonAttachSource : public AttachSource {
 public:
  explicit DamonAttachSource(DamonSource* damon) : damon_(damon) {}
  absl::Status Poll(const SampleSink& sink) override;
  void Stop() override;

 private:
  DamonSource* const damon_;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_ATTACH_LIVE_SOURCES_H_
