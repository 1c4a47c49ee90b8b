// CheckXml: a strict, minimal XML 1.0 well-formedness checker for tests of
// generated documents (the SVG picture), with no dependency beyond abseil.
//
// It accepts what a browser's XML parser accepts for documents without a
// DTD: valid UTF-8 of XML Chars; an optional XML declaration, comments and
// processing instructions around exactly one root element; properly nested
// elements; unique, quoted attributes; no raw '<' in text or attribute
// values; '&' only in the five predefined entities and numeric character
// references to XML Chars; CDATA sections; no "]]>" in text. It rejects a
// DOCTYPE (generated SVG needs none) and, as a simplification, names with
// characters outside ASCII letters, digits and "_:.-".
//
// On success it returns every element in document order with its decoded
// attributes and its decoded direct text, so tests can look for labels.

#ifndef HOTPAGE_TOOLS_SIMULATE_XML_CHECK_H_
#define HOTPAGE_TOOLS_SIMULATE_XML_CHECK_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hotpage::simulate {

struct XmlElement {
  std::string name;
  std::map<std::string, std::string> attributes;  // decoded values
  std::string text;  // decoded character data directly inside, concatenated
  int depth = 0;     // root: 0
};

// The elements, or InvalidArgument naming the byte offset and the problem.
absl::StatusOr<std::vector<XmlElement>> CheckXml(absl::string_view doc);

}  // namespace hotpage::simulate

#endif  // HOTPAGE_TOOLS_SIMULATE_XML_CHECK_H_
