#include "tools/base/json_lite.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"

namespace hotpage {
namespace json_lite {
namespace {

bool Has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}
using Lines = std::vector<std::string>;

Value MustParse(const std::string& text) {
  absl::StatusOr<Value> v = Parse(text);
  EXPECT_TRUE(v.ok()) << text << ": " << v.status();
  return v.ok() ? *v : Value();
}

TEST(JsonLiteTest, ParsesScalars) {
  EXPECT_TRUE(MustParse("null").is_null());
  EXPECT_TRUE(MustParse(" true ").bool_value());
  EXPECT_FALSE(MustParse("false").bool_value());
  EXPECT_TRUE(MustParse("false").is_bool());
  EXPECT_EQ(MustParse("20480").number_value(), 20480);
  EXPECT_EQ(MustParse("-0.5e2").number_value(), -50);
  EXPECT_EQ(MustParse("0").number_value(), 0);
  EXPECT_EQ(MustParse("\"kernel\"").string_value(), "kernel");
}

TEST(JsonLiteTest, ParsesStringEscapes) {
  EXPECT_EQ(MustParse(R"("a\"b\\c\/d\n\t\r\b\f")").string_value(),
            "a\"b\\c/d\n\t\r\b\f");
  EXPECT_EQ(MustParse(R"("\u0041\u00e9\u20ac")").string_value(),
            "A\xc3\xa9\xe2\x82\xac");
  EXPECT_EQ(MustParse(R"("\ud83d\ude00")").string_value(), "\xf0\x9f\x98\x80");
}

TEST(JsonLiteTest, ParsesNestedDocument) {
  Value v = MustParse(R"({
    "nodes": [{"id": 0, "cpus": [0, 1], "read_latency_ns": null},
              {"id": 1, "cpus": [], "read_latency_ns": 250}],
    "tier_source": "kernel",
    "features": {"weighted_interleave": true}
  })");
  ASSERT_TRUE(v.is_object());
  ASSERT_NE(v.Find("nodes"), nullptr);
  const Value::Array& nodes = v.Find("nodes")->array();
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].Find("cpus")->array().size(), 2u);
  EXPECT_TRUE(nodes[0].Find("read_latency_ns")->is_null());
  EXPECT_EQ(nodes[1].Find("read_latency_ns")->number_value(), 250);
  EXPECT_EQ(v.Find("tier_source")->string_value(), "kernel");
  EXPECT_TRUE(v.Find("features")->Find("weighted_interleave")->bool_value());
  EXPECT_EQ(v.Find("missing"), nullptr);
  EXPECT_EQ(v.object()[0].first, "nodes");  // input order kept
}

TEST(JsonLiteTest, AccessorsAreNeutralOnTypeMismatch) {
  Value v = MustParse("[1]");
  EXPECT_EQ(v.Find("x"), nullptr);
  EXPECT_EQ(v.string_value(), "");
  EXPECT_TRUE(v.object().empty());
  EXPECT_EQ(v.number_value(), 0);
  EXPECT_FALSE(v.bool_value());
}

TEST(JsonLiteTest, SerializeRoundTrips) {
  const std::string text =
      R"({"a":[1,2.5,-3e2],"b":{"c":null,"d":true},"e":"x\"y\n"})";
  EXPECT_EQ(MustParse(text).Serialize(), text);
  EXPECT_EQ(Value::Number(20480).Serialize(), "20480");
  EXPECT_EQ(Value::String(std::string("\x01", 1)).Serialize(), "\"\\u0001\"");
}

TEST(JsonLiteTest, RejectsMalformedInput) {
  const std::vector<std::string> bad = {
      "",          " ",           "{",           "}",
      "[1,]",      "[1 2]",       "{\"a\"}",     "{\"a\":}",
      "{a:1}",     "{\"a\":1,}",  "01",          "1.",
      "1e",        "-",           "+1",          ".5",
      "tru",       "nul",         "\"abc",       "\"\\x\"",
      "\"\\u12\"", "\"\\ud800\"", "\"\\udc00\"", "1 2",
      "[1]x",      "\"a\nb\"",    "1e999",       "{\"a\":1,\"a\":2}",
      "\"\\",
  };
  for (const std::string& text : bad) {
    absl::StatusOr<Value> v = Parse(text);
    EXPECT_FALSE(v.ok()) << "accepted: " << text;
    if (!v.ok()) {
      EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_TRUE(Has(std::string(v.status().message()), "offset"))
          << v.status();
    }
  }
}

TEST(JsonLiteTest, LimitsNesting) {
  std::string ok_text(kMaxDepth, '[');
  ok_text += std::string(kMaxDepth, ']');
  EXPECT_TRUE(Parse(ok_text).ok());
  std::string deep(kMaxDepth + 1, '[');
  deep += std::string(kMaxDepth + 1, ']');
  absl::StatusOr<Value> v = Parse(deep);
  ASSERT_FALSE(v.ok());
  EXPECT_TRUE(Has(std::string(v.status().message()), "too deep")) << v.status();
  // Far deeper than the limit must not exhaust the stack either.
  EXPECT_FALSE(Parse(std::string(1 << 20, '[')).ok());
  EXPECT_FALSE(Parse(std::string(1 << 20, '{')).ok());
}

TEST(JsonLiteTest, SurvivesEveryTruncation) {
  const std::string text =
      R"({"nodes":[{"id":0,"cpus":[0,1],"s":"\u00e9\ud83d\ude00","x":-1.5e-3}],"t":null})";
  for (size_t n = 0; n < text.size(); ++n) {
    EXPECT_FALSE(Parse(text.substr(0, n)).ok()) << n;
  }
  EXPECT_TRUE(Parse(text).ok());
}

TEST(JsonLiteContainsTest, MatchesSubsetOfObjects) {
  Value actual = MustParse(
      R"({"nodes":[{"id":0,"cpus":[0,1],"memory_bytes":123},{"id":1,"cpus":[]}],
          "tier_source":"kernel","extra":1})");
  EXPECT_EQ(
      Contains(MustParse(R"({"nodes":[{"id":0},{"id":1,"cpus":[]}]})"), actual),
      Lines{});
  EXPECT_EQ(Contains(MustParse(R"({})"), actual), Lines{});
  EXPECT_EQ(Contains(MustParse("20480"), MustParse("20480.0")), Lines{});
}

TEST(JsonLiteContainsTest, ReportsEveryMismatchWithPath) {
  Value actual = MustParse(
      R"({"nodes":[{"id":0,"cpus":[0,1]},{"id":1,"cpus":[]}],
          "tier_source":"kernel","lat":null})");
  Value expected = MustParse(
      R"({"nodes":[{"id":0,"cpus":[0]},{"id":2,"cpus":[]}],
          "tier_source":"hmat","lat":80,"features":{}})");
  EXPECT_EQ(Contains(expected, actual),
            (Lines{"$.nodes[0].cpus: expected 1 elements [0], got 2 [0,1]",
                   "$.nodes[1].id: expected 2, got 1",
                   "$.tier_source: expected \"hmat\", got \"kernel\"",
                   "$.lat: expected 80 (number), got null",
                   "$.features: missing (expected {})"}));
}

TEST(JsonLiteContainsTest, NullMustBeNull) {
  EXPECT_EQ(Contains(MustParse("null"), MustParse("null")), Lines{});
  EXPECT_EQ(Contains(MustParse("null"), MustParse("0")),
            Lines{"$: expected null, got 0 (number)"});
  EXPECT_EQ(Contains(MustParse("[true]"), MustParse("[false]")),
            Lines{"$[0]: expected true, got false"});
}

}  // namespace
}  // namespace json_lite
}  // namespace hotpage
