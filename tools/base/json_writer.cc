#include "tools/base/json_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hotpage {

size_t Utf8Sequence(absl::string_view s, size_t* bad) {
  const unsigned char c = s[0];
  if (c < 0x80) return 1;
  size_t len;
  unsigned char lo = 0x80, hi = 0xbf;  // bounds of the second byte
  if (c >= 0xc2 && c <= 0xdf) {
    len = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else {
    *bad = 1;
    return 0;
  }
  for (size_t k = 1; k < len; ++k) {
    const unsigned char cc = k < s.size() ? s[k] : 0;
    if (cc < (k == 1 ? lo : 0x80) || cc > (k == 1 ? hi : 0xbf)) {
      *bad = k;
      return 0;
    }
  }
  return len;
}

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
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = s[i];
    if (c >= 0x80) {
      size_t bad = 0;
      const size_t len = Utf8Sequence(s.substr(i), &bad);
      if (len == 0) {
        out_ += "\\ufffd";  // not UTF-8 (a file name, a comm): replaced
        i += bad;
      } else {
        out_.append(s.data() + i, len);
        i += len;
      }
      continue;
    }
    ++i;
    switch (c) {
      case '"':
        out_ += "\\\"";
        break;
      case '\\':
        out_ += "\\\\";
        break;
      case '\n':
        out_ += "\\n";
        break;
      case '\r':
        out_ += "\\r";
        break;
      case '\t':
        out_ += "\\t";
        break;
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
    // %.Ng with N = max(6, the fewest significant digits that read back as
    // the same double; to_chars finds those). Where %.6g round-trips this
    // prints exactly what %.6g prints (1e+06, 0.0001, 3); where it did not,
    // it prints the digits %.6g lost (1234567, not 1.23457e+06).
    char buf[64];
    const std::to_chars_result r =
        std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
    int digits = 0;
    for (const char* p = buf; p < r.ptr && *p != 'e'; ++p) {
      digits += *p >= '0' && *p <= '9';
    }
    const int precision = r.ec == std::errc() && digits > 6 ? digits : 6;
    const int n = std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    out_.append(buf, static_cast<size_t>(n));
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
