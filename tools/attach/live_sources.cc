#include "tools/attach/live_sources.h"

#include "absl/status/statusor.h"

namespace hotpage {

absl::Status SamplerAttachSource::Poll(const SampleSink& sink) {
  absl::StatusOr<size_t> n = sampler_->Poll(50, sink);
  if (n.ok()) return absl::OkStatus();
  // The loop reads NotFound as "the target exited"; a sampler error is
  // always a failure.
  if (absl::IsNotFound(n.status())) {
    return absl::UnknownError(n.status().message());
  }
  return n.status();
}

void SamplerAttachSource::Stop() { (void)sampler_->Disable(); }

std::optional<PerfSourceStats> SamplerAttachSource::PerfStats() const {
  const RingCounters t = sampler_->Totals();
  PerfSourceStats p;
  p.throttle = t.throttle;
  p.unthrottle = t.unthrottle;
  p.lost = t.lost;
  p.lost_samples = t.lost_samples;
  p.period_errors = sampler_->period_errors();
  p.period_reopens = sampler_->reopens();
  p.period_reopen_failures = sampler_->reopen_failures();
  return p;
}

absl::Status DamonAttachSource::Poll(const SampleSink& sink) {
  return damon_->Poll(sink).status();
}

void DamonAttachSource::Stop() { (void)damon_->Stop(); }

}  // namespace hotpage
