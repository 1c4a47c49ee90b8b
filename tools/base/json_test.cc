#include "tools/base/json.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace hotpage {
namespace {

Json MustParse(const std::string& text) {
  absl::StatusOr<Json> v = ParseJson(text);
  EXPECT_TRUE(v.ok()) << text << ": " << v.status();
  return v.ok() ? *v : Json();
}

std::string ErrorOf(const std::string& text) {
  absl::StatusOr<Json> v = ParseJson(text);
  EXPECT_FALSE(v.ok()) << "accepted: " << text;
  if (v.ok()) return "";
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(v.status().message());
}

bool IsPrintableAscii(const std::string& s) {
  for (unsigned char c : s) {
    if (c < 0x20 || c >= 0x7f) return false;
  }
  return true;
}

TEST(JsonTest, ParsesScalars) {
  EXPECT_TRUE(MustParse("null").is_null());
  EXPECT_TRUE(MustParse(" true ").get<bool>());
  EXPECT_FALSE(MustParse("false").get<bool>());
  EXPECT_TRUE(MustParse("false").is_boolean());
  EXPECT_EQ(MustParse("20480").get<double>(), 20480);
  EXPECT_TRUE(MustParse("20480").is_number_integer());
  EXPECT_EQ(MustParse("-0.5e2").get<double>(), -50);
  EXPECT_EQ(MustParse("0").get<double>(), 0);
  EXPECT_EQ(MustParse("18446744073709551615").get<uint64_t>(),
            18446744073709551615u);
  EXPECT_EQ(MustParse("\"kernel\"").get<std::string>(), "kernel");
}

TEST(JsonTest, ParsesStringEscapes) {
  EXPECT_EQ(MustParse(R"("a\"b\\c\/d\n\t\r\b\f")").get<std::string>(),
            "a\"b\\c/d\n\t\r\b\f");
  EXPECT_EQ(MustParse(R"("\u0041\u00e9\u20ac")").get<std::string>(),
            "A\xc3\xa9\xe2\x82\xac");
  EXPECT_EQ(MustParse(R"("\ud83d\ude00")").get<std::string>(),
            "\xf0\x9f\x98\x80");
  // Raw UTF-8 passes through.
  EXPECT_EQ(MustParse("\"\xc3\xa9\xf0\x9f\x98\x80\"").get<std::string>(),
            "\xc3\xa9\xf0\x9f\x98\x80");
}

TEST(JsonTest, ParsesNestedDocumentInInputOrder) {
  Json v = MustParse(R"({
    "nodes": [{"id": 0, "cpus": [0, 1], "read_latency_ns": null},
              {"id": 1, "cpus": [], "read_latency_ns": 250}],
    "tier_source": "kernel",
    "features": {"weighted_interleave": true}
  })");
  ASSERT_TRUE(v.is_object());
  const Json* nodes = JsonMember(v, "nodes");
  ASSERT_NE(nodes, nullptr);
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ(JsonMember((*nodes)[0], "cpus")->size(), 2u);
  EXPECT_TRUE(JsonMember((*nodes)[0], "read_latency_ns")->is_null());
  EXPECT_EQ(JsonMember((*nodes)[1], "read_latency_ns")->get<int>(), 250);
  EXPECT_EQ(JsonMember(v, "tier_source")->get<std::string>(), "kernel");
  EXPECT_TRUE(JsonMember(*JsonMember(v, "features"), "weighted_interleave")
                  ->get<bool>());
  EXPECT_EQ(JsonMember(v, "missing"), nullptr);
  EXPECT_EQ(JsonMember(*nodes, "id"), nullptr);  // not an object
  EXPECT_EQ(v.begin().key(), "nodes");           // input order kept
}

TEST(JsonTest, DumpRoundTripsInInputOrder) {
  const std::string text =
      R"({"z":[1,2.5,-300.0],"b":{"c":null,"d":true},"e":"x\"y\n"})";
  EXPECT_EQ(MustParse(text).dump(), text);
  EXPECT_EQ(JsonBrief(MustParse("[1,2,3,4,5,6,7,8,9]"), 10), "[1,2,3,...");
}

TEST(JsonTest, RejectsMalformedInputNamingLineColumnAndOffset) {
  const std::vector<std::string> bad = {
      "",          " ",           "{",           "}",       "[1,]",
      "[1 2]",     "{\"a\"}",     "{\"a\":}",    "{a:1}",   "{\"a\":1,}",
      "01",        "1.",          "1e",          "-",       "+1",
      ".5",        "tru",         "nul",         "\"abc",   "\"\\x\"",
      "\"\\u12\"", "\"\\ud800\"", "\"\\udc00\"", "1 2",     "[1]x",
      "\"a\nb\"",  "1e999",       "\"\\",        "// c\n1", "[1] /* c */",
  };
  for (const std::string& text : bad) {
    const std::string e = ErrorOf(text);
    EXPECT_TRUE(absl::StartsWith(e, "JSON line 1, column ")) << e;
    EXPECT_TRUE(absl::StrContains(e, "byte offset")) << e;
  }
  EXPECT_EQ(ErrorOf("{\n  \"a\": 1,\n  \"b\" 2\n}"),
            "JSON line 3, column 7 (byte offset 18): syntax error while "
            "parsing object separator - unexpected number literal; expected "
            "':'");
  EXPECT_EQ(ErrorOf("1e999"),
            "JSON line 1, column 5 (byte offset 4): number overflow parsing "
            "'1e999'");
}

TEST(JsonTest, RejectsDuplicateKeysNamingThePath) {
  EXPECT_EQ(ErrorOf(R"({"a":1,"a":2})"), "JSON $: duplicate key \"a\"");
  EXPECT_EQ(ErrorOf(R"({"nodes":[{"id":0},{"id":1,"cpus":[],"id":2}]})"),
            "JSON $.nodes[1]: duplicate key \"id\"");
  // The same key in different objects is fine.
  EXPECT_TRUE(ParseJson(R"([{"a":1},{"a":2,"b":{"a":3}}])").ok());
}

TEST(JsonTest, RejectsInvalidUtf8) {
  const std::vector<std::string> bad = {
      "\"\xff\"",                 // never a UTF-8 byte
      "\"\x80\"",                 // lone continuation byte
      "\"\xc3\"",                 // truncated 2-byte sequence
      "\"\xe2\x82\"",             // truncated 3-byte sequence
      "\"\xc0\xaf\"",             // overlong '/'
      "\"\xe0\x80\xaf\"",         // overlong, 3 bytes
      "\"\xed\xa0\x80\"",         // UTF-16 surrogate D800 encoded as UTF-8
      "\"\xf4\x90\x80\x80\"",     // above U+10FFFF
      "{\"k\xfe\":1}",            // in a key
      "[\"ok\", \"\xe9t\xe9\"]",  // Latin-1, not UTF-8
  };
  for (const std::string& text : bad) {
    const std::string e = ErrorOf(text);
    EXPECT_TRUE(absl::StrContains(e, "ill-formed UTF-8")) << e;
    EXPECT_TRUE(IsPrintableAscii(e)) << e;  // the bad byte as \xNN
  }
  EXPECT_EQ(ErrorOf("\"\xff\""),
            "JSON line 1, column 2 (byte offset 1): syntax error while parsing "
            "value - invalid string: ill-formed UTF-8 byte; last read: "
            "'\"\\xFF'");
  // Outside strings a non-ASCII byte is a syntax error.
  EXPECT_TRUE(IsPrintableAscii(ErrorOf("[\xff]")));
}

TEST(JsonTest, LimitsNesting) {
  std::string ok_text(kJsonMaxDepth, '[');
  ok_text += std::string(kJsonMaxDepth, ']');
  EXPECT_TRUE(ParseJson(ok_text).ok());
  std::string deep(kJsonMaxDepth + 1, '[');
  deep += std::string(kJsonMaxDepth + 1, ']');
  EXPECT_TRUE(absl::StrContains(ErrorOf(deep), "too deep"));
  EXPECT_EQ(ErrorOf(R"({"a":[{"b":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[)"
                    R"([[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]}]})")
                .substr(0, 24),
            "JSON $.a[0].b[0][0][0][0");
  // Far deeper than the limit must not exhaust the stack either.
  EXPECT_FALSE(ParseJson(std::string(1 << 20, '[')).ok());
  EXPECT_FALSE(ParseJson(std::string(1 << 20, '{')).ok());
}

TEST(JsonTest, SurvivesEveryTruncation) {
  const std::string text =
      R"({"nodes":[{"id":0,"cpus":[0,1],"s":"\u00e9\ud83d\ude00","x":-1.5e-3}],"t":null})";
  for (size_t n = 0; n < text.size(); ++n) {
    EXPECT_FALSE(ParseJson(text.substr(0, n)).ok()) << n;
  }
  EXPECT_TRUE(ParseJson(text).ok());
}

}  // namespace
}  // namespace hotpage
