#include "sampler/perf/event_plan_json.h"

#include <linux/perf_event.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tools/base/json.h"
#include "tools/base/kernel/fake_tree.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {
namespace {

constexpr char kPmus[] = "/sys/bus/event_source/devices";

std::vector<int> Range(int lo, int hi) {
  std::vector<int> v;
  for (int i = lo; i <= hi; ++i) v.push_back(i);
  return v;
}

TEST(SampleTypeNames, NamesWithoutPrefixLowBitFirst) {
  EXPECT_EQ(
      SampleTypeNames(PERF_SAMPLE_IP | PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC |
                      PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_WEIGHT_STRUCT),
      (std::vector<std::string>{"IP", "ADDR", "DATA_SRC", "IDENTIFIER",
                                "WEIGHT_STRUCT"}));
  EXPECT_EQ(SampleTypeNames(uint64_t{1} << 62),
            (std::vector<std::string>{"BIT62"}));
  EXPECT_TRUE(SampleTypeNames(0).empty());
}

TEST(ResolvedCpus, OwnListWithinOnlineElseOnline) {
  EventSpec e;
  EXPECT_EQ(ResolvedCpus(e, {0, 1, 2}), (std::vector<int>{0, 1, 2}));
  e.cpus = {1, 2, 7};
  EXPECT_EQ(ResolvedCpus(e, {0, 1, 2}), (std::vector<int>{1, 2}));
}

// A hybrid plan (cpu_core 0-15 with aux, cpu_atom 16-23) as JSON: every
// field the issue names, with the values of the plan.
TEST(EventPlanToJson, HybridPlan) {
  FakeTree t;
  for (const char* pmu : {"cpu_core", "cpu_atom"}) {
    std::string d = std::string(kPmus) + "/" + pmu;
    t.Write(d + "/format/event", "config:0-7\n");
    t.Write(d + "/format/umask", "config:8-15\n");
    t.Write(d + "/format/ldlat", "config1:0-15\n");
  }
  t.Write(std::string(kPmus) + "/cpu_core/type", "8\n");
  t.Write(std::string(kPmus) + "/cpu_core/cpus", "0-15\n");
  t.Write(std::string(kPmus) + "/cpu_core/events/mem-loads",
          "event=0xcd,umask=0x1,ldlat=3\n");
  t.Write(std::string(kPmus) + "/cpu_core/events/mem-loads-aux",
          "event=0x03,umask=0x82\n");
  t.Write(std::string(kPmus) + "/cpu_atom/type", "10\n");
  t.Write(std::string(kPmus) + "/cpu_atom/cpus", "16-23\n");
  t.Write(std::string(kPmus) + "/cpu_atom/events/mem-loads",
          "event=0xd0,umask=0x5,ldlat=3\n");
  absl::StatusOr<KernelFs> fs = KernelFs::Open(t.root());
  ASSERT_TRUE(fs.ok());
  absl::StatusOr<EventGroup> g = PebsEvents(*fs, SamplingOptions(), {});
  ASSERT_TRUE(g.ok()) << g.status();

  EventPlanContext ctx;
  ctx.source = "pebs";
  ctx.why = "auto: Intel PEBS load latency is available";
  ctx.per_task = true;
  ctx.tasks = 3;
  ctx.online_cpus = Range(0, 23);
  ctx.rlimit_nofile = 1024;
  ctx.encoder_note = "note";
  absl::StatusOr<Json> j = ParseJson(EventPlanToJson(*g, ctx));
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ((*j)["source"], "pebs");
  EXPECT_EQ((*j)["encoder"], "sysfs");
  EXPECT_EQ((*j)["encoder_note"], "note");
  EXPECT_EQ((*j)["per_task"], true);
  // (16 + 16 + 8) CPUs x 3 tasks.
  EXPECT_EQ((*j)["fds_needed"], 120);
  EXPECT_EQ((*j)["rlimit_nofile"], 1024);
  const Json& ev = (*j)["events"];
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[0]["name"], "cpu_core/mem-loads-aux/");
  EXPECT_EQ(ev[0]["pmu"], "cpu_core");
  EXPECT_EQ(ev[0]["type"], 8);
  EXPECT_EQ(ev[0]["config"], 0x8203);
  EXPECT_EQ(ev[0]["sample_period"], kAuxLeaderPeriod);
  EXPECT_EQ(ev[0]["precise_ip"], 2);
  EXPECT_EQ(ev[0]["group"], 0);
  EXPECT_EQ(ev[0]["leader"], true);
  EXPECT_EQ(ev[0]["keep_samples"], false);
  EXPECT_EQ(ev[0]["cpus"].get<std::vector<int>>(), Range(0, 15));
  EXPECT_EQ(ev[1]["config"], 0x1cd);
  EXPECT_EQ(ev[1]["config1"], 30);
  EXPECT_EQ(ev[1]["config2"], 0);
  EXPECT_EQ(ev[1]["group"], 0);
  EXPECT_EQ(ev[1]["leader"], false);
  EXPECT_EQ(ev[1]["per_task"], true);
  EXPECT_EQ(ev[1]["sample_period"], kDefaultPebsPeriod);
  const std::vector<std::string> st =
      ev[1]["sample_type"].get<std::vector<std::string>>();
  for (const char* want : {"IP", "TID", "TIME", "ADDR", "CPU", "PERIOD",
                           "IDENTIFIER", "WEIGHT_STRUCT", "DATA_SRC"}) {
    EXPECT_NE(std::find(st.begin(), st.end(), want), st.end()) << want;
  }
  EXPECT_EQ(ev[2]["pmu"], "cpu_atom");
  EXPECT_EQ(ev[2]["type"], 10);
  EXPECT_EQ(ev[2]["config"], 0x5d0);
  EXPECT_EQ(ev[2]["group"], 1);
  EXPECT_EQ(ev[2]["leader"], true);
  EXPECT_EQ(ev[2]["cpus"].get<std::vector<int>>(), Range(16, 23));
}

TEST(EventPlanToJson, SystemWideCountsOneTaskAndUnknownLimitIsNull) {
  absl::StatusOr<EventGroup> g = PageFaultEvents(SamplingOptions());
  ASSERT_TRUE(g.ok());
  EventPlanContext ctx;
  ctx.source = "pagefault";
  ctx.per_task = false;
  ctx.tasks = 1;
  ctx.online_cpus = {0, 1, 2, 3};
  absl::StatusOr<Json> j = ParseJson(EventPlanToJson(*g, ctx));
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ((*j)["fds_needed"], 4);
  EXPECT_TRUE((*j)["rlimit_nofile"].is_null());
  EXPECT_EQ((*j)["events"][0]["pmu"], "software");
  EXPECT_EQ((*j)["events"][0]["per_task"], false);
  EXPECT_EQ((*j)["events"][0]["precise_ip"], 0);
}

}  // namespace
}  // namespace hotpage
