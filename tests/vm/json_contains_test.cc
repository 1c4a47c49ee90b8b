#include "tests/vm/json_contains.h"

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "tools/base/json.h"

namespace hotpage {
namespace {

using Lines = std::vector<std::string>;

Json MustParse(const std::string& text) {
  absl::StatusOr<Json> v = ParseJson(text);
  EXPECT_TRUE(v.ok()) << text << ": " << v.status();
  return v.ok() ? *v : Json();
}

TEST(JsonContainsTest, MatchesSubsetOfObjects) {
  Json actual = MustParse(
      R"({"nodes":[{"id":0,"cpus":[0,1],"memory_bytes":123},{"id":1,"cpus":[]}],
          "tier_source":"kernel","extra":1})");
  EXPECT_EQ(
      JsonContains(MustParse(R"({"nodes":[{"id":0},{"id":1,"cpus":[]}]})"),
                   actual),
      Lines{});
  EXPECT_EQ(JsonContains(MustParse(R"({})"), actual), Lines{});
  EXPECT_EQ(JsonContains(MustParse("20480"), MustParse("20480.0")), Lines{});
}

TEST(JsonContainsTest, ReportsEveryMismatchWithPath) {
  Json actual = MustParse(
      R"({"nodes":[{"id":0,"cpus":[0,1]},{"id":1,"cpus":[]}],
          "tier_source":"kernel","lat":null})");
  Json expected = MustParse(
      R"({"nodes":[{"id":0,"cpus":[0]},{"id":2,"cpus":[]}],
          "tier_source":"hmat","lat":80,"features":{}})");
  EXPECT_EQ(JsonContains(expected, actual),
            (Lines{"$.nodes[0].cpus: expected 1 elements [0], got 2 [0,1]",
                   "$.nodes[1].id: expected 2, got 1",
                   "$.tier_source: expected \"hmat\", got \"kernel\"",
                   "$.lat: expected 80 (number), got null",
                   "$.features: missing (expected {})"}));
}

TEST(JsonContainsTest, NullMustBeNull) {
  EXPECT_EQ(JsonContains(MustParse("null"), MustParse("null")), Lines{});
  EXPECT_EQ(JsonContains(MustParse("null"), MustParse("0")),
            Lines{"$: expected null, got 0 (number)"});
  EXPECT_EQ(JsonContains(MustParse("[true]"), MustParse("[false]")),
            Lines{"$[0]: expected true, got false"});
}

}  // namespace
}  // namespace hotpage
