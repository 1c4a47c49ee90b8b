#include "sampler/perf/event_plan_json.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tools/base/json_writer.h"

namespace hotpage {
namespace {

// include/uapi/linux/perf_event.h, enum perf_event_sample_format.
constexpr std::pair<uint64_t, const char*> kSampleNames[] = {
    {PERF_SAMPLE_IP, "IP"},
    {PERF_SAMPLE_TID, "TID"},
    {PERF_SAMPLE_TIME, "TIME"},
    {PERF_SAMPLE_ADDR, "ADDR"},
    {PERF_SAMPLE_READ, "READ"},
    {PERF_SAMPLE_CALLCHAIN, "CALLCHAIN"},
    {PERF_SAMPLE_ID, "ID"},
    {PERF_SAMPLE_CPU, "CPU"},
    {PERF_SAMPLE_PERIOD, "PERIOD"},
    {PERF_SAMPLE_STREAM_ID, "STREAM_ID"},
    {PERF_SAMPLE_RAW, "RAW"},
    {PERF_SAMPLE_BRANCH_STACK, "BRANCH_STACK"},
    {PERF_SAMPLE_REGS_USER, "REGS_USER"},
    {PERF_SAMPLE_STACK_USER, "STACK_USER"},
    {PERF_SAMPLE_WEIGHT, "WEIGHT"},
    {PERF_SAMPLE_DATA_SRC, "DATA_SRC"},
    {PERF_SAMPLE_IDENTIFIER, "IDENTIFIER"},
    {PERF_SAMPLE_TRANSACTION, "TRANSACTION"},
    {PERF_SAMPLE_REGS_INTR, "REGS_INTR"},
    {PERF_SAMPLE_PHYS_ADDR, "PHYS_ADDR"},
    {PERF_SAMPLE_AUX, "AUX"},
    {PERF_SAMPLE_CGROUP, "CGROUP"},
    {PERF_SAMPLE_DATA_PAGE_SIZE, "DATA_PAGE_SIZE"},
    {PERF_SAMPLE_CODE_PAGE_SIZE, "CODE_PAGE_SIZE"},
    {PERF_SAMPLE_WEIGHT_STRUCT, "WEIGHT_STRUCT"},
};

}  // namespace

std::vector<std::string> SampleTypeNames(uint64_t sample_type) {
  std::vector<std::string> out;
  for (int bit = 0; bit < 64; ++bit) {
    const uint64_t mask = uint64_t{1} << bit;
    if (!(sample_type & mask)) continue;
    const char* name = nullptr;
    for (const auto& [m, n] : kSampleNames) {
      if (m == mask) name = n;
    }
    out.push_back(name ? std::string(name) : absl::StrCat("BIT", bit));
  }
  return out;
}

std::vector<int> ResolvedCpus(const EventSpec& e,
                              const std::vector<int>& online) {
  if (e.cpus.empty()) return online;
  std::vector<int> out;
  for (int c : e.cpus) {
    if (std::find(online.begin(), online.end(), c) != online.end()) {
      out.push_back(c);
    }
  }
  return out;
}

uint64_t FdsNeeded(const EventGroup& g, const std::vector<int>& online,
                   size_t tasks) {
  uint64_t n = 0;
  for (const EventSpec& e : g.events) {
    n += ResolvedCpus(e, online).size() * tasks;
  }
  return n;
}

std::string EventPlanToJson(const EventGroup& g, const EventPlanContext& ctx) {
  JsonWriter w(2);
  w.BeginObject();
  w.Key("source");
  w.String(ctx.source);
  w.Key("why");
  w.String(ctx.why);
  w.Key("encoder");
  w.String(g.encoder);
  w.Key("plan_note");
  w.String(g.why);
  w.Key("encoder_note");
  w.String(ctx.encoder_note);
  w.Key("cpu_model");
  w.String(ctx.cpu_model);
  w.Key("libpfm_pmu");
  w.String(ctx.libpfm_pmu);
  w.Key("per_task");
  w.Bool(ctx.per_task);
  w.Key("tasks");
  w.Uint(ctx.tasks);
  w.Key("fds_needed");
  w.Uint(FdsNeeded(g, ctx.online_cpus, ctx.tasks));
  w.Key("rlimit_nofile");
  w.Optional(ctx.rlimit_nofile);
  w.Key("events");
  w.BeginArray();
  std::vector<int> groups;  // group ids in order of first appearance
  for (const EventSpec& e : g.events) {
    auto it = std::find(groups.begin(), groups.end(), e.group);
    const bool first = it == groups.end();
    const int index = static_cast<int>(
        first ? groups.size() : static_cast<size_t>(it - groups.begin()));
    if (first) groups.push_back(e.group);
    w.BeginObject();
    w.Key("name");
    w.String(e.name);
    w.Key("pmu");
    w.String(e.pmu);
    w.Key("type");
    w.Uint(e.attr.type);
    w.Key("config");
    w.Uint(e.attr.config);
    w.Key("config1");
    w.Uint(e.attr.config1);
    w.Key("config2");
    w.Uint(e.attr.config2);
    w.Key("sample_period");
    w.Uint(e.attr.sample_period);
    w.Key("sample_type");
    w.BeginArray();
    for (const std::string& n : SampleTypeNames(e.attr.sample_type)) {
      w.String(n);
    }
    w.EndArray();
    w.Key("precise_ip");
    w.Uint(e.attr.precise_ip);
    w.Key("cpus");
    w.IntArray(ResolvedCpus(e, ctx.online_cpus));
    w.Key("group");
    w.Int(index);
    w.Key("leader");
    w.Bool(first || !g.grouped);
    w.Key("per_task");
    w.Bool(ctx.per_task);
    w.Key("keep_samples");
    w.Bool(e.keep_samples);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.str() + "\n";
}

}  // namespace hotpage
