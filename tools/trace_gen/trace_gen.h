// The workload generator behind tests/traces/: deterministic, PEBS-like
// sample traces of memory-access patterns that tiered-memory placement
// has to handle (a shifting hot set, a Zipf key-value store, a scan that
// turns cold, threads on two CPU packages, a stream that saturates the fast
// tier's bandwidth).
//
// Model. A workload has T threads; thread i runs on one CPU (Workload::Cpu)
// and makes "qualifying" accesses (loads of 30+ cycles, or stores: what the
// PEBS events count) at GenOptions::access_rate per second. Every
// sample_period-th one is sampled, so each thread's samples are a stream
// with a mean gap of period / rate, jittered uniformly by +-50% (a real
// access rate is never constant). A sampled access is drawn from the
// workload's access mix at that moment (Workload::Draw): only the sampled
// accesses are generated, which is what makes tens of seconds of a
// 20M-access/s workload take a fraction of a second. Its level, latency and
// data source follow pebs_model.h.
//
// Time. Thread streams are merged by time (ties by thread index), as a
// perf session sorts its per-CPU rings, so time_ns never decreases, as in
// a trace that `hotpage record` writes (it holds drained samples in a
// SampleReorderBuffer until nothing older can still arrive). Times are
// CLOCK_MONOTONIC-like: GenOptions::start_clock_ns plus the workload time.
//
// Determinism: every random choice comes from prng.h streams derived from
// the seed (one per thread, one for the layout), and the only floating
// point is IEEE-exact or from det_math.h, so the same options give the
// same samples, and the same bytes through TraceWriter, on any machine.
//
// Ground truth: each workload also describes itself (GroundTruth): its
// address ranges, its phases and, per phase, which ranges are hot and what
// share of all samples they receive in expectation. Tests check the
// generated samples against it; the simulator's tests can too (the .truth
// files next to the traces).

#ifndef HOTPAGE_TOOLS_TRACE_GEN_TRACE_GEN_H_
#define HOTPAGE_TOOLS_TRACE_GEN_TRACE_GEN_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sampler/sample.h"
#include "sampler/trace/trace_writer.h"
#include "tools/trace_gen/pebs_model.h"
#include "tools/trace_gen/prng.h"

namespace hotpage {
namespace trace_gen {

inline constexpr uint64_t kPageBytes = 4096;

// Options every workload shares.
struct GenOptions {
  uint64_t seed = 1;
  double duration_s = 60;
  // Qualifying accesses per thread between two samples (the PEBS period).
  uint64_t sample_period = 8000;
  // Qualifying accesses per second per thread.
  double access_rate = 20e6;
  uint32_t pid = 4242;
  // Fraction of samples that are stores (needs `hotpage record --stores`).
  double write_share = 0;
  // CLOCK_MONOTONIC at the start: 1000 s of uptime.
  uint64_t start_clock_ns = 1'000'000'000'000ull;
  // CLOCK_REALTIME at the start: 2026-01-01T00:00:00Z.
  uint64_t start_realtime_ns = 1'767'225'600'000'000'000ull;
};

struct Range {
  uint64_t start = 0;  // first byte
  uint64_t end = 0;    // one past the last byte
  bool Contains(uint64_t a) const { return a >= start && a < end; }
};

struct HotRange {
  Range range;
  double share = 0;   // expected fraction of the phase's samples in range
  std::string label;  // "hot set", "thread 2 (cpu 1, package 1)", ...
};

struct Phase {
  uint64_t start_ns = 0;  // time_ns of the first instant of the phase
  uint64_t end_ns = 0;    // ... one past its last
  std::vector<HotRange> hot;
};

struct NamedRange {
  std::string name;
  Range range;
};

struct GroundTruth {
  std::vector<NamedRange> regions;  // everything the workload touches
  std::vector<Phase> phases;
};

// One sampled access.
struct Access {
  uint64_t vaddr = 0;
  AccessClass cls = AccessClass::kCold;
  bool store = false;
};

class Workload {
 public:
  virtual ~Workload() = default;
  virtual uint32_t threads() const { return 1; }
  virtual uint32_t Cpu(uint32_t thread) const { return thread; }
  // Thread ids: the main thread is the process (tid == pid); worker
  // threads get pid + 1 + i unless a workload says otherwise.
  virtual uint32_t Tid(uint32_t pid, uint32_t thread) const {
    return threads() == 1 ? pid : pid + 1 + thread;
  }
  // The access that `thread` makes `rel_ns` after the start. Must use only
  // `rng` for randomness (determinism).
  virtual Access Draw(uint32_t thread, uint64_t rel_ns, Rng& rng) const = 0;
  // Phases in workload time (start_ns relative to the start; GenerateTrace
  // shifts them to time_ns).
  virtual GroundTruth Truth() const = 0;
};

// --- the workloads ---------------------------------------------------------
//
// Make* check their options (and GenOptions) and return InvalidArgument
// naming the option when one is out of range.

// GUPS with a shifting hot set (HeMem's benchmark shape): a table of
// `pages`; a contiguous hot set of hot_fraction of them receives hot_share
// of the accesses, the rest go uniformly to the other pages; every
// shift_every_s the hot set moves to another hot-set-sized slot of the
// table (chosen by the seed, never the same slot twice in a row).
struct GupsOptions {
  uint64_t pages = 8192;
  double hot_fraction = 0.1;
  double hot_share = 0.9;
  double shift_every_s = 20;  // 0: never
  uint32_t threads = 1;
};
absl::StatusOr<std::unique_ptr<Workload>> MakeGups(const GupsOptions& o,
                                                   const GenOptions& g);

// A key-value store: `keys` keys with Zipf(s) popularity (rank = key); each
// access is either a lookup of the key's bucket in a hash index (8 bytes per
// bucket, buckets = next power of two, key hashed to bucket) or a read of
// its value (value_bytes in a slab; keys are shuffled over the slots, so
// hot values are scattered over the pages, not contiguous). write_share of
// the samples are stores into values (SETs).
struct ZipfOptions {
  uint64_t keys = 200000;
  uint32_t value_bytes = 256;  // power of two, 8..4096
  double s = 0.99;
  double index_share = 0.3;  // of loads: hash-index bucket reads
  uint32_t threads = 1;
};
absl::StatusOr<std::unique_ptr<Workload>> MakeZipf(const ZipfOptions& o,
                                                   const GenOptions& g);

// A scan that turns cold: until cold_at_s, focus_share of the accesses
// stream sequentially through a scan region (one pass every pass_s); after
// it, the scan stops and focus_share goes uniformly to a separate working
// set. The rest is uniform over both regions in both phases.
struct ScanOptions {
  uint64_t scan_pages = 8192;
  uint64_t ws_pages = 2048;
  double cold_at_s = 15;
  double pass_s = 2;
  double focus_share = 0.9;
};
absl::StatusOr<std::unique_ptr<Workload>> MakeScan(const ScanOptions& o,
                                                   const GenOptions& g);

// Threads on two CPU packages: `threads` (even) threads, the first half on
// package 0, the second half on package 1. CPU numbering: package p owns
// CPUs p * cpus_per_package .. (p + 1) * cpus_per_package - 1, and thread i
// of a package runs on its package's CPU i % cpus_per_package. With the
// default cpus_per_package = 1 that is cpu 0 = package 0 = node 0 and
// cpu 1 = package 1 = node 1, as in the 2pkg+cxl guest topology
// (tests/vm/topologies/2pkg+cxl.qemu). Each thread uses a private arena
// (private_share of its accesses, uniform over private_pages), a region
// shared by all threads (shared_share) and a large cold heap (the rest).
struct PackagesOptions {
  uint32_t threads = 4;
  uint32_t cpus_per_package = 1;
  uint64_t private_pages = 512;
  uint64_t shared_pages = 1024;
  uint64_t cold_pages = 8192;
  double private_share = 0.6;
  double shared_share = 0.3;
};
absl::StatusOr<std::unique_ptr<Workload>> MakePackages(const PackagesOptions& o,
                                                       const GenOptions& g);

// Bandwidth decides (Colloid, SOSP'24, section 2): a high-rate streaming
// component over a small range (stream_pages, sequential, one pass every
// pass_s; stream_share of the accesses) beside a latency-sensitive hot set
// (hot_pages, uniform; hot_share) and a cold heap (cold_pages, the rest).
// Every sampled access stands for sample_period cache lines, so the demand
// is access_rate x 64 B: at 3.2e8 accesses/s (generate.sh) 20.48 GB/s,
// the peak of the simulator's DRAM node; the stream (15.4 GB/s) and the
// hot set (4.1 GB/s), the pages every hotness ranking puts first, load it
// to 95% when they all sit on the fast tier.
struct StreamMixOptions {
  uint64_t stream_pages = 512;
  uint64_t hot_pages = 1024;
  uint64_t cold_pages = 8192;
  // About the time the stream's bandwidth takes to cover its range
  // (2 MiB at 15.4 GB/s: 0.14 ms), rounded up so that consecutive samples
  // (0.3 ms apart) still walk forward; a pass much longer than the
  // policies' 500 ms - 1 s periods would make the stream a moving hot
  // spot instead of a steady bandwidth hog.
  double pass_s = 0.001;
  double stream_share = 0.75;
  double hot_share = 0.2;
  // A second stream (none when stream2_pages is 0): from stream2_from_s
  // on, stream2_share of the accesses (taken from the first stream's
  // stream_share, so the demand stays the same and the streamed set grows)
  // walk sequentially through stream2_pages of their own, one pass every
  // stream2_pass_s. Two phases in the truth: before and after.
  uint64_t stream2_pages = 0;
  double stream2_pass_s = 0.004;
  double stream2_share = 0;
  double stream2_from_s = 0;
};
absl::StatusOr<std::unique_ptr<Workload>> MakeStreamMix(
    const StreamMixOptions& o, const GenOptions& g);

// --- generation ------------------------------------------------------------

struct GenStats {
  uint64_t samples = 0;
  uint64_t stores = 0;
  uint64_t first_ns = 0;
  uint64_t last_ns = 0;
  uint64_t distinct_pages = 0;  // filled in by GenerateTrace only
};

// Calls `sink` with every sample in time order.
template <typename Sink>
GenStats GenerateSamples(const Workload& w, const GenOptions& g, Sink&& sink);

// Writes the samples to `writer` and zero lost/throttled counters for every
// CPU used (as the recorder writes its counters), then closes it.
absl::StatusOr<GenStats> GenerateTrace(const Workload& w, const GenOptions& g,
                                       TraceWriter* writer);

// The header of a generated trace: source pebs-load, period, start times,
// an event_config that names the modelled events and `command` (how the
// trace was made), and `topology_json` (may be empty).
TraceHeader GeneratedHeader(const GenOptions& g, const std::string& command,
                            const std::string& topology_json);

// GroundTruth with phases shifted to time_ns, as text:
//   # comment lines
//   command <command>
//   region <name> 0x<start> 0x<end>
//   phase <k> <start_ns> <end_ns>
//   hot 0x<start> 0x<end> <share> <label>      (belongs to the last phase)
std::string FormatTruth(const GroundTruth& truth, const GenOptions& g,
                        const std::string& command);

// --- implementation of the template ---------------------------------------

namespace internal {
uint64_t MeanGapNs(const GenOptions& g);
uint64_t DurationNs(const GenOptions& g);
}  // namespace internal

template <typename Sink>
GenStats GenerateSamples(const Workload& w, const GenOptions& g, Sink&& sink) {
  struct Stream {
    uint64_t next_ns;
    Rng rng;
  };
  const uint32_t n = w.threads();
  const uint64_t gap = internal::MeanGapNs(g);
  const uint64_t end = internal::DurationNs(g);
  std::vector<Stream> streams;
  streams.reserve(n);
  for (uint32_t t = 0; t < n; ++t) {
    Rng rng(DeriveSeed(g.seed, t));
    const uint64_t first = rng.Below(gap);  // random phase of each stream
    streams.push_back({first, rng});
  }
  GenStats st;
  Sample s;
  while (true) {
    // A linear scan for the earliest stream: n is small (threads), and it
    // breaks ties by thread index.
    uint32_t best = 0;
    for (uint32_t t = 1; t < n; ++t) {
      if (streams[t].next_ns < streams[best].next_ns) best = t;
    }
    Stream& str = streams[best];
    if (str.next_ns >= end) break;
    const Access a = w.Draw(best, str.next_ns, str.rng);
    s = Sample();
    FillPebsSample(a.vaddr, a.cls, a.store, str.rng, &s);
    s.time_ns = g.start_clock_ns + str.next_ns;
    s.pid = g.pid;
    s.tid = w.Tid(g.pid, best);
    s.cpu = w.Cpu(best);
    s.period = g.sample_period;
    if (st.samples == 0) st.first_ns = s.time_ns;
    st.last_ns = s.time_ns;
    ++st.samples;
    st.stores += a.store ? 1 : 0;
    sink(s);
    // Jitter: gap * [512, 1536] / 1024, mean `gap`.
    str.next_ns += gap * (512 + str.rng.Below(1025)) / 1024;
  }
  return st;
}

}  // namespace trace_gen
}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_TRACE_GEN_TRACE_GEN_H_
