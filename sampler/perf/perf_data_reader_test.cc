#include "sampler/perf/perf_data_reader.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "sampler/perf/perf_data_format.h"
#include "sampler/perf/perf_data_testing.h"
#include "sampler/sample.h"

namespace hotpage {
namespace {

namespace pf = ::hotpage::perf_format;
using ::hotpage::testing::PebsAttr;
using ::hotpage::testing::PerfDataBuilder;
using ::hotpage::testing::TestAttr;
using ::hotpage::testing::TestSample;

std::string TestdataPath(const std::string& name) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* ws = std::getenv("TEST_WORKSPACE");
  std::string base = srcdir != nullptr
                         ? std::string(srcdir) + "/" + (ws ? ws : "hotpage")
                         : ".";
  return base + "/sampler/perf/testdata/" + name;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

struct Drained {
  std::vector<Sample> samples;
  std::vector<PerfSampleOrigin> origins;
  PerfDataStats stats;
  absl::Status status;
};

Drained Drain(PerfDataReader& r) {
  Drained d;
  Sample s;
  PerfSampleOrigin o;
  while (r.Next(&s, &o)) {
    d.samples.push_back(s);
    d.origins.push_back(o);
  }
  EXPECT_TRUE(r.done());
  d.stats = r.stats();
  d.status = r.status();
  return d;
}

Drained DrainBuffer(const std::string& data) {
  auto r = PerfDataReader::OpenBuffer(data, "test.data");
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return {};
  return Drain(*r);
}

// A PEBS-like load sample: served from `lvl_num`, latency `lat` cycles.
uint64_t LoadSrc(uint64_t lvl_num, bool remote = false, bool tlb_miss = false) {
  uint64_t v = uint64_t{PERF_MEM_OP_LOAD} << PERF_MEM_OP_SHIFT |
               uint64_t{PERF_MEM_LVL_HIT} << PERF_MEM_LVL_SHIFT |
               lvl_num << PERF_MEM_LVLNUM_SHIFT |
               uint64_t{remote} << PERF_MEM_REMOTE_SHIFT;
  const uint64_t tlb = tlb_miss ? (PERF_MEM_TLB_MISS | PERF_MEM_TLB_WK)
                                : (PERF_MEM_TLB_HIT | PERF_MEM_TLB_L1);
  v |= tlb << PERF_MEM_TLB_SHIFT;
  return v;
}

TestSample PebsSample(uint64_t id, int i) {
  TestSample s;
  s.id = id;
  s.ip = 0x401000 + i;
  s.pid = 100;
  s.tid = 100 + i % 3;
  s.time = 1'000'000'000ULL + 10ULL * i;
  s.addr = 0x7f0000000000ULL + 64ULL * i;
  s.cpu = static_cast<uint32_t>(i % 2);
  s.period = 1000 + i;
  // WEIGHT_STRUCT: var1_dw (latency) low, var2_w / var3_w above it.
  s.weight = (uint64_t{0xbeef} << 48) | (uint64_t{0x1234} << 32) | (30 + i);
  s.data_src = LoadSrc(i % 2 ? PERF_MEM_LVLNUM_RAM : PERF_MEM_LVLNUM_L2,
                       i % 4 == 3, i % 5 == 0);
  s.phys_addr = 0x100000000ULL + 64ULL * i;
  return s;
}

void ExpectPebs(const Sample& got, const TestSample& want) {
  EXPECT_EQ(got.time_ns, want.time);
  EXPECT_EQ(got.vaddr, want.addr);
  EXPECT_EQ(got.paddr, want.phys_addr);
  EXPECT_EQ(got.data_src, want.data_src);
  EXPECT_EQ(got.period, want.period);
  EXPECT_EQ(got.pid, want.pid);
  EXPECT_EQ(got.tid, want.tid);
  EXPECT_EQ(got.cpu, want.cpu);
  EXPECT_EQ(got.weight, static_cast<uint32_t>(want.weight));
  const DecodedDataSrc d = DecodeDataSrc(want.data_src);
  EXPECT_EQ(got.level, d.level);
  EXPECT_EQ(got.tlb, d.tlb);
  EXPECT_EQ(got.source, SampleSource::kPerfData);
  EXPECT_EQ(got.reserved, 0u);
}

// ---------------------------------------------------------------------------
// Synthetic files

TEST(PerfDataReader, FileModePebsSamplesKeepEveryField) {
  PerfDataBuilder b;
  const int a = b.AddAttr(PebsAttr(42));
  std::vector<TestSample> want;
  for (int i = 0; i < 20; ++i) {
    want.push_back(PebsSample(42, i));
    b.AddSample(a, want.back());
  }
  const std::string file = b.File();
  Drained d = DrainBuffer(file);
  ASSERT_TRUE(d.status.ok()) << d.status;
  ASSERT_EQ(d.samples.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(i);
    ExpectPebs(d.samples[i], want[i]);
    EXPECT_EQ(d.origins[i].event, 0u);
    EXPECT_EQ(d.origins[i].file_offset - d.origins[0].file_offset,
              b.record_offsets()[i]);
  }
  EXPECT_EQ(d.samples[0].level, MemLevel::kL2);
  EXPECT_EQ(d.samples[1].level, MemLevel::kLocalDram);
  EXPECT_EQ(d.samples[3].level, MemLevel::kRemoteDram);
  EXPECT_EQ(d.samples[0].tlb, TlbOutcome::kMiss);
  EXPECT_EQ(d.samples[1].tlb, TlbOutcome::kL1Hit);
  EXPECT_EQ(d.stats.samples, 20u);
  EXPECT_EQ(d.stats.sample_records, 20u);
  EXPECT_EQ(d.stats.events.size(), 1u);
  EXPECT_EQ(d.stats.events[0].name, "cpu/mem-loads,ldlat=30/P");
  EXPECT_EQ(d.stats.events[0].samples, 20u);
  ASSERT_EQ(d.stats.per_cpu.size(), 2u);
  EXPECT_EQ(d.stats.per_cpu[0].samples, 10u);
  EXPECT_EQ(d.stats.per_cpu[1].samples, 10u);
}

TEST(PerfDataReader, StoresAreFlagged) {
  PerfDataBuilder b;
  const int a = b.AddAttr(PebsAttr(1));
  TestSample s = PebsSample(1, 0);
  s.data_src = uint64_t{PERF_MEM_OP_STORE} << PERF_MEM_OP_SHIFT;
  b.AddSample(a, s);
  Drained d = DrainBuffer(b.File());
  ASSERT_EQ(d.samples.size(), 1u);
  EXPECT_EQ(d.samples[0].flags & kSampleStore, kSampleStore);
}

TEST(PerfDataReader, PeriodComesFromTheAttrWhenNotSampled) {
  PerfDataBuilder b;
  TestAttr fixed = PebsAttr(1);
  fixed.sample_type &= ~uint64_t{pf::kSamplePeriod};
  fixed.sample_period = 5003;
  TestAttr freq = PebsAttr(2);
  freq.sample_type &= ~uint64_t{pf::kSamplePeriod};
  freq.freq = true;
  freq.sample_period = 4000;  // a frequency: no period known
  const int a = b.AddAttr(fixed);
  const int f = b.AddAttr(freq);
  b.AddSample(a, PebsSample(1, 0));
  b.AddSample(f, PebsSample(2, 1));
  Drained d = DrainBuffer(b.File());
  ASSERT_EQ(d.samples.size(), 2u);
  EXPECT_EQ(d.samples[0].period, 5003u);
  EXPECT_EQ(d.samples[1].period, 0u);
  EXPECT_EQ(d.stats.events[0].sample_period, 5003u);
  EXPECT_EQ(d.stats.events[1].sample_freq, 4000u);
}

TEST(PerfDataReader, PlainWeightIsTheWholeU64Saturated) {
  PerfDataBuilder b;
  TestAttr attr = PebsAttr(1);
  attr.sample_type = (attr.sample_type & ~uint64_t{pf::kSampleWeightStruct}) |
                     pf::kSampleWeight;
  const int a = b.AddAttr(attr);
  TestSample s = PebsSample(1, 0);
  s.weight = 77;
  b.AddSample(a, s);
  s.weight = uint64_t{1} << 40;
  b.AddSample(a, s);
  Drained d = DrainBuffer(b.File());
  ASSERT_EQ(d.samples.size(), 2u);
  EXPECT_EQ(d.samples[0].weight, 77u);
  EXPECT_EQ(d.samples[1].weight, UINT32_MAX);
}

// Every variable-length field the kernel can put before the fields hotpage
// keeps, with lengths that differ per sample: the kept fields must still be
// found.
TEST(PerfDataReader, VariableLengthFieldsAreSkippedExactly) {
  TestAttr attr;
  attr.type = 4;
  attr.config = 0x1cd;
  attr.sample_type =
      pf::kSampleIdentifier | pf::kSampleIp | pf::kSampleTid | pf::kSampleTime |
      pf::kSampleAddr | pf::kSampleId | pf::kSampleStreamId | pf::kSampleCpu |
      pf::kSamplePeriod | pf::kSampleRead | pf::kSampleCallchain |
      pf::kSampleRaw | pf::kSampleBranchStack | pf::kSampleRegsUser |
      pf::kSampleStackUser | pf::kSampleWeightStruct | pf::kSampleDataSrc |
      pf::kSampleTransaction | pf::kSampleRegsIntr | pf::kSamplePhysAddr |
      pf::kSampleCgroup | pf::kSampleDataPageSize | pf::kSampleCodePageSize |
      pf::kSampleAux;
  attr.read_format = pf::kFormatGroup | pf::kFormatId | pf::kFormatLost |
                     pf::kFormatTotalTimeEnabled | pf::kFormatTotalTimeRunning;
  attr.branch_sample_type = pf::kBranchHwIndex | pf::kBranchCounters;
  attr.sample_regs_user = 0x1f;      // 5 registers
  attr.sample_regs_intr = 0xff00ff;  // 16 registers
  attr.ids = {9};
  PerfDataBuilder b;
  const int a = b.AddAttr(attr);
  std::vector<TestSample> want;
  for (int i = 0; i < 12; ++i) {
    TestSample s = PebsSample(9, i);
    s.read_group_nr = i % 4;
    s.callchain.assign(i * 3 % 7, 0xffffffff81000000ULL + i);
    s.raw_size = static_cast<uint32_t>(i * 5);  // odd sizes; the kernel pads
    s.branch_nr = i % 5;
    s.regs_user_abi = i % 3 == 0 ? 0 : 2;  // ABI_NONE: no registers follow
    s.stack_user_size = (i % 4) * 64;
    s.regs_intr_abi = i % 2 ? 0 : 2;
    s.aux_size = (i % 3) * 16;
    want.push_back(s);
    b.AddSample(a, s);
  }
  for (const std::string& data : {b.File(), b.Pipe()}) {
    Drained d = DrainBuffer(data);
    ASSERT_TRUE(d.status.ok()) << d.status;
    ASSERT_EQ(d.samples.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      SCOPED_TRACE(i);
      ExpectPebs(d.samples[i], want[i]);
    }
  }
}

TEST(PerfDataReader, ReadFormatWithoutGroup) {
  for (uint64_t rf = 0; rf < 32; ++rf) {
    if (rf & pf::kFormatGroup) continue;
    SCOPED_TRACE(rf);
    TestAttr attr = PebsAttr(3);
    attr.sample_type |= pf::kSampleRead;
    attr.read_format = rf;
    PerfDataBuilder b;
    const int a = b.AddAttr(attr);
    b.AddSample(a, PebsSample(3, 5));
    Drained d = DrainBuffer(b.File());
    ASSERT_EQ(d.samples.size(), 1u);
    ExpectPebs(d.samples[0], PebsSample(3, 5));
  }
}

// Property: for random sample_types and field lengths, what is encoded in
// the kernel's order is what comes back.
TEST(PerfDataReader, RandomSampleTypesRoundTrip) {
  std::mt19937_64 rng(20240601);
  const uint64_t kAllBits = (uint64_t{1} << 25) - 1;
  for (int round = 0; round < 400; ++round) {
    TestAttr attr;
    attr.sample_type = rng() & kAllBits & ~uint64_t{pf::kSampleWeight};
    if (rng() % 2) attr.sample_type |= pf::kSampleAddr;
    if (rng() % 3 == 0)
      attr.sample_type ^= pf::kSampleWeightStruct | pf::kSampleWeight;
    if ((attr.sample_type & pf::kSampleWeightType) == pf::kSampleWeightType) {
      attr.sample_type &= ~uint64_t{pf::kSampleWeight};
    }
    attr.read_format = rng() % 32;
    attr.branch_sample_type = rng() % 2 ? pf::kBranchHwIndex : 0;
    attr.sample_regs_user = rng() & 0xffff;
    attr.sample_regs_intr = rng() & 0xffffffff;
    attr.sample_period = 17;
    attr.ids = {5};
    attr.attr_size = 64 + 8 * (rng() % 12);
    PerfDataBuilder b;
    const int a = b.AddAttr(attr);
    std::vector<TestSample> want;
    for (int i = 0; i < 4; ++i) {
      TestSample s = PebsSample(5, static_cast<int>(rng() % 1000));
      s.read_group_nr = rng() % 4;
      s.callchain.assign(rng() % 5, 1);
      s.raw_size = static_cast<uint32_t>(rng() % 40);
      s.branch_nr = rng() % 4;
      s.regs_user_abi = rng() % 3;
      s.stack_user_size = 8 * (rng() % 4);
      s.regs_intr_abi = rng() % 3;
      s.aux_size = 8 * (rng() % 3);
      want.push_back(s);
      b.AddSample(a, s);
    }
    SCOPED_TRACE(absl::StrCat("sample_type=", attr.sample_type,
                              " attr_size=", attr.attr_size));
    Drained d = DrainBuffer(b.File());
    ASSERT_TRUE(d.status.ok()) << d.status;
    const uint64_t t = attr.sample_type;
    if (!(t & pf::kSampleAddr)) {
      EXPECT_EQ(d.samples.size(), 0u);
      EXPECT_EQ(d.stats.skipped_no_addr, 4u);
      continue;
    }
    ASSERT_EQ(d.samples.size(), 4u);
    for (size_t i = 0; i < 4; ++i) {
      const Sample& g = d.samples[i];
      const TestSample& w = want[i];
      EXPECT_EQ(g.vaddr, w.addr);
      EXPECT_EQ(g.time_ns, (t & pf::kSampleTime) ? w.time : 0);
      EXPECT_EQ(g.tid, (t & pf::kSampleTid) ? w.tid : 0);
      EXPECT_EQ(g.cpu, (t & pf::kSampleCpu) ? w.cpu : 0);
      EXPECT_EQ(g.period, (t & pf::kSamplePeriod) ? w.period : 17);
      EXPECT_EQ(g.paddr, (t & pf::kSamplePhysAddr) ? w.phys_addr : 0);
      EXPECT_EQ(g.data_src, (t & pf::kSampleDataSrc) ? w.data_src : 0);
      const uint32_t weight =
          (t & pf::kSampleWeightStruct) ? static_cast<uint32_t>(w.weight)
          : (t & pf::kSampleWeight)     ? UINT32_MAX  // > 2^32 here
                                        : 0;
      EXPECT_EQ(g.weight, weight);
    }
  }
}

TEST(PerfDataReader, SeveralEventsMappedByIdentifierOrId) {
  for (bool identifier : {true, false}) {
    SCOPED_TRACE(identifier);
    PerfDataBuilder b;
    TestAttr loads = PebsAttr(0);
    TestAttr stores = PebsAttr(0);
    for (TestAttr* t : {&loads, &stores}) {
      if (!identifier) {
        t->sample_type =
            (t->sample_type & ~uint64_t{pf::kSampleIdentifier}) | pf::kSampleId;
      }
    }
    loads.ids = {11, 12};
    loads.name = "loads";
    stores.ids = {21, 22};
    stores.name = "stores";
    stores.config = 0x2cd;
    const int l = b.AddAttr(loads);
    const int s = b.AddAttr(stores);
    const uint64_t ids[] = {11, 21, 12, 22, 21, 21};
    for (int i = 0; i < 6; ++i)
      b.AddSample(ids[i] < 20 ? l : s, PebsSample(ids[i], i));
    for (const std::string& data : {b.File(), b.Pipe()}) {
      Drained d = DrainBuffer(data);
      ASSERT_TRUE(d.status.ok()) << d.status;
      ASSERT_EQ(d.samples.size(), 6u);
      for (int i = 0; i < 6; ++i) {
        EXPECT_EQ(d.origins[i].event, ids[i] < 20 ? 0u : 1u) << i;
        ExpectPebs(d.samples[i], PebsSample(ids[i], i));
      }
      ASSERT_EQ(d.stats.events.size(), 2u);
      EXPECT_EQ(d.stats.events[0].name, "loads");
      EXPECT_EQ(d.stats.events[1].name, "stores");
      EXPECT_EQ(d.stats.events[0].samples, 2u);
      EXPECT_EQ(d.stats.events[1].samples, 4u);
    }
  }
}

// The source is decided per event from its attr: the software page-fault
// events (what `perf record -e page-faults -d` records without a PMU) are
// fault samples, which the engine does not price as accesses
// (SamplesCountAccesses); a PMU event in the same file stays kPerfData, and
// so do other software events and hardware config 2 (cache-references, the
// same config number as page-faults).
TEST(PerfDataReader, PageFaultEventsAreTaggedPageFaultPerEvent) {
  struct Ev {
    uint32_t type;
    uint64_t config;
    SampleSource want;
  };
  const Ev evs[] = {
      {PERF_TYPE_RAW, 0x1cd, SampleSource::kPerfData},
      {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, SampleSource::kPageFault},
      {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN,
       SampleSource::kPageFault},
      {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ,
       SampleSource::kPageFault},
      {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, SampleSource::kPerfData},
      {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES,
       SampleSource::kPerfData},
  };
  constexpr int kEvents = static_cast<int>(std::size(evs));
  PerfDataBuilder b;
  for (int e = 0; e < kEvents; ++e) {
    TestAttr t = PebsAttr(100 + e);
    t.type = evs[e].type;
    t.config = evs[e].config;
    t.name = PerfEventDefaultName(t.type, t.config);
    b.AddAttr(t);
  }
  // Interleaved: the source follows each sample's event, not the first or
  // the last event seen.
  for (int i = 0; i < 3 * kEvents; ++i) {
    const int e = (i * 5) % kEvents;
    b.AddSample(e, PebsSample(100 + e, i));
  }
  for (const std::string& data : {b.File(), b.Pipe()}) {
    Drained d = DrainBuffer(data);
    ASSERT_TRUE(d.status.ok()) << d.status;
    ASSERT_EQ(d.samples.size(), 3u * kEvents);
    for (size_t i = 0; i < d.samples.size(); ++i) {
      const uint32_t e = d.origins[i].event;
      ASSERT_LT(e, static_cast<uint32_t>(kEvents));
      EXPECT_EQ(e, (i * 5) % kEvents) << i;
      EXPECT_EQ(d.samples[i].source, evs[e].want)
          << i << " " << d.stats.events[e].name;
      EXPECT_EQ(d.samples[i].period, PebsSample(0, static_cast<int>(i)).period);
    }
    ASSERT_EQ(d.stats.events.size(), static_cast<size_t>(kEvents));
    for (int e = 0; e < kEvents; ++e) {
      EXPECT_EQ(d.stats.events[e].source, evs[e].want)
          << d.stats.events[e].name;
      EXPECT_EQ(d.stats.events[e].samples, 3u);
    }
  }
}

TEST(PerfEventSampleSource, OnlyTheSoftwarePageFaultEventsAreFaults) {
  EXPECT_EQ(PerfEventSampleSource(PERF_TYPE_SOFTWARE, 2),  // page-faults
            SampleSource::kPageFault);
  EXPECT_EQ(PerfEventSampleSource(PERF_TYPE_SOFTWARE, 5),  // minor-faults
            SampleSource::kPageFault);
  EXPECT_EQ(PerfEventSampleSource(PERF_TYPE_SOFTWARE, 6),  // major-faults
            SampleSource::kPageFault);
  for (uint64_t config : {0, 1, 3, 4, 7, 8, 9, 10, 11}) {
    EXPECT_EQ(PerfEventSampleSource(PERF_TYPE_SOFTWARE, config),
              SampleSource::kPerfData)
        << config;
  }
  // The same config number in other types is not a page fault, nor is a
  // software config the kernel does not have (unknown: counts accesses).
  for (uint32_t type : std::vector<uint32_t>{
           PERF_TYPE_HARDWARE, PERF_TYPE_TRACEPOINT, PERF_TYPE_HW_CACHE,
           PERF_TYPE_RAW, PERF_TYPE_BREAKPOINT, 11}) {
    EXPECT_EQ(PerfEventSampleSource(type, 2), SampleSource::kPerfData) << type;
  }
  EXPECT_EQ(PerfEventSampleSource(PERF_TYPE_SOFTWARE, (uint64_t{1} << 32) | 2),
            SampleSource::kPerfData);
}

TEST(PerfDataReader, IdIndexRecordMapsIds) {
  PerfDataBuilder b;
  TestAttr x = PebsAttr(0), y = PebsAttr(0);
  x.ids = {101};
  y.ids = {202};
  const int xi = b.AddAttr(x);
  const int yi = b.AddAttr(y);
  b.AddIdIndex();
  b.AddSample(yi, PebsSample(202, 0));
  b.AddSample(xi, PebsSample(101, 1));
  PerfDataBuilder::Options o;
  o.ids_in_attrs = false;
  Drained d = DrainBuffer(b.File(o));
  ASSERT_EQ(d.samples.size(), 2u);
  EXPECT_EQ(d.origins[0].event, 1u);
  EXPECT_EQ(d.origins[1].event, 0u);
  EXPECT_EQ(d.stats.skipped_unknown_id, 0u);
}

TEST(PerfDataReader, SamplesWithUnknownIdsAreCountedAndSkipped) {
  PerfDataBuilder b;
  const int x = b.AddAttr(PebsAttr(1));
  b.AddAttr(PebsAttr(2));
  b.AddSample(x, PebsSample(1, 0));
  b.AddSample(x, PebsSample(99, 1));  // no event has id 99
  b.AddSample(x, PebsSample(1, 2));
  Drained d = DrainBuffer(b.File());
  ASSERT_TRUE(d.status.ok()) << d.status;
  EXPECT_EQ(d.samples.size(), 2u);
  EXPECT_EQ(d.stats.skipped_unknown_id, 1u);
  EXPECT_EQ(d.stats.sample_records, 3u);
}

TEST(PerfDataReader, EventsThatPlaceTheIdDifferentlyAreRejected) {
  PerfDataBuilder b;
  TestAttr x = PebsAttr(1);
  TestAttr y = PebsAttr(2);
  y.sample_type =
      (y.sample_type & ~uint64_t{pf::kSampleIdentifier}) | pf::kSampleId;
  b.AddAttr(x);
  b.AddAttr(y);
  const std::string file = b.File();
  auto r = PerfDataReader::OpenBuffer(file, "mixed.data");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("mixed.data"), std::string::npos)
      << r.status();
  EXPECT_NE(r.status().message().find("non matching sample_type"),
            std::string::npos);
}

TEST(PerfDataReader, OlderAndNewerAttrSizes) {
  // 64 = PERF_ATTR_SIZE_VER0 (also with attr.size 0, as the oldest perf
  // wrote it), 72..136 = VER1..VER8, 200 = a future perf.
  for (uint32_t size :
       {64u, 72u, 80u, 96u, 104u, 112u, 120u, 128u, 136u, 200u}) {
    for (bool zero : {false, true}) {
      if (zero && size != 64) continue;
      SCOPED_TRACE(absl::StrCat(size, zero ? " (size field 0)" : ""));
      TestAttr attr = PebsAttr(7);
      attr.attr_size = size;
      attr.size_field_zero = zero;
      // Fields past the stored size read as 0; keep the layout independent.
      attr.sample_type |= pf::kSampleRegsUser;
      attr.sample_regs_user = 0x7;
      PerfDataBuilder b;
      const int a = b.AddAttr(attr);
      TestSample s = PebsSample(7, 3);
      // Short attrs have no sample_regs_user: the kernel writes no registers.
      s.regs_user_abi = size >= 88 ? 2 : 0;
      b.AddSample(a, s);
      for (const std::string& data : {b.File(), b.Pipe()}) {
        Drained d = DrainBuffer(data);
        ASSERT_TRUE(d.status.ok()) << d.status;
        ASSERT_EQ(d.samples.size(), 1u);
        ExpectPebs(d.samples[0], s);
        EXPECT_EQ(d.stats.events[0].attr_size, size);
      }
    }
  }
}

TEST(PerfDataReader, PipeModeMatchesFileMode) {
  PerfDataBuilder b;
  const int a = b.AddAttr(PebsAttr(5));
  for (int i = 0; i < 50; ++i) b.AddSample(a, PebsSample(5, i));
  const std::string pipe = b.Pipe();
  auto r = PerfDataReader::OpenBuffer(pipe, "pipe.data");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->mode(), PerfDataMode::kPipe);
  Drained p = Drain(*r);
  Drained f = DrainBuffer(b.File());
  ASSERT_EQ(p.samples.size(), 50u);
  ASSERT_EQ(f.samples.size(), 50u);
  for (int i = 0; i < 50; ++i) ExpectPebs(p.samples[i], PebsSample(5, i));
  EXPECT_EQ(p.stats.events[0].name, "cpu/mem-loads,ldlat=30/P");
}

TEST(PerfDataReader, CompressedRecordsSplitAcrossBoundaries) {
  PerfDataBuilder b;
  const int a = b.AddAttr(PebsAttr(5));
  b.AddLost(a, 5, 3, PebsSample(5, 0));
  for (int i = 0; i < 3000; ++i) b.AddSample(a, PebsSample(5, i));
  b.AddThrottle(a, false, 1, 5, PebsSample(5, 1));
  for (bool v2 : {false, true}) {
    for (size_t max_payload : {size_t{13}, size_t{100}, size_t{4000}}) {
      for (bool pipe : {false, true}) {
        SCOPED_TRACE(
            absl::StrCat("v2=", v2, " payload=", max_payload, " pipe=", pipe));
        PerfDataBuilder::Options o;
        o.compress = true;
        o.compressed2 = v2;
        o.max_payload = max_payload;
        o.flush_bytes = 7000;
        Drained d = DrainBuffer(pipe ? b.Pipe(o) : b.File(o));
        ASSERT_TRUE(d.status.ok()) << d.status;
        ASSERT_EQ(d.samples.size(), 3000u);
        for (int i = 0; i < 3000; i += 97)
          ExpectPebs(d.samples[i], PebsSample(5, i));
        EXPECT_GT(d.stats.compressed_records, 1u);
        EXPECT_GT(d.stats.split_records, 0u);
        EXPECT_EQ(d.stats.decompressed_bytes, b.records().size());
        EXPECT_EQ(d.stats.lost, 3u);
        EXPECT_EQ(d.stats.throttle, 1u);
      }
    }
  }
}

TEST(PerfDataReader, LossAndThrottleCountedPerCpu) {
  PerfDataBuilder b;
  TestAttr with_cpu = PebsAttr(1);
  TestAttr without_cpu = PebsAttr(2);
  without_cpu.sample_type &= ~uint64_t{pf::kSampleCpu};
  const int a = b.AddAttr(with_cpu);
  const int n = b.AddAttr(without_cpu);
  TestSample on3 = PebsSample(1, 0);
  on3.cpu = 3;
  TestSample on1 = PebsSample(1, 0);
  on1.cpu = 1;
  b.AddLost(a, 1, 10, on3);
  b.AddLost(a, 1, 5, on1);
  b.AddLostSamples(a, 7, on3);
  b.AddThrottle(a, false, 100, 1, on3);
  b.AddThrottle(a, false, 101, 1, on3);
  b.AddThrottle(a, true, 102, 1, on3);
  b.AddThrottle(a, true, 103, 1, on1);
  b.AddThrottle(n, false, 104, 2, PebsSample(2, 0));  // no CPU in its trailer
  b.AddSample(a, on3);
  Drained d = DrainBuffer(b.File());
  ASSERT_TRUE(d.status.ok()) << d.status;
  EXPECT_EQ(d.stats.lost_records, 2u);
  EXPECT_EQ(d.stats.lost, 15u);
  EXPECT_EQ(d.stats.lost_samples_records, 1u);
  EXPECT_EQ(d.stats.lost_samples, 7u);
  EXPECT_EQ(d.stats.throttle, 3u);
  EXPECT_EQ(d.stats.unthrottle, 2u);
  ASSERT_EQ(d.stats.per_cpu.size(), 4u);
  EXPECT_EQ(d.stats.per_cpu[3].lost, 10u);
  EXPECT_EQ(d.stats.per_cpu[1].lost, 5u);
  EXPECT_EQ(d.stats.per_cpu[3].lost_samples, 7u);
  EXPECT_EQ(d.stats.per_cpu[3].throttle, 2u);
  EXPECT_EQ(d.stats.per_cpu[3].unthrottle, 1u);
  EXPECT_EQ(d.stats.per_cpu[1].unthrottle, 1u);
  EXPECT_EQ(d.stats.per_cpu[3].samples, 1u);
  EXPECT_EQ(d.stats.no_cpu.throttle, 1u);
}

TEST(PerfDataReader, SamplesWithoutAddressAreCountedAndSkipped) {
  PerfDataBuilder b;
  TestAttr no_addr = PebsAttr(2);
  no_addr.sample_type &= ~uint64_t{pf::kSampleAddr};
  const int a = b.AddAttr(PebsAttr(1));
  const int n = b.AddAttr(no_addr);
  TestSample zero = PebsSample(1, 1);
  zero.addr = 0;
  b.AddSample(a, PebsSample(1, 0));
  b.AddSample(a, zero);
  b.AddSample(n, PebsSample(2, 2));
  b.AddSample(a, PebsSample(1, 3));
  Drained d = DrainBuffer(b.File());
  ASSERT_EQ(d.samples.size(), 2u);
  EXPECT_EQ(d.stats.skipped_no_addr, 2u);
  EXPECT_EQ(d.stats.events[0].skipped_no_addr, 1u);
  EXPECT_EQ(d.stats.events[1].skipped_no_addr, 1u);
  EXPECT_EQ(d.stats.per_cpu[1].skipped_no_addr, 1u);
  EXPECT_EQ(d.stats.per_cpu[0].skipped_no_addr, 1u);
}

TEST(PerfDataReader, UnknownRecordTypesAreSkipped) {
  PerfDataBuilder b;
  const int a = b.AddAttr(PebsAttr(1));
  b.AddSample(a, PebsSample(1, 0));
  b.AddRecord(200, std::string(40, 'x'));
  b.AddRecord(30, "");
  b.AddRecord(pf::kRecordMmap2, std::string(64, '\0'));  // known, ignored
  b.AddRecord(pf::kRecordFinishedRound, "");
  b.AddSample(a, PebsSample(1, 1));
  Drained d = DrainBuffer(b.File());
  ASSERT_TRUE(d.status.ok()) << d.status;
  EXPECT_EQ(d.samples.size(), 2u);
  EXPECT_EQ(d.stats.unknown_records, 2u);
  EXPECT_EQ(d.stats.records, 6u);
}

TEST(PerfDataReader, PayloadsAfterAuxtraceAndTracingDataAreSkipped) {
  PerfDataBuilder b;
  const int a = b.AddAttr(PebsAttr(1));
  b.AddSample(a, PebsSample(1, 0));
  std::string aux(48, '\0');
  aux[0] = 24;  // size: 24 bytes of AUX data follow the record
  b.AddRecord(pf::kRecordAuxtrace, aux);
  b.AddBytes(std::string(
      24, '\x09'));  // would parse as a SAMPLE header if not skipped
  std::string tracing(8, '\0');
  tracing[0] = 13;  // 13 bytes, padded to 16
  b.AddRecord(pf::kRecordHeaderTracingData, tracing);
  b.AddBytes(std::string(16, '\x09'));
  b.AddSample(a, PebsSample(1, 1));
  for (bool compress : {false, true}) {
    PerfDataBuilder::Options o;
    o.compress = compress;
    o.max_payload = 20;
    Drained d = DrainBuffer(b.Pipe(o));
    ASSERT_TRUE(d.status.ok()) << d.status;
    ASSERT_EQ(d.samples.size(), 2u);
    ExpectPebs(d.samples[1], PebsSample(1, 1));
  }
}

TEST(PerfDataReader, BatchReadMatchesNext) {
  PerfDataBuilder b;
  const int a = b.AddAttr(PebsAttr(1));
  for (int i = 0; i < 1000; ++i) b.AddSample(a, PebsSample(1, i));
  const std::string file = b.File();
  auto r = PerfDataReader::OpenBuffer(file);
  ASSERT_TRUE(r.ok());
  std::vector<Sample> out(64);
  std::vector<PerfSampleOrigin> origins(64);
  size_t total = 0, n;
  while ((n = r->Read(out.data(), out.size(), origins.data())) > 0) {
    for (size_t i = 0; i < n; ++i)
      ExpectPebs(out[i], PebsSample(1, static_cast<int>(total + i)));
    total += n;
  }
  EXPECT_EQ(total, 1000u);
  EXPECT_TRUE(r->done());
  EXPECT_TRUE(r->status().ok());
  EXPECT_EQ(r->Read(out.data(), out.size()), 0u);
}

TEST(PerfDataReader, MovedReaderContinues) {
  PerfDataBuilder b;
  const int a = b.AddAttr(PebsAttr(1));
  for (int i = 0; i < 10; ++i) b.AddSample(a, PebsSample(1, i));
  PerfDataBuilder::Options o;
  o.compress = true;
  o.max_payload = 50;
  const std::string file = b.File(o);
  auto r = PerfDataReader::OpenBuffer(file);
  ASSERT_TRUE(r.ok());
  Sample s;
  ASSERT_TRUE(r->Next(&s));
  ASSERT_TRUE(r->Next(&s));
  PerfDataReader moved = std::move(*r);
  Drained d = Drain(moved);
  ASSERT_EQ(d.samples.size(), 8u);
  ExpectPebs(d.samples[0], PebsSample(1, 2));
}

// ---------------------------------------------------------------------------
// Errors

TEST(PerfDataReaderErrors, NotAPerfDataFile) {
  auto empty = PerfDataReader::OpenBuffer("", "empty.data");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("empty.data"), std::string::npos);
  auto text = PerfDataReader::OpenBuffer("hello, this is not perf data at all",
                                         "text.data");
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("not a perf.data file"),
            std::string::npos)
      << text.status();
  std::string v1(104, '\0');
  std::memcpy(v1.data(), "PERFFILE", 8);
  EXPECT_EQ(PerfDataReader::OpenBuffer(v1).status().code(),
            absl::StatusCode::kUnimplemented);
  std::string be(104, '\0');
  std::memcpy(be.data(), "2ELIFREP", 8);
  auto big = PerfDataReader::OpenBuffer(be);
  EXPECT_EQ(big.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(big.status().message().find("big-endian"), std::string::npos);
}

TEST(PerfDataReaderErrors, OpenNamesThePath) {
  auto missing = PerfDataReader::Open("/nonexistent/perf.data");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("/nonexistent/perf.data"),
            std::string::npos);
  auto dir = PerfDataReader::Open("/");
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find("not a regular file"),
            std::string::npos);
}

TEST(PerfDataReaderErrors, CorruptHeaderFields) {
  PerfDataBuilder b;
  const int a = b.AddAttr(PebsAttr(1));
  b.AddSample(a, PebsSample(1, 0));
  const std::string good = b.File();
  auto with = [&](int off, uint64_t v) {
    std::string f = good;
    std::memcpy(&f[off], &v, 8);
    return PerfDataReader::OpenBuffer(f, "bad.data").status();
  };
  EXPECT_FALSE(with(pf::kFhSize, 40).ok());
  EXPECT_FALSE(with(pf::kFhAttrSize, 8).ok());
  EXPECT_FALSE(with(pf::kFhAttrSize, 1 << 20).ok());
  EXPECT_FALSE(with(pf::kFhAttrs, 1ULL << 40).ok());
  EXPECT_FALSE(with(pf::kFhAttrs + 8, 0).ok());
  EXPECT_FALSE(with(pf::kFhAttrs + 8, ~0ULL).ok());
  EXPECT_FALSE(with(pf::kFhData, 1ULL << 40).ok());
  EXPECT_FALSE(with(pf::kFhData + 8, ~0ULL - 50).ok());
  absl::Status st = with(pf::kFhAttrSize, 8);
  EXPECT_NE(st.message().find("bad.data"), std::string::npos) << st;
  EXPECT_NE(st.message().find("byte 16"), std::string::npos) << st;
}

TEST(PerfDataReaderErrors, BadRecordSizeKeepsWhatCameBefore) {
  PerfDataBuilder b;
  const int a = b.AddAttr(PebsAttr(1));
  b.AddSample(a, PebsSample(1, 0));
  b.AddSample(a, PebsSample(1, 1));
  b.AddBytes(std::string("\x09\0\0\0\0\0\x04\0", 8));  // size 4 < header
  b.AddSample(a, PebsSample(1, 2));
  Drained d = DrainBuffer(b.Pipe());
  EXPECT_EQ(d.samples.size(), 2u);
  ASSERT_FALSE(d.status.ok());
  EXPECT_EQ(d.status.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(d.status.message().find("test.data"), std::string::npos)
      << d.status;
  EXPECT_NE(d.status.message().find("at byte"), std::string::npos) << d.status;
  EXPECT_NE(d.status.message().find("2 samples before it"), std::string::npos)
      << d.status;
}

TEST(PerfDataReaderErrors, SampleTooShortForItsFields) {
  PerfDataBuilder b;
  TestAttr attr = PebsAttr(1);
  attr.sample_type |= pf::kSampleCallchain;
  const int a = b.AddAttr(attr);
  const int f = b.AddAttr(PebsAttr(2));
  b.AddSample(a, PebsSample(1, 0));
  std::string body =
      ::hotpage::testing::EncodeSample(b.attr(a), PebsSample(1, 1));
  // Callchain nr (after IDENTIFIER..PERIOD, 7 u64s) far beyond the record.
  const uint64_t huge = ~0ULL / 4;
  std::memcpy(&body[7 * 8], &huge, 8);
  b.AddRecord(pf::kRecordSample, body);
  Drained d = DrainBuffer(b.File());
  EXPECT_EQ(d.samples.size(), 1u);
  EXPECT_FALSE(d.status.ok());
  // The fixed layout checks the size up front.
  PerfDataBuilder c;
  const int p = c.AddAttr(PebsAttr(2));
  (void)f;
  c.AddRecord(pf::kRecordSample,
              ::hotpage::testing::EncodeSample(c.attr(p), PebsSample(2, 0))
                  .substr(0, 40));
  Drained e = DrainBuffer(c.File());
  EXPECT_EQ(e.samples.size(), 0u);
  EXPECT_NE(e.status.message().find("too short"), std::string::npos)
      << e.status;
}

TEST(PerfDataReaderErrors, CorruptZstdData) {
  PerfDataBuilder b;
  const int a = b.AddAttr(PebsAttr(1));
  for (int i = 0; i < 100; ++i) b.AddSample(a, PebsSample(1, i));
  PerfDataBuilder::Options o;
  o.compress = true;
  o.flush_bytes = 1000;
  std::string pipe = b.Pipe(o);
  // Garble the zstd payload of the last compressed record.
  for (size_t i = pipe.size() - 30; i < pipe.size(); ++i) pipe[i] ^= 0x5a;
  Drained d = DrainBuffer(pipe);
  EXPECT_FALSE(d.status.ok());
  EXPECT_LT(d.samples.size(), 100u);
}

// Cutting a file anywhere gives an error (or, in pipe mode at a record
// boundary, a clean end) and a prefix of the samples, never a crash.
void CheckEveryTruncation(const std::string& full, bool pipe,
                          const std::vector<size_t>& ends, size_t step) {
  Drained all = DrainBuffer(full);
  ASSERT_TRUE(all.status.ok()) << all.status;
  for (size_t len = 0; len < full.size(); len += step) {
    SCOPED_TRACE(len);
    auto r = PerfDataReader::OpenBuffer(absl::string_view(full.data(), len),
                                        "cut.data");
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find("cut.data"), std::string::npos);
      continue;
    }
    Drained d = Drain(*r);
    ASSERT_LE(d.samples.size(), all.samples.size());
    for (size_t i = 0; i < d.samples.size(); ++i) {
      ASSERT_EQ(d.samples[i].vaddr, all.samples[i].vaddr) << i;
      ASSERT_EQ(d.samples[i].time_ns, all.samples[i].time_ns) << i;
    }
    const bool at_boundary =
        std::find(ends.begin(), ends.end(), len) != ends.end();
    if (!(pipe && at_boundary)) {
      EXPECT_FALSE(d.status.ok()) << "a cut file read as complete";
      EXPECT_NE(d.status.message().find("at byte"), std::string::npos)
          << d.status;
    }
  }
}

// Byte offsets where records end in an uncompressed pipe file.
std::vector<size_t> RecordEnds(const std::string& f) {
  std::vector<size_t> ends = {16};
  size_t pos = 16;
  while (pos + 8 <= f.size()) {
    uint16_t size;
    std::memcpy(&size, &f[pos + 6], 2);
    if (size < 8) break;
    pos += size;
    ends.push_back(pos);
  }
  return ends;
}

TEST(PerfDataReaderErrors, TruncationAtEveryOffset) {
  PerfDataBuilder b;
  const int x = b.AddAttr(PebsAttr(1));
  const int y = b.AddAttr(PebsAttr(2));
  for (int i = 0; i < 40; ++i)
    b.AddSample(i % 3 ? x : y, PebsSample(i % 3 ? 1 : 2, i));
  const std::string pipe = b.Pipe();
  CheckEveryTruncation(b.File(), false, {}, 1);
  CheckEveryTruncation(pipe, true, RecordEnds(pipe), 1);
  PerfDataBuilder::Options o;
  o.compress = true;
  o.flush_bytes = 700;
  o.max_payload = 90;
  const std::string zpipe = b.Pipe(o);
  CheckEveryTruncation(b.File(o), false, {}, 1);
  CheckEveryTruncation(zpipe, true, RecordEnds(zpipe), 1);
}

// The same on files perf recorded: cuts every 3 bytes, and at and around
// every record boundary of the pipe file.
TEST(PerfDataReaderErrors, TruncatedRecordingsKeepAValidPrefix) {
  const std::string file = ReadFile(TestdataPath("touch16.file.perf.data"));
  const std::string pipe = ReadFile(TestdataPath("touch16.pipe.perf.data"));
  const std::string zstd = ReadFile(TestdataPath("touch16.zstd.perf.data"));
  ASSERT_FALSE(file.empty() || pipe.empty() || zstd.empty());
  CheckEveryTruncation(file, false, {}, 3);
  CheckEveryTruncation(zstd, false, {}, 1);
  const std::vector<size_t> ends = RecordEnds(pipe);
  CheckEveryTruncation(pipe, true, ends, 3);
  for (size_t end : ends) {
    for (size_t len : {end - 1, end, end + 1}) {
      if (len >= pipe.size()) continue;
      auto r = PerfDataReader::OpenBuffer(absl::string_view(pipe.data(), len));
      if (!r.ok()) continue;
      Drained d = Drain(*r);
      EXPECT_EQ(d.status.ok(), len == end) << len;
    }
  }
}

// ---------------------------------------------------------------------------
// Real files

struct RealFile {
  const char* name;
  PerfDataMode mode;
  uint64_t sample_records;
  uint64_t samples;
  uint64_t throttle, unthrottle, lost_samples_records, lost_samples;
  std::vector<std::string> events;
  std::vector<uint64_t>
      event_records;  // samples per event (with or without address)
  std::vector<uint64_t> cpu_records;  // sample records per CPU, empty if no CPU
  std::vector<uint64_t> cpu_throttle, cpu_unthrottle;
  // What the returned samples are tagged: kPageFault for the software
  // page-fault events (PerfEventSampleSource).
  SampleSource source = SampleSource::kPerfData;
  uint64_t period_sum = 0;  // of the returned samples (perf script's period)
};

// Counts checked against perf 6.1 (`perf report -D`, and per CPU
// `perf script --dump-unsorted-raw-trace`); see testdata/perf/README.md.
const RealFile kRealFiles[] = {
    {"perf.data.throttle-3.8",
     PerfDataMode::kFile,
     14980,
     0,
     68,
     64,
     0,
     0,
     {"cycles", "instructions"},
     {9036, 5944},
     {8217, 1409, 5075, 279},
     {39, 5, 22, 2},
     {38, 4, 21, 1}},
    {"perf.data.lost_samples-4.4",
     PerfDataMode::kFile,
     191,
     0,
     0,
     0,
     2,
     2,
     {"cycles:pp", "instructions:pp", "branch-instructions:pp"},
     {97, 80, 14},
     {},
     {},
     {}},
    {"perf.data.piped.target.throttled-3.4",
     PerfDataMode::kPipe,
     228,
     0,
     1,
     1,
     0,
     0,
     {"cycles"},
     {228},
     {4, 9, 112, 103},
     {0, 0, 0, 1},
     {0, 0, 0, 1}},
    {"touch16.file.perf.data",
     PerfDataMode::kFile,
     272,
     272,
     0,
     0,
     0,
     0,
     {"page-faults", "minor-faults"},
     {136, 136},
     {16, 256},
     {0, 0},
     {0, 0},
     SampleSource::kPageFault,
     272},
    {"touch16.pipe.perf.data",
     PerfDataMode::kPipe,
     276,
     276,
     0,
     0,
     0,
     0,
     {"page-faults", "minor-faults"},
     {138, 138},
     {22, 254},
     {0, 0},
     {0, 0},
     SampleSource::kPageFault,
     276},
    {"touch16.zstd.perf.data",
     PerfDataMode::kFile,
     276,
     276,
     0,
     0,
     0,
     0,
     {"page-faults", "minor-faults"},
     {138, 138},
     {22, 254},
     {0, 0},
     {0, 0},
     SampleSource::kPageFault,
     276},
    // `perf record -e page-faults -d` as people without a PMU type it:
    // frequency mode, so the period (faults per sample) is sampled.
    {"pagefaults.dd.perf.data",
     PerfDataMode::kFile,
     9,
     9,
     0,
     0,
     0,
     0,
     {"page-faults"},
     {9},
     {},
     {},
     {},
     SampleSource::kPageFault,
     418},
};

class RealFileTest : public ::testing::TestWithParam<RealFile> {};

TEST_P(RealFileTest, CountsMatchPerf) {
  const RealFile& want = GetParam();
  auto r = PerfDataReader::Open(TestdataPath(want.name));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->mode(), want.mode);
  Drained d = Drain(*r);
  ASSERT_TRUE(d.status.ok()) << d.status;
  const PerfDataStats& st = d.stats;
  EXPECT_EQ(st.sample_records, want.sample_records);
  EXPECT_EQ(st.samples, want.samples);
  EXPECT_EQ(st.samples + st.skipped_no_addr, want.sample_records);
  EXPECT_EQ(st.skipped_unknown_id, 0u);
  EXPECT_EQ(st.throttle, want.throttle);
  EXPECT_EQ(st.unthrottle, want.unthrottle);
  EXPECT_EQ(st.lost_samples_records, want.lost_samples_records);
  EXPECT_EQ(st.lost_samples, want.lost_samples);
  EXPECT_EQ(st.lost_records, 0u);
  EXPECT_EQ(st.unknown_records, 0u);
  ASSERT_EQ(st.events.size(), want.events.size());
  for (size_t i = 0; i < want.events.size(); ++i) {
    EXPECT_EQ(st.events[i].name, want.events[i]);
    EXPECT_EQ(st.events[i].samples + st.events[i].skipped_no_addr,
              want.event_records[i]);
  }
  if (want.cpu_records.empty()) {
    EXPECT_TRUE(st.per_cpu.empty());
    EXPECT_EQ(st.no_cpu.skipped_no_addr + st.no_cpu.samples,
              want.sample_records);
    EXPECT_EQ(st.no_cpu.lost_samples, want.lost_samples);
  } else {
    ASSERT_EQ(st.per_cpu.size(), want.cpu_records.size());
    for (size_t c = 0; c < st.per_cpu.size(); ++c) {
      SCOPED_TRACE(c);
      EXPECT_EQ(st.per_cpu[c].samples + st.per_cpu[c].skipped_no_addr,
                want.cpu_records[c]);
      EXPECT_EQ(st.per_cpu[c].throttle, want.cpu_throttle[c]);
      EXPECT_EQ(st.per_cpu[c].unthrottle, want.cpu_unthrottle[c]);
    }
  }
  uint64_t period_sum = 0;
  for (const Sample& s : d.samples) {
    ASSERT_NE(s.vaddr, 0u);
    ASSERT_EQ(s.source, want.source);
    period_sum += s.period;
  }
  // touch16: recorded with -c 1, one fault per sample.
  EXPECT_EQ(period_sum, want.period_sum);
  for (const PerfEventInfo& e : st.events) EXPECT_EQ(e.source, want.source);
}

INSTANTIATE_TEST_SUITE_P(Testdata, RealFileTest,
                         ::testing::ValuesIn(kRealFiles),
                         [](const ::testing::TestParamInfo<RealFile>& info) {
                           std::string n = info.param.name;
                           for (char& c : n) {
                             if (!isalnum(static_cast<unsigned char>(c)))
                               c = '_';
                           }
                           return n;
                         });

// touch_pages touched 16 pages at base + i * 4096 + (i * 64) % 4096: both
// events saw each first touch, with its physical address on minor-faults.
TEST(PerfDataReaderRealFiles, RecordedFilesHoldTheTouchedAddresses) {
  for (const char* mode : {"file", "pipe", "zstd"}) {
    SCOPED_TRACE(mode);
    const std::string info =
        ReadFile(TestdataPath(absl::StrCat("touch16.", mode, ".txt")));
    const uint64_t base =
        std::strtoull(info.c_str() + info.find("base=") + 5, nullptr, 16);
    ASSERT_NE(base, 0u);
    auto r = PerfDataReader::Open(
        TestdataPath(absl::StrCat("touch16.", mode, ".perf.data")));
    ASSERT_TRUE(r.ok()) << r.status();
    Drained d = Drain(*r);
    for (uint64_t i = 0; i < 16; ++i) {
      const uint64_t addr = base + i * 4096 + (i * 64) % 4096;
      int seen[2] = {0, 0};
      for (size_t k = 0; k < d.samples.size(); ++k) {
        if (d.samples[k].vaddr != addr) continue;
        ++seen[d.origins[k].event];
        if (d.origins[k].event == 1) {
          EXPECT_EQ(d.samples[k].paddr % 4096, addr % 4096);
        }
        EXPECT_EQ(d.samples[k].data_src,
                  0x1e05080021u);  // PERF_MEM_NA, as perf prints it
      }
      EXPECT_EQ(seen[0], 1) << "page " << i;
      EXPECT_EQ(seen[1], 1) << "page " << i;
    }
  }
}

// Mutated copies of real files (bit flips, overwritten size fields, random
// bytes): whatever happens, no crash, and what is returned is consistent.
// The coverage-guided version is //sampler/perf:perf_data_fuzzer.
TEST(PerfDataReaderRealFiles, MutatedFilesNeverCrash) {
  std::mt19937_64 rng(7);
  for (const char* name :
       {"touch16.file.perf.data", "touch16.pipe.perf.data",
        "touch16.zstd.perf.data", "perf.data.lost_samples-4.4"}) {
    const std::string original = ReadFile(TestdataPath(name));
    ASSERT_FALSE(original.empty()) << name;
    for (int round = 0; round < 300; ++round) {
      std::string f = original;
      const int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits; ++e) {
        const size_t at = rng() % f.size();
        switch (rng() % 4) {
          case 0:
            f[at] ^= static_cast<char>(1 << (rng() % 8));
            break;
          case 1:
            f[at] = static_cast<char>(rng());
            break;
          case 2: {  // a plausible-looking u16/u64 field
            const uint64_t v = rng() % 3 == 0 ? ~0ULL : rng() % 0x10000;
            std::memcpy(&f[at], &v, std::min<size_t>(8, f.size() - at));
            break;
          }
          case 3:
            f.resize(at);
            break;
        }
        if (f.empty()) break;
      }
      auto r = PerfDataReader::OpenBuffer(f, "mutated.data");
      if (!r.ok()) continue;
      Sample s;
      uint64_t n = 0;
      while (r->Next(&s)) {
        ASSERT_NE(s.vaddr, 0u);
        ++n;
      }
      ASSERT_TRUE(r->done());
      ASSERT_EQ(r->stats().samples, n);
    }
  }
}

TEST(PerfEventDefaultName, LikePerf) {
  EXPECT_EQ(PerfEventDefaultName(0, 0), "cycles");
  EXPECT_EQ(PerfEventDefaultName(1, 2), "page-faults");
  EXPECT_EQ(PerfEventDefaultName(1, 5), "minor-faults");
  EXPECT_EQ(PerfEventDefaultName(4, 0x1cd), "raw 0x1cd");
  EXPECT_EQ(PerfEventDefaultName(11, 3), "type 11 config 0x3");
}

}  // namespace
}  // namespace hotpage
