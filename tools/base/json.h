// JSON input for hotpage: Debian's nlohmann::json (nlohmann-json3-dev)
// behind one strict parse function.
//
// ParseJson reads untrusted text (`hotpage simulate --topology FILE`, the
// output of hotpage's own commands in tests) into an nlohmann::ordered_json
// document. It is stricter than nlohmann::json::parse, and never throws:
//  - RFC 8259 only: one value, nothing after it, no comments;
//  - valid UTF-8 only (ill-formed, overlong or surrogate sequences, code
//    points above U+10FFFF: nlohmann's lexer checks strings; bytes outside
//    strings are syntax errors anyway);
//  - no duplicate key in an object (nlohmann would keep the last one);
//  - nesting at most kJsonMaxDepth arrays/objects deep;
//  - finite numbers (1e999 is an error).
// Objects keep their members in input order (ordered_json), so messages
// that walk a document list things as the file does.
//
// Errors are InvalidArgument and say where and why:
//   "JSON line 3, column 12 (byte offset 40): syntax error while parsing
//    object separator - unexpected number literal; expected ','"
//   "JSON $.nodes[1]: duplicate key \"id\""
// Input bytes quoted in a message are printable ASCII (others as \xNN).
//
// Writing JSON is JsonWriter's job (json_writer.h): a streaming writer whose
// key order and layout the goldens depend on.

#ifndef HOTPAGE_TOOLS_BASE_JSON_H_
#define HOTPAGE_TOOLS_BASE_JSON_H_

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hotpage {

using Json = nlohmann::ordered_json;

// Deepest nesting of arrays/objects ParseJson accepts.
inline constexpr int kJsonMaxDepth = 64;

// Parses one JSON text (surrounding whitespace allowed, nothing else).
absl::StatusOr<Json> ParseJson(absl::string_view text);

// Member `key` of `object`, or nullptr (also when `object` is no object).
const Json* JsonMember(const Json& object, absl::string_view key);

// Compact JSON text of `v` for messages, cut to `max_chars` with "...".
// Never throws (invalid UTF-8, which ParseJson never produces, is replaced).
std::string JsonBrief(const Json& v, size_t max_chars = 120);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_BASE_JSON_H_
