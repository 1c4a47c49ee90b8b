#include "tools/base/kernel/zoneinfo.h"

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "tools/base/kernel/fake_tree.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {
namespace {

constexpr uint64_t kPage = 4096;

std::string Testdata(const std::string& name) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* ws = std::getenv("TEST_WORKSPACE");
  const std::string path = std::string(srcdir ? srcdir : "") + "/" +
                           (ws ? ws : "") + "/tools/base/kernel/testdata/" +
                           name;
  std::ifstream in(path);
  // Declared data of this test: a missing file is a failure, not a skip.
  EXPECT_TRUE(in.good()) << "no runfile " << path;
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

// A zone as the kernel prints it, without the counters and pagesets (the
// parser skips them; the real files in testdata/ have them).
std::string Zone(int node, const std::string& name, uint64_t free,
                 uint64_t boost, uint64_t min, uint64_t low, uint64_t high,
                 uint64_t managed, const std::string& protection) {
  return "Node " + std::to_string(node) + ", zone " + name +
         "\n  pages free     " + std::to_string(free) + "\n        boost    " +
         std::to_string(boost) + "\n        min      " + std::to_string(min) +
         "\n        low      " + std::to_string(low) + "\n        high     " +
         std::to_string(high) + "\n        promo    " + std::to_string(high) +
         "\n        spanned  " + std::to_string(managed) +
         "\n        present  " + std::to_string(managed) +
         "\n        managed  " + std::to_string(managed) +
         "\n        cma      0\n        protection: (" + protection +
         ")\n      nr_free_pages " + std::to_string(free) +
         "\n      min          7\n";
}

// Two nodes: node 0 with the CPUs (DMA, DMA32, Normal), node 1 CPU-less
// memory onlined movable (a CXL expander: its Normal zone small, most of it
// in Movable, whose watermarks carry a boost of 40 pages).
std::string TwoNodes() {
  std::string t;
  t += Zone(0, "DMA", 3840, 0, 25, 31, 37, 3840, "0, 3018, 10058, 10058, 0");
  t += Zone(0, "DMA32", 700000, 0, 5063, 6328, 7593, 772850,
            "0, 0, 7040, 7040, 0");
  t += Zone(0, "Normal", 1400000, 0, 11807, 14758, 17709, 1802240,
            "0, 0, 0, 0, 0");
  t += Zone(0, "Movable", 0, 0, 32, 32, 32, 0, "0, 0, 0, 0, 0");
  t += Zone(0, "Device", 0, 0, 0, 0, 0, 0, "0, 0, 0, 0, 0");
  t += Zone(1, "DMA", 0, 0, 0, 0, 0, 0, "0, 0, 0, 0, 0");
  t += Zone(1, "DMA32", 0, 0, 0, 0, 0, 0, "0, 0, 0, 0, 0");
  t += Zone(1, "Normal", 900, 0, 10, 12, 14, 1000, "0, 0, 0, 500, 0");
  t += Zone(1, "Movable", 15000, 40, 200, 240, 280, 16000, "0, 0, 0, 0, 0");
  t += Zone(1, "Device", 0, 0, 0, 0, 0, 0, "0, 0, 0, 0, 0");
  return t;
}

TEST(ParseZoneInfoTest, ReadsEveryZoneOfThisHostsFile) {
  absl::StatusOr<ZoneInfo> info =
      ParseZoneInfo(Testdata("zoneinfo_1node_6.18.txt"));
  ASSERT_TRUE(info.ok()) << info.status();
  ASSERT_EQ(info->zones.size(), 5u);
  const ZoneInfoZone& dma32 = info->zones[1];
  EXPECT_EQ(dma32.node, 0);
  EXPECT_EQ(dma32.name, "DMA32");
  EXPECT_EQ(dma32.index, 1);
  EXPECT_EQ(dma32.free_pages, 772850u);
  EXPECT_EQ(dma32.min_pages, 5063u);
  EXPECT_EQ(dma32.low_pages, 6328u);
  EXPECT_EQ(dma32.high_pages, 7593u);
  EXPECT_EQ(dma32.managed_pages, 772850u);
  EXPECT_EQ(dma32.protection, (std::vector<uint64_t>{0, 0, 7040, 7040, 7040}));
  // The pagesets' "high:" lines and the counters are not watermarks.
  EXPECT_EQ(info->zones[2].name, "Normal");
  EXPECT_EQ(info->zones[2].high_pages, 17709u);
  EXPECT_EQ(info->zones[4].name, "Device");
  EXPECT_EQ(info->zones[4].index, 4);
}

TEST(KernelReservesTest, OnThisHostTheDmaZoneCountsOnlyWhatItHas) {
  absl::StatusOr<ZoneInfo> info =
      ParseZoneInfo(Testdata("zoneinfo_1node_6.18.txt"));
  ASSERT_TRUE(info.ok()) << info.status();
  const std::vector<NodeKernelReserve> r = KernelReserves(*info, kPage);
  ASSERT_EQ(r.size(), 1u);
  // DMA: min 25 + reserve 10058 > its 3840 managed pages, so 3840; DMA32:
  // 5063 + 7040; Normal: 11807 + 0; the empty Movable and Device: 0.
  EXPECT_EQ(r[0].refuse_bytes, (3840 + 5063 + 7040 + 11807) * kPage);
  EXPECT_EQ(r[0].reclaim_bytes, (3840 + 6328 + 7040 + 14758) * kPage);
}

// The daemon VM tests' guest: move_pages onto node 0 failed with ENOMEM at
// ~18.75 MiB free (tools/daemon/daemon_loop.h AddNodeFree).
TEST(KernelReservesTest, TheSmallDramGuestsNodeZeroRefusesBelow17MiB) {
  absl::StatusOr<ZoneInfo> info =
      ParseZoneInfo(Testdata("zoneinfo_small_dram_cxl_6.12.txt"));
  ASSERT_TRUE(info.ok()) << info.status();
  ASSERT_EQ(info->zones.size(), 10u);
  const std::vector<NodeKernelReserve> r = KernelReserves(*info, kPage);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].node, 0);
  // DMA: min 128 + lowmem_reserve[MOVABLE] 443; DMA32: min 3807 + 0.
  EXPECT_EQ(r[0].refuse_bytes, (128 + 443 + 3807) * kPage);   // 17.1 MiB
  EXPECT_EQ(r[0].reclaim_bytes, (160 + 443 + 4758) * kPage);  // 20.9 MiB
  EXPECT_EQ(r[1].node, 1);
  EXPECT_EQ(r[1].refuse_bytes, 12959 * kPage);
  EXPECT_EQ(r[1].reclaim_bytes, 16198 * kPage);
}

TEST(KernelReservesTest, ACpulessMovableNodeCountsNormalsReserveAndNoBoost) {
  absl::StatusOr<ZoneInfo> info = ParseZoneInfo(TwoNodes());
  ASSERT_TRUE(info.ok()) << info.status();
  ASSERT_EQ(info->zones.size(), 10u);
  EXPECT_EQ(info->zones[8].node, 1);
  EXPECT_EQ(info->zones[8].name, "Movable");
  EXPECT_EQ(info->zones[8].index, 3);
  EXPECT_EQ(info->zones[8].boost_pages, 40u);
  const std::vector<NodeKernelReserve> r = KernelReserves(*info, kPage);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[1].node, 1);
  // Normal: min 10 + its reserve against Movable 500 (within its 1000
  // pages); Movable: min 200 less its boost 40.
  EXPECT_EQ(r[1].refuse_bytes, (10 + 500 + 160) * kPage);
  EXPECT_EQ(r[1].reclaim_bytes, (12 + 500 + 200) * kPage);
}

TEST(KernelReservesTest, WithoutAMovableZoneTheLastZonesReserveCounts) {
  const std::string t = Zone(0, "DMA", 100, 0, 5, 6, 7, 1000, "0, 30, 40") +
                        Zone(0, "DMA32", 100, 0, 10, 12, 14, 1000, "0, 0, 20") +
                        Zone(0, "Normal", 100, 0, 50, 60, 70, 1000, "0, 0, 0");
  absl::StatusOr<ZoneInfo> info = ParseZoneInfo(t);
  ASSERT_TRUE(info.ok()) << info.status();
  const std::vector<NodeKernelReserve> r = KernelReserves(*info, kPage);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].refuse_bytes, (5 + 40 + 10 + 20 + 50) * kPage);
}

TEST(ParseZoneInfoTest, RejectsWhatIsNotZoneinfo) {
  const std::string good = TwoNodes();
  struct Case {
    std::string text;
    std::string says;
  };
  const Case cases[] = {
      {"", "no \"Node N, zone\""},
      {"hello\n" + good, "before the first"},
      {"Node x, zone DMA\n", "bad node id"},
      {"Node 0 zone DMA\n", "not \"Node N, zone NAME\""},
      // A file cut short: the last zone has no protection line.
      {good.substr(0, good.rfind("protection")), "no \"protection\""},
      {absl::StrReplaceAll(good, {{"        low      12\n", ""}}),
       "no \"low\""},
      {absl::StrReplaceAll(
           good, {{"managed  1000\n", "managed  1000\n        managed  1\n"}}),
       "a second \"managed\""},
      {absl::StrReplaceAll(good, {{"min      10\n", "min      13\n"}}),
       "not ascending"},
      {absl::StrReplaceAll(good, {{"min      10\n", "min      -1\n"}}),
       "not a page count"},
      {absl::StrReplaceAll(good, {{"pages free     900", "pages free     x"}}),
       "not a page count"},
      {absl::StrReplaceAll(good, {{"(0, 0, 0, 500, 0)", "(0, 0, 0, 500)"}}),
       "protection has 4 entries but the node has 5 zones"},
      {absl::StrReplaceAll(good, {{"(0, 0, 0, 500, 0)", "0, 0, 0, 500, 0"}}),
       "not \"protection: (N, N, ...)\""},
      {absl::StrReplaceAll(good, {{"boost    40", "boost    400"}}),
       "boost 400 above min"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ZoneInfo> info = ParseZoneInfo(c.text);
    ASSERT_FALSE(info.ok()) << c.says;
    EXPECT_EQ(info.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(info.status().message(), c.says))
        << info.status() << " wants " << c.says;
  }
}

TEST(ReadZoneInfoTest, ReadsProcZoneinfoUnderTheRootAndNamesItOnError) {
  FakeTree tree;
  absl::StatusOr<KernelFs> fs = KernelFs::Open(tree.root());
  ASSERT_TRUE(fs.ok());
  EXPECT_FALSE(ReadZoneInfo(*fs).ok());  // no file
  tree.Write("/proc/zoneinfo", "Node 0, zone DMA\n  pages free 1\n");
  absl::StatusOr<ZoneInfo> bad = ReadZoneInfo(*fs);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "/proc/zoneinfo"))
      << bad.status();
  tree.Write("/proc/zoneinfo", TwoNodes());
  absl::StatusOr<ZoneInfo> info = ReadZoneInfo(*fs);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->zones.size(), 10u);
}

}  // namespace
}  // namespace hotpage
