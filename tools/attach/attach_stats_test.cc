// attach's stats: the perf part (THROTTLE/UNTHROTTLE and loss records in
// --stats-json, --prom-file and the status line, issue 12 section 4); who
// the stats are about (pid, comm, workload, cgroup, version, timestamp)
// and the Prometheus text carrying every metric of the JSON, labelled by
// workload, pid and cgroup (issue 14 section 4); the text served by
// --metrics-listen. The rest of the formats is pinned in
// attach_loop_test.cc.

#include "tools/attach/attach_stats.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "sampler/hintfault/numa_balancing_controller.h"
#include "sampler/write_fault_rearm.h"
#include "tools/base/json.h"
#include "tools/base/kernel/fake_sysfs_writer.h"
#include "tools/base/kernel/fake_tree.h"
#include "tools/base/kernel/kernel_fs.h"
#include "tools/base/metrics_server.h"
#include "tools/version.h"

namespace hotpage {
namespace {

AttachIdentity Memcached(int64_t pid = 4242) {
  AttachIdentity id;
  id.pid = pid;
  id.comm = "memcached";
  id.workload = "cache";
  id.cgroup = "system.slice/memcached.service";
  id.version = "0.1.0";
  return id;
}

constexpr char kWho[] =
    "{workload=\"cache\",pid=\"4242\",cgroup=\"system.slice/"
    "memcached.service\"}";

TEST(AttachStatsPerf, ThrottleInJsonPromAndStatusLine) {
  AttachStats s;
  s.id = Memcached();
  s.source = "pebs";
  s.perf = PerfSourceStats{12, 11, 5, 2, 1, 3, 1};
  const std::string json = AttachStatsJson(s);
  EXPECT_TRUE(absl::StrContains(json, R"(  "perf": {
    "throttle": 12,
    "unthrottle": 11,
    "lost": 5,
    "lost_samples": 2,
    "period_errors": 1,
    "period_reopens": 3,
    "period_reopen_failures": 1
  })"))
      << json;
  const std::string prom = AttachStatsProm(s);
  EXPECT_TRUE(absl::StrContains(
      prom, absl::StrCat("# TYPE hotpage_perf_throttle_total counter\n"
                         "hotpage_perf_throttle_total",
                         kWho, " 12\n")))
      << prom;
  EXPECT_TRUE(absl::StrContains(
      prom, absl::StrCat("hotpage_perf_unthrottle_total", kWho, " 11\n")))
      << prom;
  EXPECT_TRUE(absl::StrContains(
      prom, absl::StrCat("hotpage_perf_period_reopens_total", kWho, " 3\n")))
      << prom;
  EXPECT_TRUE(absl::StrContains(
      prom,
      absl::StrCat("hotpage_perf_period_reopen_failures_total", kWho, " 1\n")))
      << prom;
  EXPECT_EQ(PerfStatusFields(s), " throttled=12 unthrottled=11 lost=7");
}

TEST(AttachStatsPerf, AbsentForOtherSources) {
  AttachStats s;
  s.source = "damon";
  EXPECT_FALSE(absl::StrContains(AttachStatsJson(s), "throttle"));
  EXPECT_FALSE(absl::StrContains(AttachStatsProm(s), "throttle"));
  EXPECT_EQ(PerfStatusFields(s), "");
}

TEST(AttachIdentityTest, CommAndCgroupComeFromProc) {
  FakeTree tree;
  tree.Write("/proc/4242/comm", "memcached\n");
  tree.Write("/proc/4242/cgroup",
             "0::/system.slice/memcached.service\n");  // cgroup v2 only
  tree.Write("/proc/7/comm", "mixed\n");
  tree.Write("/proc/7/cgroup",
             "12:memory:/legacy\n1:name=systemd:/x\n0::/kubepods/pod1/c2\n");
  absl::StatusOr<KernelFs> fs = KernelFs::Open(tree.root());
  ASSERT_TRUE(fs.ok()) << fs.status();
  AttachIdentity id = ReadAttachIdentity(*fs, 4242, std::nullopt, "1.2.3");
  EXPECT_EQ(id.pid, 4242);
  EXPECT_EQ(id.comm, "memcached");
  EXPECT_EQ(id.workload, "memcached");  // comm unless named
  EXPECT_EQ(id.cgroup, "system.slice/memcached.service");
  EXPECT_EQ(id.version, "1.2.3");
  id = ReadAttachIdentity(*fs, 4242, std::string("cache"), "1.2.3");
  EXPECT_EQ(id.workload, "cache");
  EXPECT_EQ(ReadAttachIdentity(*fs, 7, std::nullopt, "").cgroup,
            "kubepods/pod1/c2");
  // Gone (or never there): empty fields, a workload named by the pid.
  id = ReadAttachIdentity(*fs, 99, std::nullopt, "");
  EXPECT_EQ(id.comm, "");
  EXPECT_EQ(id.cgroup, "");
  EXPECT_EQ(id.workload, "pid-99");
}

TEST(AttachIdentityTest, WorkloadNamesAreChecked) {
  EXPECT_TRUE(ValidateWorkloadName("cache \"a\" / b").ok());
  EXPECT_FALSE(ValidateWorkloadName("").ok());
  EXPECT_FALSE(ValidateWorkloadName(std::string(129, 'a')).ok());
  EXPECT_FALSE(ValidateWorkloadName("a\nb").ok());
  EXPECT_FALSE(ValidateWorkloadName("caf\xc3\xa9").ok());
}

TEST(AttachStatsJsonTest, SaysWhoAndWhenWithTheBinarysVersion) {
  AttachStats s;
  s.id = Memcached();
  s.id.version = std::string(VersionNumber());
  // 2026-12-02T06:48:48.123456789Z.
  s.timestamp_ns = 1796194128123456789;
  absl::StatusOr<Json> doc = ParseJson(AttachStatsJson(s));
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ((*doc)["pid"], 4242);
  EXPECT_EQ((*doc)["comm"], "memcached");
  EXPECT_EQ((*doc)["workload"], "cache");
  EXPECT_EQ((*doc)["cgroup"], "system.slice/memcached.service");
  EXPECT_EQ((*doc)["version"], std::string(VersionNumber()));
  EXPECT_TRUE(absl::StartsWith(VersionLine(""),
                               absl::StrCat("hotpage ", VersionNumber(), " ")));
  // RFC 3339 in UTC, milliseconds; and Unix seconds, the same instant.
  EXPECT_EQ((*doc)["timestamp"], "2026-12-02T06:48:48.123Z");
  EXPECT_DOUBLE_EQ((*doc)["timestamp_unix_s"].get<double>(), 1796194128.123);
  const std::string prom = AttachStatsProm(s);
  EXPECT_TRUE(
      absl::StrContains(prom, absl::StrCat("hotpage_stats_timestamp_seconds",
                                           kWho, " 1796194128.123\n")))
      << prom;
}

// Every value line of `prom`: its series (name and labels) -> its value.
std::map<std::string, std::string> Series(const std::string& prom) {
  std::map<std::string, std::string> out;
  for (absl::string_view line : absl::StrSplit(prom, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "#")) continue;
    const size_t sp = line.rfind(' ');
    out[std::string(line.substr(0, sp))] = std::string(line.substr(sp + 1));
  }
  return out;
}

TEST(AttachStatsPromTest, EverySeriesIsLabelledAndLabelValuesEscaped) {
  AttachStats s;
  s.id = Memcached();
  s.id.workload = "a \"quoted\" \\ name\nwith a line feed";
  s.id.cgroup = "x\"y";
  s.migrator.failed_pages_by_errno = {{EBUSY, 3}};
  s.hot_pages_by_node = {{1, 2}};
  s.perf = PerfSourceStats{};
  s.damon_recovered = "kdamond 0";
  const std::string prom = AttachStatsProm(s);
  const std::string who =
      "workload=\"a \\\"quoted\\\" \\\\ name\\nwith a line feed\",pid=\"4242\","
      "cgroup=\"x\\\"y\"";
  std::set<std::string> families;
  for (absl::string_view line : absl::StrSplit(prom, '\n', absl::SkipEmpty())) {
    if (absl::ConsumePrefix(&line, "# TYPE ")) {
      families.insert(std::string(line.substr(0, line.find(' '))));
    }
  }
  const std::map<std::string, std::string> series = Series(prom);
  ASSERT_GT(series.size(), 30u);
  for (const auto& [name, value] : series) {
    EXPECT_TRUE(absl::StrContains(name, absl::StrCat("{", who)))
        << name << " in\n"
        << prom;
  }
  // Each family has its HELP and TYPE lines.
  for (const std::string& f : families) {
    EXPECT_TRUE(absl::StrContains(prom, absl::StrCat("\n# HELP ", f, " ")) ||
                absl::StartsWith(prom, absl::StrCat("# HELP ", f, " ")))
        << f;
  }
  EXPECT_EQ(series.at(absl::StrCat("hotpage_failed_pages_total{", who,
                                   ",errno=\"EBUSY\"}")),
            "3");
  EXPECT_EQ(series.at(absl::StrCat("hotpage_info{", who,
                                   ",comm=\"memcached\",source=\"\",version="
                                   "\"0.1.0\"}")),
            "1");
}

// JSON leaf paths ("a.b"; arrays are not used) -> the value as text.
void Leaves(const Json& j, const std::string& prefix,
            std::map<std::string, const Json*>* out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      Leaves(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(),
             out);
    }
  } else {
    (*out)[prefix] = &j;
  }
}

class CountingClearRefs : public ClearRefsFile {
 public:
  int ClearSoftDirty() override { return 0; }
};

// Every field --stats-json can have, and the Prometheus family that carries
// it. A new JSON field fails this test until it has its metric.
TEST(AttachStatsPromTest, CarriesEveryFieldOfTheJson) {
  // A hint-fault source on a fake machine (as numa_balancing_controller_test
  // builds one) and a write-fault re-arm over a fake clear_refs, so that
  // every optional section of the JSON is there.
  FakeTree tree;
  FakeSysfsLog log(&tree);
  tree.Write("/proc/sys/kernel/numa_balancing", "0\n");
  tree.Write("/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps",
             "65536\n");
  tree.Write("/proc/vmstat",
             "numa_pte_updates 1\nnuma_hint_faults 2\nnuma_hint_faults_local "
             "0\nnuma_pages_migrated 0\npgpromote_success 0\n"
             "pgpromote_candidate 2\n");
  tree.Write("/proc/self/stat",
             "99 (hotpage) R 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 4242 0 0\n");
  tree.Write("/proc/4242/stat",
             "4242 (memcached) R 1 1 1 0 -1 4194304 10 0 0 0 5 3 0 0 20 0 1 "
             "0 777 0 0\n");
  tree.Write("/proc/4242/sched",
             "x (4242, #threads: 1)\n----\nmm->numa_scan_seq : 3\n");
  tree.Write("/sys/kernel/mm/numa/demotion_enabled", "true\n");
  tree.Mkdir("/run");
  NumaBalancingOptions ho;
  ho.pid = 4242;
  ho.slow_nodes = {1};
  ho.state_dir = tree.root() + "/run/hotpage";
  ho.check_interval = absl::Hours(1);
  ho.warn = [](const std::string&) {};
  absl::StatusOr<KernelFs> fs = KernelFs::Open(tree.root());
  ASSERT_TRUE(fs.ok()) << fs.status();
  absl::StatusOr<std::unique_ptr<NumaBalancingController>> hint =
      NumaBalancingController::Start(ho, std::move(*fs), log.NewWriter());
  ASSERT_TRUE(hint.ok()) << hint.status();
  (*hint)->CheckNow();
  WriteFaultRearmOptions ro;
  ro.clock = [] { return uint64_t{1000000000}; };
  WriteFaultRearm rearm(std::make_unique<CountingClearRefs>(), ro);
  ASSERT_TRUE(rearm.MaybeRearm(1000000000).ok());

  AttachStats s;
  s.id = Memcached();
  s.timestamp_ns = 1796194128123000000;
  s.source = "hintfault";
  s.migrator.failed_pages_by_errno = {{EBUSY, 1}, {ENOMEM, 2}};
  s.migrator.hot_to_moved.Record(absl::Milliseconds(3));
  s.hot_pages_by_node = {{0, 1}, {1, 2}};
  s.damon_recovered = "kdamond 0 of pid 12";
  s.perf = PerfSourceStats{1, 2, 3, 4, 5};
  s.hintfault = hint->get();
  s.write_faults = &rearm;
  absl::StatusOr<Json> doc = ParseJson(AttachStatsJson(s));
  ASSERT_TRUE(doc.ok()) << doc.status();
  std::map<std::string, const Json*> leaves;
  Leaves(*doc, "", &leaves);

  // The JSON's fields and the families that carry them. Strings: labels
  // of hotpage_info or a 0/1 gauge; pid, workload and cgroup: the labels
  // of every series (checked above).
  const std::map<std::string, std::string> carried = {
      {"pid", "(label)"},
      {"comm", "hotpage_info"},
      {"workload", "(label)"},
      {"cgroup", "(label)"},
      {"version", "hotpage_info"},
      {"timestamp", "hotpage_stats_timestamp_seconds"},
      {"timestamp_unix_s", "hotpage_stats_timestamp_seconds"},
      {"promoted_pages", "hotpage_promoted_pages_total"},
      {"demoted_pages", "hotpage_demoted_pages_total"},
      {"promoted_bytes", "hotpage_promoted_bytes_total"},
      {"demoted_bytes", "hotpage_demoted_bytes_total"},
      {"failed_pages.EBUSY", "hotpage_failed_pages_total"},
      {"failed_pages.ENOMEM", "hotpage_failed_pages_total"},
      {"failed_pages_total", "hotpage_failed_pages_total"},
      {"pingpong_pages", "hotpage_pingpong_pages_total"},
      {"samples", "hotpage_samples_total"},
      {"hot_pages", "hotpage_hot_pages"},
      {"hot_pages_by_node.0", "hotpage_hot_pages_by_node"},
      {"hot_pages_by_node.1", "hotpage_hot_pages_by_node"},
      {"promotion_yield", "hotpage_promotion_yield"},
      {"demotion_regret", "hotpage_demotion_regret"},
      {"yield_samples", "hotpage_yield_samples_total"},
      {"regret_samples", "hotpage_regret_samples_total"},
      {"hot_to_moved_ms.count", "hotpage_hot_to_moved_seconds_count"},
      {"hot_to_moved_ms.p50", "hotpage_hot_to_moved_seconds"},
      {"hot_to_moved_ms.p99", "hotpage_hot_to_moved_seconds"},
      {"hot_to_moved_ms.max", "hotpage_hot_to_moved_max_seconds"},
      {"rate_limit_wait_s", "hotpage_rate_limit_wait_seconds_total"},
      {"cpu_budget_wait_s", "hotpage_cpu_budget_wait_seconds_total"},
      {"planned_promotions", "hotpage_planned_promotions_total"},
      {"planned_demotions", "hotpage_planned_demotions_total"},
      {"planned_locality", "hotpage_planned_locality_pages_total"},
      {"rounds", "hotpage_rounds_total"},
      {"early_rounds", "hotpage_early_rounds_total"},
      {"room_rounds", "hotpage_room_rounds_total"},
      {"short_window_held_rounds", "hotpage_short_window_held_rounds_total"},
      {"silences_doubted_rounds", "hotpage_silences_doubted_rounds_total"},
      {"odds_pair_rounds", "hotpage_odds_pair_rounds_total"},
      {"arrival_promotions", "hotpage_arrival_promotions_total"},
      {"rounds_waited_for_arrivals",
       "hotpage_rounds_waited_for_arrivals_total"},
      {"first_touches_dropped", "hotpage_first_touches_dropped_total"},
      {"resident_growth_pages", "hotpage_resident_growth_pages_total"},
      {"refault_protections", "hotpage_refault_protections_total"},
      {"reclaim_promotions", "hotpage_reclaim_promotions_total"},
      {"reclaim_returns", "hotpage_reclaim_returns_total"},
      {"repeat_window_s", "hotpage_repeat_window_seconds"},
      {"engine_bytes", "hotpage_engine_bytes"},
      {"reclaim_makes_room", "hotpage_reclaim_makes_room"},
      {"untracked_victims", "hotpage_untracked_victims_total"},
      {"bandwidth_bound_rounds", "hotpage_bandwidth_bound_rounds_total"},
      {"planned_sheds", "hotpage_planned_sheds_total"},
      {"horizon_s", "hotpage_horizon_seconds"},
      {"migration_cost_ns", "hotpage_migration_cost_seconds"},
      {"migration_margin_per_sec", "hotpage_migration_margin_per_second"},
      {"dry_run", "hotpage_dry_run"},
      {"source", "hotpage_info"},
      {"cpu_seconds", "hotpage_cpu_seconds_total"},
      {"damon.recovered", "hotpage_damon_recovered"},
      {"perf.throttle", "hotpage_perf_throttle_total"},
      {"perf.unthrottle", "hotpage_perf_unthrottle_total"},
      {"perf.lost", "hotpage_perf_lost_total"},
      {"perf.lost_samples", "hotpage_perf_lost_samples_total"},
      {"perf.period_errors", "hotpage_perf_period_errors_total"},
      {"perf.period_reopens", "hotpage_perf_period_reopens_total"},
      {"perf.period_reopen_failures",
       "hotpage_perf_period_reopen_failures_total"},
      {"write_faults.rearms", "hotpage_write_fault_rearms_total"},
      {"write_faults.clear_ms_total",
       "hotpage_write_fault_clear_seconds_total"},
      {"write_faults.clear_ms_max", "hotpage_write_fault_clear_max_seconds"},
      {"write_faults.interval_ms", "hotpage_write_fault_interval_seconds"},
      {"hintfault.numa_pte_updates",
       "hotpage_hintfault_numa_pte_updates_total"},
      {"hintfault.numa_hint_faults",
       "hotpage_hintfault_numa_hint_faults_total"},
      {"hintfault.numa_hint_faults_local",
       "hotpage_hintfault_numa_hint_faults_local_total"},
      {"hintfault.pgpromote_candidate",
       "hotpage_hintfault_pgpromote_candidate_total"},
      {"hintfault.pgpromote_success",
       "hotpage_hintfault_pgpromote_success_total"},
      {"hintfault.numa_pages_migrated",
       "hotpage_hintfault_numa_pages_migrated_total"},
      {"hintfault.kernel_migrated_pages",
       "hotpage_hintfault_kernel_migrated_pages_total"},
      {"hintfault.hint_faults_per_sec",
       "hotpage_hintfault_hint_faults_per_second"},
      {"hintfault.scan_passes", "hotpage_hintfault_scan_passes_total"},
      {"hintfault.longest_scan_gap_s",
       "hotpage_hintfault_longest_scan_gap_seconds"},
      {"hintfault.scan_stalled", "hotpage_hintfault_scan_stalled"},
      {"hintfault.stall_episodes", "hotpage_hintfault_stall_episodes_total"},
      {"hintfault.sysctl_overrides",
       "hotpage_hintfault_sysctl_overrides_total"},
      {"hintfault.demotion_enabled", "hotpage_hintfault_demotion_enabled"},
      {"hintfault.demotion_changes",
       "hotpage_hintfault_demotion_changes_total"},
      {"hintfault.unscannable_slow_pages",
       "hotpage_hintfault_unscannable_slow_pages"},
      {"hintfault.target_minor_faults",
       "hotpage_hintfault_target_minor_faults_total"},
      {"hintfault.watchdog_cpu_seconds",
       "hotpage_hintfault_watchdog_cpu_seconds_total"},
      {"hintfault.recovered", "hotpage_hintfault_recovered"},
  };
  const std::string prom = AttachStatsProm(s);
  const std::map<std::string, std::string> series = Series(prom);
  for (const auto& [path, value] : leaves) {
    auto it = carried.find(path);
    ASSERT_NE(it, carried.end())
        << "--stats-json has \"" << path
        << "\" but --prom-file has no metric for it: add one to "
           "AttachStatsProm and to this table";
    if (it->second == "(label)") continue;
    bool found = false;
    for (const auto& [name, v] : series) {
      found |= absl::StartsWith(name, it->second + "{");
    }
    EXPECT_TRUE(found) << path << " -> " << it->second << " missing in\n"
                       << prom;
  }
  // Values that must agree, converted to Prometheus's units.
  const std::string who = kWho;
  const std::string in = who.substr(0, who.size() - 1);
  EXPECT_EQ(series.at("hotpage_perf_lost_samples_total" + who), "4");
  EXPECT_EQ(series.at("hotpage_hot_to_moved_seconds_count" + who), "1");
  EXPECT_EQ(series.at("hotpage_hot_pages_by_node" + in + ",node=\"1\"}"), "2");
  EXPECT_EQ(series.at("hotpage_write_fault_rearms_total" + who), "1");
  EXPECT_EQ(series.at("hotpage_hintfault_numa_hint_faults_total" + who),
            absl::StrCat((*doc)["hintfault"]["numa_hint_faults"].get<int>()));
  EXPECT_EQ(series.at("hotpage_hintfault_scan_passes_total" + who),
            absl::StrCat((*doc)["hintfault"]["scan_passes"].get<int>()));
  EXPECT_EQ(series.at("hotpage_damon_recovered" + who), "1");
  ASSERT_TRUE((*hint)->Stop().ok());
}

// Two attaches (two processes) write to one textfile-collector directory:
// no series in common, and every family they share has the same HELP and
// TYPE (node_exporter refuses inconsistent ones).
TEST(AttachStatsPromTest, TwoAttachesNeverShareASeries) {
  AttachStats a;
  a.id = Memcached(100);
  a.source = "pebs";
  a.perf = PerfSourceStats{};
  a.migrator.failed_pages_by_errno = {{EBUSY, 1}};
  AttachStats b = a;
  b.id = Memcached(200);  // same comm, same cgroup, same workload name
  const std::string pa = AttachStatsProm(a), pb = AttachStatsProm(b);
  const std::map<std::string, std::string> sa = Series(pa), sb = Series(pb);
  for (const auto& [name, v] : sa) EXPECT_EQ(sb.count(name), 0u) << name;
  auto meta = [](const std::string& prom) {
    std::string out;
    for (absl::string_view line :
         absl::StrSplit(prom, '\n', absl::SkipEmpty())) {
      if (absl::StartsWith(line, "#")) absl::StrAppend(&out, line, "\n");
    }
    return out;
  };
  EXPECT_EQ(meta(pa), meta(pb));
}

// GET /metrics over a socket from a server on 127.0.0.1:0 whose text is
// what AttachStatsFiles kept: the labelled --prom-file text.
TEST(AttachStatsFilesTest, MetricsListenServesTheLabelledText) {
  FakeTree tree;
  const std::string prom_path = tree.root() + "/attach.prom";
  std::ostringstream log;
  AttachStatsFiles files(std::nullopt, prom_path, &log, /*keep_prom=*/true);
  EXPECT_EQ(files.LatestProm(), "");
  AttachStats s;
  s.id = Memcached();
  s.samples = 1200;
  files.Publish(s, /*final=*/false);
  absl::StatusOr<MetricsListenAddress> addr = ParseMetricsListen("127.0.0.1:0");
  ASSERT_TRUE(addr.ok()) << addr.status();
  absl::StatusOr<std::unique_ptr<MetricsServer>> server =
      MetricsServer::Start(*addr, [&files] { return files.LatestProm(); });
  ASSERT_TRUE(server.ok()) << server.status();

  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>((*server)->port()));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)), 0);
  const std::string req = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(send(fd, req.data(), req.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(req.size()));
  std::string reply;
  char buf[4096];
  for (ssize_t n; (n = recv(fd, buf, sizeof(buf), 0)) > 0;) {
    reply.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  EXPECT_TRUE(absl::StartsWith(reply, "HTTP/1.1 200 OK\r\n")) << reply;
  EXPECT_TRUE(
      absl::StrContains(reply, "Content-Type: text/plain; version=0.0.4"));
  const std::string body = reply.substr(reply.find("\r\n\r\n") + 4);
  // The same text as the file, labelled.
  std::ifstream in(prom_path);
  std::stringstream file;
  file << in.rdbuf();
  EXPECT_EQ(body, file.str());
  EXPECT_TRUE(absl::StrContains(
      body, absl::StrCat("hotpage_samples_total", kWho, " 1200\n")))
      << body;
}

}  // namespace
}  // namespace hotpage
