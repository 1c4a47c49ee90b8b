#include "tools/cli.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace hotpage {

bool ParsedFlags::Has(absl::string_view name) const {
  return values_.find(name) != values_.end();
}

std::optional<std::string> ParsedFlags::Get(absl::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<ParsedFlags> ParseFlags(const std::vector<std::string>& args,
                                       const std::vector<FlagSpec>& specs) {
  ParsedFlags out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      out.positional_.insert(out.positional_.end(), args.begin() + i + 1, args.end());
      break;
    }
    if (a == "-h" || a == "--help") {
      out.values_["help"] = "";
      continue;
    }
    if (!absl::StartsWith(a, "--") || a.size() == 2) {
      if (absl::StartsWith(a, "-") && a.size() > 1) {
        return absl::InvalidArgumentError(absl::StrCat("unknown option '", a, "'"));
      }
      out.positional_.push_back(a);
      continue;
    }
    std::string name = a.substr(2);
    std::optional<std::string> value;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    auto spec = std::find_if(specs.begin(), specs.end(),
                             [&](const FlagSpec& s) { return s.name == name; });
    if (spec == specs.end()) {
      return absl::InvalidArgumentError(absl::StrCat("unknown option '--", name, "'"));
    }
    if (spec->value_name.empty()) {
      if (value) {
        return absl::InvalidArgumentError(
            absl::StrCat("option '--", name, "' takes no value"));
      }
      value = "";
    } else if (!value) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("option '--", name, "' needs a value (", spec->value_name, ")"));
      }
      value = args[++i];
    }
    if (out.values_.count(name)) {
      return absl::InvalidArgumentError(absl::StrCat("option '--", name, "' given twice"));
    }
    out.values_[name] = *value;
  }
  return out;
}

std::string FormatUsage(absl::string_view command, absl::string_view synopsis,
                        absl::string_view description, const std::vector<FlagSpec>& specs) {
  std::string out = absl::StrCat("Usage: hotpage ", command, " ", synopsis, "\n\n", description,
                                 "\n\nOptions:\n");
  std::vector<std::pair<std::string, std::string>> lines;
  size_t width = 0;
  for (const FlagSpec& s : specs) {
    std::string left = absl::StrCat("--", s.name, s.value_name.empty() ? "" : " ", s.value_name);
    width = std::max(width, left.size());
    lines.emplace_back(left, s.help);
  }
  lines.emplace_back("-h, --help", "show this help");
  width = std::max<size_t>(width, 10);
  for (auto& [left, help] : lines) {
    absl::StrAppend(&out, "  ", left, std::string(width - left.size() + 2, ' '), help, "\n");
  }
  return out;
}

}  // namespace hotpage
