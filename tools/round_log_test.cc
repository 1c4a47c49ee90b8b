#include "tools/round_log.h"

#include <string>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "policy/engine.h"
#include "policy/placement_types.h"
#include "tools/base/json.h"

namespace hotpage {
namespace {

PlannedMove Move(uint64_t vaddr, uint32_t bytes, int from, int to,
                 PlacementReason reason, PlacementTrigger trigger,
                 uint64_t paired) {
  PlannedMove m;
  m.vaddr = vaddr;
  m.page_bytes = bytes;
  m.from_node = from;
  m.to_node = to;
  m.reason = reason;
  m.trigger = trigger;
  m.paired_vaddr = paired;
  return m;
}

RoundReport SampleReport() {
  RoundReport r;
  r.round = 9;
  r.time_ns = 1'002'250'000'000;
  r.early = true;
  r.change_window_s = 0.5;
  r.fast_share = 0.75;
  r.fast_share_baseline = 0.875;
  r.fast_loaded_latency_ns = 121;
  r.next_loaded_latency_ns = 416;
  r.silences_doubted = true;
  r.prior_zero_truncated = true;
  r.decision.promoted_pages = 1;
  r.decision.demoted_pages = 2;
  r.decision.promote_skipped[SkipReason::kNotEnoughEvidence] = 484;
  r.decision.promote_skipped[SkipReason::kHeld] = 3;
  const PlannedMove demote =
      Move(0x7f3a00001000, 4096, 0, 2, PlacementReason::kDemote,
           PlacementTrigger::kSwap, 0);
  const PlannedMove promote =
      Move(0x7f3600042000, 4096, 2, 0, PlacementReason::kPromote,
           PlacementTrigger::kSwap, demote.vaddr);
  const PlannedMove watermark =
      Move(0x7f3a00200000, 2 << 20, 0, 2, PlacementReason::kDemote,
           PlacementTrigger::kWatermark, 0);
  r.decision.moves = {demote, promote, watermark};
  return r;
}

TEST(RoundLogTest, OneParsableLinePerRoundWithTheDecisionAndItsMoves) {
  std::string out;
  AppendRoundLine(SampleReport(), 1'000'000'000'000, &out);
  AppendRoundLine(RoundReport{}, 0, &out);  // appends, never replaces
  std::vector<std::string> lines = absl::StrSplit(out, '\n');
  ASSERT_EQ(lines.size(), 3u) << out;
  EXPECT_EQ(lines[2], "");  // each line ends with '\n'
  absl::StatusOr<Json> j = ParseJson(lines[0]);
  ASSERT_TRUE(j.ok()) << j.status() << "\n" << lines[0];
  EXPECT_DOUBLE_EQ((*j)["t_s"].get<double>(), 2.25);
  EXPECT_EQ((*j)["round"].get<int>(), 9);
  EXPECT_TRUE((*j)["early"].get<bool>());
  EXPECT_FALSE((*j)["room_round"].get<bool>());
  EXPECT_DOUBLE_EQ((*j)["change_window_s"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ((*j)["fast_share"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ((*j)["fast_share_baseline"].get<double>(), 0.875);
  EXPECT_DOUBLE_EQ((*j)["next_loaded_latency_ns"].get<double>(), 416);
  EXPECT_FALSE((*j)["short_window_held"].get<bool>());
  EXPECT_TRUE((*j)["silences_doubted"].get<bool>());
  EXPECT_TRUE((*j)["prior_zero_truncated"].get<bool>());
  EXPECT_EQ((*j)["promoted_pages"].get<int>(), 1);
  EXPECT_EQ((*j)["demoted_pages"].get<int>(), 2);
  // Only the reasons that held pages back, by their names.
  const Json& skipped = (*j)["promote_skipped"];
  ASSERT_EQ(skipped.size(), 2u) << skipped.dump();
  EXPECT_EQ(skipped["not_enough_evidence"].get<int>(), 484);
  EXPECT_EQ(skipped["held"].get<int>(), 3);
  // The moves in the decision's order; a swap's promotion names its victim.
  const Json& moves = (*j)["moves"];
  ASSERT_EQ(moves.size(), 3u);
  EXPECT_EQ(moves[0].dump(),
            R"(["0x7f3a00001000",4096,0,2,"demote","swap",null])");
  EXPECT_EQ(moves[1].dump(),
            R"(["0x7f3600042000",4096,2,0,"promote","swap","0x7f3a00001000"])");
  EXPECT_EQ(moves[2].dump(),
            R"(["0x7f3a00200000",2097152,0,2,"demote","watermark",null])");
  // A round with nothing decided is still a line.
  absl::StatusOr<Json> empty = ParseJson(lines[1]);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE((*empty)["moves"].empty());
  EXPECT_TRUE((*empty)["promote_skipped"].empty());
}

TEST(RoundLogTest, ARoundBeforeTheStartHasANegativeTime) {
  RoundReport r;
  r.time_ns = 500'000'000;
  std::string out;
  AppendRoundLine(r, 1'000'000'000, &out);
  absl::StatusOr<Json> j = ParseJson(out);
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_DOUBLE_EQ((*j)["t_s"].get<double>(), -0.5);
}

}  // namespace
}  // namespace hotpage
