#include "sampler/damon/damon_region.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace hotpage {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

TEST(ParseDamonRegion, KernelFormat) {
  auto r = ParseDamonRegion(
      {"140737345347584\n", "140737349541888\n", "20\n", "7\n"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->start, 140737345347584u);
  EXPECT_EQ(r->end, 140737349541888u);
  EXPECT_EQ(r->nr_accesses, 20u);
  EXPECT_EQ(r->age, 7u);
  EXPECT_EQ(r->bytes(), 4u * kMiB);
  // Full ranges of the kernel's types.
  r = ParseDamonRegion(
      {"0", "18446744073709551615", "4294967295", "4294967295"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->end, UINT64_MAX);
  EXPECT_EQ(r->age, UINT32_MAX);
}

TEST(ParseDamonRegion, MalformedFieldsNameTheFile) {
  struct Case {
    DamonRegionText text;
    const char* prefix;
  };
  const Case cases[] = {
      {{"", "8192", "1", "1"}, "start: "},
      {{"-4096", "8192", "1", "1"}, "start: "},
      {{"+4096", "8192", "1", "1"}, "start: "},
      {{"0x1000", "8192", "1", "1"}, "start: "},
      {{"4096", "8192 1", "1", "1"}, "end: "},
      {{"4096", "18446744073709551616", "1", "1"}, "end: "},  // 2^64
      {{"8192", "4096", "1", "1"}, "end: 4096 is not above start 8192"},
      {{"4096", "4096", "1", "1"}, "end: 4096 is not above start 4096"},
      {{"4096", "8192", "4294967296", "1"}, "nr_accesses: "},  // 2^32
      {{"4096", "8192", "1", "x"}, "age: "},
      {{"4096", "8192", "1", ""}, "age: "},
  };
  for (const Case& c : cases) {
    auto r = ParseDamonRegion(c.text);
    ASSERT_FALSE(r.ok()) << c.prefix;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message().substr(0, std::string(c.prefix).size()),
              c.prefix)
        << r.status();
  }
  auto r = ParseDamonRegion({"12\x01x", "8192", "1", "1"});
  EXPECT_NE(r.status().message().find("found \"12?x\""), std::string::npos)
      << r.status();
}

TEST(TriedRegionIndex, CanonicalDecimalOnly) {
  EXPECT_EQ(ParseTriedRegionIndex("0"), 0u);
  EXPECT_EQ(ParseTriedRegionIndex("10"), 10u);
  EXPECT_EQ(ParseTriedRegionIndex("999999999"), 999999999u);
  for (const char* bad :
       {"", "total_bytes", "01", "+1", "-1", "1 ", "1a", "1000000000"}) {
    EXPECT_FALSE(ParseTriedRegionIndex(bad).has_value()) << bad;
  }
}

TEST(TriedRegionIndex, SortedNumericallyNotByName) {
  // ListDir sorts by bytes: 0, 1, 10, 11, 2, ...; DAMON numbers by address.
  std::vector<std::string> names = {"0", "1", "10",         "11", "2",
                                    "3", "4", "5",          "6",  "7",
                                    "8", "9", "total_bytes"};
  auto idx = SortTriedRegionIndices(names, 100);
  ASSERT_TRUE(idx.ok());
  EXPECT_EQ(*idx,
            (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  auto over = SortTriedRegionIndices(names, 11);
  EXPECT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(SortTriedRegionIndices({"total_bytes"}, 0)->empty());
}

TEST(NormalizeRegions, SortsClipsAndDrops) {
  std::vector<DamonRegion> r = {
      {3 * kMiB, 4 * kMiB, 1, 0}, {0, 2 * kMiB, 2, 0},
      {kMiB, 3 * kMiB, 3, 0},      // overlaps the previous: clipped to [2, 3)
      {kMiB, kMiB + 4096, 4, 0},   // inside [0, 2): dropped
      {5 * kMiB, 5 * kMiB, 5, 0},  // empty: dropped
  };
  EXPECT_EQ(NormalizeRegions(r), 3u);
  EXPECT_EQ(r, (std::vector<DamonRegion>{{0, 2 * kMiB, 2, 0},
                                         {2 * kMiB, 3 * kMiB, 3, 0},
                                         {3 * kMiB, 4 * kMiB, 1, 0}}));
  std::vector<DamonRegion> clean = r;
  EXPECT_EQ(NormalizeRegions(clean), 0u);
  EXPECT_EQ(clean, r);
}

std::vector<std::pair<uint64_t, uint32_t>> Chunks(
    const std::vector<DamonRegion>& regions, uint64_t chunk = 2 * kMiB,
    uint32_t max = 20) {
  std::vector<std::pair<uint64_t, uint32_t>> out;
  ForEachChunk(regions, chunk, max, [&](uint64_t v, uint32_t c) {
    out.emplace_back(v, c);
    return true;
  });
  return out;
}

TEST(ForEachChunk, AlignedRegionsMapOneToOne) {
  const uint64_t base = 0x7f0000000000;
  auto out = Chunks({{base, base + 4 * kMiB, 20, 0},            // 2 hot chunks
                     {base + 4 * kMiB, base + 8 * kMiB, 0, 0},  // idle: nothing
                     {base + 8 * kMiB, base + 10 * kMiB, 5, 0}});
  EXPECT_EQ(out, (std::vector<std::pair<uint64_t, uint32_t>>{
                     {base, 20}, {base + 2 * kMiB, 20}, {base + 8 * kMiB, 5}}));
}

TEST(ForEachChunk, SharedChunkGetsOverlapWeightedMean) {
  const uint64_t base = 0x7f0000000000;
  // [base, base+0.5M) 20 and [base+0.5M, base+2M) 0: (20*0.5 + 0*1.5) / 2 = 5.
  auto out = Chunks({{base, base + kMiB / 2, 20, 0},
                     {base + kMiB / 2, base + 2 * kMiB, 0, 0}});
  EXPECT_EQ(out, (std::vector<std::pair<uint64_t, uint32_t>>{{base, 5}}));
  // A hole does not dilute: only [base+1M, base+1.5M) is covered, count 20,
  // reported at the first covered byte.
  out = Chunks({{base + kMiB, base + kMiB + kMiB / 2, 20, 0}});
  EXPECT_EQ(out,
            (std::vector<std::pair<uint64_t, uint32_t>>{{base + kMiB, 20}}));
  // Rounding to nearest: 1 byte-weighted 3 of 4 quarters at 1 -> 0.75 -> 1.
  out = Chunks({{base, base + 3 * kMiB / 2, 1, 0},
                {base + 3 * kMiB / 2, base + 2 * kMiB, 0, 0}});
  EXPECT_EQ(out, (std::vector<std::pair<uint64_t, uint32_t>>{{base, 1}}));
}

TEST(ForEachChunk, UnalignedRegionSpanningChunks) {
  const uint64_t base = 0x7f0000000000;
  // [base+1M, base+5M) at 8: chunks base (half covered), base+2M, base+4M
  // (half).
  auto out = Chunks({{base + kMiB, base + 5 * kMiB, 8, 0}});
  EXPECT_EQ(out,
            (std::vector<std::pair<uint64_t, uint32_t>>{
                {base + kMiB, 8}, {base + 2 * kMiB, 8}, {base + 4 * kMiB, 8}}));
}

TEST(ForEachChunk, ClampsToMaxAndSkipsHugeIdleRegionsQuickly) {
  const uint64_t base = 0x200000;
  // 2^46 bytes idle (2^25 chunks) costs O(1); the hot neighbours are found.
  const uint64_t huge = uint64_t{1} << 46;
  auto out = Chunks({{base, base + 2 * kMiB, 99, 0},
                     {base + 2 * kMiB, base + 2 * kMiB + huge, 0, 0},
                     {base + 2 * kMiB + huge, base + 4 * kMiB + huge, 3, 0}});
  EXPECT_EQ(out, (std::vector<std::pair<uint64_t, uint32_t>>{
                     {base, 20}, {base + 2 * kMiB + huge, 3}}));
}

TEST(ForEachChunk, StopsWhenTheCallbackSaysSo) {
  const uint64_t base = 0x7f0000000000;
  int calls = 0;
  bool done = ForEachChunk({{base, base + 8 * kMiB, 4, 0}}, 2 * kMiB, 20,
                           [&](uint64_t, uint32_t) { return ++calls < 2; });
  EXPECT_FALSE(done);
  EXPECT_EQ(calls, 2);
}

TEST(ForEachChunk, TopOfAddressSpaceDoesNotOverflow) {
  const uint64_t top = UINT64_MAX - 4095;  // last page
  auto out = Chunks({{top - 4 * kMiB, UINT64_MAX, 10, 0}});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out.back().second, 10u);
}

}  // namespace
}  // namespace hotpage
