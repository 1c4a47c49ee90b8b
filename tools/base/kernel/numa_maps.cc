#include "tools/base/kernel/numa_maps.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tools/base/parse.h"

namespace hotpage {
namespace {

std::string Quoted(absl::string_view s) {
  std::string out(s.substr(0, 80));
  for (char& c : out) {
    if (c < 0x20 || c >= 0x7f) c = '?';
  }
  return absl::StrCat("\"", out, s.size() > 80 ? "..." : "", "\"");
}

bool ParseHex(absl::string_view s, uint64_t* v) {
  if (s.empty() || s.size() > 16) return false;
  for (char c : s) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return absl::SimpleHexAtoi(s, v);
}

bool ParseDec(absl::string_view s, uint64_t* v) {
  if (s.empty() || s.size() > 20) return false;
  for (char c : s) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return absl::SimpleAtoi(s, v);
}

}  // namespace

const char* MempolicyModeName(MempolicyMode mode) {
  switch (mode) {
    case MempolicyMode::kDefault:
      return "default";
    case MempolicyMode::kPreferred:
      return "prefer";
    case MempolicyMode::kBind:
      return "bind";
    case MempolicyMode::kInterleave:
      return "interleave";
    case MempolicyMode::kWeightedInterleave:
      return "weighted interleave";
    case MempolicyMode::kLocal:
      return "local";
    case MempolicyMode::kPreferredMany:
      return "prefer (many)";
  }
  return "?";
}

bool NumaMapsRange::Forbids(int node) const {
  // Only a bind policy is a hard constraint; preferred and interleave say
  // where to allocate, not where pages may live.
  if (mode != MempolicyMode::kBind) return false;
  return std::find(nodes.begin(), nodes.end(), node) == nodes.end();
}

absl::Status ParsePolicy(absl::string_view policy, NumaMapsRange* out) {
  absl::string_view mode = policy;
  absl::string_view flags, list;
  bool has_list = false;
  if (size_t colon = policy.find(':'); colon != absl::string_view::npos) {
    mode = policy.substr(0, colon);
    list = policy.substr(colon + 1);
    has_list = true;
  }
  if (size_t eq = mode.find('='); eq != absl::string_view::npos) {
    flags = mode.substr(eq + 1);
    mode = mode.substr(0, eq);
  }
  if (mode == "default")
    out->mode = MempolicyMode::kDefault;
  else if (mode == "prefer")
    out->mode = MempolicyMode::kPreferred;
  else if (mode == "bind")
    out->mode = MempolicyMode::kBind;
  else if (mode == "interleave")
    out->mode = MempolicyMode::kInterleave;
  else if (mode == "weighted interleave")
    out->mode = MempolicyMode::kWeightedInterleave;
  else if (mode == "local")
    out->mode = MempolicyMode::kLocal;
  else if (mode == "prefer (many)")
    out->mode = MempolicyMode::kPreferredMany;
  else
    return absl::InvalidArgumentError(
        absl::StrCat("unknown memory policy mode ", Quoted(mode)));

  for (absl::string_view f : absl::StrSplit(flags, '|', absl::SkipEmpty())) {
    if (f == "static")
      out->static_nodes = true;
    else if (f == "relative")
      out->relative_nodes = true;
    else if (f == "balancing")
      out->numa_balancing = true;
    else
      return absl::InvalidArgumentError(
          absl::StrCat("unknown policy flag ", Quoted(f)));
  }
  out->nodes.clear();
  if (has_list) {
    absl::StatusOr<std::vector<int>> nodes = ParseKernelList(list);
    if (!nodes.ok()) return nodes.status();
    out->nodes = std::move(*nodes);
  }
  const bool needs_nodes = out->mode == MempolicyMode::kBind ||
                           out->mode == MempolicyMode::kInterleave ||
                           out->mode == MempolicyMode::kWeightedInterleave ||
                           out->mode == MempolicyMode::kPreferredMany ||
                           out->mode == MempolicyMode::kPreferred;
  if (needs_nodes && out->nodes.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("policy ", Quoted(policy), " has no nodes"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<NumaMapsRange>> ParseNumaMaps(
    absl::string_view text) {
  std::vector<NumaMapsRange> out;
  size_t lineno = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++lineno;
    if (lineno > kMaxNumaMapsLines) {
      return absl::ResourceExhaustedError(
          absl::StrCat("numa_maps: more than ", kMaxNumaMapsLines, " lines"));
    }
    line = absl::StripTrailingAsciiWhitespace(line);
    if (line.empty()) continue;
    auto bad = [&](absl::string_view what) {
      return absl::InvalidArgumentError(absl::StrCat(
          "numa_maps line ", lineno, ": ", what, " in ", Quoted(line)));
    };
    NumaMapsRange r;
    size_t sp = line.find(' ');
    if (sp == absl::string_view::npos ||
        !ParseHex(line.substr(0, sp), &r.start)) {
      return bad("no start address");
    }
    absl::string_view rest = line.substr(sp + 1);
    // The policy may contain spaces ("prefer (many)", "weighted interleave"):
    // it ends at the first space after its mode name is complete, i.e. at
    // the first token that looks like key=value or a known flag.
    absl::string_view policy = rest;
    size_t policy_end = rest.size();
    for (absl::string_view prefix : {"prefer (many)", "weighted interleave"}) {
      if (absl::StartsWith(rest, prefix)) {
        size_t next = rest.find(' ', prefix.size());
        policy_end = next == absl::string_view::npos ? rest.size() : next;
        goto found;
      }
    }
    policy_end = rest.find(' ');
    if (policy_end == absl::string_view::npos) policy_end = rest.size();
  found:
    policy = rest.substr(0, policy_end);
    if (absl::Status s = ParsePolicy(policy, &r); !s.ok())
      return bad(s.message());
    absl::string_view tokens =
        policy_end < rest.size() ? rest.substr(policy_end + 1) : "";
    for (absl::string_view tok :
         absl::StrSplit(tokens, ' ', absl::SkipEmpty())) {
      size_t eq = tok.find('=');
      absl::string_view key = tok.substr(0, eq);
      absl::string_view value =
          eq == absl::string_view::npos ? "" : tok.substr(eq + 1);
      uint64_t v = 0;
      if (key.size() > 1 && key[0] == 'N' &&
          absl::ascii_isdigit(static_cast<unsigned char>(key[1]))) {
        uint64_t node = 0;
        if (!ParseDec(key.substr(1), &node) ||
            node > static_cast<uint64_t>(kMaxListId) || !ParseDec(value, &v)) {
          return bad(absl::StrCat("bad per-node count ", Quoted(tok)));
        }
        r.pages_on_node.emplace_back(static_cast<int>(node), v);
      } else if (key == "kernelpagesize_kB") {
        if (!ParseDec(value, &v) || v == 0 || v > (uint64_t{1} << 30)) {
          return bad(absl::StrCat("bad page size ", Quoted(tok)));
        }
        r.page_size = v * 1024;
      } else if (key == "anon") {
        r.anon = true;
      } else if (key == "file") {
        r.file = std::string(value.substr(0, 4096));
      } else if (tok == "heap") {
        r.heap = true;
      } else if (tok == "stack") {
        r.stack = true;
      } else if (tok == "huge") {
        r.huge = true;
      }
      // dirty=, mapped=, mapmax=, swapcache=, active=, writeback=,
      // unevictable= and future keys: not needed; ignored.
    }
    out.push_back(std::move(r));
  }
  return out;
}

absl::StatusOr<std::vector<MapsRange>> ParseProcMaps(absl::string_view text) {
  std::vector<MapsRange> out;
  size_t lineno = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++lineno;
    if (lineno > kMaxNumaMapsLines)
      return absl::ResourceExhaustedError("maps: too many lines");
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    std::vector<absl::string_view> f =
        absl::StrSplit(line, absl::MaxSplits(' ', 2));
    size_t dash = f[0].find('-');
    MapsRange m;
    if (f.size() < 2 || dash == absl::string_view::npos ||
        !ParseHex(f[0].substr(0, dash), &m.start) ||
        !ParseHex(f[0].substr(dash + 1), &m.end) || m.end <= m.start ||
        f[1].size() != 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("maps line ", lineno, ": malformed ", Quoted(line)));
    }
    m.perms = std::string(f[1]);
    out.push_back(std::move(m));
  }
  return out;
}

absl::StatusOr<std::vector<SmapsVma>> ParseSmaps(absl::string_view text) {
  std::vector<SmapsVma> out;
  size_t lineno = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++lineno;
    if (lineno > 32 * kMaxNumaMapsLines)
      return absl::ResourceExhaustedError("smaps: too many lines");
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    const size_t sp = line.find_first_of(" \t");
    const absl::string_view first = line.substr(0, sp);
    if (absl::EndsWith(first, ":")) {
      // "Name:   <value> kB"
      uint64_t* field = nullptr;
      if (first == "Anonymous:")
        field = out.empty() ? nullptr : &out.back().anonymous_bytes;
      if (first == "AnonHugePages:")
        field = out.empty() ? nullptr : &out.back().anon_huge_bytes;
      if (field == nullptr) {
        if ((first == "Anonymous:" || first == "AnonHugePages:") &&
            out.empty()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "smaps line ", lineno, ": field before any mapping"));
        }
        continue;
      }
      std::vector<absl::string_view> f = absl::StrSplit(
          line.substr(first.size()), absl::ByAnyChar(" \t"), absl::SkipEmpty());
      uint64_t kb = 0;
      if (f.size() != 2 || f[1] != "kB" || !absl::SimpleAtoi(f[0], &kb) ||
          kb > (uint64_t{1} << 44)) {
        return absl::InvalidArgumentError(
            absl::StrCat("smaps line ", lineno, ": malformed ", Quoted(line)));
      }
      *field = kb * 1024;
      continue;
    }
    const size_t dash = first.find('-');
    SmapsVma v;
    if (dash == absl::string_view::npos ||
        !ParseHex(first.substr(0, dash), &v.start) ||
        !ParseHex(first.substr(dash + 1), &v.end) || v.end <= v.start) {
      return absl::InvalidArgumentError(
          absl::StrCat("smaps line ", lineno, ": malformed ", Quoted(line)));
    }
    out.push_back(v);
  }
  return out;
}

size_t JoinWithMaps(std::vector<NumaMapsRange>& ranges,
                    const std::vector<MapsRange>& maps) {
  size_t unmatched = 0;
  size_t j = 0;
  for (NumaMapsRange& r : ranges) {
    // Both are in ascending address order; walk them together.
    while (j < maps.size() && maps[j].start < r.start) ++j;
    if (j < maps.size() && maps[j].start == r.start) {
      r.end = maps[j].end;
    } else {
      ++unmatched;
    }
  }
  return unmatched;
}

}  // namespace hotpage
