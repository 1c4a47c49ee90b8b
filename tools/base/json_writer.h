// JsonWriter: a small streaming JSON writer for hotpage's machine-readable
// output (`--json`). Keys appear in the order written, so output is
// deterministic and diffable. Strings are escaped per RFC 8259 and the
// output is always valid UTF-8: bytes that are not (a path under a Latin-1
// --sysfs-root, a process name) are written as U+FFFD, one per maximal
// ill-formed subsequence as the Unicode standard recommends. Doubles keep
// every digit needed to read back the same value (and print as %.6g where
// that is enough: 0.5, 1e+06); non-finite doubles and absent optionals are
// written as null.
//
// Usage:
//   JsonWriter w;
//   w.BeginObject();
//   w.Key("nodes"); w.BeginArray(); ... w.EndArray();
//   w.EndObject();
//   std::string out = w.str();

#ifndef HOTPAGE_TOOLS_BASE_JSON_WRITER_H_
#define HOTPAGE_TOOLS_BASE_JSON_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace hotpage {

// Length of the well-formed UTF-8 sequence at the start of `s` (RFC 3629,
// Table 3-7 of the Unicode standard: no overlongs, no surrogates, nothing
// above U+10FFFF), or 0 with *bad set to the length of its longest valid
// prefix (at least 1): what one U+FFFD replaces ("maximal subpart"). `s`
// must not be empty. JsonWriter escapes by it; the daemon's config reader
// checks its input with it.
size_t Utf8Sequence(absl::string_view s, size_t* bad);

class JsonWriter {
 public:
  // indent > 0 pretty-prints with that many spaces per level; short arrays
  // of numbers stay on one line.
  explicit JsonWriter(int indent = 0) : indent_(indent) {}

  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();
  void Key(absl::string_view key);

  void String(absl::string_view s);
  void Int(int64_t v);
  void Uint(uint64_t v);
  void Double(double v);
  void Bool(bool v);
  void Null();

  template <typename T>
  void Optional(const std::optional<T>& v) {
    if (!v.has_value()) {
      Null();
    } else {
      Value(*v);
    }
  }
  void IntArray(const std::vector<int>& v);

  const std::string& str() const { return out_; }

 private:
  void Value(int64_t v) { Int(v); }
  void Value(int v) { Int(v); }
  void Value(uint64_t v) { Uint(v); }
  void Value(double v) { Double(v); }
  void Value(bool v) { Bool(v); }
  void Value(const std::string& v) { String(v); }

  void BeforeValue();
  // Appends s as a quoted JSON string (invalid UTF-8 replaced).
  void Escaped(absl::string_view s);
  void Newline();

  struct Level {
    bool is_object;
    bool empty = true;
    bool inline_array = false;
  };
  int indent_;
  std::string out_;
  std::vector<Level> stack_;
  bool after_key_ = false;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_BASE_JSON_WRITER_H_
