#include "tools/daemon/fair_share.h"

#include <numeric>

#include "gtest/gtest.h"

namespace hotpage {
namespace {

constexpr uint64_t kGiB = 1ull << 30;

ShareInput W(uint64_t floor, uint64_t cap, uint64_t fast, uint64_t demand,
             double benefit) {
  ShareInput s;
  s.floor_bytes = floor;
  s.cap_bytes = cap;
  s.fast_bytes = fast;
  s.demand_bytes = demand;
  s.benefit_per_byte = benefit;
  return s;
}

// Two workloads whose hot sets together exceed an 8 GiB fast tier.
TEST(FairShareTest, WithoutFloorsTheHotterWins) {
  const std::vector<ShareInput> in = {W(0, UINT64_MAX, 0, 6 * kGiB, 1.0),
                                      W(0, UINT64_MAX, 0, 6 * kGiB, 5.0)};
  const std::vector<uint64_t> t = FairShares(8 * kGiB, in);
  EXPECT_EQ(t[1], 6 * kGiB);  // the hotter gets all it wants
  EXPECT_EQ(t[0], 2 * kGiB);  // the other what is left
}

TEST(FairShareTest, WithFloorsEachKeepsItsFloor) {
  const std::vector<ShareInput> in = {W(3 * kGiB, UINT64_MAX, 0, 6 * kGiB, 1),
                                      W(3 * kGiB, UINT64_MAX, 0, 6 * kGiB, 5)};
  const std::vector<uint64_t> t = FairShares(8 * kGiB, in);
  EXPECT_EQ(t[0], 3 * kGiB);
  EXPECT_EQ(t[1], 5 * kGiB);  // its floor plus the 2 GiB left over
}

TEST(FairShareTest, CapHoldsEvenWhenHottest) {
  const std::vector<ShareInput> in = {W(0, 2 * kGiB, 0, 6 * kGiB, 9),
                                      W(0, UINT64_MAX, 0, 3 * kGiB, 1)};
  const std::vector<uint64_t> t = FairShares(8 * kGiB, in);
  EXPECT_EQ(t[0], 2 * kGiB);
  EXPECT_EQ(t[1], 3 * kGiB);  // demand met; 3 GiB stay free
}

TEST(FairShareTest, FloorBeyondDemandIsNotHoarded) {
  const std::vector<ShareInput> in = {W(6 * kGiB, UINT64_MAX, 0, 1 * kGiB, 1),
                                      W(0, UINT64_MAX, 0, 7 * kGiB, 1)};
  const std::vector<uint64_t> t = FairShares(8 * kGiB, in);
  EXPECT_EQ(t[0], 1 * kGiB);
  EXPECT_EQ(t[1], 7 * kGiB);
}

// A workload whose demand is not measured (0) keeps what it holds up to
// its floor.
TEST(FairShareTest, AFloorProtectsWhatIsHeldBeforeDemandIsKnown) {
  const std::vector<ShareInput> in = {W(2 * kGiB, UINT64_MAX, 3 * kGiB, 0, 0),
                                      W(0, UINT64_MAX, 0, 8 * kGiB, 9)};
  const std::vector<uint64_t> t = FairShares(8 * kGiB, in);
  EXPECT_EQ(t[0], 2 * kGiB);
  EXPECT_EQ(t[1], 6 * kGiB);
}

TEST(FairShareTest, OvercommittedFloorsScaleTogether) {
  const std::vector<ShareInput> in = {W(6 * kGiB, UINT64_MAX, 0, 9 * kGiB, 1),
                                      W(6 * kGiB, UINT64_MAX, 0, 9 * kGiB, 9)};
  const std::vector<uint64_t> t = FairShares(8 * kGiB, in);
  EXPECT_EQ(t[0], 4 * kGiB);
  EXPECT_EQ(t[1], 4 * kGiB);
}

TEST(FairShareTest, EqualBenefitSharesInProportionToWant) {
  const std::vector<ShareInput> in = {W(0, UINT64_MAX, 0, 6 * kGiB, 2),
                                      W(0, UINT64_MAX, 0, 2 * kGiB, 2),
                                      W(0, UINT64_MAX, 0, 4 * kGiB, 1)};
  const std::vector<uint64_t> t = FairShares(4 * kGiB, in);
  EXPECT_EQ(t[0], 3 * kGiB);
  EXPECT_EQ(t[1], 1 * kGiB);
  EXPECT_EQ(t[2], 0u);
}

// What is left after every demand stays with whoever holds it: the cooled
// workload (no demand now) gives up only the 13 MiB the hotter one's
// demand takes, not all it holds.
TEST(FairShareTest, TheRestStaysWithWhoHoldsIt) {
  constexpr uint64_t kMiB = 1ull << 20;
  const std::vector<ShareInput> in = {
      W(0, UINT64_MAX, 26 * kMiB, 0, 0.5),
      W(0, UINT64_MAX, 82 * kMiB, 95 * kMiB, 5)};
  const std::vector<uint64_t> t = FairShares(108 * kMiB, in);
  EXPECT_EQ(t[1], 95 * kMiB);
  EXPECT_EQ(t[0], 13 * kMiB);
  // Never above its cap.
  const std::vector<ShareInput> capped = {
      W(0, 10 * kMiB, 26 * kMiB, 0, 0.5),
      W(0, UINT64_MAX, 82 * kMiB, 95 * kMiB, 5)};
  EXPECT_EQ(FairShares(108 * kMiB, capped)[0], 10 * kMiB);
}

TEST(FairShareTest, NeverMoreThanCapacity) {
  for (uint64_t cap : std::vector<uint64_t>{0, 1, 4096, 3 * kGiB, 100 * kGiB}) {
    const std::vector<ShareInput> in = {W(kGiB, 5 * kGiB, 0, 9 * kGiB, 3),
                                        W(2 * kGiB, UINT64_MAX, 0, kGiB, 1),
                                        W(0, UINT64_MAX, 0, 50 * kGiB, 2)};
    const std::vector<uint64_t> t = FairShares(cap, in);
    EXPECT_LE(std::accumulate(t.begin(), t.end(), uint64_t{0}), cap);
    for (size_t i = 0; i < in.size(); ++i) {
      EXPECT_LE(t[i], std::min(in[i].cap_bytes,
                               std::max(in[i].demand_bytes, in[i].fast_bytes)));
    }
  }
}

TEST(DemotionVictimsTest, AboveCapFirstNeverUnderFloor) {
  // 0 promotes; 1 is above its cap; 2 above its target; 3 under its floor.
  const std::vector<ShareInput> in = {
      W(0, UINT64_MAX, 1 * kGiB, 6 * kGiB, 5),
      W(0, 2 * kGiB, 3 * kGiB, 6 * kGiB, 9),
      W(0, UINT64_MAX, 3 * kGiB, 6 * kGiB, 1),
      W(4 * kGiB, UINT64_MAX, 3 * kGiB, 6 * kGiB, 0.1)};
  const std::vector<uint64_t> targets = {3 * kGiB, 2 * kGiB, 1 * kGiB,
                                         2 * kGiB};
  EXPECT_EQ(DemotionVictims(in, targets, 0), (std::vector<size_t>{1, 2}));
  // A workload at its target must make room among its own pages.
  EXPECT_TRUE(DemotionVictims(in, {1 * kGiB, 0, 0, 0}, 0).empty());
}

TEST(DemotionVictimsTest, BetweenFloorAndCapLowestBenefitFirst) {
  const std::vector<ShareInput> in = {
      W(0, UINT64_MAX, 0, 6 * kGiB, 5),
      W(kGiB, UINT64_MAX, 3 * kGiB, 3 * kGiB, 3),
      W(kGiB, UINT64_MAX, 3 * kGiB, 3 * kGiB, 1)};
  const std::vector<uint64_t> targets = FairShares(6 * kGiB, in);
  EXPECT_EQ(DemotionVictims(in, targets, 0), (std::vector<size_t>{2, 1}));
}

}  // namespace
}  // namespace hotpage
