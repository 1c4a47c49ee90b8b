// Runs every implementation of hotness_table_benchmark on small inputs and
// checks its counts, so that the benchmark's code cannot rot unnoticed.
// Single writer thread: TBB and libcds are not TSan-instrumented, and this
// test also runs under --config=tsan.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "gtest/gtest.h"
#include "hotness/ingest_impls.h"

namespace hotpage::bench {
namespace {

constexpr uint64_t kPages = 1024;
constexpr size_t kSamples = 20000;

class ImplSmokeTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ImplSmokeTest, CountsEverySampleTwice) {
  auto impl = MakeImpl(GetParam(), kPages);
  ASSERT_NE(impl, nullptr);
  impl->AttachThread();
  for (Dist dist : {Dist::kUniform, Dist::kZipf}) {
    const std::vector<AccessSample> samples =
        MakeSamples(dist, kPages, kSamples, 7);
    for (int round = 0; round < 2; ++round) {  // Reset() must really empty it
      impl->Reset();
      for (size_t i = 0; i < samples.size(); i += 256) {
        impl->Ingest(absl::MakeConstSpan(samples.data() + i,
                                         std::min<size_t>(256, kSamples - i)));
      }
      const IngestImpl::Summary s = impl->Summarize();
      if (s.exact) {
        EXPECT_EQ(s.counted_weight + s.lost_weight, kSamples) << DistName(dist);
      } else {
        EXPECT_LE(s.counted_weight + s.lost_weight, kSamples) << DistName(dist);
        EXPECT_GT(s.counted_weight, 0u) << DistName(dist);
      }
      EXPECT_GT(s.entries, kPages / 4) << DistName(dist);
      EXPECT_LE(s.entries, kPages) << DistName(dist);
      EXPECT_GT(s.memory_bytes / s.entries, 8.0) << DistName(dist);
    }
  }
  impl->DetachThread();
}

INSTANTIATE_TEST_SUITE_P(AllImpls, ImplSmokeTest,
                         ::testing::ValuesIn(ImplNames()),
                         [](const auto& info) { return info.param; });

TEST(MakeSamplesTest, DistinctPagesAndSkew) {
  const auto uniform = MakeSamples(Dist::kUniform, kPages, kSamples, 1);
  const auto zipf = MakeSamples(Dist::kZipf, kPages, kSamples, 1);
  auto top_share = [](const std::vector<AccessSample>& v) {
    std::vector<uint64_t> hits(kPages * 4 + 64, 0);
    uint64_t max = 0;
    for (const AccessSample& s : v) {
      const uint64_t p =
          ((s.vaddr - 0x7f0000000000ULL) >> 12) * 4 + (s.address_space - 100);
      EXPECT_LT(p, kPages);
      max = std::max(max, ++hits[p]);
    }
    return static_cast<double>(max) / v.size();
  };
  // Zipf(0.99) over 1024 pages: the top page gets about 1/H(1024) = 13%.
  EXPECT_GT(top_share(zipf), 0.08);
  EXPECT_LT(top_share(uniform), 0.01);
}

}  // namespace
}  // namespace hotpage::bench
