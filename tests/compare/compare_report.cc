#include "tests/compare/compare_report.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tools/base/json.h"
#include "tools/base/json_writer.h"

namespace hotpage {
namespace compare {

namespace {

constexpr absl::string_view kResultMarker = "COMPARE-RESULT ";
constexpr absl::string_view kNoteMarker = "COMPARE-NOTE ";
constexpr double kNever = std::numeric_limits<double>::infinity();

using Getter = std::function<std::optional<double>(const RunResult&)>;

// A count that is absent when zero (area_nodeN, hot_nodeN).
Getter CountKey(absl::string_view key) {
  return [key = std::string(key)](const RunResult& r) -> std::optional<double> {
    return r.Number(key).value_or(0);
  };
}

Getter Key(absl::string_view key, bool never_if_negative = false) {
  return [key = std::string(key),
          never_if_negative](const RunResult& r) -> std::optional<double> {
    std::optional<double> v = r.Number(key);
    if (v && never_if_negative && *v < 0) return kNever;
    return v;
  };
}

std::vector<double> Values(const std::vector<const RunResult*>& runs,
                           const Getter& get) {
  std::vector<double> out;
  for (const RunResult* r : runs) {
    if (std::optional<double> v = get(*r)) out.push_back(*v);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Num(double v, int decimals) {
  if (std::isinf(v)) return "never";
  return absl::StrFormat("%.*f", decimals, v);
}

// "1.2 s" or "never".
std::string Secs(double v) {
  return std::isinf(v) ? "never" : absl::StrCat(Num(v, 1), " s");
}

// "v" or "min–max" of the values, with a suffix after each number.
std::string Range(const std::vector<const RunResult*>& runs, const Getter& get,
                  int decimals, absl::string_view suffix = "") {
  const std::vector<double> v = Values(runs, get);
  if (v.empty()) return "–";
  auto one = [&](double x) {
    return std::isinf(x) ? Num(x, decimals)
                         : absl::StrCat(Num(x, decimals), suffix);
  };
  if (Num(v.front(), decimals) == Num(v.back(), decimals))
    return one(v.front());
  return absl::StrCat(one(v.front()), "–", one(v.back()));
}

// The upper median (of two runs, the larger): conservative for goals of the
// form "no more than".
std::optional<double> UpperMedian(const std::vector<const RunResult*>& runs,
                                  const Getter& get) {
  const std::vector<double> v = Values(runs, get);
  if (v.empty()) return std::nullopt;
  return v[v.size() / 2];
}

struct Group {
  std::string topo, mech, shape;
  std::vector<const RunResult*> runs;
};

std::vector<Group> GroupRuns(const Results& results) {
  std::vector<Group> groups;
  for (const RunResult& r : results.runs) {
    const std::string topo = r.GetOr("topo", "?"), mech = r.GetOr("mech", "?"),
                      shape = r.GetOr("shape", "?");
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
      return g.topo == topo && g.mech == mech && g.shape == shape;
    });
    if (it == groups.end()) {
      groups.push_back({topo, mech, shape, {}});
      it = groups.end() - 1;
    }
    it->runs.push_back(&r);
  }
  return groups;
}

// Phase index of the run's last phase (the phase after the switch).
int LastPhase(const RunResult& r) {
  std::optional<double> p = r.Number("phases");
  return p && *p >= 2 ? static_cast<int>(*p) - 1 : 1;
}

const Getter kT90Start = Key("t90_0", true);
const Getter kT90Switch = Key("t90_1", true);
const Getter kEndFraction = [](const RunResult& r) {
  std::optional<double> v = r.Number(absl::StrCat("end_frac_", LastPhase(r)));
  if (v) *v *= 100;
  return v;
};
const Getter kMigrated = Key("vm_pgmigrate_success");
// Pages migrated per page of the hot sets the run went through.
const Getter kMigratedPerHotPage =
    [](const RunResult& r) -> std::optional<double> {
  std::optional<double> m = r.Number("vm_pgmigrate_success"),
                        h = r.Number("hot_pages"), p = r.Number("phases");
  if (!m || !h || !p || *h <= 0 || *p <= 0) return std::nullopt;
  return *m / (*h * *p);
};
const Getter kNode0Share = [](const RunResult& r) -> std::optional<double> {
  const double n0 = r.Number("area_node0").value_or(0),
               n1 = r.Number("area_node1").value_or(0);
  if (n0 + n1 <= 0) return std::nullopt;
  return n0 / (n0 + n1);
};

std::string BindCell(const std::vector<const RunResult*>& runs) {
  const std::vector<double> off = Values(runs, Key("bind_off_max"));
  if (off.empty()) return "–";
  if (off.back() == 0) return "stayed";
  return absl::StrCat("**moved** (", Num(off.back(), 0), " of ",
                      runs.front()->GetOr("bind_pages", "?"), " pages)");
}

std::string HotpageCell(const std::vector<const RunResult*>& runs,
                        absl::string_view a, absl::string_view b) {
  if (!runs.front()->Get(a)) return "–";
  return absl::StrCat(Range(runs, Key(a), 0), " / ", Range(runs, Key(b), 0));
}

void AppendTwoTierTable(const std::vector<Group>& groups,
                        const std::string& topo, std::string* out) {
  absl::StrAppend(out, "### ", topo, "\n\n",
                  "| mechanism | shape | runs | 90% after start (s) | 90% "
                  "after switch (s) | hot set on fast "
                  "at end | pages migrated (vmstat) | per hot-set page | "
                  "hotpage promoted / demoted | "
                  "ping-pong pages (seen / hotpage) | hint faults | workload "
                  "passes | bind range |\n",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Group& g : groups) {
    if (g.topo != topo) continue;
    const auto& r = g.runs;
    std::string pingpong = Range(r, Key("pingpong_seen"), 0);
    if (r.front()->Get("hp_pingpong"))
      absl::StrAppend(&pingpong, " / ", Range(r, Key("hp_pingpong"), 0));
    absl::StrAppend(
        out, "| ", g.mech, " | ", g.shape, " | ", r.size(), " | ",
        Range(r, kT90Start, 1), " | ", Range(r, kT90Switch, 1), " | ",
        Range(r, kEndFraction, 0, "%"), " | ", Range(r, kMigrated, 0), " | ",
        Range(r, kMigratedPerHotPage, 2, "x"), " | ",
        HotpageCell(r, "hp_promoted", "hp_demoted"), " | ", pingpong, " | ",
        Range(r, Key("vm_numa_hint_faults"), 0), " | ",
        Range(r, Key("passes"), 0), " | ", BindCell(r), " |\n");
  }
  absl::StrAppend(out, "\n");
}

void AppendWeightsTable(const std::vector<Group>& groups,
                        const std::string& topo, std::string* out) {
  absl::StrAppend(out, "### ", topo,
                  " (two fast nodes; hotpage runs with --weights 0:3,1:1)\n\n",
                  "| mechanism | shape | runs | 90% after start (s) | 90% "
                  "after switch (s) | area pages on "
                  "node 0 / 1 / 2 at end | node 0 share of the fast-node pages "
                  "| pages migrated (vmstat) | "
                  "bind range |\n",
                  "|---|---|---|---|---|---|---|---|---|\n");
  for (const Group& g : groups) {
    if (g.topo != topo) continue;
    const auto& r = g.runs;
    absl::StrAppend(out, "| ", g.mech, " | ", g.shape, " | ", r.size(), " | ",
                    Range(r, kT90Start, 1), " | ", Range(r, kT90Switch, 1),
                    " | ", Range(r, CountKey("area_node0"), 0), " / ",
                    Range(r, CountKey("area_node1"), 0), " / ",
                    Range(r, CountKey("area_node2"), 0), " | ",
                    Range(r, kNode0Share, 2), " | ", Range(r, kMigrated, 0),
                    " | ", BindCell(r), " |\n");
  }
  absl::StrAppend(out, "\n");
}

bool IsWeightsTopo(absl::string_view topo) { return topo == "2pkg+cxl"; }

// The guest goals of issue 13: 90% of a hot set after the start within
// 1.2x the kernel tiering mode's time on the same shape, every switch
// caught (90% of the new set reached; the time against the kernel's is
// shown, not judged), pages moved at most 1.05x the hot sets'. (The
// earlier goals were 2x and 1.2x; a report that said "met" at 1.7x misled.)
constexpr double kStartTimeGoal = 1.2;
constexpr double kMigratedGoal = 1.05;

void AppendGoals(const std::vector<Group>& groups, std::string* out) {
  std::string lines;
  for (const Group& g : groups) {
    if (!absl::StartsWith(g.mech, "hotpage-")) continue;
    const Group* base = nullptr;
    for (const Group& b : groups) {
      if (b.mech == "tiering" && b.topo == g.topo && b.shape == g.shape)
        base = &b;
    }
    std::vector<std::string> parts;
    auto time_goal = [&](const Getter& get, absl::string_view what,
                         bool judge_ratio) {
      std::optional<double> mine = UpperMedian(g.runs, get);
      std::optional<double> theirs =
          base ? UpperMedian(base->runs, get) : std::nullopt;
      if (!mine) return;
      const bool caught = !std::isinf(*mine);
      if (!theirs || std::isinf(*theirs)) {
        // Nothing to take a ratio of: only whether hotpage got there.
        parts.push_back(absl::StrCat(
            what, " ", Secs(*mine), " (tiering: ", theirs ? "never" : "not run",
            ")", caught ? "" : " (**missed**: not caught)"));
        return;
      }
      const bool met =
          caught && (!judge_ratio || *mine <= kStartTimeGoal * *theirs);
      std::string ratio =
          !caught ? ""
                  : absl::StrFormat(", %.1fx", *mine / std::max(*theirs, 0.05));
      std::string verdict =
          judge_ratio ? (met ? " (met)"
                             : absl::StrFormat(" (**missed**: goal <= %.1fx)",
                                               kStartTimeGoal))
                      : (met ? " (caught)" : " (**missed**: not caught)");
      parts.push_back(absl::StrCat(what, " ", Secs(*mine), " vs tiering ",
                                   Secs(*theirs), ratio, verdict));
    };
    if (!IsWeightsTopo(g.topo)) {
      time_goal(kT90Start, "90% after start", /*judge_ratio=*/true);
      time_goal(kT90Switch, "after switch", /*judge_ratio=*/false);
      if (std::optional<double> m = UpperMedian(g.runs, kMigratedPerHotPage)) {
        std::optional<double> t = UpperMedian(g.runs, kT90Switch);
        const bool reached = t && !std::isinf(*t);
        parts.push_back(absl::StrFormat(
            "migrated %.2fx the hot sets' pages%s", *m,
            *m > kMigratedGoal
                ? absl::StrFormat(" (**missed**: goal <= %.2fx)", kMigratedGoal)
            : reached ? " (met)"
                      : absl::StrFormat(" (under %.2fx, but the new hot set "
                                        "never reached 90%%)",
                                        kMigratedGoal)));
      }
    } else if (std::optional<double> s = UpperMedian(g.runs, kNode0Share)) {
      std::string kernel;
      if (base) {
        if (std::optional<double> k = UpperMedian(base->runs, kNode0Share)) {
          kernel = absl::StrFormat("; tiering: %.2f", *k);
        }
      }
      parts.push_back(absl::StrFormat(
          "node 0 share %.2f for weights 3:1%s%s", *s,
          std::fabs(*s - 0.75) <= 0.05 ? " (met)"
                                       : " (**missed**: goal 0.75 +- 0.05)",
          kernel));
    }
    const std::vector<double> off = Values(g.runs, Key("bind_off_max"));
    if (!off.empty())
      parts.push_back(off.back() == 0 ? "bind range stayed (met)"
                                      : "bind range **moved**");
    absl::StrAppend(&lines, "- ", g.mech, ", ", g.shape, ", ", g.topo, ": ",
                    absl::StrJoin(parts, "; "), "\n");
  }
  if (lines.empty()) return;
  absl::StrAppend(out,
                  "### Goal check (upper median of the repeats; times vs the "
                  "kernel's tiering mode "
                  "on the same shape)\n\n",
                  lines, "\n");
}

}  // namespace

std::optional<std::string> RunResult::Get(absl::string_view key) const {
  for (const auto& [k, v] : kv) {
    if (k == key) return v;
  }
  return std::nullopt;
}

std::optional<double> RunResult::Number(absl::string_view key) const {
  std::optional<std::string> v = Get(key);
  double d;
  if (!v || !absl::SimpleAtod(*v, &d) || !std::isfinite(d)) return std::nullopt;
  return d;
}

std::string RunResult::GetOr(absl::string_view key,
                             absl::string_view fallback) const {
  std::optional<std::string> v = Get(key);
  return v ? *v : std::string(fallback);
}

absl::StatusOr<RunResult> ParseResultLine(absl::string_view line) {
  const size_t at = line.find(kResultMarker);
  if (at == absl::string_view::npos)
    return absl::InvalidArgumentError("no COMPARE-RESULT marker");
  line.remove_prefix(at + kResultMarker.size());
  RunResult r;
  std::set<std::string> seen;
  for (absl::string_view tok :
       absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty())) {
    const size_t eq = tok.find('=');
    if (eq == absl::string_view::npos || eq == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("result token '", tok, "' is not key=value"));
    }
    std::string key(tok.substr(0, eq));
    if (!seen.insert(key).second)
      return absl::InvalidArgumentError(
          absl::StrCat("duplicate key '", key, "'"));
    r.kv.emplace_back(std::move(key), std::string(tok.substr(eq + 1)));
  }
  for (absl::string_view k : {"topo", "mech", "shape"}) {
    if (!r.Get(k))
      return absl::InvalidArgumentError(
          absl::StrCat("result line lacks ", k, "="));
  }
  return r;
}

Results ParseResults(absl::string_view text) {
  Results out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StrContains(line, kResultMarker)) {
      absl::StatusOr<RunResult> r = ParseResultLine(line);
      if (r.ok()) {
        out.runs.push_back(std::move(*r));
      } else {
        out.notes.push_back(absl::StrCat("malformed result line skipped: ",
                                         r.status().message()));
      }
    } else if (const size_t at = line.find(kNoteMarker);
               at != absl::string_view::npos) {
      out.notes.push_back(std::string(
          absl::StripAsciiWhitespace(line.substr(at + kNoteMarker.size()))));
    }
  }
  return out;
}

absl::StatusOr<std::string> HotpageStatsKv(absl::string_view json) {
  absl::StatusOr<Json> v = ParseJson(json);
  if (!v.ok())
    return absl::InvalidArgumentError(
        absl::StrCat("hotpage stats: ", v.status().message()));
  if (JsonMember(*v, "promoted_pages") == nullptr)
    return absl::InvalidArgumentError("hotpage stats: no promoted_pages");
  std::string out;
  auto num = [&](absl::string_view key, absl::string_view as) {
    const Json* f = JsonMember(*v, key);
    if (f == nullptr || !f->is_number()) return;
    absl::StrAppend(&out, out.empty() ? "" : " ", as, "=", f->dump());
  };
  num("promoted_pages", "hp_promoted");
  num("demoted_pages", "hp_demoted");
  num("pingpong_pages", "hp_pingpong");
  num("failed_pages_total", "hp_failed");
  num("samples", "hp_samples");
  num("rounds", "hp_rounds");
  num("cpu_seconds", "hp_cpu_s");
  if (const Json* s = JsonMember(*v, "source");
      s != nullptr && s->is_string()) {
    std::string src = s->get<std::string>();
    std::replace_if(
        src.begin(), src.end(),
        [](char c) { return c == ' ' || c == '=' || c == '\t'; }, '_');
    absl::StrAppend(&out, " hp_source=", src);
  }
  return out;
}

absl::StatusOr<std::string> WorkloadLogKv(absl::string_view log) {
  bool corrupted = absl::StrContains(log, "DATA CORRUPTED");
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (!absl::ConsumePrefix(&line, "hot_set_workload: ") ||
        !absl::StrContains(line, " passes, "))
      continue;
    // "N passes, N phases, N touches, N counted, N bad pages"
    std::vector<absl::string_view> f =
        absl::StrSplit(line, absl::ByAnyChar(" ,"), absl::SkipEmpty());
    uint64_t passes, touches;
    if (f.size() < 6 || f[1] != "passes" || f[5] != "touches" ||
        !absl::SimpleAtoi(f[0], &passes) || !absl::SimpleAtoi(f[4], &touches)) {
      return absl::InvalidArgumentError(
          absl::StrCat("workload: unexpected closing line '", line, "'"));
    }
    return absl::StrCat("passes=", passes, " touches=", touches,
                        " data_ok=", corrupted ? 0 : 1);
  }
  return absl::NotFoundError("workload: no closing line (did it finish?)");
}

std::string RangeCell(const std::vector<const RunResult*>& runs,
                      absl::string_view key, int decimals,
                      bool never_if_negative) {
  return Range(runs, Key(key, never_if_negative), decimals);
}

std::string FormatMarkdown(const Results& results) {
  const std::vector<Group> groups = GroupRuns(results);
  std::vector<std::string> topos;
  for (const Group& g : groups) {
    if (std::find(topos.begin(), topos.end(), g.topo) == topos.end())
      topos.push_back(g.topo);
  }
  std::string out;
  for (const std::string& t : topos) {
    if (IsWeightsTopo(t)) {
      AppendWeightsTable(groups, t, &out);
    } else {
      AppendTwoTierTable(groups, t, &out);
    }
  }
  AppendGoals(groups, &out);
  if (!results.notes.empty()) {
    absl::StrAppend(&out, "### Notes\n\n");
    for (const std::string& n : results.notes)
      absl::StrAppend(&out, "- ", n, "\n");
    absl::StrAppend(&out, "\n");
  }
  if (out.empty()) out = "(no results)\n";
  return out;
}

std::string FormatJson(const Results& results) {
  JsonWriter w(2);
  w.BeginObject();
  w.Key("runs");
  w.BeginArray();
  for (const RunResult& r : results.runs) {
    w.BeginObject();
    for (const auto& [k, v] : r.kv) {
      w.Key(k);
      int64_t i;
      double d;
      const bool numeric =
          !v.empty() &&
          v.find_first_not_of("0123456789.-e+") == std::string::npos;
      if (numeric && absl::SimpleAtoi(v, &i)) {
        w.Int(i);
      } else if (numeric && absl::SimpleAtod(v, &d) && std::isfinite(d)) {
        w.Double(d);
      } else {
        w.String(v);
      }
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("notes");
  w.BeginArray();
  for (const std::string& n : results.notes) w.String(n);
  w.EndArray();
  w.EndObject();
  return w.str() + "\n";
}

}  // namespace compare
}  // namespace hotpage
