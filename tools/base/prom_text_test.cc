#include "tools/base/prom_text.h"

#include <cmath>
#include <limits>
#include <string>

#include "gtest/gtest.h"

namespace hotpage {
namespace {

TEST(PromText, FamiliesInOrderWithHelpAndTypeEvenWhenEmpty) {
  PromText p({{"a_total", "counter", "As."},
              {"b", "gauge", "Bs; a back\\slash and a\nline feed."}});
  p.Add(1, PromLabels({{"x", "1"}}), uint64_t{7});
  p.Add(1, "", 0.25);
  EXPECT_EQ(p.Text(),
            "# HELP a_total As.\n"
            "# TYPE a_total counter\n"
            "# HELP b Bs; a back\\\\slash and a\\nline feed.\n"
            "# TYPE b gauge\n"
            "b{x=\"1\"} 7\n"
            "b 0.25\n");
}

TEST(PromText, LabelValuesAreEscaped) {
  EXPECT_EQ(PromEscapeLabelValue("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  EXPECT_EQ(PromLabels({{"workload", "x\"y"}, {"cgroup", "a/b"}}),
            "{workload=\"x\\\"y\",cgroup=\"a/b\"}");
  EXPECT_EQ(PromLabels({}), "");
}

TEST(PromText, AddLabelsExtendsASet) {
  EXPECT_EQ(PromAddLabels("{a=\"1\"}", {{"b", "2"}}), "{a=\"1\",b=\"2\"}");
  EXPECT_EQ(PromAddLabels("", {{"b", "2"}}), "{b=\"2\"}");
  EXPECT_EQ(PromAddLabels("{a=\"1\"}", {}), "{a=\"1\"}");
}

TEST(PromText, ValuesReadBackExactly) {
  EXPECT_EQ(PromValue(0.25), "0.25");
  EXPECT_EQ(PromValue(0.1), "0.1");
  EXPECT_EQ(PromValue(123456.789), "123456.789");
  EXPECT_EQ(PromValue(0), "0");
  EXPECT_EQ(PromValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(PromValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(PromValue(std::nan("")), "NaN");
}

TEST(PromText, SuffixedSeries) {
  PromText p({{"lat_seconds", "summary", "Latency."}});
  p.AddSuffixed(0, "", "{quantile=\"0.5\"}", "0.003");
  p.AddSuffixed(0, "_count", "", "1");
  EXPECT_EQ(p.Text(),
            "# HELP lat_seconds Latency.\n"
            "# TYPE lat_seconds summary\n"
            "lat_seconds{quantile=\"0.5\"} 0.003\n"
            "lat_seconds_count 1\n");
}

}  // namespace
}  // namespace hotpage
