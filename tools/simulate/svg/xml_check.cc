#include "tools/simulate/svg/xml_check.h"

#include <expat.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace hotpage::simulate {
namespace {

constexpr int kMaxDepth = 256;

// Collects elements from expat's callbacks; refuses what expat accepts but
// this checker does not (a DOCTYPE, deep nesting, non-ASCII names).
class Collector {
 public:
  explicit Collector(absl::string_view doc) : doc_(doc) {
    // The document is UTF-8 whatever its declaration says.
    parser_ = XML_ParserCreate("UTF-8");
    XML_SetUserData(parser_, this);
    XML_SetElementHandler(parser_, &Collector::Start, &Collector::End);
    XML_SetCharacterDataHandler(parser_, &Collector::Text);
    XML_SetStartDoctypeDeclHandler(parser_, &Collector::Doctype);
  }
  ~Collector() { XML_ParserFree(parser_); }
  Collector(const Collector&) = delete;
  Collector& operator=(const Collector&) = delete;

  absl::StatusOr<std::vector<XmlElement>> Run() {
    // Feed in pieces that fit expat's int length; is_final on the last.
    const char* p = doc_.data();
    size_t left = doc_.size();
    do {
      const int n = static_cast<int>(std::min<size_t>(left, 1 << 30));
      left -= static_cast<size_t>(n);
      if (XML_Parse(parser_, p, n, left == 0) != XML_STATUS_OK) {
        return Error();
      }
      p += n;
    } while (left > 0);
    return std::move(elements_);
  }

 private:
  static void Start(void* data, const XML_Char* name, const XML_Char** attrs) {
    auto* self = static_cast<Collector*>(data);
    if (!self->AsciiName(name)) return;
    if (static_cast<int>(self->open_.size()) > kMaxDepth) {
      self->Stop(absl::StrCat("elements nested deeper than ", kMaxDepth));
      return;
    }
    XmlElement e;
    e.name = name;
    e.depth = static_cast<int>(self->open_.size());
    for (const XML_Char** a = attrs; *a != nullptr; a += 2) {
      if (!self->AsciiName(a[0])) return;
      e.attributes.emplace(a[0], a[1]);  // expat rejects duplicates
    }
    self->open_.push_back(self->elements_.size());
    self->elements_.push_back(std::move(e));
  }

  static void End(void* data, const XML_Char* /*name*/) {
    auto* self = static_cast<Collector*>(data);
    // After Stop() expat may still end the element whose Start() refused it
    // (an empty element's start and end come from one token): nothing was
    // pushed for it.
    if (!self->error_.empty() || self->open_.empty()) return;
    self->open_.pop_back();
  }

  static void Text(void* data, const XML_Char* s, int len) {
    auto* self = static_cast<Collector*>(data);
    if (self->open_.empty()) return;  // whitespace between prolog items
    self->elements_[self->open_.back()].text.append(s,
                                                    static_cast<size_t>(len));
  }

  static void Doctype(void* data, const XML_Char* /*name*/,
                      const XML_Char* /*sysid*/, const XML_Char* /*pubid*/,
                      int /*has_internal_subset*/) {
    static_cast<Collector*>(data)->Stop("DOCTYPE is not supported");
  }

  // Names outside ASCII letters, digits and "_:.-": XML allows them, this
  // checker does not (generated SVG never has them).
  bool AsciiName(const char* name) {
    for (const char* c = name; *c != '\0'; ++c) {
      if (static_cast<unsigned char>(*c) >= 0x80) {
        Stop(absl::StrCat("name '", name,
                          "' has characters outside ASCII (not supported)"));
        return false;
      }
    }
    return true;
  }

  void Stop(std::string what) {
    if (!error_.empty()) return;
    error_ = std::move(what);
    XML_StopParser(parser_, XML_FALSE);
  }

  // "XML offset 8 (line 1, column 9): mismatched tag: end tag 'a' closes 'b'"
  absl::Status Error() const {
    // -1 when nothing was parsed (an empty document).
    const XML_Index offset =
        std::max<XML_Index>(XML_GetCurrentByteIndex(parser_), 0);
    std::string what = error_;
    const XML_Error code = XML_GetErrorCode(parser_);
    if (what.empty()) what = XML_ErrorString(code);
    if (code == XML_ERROR_TAG_MISMATCH && !open_.empty()) {
      // expat stops at the end tag's name (after "</"): name it and the
      // element it would close.
      const size_t at = std::min(static_cast<size_t>(offset), doc_.size());
      size_t name_at = std::string::npos;
      if (absl::StartsWith(doc_.substr(at), "</")) {
        name_at = at + 2;
      } else if (at >= 2 && doc_.substr(at - 2, 2) == "</") {
        name_at = at;
      }
      if (name_at != std::string::npos) {
        const absl::string_view rest = doc_.substr(name_at);
        const size_t end = rest.find_first_of(" \t\r\n>");
        absl::StrAppend(&what, ": end tag '", rest.substr(0, end), "' closes '",
                        elements_[open_.back()].name, "'");
      }
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "XML offset ", offset, " (line ", XML_GetCurrentLineNumber(parser_),
        ", column ", XML_GetCurrentColumnNumber(parser_) + 1, "): ", what));
  }

  absl::string_view doc_;
  XML_Parser parser_;
  std::vector<XmlElement> elements_;
  std::vector<size_t> open_;  // indices of the open elements, innermost last
  std::string error_;         // ours, when a handler stopped the parser
};

}  // namespace

absl::StatusOr<std::vector<XmlElement>> CheckXml(absl::string_view doc) {
  Collector c(doc);
  return c.Run();
}

}  // namespace hotpage::simulate
