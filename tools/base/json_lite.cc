#include "tools/base/json_lite.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace hotpage {
namespace json_lite {
namespace {

const std::string& EmptyString() {
  static const std::string* const kEmpty = new std::string();
  return *kEmpty;
}

class Parser {
 public:
  explicit Parser(absl::string_view text) : text_(text) {}

  absl::StatusOr<Value> ParseDocument() {
    SkipWhitespace();
    absl::StatusOr<Value> value = ParseValue(0);
    if (!value.ok()) return value;
    SkipWhitespace();
    if (pos_ != text_.size()) return Error("unexpected text after the value");
    return value;
  }

 private:
  absl::Status Error(absl::string_view what) const {
    std::string near;
    if (pos_ < text_.size()) {
      absl::string_view rest = text_.substr(pos_, 16);
      for (char c : rest) {
        near += (c >= 0x20 && c < 0x7f) ? c : '?';
      }
      near = absl::StrCat(" near '", near, "'");
    } else {
      near = " at end of input";
    }
    return absl::InvalidArgumentError(
        absl::StrCat("JSON: ", what, " at offset ", pos_, near));
  }

  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }

  void SkipWhitespace() {
    while (!AtEnd()) {
      char c = text_[pos_];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
      ++pos_;
    }
  }

  bool ConsumeLiteral(absl::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  absl::StatusOr<Value> ParseValue(int depth) {
    if (AtEnd()) return Error("expected a value");
    switch (Peek()) {
      case '{':
        return ParseObject(depth + 1);
      case '[':
        return ParseArray(depth + 1);
      case '"': {
        absl::StatusOr<std::string> s = ParseString();
        if (!s.ok()) return s.status();
        return Value::String(*std::move(s));
      }
      case 't':
        if (ConsumeLiteral("true")) return Value::Bool(true);
        return Error("bad literal");
      case 'f':
        if (ConsumeLiteral("false")) return Value::Bool(false);
        return Error("bad literal");
      case 'n':
        if (ConsumeLiteral("null")) return Value::Null();
        return Error("bad literal");
      default:
        return ParseNumber();
    }
  }

  absl::StatusOr<Value> ParseObject(int depth) {
    if (depth > kMaxDepth) return Error("nesting too deep");
    ++pos_;  // '{'
    Value::Object members;
    SkipWhitespace();
    if (Peek() == '}') {
      ++pos_;
      return Value::MakeObject(std::move(members));
    }
    while (true) {
      SkipWhitespace();
      if (Peek() != '"') return Error("expected a member name");
      absl::StatusOr<std::string> key = ParseString();
      if (!key.ok()) return key.status();
      for (const Value::Member& m : members) {
        if (m.first == *key)
          return Error(absl::StrCat("duplicate key \"", *key, "\""));
      }
      SkipWhitespace();
      if (Peek() != ':') return Error("expected ':'");
      ++pos_;
      SkipWhitespace();
      absl::StatusOr<Value> value = ParseValue(depth);
      if (!value.ok()) return value;
      members.emplace_back(*std::move(key), *std::move(value));
      SkipWhitespace();
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      if (Peek() == '}') {
        ++pos_;
        return Value::MakeObject(std::move(members));
      }
      return Error("expected ',' or '}'");
    }
  }

  absl::StatusOr<Value> ParseArray(int depth) {
    if (depth > kMaxDepth) return Error("nesting too deep");
    ++pos_;  // '['
    Value::Array elements;
    SkipWhitespace();
    if (Peek() == ']') {
      ++pos_;
      return Value::MakeArray(std::move(elements));
    }
    while (true) {
      SkipWhitespace();
      absl::StatusOr<Value> value = ParseValue(depth);
      if (!value.ok()) return value;
      elements.push_back(*std::move(value));
      SkipWhitespace();
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      if (Peek() == ']') {
        ++pos_;
        return Value::MakeArray(std::move(elements));
      }
      return Error("expected ',' or ']'");
    }
  }

  static bool IsDigit(char c) { return c >= '0' && c <= '9'; }

  absl::StatusOr<Value> ParseNumber() {
    size_t start = pos_;
    if (Peek() == '-') ++pos_;
    if (Peek() == '0') {
      ++pos_;
    } else if (IsDigit(Peek())) {
      while (IsDigit(Peek())) ++pos_;
    } else {
      pos_ = start;
      return Error("expected a value");
    }
    if (Peek() == '.') {
      ++pos_;
      if (!IsDigit(Peek())) return Error("expected a digit after '.'");
      while (IsDigit(Peek())) ++pos_;
    }
    if (Peek() == 'e' || Peek() == 'E') {
      ++pos_;
      if (Peek() == '+' || Peek() == '-') ++pos_;
      if (!IsDigit(Peek())) return Error("expected a digit in the exponent");
      while (IsDigit(Peek())) ++pos_;
    }
    // strtod needs a NUL-terminated copy; the grammar above already
    // validated the text, so strtod reads all of it.
    std::string number(text_.substr(start, pos_ - start));
    double d = std::strtod(number.c_str(), nullptr);
    if (!std::isfinite(d)) {
      pos_ = start;
      return Error("number out of range");
    }
    return Value::Number(d, std::move(number));
  }

  // Four hex digits at pos_.
  absl::StatusOr<uint32_t> ParseHex4() {
    if (text_.size() - pos_ < 4) return Error("truncated \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text_[pos_ + i];
      v <<= 4;
      if (c >= '0' && c <= '9') {
        v |= c - '0';
      } else if (c >= 'a' && c <= 'f') {
        v |= c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        v |= c - 'A' + 10;
      } else {
        return Error("bad hex digit in \\u escape");
      }
    }
    pos_ += 4;
    return v;
  }

  static void AppendUtf8(uint32_t cp, std::string* out) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  absl::StatusOr<std::string> ParseString() {
    ++pos_;  // opening quote
    std::string out;
    while (true) {
      if (AtEnd()) return Error("unterminated string");
      char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20) {
        return Error("control character in string");
      }
      if (c != '\\') {
        out.push_back(c);
        ++pos_;
        continue;
      }
      ++pos_;  // backslash
      if (AtEnd()) return Error("unterminated escape");
      char e = text_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out.push_back(e);
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'u': {
          absl::StatusOr<uint32_t> cp = ParseHex4();
          if (!cp.ok()) return cp.status();
          uint32_t code = *cp;
          if (code >= 0xD800 && code <= 0xDBFF) {
            if (!ConsumeLiteral("\\u")) return Error("lone high surrogate");
            absl::StatusOr<uint32_t> low = ParseHex4();
            if (!low.ok()) return low.status();
            if (*low < 0xDC00 || *low > 0xDFFF)
              return Error("bad low surrogate");
            code = 0x10000 + ((code - 0xD800) << 10) + (*low - 0xDC00);
          } else if (code >= 0xDC00 && code <= 0xDFFF) {
            return Error("lone low surrogate");
          }
          AppendUtf8(code, &out);
          break;
        }
        default:
          --pos_;
          return Error("bad escape");
      }
    }
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

void SerializeString(absl::string_view s, std::string* out) {
  out->push_back('"');
  for (char c : s) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppendFormat(out, "\\u%04x", static_cast<unsigned char>(c));
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

void SerializeTo(const Value& v, std::string* out) {
  switch (v.type()) {
    case Value::Type::kNull:
      out->append("null");
      return;
    case Value::Type::kBool:
      out->append(v.bool_value() ? "true" : "false");
      return;
    case Value::Type::kNumber: {
      if (!v.number_text().empty()) {
        out->append(v.number_text());
        return;
      }
      // Integers print without a fraction; others with enough digits.
      double d = v.number_value();
      if (d == std::floor(d) && std::fabs(d) < 1e15) {
        absl::StrAppend(out, static_cast<int64_t>(d));
      } else {
        absl::StrAppendFormat(out, "%.17g", d);
      }
      return;
    }
    case Value::Type::kString:
      SerializeString(v.string_value(), out);
      return;
    case Value::Type::kArray: {
      out->push_back('[');
      bool first = true;
      for (const Value& e : v.array()) {
        if (!first) out->push_back(',');
        first = false;
        SerializeTo(e, out);
      }
      out->push_back(']');
      return;
    }
    case Value::Type::kObject: {
      out->push_back('{');
      bool first = true;
      for (const Value::Member& m : v.object()) {
        if (!first) out->push_back(',');
        first = false;
        SerializeString(m.first, out);
        out->push_back(':');
        SerializeTo(m.second, out);
      }
      out->push_back('}');
      return;
    }
  }
}

// Shortens long values in messages.
std::string Brief(const Value& v) {
  std::string s = v.Serialize();
  if (s.size() > 120) s = absl::StrCat(s.substr(0, 117), "...");
  return s;
}

// "80 (number)", "[0,1] (array)", or plain "null".
std::string Describe(const Value& v) {
  if (v.is_null()) return "null";
  return absl::StrCat(Brief(v), " (", TypeName(v.type()), ")");
}

void ContainsInto(const Value& expected, const Value& actual,
                  const std::string& path, std::vector<std::string>* out) {
  if (expected.type() != actual.type()) {
    out->push_back(absl::StrCat(path, ": expected ", Describe(expected),
                                ", got ", Describe(actual)));
    return;
  }
  switch (expected.type()) {
    case Value::Type::kNull:
      return;
    case Value::Type::kBool:
    case Value::Type::kNumber:
    case Value::Type::kString: {
      bool equal = expected.is_bool()
                       ? expected.bool_value() == actual.bool_value()
                   : expected.is_number()
                       ? expected.number_value() == actual.number_value()
                       : expected.string_value() == actual.string_value();
      if (!equal) {
        out->push_back(absl::StrCat(path, ": expected ", Brief(expected),
                                    ", got ", Brief(actual)));
      }
      return;
    }
    case Value::Type::kArray: {
      const Value::Array& e = expected.array();
      const Value::Array& a = actual.array();
      if (e.size() != a.size()) {
        out->push_back(absl::StrCat(path, ": expected ", e.size(), " elements ",
                                    Brief(expected), ", got ", a.size(), " ",
                                    Brief(actual)));
        return;
      }
      for (size_t i = 0; i < e.size(); ++i) {
        ContainsInto(e[i], a[i], absl::StrCat(path, "[", i, "]"), out);
      }
      return;
    }
    case Value::Type::kObject:
      for (const Value::Member& m : expected.object()) {
        std::string member_path = absl::StrCat(path, ".", m.first);
        const Value* found = actual.Find(m.first);
        if (found == nullptr) {
          out->push_back(absl::StrCat(member_path, ": missing (expected ",
                                      Brief(m.second), ")"));
          continue;
        }
        ContainsInto(m.second, *found, member_path, out);
      }
      return;
  }
}

}  // namespace

Value Value::Bool(bool b) {
  Value v;
  v.type_ = Type::kBool;
  v.bool_ = b;
  return v;
}

Value Value::Number(double d, std::string text) {
  Value v;
  v.type_ = Type::kNumber;
  v.number_ = d;
  v.text_ = std::move(text);
  return v;
}

Value Value::String(std::string s) {
  Value v;
  v.type_ = Type::kString;
  v.text_ = std::move(s);
  return v;
}

Value Value::MakeArray(Array elements) {
  Value v;
  v.type_ = Type::kArray;
  v.array_ = std::make_shared<const Array>(std::move(elements));
  return v;
}

Value Value::MakeObject(Object members) {
  Value v;
  v.type_ = Type::kObject;
  v.object_ = std::make_shared<const Object>(std::move(members));
  return v;
}

const std::string& Value::string_value() const {
  return is_string() ? text_ : EmptyString();
}

const std::string& Value::number_text() const {
  return is_number() ? text_ : EmptyString();
}

const Value::Array& Value::array() const {
  static const Array* const kEmpty = new Array();
  return is_array() ? *array_ : *kEmpty;
}

const Value::Object& Value::object() const {
  static const Object* const kEmpty = new Object();
  return is_object() ? *object_ : *kEmpty;
}

const Value* Value::Find(absl::string_view key) const {
  for (const Member& m : object()) {
    if (m.first == key) return &m.second;
  }
  return nullptr;
}

std::string Value::Serialize() const {
  std::string out;
  SerializeTo(*this, &out);
  return out;
}

absl::StatusOr<Value> Parse(absl::string_view text) {
  return Parser(text).ParseDocument();
}

absl::string_view TypeName(Value::Type type) {
  switch (type) {
    case Value::Type::kNull:
      return "null";
    case Value::Type::kBool:
      return "bool";
    case Value::Type::kNumber:
      return "number";
    case Value::Type::kString:
      return "string";
    case Value::Type::kArray:
      return "array";
    case Value::Type::kObject:
      return "object";
  }
  return "?";
}

std::vector<std::string> Contains(const Value& expected, const Value& actual,
                                  const std::string& path) {
  std::vector<std::string> out;
  ContainsInto(expected, actual, path, &out);
  return out;
}

}  // namespace json_lite
}  // namespace hotpage
