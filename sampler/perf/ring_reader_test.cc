#include "sampler/perf/ring_reader.h"

#include <linux/perf_event.h>

#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "sampler/perf/synthetic_ring.h"

namespace hotpage {
namespace {

constexpr uint64_t kPebsType =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
    PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
    PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_PHYS_ADDR;

PerfEventLayout Layout(SampleSource src = SampleSource::kPebsLoad) {
  PerfEventLayout l;
  l.sample_type = kPebsType;
  l.sample_id_all = true;
  l.source = src;
  return l;
}

// The body of a PEBS-shaped sample, in the kernel's field order.
std::vector<uint64_t> SampleBody(uint64_t id, uint32_t pid, uint32_t tid,
                                 uint64_t time, uint64_t addr, uint32_t cpu,
                                 uint64_t period = 1000, uint32_t weight = 77,
                                 uint64_t data_src = 0, uint64_t phys = 0) {
  return {id,  0x401000, uint64_t{tid} << 32 | pid,  time,     addr,
          cpu, period,   uint64_t{3} << 32 | weight, data_src, phys};
}

// sample_id trailer for kPebsType: TID, TIME, CPU, IDENTIFIER.
std::vector<uint64_t> WithTrailer(std::vector<uint64_t> body, uint64_t id,
                                  uint32_t cpu = 0) {
  body.push_back(1);
  body.push_back(0);
  body.push_back(cpu);
  body.push_back(id);
  return body;
}

TEST(RingReader, DecodesEveryFieldAndCountsSideRecordsAtEveryWrapOffset) {
  constexpr size_t kData = 4096;
  // Start the ring at every 8-byte offset so records wrap everywhere,
  // including inside the header's neighbourhood and mid-body.
  for (uint64_t pos = 0; pos < 2 * kData; pos += 8) {
    SyntheticRing ring(kData);
    ring.SetPosition(pos + 3 * kData);  // head/tail far from 0, like a long run
    PidFilter filter = PidFilter::All();
    RingReader reader(ring.base(), SyntheticRing::kPage, kData, {{7, Layout()}},
                      &filter);
    const uint64_t src = uint64_t{PERF_MEM_LVLNUM_RAM}
                             << PERF_MEM_LVLNUM_SHIFT |
                         uint64_t{PERF_MEM_OP_LOAD} << PERF_MEM_OP_SHIFT;
    ASSERT_TRUE(ring.Write(PERF_RECORD_SAMPLE,
                           SampleBody(7, 10, 11, 100, 0x7f0000001000, 1, 500,
                                      99, src, 0x1234000)));
    ASSERT_TRUE(ring.Write(PERF_RECORD_LOST, WithTrailer({7, 5}, 7)));
    ASSERT_TRUE(ring.Write(PERF_RECORD_THROTTLE, WithTrailer({200, 7, 7}, 7)));
    ASSERT_TRUE(ring.Write(PERF_RECORD_SAMPLE,
                           SampleBody(7, 10, 12, 300, 0x7f0000002040, 0)));
    ASSERT_TRUE(
        ring.Write(PERF_RECORD_UNTHROTTLE, WithTrailer({400, 7, 7}, 7)));
    ASSERT_TRUE(ring.Write(PERF_RECORD_LOST_SAMPLES, WithTrailer({3}, 7)));
    ASSERT_TRUE(
        ring.Write(PERF_RECORD_COMM, WithTrailer({10, 10, 0x6f6c6c6568}, 7)));

    Sample out[8];
    size_t n = reader.Drain(out, 8, 1 << 20);
    ASSERT_EQ(n, 2u) << "pos " << pos;
    EXPECT_EQ(out[0].pid, 10u);
    EXPECT_EQ(out[0].tid, 11u);
    EXPECT_EQ(out[0].time_ns, 100u);
    EXPECT_EQ(out[0].vaddr, 0x7f0000001000u);
    EXPECT_EQ(out[0].cpu, 1u);
    EXPECT_EQ(out[0].period, 500u);
    EXPECT_EQ(out[0].weight, 99u);
    EXPECT_EQ(out[0].data_src, src);
    EXPECT_EQ(out[0].level, MemLevel::kLocalDram);
    EXPECT_EQ(out[0].paddr, 0x1234000u);
    EXPECT_EQ(out[0].source, SampleSource::kPebsLoad);
    EXPECT_EQ(out[1].tid, 12u);
    EXPECT_EQ(out[1].vaddr, 0x7f0000002040u);
    const RingCounters& c = reader.counters();
    EXPECT_EQ(c.records, 7u);
    EXPECT_EQ(c.lost, 5u);
    EXPECT_EQ(c.lost_records, 1u);
    EXPECT_EQ(c.lost_samples, 3u);
    EXPECT_EQ(c.throttle, 1u);
    EXPECT_EQ(c.unthrottle, 1u);
    EXPECT_EQ(c.other, 1u);
    EXPECT_EQ(c.malformed, 0u);
    EXPECT_EQ(reader.Pending(), 0u);
    EXPECT_EQ(ring.meta()->data_tail, ring.meta()->data_head);
  }
}

TEST(RingReader, ByteBudgetAndOutputCapacityLeaveTheRestForLater) {
  SyntheticRing ring(1 << 16);
  PidFilter filter = PidFilter::All();
  RingReader reader(ring.base(), SyntheticRing::kPage, 1 << 16, {{7, Layout()}},
                    &filter);
  constexpr int kSamples = 100;
  for (int i = 0; i < kSamples; ++i) {
    ASSERT_TRUE(ring.Write(PERF_RECORD_SAMPLE,
                           SampleBody(7, 1, 1, i, 0x1000 + 64 * i, 0)));
  }
  const size_t rec = 8 + 8 * 10;
  Sample out[kSamples];
  // Budget of 5 records' worth of bytes: exactly 5 consumed.
  EXPECT_EQ(reader.Drain(out, kSamples, 5 * rec), 5u);
  EXPECT_EQ(reader.Pending(), (kSamples - 5) * rec);
  // Output capacity 10: stops there.
  EXPECT_EQ(reader.Drain(out, 10, 1 << 20), 10u);
  EXPECT_EQ(out[0].time_ns, 5u);
  size_t rest = reader.Drain(out, kSamples, 1 << 20);
  EXPECT_EQ(rest, kSamples - 15u);
  EXPECT_EQ(out[rest - 1].time_ns, kSamples - 1u);
  EXPECT_EQ(reader.counters().samples, uint64_t{kSamples});
}

TEST(RingReader, FiltersKernelZeroAndOtherProcessesAndCountsThem) {
  SyntheticRing ring(1 << 14);
  PidFilter filter({42});
  RingReader reader(ring.base(), SyntheticRing::kPage, 1 << 14, {{7, Layout()}},
                    &filter);
  ring.Write(PERF_RECORD_SAMPLE, SampleBody(7, 42, 42, 1, 0x7000, 0));
  ring.Write(PERF_RECORD_SAMPLE,
             SampleBody(7, 42, 43, 2, 0xffffffff81000000ull, 0));  // kernel
  ring.Write(PERF_RECORD_SAMPLE, SampleBody(7, 42, 43, 3, 0, 0));  // no address
  ring.Write(PERF_RECORD_SAMPLE,
             SampleBody(7, 99, 99, 4, 0x7000, 0));  // other pid
  ring.Write(PERF_RECORD_SAMPLE,
             SampleBody(7, 42, 44, 5, 0x8000, 0));  // a later thread
  Sample out[8];
  ASSERT_EQ(reader.Drain(out, 8, 1 << 20), 2u);
  EXPECT_EQ(out[1].tid, 44u);
  EXPECT_EQ(reader.counters().filtered_kernel, 1u);
  EXPECT_EQ(reader.counters().filtered_zero, 1u);
  EXPECT_EQ(reader.counters().filtered_pid, 1u);
}

TEST(RingReader, FollowsForkedChildProcessesButNotThreads) {
  SyntheticRing ring(1 << 14);
  PidFilter filter({42});
  RingReader reader(ring.base(), SyntheticRing::kPage, 1 << 14, {{7, Layout()}},
                    &filter);
  // FORK {pid, ppid, tid, ptid, time}: a thread (pid 42, tid 50) ...
  ring.Write(
      PERF_RECORD_FORK,
      WithTrailer({uint64_t{42} << 32 | 42, uint64_t{42} << 32 | 50, 9}, 7));
  // ... and a child process 60 of 42.
  ring.Write(
      PERF_RECORD_FORK,
      WithTrailer({uint64_t{42} << 32 | 60, uint64_t{42} << 32 | 60, 9}, 7));
  // An unrelated fork: 70 of 99.
  ring.Write(
      PERF_RECORD_FORK,
      WithTrailer({uint64_t{99} << 32 | 70, uint64_t{99} << 32 | 70, 9}, 7));
  ring.Write(PERF_RECORD_SAMPLE, SampleBody(7, 60, 60, 1, 0x7000, 0));
  ring.Write(PERF_RECORD_SAMPLE, SampleBody(7, 70, 70, 1, 0x7000, 0));
  Sample out[4];
  ASSERT_EQ(reader.Drain(out, 4, 1 << 20), 1u);
  EXPECT_EQ(out[0].pid, 60u);
  EXPECT_EQ(reader.counters().forks_followed, 1u);
  EXPECT_EQ(filter.tgids(), (std::vector<uint32_t>{42, 60}));
}

TEST(RingReader, SeveralEventsAreTellApartByIdentifier) {
  SyntheticRing ring(1 << 14);
  PidFilter filter = PidFilter::All();
  RingReader reader(ring.base(), SyntheticRing::kPage, 1 << 14,
                    {{7, Layout(SampleSource::kPebsLoad)},
                     {8, Layout(SampleSource::kPebsStore)}},
                    &filter);
  ring.Write(PERF_RECORD_SAMPLE, SampleBody(8, 1, 1, 1, 0x7000, 0));
  ring.Write(PERF_RECORD_SAMPLE, SampleBody(7, 1, 1, 2, 0x7000, 0));
  ring.Write(PERF_RECORD_SAMPLE,
             SampleBody(9, 1, 1, 3, 0x7000, 0));  // unknown id
  Sample out[4];
  ASSERT_EQ(reader.Drain(out, 4, 1 << 20), 2u);
  EXPECT_EQ(out[0].source, SampleSource::kPebsStore);
  EXPECT_EQ(out[1].source, SampleSource::kPebsLoad);
  EXPECT_EQ(reader.counters().unknown_event, 1u);
}

// D7: the mem-loads-aux leader's records (keep=false) are counted and
// dropped, never decoded as loads, though they carry a plausible address.
TEST(RingReader, RecordsOfAnEventNotKeptAreCountedAndDropped) {
  SyntheticRing ring(1 << 14);
  PidFilter filter = PidFilter::All();
  RingEvent aux{11, Layout(SampleSource::kPebsLoad)};
  aux.keep = false;
  RingReader reader(ring.base(), SyntheticRing::kPage, 1 << 14,
                    {aux, {22, Layout(SampleSource::kPebsLoad)}}, &filter);
  ring.Write(PERF_RECORD_SAMPLE, SampleBody(11, 1, 1, 1, 0x7000, 0));
  ring.Write(PERF_RECORD_SAMPLE, SampleBody(22, 1, 1, 2, 0x8000, 0));
  ring.Write(PERF_RECORD_SAMPLE, SampleBody(11, 1, 1, 3, 0x9000, 0));
  Sample out[4];
  ASSERT_EQ(reader.Drain(out, 4, 1 << 20), 1u);
  EXPECT_EQ(out[0].vaddr, 0x8000u);
  EXPECT_EQ(reader.counters().aux_dropped, 2u);
  EXPECT_EQ(reader.counters().samples, 1u);
  EXPECT_EQ(reader.counters().unknown_event, 0u);
  EXPECT_EQ(reader.counters().filtered_zero, 0u);

  // The same when the ring's only other event is listed under many ids
  // (per-task rings: one per target thread), in any order.
  SyntheticRing ring2(1 << 14);
  std::vector<RingEvent> events;
  for (uint64_t id = 100; id > 90; --id) {
    events.push_back({id, Layout(SampleSource::kPebsLoad)});
  }
  events.push_back(aux);
  RingReader many(ring2.base(), SyntheticRing::kPage, 1 << 14, events, &filter);
  ring2.Write(PERF_RECORD_SAMPLE, SampleBody(11, 1, 1, 1, 0x7000, 0));
  ring2.Write(PERF_RECORD_SAMPLE, SampleBody(95, 1, 1, 2, 0x8000, 0));
  ring2.Write(PERF_RECORD_SAMPLE, SampleBody(100, 1, 1, 3, 0x8040, 0));
  ring2.Write(PERF_RECORD_SAMPLE, SampleBody(50, 1, 1, 4, 0x8080, 0));
  ASSERT_EQ(many.Drain(out, 4, 1 << 20), 2u);
  EXPECT_EQ(many.counters().aux_dropped, 1u);
  EXPECT_EQ(many.counters().unknown_event, 1u);
  // A lone event not kept drops everything, by id or not.
  SyntheticRing ring3(1 << 14);
  RingReader lone(ring3.base(), SyntheticRing::kPage, 1 << 14, {aux}, &filter);
  ring3.Write(PERF_RECORD_SAMPLE, SampleBody(11, 1, 1, 1, 0x7000, 0));
  EXPECT_EQ(lone.Drain(out, 4, 1 << 20), 0u);
  EXPECT_EQ(lone.counters().aux_dropped, 1u);
}

// IBS op samples as kernels before 6.1 write them: ADDR and DATA_SRC are
// not filled (0 and PERF_MEM_NA), the registers are in the RAW block
// {u32 size; u32 caps; u64 IbsOpCtl, IbsOpRip, IbsOpData, IbsOpData2,
// IbsOpData3, IbsDcLinAd, IbsDcPhysAd} (perf_ibs_handle_irq()).
constexpr uint64_t kIbsRawType =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
    PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
    PERF_SAMPLE_RAW | PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC;
constexpr uint64_t kMemNa = 0x5080021;  // PERF_MEM_NA

std::vector<uint64_t> IbsRawBody(uint64_t id, uint64_t time, uint64_t data3,
                                 uint64_t lin_ad) {
  std::vector<uint64_t> b = {id,         0x401000,  uint64_t{5} << 32 | 5, time,
                             /*addr=*/0, /*cpu=*/2, /*period=*/0x10000};
  // RAW: u32 size = 4 (caps) + 7 * 8, then caps, then the registers; the
  // whole block is 64 bytes, so the next field stays 8-aligned.
  const uint32_t size = 4 + 7 * 8;
  const uint32_t caps = 0x3ff;
  uint8_t raw[64] = {};
  std::memcpy(raw, &size, 4);
  std::memcpy(raw + 4, &caps, 4);
  const uint64_t regs[7] = {0x1, 0x401000, 0, 0, data3, lin_ad, 0x1234000};
  std::memcpy(raw + 8, regs, sizeof(regs));
  for (int i = 0; i < 8; ++i) {
    uint64_t w;
    std::memcpy(&w, raw + 8 * i, 8);
    b.push_back(w);
  }
  b.push_back(0);       // WEIGHT_STRUCT: not filled before 6.1
  b.push_back(kMemNa);  // DATA_SRC: PERF_MEM_NA before 6.1
  return b;
}

PerfEventLayout IbsLayout(uint64_t sample_type) {
  PerfEventLayout l;
  l.sample_type = sample_type;
  l.sample_id_all = true;
  l.source = SampleSource::kIbsOp;
  return l;
}

// D2: before 6.1 the address arrives only through RAW.
TEST(RingReader, IbsSamplesBefore61TakeTheAddressFromTheRawBlock) {
  SyntheticRing ring(1 << 14);
  PidFilter filter = PidFilter::All();
  RingReader reader(ring.base(), SyntheticRing::kPage, 1 << 14,
                    {{7, IbsLayout(kIbsRawType)}}, &filter);
  // A load that missed (dc_miss, latency 0x123 in bits 32-47) with a valid
  // linear address, and a store with one.
  const uint64_t ld = 1u | (1u << 7) | (1u << 17) | (uint64_t{0x123} << 32);
  const uint64_t st = 2u | (1u << 17);
  ring.Write(PERF_RECORD_SAMPLE, IbsRawBody(7, 1, ld, 0x7f0000001008));
  ring.Write(PERF_RECORD_SAMPLE, IbsRawBody(7, 2, st, 0x7f0000002010));
  Sample out[4];
  ASSERT_EQ(reader.Drain(out, 4, 1 << 20), 2u);
  EXPECT_EQ(out[0].vaddr, 0x7f0000001008u);
  EXPECT_EQ(out[0].source, SampleSource::kIbsOp);
  EXPECT_EQ(out[0].weight, 0x123u);
  EXPECT_EQ(out[0].flags & kSampleStore, 0);
  EXPECT_EQ(out[0].pid, 5u);
  EXPECT_EQ(out[0].period, 0x10000u);
  EXPECT_EQ(out[1].vaddr, 0x7f0000002010u);
  EXPECT_NE(out[1].flags & kSampleStore, 0);
  EXPECT_EQ(reader.counters().filtered_zero, 0u);
  EXPECT_EQ(reader.counters().malformed, 0u);
}

// D14: ops that are neither loads nor stores are counted on their own, not
// as zero-address (skipped) samples; a load without a valid address is.
TEST(RingReader, IbsNonMemoryOpsAreCountedApart) {
  SyntheticRing ring(1 << 14);
  PidFilter filter = PidFilter::All();
  RingReader reader(ring.base(), SyntheticRing::kPage, 1 << 14,
                    {{7, IbsLayout(kIbsRawType)}}, &filter);
  ring.Write(PERF_RECORD_SAMPLE, IbsRawBody(7, 1, /*data3=*/0, 0));
  ring.Write(PERF_RECORD_SAMPLE, IbsRawBody(7, 2, /*ld_op, no addr=*/1, 0));
  Sample out[4];
  EXPECT_EQ(reader.Drain(out, 4, 1 << 20), 0u);
  EXPECT_EQ(reader.counters().ibs_non_memory, 1u);
  EXPECT_EQ(reader.counters().filtered_zero, 1u);

  // 6.1+: no RAW; a non-memory op has ADDR 0 and DATA_SRC PERF_MEM_NA, a
  // memory op mem_op LOAD/STORE (perf_ibs_get_mem_op()).
  constexpr uint64_t kIbs61Type = kIbsRawType & ~uint64_t{PERF_SAMPLE_RAW};
  SyntheticRing ring2(1 << 14);
  RingReader r61(ring2.base(), SyntheticRing::kPage, 1 << 14,
                 {{7, IbsLayout(kIbs61Type)}}, &filter);
  auto body61 = [](uint64_t time, uint64_t addr, uint64_t data_src) {
    return std::vector<uint64_t>{7,       0x401000, uint64_t{5} << 32 | 5,
                                 time,    addr,     2,
                                 0x10000, 0,        data_src};
  };
  const uint64_t load_src = uint64_t{PERF_MEM_OP_LOAD} << PERF_MEM_OP_SHIFT;
  ring2.Write(PERF_RECORD_SAMPLE, body61(1, 0, kMemNa));
  ring2.Write(PERF_RECORD_SAMPLE, body61(2, 0, load_src));
  ring2.Write(PERF_RECORD_SAMPLE, body61(3, 0x7000, load_src));
  EXPECT_EQ(r61.Drain(out, 4, 1 << 20), 1u);
  EXPECT_EQ(r61.counters().ibs_non_memory, 1u);
  EXPECT_EQ(r61.counters().filtered_zero, 1u);
}

// A RAW block that is cut short is malformed, not read past.
TEST(RingReader, IbsRawBlockTooShortIsMalformed) {
  SyntheticRing ring(1 << 14);
  PidFilter filter = PidFilter::All();
  RingReader reader(ring.base(), SyntheticRing::kPage, 1 << 14,
                    {{7, IbsLayout(kIbsRawType)}}, &filter);
  std::vector<uint64_t> b = IbsRawBody(7, 1, 1u | (1u << 17), 0x7000);
  b[7] = (b[7] & ~uint64_t{0xffffffff}) | 4;  // RAW size: caps only
  // The walker then finds WEIGHT/DATA_SRC inside the registers; the IBS
  // decoder must refuse the block instead of reading registers it lacks.
  Sample out[4];
  ring.Write(PERF_RECORD_SAMPLE, b);
  EXPECT_EQ(reader.Drain(out, 4, 1 << 20), 0u);
  EXPECT_EQ(reader.counters().malformed, 1u);
}

TEST(RingReader, MalformedRecordsAreCountedNotFatal) {
  SyntheticRing ring(1 << 14);
  PidFilter filter = PidFilter::All();
  RingReader reader(ring.base(), SyntheticRing::kPage, 1 << 14, {{7, Layout()}},
                    &filter);
  ring.Write(PERF_RECORD_SAMPLE, {7, 0x401000, 1});  // far too short
  ring.Write(PERF_RECORD_LOST, {7});                 // too short
  ring.Write(PERF_RECORD_SAMPLE, SampleBody(7, 1, 1, 1, 0x7000, 0));
  Sample out[4];
  EXPECT_EQ(reader.Drain(out, 4, 1 << 20), 1u);
  EXPECT_EQ(reader.counters().malformed, 2u);
}

TEST(RingReader, CorruptHeaderDropsToHeadInsteadOfLooping) {
  SyntheticRing ring(1 << 12);
  PidFilter filter = PidFilter::All();
  RingReader reader(ring.base(), SyntheticRing::kPage, 1 << 12, {{7, Layout()}},
                    &filter);
  ring.Write(PERF_RECORD_SAMPLE, SampleBody(7, 1, 1, 1, 0x7000, 0));
  // Overwrite the header's size with 0.
  reinterpret_cast<perf_event_header*>(static_cast<uint8_t*>(ring.base()) +
                                       SyntheticRing::kPage)
      ->size = 0;
  Sample out[4];
  EXPECT_EQ(reader.Drain(out, 4, 1 << 20), 0u);
  EXPECT_EQ(reader.counters().malformed, 1u);
  EXPECT_EQ(reader.Pending(), 0u);
}

}  // namespace
}  // namespace hotpage
