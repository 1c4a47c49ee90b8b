#include "tools/daemon/daemon_config.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace hotpage {
namespace {

constexpr char kFull[] = R"(# every key
[daemon]
interval_ms = 500
rate_limit_mbps = 128
kernel_tiering = "take-over"
socket = "/run/hotpage/x.sock"
state_dir = "/run/hotpage"
prom_file = "/var/lib/node-exporter/hotpage.prom"
log_level = "warning"
min_rss = "1GiB"
self_memory = "local"
rounds_dir = "/var/log/hotpage/rounds"
rounds_max_bytes = "1MiB"
rounds_dir_max_bytes = "3MiB"

[[workload]]
name = "cache"
cgroup = "/system.slice/memcached.service"
source = "damon"
promote_to = "0"
weights = "0:3,1:1"
package_aware = true
locality = true
keep_interleave = 0.1
huge_strict = true
rate_share = 2
fast_floor = "2GiB"
fast_cap = "50%"

[[workload]]
name = "db"
cmdline = "^postgres: .*"
source = "pagefault"
write_faults = true
rounds = true

[[workload]]
name = "one"
pid = 4242

[[workload]]
name = "worker"
comm = "worker"

[[workload]]
name = "big"
all = true
)";

TEST(DaemonConfigTest, ParsesEveryKey) {
  absl::StatusOr<DaemonConfig> c = ParseDaemonConfig(kFull, "h.toml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->interval_ms, 500);
  EXPECT_EQ(c->rate_limit_mbps, 128);
  EXPECT_EQ(c->kernel_tiering, KernelTieringMode::kTakeOver);
  EXPECT_EQ(c->socket, "/run/hotpage/x.sock");
  EXPECT_EQ(c->prom_file, "/var/lib/node-exporter/hotpage.prom");
  EXPECT_EQ(c->log_level, "warning");
  EXPECT_EQ(c->min_rss_bytes, 1ull << 30);
  EXPECT_EQ(c->self_memory.choice, SelfMemoryChoice::kLocal);
  EXPECT_TRUE(c->self_memory.given);
  ASSERT_EQ(c->workloads.size(), 5u);
  const WorkloadConfig& w = c->workloads[0];
  EXPECT_EQ(w.name, "cache");
  EXPECT_EQ(w.line, 16);
  EXPECT_EQ(w.selector, SelectorKind::kCgroup);
  EXPECT_EQ(w.match, "system.slice/memcached.service");  // leading '/' gone
  EXPECT_EQ(w.source, "damon");
  EXPECT_EQ(w.promote_to, "0");
  EXPECT_TRUE(w.placement.package_aware);
  EXPECT_TRUE(w.placement.locality);
  EXPECT_TRUE(w.placement.huge_strict_preferred);
  EXPECT_DOUBLE_EQ(w.placement.interleave_tolerance, 0.1);
  EXPECT_DOUBLE_EQ(w.rate_share, 2);
  EXPECT_EQ(w.fast_floor.Resolve(8ull << 30, false), 2ull << 30);
  EXPECT_EQ(w.fast_cap.Resolve(8ull << 30, true), 4ull << 30);
  EXPECT_EQ(c->workloads[1].selector, SelectorKind::kCmdline);
  EXPECT_TRUE(c->workloads[1].write_faults);
  EXPECT_FALSE(w.write_faults);
  EXPECT_EQ(c->rounds_dir, "/var/log/hotpage/rounds");
  EXPECT_EQ(c->rounds_max_bytes, 1ull << 20);
  EXPECT_EQ(c->rounds_dir_max_bytes, 3ull << 20);
  EXPECT_TRUE(c->workloads[1].rounds);
  EXPECT_FALSE(w.rounds);
  EXPECT_EQ(c->workloads[2].selector, SelectorKind::kPid);
  EXPECT_EQ(c->workloads[2].match, "4242");
  EXPECT_EQ(c->workloads[3].selector, SelectorKind::kComm);
  EXPECT_EQ(c->workloads[4].selector, SelectorKind::kAll);
  // Unset shares: no floor, no cap.
  EXPECT_EQ(c->workloads[1].fast_floor.Resolve(100, false), 0u);
  EXPECT_EQ(c->workloads[1].fast_cap.Resolve(100, true), 100u);
}

TEST(DaemonConfigTest, DefaultsWithOneWorkload) {
  absl::StatusOr<DaemonConfig> c =
      ParseDaemonConfig("[[workload]]\nname = \"a\"\npid = 1\n", "h.toml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->interval_ms, 1000);
  EXPECT_EQ(c->kernel_tiering, KernelTieringMode::kRefuse);
  EXPECT_EQ(c->socket, "/run/hotpage/hotpage.sock");
  EXPECT_EQ(c->workloads[0].source, "auto");
  EXPECT_EQ(c->self_memory.choice, SelfMemoryChoice::kSlow);
  EXPECT_FALSE(c->self_memory.given);
  EXPECT_EQ(c->rounds_dir, "");
  EXPECT_EQ(c->rounds_max_bytes, 64ull << 20);
  EXPECT_EQ(c->rounds_dir_max_bytes, 1ull << 30);  // 16 files at their bound
  // The directory's default follows the per-file bound.
  c = ParseDaemonConfig(
      "[daemon]\nrounds_max_bytes=\"2MiB\"\n[[workload]]\nname=\"a\"\n"
      "pid=1\n",
      "h.toml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->rounds_dir_max_bytes, 32ull << 20);
  EXPECT_FALSE(c->workloads[0].rounds);
}

// self_memory: slow, local or a node, as a string or a number (checked
// against the machine when the daemon starts, not here).
TEST(DaemonConfigTest, SelfMemory) {
  for (const char* value : {"\"slow\"", "\"3\"", "3"}) {
    absl::StatusOr<DaemonConfig> c = ParseDaemonConfig(
        absl::StrCat("[daemon]\nself_memory = ", value,
                     "\n[[workload]]\nname = \"a\"\npid = 1\n"),
        "h.toml");
    ASSERT_TRUE(c.ok()) << value << ": " << c.status();
    EXPECT_TRUE(c->self_memory.given);
    if (value[0] != '"' || value[1] == '3') {
      EXPECT_EQ(c->self_memory.choice, SelfMemoryChoice::kNode);
      EXPECT_EQ(c->self_memory.node, 3);
    } else {
      EXPECT_EQ(c->self_memory.choice, SelfMemoryChoice::kSlow);
    }
  }
}

// source hintfault under take-over: accepted, and UsesHintFaults says so.
TEST(DaemonConfigTest, HintFaultsUnderTakeOver) {
  absl::StatusOr<DaemonConfig> c = ParseDaemonConfig(
      "[daemon]\nkernel_tiering=\"take-over\"\n[[workload]]\nname=\"a\"\n"
      "pid=1\nsource=\"hintfault\"\n[[workload]]\nname=\"b\"\npid=2\n",
      "h.toml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->workloads[0].source, "hintfault");
  EXPECT_TRUE(UsesHintFaults(*c));
  c->workloads[0].source = "pagefault";
  EXPECT_FALSE(UsesHintFaults(*c));
}

// Each bad config is rejected with the file, the line and the key.
TEST(DaemonConfigTest, RejectsWithLineAndReason) {
  struct Case {
    const char* text;
    const char* want;  // substring of the message
  };
  const Case cases[] = {
      {"[daemon]\ninterval = 5\n[[workload]]\nname=\"a\"\npid=1\n",
       "h.toml:2: interval: unknown key in [daemon]"},
      {"[[workload]]\nname=\"a\"\npid=1\nweigths=\"0:1\"\n",
       "h.toml:4: weigths: unknown key in [[workload]]"},
      {"[deamon]\n", "h.toml:1: deamon: unknown key in the file"},
      {"[[workload]]\nname=\"a\"\n", ":1: a: needs a selector"},
      {"[[workload]]\nname=\"a\"\npid=1\ncomm=\"x\"\n", "one selector"},
      {"[[workload]]\nname=\"a\"\npid=1\n[[workload]]\nname=\"a\"\npid=2\n",
       "'a' is used twice"},
      {"[[workload]]\nname=\"a b\"\npid=1\n", "h.toml:2: name: letters"},
      {"[[workload]]\nname=\"a\"\ncgroup=\"x/../../etc\"\n",
       "h.toml:3: cgroup: must be a plain path"},
      {"[[workload]]\nname=\"a\"\ncmdline=\"(\"\n",
       "h.toml:3: cmdline: bad regex"},
      {"[[workload]]\nname=\"a\"\ncomm=\"abcdefghijklmnopq\"\n",
       "1 to 15 bytes"},
      {"[[workload]]\nname=\"a\"\npid=0\n", "h.toml:3: pid: must be in"},
      {"[[workload]]\nname=\"a\"\npid=\"12\"\n", "pid: must be an integer"},
      {"[[workload]]\nname=\"a\"\nall=false\n", "only `all = true`"},
      {"[[workload]]\nname=\"a\"\npid=1\nweights=\"0:x\"\n",
       "h.toml:4: weights: \"0:x\" is not NODE:WEIGHT"},
      {"[[workload]]\nname=\"a\"\npid=1\nkeep_interleave=2\n",
       "keep_interleave: must be in [0, 1]"},
      {"[[workload]]\nname=\"a\"\npid=1\nsource=\"pebbs\"\n",
       "source: one of auto"},
      {"[[workload]]\nname=\"a\"\npid=1\npromote_to=\"x\"\n",
       "promote_to: a node list"},
      {"[[workload]]\nname=\"a\"\npid=1\nfast_floor=\"3 GB\"\n",
       "fast_floor: '3 GB': unknown unit 'GB'"},
      {"[[workload]]\nname=\"a\"\npid=1\nfast_floor=\"120%\"\n", "[0%, 100%]"},
      {"[[workload]]\nname=\"a\"\npid=1\nfast_floor=\"60%\"\nfast_cap=\"50%\""
       "\n",
       "fast_floor: is above fast_cap"},
      {"[[workload]]\nname=\"a\"\npid=1\nfast_floor=\"60%\"\n"
       "[[workload]]\nname=\"b\"\npid=2\nfast_floor=\"50%\"\n",
       "h.toml:8: fast_floor: the workloads' percent floors add up past 100%"},
      {"[daemon]\nkernel_tiering=\"takeover\"\n", "one of refuse, coexist"},
      {"[daemon]\nsocket=\"run/x\"\n", "socket: must be an absolute path"},
      {"[daemon]\nstate_dir=\"/run/../etc\"\n", "without '..'"},
      {"[daemon]\ninterval_ms=1\n", "interval_ms: must be in [10,"},
      {"[[workload]]\nname=\"a\"\npid=1\nwrite_faults=true\n",
       "h.toml:4: write_faults: needs source = \"pagefault\""},
      {"[daemon]\nlog_level=\"loud\"\n", "log_level: one of debug"},
      {"[daemon]\nself_memory=\"fast\"\n",
       "h.toml:2: self_memory: 'fast' is not slow, local or a node number"},
      {"[daemon]\nself_memory=-1\n", "self_memory: '-1' is not slow"},
      {"[daemon]\nself_memory=1024\n", "(0 to 1023)"},
      {"[daemon]\nself_memory=true\n", "self_memory: must be a string"},
      {"[daemon]\nkernel_tiering=\"coexist\"\n[[workload]]\nname=\"a\"\n"
       "pid=1\nsource=\"hintfault\"\n",
       "h.toml:6: source: hintfault needs kernel_tiering = \"take-over\""},
      {"[[workload]]\nname=\"a\"\npid=1\nsource=\"hintfault\"\n",
       "hintfault needs kernel_tiering"},
      {"[daemon]\n", "no [[workload]]: nothing to manage"},
      {"[[workload]]\nname=\"a\"\npid=1\nrounds=true\n",
       "h.toml:4: rounds: needs rounds_dir in [daemon]"},
      {"[[workload]]\nname=\"a\"\npid=1\nrounds=\"yes\"\n",
       "rounds: must be true or false"},
      {"[daemon]\nrounds_dir=\"log/rounds\"\n",
       "h.toml:2: rounds_dir: must be an absolute path"},
      {"[daemon]\nrounds_max_bytes=\"1KiB\"\n",
       "h.toml:2: rounds_max_bytes: must be 64KiB to 1TiB"},
      {"[daemon]\nrounds_max_bytes=\"lots\"\n", "rounds_max_bytes: 'lots'"},
      {"[daemon]\nrounds_max_bytes=-5\n", "rounds_max_bytes: must be a string"},
      {"[daemon]\nrounds_dir_max_bytes=\"17TiB\"\n",
       "h.toml:2: rounds_dir_max_bytes: must be 64KiB to 16TiB"},
      // Below the per-file bound, whichever key comes first.
      {"[daemon]\nrounds_dir_max_bytes=\"1MiB\"\nrounds_max_bytes=\"2MiB\"\n",
       "h.toml:2: rounds_dir_max_bytes: must be at least rounds_max_bytes "
       "(2097152 bytes)"},
      {"workload = 3\n", "must be an array of tables"},
      {"[[workload]]\nname=\"a\"\npid=1\nlocality=1\n",
       "locality: must be true or false"},
      {"[[workload\nname=\"a\"\n", "h.toml:1: not valid TOML"},
      {"[daemon]\ninterval_ms = = 3\n", "h.toml:2: not valid TOML"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<DaemonConfig> got = ParseDaemonConfig(c.text, "h.toml");
    ASSERT_FALSE(got.ok()) << c.text;
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(got.status().message()).find(c.want),
              std::string::npos)
        << "config:\n"
        << c.text << "\nmessage: " << got.status().message()
        << "\nwanted: " << c.want;
  }
}

TEST(DaemonConfigTest, BoundsSizeAndDepthBeforeParsing) {
  std::string deep = "x = ";
  for (int i = 0; i < 100000; ++i) deep += '[';
  absl::StatusOr<DaemonConfig> c = ParseDaemonConfig(deep, "h.toml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(std::string(c.status().message()).find("nested deeper"),
            std::string::npos)
      << c.status();
  // Brackets inside strings and comments are not nesting.
  std::string ok =
      "# [[[[[[[[[[[[[[[[[[[[[[[[\n[[workload]]\nname=\"a\"\n"
      "cmdline=\"[[[[[[[[[[[[[[[[[[[[[[[a]]]]]]]]]]]]]]]]]]]]]]\"\n";
  c = ParseDaemonConfig(ok, "h.toml");
  EXPECT_TRUE(c.ok()) << c.status();
  c = ParseDaemonConfig(std::string(kMaxDaemonConfigBytes + 1, '#'), "h.toml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(std::string(c.status().message()).find("larger than"),
            std::string::npos);
  c = ParseDaemonConfig(std::string("[daemon]\0x", 10), "h.toml");
  EXPECT_FALSE(c.ok());
}

TEST(DaemonConfigTest, ByteSizes) {
  EXPECT_EQ(*ParseByteSize("4096"), 4096u);
  EXPECT_EQ(*ParseByteSize("2GiB"), 2ull << 30);
  EXPECT_EQ(*ParseByteSize(" 1.5 MiB "), 3ull << 19);
  EXPECT_EQ(*ParseByteSize("1TiB"), 1ull << 40);
  EXPECT_FALSE(ParseByteSize("").ok());
  EXPECT_FALSE(ParseByteSize("GiB").ok());
  EXPECT_FALSE(ParseByteSize("-1").ok());
  EXPECT_FALSE(ParseByteSize("1e30TiB").ok());
  EXPECT_FALSE(ParseByteSize("2gb").ok());
}

TEST(DaemonConfigTest, LoadNamesTheFile) {
  absl::StatusOr<DaemonConfig> c = LoadDaemonConfig("/nonexistent/h.toml");
  EXPECT_EQ(c.status().code(), absl::StatusCode::kNotFound);
  c = LoadDaemonConfig("/proc");
  EXPECT_NE(std::string(c.status().message()).find("not a regular file"),
            std::string::npos);
}

}  // namespace
}  // namespace hotpage

namespace hotpage {
namespace {

// TOML files are UTF-8: an invalid sequence is refused with its line before
// the TOML parser sees it (toml11's error path for one inside a literal
// string read past its buffer: daemon_config_fuzz_test under ASan).
TEST(DaemonConfigUtf8Test, InvalidUtf8IsRefusedWithItsLine) {
  for (const char* bad :
       {"\xff", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82"}) {
    const std::string text =
        absl::StrCat("[daemon]\ninterval_ms = 500\n[[workload]]\nname = 'a",
                     bad, "'\ncgroup = \"svc\"\n");
    absl::StatusOr<DaemonConfig> c = ParseDaemonConfig(text, "x.toml");
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.status().message(),
              "x.toml: line 4: not valid UTF-8 (TOML files are UTF-8)");
  }
  // Valid multi-byte text passes the check (a name in it is the parser's to
  // judge).
  absl::StatusOr<DaemonConfig> ok = ParseDaemonConfig(
      "[daemon]\n# caf\xc3\xa9 \xe2\x82\xac "
      "\xf0\x9f\x98\x80\n[[workload]]\nname = "
      "\"a\"\ncgroup = \"svc\"\n",
      "x.toml");
  EXPECT_TRUE(ok.ok()) << ok.status();
}

}  // namespace
}  // namespace hotpage
