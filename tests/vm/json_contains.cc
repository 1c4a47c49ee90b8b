#include "tests/vm/json_contains.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace hotpage {
namespace {

// "80 (number)", "[0,1] (array)", or plain "null".
std::string Describe(const Json& v) {
  if (v.is_null()) return "null";
  return absl::StrCat(JsonBrief(v), " (", v.type_name(), ")");
}

void ContainsInto(const Json& expected, const Json& actual,
                  const std::string& path, std::vector<std::string>* out) {
  // type_name() is "number" for integers and floats alike.
  if (absl::string_view(expected.type_name()) != actual.type_name()) {
    out->push_back(absl::StrCat(path, ": expected ", Describe(expected),
                                ", got ", Describe(actual)));
    return;
  }
  if (expected.is_array()) {
    if (expected.size() != actual.size()) {
      out->push_back(absl::StrCat(path, ": expected ", expected.size(),
                                  " elements ", JsonBrief(expected), ", got ",
                                  actual.size(), " ", JsonBrief(actual)));
      return;
    }
    for (size_t i = 0; i < expected.size(); ++i) {
      ContainsInto(expected[i], actual[i], absl::StrCat(path, "[", i, "]"),
                   out);
    }
    return;
  }
  if (expected.is_object()) {
    for (const auto& [key, value] : expected.items()) {
      const std::string member_path = absl::StrCat(path, ".", key);
      const Json* found = JsonMember(actual, key);
      if (found == nullptr) {
        out->push_back(absl::StrCat(member_path, ": missing (expected ",
                                    JsonBrief(value), ")"));
        continue;
      }
      ContainsInto(value, *found, member_path, out);
    }
    return;
  }
  // Scalars; nlohmann compares numbers by value across integer and float.
  if (expected != actual) {
    out->push_back(absl::StrCat(path, ": expected ", JsonBrief(expected),
                                ", got ", JsonBrief(actual)));
  }
}

}  // namespace

std::vector<std::string> JsonContains(const Json& expected, const Json& actual,
                                      const std::string& path) {
  std::vector<std::string> out;
  ContainsInto(expected, actual, path, &out);
  return out;
}

}  // namespace hotpage
