#include "tools/base/prom_text.h"

#include <charconv>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace hotpage {
namespace {

void AppendLabels(
    std::string* out,
    std::initializer_list<std::pair<absl::string_view, absl::string_view>>
        labels) {
  for (const auto& [name, value] : labels) {
    if (!out->empty()) out->push_back(',');
    absl::StrAppend(out, name, "=\"", PromEscapeLabelValue(value), "\"");
  }
}

std::string EscapeHelp(absl::string_view help) {
  std::string out;
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string PromEscapeLabelValue(absl::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string PromLabels(
    std::initializer_list<std::pair<absl::string_view, absl::string_view>>
        labels) {
  return PromAddLabels("", labels);
}

std::string PromAddLabels(
    absl::string_view labels,
    std::initializer_list<std::pair<absl::string_view, absl::string_view>>
        more) {
  // The inside of `labels`, without its braces.
  std::string inner;
  if (labels.size() >= 2) {
    inner = std::string(labels.substr(1, labels.size() - 2));
  }
  AppendLabels(&inner, more);
  if (inner.empty()) return "";
  return absl::StrCat("{", inner, "}");
}

std::string PromValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  // Shortest round-trip form: 0.25 -> "0.25", 1e21 -> "1e+21".
  char buf[64];
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

PromText::PromText(std::vector<Family> families)
    : families_(std::move(families)), bodies_(families_.size()) {}

size_t PromText::Declare(const Family& family) {
  families_.push_back(family);
  bodies_.emplace_back();
  return families_.size() - 1;
}

void PromText::Add(size_t family, absl::string_view labels, uint64_t value) {
  absl::StrAppend(&bodies_[family], families_[family].name, labels, " ", value,
                  "\n");
}

void PromText::Add(size_t family, absl::string_view labels, double value) {
  absl::StrAppend(&bodies_[family], families_[family].name, labels, " ",
                  PromValue(value), "\n");
}

void PromText::AddSuffixed(size_t family, absl::string_view suffix,
                           absl::string_view labels, absl::string_view value) {
  absl::StrAppend(&bodies_[family], families_[family].name, suffix, labels, " ",
                  value, "\n");
}

std::string PromText::Text() const {
  std::string out;
  for (size_t i = 0; i < families_.size(); ++i) {
    const Family& f = families_[i];
    absl::StrAppend(&out, "# HELP ", f.name, " ", EscapeHelp(f.help),
                    "\n# TYPE ", f.name, " ", f.type, "\n", bodies_[i]);
  }
  return out;
}

}  // namespace hotpage
