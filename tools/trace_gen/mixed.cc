#include "tools/trace_gen/mixed.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "absl/status/statusor.h"
#include "sampler/trace/trace_format.h"
#include "sampler/trace/trace_writer.h"
#include "tools/trace_gen/prng.h"

namespace hotpage {
namespace trace_gen {
namespace {

// The header's event_config. It names the file the generator lived in when
// tools/simulate/testdata/mixed.hpt was made; kept so that the trace
// regenerates byte for byte.
constexpr char kMixedEventConfig[] = "synthetic (tools/simulate/sim_testing.h)";

// One SplitMix64 stream (prng.h) with the helpers the mixed workload draws
// with.
class MixedRng {
 public:
  explicit MixedRng(uint64_t seed) : s_(seed) {}
  uint64_t Next() { return SplitMix64(&s_); }
  // Uniform in [0, 1) from the top 53 bits.
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  uint64_t Below(uint64_t n) { return n ? Next() % n : 0; }

 private:
  uint64_t s_;
};

}  // namespace

std::vector<Sample> GenerateMixed(const MixedOptions& w) {
  MixedRng rng(w.seed);
  const uint64_t n = std::max<uint64_t>(w.pages, 4);
  // Zipf(0.99) CDF over ranks, ranks mapped to pages by a shuffle.
  std::vector<double> cdf(n);
  double sum = 0;
  for (uint64_t r = 0; r < n; ++r) {
    sum += 1.0 / std::pow(static_cast<double>(r + 1), 0.99);
    cdf[r] = sum;
  }
  std::vector<uint64_t> page_of_rank(n);
  for (uint64_t i = 0; i < n; ++i) page_of_rank[i] = i;
  for (uint64_t i = n - 1; i > 0; --i)
    std::swap(page_of_rank[i], page_of_rank[rng.Below(i + 1)]);
  const uint64_t total = w.samples_per_sec * w.duration_ms / 1000;
  const uint64_t step_ns =
      w.samples_per_sec ? 1000000000 / w.samples_per_sec : 1;
  const uint64_t scan_first = n - n / 4;
  uint64_t scan_next = scan_first;
  std::vector<Sample> out;
  out.reserve(total);
  for (uint64_t i = 0; i < total; ++i) {
    const uint64_t t_ns = i * step_ns;
    const uint64_t t_ms = t_ns / 1000000;
    const double u = rng.Unit();
    uint64_t page;
    if (u < w.hot_fraction) {
      const uint64_t phase = w.shift_ms ? t_ms / w.shift_ms : 0;
      // Each phase's hot set starts a third of the space further on.
      const uint64_t first = (phase * (n / 3 + 7)) % n;
      page = (first + rng.Below(std::min(w.hot_pages, n))) % n;
    } else if (u >= w.hot_fraction + w.zipf_fraction &&
               t_ms < w.scan_until_ms) {
      page = scan_next;
      scan_next = scan_next + 1 < n ? scan_next + 1 : scan_first;
    } else {
      const double x = rng.Unit() * sum;
      const uint64_t r =
          std::lower_bound(cdf.begin(), cdf.end(), x) - cdf.begin();
      page = page_of_rank[std::min(r, n - 1)];
    }
    Sample s;
    s.time_ns = w.start_ns + t_ns;
    s.vaddr = w.base_vaddr + page * 4096 + (rng.Next() & 0xff8);
    s.pid = w.pid;
    s.cpu = static_cast<uint32_t>(i & 1);
    s.tid = w.pid + 1 + s.cpu;
    s.period = 1000;
    s.weight = 100;
    s.source = SampleSource::kPebsLoad;
    out.push_back(s);
  }
  return out;
}

absl::Status WriteMixedTrace(const std::string& path,
                             absl::Span<const Sample> samples) {
  TraceHeader header;
  header.source = SampleSourceName(SampleSource::kPebsLoad);
  header.event_config = kMixedEventConfig;
  header.sample_period = 1000;
  absl::StatusOr<std::unique_ptr<TraceWriter>> w =
      TraceWriter::Create(path, header);
  if (!w.ok()) return w.status();
  if (absl::Status s = (*w)->Append(samples); !s.ok()) return s;
  return (*w)->Close();
}

}  // namespace trace_gen
}  // namespace hotpage
