#include "tools/trace_gen/lackey.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"

namespace hotpage {
namespace trace_gen {
namespace {

TEST(ParseLackeyLineTest, Accesses) {
  auto r = ParseLackeyLine("I  04017e53,3");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, LackeyRecord::kInstr);
  EXPECT_EQ(r->addr, 0x04017e53u);
  EXPECT_EQ(r->size, 3u);
  r = ParseLackeyLine(" L 1ffefffb48,8");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, LackeyRecord::kLoad);
  EXPECT_EQ(r->addr, 0x1ffefffb48u);
  EXPECT_EQ(r->size, 8u);
  r = ParseLackeyLine(" S ffffffffffffffff,16");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, LackeyRecord::kStore);
  EXPECT_EQ(r->addr, ~uint64_t{0});
  r = ParseLackeyLine(" M 0403C108,4");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, LackeyRecord::kModify);
  EXPECT_EQ(r->addr, 0x0403c108u);
}

TEST(ParseLackeyLineTest, Messages) {
  auto r = ParseLackeyLine("==14148== Command: xz -6 -c /usr/bin/sqlite3");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, LackeyRecord::kMessage);
  EXPECT_EQ(r->pid, 14148u);
  EXPECT_EQ(r->text, "Command: xz -6 -c /usr/bin/sqlite3");
  r = ParseLackeyLine("==7== ");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->pid, 7u);
  EXPECT_EQ(r->text, "");
  r = ParseLackeyLine("==7==");  // trailing blank stripped
  ASSERT_TRUE(r);
  EXPECT_EQ(r->text, "");
  r = ParseLackeyLine("--99-- warning: something");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->pid, 99u);
}

TEST(ParseLackeyLineTest, RejectsMalformedLines) {
  for (const char* bad : {
           "",
           "I",
           "I  ",
           "I  ,3",
           "I  12,",
           "I  12,0",
           "I  12,3x",
           "I 12,3",
           " L 12 ,3",
           " X 12,3",
           " L 12345678901234567,8",  // 17 hex digits
           " L 12,2000000",           // size over 2^20
           " L -12,8",
           "L 12,8",
           "==abc== x",
           "==12= x",
           "==12==x",
           "=12== x",
           "hello world",
           "==99999999999== x",  // pid over 32 bits
       }) {
    EXPECT_FALSE(ParseLackeyLine(bad)) << '"' << bad << '"';
  }
}

TEST(LruCacheTest, HitsMissesAndEvictsTheLeastRecent) {
  LruCache c(/*sets=*/1, /*ways=*/2);
  EXPECT_FALSE(c.Access(1));
  EXPECT_FALSE(c.Access(2));
  EXPECT_TRUE(c.Access(1));   // 1 is now most recent
  EXPECT_FALSE(c.Access(3));  // evicts 2
  EXPECT_TRUE(c.Access(1));
  EXPECT_FALSE(c.Access(2));  // evicts 3
  EXPECT_FALSE(c.Access(3));
  // Tag 0 is a valid tag, not an empty way.
  LruCache z(1, 4);
  EXPECT_FALSE(z.Access(0));
  EXPECT_TRUE(z.Access(0));
  // Sets are independent: with 2 sets of 1 way, tags 0 and 1 coexist.
  LruCache s(2, 1);
  EXPECT_FALSE(s.Access(0));
  EXPECT_FALSE(s.Access(1));
  EXPECT_TRUE(s.Access(0));
  EXPECT_TRUE(s.Access(1));
}

struct Converted {
  std::vector<Sample> samples;
  LackeyStats stats;
  std::string command, valgrind;
  uint32_t pid = 0;
  absl::Status status;
};

Converted Convert(const std::vector<std::string>& lines,
                  const LackeyOptions& o) {
  Converted out;
  EXPECT_TRUE(CheckLackeyOptions(o).ok());
  LackeyConverter conv(o, [&](const Sample& s) {
    out.samples.push_back(s);
    return absl::OkStatus();
  });
  for (size_t i = 0; i < lines.size() && out.status.ok(); ++i) {
    out.status = conv.Feed(lines[i], i + 1);
  }
  out.stats = conv.stats();
  out.command = conv.command();
  out.valgrind = conv.valgrind_version();
  out.pid = conv.pid();
  return out;
}

std::vector<std::string> Preamble() {
  return {
      "==4321== Lackey, an example Valgrind tool",
      "==4321== Copyright (C) 2002-2017, and GNU GPL'd, by Nicholas "
      "Nethercote.",
      "==4321== Using Valgrind-3.19.0 and LibVEX; rerun with -h for copyright "
      "info",
      "==4321== Command: sqlite3 kv.db",
      "==4321== ",
  };
}

// `n` loads, each after one instruction, at 64-byte-line strides over
// `bytes` of memory starting at `base`, `passes` times.
std::vector<std::string> Sweep(uint64_t base, uint64_t bytes, int passes,
                               char op = 'L') {
  std::vector<std::string> lines;
  for (int p = 0; p < passes; ++p) {
    for (uint64_t off = 0; off < bytes; off += 64) {
      lines.push_back("I  00401000,4");
      lines.push_back(absl::StrFormat(" %c %x,8", op, base + off));
    }
  }
  return lines;
}

TEST(LackeyConverterTest, SmallWorkingSetHitsL1AndIsNotSampled) {
  LackeyOptions o;
  o.sample_period = 1;
  std::vector<std::string> lines = Preamble();
  for (const std::string& l : Sweep(0x10000000, 16 << 10, 20))
    lines.push_back(l);
  const Converted c = Convert(lines, o);
  ASSERT_TRUE(c.status.ok()) << c.status;
  EXPECT_EQ(c.pid, 4321u);
  EXPECT_EQ(c.command, "sqlite3 kv.db");
  EXPECT_EQ(c.valgrind, "3.19.0");
  EXPECT_EQ(c.stats.loads, 20u * 256);
  // 16 KiB fits L1 (32 KiB): after the first pass every load hits L1.
  EXPECT_EQ(c.stats.loads_by_level[0], 19u * 256);
  // The first pass misses to DRAM: 256 counted loads (+ none later).
  EXPECT_EQ(c.stats.loads_by_level[3], 256u);
  EXPECT_EQ(c.stats.counted_loads, 256u);
  EXPECT_EQ(c.samples.size(), 256u);
}

TEST(LackeyConverterTest, LargeSweepsMissAndAreSampledEveryPeriod) {
  LackeyOptions o;
  o.sample_period = 10;
  // 8 MiB swept twice: more than the 2 MiB LLC, so LRU misses every time.
  const Converted c = Convert(Sweep(0x20000000, 8 << 20, 2), o);
  ASSERT_TRUE(c.status.ok()) << c.status;
  const uint64_t loads = 2 * (8 << 20) / 64;
  EXPECT_EQ(c.stats.loads_by_level[3], loads);
  EXPECT_EQ(c.stats.counted_loads, loads);
  ASSERT_EQ(c.samples.size(), loads / 10);
  uint64_t prev = 0;
  for (size_t i = 0; i < c.samples.size(); ++i) {
    const Sample& s = c.samples[i];
    EXPECT_EQ(s.level, MemLevel::kLocalDram);
    EXPECT_EQ(s.source, SampleSource::kPebsLoad);
    EXPECT_GE(s.weight, 180u);
    EXPECT_EQ(s.period, 10u);
    EXPECT_EQ(s.cpu, 0u);
    EXPECT_GE(s.time_ns, prev);
    prev = s.time_ns;
    // Every 10th counted load: the 10th, 20th, ... line of the sweep.
    EXPECT_EQ(s.vaddr, 0x20000000u + ((i * 10 + 9) % ((8 << 20) / 64)) * 64);
  }
  // Time: one cycle per instruction plus half of each load's stall.
  EXPECT_GT(c.stats.cycles, loads * 90);
  EXPECT_LT(c.stats.cycles, loads * 400);
}

TEST(LackeyConverterTest, LlcSizedSetHitsL3AndTimeScales) {
  LackeyOptions o;
  o.sample_period = 1;
  // 1.5 MiB: misses L2 (1 MiB) on every pass after the first but fits the
  // 2 MiB LLC.
  const std::vector<std::string> lines = Sweep(0x30000000, 1536 << 10, 3);
  const Converted c = Convert(lines, o);
  ASSERT_TRUE(c.status.ok()) << c.status;
  const uint64_t per_pass = (1536 << 10) / 64;
  EXPECT_EQ(c.stats.loads_by_level[3], per_pass);
  EXPECT_EQ(c.stats.loads_by_level[2], 2 * per_pass);
  size_t l3 = 0;
  for (const Sample& s : c.samples) l3 += s.level == MemLevel::kL3 ? 1 : 0;
  EXPECT_EQ(l3, 2 * per_pass);
  o.time_scale = 10;
  const Converted scaled = Convert(lines, o);
  ASSERT_EQ(scaled.samples.size(), c.samples.size());
  const uint64_t t0 = o.start_clock_ns;
  EXPECT_NEAR(static_cast<double>(scaled.samples.back().time_ns - t0),
              10.0 * static_cast<double>(c.samples.back().time_ns - t0), 10);
}

TEST(LackeyConverterTest, StoresAreSampledOnlyWhenAsked) {
  LackeyOptions o;
  o.sample_period = 4;
  const std::vector<std::string> lines = Sweep(0x40000000, 4 << 20, 1, 'M');
  Converted c = Convert(lines, o);
  ASSERT_TRUE(c.status.ok()) << c.status;
  const uint64_t n = (4 << 20) / 64;
  EXPECT_EQ(c.stats.loads, n);
  EXPECT_EQ(c.stats.stores, n);
  EXPECT_EQ(c.stats.store_samples, 0u);
  o.stores = true;
  c = Convert(lines, o);
  EXPECT_EQ(c.stats.store_samples, n / 4);
  size_t stores = 0;
  for (const Sample& s : c.samples) {
    if (s.flags & kSampleStore) {
      ++stores;
      EXPECT_EQ(s.source, SampleSource::kPebsStore);
      EXPECT_EQ(s.weight, 0u);
      // The load half of M brought the line into L1.
      EXPECT_EQ(s.level, MemLevel::kL1);
    }
  }
  EXPECT_EQ(stores, n / 4);
}

TEST(LackeyConverterTest, LdlatFiltersLoads) {
  LackeyOptions o;
  o.sample_period = 1;
  o.ldlat_cycles = 100;  // only DRAM
  const Converted c = Convert(Sweep(0x30000000, 1536 << 10, 3), o);
  for (const Sample& s : c.samples) EXPECT_EQ(s.level, MemLevel::kLocalDram);
  EXPECT_EQ(c.samples.size(), (1536u << 10) / 64);
}

TEST(LackeyConverterTest, MalformedLineIsAnErrorWithItsNumber) {
  std::vector<std::string> lines = Preamble();
  lines.push_back(" L 1000,8");
  lines.push_back("some program output");
  const Converted c = Convert(lines, LackeyOptions());
  EXPECT_TRUE(absl::IsInvalidArgument(c.status));
  EXPECT_TRUE(absl::StrContains(c.status.message(),
                                "line 7 is not Lackey --trace-mem output: "
                                "\"some program output\""))
      << c.status;
}

TEST(LackeyConverterTest, BadOptions) {
  LackeyOptions o;
  o.l1_bytes = 1000;
  EXPECT_TRUE(absl::StrContains(CheckLackeyOptions(o).message(), "--l1-kib"));
  o = LackeyOptions();
  o.ghz = 0;
  EXPECT_TRUE(absl::StrContains(CheckLackeyOptions(o).message(), "--ghz"));
  o = LackeyOptions();
  o.sample_period = 0;
  EXPECT_TRUE(
      absl::StrContains(CheckLackeyOptions(o).message(), "--sample-period"));
}

}  // namespace
}  // namespace trace_gen
}  // namespace hotpage
