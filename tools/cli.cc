#include "tools/cli.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace hotpage {

bool ParsedFlags::Has(absl::string_view name) const {
  return values_.find(name) != values_.end();
}

std::optional<std::string> ParsedFlags::Get(absl::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> ParsedFlags::GetAll(absl::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return {};
  return it->second;
}

bool AsksForVersion(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "--") return false;
    if (a == "--version") return true;
  }
  return false;
}

absl::StatusOr<int64_t> FlagInt(const ParsedFlags& flags,
                                absl::string_view name, int64_t default_value,
                                int64_t lo, int64_t hi) {
  std::optional<std::string> v = flags.Get(name);
  if (!v) return default_value;
  int64_t out = 0;
  if (!absl::SimpleAtoi(*v, &out) || out < lo || out > hi) {
    return absl::InvalidArgumentError(
        absl::StrCat("option '--", name, "' wants an integer from ", lo, " to ",
                     hi, ", got '", *v, "'"));
  }
  return out;
}

absl::StatusOr<double> FlagDouble(const ParsedFlags& flags,
                                  absl::string_view name, double default_value,
                                  double lo, double hi) {
  std::optional<std::string> v = flags.Get(name);
  if (!v) return default_value;
  double out = 0;
  if (!absl::SimpleAtod(*v, &out) || !(out >= lo && out <= hi)) {
    return absl::InvalidArgumentError(
        absl::StrCat("option '--", name, "' wants a number from ", lo, " to ",
                     hi, ", got '", *v, "'"));
  }
  return out;
}

absl::StatusOr<ParsedFlags> ParseFlags(const std::vector<std::string>& args,
                                       const std::vector<FlagSpec>& specs) {
  ParsedFlags out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      out.positional_.insert(out.positional_.end(), args.begin() + i + 1,
                             args.end());
      break;
    }
    if (a == "-h" || a == "--help") {
      out.values_["help"].push_back("");
      continue;
    }
    std::string name;
    std::optional<std::string> value;
    auto spec = specs.end();
    if (a.size() == 2 && a[0] == '-' && a[1] != '-') {
      spec = std::find_if(specs.begin(), specs.end(), [&](const FlagSpec& s) {
        return s.short_name == a[1];
      });
      if (spec == specs.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("unknown option '", a, "'"));
      }
      name = spec->name;
    } else if (!absl::StartsWith(a, "--") || a.size() == 2) {
      if (absl::StartsWith(a, "-") && a.size() > 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("unknown option '", a, "'"));
      }
      out.positional_.push_back(a);
      continue;
    } else {
      name = a.substr(2);
      if (size_t eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
      }
      spec = std::find_if(specs.begin(), specs.end(),
                          [&](const FlagSpec& s) { return s.name == name; });
    }
    if (spec == specs.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown option '--", name, "'"));
    }
    if (spec->value_name.empty()) {
      if (value) {
        return absl::InvalidArgumentError(
            absl::StrCat("option '--", name, "' takes no value"));
      }
      value = "";
    } else if (!value) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "option '--", name, "' needs a value (", spec->value_name, ")"));
      }
      value = args[++i];
    }
    if (out.values_.count(name) && !spec->repeatable) {
      return absl::InvalidArgumentError(
          absl::StrCat("option '--", name, "' given twice"));
    }
    out.values_[name].push_back(*value);
  }
  return out;
}

std::string FormatUsage(absl::string_view command, absl::string_view synopsis,
                        absl::string_view description,
                        const std::vector<FlagSpec>& specs) {
  std::string out = absl::StrCat("Usage: hotpage ", command, " ", synopsis,
                                 "\n\n", description, "\n\nOptions:\n");
  std::vector<std::pair<std::string, std::string>> lines;
  size_t width = 0;
  for (const FlagSpec& s : specs) {
    std::string left = absl::StrCat(
        s.short_name ? absl::StrCat("-", std::string(1, s.short_name), ", ")
                     : "",
        "--", s.name, s.value_name.empty() ? "" : " ", s.value_name,
        s.repeatable ? " ..." : "");
    width = std::max(width, left.size());
    lines.emplace_back(left, s.help);
  }
  lines.emplace_back("-h, --help", "show this help");
  width = std::max<size_t>(width, 10);
  for (auto& [left, help] : lines) {
    absl::StrAppend(&out, "  ", left, std::string(width - left.size() + 2, ' '),
                    help, "\n");
  }
  return out;
}

}  // namespace hotpage
