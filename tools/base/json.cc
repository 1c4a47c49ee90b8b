#include "tools/base/json.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hotpage {
namespace {

// Messages quote input bytes: keep them printable ASCII and short.
std::string Printable(absl::string_view s, size_t max_chars) {
  std::string out;
  for (unsigned char c : s) {
    if (out.size() >= max_chars) {
      out += "...";
      break;
    }
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      absl::StrAppendFormat(&out, "\\x%02X", c);
    }
  }
  return out;
}

// nlohmann's what() reads "[json.exception.parse_error.101] parse error at
// line 1, column 5: <reason>"; keep the reason (the position is computed
// from the text, where it is also a byte offset).
std::string Reason(absl::string_view what) {
  if (absl::StartsWith(what, "[json.exception.")) {
    const size_t end = what.find("] ");
    if (end != absl::string_view::npos) what.remove_prefix(end + 2);
  }
  if (absl::StartsWith(what, "parse error")) {
    const size_t colon = what.find(": ");
    if (colon != absl::string_view::npos) what.remove_prefix(colon + 2);
  }
  return Printable(what, 200);
}

// A SAX handler that builds the document itself (rather than nlohmann's
// json_sax_dom_parser) so that it can refuse duplicate keys and deep nesting
// and name the JSON path where it did. Pointers in stack_ stay valid: a
// container only grows while it is the innermost open one.
class StrictBuilder {
 public:
  using number_integer_t = Json::number_integer_t;
  using number_unsigned_t = Json::number_unsigned_t;
  using number_float_t = Json::number_float_t;
  using string_t = Json::string_t;
  using binary_t = Json::binary_t;

  explicit StrictBuilder(absl::string_view text) : text_(text) {}

  bool null() { return Add(nullptr) != nullptr; }
  bool boolean(bool v) { return Add(v) != nullptr; }
  bool number_integer(number_integer_t v) { return Add(v) != nullptr; }
  bool number_unsigned(number_unsigned_t v) { return Add(v) != nullptr; }
  bool number_float(number_float_t v, const string_t& /*text*/) {
    return Add(v) != nullptr;
  }
  bool string(string_t& v) { return Add(std::move(v)) != nullptr; }
  bool binary(binary_t& /*v*/) {  // only binary formats (CBOR, ...) have it
    return Fail(Path(/*next=*/true), "binary value");
  }
  bool start_object(std::size_t /*elements*/) { return Open(Json::object()); }
  bool key(string_t& k) {
    Frame& f = stack_.back();
    if (!f.keys.insert(k).second) {
      return Fail(Path(),
                  absl::StrCat("duplicate key \"", Printable(k, 64), "\""));
    }
    f.key = std::move(k);
    return true;
  }
  bool end_object() {
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t /*elements*/) { return Open(Json::array()); }
  bool end_array() {
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& ex) {
    // `position` counts the bytes read, the offending one included.
    const size_t offset =
        std::min(position > 0 ? position - 1 : 0, text_.size());
    size_t line = 1, line_start = 0;
    for (size_t i = 0; i < offset; ++i) {
      if (text_[i] == '\n') {
        ++line;
        line_start = i + 1;
      }
    }
    error_ =
        absl::StrFormat("JSON line %d, column %d (byte offset %d): %s", line,
                        offset - line_start + 1, offset, Reason(ex.what()));
    return false;
  }

  Json& root() { return root_; }
  const std::string& error() const { return error_; }

 private:
  struct Frame {
    Json* value;
    std::string key;                        // objects: the member being read
    absl::flat_hash_set<std::string> keys;  // objects: keys seen so far
  };

  // Places `v` in the innermost open container (or as the root).
  Json* Add(Json v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Frame& f = stack_.back();
    if (f.value->is_array()) {
      f.value->push_back(std::move(v));
      return &f.value->back();
    }
    Json& slot = (*f.value)[f.key];
    slot = std::move(v);
    return &slot;
  }

  bool Open(Json container) {
    if (stack_.size() >= static_cast<size_t>(kJsonMaxDepth)) {
      return Fail(Path(/*next=*/true),
                  absl::StrCat("nesting too deep (more than ", kJsonMaxDepth,
                               " levels)"));
    }
    Json* v = Add(std::move(container));
    stack_.push_back(Frame{v, {}, {}});
    return true;
  }

  // The path of the innermost open container ("$", "$.nodes[2]"), and with
  // `next`, of the value that would go into it next ("$.nodes[2].cpus").
  std::string Path(bool next = false) const {
    std::string p = "$";
    for (size_t i = 0; i < stack_.size(); ++i) {
      const Frame& f = stack_[i];
      if (i + 1 == stack_.size() && !next) break;
      if (f.value->is_array()) {
        // An open child was already added; the next one is not yet.
        const size_t n = f.value->size();
        absl::StrAppend(&p, "[", i + 1 == stack_.size() ? n : n - 1, "]");
      } else {
        absl::StrAppend(&p, ".", Printable(f.key, 64));
      }
    }
    return p;
  }

  bool Fail(const std::string& path, absl::string_view what) {
    error_ = absl::StrCat("JSON ", path, ": ", what);
    return false;
  }

  absl::string_view text_;
  Json root_;
  std::vector<Frame> stack_;
  std::string error_;
};

}  // namespace

absl::StatusOr<Json> ParseJson(absl::string_view text) {
  StrictBuilder builder(text);
  const char* begin = text.data();
  if (!Json::sax_parse(begin, begin + text.size(), &builder,
                       nlohmann::detail::input_format_t::json,
                       /*strict=*/true, /*ignore_comments=*/false)) {
    return absl::InvalidArgumentError(
        builder.error().empty() ? "JSON: invalid document" : builder.error());
  }
  return std::move(builder.root());
}

const Json* JsonMember(const Json& object, absl::string_view key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(std::string(key));
  return it == object.end() ? nullptr : &*it;
}

std::string JsonBrief(const Json& v, size_t max_chars) {
  std::string s = v.dump(-1, ' ', /*ensure_ascii=*/false,
                         nlohmann::detail::error_handler_t::replace);
  if (s.size() > max_chars && max_chars >= 3) {
    s = absl::StrCat(s.substr(0, max_chars - 3), "...");
  }
  return s;
}

}  // namespace hotpage
