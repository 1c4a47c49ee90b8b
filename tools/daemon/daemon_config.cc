#include "tools/daemon/daemon_config.h"

#include <regex.h>
#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <toml.hpp>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "policy/placement_weights.h"
#include "tools/base/json_writer.h"
#include "tools/base/parse.h"

namespace hotpage {
namespace {

using Value = toml::value;

// Bounds what toml11 is handed: its parser recurses once per nested array
// or inline table, so depth is checked here first, skipping strings and
// comments (a '[' inside a string is not nesting).
// The line of the first byte that is not part of valid UTF-8
// (Utf8Sequence), or 0 if every byte is.
int FirstInvalidUtf8Line(absl::string_view text) {
  int line = 1;
  for (size_t i = 0; i < text.size();) {
    size_t bad = 0;
    const size_t len = Utf8Sequence(text.substr(i), &bad);
    if (len == 0) return line;
    line += text[i] == '\n';
    i += len;
  }
  return 0;
}

absl::Status CheckShape(absl::string_view text) {
  if (text.size() > kMaxDaemonConfigBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "larger than ", kMaxDaemonConfigBytes, " bytes: not a config file"));
  }
  if (text.find('\0') != absl::string_view::npos) {
    return absl::InvalidArgumentError("contains a NUL byte");
  }
  // TOML documents are UTF-8. Checked here, before toml11 (Debian's 3.7):
  // its error path for an invalid sequence inside a literal string reads
  // past the end of its buffer (found by daemon_config_fuzz_test under
  // ASan).
  if (const int bad = FirstInvalidUtf8Line(text); bad != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("line ", bad, ": not valid UTF-8 (TOML files are UTF-8)"));
  }
  int depth = 0;
  int line = 1;
  size_t i = 0;
  const size_t n = text.size();
  auto starts = [&](absl::string_view s) {
    return text.substr(i, s.size()) == s;
  };
  while (i < n) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      ++i;
    } else if (c == '#') {
      while (i < n && text[i] != '\n') ++i;
    } else if (starts("\"\"\"") || starts("'''")) {
      const absl::string_view close = text.substr(i, 3);
      i += 3;
      while (i < n && !starts(close)) {
        if (text[i] == '\n') ++line;
        if (close[0] == '"' && text[i] == '\\') ++i;
        ++i;
      }
      i += 3;
    } else if (c == '"' || c == '\'') {
      ++i;
      while (i < n && text[i] != c && text[i] != '\n') {
        if (c == '"' && text[i] == '\\') ++i;
        ++i;
      }
      ++i;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDaemonConfigDepth) {
        return absl::InvalidArgumentError(absl::StrCat(
            "line ", line, ": nested deeper than ", kMaxDaemonConfigDepth));
      }
      ++i;
    } else if (c == ']' || c == '}') {
      if (depth > 0) --depth;
      ++i;
    } else {
      ++i;
    }
  }
  return absl::OkStatus();
}

class Checker {
 public:
  explicit Checker(absl::string_view path) : path_(path) {}

  absl::Status Error(const Value& v, absl::string_view key,
                     absl::string_view why) const {
    return absl::InvalidArgumentError(
        absl::StrCat(path_, ":", v.location().line(), ": ", key, ": ", why));
  }

  // Every key of `table` must be in `known`.
  absl::Status OnlyKnown(const Value& table, absl::string_view where,
                         const std::set<std::string>& known) const {
    for (const auto& [k, v] : table.as_table()) {
      if (known.count(k) == 0) {
        return Error(v, k,
                     absl::StrCat("unknown key in ", where,
                                  " (known: ", Join(known), ")"));
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> String(const Value& v,
                                     absl::string_view key) const {
    if (!v.is_string()) return Error(v, key, "must be a string");
    return v.as_string().str;
  }
  absl::StatusOr<bool> Bool(const Value& v, absl::string_view key) const {
    if (!v.is_boolean()) return Error(v, key, "must be true or false");
    return v.as_boolean();
  }
  absl::StatusOr<int64_t> Int(const Value& v, absl::string_view key, int64_t lo,
                              int64_t hi) const {
    if (!v.is_integer()) return Error(v, key, "must be an integer");
    const int64_t x = v.as_integer();
    if (x < lo || x > hi) {
      return Error(v, key, absl::StrCat("must be in [", lo, ", ", hi, "]"));
    }
    return x;
  }
  absl::StatusOr<double> Number(const Value& v, absl::string_view key,
                                double lo, double hi) const {
    double x;
    if (v.is_integer()) {
      x = static_cast<double>(v.as_integer());
    } else if (v.is_floating()) {
      x = v.as_floating();
    } else {
      return Error(v, key, "must be a number");
    }
    if (!std::isfinite(x) || x < lo || x > hi) {
      return Error(v, key, absl::StrCat("must be in [", lo, ", ", hi, "]"));
    }
    return x;
  }

 private:
  static std::string Join(const std::set<std::string>& s) {
    std::string out;
    for (const std::string& k : s) {
      if (!out.empty()) out += ", ";
      out += k;
    }
    return out;
  }
  std::string path_;
};

#define HP_ASSIGN_OR_RETURN_CFG(lhs, expr) \
  do {                                     \
    auto _r = (expr);                      \
    if (!_r.ok()) return _r.status();      \
    lhs = *std::move(_r);                  \
  } while (0)

// A size: a non-negative integer (bytes) or a string ParseByteSize takes.
absl::StatusOr<uint64_t> ParseSize(const Checker& ck, const Value& v,
                                   absl::string_view key) {
  if (v.is_integer() && v.as_integer() >= 0) {
    return static_cast<uint64_t>(v.as_integer());
  }
  std::string s;
  HP_ASSIGN_OR_RETURN_CFG(s, ck.String(v, key));
  absl::StatusOr<uint64_t> b = ParseByteSize(s);
  if (!b.ok()) return ck.Error(v, key, b.status().message());
  return *b;
}

absl::StatusOr<FastShare> ParseFastShare(const Checker& ck, const Value& v,
                                         absl::string_view key) {
  FastShare share;
  share.set = true;
  if (v.is_integer()) {
    if (v.as_integer() < 0) return ck.Error(v, key, "must not be negative");
    share.value = static_cast<double>(v.as_integer());
    return share;
  }
  if (!v.is_string()) {
    return ck.Error(v, key, "must be a size (\"2GiB\") or a percentage");
  }
  absl::string_view s = absl::StripAsciiWhitespace(v.as_string().str);
  if (!s.empty() && s.back() == '%') {
    double pct;
    if (!absl::SimpleAtod(absl::StripAsciiWhitespace(s.substr(0, s.size() - 1)),
                          &pct) ||
        !std::isfinite(pct) || pct < 0 || pct > 100) {
      return ck.Error(v, key, "a percentage must be in [0%, 100%]");
    }
    share.percent = true;
    share.value = pct;
    return share;
  }
  absl::StatusOr<uint64_t> bytes = ParseByteSize(s);
  if (!bytes.ok()) return ck.Error(v, key, bytes.status().message());
  share.value = static_cast<double>(*bytes);
  return share;
}

// A cgroup path relative to the v2 root: components of printable
// characters, no "." or "..", no empty component. A leading '/' is
// accepted and dropped ("/system.slice/x" as /proc/PID/cgroup prints it).
absl::Status CheckCgroupPath(absl::string_view p) {
  if (!p.empty() && p.front() == '/') p.remove_prefix(1);
  if (p.empty()) return absl::InvalidArgumentError("empty cgroup path");
  if (p.size() > 4096) return absl::InvalidArgumentError("path too long");
  for (absl::string_view c : absl::StrSplit(p, '/')) {
    if (c.empty() || c == "." || c == "..") {
      return absl::InvalidArgumentError(
          "must be a plain path under the cgroup root (no empty, '.' or "
          "'..' components)");
    }
    for (char ch : c) {
      if (!std::isprint(static_cast<unsigned char>(ch))) {
        return absl::InvalidArgumentError("non-printable character");
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<WorkloadConfig> ParseWorkload(const Checker& ck,
                                             const Value& t) {
  static const std::set<std::string> kKnown = {
      "name",         "cgroup",        "comm",       "cmdline",
      "pid",          "all",           "source",     "promote_to",
      "weights",      "package_aware", "locality",   "keep_interleave",
      "huge_strict",  "rate_share",    "fast_floor", "fast_cap",
      "write_faults", "rounds"};
  if (!t.is_table()) return ck.Error(t, "workload", "must be a table");
  if (absl::Status s = ck.OnlyKnown(t, "[[workload]]", kKnown); !s.ok()) {
    return s;
  }
  WorkloadConfig w;
  w.line = static_cast<int>(t.location().line());
  const auto& tab = t.as_table();
  auto it = tab.find("name");
  if (it == tab.end()) return ck.Error(t, "workload", "needs a name");
  HP_ASSIGN_OR_RETURN_CFG(w.name, ck.String(it->second, "name"));
  if (w.name.empty() || w.name.size() > 64) {
    return ck.Error(it->second, "name", "must be 1 to 64 characters");
  }
  for (char c : w.name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' &&
        c != '.') {
      return ck.Error(it->second, "name",
                      "letters, digits, '_', '-' and '.' only (it labels "
                      "metrics)");
    }
  }

  int selectors = 0;
  for (const char* key : {"cgroup", "comm", "cmdline", "pid", "all"}) {
    auto s = tab.find(key);
    if (s == tab.end()) continue;
    if (++selectors > 1) {
      return ck.Error(s->second, key,
                      "a workload has one selector (cgroup, comm, cmdline, "
                      "pid or all)");
    }
    const Value& v = s->second;
    const std::string k = key;
    if (k == "cgroup") {
      w.selector = SelectorKind::kCgroup;
      HP_ASSIGN_OR_RETURN_CFG(w.match, ck.String(v, key));
      if (absl::Status st = CheckCgroupPath(w.match); !st.ok()) {
        return ck.Error(v, key, st.message());
      }
      if (w.match.front() == '/') w.match.erase(0, 1);
    } else if (k == "comm") {
      w.selector = SelectorKind::kComm;
      HP_ASSIGN_OR_RETURN_CFG(w.match, ck.String(v, key));
      if (w.match.empty() || w.match.size() > 15) {
        return ck.Error(v, key,
                        "1 to 15 bytes (the kernel keeps 15 of a comm)");
      }
    } else if (k == "cmdline") {
      w.selector = SelectorKind::kCmdline;
      HP_ASSIGN_OR_RETURN_CFG(w.match, ck.String(v, key));
      if (w.match.empty() || w.match.size() > 1024) {
        return ck.Error(v, key, "1 to 1024 bytes");
      }
      regex_t re;
      const int rc = regcomp(&re, w.match.c_str(), REG_EXTENDED | REG_NOSUB);
      if (rc != 0) {
        char buf[256];
        regerror(rc, &re, buf, sizeof(buf));
        return ck.Error(v, key, absl::StrCat("bad regex: ", buf));
      }
      regfree(&re);
    } else if (k == "pid") {
      w.selector = SelectorKind::kPid;
      int64_t pid;
      HP_ASSIGN_OR_RETURN_CFG(pid, ck.Int(v, key, 1, (1 << 22)));
      w.match = absl::StrCat(pid);
    } else {
      w.selector = SelectorKind::kAll;
      bool all;
      HP_ASSIGN_OR_RETURN_CFG(all, ck.Bool(v, key));
      if (!all) return ck.Error(v, key, "only `all = true` selects");
    }
  }
  if (selectors == 0) {
    return ck.Error(t, w.name,
                    "needs a selector: cgroup, comm, cmdline, pid or all");
  }

  for (const auto& [k, v] : tab) {
    if (k == "source") {
      HP_ASSIGN_OR_RETURN_CFG(w.source, ck.String(v, k));
      static const std::set<std::string> kSources = {
          "auto", "pebs", "ibs", "hintfault", "pagefault", "damon"};
      if (kSources.count(w.source) == 0) {
        return ck.Error(v, k,
                        "one of auto, pebs, ibs, hintfault, pagefault, damon");
      }
    } else if (k == "promote_to") {
      HP_ASSIGN_OR_RETURN_CFG(w.promote_to, ck.String(v, k));
      absl::StatusOr<std::vector<int>> nodes = ParseKernelList(w.promote_to);
      if (!nodes.ok() || nodes->empty()) {
        return ck.Error(v, k, "a node list such as \"0\" or \"0-1,4\"");
      }
    } else if (k == "weights") {
      std::string text;
      HP_ASSIGN_OR_RETURN_CFG(text, ck.String(v, k));
      absl::StatusOr<WeightsConfig> weights = ParseWeights(text);
      if (!weights.ok()) return ck.Error(v, k, weights.status().message());
      w.placement.weights = *weights;
    } else if (k == "write_faults") {
      HP_ASSIGN_OR_RETURN_CFG(w.write_faults, ck.Bool(v, k));
    } else if (k == "rounds") {
      HP_ASSIGN_OR_RETURN_CFG(w.rounds, ck.Bool(v, k));
    } else if (k == "package_aware") {
      HP_ASSIGN_OR_RETURN_CFG(w.placement.package_aware, ck.Bool(v, k));
    } else if (k == "locality") {
      HP_ASSIGN_OR_RETURN_CFG(w.placement.locality, ck.Bool(v, k));
    } else if (k == "huge_strict") {
      HP_ASSIGN_OR_RETURN_CFG(w.placement.huge_strict_preferred, ck.Bool(v, k));
    } else if (k == "keep_interleave") {
      HP_ASSIGN_OR_RETURN_CFG(w.placement.interleave_tolerance,
                              ck.Number(v, k, 0, 1));
    } else if (k == "rate_share") {
      HP_ASSIGN_OR_RETURN_CFG(w.rate_share, ck.Number(v, k, 0.001, 1000));
    } else if (k == "fast_floor") {
      HP_ASSIGN_OR_RETURN_CFG(w.fast_floor, ParseFastShare(ck, v, k));
    } else if (k == "fast_cap") {
      HP_ASSIGN_OR_RETURN_CFG(w.fast_cap, ParseFastShare(ck, v, k));
    }
  }
  if (w.write_faults && w.source != "pagefault") {
    return ck.Error(tab.at("write_faults"), "write_faults",
                    "needs source = \"pagefault\" (the faults it re-arms "
                    "reach the page-fault sampler)");
  }
  if (w.fast_floor.set && w.fast_cap.set &&
      w.fast_floor.percent == w.fast_cap.percent &&
      w.fast_floor.value > w.fast_cap.value) {
    return ck.Error(tab.at("fast_floor"), "fast_floor", "is above fast_cap");
  }
  return w;
}

}  // namespace

bool UsesHintFaults(const DaemonConfig& cfg) {
  for (const WorkloadConfig& w : cfg.workloads) {
    if (w.source == "hintfault") return true;
  }
  return false;
}

absl::string_view KernelTieringModeName(KernelTieringMode m) {
  switch (m) {
    case KernelTieringMode::kRefuse:
      return "refuse";
    case KernelTieringMode::kCoexist:
      return "coexist";
    case KernelTieringMode::kTakeOver:
      return "take-over";
  }
  return "?";
}

absl::string_view SelectorKindName(SelectorKind k) {
  switch (k) {
    case SelectorKind::kCgroup:
      return "cgroup";
    case SelectorKind::kComm:
      return "comm";
    case SelectorKind::kCmdline:
      return "cmdline";
    case SelectorKind::kPid:
      return "pid";
    case SelectorKind::kAll:
      return "all";
  }
  return "?";
}

uint64_t FastShare::Resolve(uint64_t capacity_bytes, bool is_cap) const {
  if (!set) return is_cap ? capacity_bytes : 0;
  double bytes =
      percent ? value / 100.0 * static_cast<double>(capacity_bytes) : value;
  if (bytes > static_cast<double>(capacity_bytes)) {
    bytes = static_cast<double>(capacity_bytes);
  }
  return static_cast<uint64_t>(bytes);
}

absl::StatusOr<uint64_t> ParseByteSize(absl::string_view text) {
  absl::string_view s = absl::StripAsciiWhitespace(text);
  size_t end = 0;
  while (end < s.size() &&
         (std::isdigit(static_cast<unsigned char>(s[end])) || s[end] == '.')) {
    ++end;
  }
  double number;
  if (end == 0 || !absl::SimpleAtod(s.substr(0, end), &number) ||
      !std::isfinite(number) || number < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", text, "' is not a size (a number with B, KiB, MiB, GiB or TiB)"));
  }
  const absl::string_view unit = absl::StripAsciiWhitespace(s.substr(end));
  static const std::map<std::string, double, std::less<>> kUnits = {
      {"", 1},
      {"B", 1},
      {"KiB", 1024.0},
      {"MiB", 1048576.0},
      {"GiB", 1073741824.0},
      {"TiB", 1099511627776.0}};
  auto it = kUnits.find(unit);
  if (it == kUnits.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", text, "': unknown unit '", unit, "' (B, KiB, MiB, GiB, TiB)"));
  }
  const double bytes = number * it->second;
  if (bytes >= 18446744073709551615.0) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' too large"));
  }
  return static_cast<uint64_t>(bytes);
}

absl::StatusOr<DaemonConfig> ParseDaemonConfig(absl::string_view text,
                                               absl::string_view path) {
  if (absl::Status s = CheckShape(text); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", s.message()));
  }
  Value root;
  try {
    std::istringstream in{std::string(text)};
    root = toml::parse(in, std::string(path));
  } catch (const toml::exception& e) {
    // toml11's message is several lines with a caret diagram; the first
    // line says what, the location says where.
    std::string what = e.what();
    const size_t nl = what.find('\n');
    if (nl != std::string::npos) what.resize(nl);
    if (absl::StartsWith(what, "[error] ")) what.erase(0, 8);
    return absl::InvalidArgumentError(absl::StrCat(
        path, ":", e.location().line(), ": not valid TOML: ", what));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not valid TOML: ", e.what()));
  }

  Checker ck(path);
  DaemonConfig cfg;
  cfg.path = std::string(path);
  if (absl::Status s = ck.OnlyKnown(root, "the file", {"daemon", "workload"});
      !s.ok()) {
    return s;
  }
  const auto& top = root.as_table();
  if (auto d = top.find("daemon"); d != top.end()) {
    const Value& t = d->second;
    if (!t.is_table()) return ck.Error(t, "daemon", "must be a table");
    static const std::set<std::string> kKnown = {
        "interval_ms", "rate_limit_mbps",  "kernel_tiering",
        "socket",      "state_dir",        "prom_file",
        "log_level",   "min_rss",          "self_memory",
        "rounds_dir",  "rounds_max_bytes", "rounds_dir_max_bytes"};
    if (absl::Status s = ck.OnlyKnown(t, "[daemon]", kKnown); !s.ok()) {
      return s;
    }
    for (const auto& [k, v] : t.as_table()) {
      if (k == "interval_ms") {
        int64_t x;
        HP_ASSIGN_OR_RETURN_CFG(x, ck.Int(v, k, 10, 3600 * 1000));
        cfg.interval_ms = static_cast<int>(x);
      } else if (k == "rate_limit_mbps") {
        int64_t x;
        HP_ASSIGN_OR_RETURN_CFG(x, ck.Int(v, k, 1, 1 << 20));
        cfg.rate_limit_mbps = static_cast<int>(x);
      } else if (k == "kernel_tiering") {
        std::string m;
        HP_ASSIGN_OR_RETURN_CFG(m, ck.String(v, k));
        if (m == "refuse") {
          cfg.kernel_tiering = KernelTieringMode::kRefuse;
        } else if (m == "coexist") {
          cfg.kernel_tiering = KernelTieringMode::kCoexist;
        } else if (m == "take-over") {
          cfg.kernel_tiering = KernelTieringMode::kTakeOver;
        } else {
          return ck.Error(v, k, "one of refuse, coexist, take-over");
        }
      } else if (k == "socket" || k == "state_dir" || k == "prom_file" ||
                 k == "rounds_dir") {
        std::string p;
        HP_ASSIGN_OR_RETURN_CFG(p, ck.String(v, k));
        if (p.empty() || p.front() != '/' || p.size() > 4000 ||
            p.find("/../") != std::string::npos || absl::EndsWith(p, "/..")) {
          return ck.Error(v, k, "must be an absolute path without '..'");
        }
        (k == "socket"       ? cfg.socket
         : k == "state_dir"  ? cfg.state_dir
         : k == "rounds_dir" ? cfg.rounds_dir
                             : cfg.prom_file) = p;
      } else if (k == "log_level") {
        HP_ASSIGN_OR_RETURN_CFG(cfg.log_level, ck.String(v, k));
        if (cfg.log_level != "debug" && cfg.log_level != "info" &&
            cfg.log_level != "warning" && cfg.log_level != "error") {
          return ck.Error(v, k, "one of debug, info, warning, error");
        }
      } else if (k == "self_memory") {
        // "slow", "local" or a node: a number, or its decimal string.
        std::string text;
        if (v.is_integer()) {
          text = absl::StrCat(v.as_integer());
        } else {
          HP_ASSIGN_OR_RETURN_CFG(text, ck.String(v, k));
        }
        absl::StatusOr<SelfMemoryRequest> req = ParseSelfMemory(text);
        if (!req.ok()) return ck.Error(v, k, req.status().message());
        cfg.self_memory = *req;
      } else if (k == "rounds_max_bytes") {
        HP_ASSIGN_OR_RETURN_CFG(cfg.rounds_max_bytes, ParseSize(ck, v, k));
        if (cfg.rounds_max_bytes < kMinRoundsMaxBytes ||
            cfg.rounds_max_bytes > kMaxRoundsMaxBytes) {
          return ck.Error(v, k, "must be 64KiB to 1TiB");
        }
      } else if (k == "rounds_dir_max_bytes") {
        HP_ASSIGN_OR_RETURN_CFG(cfg.rounds_dir_max_bytes, ParseSize(ck, v, k));
        if (cfg.rounds_dir_max_bytes < kMinRoundsMaxBytes ||
            cfg.rounds_dir_max_bytes > kMaxRoundsDirMaxBytes) {
          return ck.Error(v, k, "must be 64KiB to 16TiB");
        }
      } else if (k == "min_rss") {
        HP_ASSIGN_OR_RETURN_CFG(cfg.min_rss_bytes, ParseSize(ck, v, k));
      }
    }
    // The directory's bound holds one file at its bound at least: a live
    // file is never removed, so a lower one could never be met.
    if (auto b = t.as_table().find("rounds_dir_max_bytes");
        b != t.as_table().end()) {
      if (cfg.rounds_dir_max_bytes < cfg.rounds_max_bytes) {
        return ck.Error(b->second, "rounds_dir_max_bytes",
                        absl::StrCat("must be at least rounds_max_bytes (",
                                     cfg.rounds_max_bytes, " bytes)"));
      }
    } else {
      cfg.rounds_dir_max_bytes = kRoundsDirDefaultFiles * cfg.rounds_max_bytes;
    }
  }

  if (auto w = top.find("workload"); w != top.end()) {
    const Value& arr = w->second;
    if (!arr.is_array()) {
      return ck.Error(arr, "workload",
                      "must be an array of tables ([[workload]])");
    }
    if (arr.as_array().size() > kMaxWorkloads) {
      return ck.Error(arr, "workload",
                      absl::StrCat("at most ", kMaxWorkloads, " workloads"));
    }
    std::set<std::string> names;
    double floor_pct = 0;
    for (const Value& t : arr.as_array()) {
      WorkloadConfig wc;
      HP_ASSIGN_OR_RETURN_CFG(wc, ParseWorkload(ck, t));
      if (!names.insert(wc.name).second) {
        return ck.Error(t, "name",
                        absl::StrCat("'", wc.name, "' is used twice"));
      }
      if (wc.source == "hintfault" &&
          cfg.kernel_tiering != KernelTieringMode::kTakeOver) {
        return ck.Error(
            t.as_table().at("source"), "source",
            "hintfault needs kernel_tiering = \"take-over\" in [daemon]: "
            "the daemon then sets kernel.numa_balancing to 2 and its "
            "promotion rate limit to 0 while it runs (the kernel's scanner "
            "senses, hotpage alone moves) and restores them at exit");
      }
      if (wc.rounds && cfg.rounds_dir.empty()) {
        return ck.Error(t.as_table().at("rounds"), "rounds",
                        "needs rounds_dir in [daemon]: the directory where "
                        "each process's rounds file is written");
      }
      if (wc.fast_floor.set && wc.fast_floor.percent) {
        floor_pct += wc.fast_floor.value;
        if (floor_pct > 100 + 1e-9) {
          return ck.Error(t.as_table().at("fast_floor"), "fast_floor",
                          "the workloads' percent floors add up past 100%");
        }
      }
      cfg.workloads.push_back(std::move(wc));
    }
  }
  if (cfg.workloads.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path,
        ": no [[workload]]: nothing to manage (see `hotpage daemon "
        "--help` for an example)"));
  }
  return cfg;
}

absl::StatusOr<DaemonConfig> LoadDaemonConfig(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) {
      return absl::NotFoundError(absl::StrCat(path, ": no such file"));
    }
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a regular file"));
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxDaemonConfigBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": larger than ", kMaxDaemonConfigBytes, " bytes"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot read"));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseDaemonConfig(ss.str(), path);
}

}  // namespace hotpage
