// json_lite: a minimal JSON DOM (RFC 8259), with no dependency beyond
// abseil. It began in tests/vm because CI machines may lack python3 and jq;
// it lives here since `hotpage simulate --topology FILE` reads
// `hotpage topology --json` files with it (TopologyFromJson), so it parses
// untrusted input and is fuzzed through that parser.
//
// The parser is bounds-checked: every read is checked against the input
// length, its recursion is limited by kMaxDepth, and any input, however
// malformed, gives a Status rather than a crash. Objects keep
// their keys in input order; a duplicate key is an error. Numbers are kept
// as double together with their source text.
//
// Contains() is the comparison the VM tests use: "expected" is a pattern
// that the actual document must contain (see its comment).

#ifndef HOTPAGE_TOOLS_BASE_JSON_LITE_H_
#define HOTPAGE_TOOLS_BASE_JSON_LITE_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hotpage {
namespace json_lite {

class Value {
 public:
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  using Array = std::vector<Value>;
  using Member = std::pair<std::string, Value>;
  using Object = std::vector<Member>;

  Value() = default;  // null
  static Value Null() { return Value(); }
  static Value Bool(bool b);
  static Value Number(double d, std::string text = "");
  static Value String(std::string s);
  static Value MakeArray(Array elements);
  static Value MakeObject(Object members);

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::kNull; }
  bool is_bool() const { return type_ == Type::kBool; }
  bool is_number() const { return type_ == Type::kNumber; }
  bool is_string() const { return type_ == Type::kString; }
  bool is_array() const { return type_ == Type::kArray; }
  bool is_object() const { return type_ == Type::kObject; }

  // Accessors return a neutral value (false, 0, "", empty) on a type mismatch.
  bool bool_value() const { return is_bool() && bool_; }
  double number_value() const { return is_number() ? number_ : 0; }
  const std::string& string_value() const;  // the string, or "" if not one
  // A parsed number's source text ("20480", "1e3"); "" otherwise.
  const std::string& number_text() const;
  const Array& array() const;    // elements, or empty
  const Object& object() const;  // members in input order, or empty

  // Member `key` of an object, or nullptr (also when this is no object).
  const Value* Find(absl::string_view key) const;

  // Compact JSON text (numbers as written in the input when parsed).
  std::string Serialize() const;

 private:
  Type type_ = Type::kNull;
  bool bool_ = false;
  double number_ = 0;
  std::string text_;  // string value, or a number's source text
  // Shared so that Value stays cheap to copy; never mutated after creation.
  std::shared_ptr<const Array> array_;
  std::shared_ptr<const Object> object_;
};

// Deepest nesting of arrays/objects Parse accepts.
inline constexpr int kMaxDepth = 64;

// Parses one JSON text (surrounding whitespace allowed, nothing else after
// it). Errors are InvalidArgument and name the byte offset.
absl::StatusOr<Value> Parse(absl::string_view text);

// Type name for messages: "null", "bool", "number", ...
absl::string_view TypeName(Value::Type type);

// Checks that `actual` contains `expected` and returns every mismatch as
// "PATH: message" (empty when it matches). PATH is like $.nodes[1].cpus.
//  - object: each member of `expected` must exist in `actual` and match;
//    `actual` may have more members.
//  - array: same length, elements matched pairwise.
//  - number: equal value (20480 matches 20480.0).
//  - null, bool, string: equal.
std::vector<std::string> Contains(const Value& expected, const Value& actual,
                                  const std::string& path = "$");

}  // namespace json_lite
}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_BASE_JSON_LITE_H_
