#include "tools/base/json_writer.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hotpage {

void JsonWriter::Newline() {
  if (indent_ <= 0) return;
  out_ += '\n';
  out_.append(stack_.size() * static_cast<size_t>(indent_), ' ');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (stack_.empty()) return;
  Level& top = stack_.back();
  if (!top.empty) out_ += top.inline_array ? ", " : ",";
  if (!top.inline_array) Newline();
  top.empty = false;
}

void JsonWriter::BeginObject() {
  BeforeValue();
  out_ += '{';
  stack_.push_back({true});
}

void JsonWriter::EndObject() {
  bool empty = stack_.back().empty;
  stack_.pop_back();
  if (!empty) Newline();
  out_ += '}';
}

void JsonWriter::BeginArray() {
  BeforeValue();
  out_ += '[';
  stack_.push_back({false});
}

void JsonWriter::EndArray() {
  Level top = stack_.back();
  stack_.pop_back();
  if (!top.empty && !top.inline_array) Newline();
  out_ += ']';
}

void JsonWriter::IntArray(const std::vector<int>& v) {
  BeforeValue();
  out_ += '[';
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out_ += indent_ > 0 ? ", " : ",";
    absl::StrAppend(&out_, v[i]);
  }
  out_ += ']';
}

void JsonWriter::Key(absl::string_view key) {
  BeforeValue();
  Escaped(key);
  out_ += indent_ > 0 ? ": " : ":";
  after_key_ = true;
}

void JsonWriter::String(absl::string_view s) {
  BeforeValue();
  Escaped(s);
}

void JsonWriter::Escaped(absl::string_view s) {
  out_ += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out_ += "\\\""; break;
      case '\\': out_ += "\\\\"; break;
      case '\n': out_ += "\\n"; break;
      case '\r': out_ += "\\r"; break;
      case '\t': out_ += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          absl::StrAppend(&out_, absl::StrFormat("\\u%04x", c));
        } else {
          out_ += static_cast<char>(c);
        }
    }
  }
  out_ += '"';
}

void JsonWriter::Int(int64_t v) {
  BeforeValue();
  absl::StrAppend(&out_, v);
}

void JsonWriter::Uint(uint64_t v) {
  BeforeValue();
  absl::StrAppend(&out_, v);
}

void JsonWriter::Double(double v) {
  BeforeValue();
  if (!std::isfinite(v)) {
    out_ += "null";
  } else {
    absl::StrAppend(&out_, absl::StrFormat("%.6g", v));
  }
}

void JsonWriter::Bool(bool v) {
  BeforeValue();
  out_ += v ? "true" : "false";
}

void JsonWriter::Null() {
  BeforeValue();
  out_ += "null";
}

}  // namespace hotpage
