#include "tools/base/json_writer.h"

#include <cmath>
#include <optional>

#include "gtest/gtest.h"

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
  EXPECT_EQ(w.str(), R"({"a":[1,2],"s\"":"x\n\u0001","o":{},"l":[null,true,null,3,null]})");
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
  EXPECT_EQ(w.str(), "{\n  \"n\": [\n    {\n      \"id\": 0,\n      \"cpus\": [0, 1]\n    }\n  ]\n}");
}

}  // namespace
}  // namespace hotpage
