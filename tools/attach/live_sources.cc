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

absl::Status DamonAttachSource::Poll(const SampleSink& sink) {
  return damon_->Poll(sink).status();
}

void DamonAttachSource::Stop() { (void)damon_->Stop(); }

}  // namespace hotpage
