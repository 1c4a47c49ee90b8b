// The Prometheus text exposition format (version 0.0.4), written by one
// class for everything hotpage exports: `hotpage attach --prom-file` and
// its --metrics-listen endpoint (tools/attach/attach_stats.h), and
// `hotpage daemon`'s prom_file, `hotpage status --metrics` and its
// --metrics-listen (tools/daemon/daemon_loop.h).
//
// A PromText is made with its metric families in the order the text lists
// them (name, type, help), or has them declared one by one; series are added to
// a family in any order while the caller walks its data, and Text() writes
// every family: "# HELP",
// "# TYPE", then its series in the order they were added. A family without
// series still gets its HELP and TYPE lines, so the set of families in a
// file does not depend on the data (node_exporter's textfile collector and
// Prometheus accept such empty families).
//
// Escaping, as the format specifies: label values escape backslash, double
// quote and line feed (\\, \", \n); HELP text escapes backslash and line
// feed. Metric and label names are the caller's constants
// ([a-zA-Z_:][a-zA-Z0-9_:]*), not checked here. Values: integers as
// decimal, doubles in the shortest form that reads back to the same value,
// with "+Inf", "-Inf" and "NaN" as the format spells them.
//
// Not thread-safe; a PromText is built and read on one thread, and the
// finished text is what callers share.

#ifndef HOTPAGE_TOOLS_BASE_PROM_TEXT_H_
#define HOTPAGE_TOOLS_BASE_PROM_TEXT_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace hotpage {

// `v` with backslash, double quote and line feed escaped.
std::string PromEscapeLabelValue(absl::string_view v);

// `{a="x",b="y"}` (values escaped); "" for no labels.
std::string PromLabels(
    std::initializer_list<std::pair<absl::string_view, absl::string_view>>
        labels);

// `labels` (as PromLabels returns, possibly "") with more labels appended:
// PromAddLabels(`{a="x"}`, {{"b", "y"}}) is `{a="x",b="y"}`.
std::string PromAddLabels(
    absl::string_view labels,
    std::initializer_list<std::pair<absl::string_view, absl::string_view>>
        more);

// A sample value as the text format writes it.
std::string PromValue(double v);

class PromText {
 public:
  struct Family {
    const char* name;
    const char* type;  // "counter", "gauge", "summary", "untyped"
    const char* help;
  };

  PromText() = default;
  explicit PromText(std::vector<Family> families);

  // Appends a family to the list; returns its index for Add.
  size_t Declare(const Family& family);

  // One series `name{labels} value` of family `family` (an index into the
  // constructor's list); `labels` as PromLabels returns it. The suffixed
  // form writes `name` + `suffix` (a summary's "_sum" and "_count").
  void Add(size_t family, absl::string_view labels, uint64_t value);
  void Add(size_t family, absl::string_view labels, double value);
  void AddSuffixed(size_t family, absl::string_view suffix,
                   absl::string_view labels, absl::string_view value);

  // Every family in order, each with its HELP and TYPE lines.
  std::string Text() const;

 private:
  std::vector<Family> families_;
  std::vector<std::string> bodies_;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_BASE_PROM_TEXT_H_
