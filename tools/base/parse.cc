#include "tools/base/parse.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace hotpage {
namespace {

std::string Quote(absl::string_view s) {
  constexpr size_t kMax = 40;
  std::string out;
  for (char c : s.substr(0, kMax)) {
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(c);
    } else {
      absl::StrAppend(
          &out, "\\x",
          absl::Hex(static_cast<unsigned char>(c), absl::kZeroPad2));
    }
  }
  if (s.size() > kMax) out += "...";
  return absl::StrCat("\"", out, "\"");
}

std::optional<int> ParseId(absl::string_view s) {
  if (s.empty() || s.size() > 10) return std::nullopt;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  int64_t v = 0;
  if (!absl::SimpleAtoi(s, &v) || v < 0 || v > kMaxListId) return std::nullopt;
  return static_cast<int>(v);
}

}  // namespace

absl::StatusOr<std::vector<int>> ParseKernelList(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  std::vector<int> out;
  if (text.empty()) return out;
  for (absl::string_view token : absl::StrSplit(text, ',')) {
    token = absl::StripAsciiWhitespace(token);
    size_t dash = token.find('-');
    std::optional<int> lo, hi;
    if (dash == absl::string_view::npos) {
      lo = hi = ParseId(token);
    } else {
      lo = ParseId(token.substr(0, dash));
      hi = ParseId(token.substr(dash + 1));
    }
    if (!lo || !hi || *lo > *hi) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad list element ", Quote(token), " in ", Quote(text),
                       " (expected N or N-M with N <= M <= ", kMaxListId, ")"));
    }
    for (int v = *lo; v <= *hi; ++v) out.push_back(v);
    if (out.size() > static_cast<size_t>(kMaxListId) + 1) {
      // Overlapping ranges could otherwise repeat the same ids forever.
      std::sort(out.begin(), out.end());
      out.erase(std::unique(out.begin(), out.end()), out.end());
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string FormatKernelList(const std::vector<int>& values) {
  std::string out;
  size_t i = 0;
  while (i < values.size()) {
    size_t j = i;
    while (j + 1 < values.size() && values[j + 1] == values[j] + 1) ++j;
    if (!out.empty()) out += ",";
    if (j == i) {
      absl::StrAppend(&out, values[i]);
    } else {
      absl::StrAppend(&out, values[i], "-", values[j]);
    }
    i = j + 1;
  }
  return out;
}

std::optional<int64_t> ParseInt(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  int64_t v = 0;
  if (text.empty() || !absl::SimpleAtoi(text, &v)) return std::nullopt;
  // SimpleAtoi accepts a leading '+'; the kernel never writes one.
  if (text[0] == '+') return std::nullopt;
  return v;
}

std::optional<std::vector<int64_t>> ParseIntRow(absl::string_view text,
                                                size_t max_count) {
  std::vector<int64_t> out;
  for (absl::string_view tok :
       absl::StrSplit(text, absl::ByAnyChar(" \t\n"), absl::SkipEmpty())) {
    std::optional<int64_t> v = ParseInt(tok);
    if (!v || out.size() >= max_count) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

std::optional<std::string> ParseBracketChoice(absl::string_view text) {
  size_t open = text.find('[');
  if (open == absl::string_view::npos) return std::nullopt;
  size_t close = text.find(']', open);
  if (close == absl::string_view::npos || close == open + 1)
    return std::nullopt;
  absl::string_view word = text.substr(open + 1, close - open - 1);
  for (char c : word) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' &&
        c != '-' && c != '+') {
      return std::nullopt;
    }
  }
  return std::string(word);
}

std::optional<uint64_t> ParseNodeMeminfo(absl::string_view text,
                                         absl::string_view key) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    // "Node 0 MemTotal:        1014256 kB"
    std::vector<absl::string_view> f =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (f.size() < 4 || f[0] != "Node") continue;
    if (f[2].size() != key.size() + 1 || f[2].back() != ':' ||
        f[2].substr(0, key.size()) != key) {
      continue;
    }
    std::optional<int64_t> v = ParseInt(f[3]);
    if (!v || *v < 0) return std::nullopt;
    uint64_t mult = 1;
    if (f.size() >= 5) {
      if (f[4] == "kB") {
        mult = 1024;
      } else {
        return std::nullopt;
      }
    }
    uint64_t value = static_cast<uint64_t>(*v);
    if (value > UINT64_MAX / mult) return std::nullopt;
    return value * mult;
  }
  return std::nullopt;
}

std::optional<std::pair<int, int>> ParseKernelRelease(absl::string_view s) {
  int v[2] = {0, 0};
  for (int k = 0; k < 2; ++k) {
    size_t digits = 0;
    while (digits < s.size() && s[digits] >= '0' && s[digits] <= '9' &&
           digits < 6) {
      v[k] = v[k] * 10 + (s[digits] - '0');
      ++digits;
    }
    if (digits == 0) return std::nullopt;
    s.remove_prefix(digits);
    if (k == 0) {
      if (s.empty() || s[0] != '.') return std::nullopt;
      s.remove_prefix(1);
    }
  }
  // Linux is at 6.x; a four- or five-digit major is not a release.
  if (v[0] > 1000 || v[1] > 1000) return std::nullopt;
  return std::make_pair(v[0], v[1]);
}

}  // namespace hotpage
