#include "sampler/perf/event_config.h"

#include <string>

#include "gtest/gtest.h"
#include "tools/base/kernel/fake_tree.h"

namespace hotpage {
namespace {

constexpr char kPmus[] = "/sys/bus/event_source/devices";

void IntelCpuPmu(FakeTree& t, bool aux, bool stores) {
  std::string cpu = std::string(kPmus) + "/cpu";
  t.Write(cpu + "/type", "4\n");
  t.Write(cpu + "/format/event", "config:0-7\n");
  t.Write(cpu + "/format/umask", "config:8-15\n");
  t.Write(cpu + "/format/ldlat", "config1:0-15\n");
  t.Write(cpu + "/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
  if (aux) t.Write(cpu + "/events/mem-loads-aux", "event=0x03,umask=0x82\n");
  if (stores) t.Write(cpu + "/events/mem-stores", "event=0xcd,umask=0x2\n");
}

void AmdIbsPmu(FakeTree& t, bool l3miss, bool swfilt) {
  std::string ibs = std::string(kPmus) + "/ibs_op";
  t.Write(ibs + "/type", "11\n");
  t.Write(ibs + "/format/cnt_ctl", "config:19\n");
  if (l3miss) t.Write(ibs + "/format/l3missonly", "config:16\n");
  if (swfilt) t.Write(ibs + "/format/swfilt", "config2:0\n");
}

KernelFs Fs(const FakeTree& t) { return *KernelFs::Open(t.root()); }

TEST(ParseFormatField, Forms) {
  auto f = ParseFormatField("config:0-7\n");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->word, 0);
  EXPECT_EQ(f->ranges, (std::vector<std::pair<int, int>>{{0, 7}}));
  f = ParseFormatField("config1:0-15");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->word, 1);
  f = ParseFormatField("config:0-7,32-35");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->ranges.size(), 2u);
  f = ParseFormatField("config2:0");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->ranges, (std::vector<std::pair<int, int>>{{0, 0}}));
  for (const char* bad : {"", "config", "conf:0", "config:7-0", "config:0-64",
                          "config:a-b", "config:0-63,0-1"}) {
    EXPECT_FALSE(ParseFormatField(bad).ok()) << bad;
  }
}

TEST(EncodeSysfsEvent, AppliesAliasAndOverridesThroughFormats) {
  FakeTree t;
  IntelCpuPmu(t, false, false);
  KernelFs fs = Fs(t);
  auto a = EncodeSysfsEvent(fs, "cpu", "event=0xcd,umask=0x1,ldlat=3",
                            {{"ldlat", 30}});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->type, 4u);
  EXPECT_EQ(a->config, 0x1cdu);
  EXPECT_EQ(a->config1, 30u);
  // A value wider than its field is an error, not silent truncation.
  EXPECT_FALSE(EncodeSysfsEvent(fs, "cpu", "event=0x1cd", {}).ok());
  // Unknown term names the field.
  auto bad = EncodeSysfsEvent(fs, "cpu", "event=0xcd,frobnicate=1", {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("frobnicate"), std::string::npos);
}

TEST(EncodeSysfsEvent, SplitFieldsFillLowBitsFirst) {
  FakeTree t;
  t.Write(std::string(kPmus) + "/x/type", "9\n");
  t.Write(std::string(kPmus) + "/x/format/event", "config:0-7,32-35\n");
  auto a = EncodeSysfsEvent(Fs(t), "x", "event=0x1cd", {});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->config, (uint64_t{1} << 32) | 0xcd);
}

TEST(Libpfm, EncodesLoadLatencyForIntelServerParts) {
  // Needs LIBPFM_ENCODE_INACTIVE=1 (set by the BUILD rule): encodes for
  // PMUs this machine does not have. Values checked in pmu.md.
  for (const char* pmu : {"spr", "icx", "skx"}) {
    auto a = EncodeLibpfm(std::string(pmu) +
                          "::MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=32");
    ASSERT_TRUE(a.ok()) << pmu << ": " << a.status();
    EXPECT_EQ(a->type, static_cast<uint32_t>(PERF_TYPE_RAW)) << pmu;
    EXPECT_EQ(a->config, 0x1cdu) << pmu;
    EXPECT_EQ(a->config1, 32u) << pmu;
    // Our fields survive libpfm's encoding.
    EXPECT_EQ(a->sample_type, kSampleType);
    EXPECT_EQ(a->size, sizeof(perf_event_attr));
    EXPECT_TRUE(a->exclude_kernel) << pmu;  // PFM_PLM3: user level only
  }
  auto st = EncodeLibpfm("icx::MEM_INST_RETIRED:ALL_STORES");
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->config, 0x82d0u);
  EXPECT_FALSE(EncodeLibpfm("spr::NO_SUCH_EVENT").ok());
}

TEST(PebsEvents, SysfsAliasWithoutAux) {
  FakeTree t;
  IntelCpuPmu(t, /*aux=*/false, /*stores=*/false);
  SamplingOptions opt;
  auto g = PebsEvents(Fs(t), opt, std::nullopt);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_FALSE(g->grouped);
  ASSERT_EQ(g->events.size(), 1u);
  const perf_event_attr& a = g->events[0].attr;
  EXPECT_EQ(a.config, 0x1cdu);
  EXPECT_EQ(a.config1, 30u);  // default ldlat
  EXPECT_EQ(a.precise_ip, 2u);
  EXPECT_EQ(a.sample_period, kDefaultPebsPeriod);
  EXPECT_TRUE(a.sample_type & PERF_SAMPLE_DATA_SRC);
  EXPECT_TRUE(a.sample_type & PERF_SAMPLE_WEIGHT_STRUCT);
  EXPECT_TRUE(a.sample_type & PERF_SAMPLE_ADDR);
  EXPECT_TRUE(a.exclude_kernel);
  EXPECT_EQ(g->events[0].source, SampleSource::kPebsLoad);
  EXPECT_EQ(g->encoder, "sysfs");
}

TEST(PebsEvents, SapphireRapidsNeedsTheAuxLeader) {
  FakeTree t;
  IntelCpuPmu(t, /*aux=*/true, /*stores=*/true);
  SamplingOptions opt;
  opt.pebs_stores = true;
  opt.ldlat_cycles = 64;
  opt.sample_period = 2003;
  auto g = PebsEvents(Fs(t), opt, std::nullopt);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(g->grouped);
  ASSERT_EQ(g->events.size(), 3u);
  // Leader: mem-loads-aux (event=0x03,umask=0x82), then mem-loads.
  EXPECT_EQ(g->events[0].attr.config, 0x8203u);
  EXPECT_FALSE(g->events[0].sampling);
  EXPECT_EQ(g->events[1].attr.config, 0x1cdu);
  EXPECT_EQ(g->events[1].attr.config1, 64u);
  EXPECT_EQ(g->events[1].attr.sample_period, 2003u);
  // SPR's kernel alias for stores (0x2cd), not libpfm4's 0x3cd.
  EXPECT_EQ(g->events[2].attr.config, 0x2cdu);
  EXPECT_EQ(g->events[2].source, SampleSource::kPebsStore);
  EXPECT_NE(g->Describe().find("{cpu/mem-loads-aux/"), std::string::npos);
}

TEST(PebsEvents, LibpfmWhenItKnowsTheCpu) {
  FakeTree t;
  IntelCpuPmu(t, false, false);
  auto g = PebsEvents(Fs(t), SamplingOptions(), std::string("icx"));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->encoder, "libpfm4");
  EXPECT_EQ(g->events[0].attr.config, 0x1cdu);
  EXPECT_EQ(g->events[0].attr.config1, 30u);
  EXPECT_EQ(g->events[0].attr.precise_ip, 2u);
}

TEST(PebsEvents, MissingPmuIsExplained) {
  FakeTree t;
  t.Mkdir("/sys");
  auto g = PebsEvents(Fs(t), SamplingOptions(), std::nullopt);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("mem-loads"), std::string::npos);
}

TEST(IbsEvents, FormatBitsAndPeriodRules) {
  FakeTree t;
  AmdIbsPmu(t, /*l3miss=*/true, /*swfilt=*/false);
  SamplingOptions opt;
  opt.ibs_l3_miss_only = true;
  opt.sample_period = 0x10007;
  auto g = IbsEvents(Fs(t), opt);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->events.size(), 1u);  // one IBS event per group
  const perf_event_attr& a = g->events[0].attr;
  EXPECT_EQ(a.type, 11u);
  EXPECT_EQ(a.config, (1u << 19) | (1u << 16));
  EXPECT_EQ(a.sample_period, 0x10000u);  // low 4 bits masked
  // Without swfilt, IBS rejects exclude_* with EINVAL: none set.
  EXPECT_FALSE(a.exclude_kernel);
  EXPECT_FALSE(a.exclude_hv);
  EXPECT_FALSE(a.exclude_guest);
  EXPECT_EQ(g->events[0].source, SampleSource::kIbsOp);

  for (uint64_t p : {uint64_t{1}, uint64_t{0x85}, uint64_t{0x95}}) {
    opt.sample_period = p;
    auto small = IbsEvents(Fs(t), opt);
    ASSERT_TRUE(small.ok());
    EXPECT_EQ(small->events[0].attr.sample_period, 0x90u) << p;
  }
}

TEST(IbsEvents, SwfiltAllowsUserOnly) {
  FakeTree t;
  AmdIbsPmu(t, /*l3miss=*/false, /*swfilt=*/true);
  SamplingOptions opt;
  auto g = IbsEvents(Fs(t), opt);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->events[0].attr.config2, 1u);
  EXPECT_TRUE(g->events[0].attr.exclude_kernel);
  // l3missonly requested on a pre-Zen 4 PMU: a clear error.
  opt.ibs_l3_miss_only = true;
  auto bad = IbsEvents(Fs(t), opt);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("Zen 4"), std::string::npos);
}

TEST(PageFaultEvents, SoftwareEventWithAddresses) {
  auto g = PageFaultEvents(SamplingOptions());
  ASSERT_TRUE(g.ok());
  const perf_event_attr& a = g->events[0].attr;
  EXPECT_EQ(a.type, static_cast<uint32_t>(PERF_TYPE_SOFTWARE));
  EXPECT_EQ(a.config, static_cast<uint64_t>(PERF_COUNT_SW_PAGE_FAULTS));
  EXPECT_EQ(a.sample_period, 1u);
  EXPECT_TRUE(a.sample_type & PERF_SAMPLE_ADDR);
  EXPECT_TRUE(a.sample_id_all);
}

TEST(ChooseEvents, AutoPrefersPebsThenIbsThenPageFaults) {
  std::string why;
  {
    FakeTree t;
    IntelCpuPmu(t, false, false);
    auto g = ChooseEvents(Fs(t), SourceRequest::kAuto, SamplingOptions(), &why);
    ASSERT_TRUE(g.ok()) << g.status();
    EXPECT_EQ(g->events.back().source, SampleSource::kPebsLoad);
    EXPECT_NE(why.find("PEBS"), std::string::npos);
  }
  {
    FakeTree t;
    AmdIbsPmu(t, false, false);
    auto g = ChooseEvents(Fs(t), SourceRequest::kAuto, SamplingOptions(), &why);
    ASSERT_TRUE(g.ok());
    EXPECT_EQ(g->events[0].source, SampleSource::kIbsOp);
  }
  {
    FakeTree t;
    t.Write("/proc/cpuinfo", "flags\t\t: fpu vme hypervisor\n");
    auto g = ChooseEvents(Fs(t), SourceRequest::kAuto, SamplingOptions(), &why);
    ASSERT_TRUE(g.ok());
    EXPECT_EQ(g->events[0].source, SampleSource::kPageFault);
    EXPECT_NE(why.find("VM without a virtual PMU"), std::string::npos) << why;
    EXPECT_NE(why.find("first touches"), std::string::npos) << why;
  }
}

TEST(ChooseEvents, ExplicitSourceThatIsMissingNamesWhatAndAlternatives) {
  FakeTree t;
  t.Write("/proc/sys/kernel/perf_event_paranoid", "2\n");
  t.Write("/proc/self/status", "Name:\tx\nCapEff:\t0000000000000000\n");
  std::string why;
  auto g = ChooseEvents(Fs(t), SourceRequest::kPebs, SamplingOptions(), &why);
  ASSERT_FALSE(g.ok());
  const std::string msg(g.status().message());
  EXPECT_NE(msg.find("no hardware PMU driver"), std::string::npos) << msg;
  EXPECT_NE(msg.find("perf_event_paranoid is 2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("CAP_PERFMON"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--source pagefault"), std::string::npos) << msg;
  auto ibs = ChooseEvents(Fs(t), SourceRequest::kIbs, SamplingOptions(), &why);
  ASSERT_FALSE(ibs.ok());
  EXPECT_NE(ibs.status().message().find("--source pebs"), std::string::npos);
}

TEST(ParseSourceRequest, Names) {
  EXPECT_EQ(*ParseSourceRequest("auto"), SourceRequest::kAuto);
  EXPECT_EQ(*ParseSourceRequest("pagefault"), SourceRequest::kPageFault);
  EXPECT_FALSE(ParseSourceRequest("PEBS").ok());
}

}  // namespace
}  // namespace hotpage
