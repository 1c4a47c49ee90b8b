#include "sampler/perf/event_config.h"

#include <cerrno>
#include <string>
#include <utility>
#include <vector>

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

// Alder Lake as the kernel shows it: no "cpu" PMU, cpu_core (P-cores, with
// the aux event: mem_ld_aux_adl is hybrid_big) and cpu_atom (E-cores),
// each with its own dynamic type and cpus file (intel/core.c:
// EVENT_ATTR_STR_HYBRID(mem-loads, mem_ld_adl,
// "event=0xd0,umask=0x5,ldlat=3;event=0xcd,umask=0x1,ldlat=3", ...), the
// first string for the small core, the second for the big one).
void HybridPmus(FakeTree& t, bool stores) {
  for (const char* pmu : {"cpu_core", "cpu_atom"}) {
    std::string d = std::string(kPmus) + "/" + pmu;
    t.Write(d + "/format/event", "config:0-7\n");
    t.Write(d + "/format/umask", "config:8-15\n");
    t.Write(d + "/format/ldlat", "config1:0-15\n");
  }
  std::string core = std::string(kPmus) + "/cpu_core";
  t.Write(core + "/type", "8\n");
  t.Write(core + "/cpus", "0-15\n");
  t.Write(core + "/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
  t.Write(core + "/events/mem-loads-aux", "event=0x03,umask=0x82\n");
  std::string atom = std::string(kPmus) + "/cpu_atom";
  t.Write(atom + "/type", "10\n");
  t.Write(atom + "/cpus", "16-23\n");
  t.Write(atom + "/events/mem-loads", "event=0xd0,umask=0x5,ldlat=3\n");
  if (stores) {
    t.Write(core + "/events/mem-stores", "event=0xcd,umask=0x2\n");
    t.Write(atom + "/events/mem-stores", "event=0xd0,umask=0x6\n");
  }
}

KernelFs Fs(const FakeTree& t) { return *KernelFs::Open(t.root()); }

std::vector<int> Range(int lo, int hi) {
  std::vector<int> v;
  for (int i = lo; i <= hi; ++i) v.push_back(i);
  return v;
}

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

// D1: on hybrid parts one group per core PMU, each on its PMU's CPUs.
TEST(PebsEvents, HybridOneGroupPerCorePmuOnItsCpus) {
  FakeTree t;
  HybridPmus(t, /*stores=*/false);
  SamplingOptions opt;
  // libpfm4 is not used on hybrid parts even when it knows the CPU.
  auto g = PebsEvents(Fs(t), opt, std::string("adl_glc"));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(g->grouped);
  EXPECT_EQ(g->encoder, "sysfs");
  ASSERT_EQ(g->events.size(), 3u);
  const EventSpec& aux = g->events[0];
  const EventSpec& core = g->events[1];
  const EventSpec& atom = g->events[2];
  EXPECT_EQ(aux.pmu, "cpu_core");
  EXPECT_EQ(aux.attr.type, 8u);
  EXPECT_EQ(aux.attr.config, 0x8203u);
  EXPECT_EQ(aux.cpus, Range(0, 15));
  EXPECT_EQ(core.pmu, "cpu_core");
  EXPECT_EQ(core.attr.type, 8u);
  EXPECT_EQ(core.attr.config, 0x1cdu);
  EXPECT_EQ(core.attr.config1, 30u);
  EXPECT_EQ(core.cpus, Range(0, 15));
  EXPECT_EQ(core.group, aux.group);
  // cpu_atom: its own alias (event=0xd0,umask=0x5), no aux, its own group.
  EXPECT_EQ(atom.pmu, "cpu_atom");
  EXPECT_EQ(atom.attr.type, 10u);
  EXPECT_EQ(atom.attr.config, 0x5d0u);
  EXPECT_EQ(atom.attr.config1, 30u);
  EXPECT_EQ(atom.attr.precise_ip, 2u);
  EXPECT_EQ(atom.cpus, Range(16, 23));
  EXPECT_NE(atom.group, core.group);
  EXPECT_TRUE(atom.keep_samples);
  EXPECT_EQ(atom.source, SampleSource::kPebsLoad);
  EXPECT_NE(g->Describe().find("cpu_atom/mem-loads,ldlat=30/@cpus:16-23"),
            std::string::npos)
      << g->Describe();
}

TEST(PebsEvents, HybridCpuListsAreParsedAndRequired) {
  FakeTree t;
  HybridPmus(t, false);
  t.Write(std::string(kPmus) + "/cpu_core/cpus", "0-3,8,10-11\n");
  auto g = PebsEvents(Fs(t), SamplingOptions(), std::nullopt);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->events[1].cpus, (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  t.Remove(std::string(kPmus) + "/cpu_atom/cpus");
  auto bad = PebsEvents(Fs(t), SamplingOptions(), std::nullopt);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cpu_atom"), std::string::npos)
      << bad.status();
}

TEST(PebsEvents, NonHybridEventsHaveNoCpuList) {
  FakeTree t;
  IntelCpuPmu(t, /*aux=*/true, /*stores=*/true);
  SamplingOptions opt;
  opt.pebs_stores = true;
  auto g = PebsEvents(Fs(t), opt, std::nullopt);
  ASSERT_TRUE(g.ok()) << g.status();
  for (const EventSpec& e : g->events) {
    EXPECT_TRUE(e.cpus.empty()) << e.name;
    EXPECT_EQ(e.pmu, "cpu") << e.name;
  }
}

// D7: the aux leader samples (PEBS must) but its records are not loads.
TEST(PebsEvents, AuxLeaderSamplesAreNotKept) {
  FakeTree t;
  IntelCpuPmu(t, /*aux=*/true, /*stores=*/false);
  auto g = PebsEvents(Fs(t), SamplingOptions(), std::nullopt);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->events.size(), 2u);
  EXPECT_FALSE(g->events[0].keep_samples);
  EXPECT_EQ(g->events[0].attr.sample_period, kAuxLeaderPeriod);
  EXPECT_EQ(g->events[0].attr.precise_ip, 2u);  // still a PEBS event
  EXPECT_TRUE(g->events[1].keep_samples);
  EXPECT_EQ(g->events[1].attr.sample_period, kDefaultPebsPeriod);
}

// D10: stores are their own group, never members of the aux group.
TEST(PebsEvents, StoresAreASeparateGroup) {
  FakeTree t;
  IntelCpuPmu(t, /*aux=*/true, /*stores=*/true);
  SamplingOptions opt;
  opt.pebs_stores = true;
  auto g = PebsEvents(Fs(t), opt, std::nullopt);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->events.size(), 3u);
  EXPECT_EQ(g->events[0].group, g->events[1].group);
  EXPECT_NE(g->events[2].group, g->events[1].group);
  EXPECT_EQ(g->events[2].source, SampleSource::kPebsStore);
  EXPECT_TRUE(g->events[2].keep_samples);
  EXPECT_NE(g->Describe().find("},cpu/mem-stores/"), std::string::npos)
      << g->Describe();

  FakeTree h;
  HybridPmus(h, /*stores=*/true);
  auto hg = PebsEvents(Fs(h), opt, std::nullopt);
  ASSERT_TRUE(hg.ok()) << hg.status();
  ASSERT_EQ(hg->events.size(), 5u);
  std::vector<int> store_groups;
  for (const EventSpec& e : hg->events) {
    if (e.source != SampleSource::kPebsStore) continue;
    for (const EventSpec& o : hg->events) {
      if (&o != &e) {
        EXPECT_NE(o.group, e.group) << e.name << " " << o.name;
      }
    }
    store_groups.push_back(e.group);
  }
  EXPECT_EQ(store_groups.size(), 2u);
  EXPECT_EQ(hg->events[4].pmu, "cpu_atom");
  EXPECT_EQ(hg->events[4].attr.config, 0x6d0u);
  EXPECT_EQ(hg->events[4].cpus, Range(16, 23));
}

// D4: libpfm4 4.13 cannot encode MEM_TRANS_RETIRED:LOAD_LATENCY on Sandy
// Bridge ("invalid event attribute") or Westmere ("event not found"); the
// kernel's alias works there, and the plan says why it took it.
TEST(PebsEvents, LibpfmFailureFallsBackToTheKernelAlias) {
  for (const char* pmu : {"snb", "ivb_ep", "wsm"}) {
    FakeTree t;
    IntelCpuPmu(t, false, false);
    auto g = PebsEvents(Fs(t), SamplingOptions(), std::string(pmu));
    ASSERT_TRUE(g.ok()) << pmu << ": " << g.status();
    EXPECT_EQ(g->encoder, "sysfs") << pmu;
    EXPECT_EQ(g->events[0].attr.config, 0x1cdu) << pmu;
    EXPECT_EQ(g->events[0].attr.config1, 30u) << pmu;
    EXPECT_NE(g->why.find("libpfm4 cannot encode"), std::string::npos)
        << pmu << ": " << g->why;
    EXPECT_NE(g->why.find("sysfs alias"), std::string::npos) << g->why;
  }
}

// D8: the default period keeps a core at the stated worst-case event rate
// under the kernel's throttle and hotpage's budget, for the kernel's
// default rate and for rates the kernel lowered itself to.
TEST(DefaultPeriod, StaysUnderTheThrottleAtTheWorstCaseRate) {
  for (uint64_t max_rate : {uint64_t{100000}, uint64_t{50000}, uint64_t{25000},
                            uint64_t{6250}, uint64_t{1000}, uint64_t{1}}) {
    for (uint64_t worst :
         {kPebsWorstLoadsPerSec, kIbsWorstOpsPerSec, kIbsWorstCyclesPerSec}) {
      const uint64_t period = DefaultPeriod(worst, max_rate);
      const double rate = static_cast<double>(worst) / period;
      EXPECT_LE(rate, static_cast<double>(max_rate))
          << worst << " " << max_rate;
      EXPECT_LE(rate, static_cast<double>(kMaxSamplesPerSecPerCpu));
      if (max_rate >= 2) {
        EXPECT_LE(rate, max_rate / 2.0);
      }
      // __perf_event_account_interrupt(): throttled past
      // DIV_ROUND_UP(max_rate, HZ) samples per tick.
      for (uint64_t hz : {uint64_t{100}, uint64_t{250}, uint64_t{1000}}) {
        const uint64_t per_tick = (max_rate + hz - 1) / hz;
        EXPECT_LE(rate / hz, static_cast<double>(per_tick))
            << worst << " " << max_rate << " HZ=" << hz;
      }
    }
  }
  // The defaults at the kernel's default rate.
  EXPECT_LE(kPebsWorstLoadsPerSec / kDefaultPebsPeriod, 20000u);
  EXPECT_LE(kIbsWorstOpsPerSec / kDefaultIbsPeriod, 20000u);
}

TEST(DefaultPeriod, FollowsTheKernelsMaxSampleRate) {
  FakeTree t;
  IntelCpuPmu(t, false, false);
  AmdIbsPmu(t, false, false);
  {
    auto g = PebsEvents(Fs(t), SamplingOptions(), std::nullopt);
    ASSERT_TRUE(g.ok());
    EXPECT_EQ(g->events[0].attr.sample_period, kDefaultPebsPeriod);
    EXPECT_LE(kPebsWorstLoadsPerSec / g->events[0].attr.sample_period,
              kKernelDefaultMaxSampleRate);
    auto i = IbsEvents(Fs(t), SamplingOptions());
    ASSERT_TRUE(i.ok());
    EXPECT_EQ(i->events[0].attr.sample_period, kDefaultIbsPeriod);
  }
  // The kernel lowered the rate to 25000/s: the period grows with it.
  t.Write("/proc/sys/kernel/perf_event_max_sample_rate", "25000\n");
  EXPECT_EQ(MaxSampleRate(Fs(t)), 25000u);
  auto g = PebsEvents(Fs(t), SamplingOptions(), std::nullopt);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->events[0].attr.sample_period, 80000u);  // 1e9 / 12500
  EXPECT_NE(g->why.find("perf_event_max_sample_rate is 25000"),
            std::string::npos)
      << g->why;
  auto i = IbsEvents(Fs(t), SamplingOptions());
  ASSERT_TRUE(i.ok());
  EXPECT_LE(kIbsWorstOpsPerSec / i->events[0].attr.sample_period, 12500u);
  EXPECT_EQ(i->events[0].attr.sample_period & 0xf, 0u);
  // An explicit period is the user's.
  SamplingOptions opt;
  opt.sample_period = 1234;
  EXPECT_EQ(PebsEvents(Fs(t), opt, std::nullopt)->events[0].attr.sample_period,
            1234u);
}

// D2: before 6.1 IBS puts the data address only in the RAW block.
TEST(IbsEvents, RawBlockBeforeLinux61) {
  struct Case {
    const char* release;
    bool raw;
  };
  for (const Case& c :
       {Case{"5.15.0-91-generic\n", true}, Case{"6.0.19\n", true},
        Case{"6.1.0-13-amd64\n", false}, Case{"6.12.9\n", false}}) {
    FakeTree t;
    AmdIbsPmu(t, false, false);
    t.Write("/proc/sys/kernel/osrelease", c.release);
    auto g = IbsEvents(Fs(t), SamplingOptions());
    ASSERT_TRUE(g.ok()) << g.status();
    EXPECT_EQ((g->events[0].attr.sample_type & PERF_SAMPLE_RAW) != 0, c.raw)
        << c.release;
    EXPECT_EQ(g->why.find("PERF_SAMPLE_RAW") != std::string::npos, c.raw)
        << g->why;
    EXPECT_EQ(g->events[0].pmu, "ibs_op");
  }
}

TEST(KernelVersion, Parses) {
  FakeTree t;
  EXPECT_FALSE(KernelVersion(Fs(t)).has_value());
  t.Write("/proc/sys/kernel/osrelease", "5.15.0-91-generic\n");
  EXPECT_EQ(KernelVersion(Fs(t)), std::make_pair(5, 15));
  t.Write("/proc/sys/kernel/osrelease", "6.1\n");
  EXPECT_EQ(KernelVersion(Fs(t)), std::make_pair(6, 1));
  for (const char* bad : {"", "6", "x.y", "6.-1", "99999.1"}) {
    t.Write("/proc/sys/kernel/osrelease", bad);
    EXPECT_FALSE(KernelVersion(Fs(t)).has_value()) << bad;
  }
}

// D12: an ENOENT of a hybrid PMU's event names the PMU's CPUs, not "no PMU".
TEST(EventOpenHint, NamesTheRealCause) {
  FakeTree t;
  HybridPmus(t, false);
  auto g = PebsEvents(Fs(t), SamplingOptions(), std::nullopt);
  ASSERT_TRUE(g.ok());
  const std::string hint = EventOpenHint(ENOENT, g->events[2], 3);
  EXPECT_NE(hint.find("cpu_atom PMU covers only CPUs 16-23, not cpu 3"),
            std::string::npos)
      << hint;
  EXPECT_EQ(hint.find("no PMU"), std::string::npos) << hint;
  EXPECT_NE(EventOpenHint(EOPNOTSUPP, g->events[1], 0).find("precise_ip=2"),
            std::string::npos);
  EXPECT_NE(EventOpenHint(ENODATA, g->events[1], 0).find("mem-loads-aux"),
            std::string::npos);
  auto pf = PageFaultEvents(SamplingOptions());
  EXPECT_EQ(EventOpenHint(ENOENT, pf->events[0], 0), "");
}

TEST(ChooseEvents, TheOtherVendorsSamplerIsNamed) {
  std::string why;
  {
    FakeTree t;
    AmdIbsPmu(t, false, false);
    auto g = ChooseEvents(Fs(t), SourceRequest::kPebs, SamplingOptions(), &why);
    ASSERT_FALSE(g.ok());
    EXPECT_NE(g.status().message().find("has AMD IBS"), std::string::npos)
        << g.status();
  }
  {
    FakeTree t;
    IntelCpuPmu(t, false, false);
    auto g = ChooseEvents(Fs(t), SourceRequest::kIbs, SamplingOptions(), &why);
    ASSERT_FALSE(g.ok());
    EXPECT_NE(g.status().message().find("has Intel PEBS"), std::string::npos)
        << g.status();
  }
}

TEST(ChooseEvents, HybridWithoutPebsIsNotCalledNoPmu) {
  FakeTree t;
  t.Write(std::string(kPmus) + "/cpu_core/type", "8\n");
  t.Write(std::string(kPmus) + "/cpu_atom/type", "10\n");
  std::string why;
  auto g = ChooseEvents(Fs(t), SourceRequest::kPebs, SamplingOptions(), &why);
  ASSERT_FALSE(g.ok());
  const std::string msg(g.status().message());
  EXPECT_NE(msg.find("hybrid"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("no hardware PMU driver"), std::string::npos) << msg;
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

// --print-events --sysfs-root: the CPU model libpfm4 would see comes from
// the tree's /proc/cpuinfo, mapped with libpfm4's own detection rules.
TEST(CpuModel, CpuinfoMapsToLibpfmsPmu) {
  const std::string skx =
      "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n"
      "model\t\t: 85\nmodel name\t: Intel(R) Xeon(R) Gold 6130\n"
      "stepping\t: 4\n\nprocessor\t: 1\nvendor_id\t: GenuineIntel\n"
      "cpu family\t: 6\nmodel\t\t: 106\nstepping\t: 9\n";
  std::optional<CpuModel> c = ParseCpuinfo(skx);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->model, 85);  // the first processor's block only
  EXPECT_EQ(c->stepping, 4);
  EXPECT_EQ(DescribeCpuModel(*c),
            "GenuineIntel family 6 model 85 stepping 4 (Intel(R) Xeon(R) "
            "Gold 6130)");
  EXPECT_EQ(LibpfmPmuForCpu(*c), "skx");
  c->stepping = 7;  // Cascade Lake: pfm_clx_detect()
  EXPECT_EQ(LibpfmPmuForCpu(*c), "clx");
  c->stepping = -1;  // unknown stepping: not guessed
  EXPECT_EQ(LibpfmPmuForCpu(*c), std::nullopt);
  CpuModel icx{"GenuineIntel", 6, 106, 6, ""};
  EXPECT_EQ(LibpfmPmuForCpu(icx), "icx");
  CpuModel snb{"GenuineIntel", 6, 42, 7, ""};
  EXPECT_EQ(LibpfmPmuForCpu(snb), "snb");
  CpuModel spr{"GenuineIntel", 6, 143, 8, ""};
  EXPECT_EQ(LibpfmPmuForCpu(spr), std::nullopt);  // outside the table
  CpuModel zen{"AuthenticAMD", 25, 17, 1, ""};
  EXPECT_EQ(LibpfmPmuForCpu(zen), std::nullopt);
  EXPECT_EQ(ParseCpuinfo("processor : 0\nfeatures : fp asimd\n"),
            std::nullopt);  // arm64: no x86 vendor
  EXPECT_EQ(ParseCpuinfo(""), std::nullopt);
  EXPECT_EQ(ParseCpuinfo("vendor_id : X\ncpu family : -3\nmodel : 1\n"),
            std::nullopt);
}

}  // namespace
}  // namespace hotpage
