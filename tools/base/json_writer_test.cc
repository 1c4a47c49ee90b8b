#include "tools/base/json_writer.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "tools/base/json.h"

namespace hotpage {
namespace {

TEST(JsonWriter, CompactNestedAndEscaped) {
  JsonWriter w;
  w.BeginObject();
  w.Key("a");
  w.IntArray({1, 2});
  w.Key("s\"");
  w.String("x\n\x01");
  w.Key("o");
  w.BeginObject();
  w.EndObject();
  w.Key("l");
  w.BeginArray();
  w.Null();
  w.Bool(true);
  w.Double(NAN);
  w.Optional(std::optional<int>(3));
  w.Optional(std::optional<int>());
  w.EndArray();
  w.EndObject();
  EXPECT_EQ(
      w.str(),
      R"({"a":[1,2],"s\"":"x\n\u0001","o":{},"l":[null,true,null,3,null]})");
}

TEST(JsonWriter, Pretty) {
  JsonWriter w(2);
  w.BeginObject();
  w.Key("n");
  w.BeginArray();
  w.BeginObject();
  w.Key("id");
  w.Int(0);
  w.Key("cpus");
  w.IntArray({0, 1});
  w.EndObject();
  w.EndArray();
  w.EndObject();
  EXPECT_EQ(w.str(),
            "{\n  \"n\": [\n    {\n      \"id\": 0,\n      \"cpus\": [0, 1]\n  "
            "  }\n  ]\n}");
}

std::string Str(absl::string_view s) {
  JsonWriter w;
  w.String(s);
  return w.str();
}

std::string Num(double v) {
  JsonWriter w;
  w.Double(v);
  return w.str();
}

TEST(JsonWriter, ValidUtf8PassesThrough) {
  EXPECT_EQ(Str("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xef\xbf\xbd"),
            "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xef\xbf\xbd\"");
  EXPECT_EQ(Str("\xf4\x8f\xbf\xbf"), "\"\xf4\x8f\xbf\xbf\"");  // U+10FFFF
}

// `hotpage topology --json --sysfs-root $'/tmp/\xff'` wrote the byte raw,
// which is not JSON (python3's json module rejects it).
TEST(JsonWriter, InvalidUtf8BecomesReplacementCharacters) {
  EXPECT_EQ(Str("/tmp/\xff"), R"("/tmp/\ufffd")");
  EXPECT_EQ(Str("\xe9t\xe9"), R"("\ufffdt\ufffd")");  // Latin-1
  EXPECT_EQ(Str("\x80"), R"("\ufffd")");              // lone continuation
  EXPECT_EQ(Str("\xc0\xaf"), R"("\ufffd\ufffd")");    // overlong '/'
  EXPECT_EQ(Str("\xe2\x82x"), R"("\ufffdx")");        // truncated, one U+FFFD
  EXPECT_EQ(Str("a\xe2\x82"), R"("a\ufffd")");        // truncated at the end
  EXPECT_EQ(Str("\xed\xa0\x80"), R"("\ufffd\ufffd\ufffd")");  // surrogate D800
  EXPECT_EQ(Str("\xf4\x90\x80\x80"),
            R"("\ufffd\ufffd\ufffd\ufffd")");  // > U+10FFFF
  JsonWriter w;
  w.BeginObject();
  w.Key("k\xfe");
  w.Null();
  w.EndObject();
  EXPECT_EQ(w.str(), R"({"k\ufffd":null})");
}

// Any bytes give JSON that a strict parser (UTF-8 checked) reads back, and
// the same string whenever the bytes were UTF-8.
TEST(JsonWriter, AnyBytesGiveValidJson) {
  std::mt19937 rng(11);
  for (int iter = 0; iter < 20000; ++iter) {
    std::string s(rng() % 12, '\0');
    for (char& c : s) {
      // Mostly the interesting lead and continuation bytes.
      const uint32_t r = rng();
      c = static_cast<char>(r % 4 == 0 ? r >> 8 : 0x80 + (r >> 8) % 0x78);
    }
    const std::string json = Str(s);
    absl::StatusOr<Json> back = ParseJson(json);
    ASSERT_TRUE(back.ok()) << back.status();
    ASSERT_TRUE(back->is_string());
    const bool replaced = json.find("\\ufffd") != std::string::npos;
    if (!replaced) {
      EXPECT_EQ(back->get<std::string>(), s);
    }
  }
}

TEST(JsonWriter, DoublesKeepEveryDigit) {
  // What %.6g printed right stays as it was ...
  EXPECT_EQ(Num(0), "0");
  EXPECT_EQ(Num(3), "3");
  EXPECT_EQ(Num(0.5), "0.5");
  EXPECT_EQ(Num(-2.25), "-2.25");
  EXPECT_EQ(Num(1e6), "1e+06");
  EXPECT_EQ(Num(0.0001), "0.0001");
  EXPECT_EQ(Num(100000), "100000");
  EXPECT_EQ(Num(0.123456), "0.123456");
  // ... and what it rounded keeps its digits (%.6g: 1.23457e+06, 123.457,
  // 0.3, 9.0072e+15).
  EXPECT_EQ(Num(1234567), "1234567");
  EXPECT_EQ(Num(123.456789), "123.456789");
  EXPECT_EQ(Num(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(Num(9007199254740992.0), "9007199254740992");
  EXPECT_EQ(Num(1.7976931348623157e308), "1.7976931348623157e+308");
  EXPECT_EQ(Num(INFINITY), "null");
}

TEST(JsonWriter, DoublesReadBackExactly) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 100000; ++i) {
    uint64_t bits = rng();
    double v;
    std::memcpy(&v, &bits, sizeof(v));
    if (!std::isfinite(v)) continue;
    const std::string s = Num(v);
    ASSERT_EQ(std::strtod(s.c_str(), nullptr), v) << s;
    absl::StatusOr<Json> back = ParseJson(s);
    ASSERT_TRUE(back.ok()) << s << ": " << back.status();
  }
  // Values rounded to 6 decimals (sim_report.cc's Round6) print as that
  // decimal, not as 17 digits of binary noise.
  for (int i = 0; i < 100000; ++i) {
    const double x = static_cast<double>(rng() % 10000000000ull) / 1000.0;
    const double v = std::round(x * 1e6) / 1e6;
    const std::string s = Num(v);
    ASSERT_EQ(std::strtod(s.c_str(), nullptr), v) << s;
    ASSERT_LE(s.size(), 17u) << s;
  }
}

}  // namespace
}  // namespace hotpage
