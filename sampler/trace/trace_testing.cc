#include "sampler/trace/trace_testing.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "sampler/trace/trace_reader.h"
#include "tools/base/status_macros.h"

namespace hotpage {
namespace testing_internal {
namespace {

constexpr uint64_t DataSrc(uint64_t op, uint64_t lvl, uint64_t snoop,
                           uint64_t tlb, uint64_t lvl_num, uint64_t remote) {
  return op << PERF_MEM_OP_SHIFT | lvl << PERF_MEM_LVL_SHIFT |
         snoop << PERF_MEM_SNOOP_SHIFT | tlb << PERF_MEM_TLB_SHIFT |
         lvl_num << PERF_MEM_LVLNUM_SHIFT | remote << PERF_MEM_REMOTE_SHIFT;
}

// perf_mem_data_src values as Intel PEBS reports them on Linux 6.x.
constexpr uint64_t kDataSrcs[] = {
    DataSrc(PERF_MEM_OP_LOAD, PERF_MEM_LVL_HIT | PERF_MEM_LVL_L1,
            PERF_MEM_SNOOP_NONE, PERF_MEM_TLB_HIT | PERF_MEM_TLB_L1,
            PERF_MEM_LVLNUM_L1, 0),
    DataSrc(PERF_MEM_OP_LOAD, PERF_MEM_LVL_HIT | PERF_MEM_LVL_L1,
            PERF_MEM_SNOOP_NONE, PERF_MEM_TLB_HIT | PERF_MEM_TLB_L1,
            PERF_MEM_LVLNUM_L1, 0),
    DataSrc(PERF_MEM_OP_LOAD, PERF_MEM_LVL_HIT | PERF_MEM_LVL_L2,
            PERF_MEM_SNOOP_NONE, PERF_MEM_TLB_HIT | PERF_MEM_TLB_L1,
            PERF_MEM_LVLNUM_L2, 0),
    DataSrc(PERF_MEM_OP_LOAD, PERF_MEM_LVL_HIT | PERF_MEM_LVL_L3,
            PERF_MEM_SNOOP_HIT, PERF_MEM_TLB_HIT | PERF_MEM_TLB_L2,
            PERF_MEM_LVLNUM_L3, 0),
    DataSrc(PERF_MEM_OP_LOAD, PERF_MEM_LVL_HIT | PERF_MEM_LVL_LFB,
            PERF_MEM_SNOOP_NONE, PERF_MEM_TLB_HIT | PERF_MEM_TLB_L1,
            PERF_MEM_LVLNUM_LFB, 0),
    DataSrc(PERF_MEM_OP_LOAD, PERF_MEM_LVL_HIT | PERF_MEM_LVL_LOC_RAM,
            PERF_MEM_SNOOP_MISS, PERF_MEM_TLB_MISS | PERF_MEM_TLB_WK,
            PERF_MEM_LVLNUM_RAM, 0),
    DataSrc(PERF_MEM_OP_LOAD, PERF_MEM_LVL_HIT | PERF_MEM_LVL_REM_RAM1,
            PERF_MEM_SNOOP_HIT, PERF_MEM_TLB_HIT | PERF_MEM_TLB_L2,
            PERF_MEM_LVLNUM_RAM, 1),
    DataSrc(PERF_MEM_OP_STORE, PERF_MEM_LVL_HIT | PERF_MEM_LVL_L1,
            PERF_MEM_SNOOP_NA, PERF_MEM_TLB_HIT | PERF_MEM_TLB_L1,
            PERF_MEM_LVLNUM_L1, 0),
};
constexpr uint64_t kRegionBase[] = {0x55d4c0000000ull, 0x7f3a00000000ull,
                                    0x7ffc12340000ull};
constexpr uint64_t kRegionPages[] = {1 << 18, 1 << 21,
                                     16};  // 1 GiB, 8 GiB, 64 KiB

}  // namespace

SyntheticSamples::SyntheticSamples(uint64_t seed) : rng_(seed) {}

Sample SyntheticSamples::Next() {
  Sample s;
  const uint64_t r = rng_();
  // Merged per-CPU rings: mostly rising, 1 in 16 steps back a little.
  const uint64_t step = (r & 0xfff) * 2;
  if (((r >> 12) & 15) == 0 && time_ns_ > 4096) {
    time_ns_ -= (r >> 16) & 0x7ff;
  } else {
    time_ns_ += step;
  }
  s.time_ns = time_ns_;
  s.cpu = static_cast<uint32_t>((r >> 28) & 7);
  const uint64_t who = (r >> 31) & 7;
  s.pid = who < 6 ? 41230 : 41877;
  s.tid = who < 6 ? 41230 + static_cast<uint32_t>(who)
                  : 41877 + static_cast<uint32_t>(who - 6);
  // Region and page: skewed popularity (u^4 concentrates near page 0, then
  // a multiplicative hash spreads the hot pages over the region).
  const uint64_t r2 = rng_();
  const int region = (r2 & 15) < 5 ? 0 : (r2 & 15) < 15 ? 1 : 2;
  const double u = static_cast<double>(r2 >> 11) * 0x1.0p-53;
  const uint64_t rank =
      static_cast<uint64_t>(u * u * u * u * kRegionPages[region]);
  const uint64_t page = (rank * 0x9E3779B1ull) % kRegionPages[region];
  const uint64_t offset = (rng_() & 0xfff) & ~uint64_t{7};
  s.vaddr = kRegionBase[region] + page * 4096 + offset;
  const uint64_t r3 = rng_();
  if ((r3 & 7) < 6) {
    const uint64_t pfn =
        ((page * 0x2545F4914F6CDD1Dull) >> 28) & ((1ull << 26) - 1);
    s.paddr = (pfn << 12) | offset;
  }
  const int kind =
      static_cast<int>((r3 >> 3) % (sizeof(kDataSrcs) / sizeof(kDataSrcs[0])));
  s.data_src = kDataSrcs[kind];
  const DecodedDataSrc d = DecodeDataSrc(s.data_src);
  s.level = d.level;
  s.tlb = d.tlb;
  s.flags = d.is_store ? kSampleStore : 0;
  s.source = d.is_store ? SampleSource::kPebsStore : SampleSource::kPebsLoad;
  if (!d.is_store) {
    // Load latency: ~exp(3..6.5) cycles.
    const double e =
        3.0 + 3.5 * static_cast<double>((r3 >> 8) & 0xffff) / 65536.0;
    s.weight = static_cast<uint32_t>(std::exp(e));
  }
  if (((r3 >> 24) & 0xffff) == 0)
    period_ = 5003 + ((r3 >> 40) & 0xffff);  // adaptive step
  s.period = period_;
  return s;
}

std::vector<Sample> EdgeSamples(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const uint64_t specials[] = {0,
                               1,
                               0x7f,
                               0x80,
                               0xffffffffull,
                               0x100000000ull,
                               0x7fffffffffffffffull,
                               0x8000000000000000ull,
                               ~uint64_t{0}};
  auto pick64 = [&]() -> uint64_t {
    const uint64_t r = rng();
    switch (r % 4) {
      case 0:
        return specials[(r >> 8) % (sizeof(specials) / sizeof(specials[0]))];
      case 1:
        return uint64_t{1} << ((r >> 8) % 64);
      case 2:
        return rng();
      default:
        return (r >> 8) & 0xffff;
    }
  };
  std::vector<Sample> out(n);
  for (Sample& s : out) {
    s.time_ns = pick64();
    s.vaddr = pick64();
    s.paddr = pick64();
    s.data_src = pick64();
    s.period = pick64();
    s.pid = static_cast<uint32_t>(pick64());
    s.tid = static_cast<uint32_t>(pick64() >> (rng() % 33));
    s.cpu = static_cast<uint32_t>(pick64());
    s.weight = static_cast<uint32_t>(pick64());
    const uint64_t b = rng();
    s.level = static_cast<MemLevel>(b & 0xff);
    s.tlb = static_cast<TlbOutcome>((b >> 8) & 0xff);
    s.source = static_cast<SampleSource>((b >> 16) & 0xff);
    s.flags = static_cast<uint8_t>(b >> 24);
    s.reserved = static_cast<uint32_t>(pick64());
  }
  return out;
}

TraceHeader TestHeader() {
  TraceHeader h;
  h.sample_period = 10007;
  h.start_realtime_ns = 1764444000123456789ull;
  h.start_clock_ns = 1700000000000000ull;
  h.source = SampleSourceName(SampleSource::kPebsLoad);
  h.event_config =
      "cpu/mem-loads,ldlat=30/P type=4 config=0x1cd config1=0x1e precise_ip=2 "
      "sample_type=IP|TID|TIME|ADDR|CPU|PERIOD|WEIGHT|DATA_SRC|PHYS_ADDR";
  h.topology_json =
      "{\"nodes\": [{\"id\": 0, \"cpus\": [0, 1], \"memory_bytes\": "
      "1073741824}], "
      "\"tier_source\": \"distance\"}";
  return h;
}

absl::StatusOr<std::string> WriteTrace(
    const TraceHeader& header, const std::vector<Sample>& samples,
    const TraceWriter::Options& options,
    const std::vector<CpuCounters>& counters) {
  std::string out;
  HOTPAGE_ASSIGN_OR_RETURN(
      std::unique_ptr<TraceWriter> w,
      TraceWriter::Create(std::make_unique<StringSink>(&out), "mem.hpt", header,
                          options));
  HOTPAGE_RETURN_IF_ERROR(w->Append(samples));
  for (const CpuCounters& c : counters)
    HOTPAGE_RETURN_IF_ERROR(w->SetCounters(c));
  HOTPAGE_RETURN_IF_ERROR(w->Close());
  return out;
}

ReadResult ReadTrace(const std::string& bytes) {
  ReadResult res;
  absl::StatusOr<std::unique_ptr<TraceReader>> r =
      TraceReader::Open(MakeMemorySource(bytes), "mem.hpt");
  if (!r.ok()) {
    res.status = r.status();
    return res;
  }
  res.header = (*r)->header();
  while (true) {
    absl::StatusOr<absl::Span<const Sample>> block = (*r)->Next();
    res.max_buffer_bytes = std::max(res.max_buffer_bytes, (*r)->buffer_bytes());
    if (!block.ok()) {
      res.status = block.status();
      break;
    }
    if (block->empty()) break;
    res.samples.insert(res.samples.end(), block->begin(), block->end());
  }
  res.counters = (*r)->counters();
  res.complete = (*r)->complete();
  return res;
}

bool SameSample(const Sample& a, const Sample& b) {
  return std::memcmp(&a, &b, sizeof(Sample)) == 0;
}

}  // namespace testing_internal
}  // namespace hotpage
