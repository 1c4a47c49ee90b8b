#include "tools/simulate/svg/xml_check.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace hotpage::simulate {
namespace {

bool IsXmlChar(uint32_t cp) {
  return cp == 0x9 || cp == 0xa || cp == 0xd || (cp >= 0x20 && cp <= 0xd7ff) ||
         (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff);
}

void AppendUtf8(std::string* out, uint32_t cp) {
  if (cp < 0x80) {
    *out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    *out += static_cast<char>(0xc0 | (cp >> 6));
    *out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    *out += static_cast<char>(0xe0 | (cp >> 12));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    *out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    *out += static_cast<char>(0xf0 | (cp >> 18));
    *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    *out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

bool NameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         c == ':';
}
bool NameChar(char c) {
  return NameStart(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
}
bool Space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

class Parser {
 public:
  explicit Parser(absl::string_view doc) : s_(doc) {}

  absl::StatusOr<std::vector<XmlElement>> Run() {
    if (!CheckEncoding()) return Error(error_);
    SkipMisc(/*allow_decl=*/true);
    if (!error_.empty()) return Error(error_);
    if (At("<!DOCTYPE")) return Error("DOCTYPE is not supported");
    if (!Peek('<')) return Error("expected the root element");
    if (!Element(0)) return Error(error_);
    SkipMisc(/*allow_decl=*/false);
    if (!error_.empty()) return Error(error_);
    if (pos_ != s_.size()) return Error("content after the root element");
    return std::move(elements_);
  }

 private:
  absl::Status Error(const std::string& what) {
    return absl::InvalidArgumentError(
        absl::StrCat("XML offset ", pos_, ": ", what));
  }
  bool Fail(std::string what) {
    if (error_.empty()) error_ = std::move(what);
    return false;
  }
  bool Peek(char c) const { return pos_ < s_.size() && s_[pos_] == c; }
  bool At(absl::string_view lit) const {
    return s_.substr(pos_, lit.size()) == lit;
  }
  void SkipSpace() {
    while (pos_ < s_.size() && Space(s_[pos_])) ++pos_;
  }

  // The whole document: valid UTF-8 of XML Chars.
  bool CheckEncoding() {
    for (size_t i = 0; i < s_.size();) {
      unsigned char c = s_[i];
      uint32_t cp;
      size_t len;
      if (c < 0x80) {
        cp = c, len = 1;
      } else if ((c & 0xe0) == 0xc0) {
        cp = c & 0x1f, len = 2;
      } else if ((c & 0xf0) == 0xe0) {
        cp = c & 0x0f, len = 3;
      } else if ((c & 0xf8) == 0xf0) {
        cp = c & 0x07, len = 4;
      } else {
        pos_ = i;
        return Fail("invalid UTF-8 lead byte");
      }
      if (i + len > s_.size()) {
        pos_ = i;
        return Fail("truncated UTF-8 sequence");
      }
      for (size_t k = 1; k < len; ++k) {
        unsigned char cc = s_[i + k];
        if ((cc & 0xc0) != 0x80) {
          pos_ = i;
          return Fail("invalid UTF-8 continuation byte");
        }
        cp = (cp << 6) | (cc & 0x3f);
      }
      static const uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
      if (cp < kMin[len]) {
        pos_ = i;
        return Fail("overlong UTF-8 sequence");
      }
      if (!IsXmlChar(cp)) {
        pos_ = i;
        return Fail(absl::StrCat("character U+", absl::Hex(cp),
                                 " is not allowed in XML"));
      }
      i += len;
    }
    return true;
  }

  bool Name(std::string* out) {
    if (pos_ >= s_.size() || !NameStart(s_[pos_]))
      return Fail("expected a name");
    size_t start = pos_;
    while (pos_ < s_.size() && NameChar(s_[pos_])) ++pos_;
    *out = std::string(s_.substr(start, pos_ - start));
    return true;
  }

  // At '&': appends the referenced character.
  bool Reference(std::string* out) {
    size_t end = s_.find(';', pos_);
    if (end == absl::string_view::npos || end - pos_ > 12)
      return Fail("'&' starts no reference");
    absl::string_view ref = s_.substr(pos_ + 1, end - pos_ - 1);
    if (ref == "lt") {
      *out += '<';
    } else if (ref == "gt") {
      *out += '>';
    } else if (ref == "amp") {
      *out += '&';
    } else if (ref == "quot") {
      *out += '"';
    } else if (ref == "apos") {
      *out += '\'';
    } else if (!ref.empty() && ref[0] == '#') {
      bool hex = ref.size() > 1 && ref[1] == 'x';
      absl::string_view digits = ref.substr(hex ? 2 : 1);
      if (digits.empty()) return Fail("empty character reference");
      uint32_t cp = 0;
      for (char c : digits) {
        int v;
        if (c >= '0' && c <= '9') {
          v = c - '0';
        } else if (hex && c >= 'a' && c <= 'f') {
          v = c - 'a' + 10;
        } else if (hex && c >= 'A' && c <= 'F') {
          v = c - 'A' + 10;
        } else {
          return Fail("bad digit in character reference");
        }
        cp = cp * (hex ? 16 : 10) + v;
        if (cp > 0x10ffff) return Fail("character reference out of range");
      }
      if (!IsXmlChar(cp))
        return Fail("character reference to a character XML forbids");
      AppendUtf8(out, cp);
    } else {
      return Fail(absl::StrCat("unknown entity '&", std::string(ref), ";'"));
    }
    pos_ = end + 1;
    return true;
  }

  bool Comment() {  // at "<!--"
    size_t end = s_.find("--", pos_ + 4);
    if (end == absl::string_view::npos) return Fail("unterminated comment");
    if (end + 2 >= s_.size() || s_[end + 2] != '>') {
      pos_ = end;
      return Fail("'--' inside a comment");
    }
    pos_ = end + 3;
    return true;
  }

  bool Pi() {  // at "<?"
    pos_ += 2;
    std::string target;
    if (!Name(&target)) return false;
    size_t end = s_.find("?>", pos_);
    if (end == absl::string_view::npos)
      return Fail("unterminated processing instruction");
    pos_ = end + 2;
    return true;
  }

  // Whitespace, comments and PIs outside the root; an XML declaration only
  // at the very start.
  void SkipMisc(bool allow_decl) {
    if (allow_decl && At("<?xml") && s_.size() > 5 && Space(s_[5])) {
      if (!Pi()) return;
    }
    for (;;) {
      SkipSpace();
      if (At("<!--")) {
        if (!Comment()) return;
      } else if (At("<?")) {
        if (At("<?xml") && pos_ + 5 < s_.size() &&
            (Space(s_[pos_ + 5]) || s_[pos_ + 5] == '?')) {
          Fail("XML declaration not at the start");
          return;
        }
        if (!Pi()) return;
      } else {
        return;
      }
    }
  }

  bool AttributeValue(std::string* out) {
    if (!Peek('"') && !Peek('\'')) return Fail("attribute value not quoted");
    char q = s_[pos_++];
    for (;;) {
      if (pos_ >= s_.size()) return Fail("unterminated attribute value");
      char c = s_[pos_];
      if (c == q) {
        ++pos_;
        return true;
      }
      if (c == '<') return Fail("'<' in an attribute value");
      if (c == '&') {
        if (!Reference(out)) return false;
        continue;
      }
      // Attribute-value normalisation: whitespace characters become spaces.
      *out += Space(c) ? ' ' : c;
      ++pos_;
    }
  }

  bool Element(int depth) {  // at '<'
    if (depth > 256) return Fail("elements nested deeper than 256");
    ++pos_;
    XmlElement e;
    e.depth = depth;
    if (!Name(&e.name)) return false;
    size_t index = elements_.size();
    for (;;) {
      bool had_space = pos_ < s_.size() && Space(s_[pos_]);
      SkipSpace();
      if (At("/>")) {
        pos_ += 2;
        elements_.push_back(std::move(e));
        return true;
      }
      if (Peek('>')) {
        ++pos_;
        break;
      }
      if (pos_ >= s_.size()) return Fail("unterminated start tag");
      if (!had_space) return Fail("attributes must be separated by whitespace");
      std::string name, value;
      if (!Name(&name)) return false;
      SkipSpace();
      if (!Peek('='))
        return Fail(absl::StrCat("attribute '", name, "' has no '='"));
      ++pos_;
      SkipSpace();
      if (!AttributeValue(&value)) return false;
      if (!e.attributes.emplace(name, value).second) {
        return Fail(absl::StrCat("duplicate attribute '", name, "'"));
      }
    }
    elements_.push_back(std::move(e));
    // Content.
    for (;;) {
      if (pos_ >= s_.size()) {
        return Fail(absl::StrCat("element '", elements_[index].name,
                                 "' is not closed"));
      }
      char c = s_[pos_];
      if (c == '<') {
        if (At("</")) {
          pos_ += 2;
          std::string name;
          if (!Name(&name)) return false;
          if (name != elements_[index].name) {
            return Fail(absl::StrCat("end tag '", name, "' closes '",
                                     elements_[index].name, "'"));
          }
          SkipSpace();
          if (!Peek('>')) return Fail("malformed end tag");
          ++pos_;
          return true;
        }
        if (At("<!--")) {
          if (!Comment()) return false;
        } else if (At("<![CDATA[")) {
          size_t end = s_.find("]]>", pos_ + 9);
          if (end == absl::string_view::npos)
            return Fail("unterminated CDATA section");
          absl::StrAppend(&elements_[index].text,
                          s_.substr(pos_ + 9, end - pos_ - 9));
          pos_ = end + 3;
        } else if (At("<?")) {
          if (!Pi()) return false;
        } else if (At("<!")) {
          return Fail("markup declaration inside an element");
        } else if (!Element(depth + 1)) {
          return false;
        }
      } else if (c == '&') {
        if (!Reference(&elements_[index].text)) return false;
      } else {
        if (At("]]>")) return Fail("']]>' in character data");
        elements_[index].text += c;
        ++pos_;
      }
    }
  }

  absl::string_view s_;
  size_t pos_ = 0;
  std::string error_;
  std::vector<XmlElement> elements_;
};

}  // namespace

absl::StatusOr<std::vector<XmlElement>> CheckXml(absl::string_view doc) {
  return Parser(doc).Run();
}

}  // namespace hotpage::simulate
