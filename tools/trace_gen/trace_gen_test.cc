#include "tools/trace_gen/trace_gen.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "sampler/trace/trace_reader.h"
#include "sampler/trace/trace_writer.h"

namespace hotpage {
namespace trace_gen {
namespace {

std::vector<Sample> Generate(const Workload& w, const GenOptions& g) {
  std::vector<Sample> out;
  GenerateSamples(w, g, [&](const Sample& s) { out.push_back(s); });
  return out;
}

// The whole trace file, in memory.
std::string TraceBytes(const Workload& w, const GenOptions& g) {
  std::string bytes;
  auto writer = TraceWriter::Create(std::make_unique<StringSink>(&bytes),
                                    "mem.hpt", GeneratedHeader(g, "test", ""),
                                    TraceWriter::Options());
  EXPECT_TRUE(writer.ok()) << writer.status();
  absl::StatusOr<GenStats> st = GenerateTrace(w, g, writer->get());
  EXPECT_TRUE(st.ok()) << st.status();
  return bytes;
}

std::unique_ptr<Workload> Must(absl::StatusOr<std::unique_ptr<Workload>> w) {
  EXPECT_TRUE(w.ok()) << w.status();
  return w.ok() ? std::move(*w) : nullptr;
}

// Samples of `all` in [phase.start_ns, phase.end_ns) (absolute time_ns).
std::vector<Sample> InPhase(const std::vector<Sample>& all, const Phase& p,
                            const GenOptions& g) {
  std::vector<Sample> out;
  for (const Sample& s : all) {
    if (s.time_ns >= g.start_clock_ns + p.start_ns &&
        s.time_ns < g.start_clock_ns + p.end_ns) {
      out.push_back(s);
    }
  }
  return out;
}

double ShareIn(const std::vector<Sample>& samples, const Range& r) {
  if (samples.empty()) return 0;
  size_t n = 0;
  for (const Sample& s : samples) n += r.Contains(s.vaddr) ? 1 : 0;
  return static_cast<double>(n) / static_cast<double>(samples.size());
}

// Checks every generated trace must pass: PEBS-like fields, time order,
// addresses inside the workload's regions.
void CheckPebsLike(const Workload& w, const GenOptions& g,
                   const std::vector<Sample>& samples) {
  const GroundTruth truth = w.Truth();
  ASSERT_FALSE(samples.empty());
  uint64_t prev = 0;
  for (const Sample& s : samples) {
    ASSERT_GE(s.time_ns, prev) << "time goes back";
    prev = s.time_ns;
    ASSERT_GE(s.time_ns, g.start_clock_ns);
    ASSERT_LT(s.time_ns, g.start_clock_ns + internal::DurationNs(g));
    ASSERT_EQ(s.pid, g.pid);
    ASSERT_EQ(s.period, g.sample_period);
    ASSERT_EQ(s.paddr, 0u);
    ASSERT_EQ(s.reserved, 0u);
    bool inside = false;
    for (const NamedRange& r : truth.regions)
      inside |= r.range.Contains(s.vaddr);
    ASSERT_TRUE(inside) << std::hex << s.vaddr;
    ASSERT_EQ(s.vaddr % 8, 0u) << "64-bit words";
    const DecodedDataSrc d = DecodeDataSrc(s.data_src);
    ASSERT_EQ(s.level, d.level);
    ASSERT_EQ(s.tlb, d.tlb);
    ASSERT_NE(s.tlb, TlbOutcome::kUnknown);
    if (s.flags & kSampleStore) {
      ASSERT_TRUE(d.is_store);
      ASSERT_EQ(s.source, SampleSource::kPebsStore);
      ASSERT_EQ(s.weight, 0u) << "PEBS store samples carry no latency";
    } else {
      ASSERT_FALSE(d.is_store);
      ASSERT_EQ(s.source, SampleSource::kPebsLoad);
      ASSERT_GE(s.weight, 30u)
          << "ldlat=30: only loads of 30+ cycles are sampled";
      ASSERT_LT(s.weight, 1000u);
      ASSERT_TRUE(s.level == MemLevel::kL3 || s.level == MemLevel::kLfb ||
                  s.level == MemLevel::kLocalDram)
          << MemLevelName(s.level);
    }
  }
}

TEST(GupsTest, HotSetGetsItsShareAndShifts) {
  GenOptions g;
  GupsOptions o;  // 8192 pages, 10% hot, 90% of accesses, shift every 20 s
  const auto w = Must(MakeGups(o, g));
  const std::vector<Sample> samples = Generate(*w, g);
  CheckPebsLike(*w, g, samples);
  // 60 s x 20M/s / 8000 = 150000 samples.
  EXPECT_NEAR(static_cast<double>(samples.size()), 150000, 1500);

  const GroundTruth t = w->Truth();
  ASSERT_EQ(t.phases.size(), 3u);
  std::set<uint64_t> starts;
  for (size_t k = 0; k < t.phases.size(); ++k) {
    const Phase& p = t.phases[k];
    EXPECT_EQ(p.start_ns, k * 20'000'000'000ull);
    ASSERT_EQ(p.hot.size(), 1u);
    EXPECT_EQ(p.hot[0].range.end - p.hot[0].range.start, 819 * kPageBytes);
    EXPECT_DOUBLE_EQ(p.hot[0].share, 0.9);
    const std::vector<Sample> in = InPhase(samples, p, g);
    EXPECT_NEAR(ShareIn(in, p.hot[0].range), 0.9, 0.005) << "phase " << k;
    starts.insert(p.hot[0].range.start);
    if (k > 0) {
      // The previous hot set is now as cold as the rest of the table.
      const double cold_share = 0.1 * 819 / (8192 - 819);
      EXPECT_NEAR(ShareIn(in, t.phases[k - 1].hot[0].range), cold_share, 0.005);
    }
  }
  EXPECT_EQ(starts.size(), 3u) << "the hot set moved at every shift";
}

TEST(GupsTest, WholeTableHotAndThreads) {
  GenOptions g;
  g.duration_s = 2;
  GupsOptions o;
  o.pages = 100;
  o.hot_fraction = 1;
  o.threads = 3;
  const auto w = Must(MakeGups(o, g));
  const std::vector<Sample> samples = Generate(*w, g);
  CheckPebsLike(*w, g, samples);
  std::map<uint32_t, uint32_t> cpu_of_tid;
  for (const Sample& s : samples) cpu_of_tid[s.tid] = s.cpu;
  EXPECT_EQ(cpu_of_tid,
            (std::map<uint32_t, uint32_t>{{4243, 0}, {4244, 1}, {4245, 2}}));
  EXPECT_DOUBLE_EQ(w->Truth().phases[0].hot[0].share, 1.0);
}

TEST(ZipfTest, HotPagesAreScatteredAndGetTheirShare) {
  GenOptions g;
  g.write_share = 0.05;
  ZipfOptions o;
  const auto w = Must(MakeZipf(o, g));
  const std::vector<Sample> samples = Generate(*w, g);
  CheckPebsLike(*w, g, samples);

  const GroundTruth t = w->Truth();
  ASSERT_EQ(t.phases.size(), 1u);
  const std::vector<HotRange>& hot = t.phases[0].hot;
  // The listed pages are the hottest that together get half of the
  // samples; they do.
  double want = 0;
  std::set<uint64_t> hot_pages;
  for (const HotRange& h : hot) {
    want += h.share;
    hot_pages.insert(h.range.start / kPageBytes);
  }
  EXPECT_GE(want, 0.5);
  size_t in_hot = 0;
  std::map<uint64_t, int> count;
  for (const Sample& s : samples) {
    in_hot += hot_pages.count(s.vaddr / kPageBytes);
    ++count[s.vaddr / kPageBytes];
  }
  EXPECT_NEAR(static_cast<double>(in_hot) / samples.size(), want, 0.01);
  // Zipf is skewed: a few hundred of ~13000 pages get half the samples.
  EXPECT_LT(hot.size(), 1000u);
  EXPECT_GT(count.size(), 10000u);
  // Per-page frequencies follow the expected shares for the hottest pages.
  std::vector<HotRange> by_share = hot;
  std::sort(
      by_share.begin(), by_share.end(),
      [](const HotRange& a, const HotRange& b) { return a.share > b.share; });
  EXPECT_GT(by_share[0].share, 4 * by_share[50].share);
  for (size_t i = 0; i < 5; ++i) {
    const HotRange& h = by_share[i];
    const double n = h.share * samples.size();
    EXPECT_NEAR(count[h.range.start / kPageBytes], n, 5 * std::sqrt(n));
  }
  // Scattered: the hot value pages are not one contiguous run. Count runs
  // of adjacent hot value pages: the key shuffle spreads them, so there are
  // almost as many runs as pages. (The 512-page hash index is uniformly
  // warm: hashing spreads every key's bucket over it.)
  const Range values = t.regions[1].range;
  size_t runs = 0, value_pages = 0;
  uint64_t prev = 0;
  for (uint64_t p : hot_pages) {
    if (!values.Contains(p * kPageBytes)) continue;
    ++value_pages;
    runs += (p != prev + 1) ? 1 : 0;
    prev = p;
  }
  EXPECT_GT(value_pages, 50u);
  EXPECT_GT(runs, value_pages * 9 / 10);
  // Stores: ~5% of the samples, all in the values region.
  size_t stores = 0;
  for (const Sample& s : samples) {
    if (s.flags & kSampleStore) {
      ++stores;
      ASSERT_TRUE(values.Contains(s.vaddr));
    }
  }
  EXPECT_NEAR(static_cast<double>(stores) / samples.size(), 0.05, 0.003);
}

TEST(ScanTest, ScanIsSequentialThenColdWhileWorkingSetTurnsHot) {
  GenOptions g;
  ScanOptions o;  // 8192 scan pages, 2048 ws pages, cold at 15 s, 2 s/pass
  const auto w = Must(MakeScan(o, g));
  const std::vector<Sample> samples = Generate(*w, g);
  CheckPebsLike(*w, g, samples);
  const GroundTruth t = w->Truth();
  ASSERT_EQ(t.phases.size(), 2u);
  const Range ws = t.regions[0].range;
  const Range scan = t.regions[1].range;
  const std::vector<Sample> before = InPhase(samples, t.phases[0], g);
  const std::vector<Sample> after = InPhase(samples, t.phases[1], g);
  EXPECT_NEAR(ShareIn(before, scan), 0.9 + 0.1 * 0.8, 0.005);
  EXPECT_NEAR(ShareIn(after, scan), 0.1 * 0.8, 0.005)
      << "the scan region turned cold";
  EXPECT_NEAR(ShareIn(after, ws), 0.9 + 0.1 * 0.2, 0.005);
  EXPECT_NEAR(ShareIn(before, ws), 0.1 * 0.2, 0.005);
  // Sequential: successive scan samples (kSequential ones are the LFB-heavy
  // stream) move forward except once per pass (7.5 passes).
  uint64_t last = 0, forward = 0, back = 0;
  for (const Sample& s : before) {
    if (!scan.Contains(s.vaddr) || s.level != MemLevel::kLfb) continue;
    if (last != 0) (s.vaddr / 64 >= last / 64 ? forward : back) += 1;
    last = s.vaddr;
  }
  EXPECT_GT(forward, 10000u);
  EXPECT_LT(static_cast<double>(back) / forward, 0.02);
  // And every scan page is covered during the scan phase.
  std::set<uint64_t> pages;
  for (const Sample& s : before) {
    if (scan.Contains(s.vaddr)) pages.insert(s.vaddr / kPageBytes);
  }
  EXPECT_GT(pages.size(), 8192u * 9 / 10);
}

TEST(StreamMixTest, SharesAndDemandAsDocumented) {
  GenOptions g;
  g.duration_s = 10;
  g.sample_period = 100000;
  g.access_rate = 3.2e8;
  StreamMixOptions o;  // 512 stream, 1024 hot, 8192 cold pages
  const auto w = Must(MakeStreamMix(o, g));
  const std::vector<Sample> samples = Generate(*w, g);
  CheckPebsLike(*w, g, samples);
  const GroundTruth t = w->Truth();
  ASSERT_EQ(t.phases.size(), 1u);
  ASSERT_EQ(t.regions.size(), 3u);
  EXPECT_NEAR(ShareIn(samples, t.regions[0].range), 0.75, 0.01);
  EXPECT_NEAR(ShareIn(samples, t.regions[1].range), 0.2, 0.01);
  EXPECT_NEAR(ShareIn(samples, t.regions[2].range), 0.05, 0.005);
  // The demand the samples stand for: period x 64 B per sample, 20.48 GB/s
  // (the simulator's DRAM peak) within 2%.
  double lines = 0;
  for (const Sample& s : samples) lines += static_cast<double>(s.period);
  EXPECT_NEAR(lines * 64 / g.duration_s / 20.48e9, 1.0, 0.02);
  // Every stream page is sampled.
  std::set<uint64_t> pages;
  for (const Sample& s : samples) {
    if (t.regions[0].range.Contains(s.vaddr))
      pages.insert(s.vaddr / kPageBytes);
  }
  EXPECT_EQ(pages.size(), o.stream_pages);
  StreamMixOptions bad = o;
  bad.hot_share = 0.5;  // 0.75 + 0.5 > 1
  EXPECT_FALSE(MakeStreamMix(bad, g).ok());
}

// stream_grow (the second stream of StreamMixOptions): before
// stream2_from_s the first stream has all of stream_share, after it the
// second takes stream2_share of it, over its own pages; the demand stays.
TEST(StreamMixTest, SecondStreamTakesItsShareFromItsStart) {
  GenOptions g;
  g.duration_s = 10;
  g.sample_period = 150000;
  g.access_rate = 3e8;
  StreamMixOptions o;
  o.stream_pages = 256;
  o.stream_share = 0.7;
  o.stream2_pages = 768;
  o.stream2_share = 0.4;
  o.stream2_pass_s = 0.004;
  o.stream2_from_s = 4;
  const auto w = Must(MakeStreamMix(o, g));
  const std::vector<Sample> samples = Generate(*w, g);
  CheckPebsLike(*w, g, samples);
  const GroundTruth t = w->Truth();
  ASSERT_EQ(t.regions.size(), 4u);
  ASSERT_EQ(t.phases.size(), 2u);
  const Range first = t.regions[0].range, second = t.regions[3].range;
  EXPECT_EQ(second.end - second.start, 768 * kPageBytes);
  EXPECT_EQ(t.phases[1].start_ns, 4'000'000'000ull);
  EXPECT_EQ(t.phases[1].start_ns, t.phases[0].end_ns);
  const std::vector<Sample> before = InPhase(samples, t.phases[0], g);
  const std::vector<Sample> after = InPhase(samples, t.phases[1], g);
  EXPECT_NEAR(ShareIn(before, first), 0.7, 0.015);
  EXPECT_EQ(ShareIn(before, second), 0);
  EXPECT_NEAR(ShareIn(after, first), 0.3, 0.015);
  EXPECT_NEAR(ShareIn(after, second), 0.4, 0.015);
  EXPECT_NEAR(ShareIn(after, t.regions[1].range), 0.2, 0.015);
  // (Nearly) every page of the second stream is sampled.
  std::set<uint64_t> pages;
  for (const Sample& s : after) {
    if (second.Contains(s.vaddr)) pages.insert(s.vaddr / kPageBytes);
  }
  EXPECT_GT(pages.size(), o.stream2_pages * 99 / 100);
  StreamMixOptions bad = o;
  bad.stream2_share = 0.8;  // more than the streams' 0.7
  EXPECT_FALSE(MakeStreamMix(bad, g).ok());
}

TEST(PackagesTest, ThreadsStayOnTheirPackageAndOwnArena) {
  GenOptions g;
  g.access_rate = 8e6;
  PackagesOptions o;  // 4 threads, 1 cpu per package, 512 private pages each
  const auto w = Must(MakePackages(o, g));
  const std::vector<Sample> samples = Generate(*w, g);
  CheckPebsLike(*w, g, samples);
  const GroundTruth t = w->Truth();
  // Threads 0, 1 (tids 4243, 4244) on cpu 0 = package 0; 2, 3 on cpu 1.
  std::map<uint32_t, std::set<uint32_t>> cpus_of_tid;
  for (const Sample& s : samples) cpus_of_tid[s.tid].insert(s.cpu);
  EXPECT_EQ(cpus_of_tid,
            (std::map<uint32_t, std::set<uint32_t>>{
                {4243, {0}}, {4244, {0}}, {4245, {1}}, {4246, {1}}}));
  // Each private arena is touched by its own thread only and gets 0.6 / 4
  // of the samples; the shared region 0.3, from both packages.
  const std::vector<HotRange>& hot = t.phases[0].hot;
  ASSERT_EQ(hot.size(), 5u);
  for (const HotRange& h : hot) {
    std::set<uint32_t> tids;
    for (const Sample& s : samples) {
      if (h.range.Contains(s.vaddr)) tids.insert(s.tid);
    }
    EXPECT_NEAR(ShareIn(samples, h.range), h.share, 0.005) << h.label;
    if (absl::StrContains(h.label, "private")) {
      EXPECT_EQ(tids.size(), 1u) << h.label;
    } else {
      EXPECT_EQ(tids.size(), 4u) << h.label;
    }
  }
  // Sorted by address: the shared region, then the arenas of threads 0..3.
  EXPECT_EQ(hot[0].label, "shared by all threads");
  EXPECT_EQ(hot[1].label, "thread 0 (tid 4243, cpu 0, package 0) private");
  EXPECT_EQ(hot[4].label, "thread 3 (tid 4246, cpu 1, package 1) private");
}

TEST(PackagesTest, SeveralCpusPerPackage) {
  GenOptions g;
  g.duration_s = 1;
  PackagesOptions o;
  o.threads = 8;
  o.cpus_per_package = 2;
  const auto w = Must(MakePackages(o, g));
  std::map<uint32_t, uint32_t> cpu_of_thread;
  for (const Sample& s : Generate(*w, g))
    cpu_of_thread[s.tid - g.pid - 1] = s.cpu;
  EXPECT_EQ(
      cpu_of_thread,
      (std::map<uint32_t, uint32_t>{
          {0, 0}, {1, 1}, {2, 0}, {3, 1}, {4, 2}, {5, 3}, {6, 2}, {7, 3}}));
}

TEST(GenerateTest, RateAndPeriodSetTheSampleCount) {
  GenOptions g;
  g.duration_s = 10;
  g.access_rate = 4e6;
  g.sample_period = 1000;  // 4000 samples/s per thread
  GupsOptions o;
  o.threads = 2;
  const auto w = Must(MakeGups(o, g));
  const std::vector<Sample> samples = Generate(*w, g);
  EXPECT_NEAR(static_cast<double>(samples.size()), 80000, 800);
  // Gaps: mean period / rate = 250 us per thread, jittered +-50%.
  std::map<uint32_t, uint64_t> last;
  uint64_t min_gap = ~0ull, max_gap = 0;
  for (const Sample& s : samples) {
    if (last.count(s.tid)) {
      min_gap = std::min(min_gap, s.time_ns - last[s.tid]);
      max_gap = std::max(max_gap, s.time_ns - last[s.tid]);
    }
    last[s.tid] = s.time_ns;
  }
  EXPECT_GE(min_gap, 125000u);
  EXPECT_LE(max_gap, 375000u);
}

TEST(GenerateTest, SameSeedSameBytesOtherSeedOtherBytes) {
  GenOptions g;
  g.duration_s = 5;
  const auto w1 = Must(MakeZipf(ZipfOptions(), g));
  const auto w2 = Must(MakeZipf(ZipfOptions(), g));
  const std::string a = TraceBytes(*w1, g);
  EXPECT_EQ(a, TraceBytes(*w2, g));
  GenOptions g2 = g;
  g2.seed = 2;
  const auto w3 = Must(MakeZipf(ZipfOptions(), g2));
  EXPECT_NE(a, TraceBytes(*w3, g2));
  // The layout depends on the seed too, not only the draws.
  EXPECT_NE(FormatTruth(w1->Truth(), g, "x"),
            FormatTruth(w3->Truth(), g2, "x"));
}

TEST(GenerateTest, GoldenDigest) {
  // A digest of every field of a short trace of each shape. It changes only
  // when the generator's output changes: then regenerate tests/traces/
  // (tests/traces/generate.sh) and update these values.
  GenOptions g;
  g.duration_s = 0.5;
  g.write_share = 0.1;
  auto digest = [&](const Workload& w) {
    uint64_t h = 0xcbf29ce484222325ull;
    auto mix = [&](uint64_t v) {
      for (int i = 0; i < 8; ++i)
        h = (h ^ ((v >> (8 * i)) & 0xff)) * 0x100000001b3ull;
    };
    for (const Sample& s : Generate(w, g)) {
      mix(s.time_ns), mix(s.vaddr), mix(s.data_src), mix(s.weight), mix(s.tid),
          mix(s.cpu);
      mix(static_cast<uint64_t>(s.level) | static_cast<uint64_t>(s.tlb) << 8 |
          static_cast<uint64_t>(s.source) << 16 |
          static_cast<uint64_t>(s.flags) << 24);
    }
    return h;
  };
  EXPECT_EQ(digest(*Must(MakeGups(GupsOptions(), g))), 9921390772147518788u);
  EXPECT_EQ(digest(*Must(MakeZipf(ZipfOptions(), g))), 13897594249905010623u);
  EXPECT_EQ(digest(*Must(MakeScan(ScanOptions(), g))), 5091524569978626473u);
  EXPECT_EQ(digest(*Must(MakePackages(PackagesOptions(), g))),
            3411553860934065867u);
}

TEST(GenerateTest, TraceRoundTripsThroughTheReader) {
  GenOptions g;
  g.duration_s = 3;
  const auto w = Must(MakeScan(ScanOptions(), g));
  const std::vector<Sample> want = Generate(*w, g);
  const std::string bytes = TraceBytes(*w, g);
  auto r = TraceReader::Open(MakeMemorySource(bytes), "mem.hpt");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->header().source, "pebs-load");
  EXPECT_EQ((*r)->header().sample_period, g.sample_period);
  EXPECT_TRUE(absl::StrContains((*r)->header().event_config,
                                "modelled, not recorded: test"));
  std::vector<Sample> got;
  while (true) {
    auto block = (*r)->Next();
    ASSERT_TRUE(block.ok()) << block.status();
    if (block->empty()) break;
    got.insert(got.end(), block->begin(), block->end());
  }
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(std::memcmp(&got[i], &want[i], sizeof(Sample)), 0) << i;
  }
  ASSERT_EQ((*r)->counters().size(), 1u);  // cpu 0, all zero
  EXPECT_EQ((*r)->counters()[0], CpuCounters{});
}

TEST(GenerateTest, BadOptionsNameTheFlag) {
  GenOptions g;
  auto msg = [](const absl::StatusOr<std::unique_ptr<Workload>>& w) {
    EXPECT_FALSE(w.ok());
    EXPECT_TRUE(absl::IsInvalidArgument(w.status()));
    return std::string(w.status().message());
  };
  GupsOptions go;
  go.hot_fraction = 0;
  EXPECT_TRUE(absl::StrContains(msg(MakeGups(go, g)), "--hot-fraction"));
  go = GupsOptions();
  go.hot_share = 1.5;
  EXPECT_TRUE(absl::StrContains(msg(MakeGups(go, g)), "--hot-share"));
  ZipfOptions zo;
  zo.value_bytes = 100;
  EXPECT_TRUE(absl::StrContains(msg(MakeZipf(zo, g)), "--value-bytes"));
  PackagesOptions po;
  po.threads = 3;
  EXPECT_TRUE(absl::StrContains(msg(MakePackages(po, g)),
                                "--threads wants an even number"));
  po = PackagesOptions();
  po.private_share = 0.8;
  EXPECT_TRUE(absl::StrContains(msg(MakePackages(po, g)), "at most 1"));
  GenOptions bad = g;
  bad.duration_s = 0;
  EXPECT_TRUE(
      absl::StrContains(msg(MakeScan(ScanOptions(), bad)), "--duration"));
  bad = g;
  bad.access_rate = 1;
  bad.sample_period = 1'000'000'000'000ull;
  EXPECT_TRUE(absl::StrContains(msg(MakeScan(ScanOptions(), bad)),
                                "ns between samples"));
}

TEST(TruthTest, Format) {
  GenOptions g;
  GupsOptions o;
  o.pages = 20;
  o.hot_fraction = 0.25;
  g.duration_s = 30;
  const auto w = Must(MakeGups(o, g));
  const std::string text =
      FormatTruth(w->Truth(), g, "hotpage_trace_gen gups --pages 20");
  EXPECT_TRUE(
      absl::StrContains(text, "\ncommand hotpage_trace_gen gups --pages 20\n"));
  EXPECT_TRUE(absl::StrContains(
      text, "\nregion table 0x7f1c00000000 0x7f1c00014000\n"));
  EXPECT_TRUE(absl::StrContains(
      text, "\nphase 0 1000000000000 1020000000000\nhot 0x7f1c0000"));
  EXPECT_TRUE(
      absl::StrContains(text, "\nphase 1 1020000000000 1030000000000\nhot "));
  EXPECT_TRUE(absl::StrContains(text, " 0.900000 hot set (slot "));
}

}  // namespace
}  // namespace trace_gen
}  // namespace hotpage
