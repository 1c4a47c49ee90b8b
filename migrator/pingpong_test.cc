#include "migrator/pingpong.h"

#include "gtest/gtest.h"

namespace hotpage {
namespace {

const absl::Time kT0 = absl::UnixEpoch() + absl::Hours(1);
constexpr uint64_t kPage = 0x7f0000001000;

PingPongOptions Opts() {
  PingPongOptions o;
  o.max_reversals = 2;
  o.window = absl::Seconds(60);
  o.hold = absl::Minutes(5);
  o.slots = 64;
  return o;
}

TEST(PingPongTest, FourthBackAndForthMoveHoldsThePage) {
  PingPongTracker t(Opts());
  absl::Time now = kT0;
  EXPECT_FALSE(t.RecordMove(kPage, 1, 0, now));                      // promote
  EXPECT_FALSE(t.RecordMove(kPage, 0, 1, now += absl::Seconds(1)));  // rev 1
  EXPECT_FALSE(t.RecordMove(kPage, 1, 0, now += absl::Seconds(1)));  // rev 2
  EXPECT_FALSE(t.IsHeld(kPage, now));
  EXPECT_TRUE(t.RecordMove(kPage, 0, 1, now += absl::Seconds(1)));  // rev 3
  EXPECT_TRUE(t.IsHeld(kPage, now));
  EXPECT_EQ(t.pingpong_pages(), 1u);
  EXPECT_EQ(t.HeldCount(now), 1u);
  // Other pages are unaffected, the hold ends after `hold`.
  EXPECT_FALSE(t.IsHeld(kPage + 4096, now));
  EXPECT_TRUE(t.IsHeld(kPage, now + absl::Minutes(5) - absl::Seconds(1)));
  EXPECT_FALSE(t.IsHeld(kPage, now + absl::Minutes(5)));
}

TEST(PingPongTest, OneWayMovesAreNotPingPong) {
  PingPongTracker t(Opts());
  absl::Time now = kT0;
  // 2 -> 1 -> 0 (promoted twice), then demoted 0 -> 2, 2 -> 1 ... never a
  // return to the node the previous move came from.
  EXPECT_FALSE(t.RecordMove(kPage, 2, 1, now));
  EXPECT_FALSE(t.RecordMove(kPage, 1, 0, now));
  EXPECT_FALSE(t.RecordMove(kPage, 0, 2, now));
  EXPECT_FALSE(t.RecordMove(kPage, 2, 1, now));
  EXPECT_FALSE(t.RecordMove(kPage, 1, 0, now));
  EXPECT_FALSE(t.IsHeld(kPage, now));
  EXPECT_EQ(t.pingpong_pages(), 0u);
}

TEST(PingPongTest, SlowBackAndForthOutsideTheWindowIsFine) {
  PingPongTracker t(Opts());
  absl::Time now = kT0;
  for (int i = 0; i < 10; ++i) {
    EXPECT_FALSE(t.RecordMove(kPage, i % 2, 1 - i % 2, now));
    now += absl::Seconds(31);  // at most 2 reversals per 60 s window
  }
  EXPECT_EQ(t.pingpong_pages(), 0u);
}

TEST(PingPongTest, HugePageKeyedByBaseAddress) {
  PingPongTracker t(Opts());
  const uint64_t huge = 0x7f0000200000;
  for (int i = 0; i < 4; ++i) t.RecordMove(huge, i % 2, 1 - i % 2, kT0);
  EXPECT_TRUE(t.IsHeld(huge, kT0));
}

TEST(PingPongTest, DisabledWithZeroThreshold) {
  PingPongOptions o = Opts();
  o.max_reversals = 0;
  PingPongTracker t(o);
  for (int i = 0; i < 20; ++i) t.RecordMove(kPage, i % 2, 1 - i % 2, kT0);
  EXPECT_FALSE(t.IsHeld(kPage, kT0));
}

TEST(PingPongTest, AHoldWithoutMovesIsNoPingPong) {
  PingPongTracker t(Opts());
  t.Hold(kPage, kT0, absl::Minutes(1));
  EXPECT_TRUE(t.IsHeld(kPage, kT0));
  EXPECT_EQ(t.pingpong_pages(), 0u);
  EXPECT_EQ(t.HeldCount(kT0), 1u);
  // A shorter second hold keeps the longer one.
  t.Hold(kPage, kT0, absl::Seconds(1));
  EXPECT_TRUE(t.IsHeld(kPage, kT0 + absl::Seconds(30)));
  EXPECT_FALSE(t.IsHeld(kPage, kT0 + absl::Minutes(1)));
  // Released like any hold.
  t.Hold(kPage + 4096, kT0, absl::Minutes(1));
  EXPECT_EQ(t.ReleaseHolds(kT0 + absl::Seconds(1)), 2u);
  EXPECT_FALSE(t.IsHeld(kPage, kT0 + absl::Seconds(1)));
  EXPECT_FALSE(t.IsHeld(kPage + 4096, kT0 + absl::Seconds(1)));
  // Disabled holding holds nothing.
  PingPongOptions o = Opts();
  o.max_reversals = 0;
  PingPongTracker off(o);
  off.Hold(kPage, kT0, absl::Minutes(1));
  EXPECT_FALSE(off.IsHeld(kPage, kT0));
}

TEST(PingPongTest, ReleaseHoldsEndsEveryHoldWithAFreshWindow) {
  PingPongTracker t(Opts());
  const uint64_t other = kPage + 4096, moved_once = kPage + 8192;
  absl::Time now = kT0;
  for (int i = 0; i < 4; ++i) {
    t.RecordMove(kPage, i % 2, 1 - i % 2, now);
    t.RecordMove(other, i % 2, 1 - i % 2, now);
  }
  t.RecordMove(moved_once, 1, 0, now);
  ASSERT_TRUE(t.IsHeld(kPage, now));
  ASSERT_TRUE(t.IsHeld(other, now));
  now += absl::Seconds(10);
  EXPECT_EQ(t.ReleaseHolds(now), 2u);
  EXPECT_FALSE(t.IsHeld(kPage, now));
  EXPECT_FALSE(t.IsHeld(other, now));
  EXPECT_EQ(t.HeldCount(now), 0u);
  EXPECT_EQ(t.ReleaseHolds(now), 0u);  // nothing left on hold
  EXPECT_EQ(t.pingpong_pages(), 2u);   // holds counted when they began
  // The reversals before the release no longer count: the page is held
  // again only after three more (as when a hold runs out; its last move,
  // 1 -> 0, is remembered, so the first move back is one).
  EXPECT_FALSE(t.RecordMove(kPage, 0, 1, now += absl::Seconds(1)));
  EXPECT_FALSE(t.RecordMove(kPage, 1, 0, now += absl::Seconds(1)));
  EXPECT_FALSE(t.IsHeld(kPage, now));
  EXPECT_TRUE(t.RecordMove(kPage, 0, 1, now += absl::Seconds(1)));
  EXPECT_TRUE(t.IsHeld(kPage, now));
  // A page never held is untouched: its history still counts.
  EXPECT_FALSE(t.RecordMove(moved_once, 0, 1, now));  // reversal 1
  EXPECT_FALSE(t.RecordMove(moved_once, 1, 0, now));  // 2
  EXPECT_TRUE(t.RecordMove(moved_once, 0, 1, now));   // 3: held
}

TEST(PingPongTest, MemoryIsBoundedAndHeldPagesSurviveChurn) {
  PingPongTracker t(Opts());
  ASSERT_EQ(t.slots(), 64u);
  for (int i = 0; i < 4; ++i) t.RecordMove(kPage, i % 2, 1 - i % 2, kT0);
  ASSERT_TRUE(t.IsHeld(kPage, kT0));
  // 100k distinct pages moved once each: the table does not grow, and the
  // held page is evicted last from its set.
  for (uint64_t p = 1; p <= 100000; ++p) {
    t.RecordMove(p << 12, 1, 0, kT0 + absl::Seconds(1));
  }
  EXPECT_EQ(t.slots(), 64u);
  EXPECT_TRUE(t.IsHeld(kPage, kT0 + absl::Seconds(1)));
}

}  // namespace
}  // namespace hotpage
