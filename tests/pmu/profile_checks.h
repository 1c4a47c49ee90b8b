// Checks shared by the end-to-end profile tests (profiles_test.cc,
// profiles_after_fixes_test.cc): the samples of a script, the events the
// fake kernel saw opened.

#ifndef HOTPAGE_TESTS_PMU_PROFILE_CHECKS_H_
#define HOTPAGE_TESTS_PMU_PROFILE_CHECKS_H_

#include <sys/types.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "sampler/perf/testing/fake_perf_kernel.h"
#include "sampler/sample.h"

namespace hotpage {

// "PMU type=T config=C pid=P cpu=N" for each CPU, as DescribeOpens().
// `leader_first` > -1: each line names a leader at that index plus 2 per CPU
// (an aux leader and its member, opened in pairs).
inline std::vector<std::string> OpensOn(const std::string& pmu, uint32_t type,
                                        uint64_t config, pid_t pid,
                                        const std::vector<int>& cpus) {
  std::vector<std::string> out;
  for (int cpu : cpus) {
    out.push_back(absl::StrFormat("%s type=%u config=%#x pid=%d cpu=%d", pmu,
                                  type, config, pid, cpu));
  }
  return out;
}

// Every sample of `script` arrived once, decoded: address, pid, tid, CPU,
// time, and for hardware sources weight and data source.
inline void ExpectScriptSamples(const std::vector<Sample>& got,
                                const std::vector<FakeAccess>& script,
                                bool hardware) {
  std::vector<Sample> s = got;
  std::sort(s.begin(), s.end(), [](const Sample& a, const Sample& b) {
    return a.time_ns < b.time_ns;
  });
  ASSERT_EQ(s.size(), script.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const FakeAccess& a = script[i];
    SCOPED_TRACE(absl::StrFormat("sample %d at cpu %d", i, a.cpu));
    EXPECT_EQ(s[i].vaddr, a.addr);
    EXPECT_EQ(s[i].pid, static_cast<uint32_t>(a.pid));
    EXPECT_EQ(s[i].tid, static_cast<uint32_t>(a.tid ? a.tid : a.pid));
    EXPECT_EQ(s[i].cpu, static_cast<uint32_t>(a.cpu));
    EXPECT_EQ(s[i].time_ns, a.time_ns);
    if (hardware) {
      EXPECT_EQ(s[i].weight, a.weight);
      EXPECT_EQ(s[i].data_src, a.data_src);
      EXPECT_EQ(s[i].level, DecodeDataSrc(a.data_src).level);
    } else {
      EXPECT_EQ(s[i].weight, 0u);
    }
  }
}

// attach's --stats-json counted `n` samples from `source`.
inline void ExpectAttachStats(const std::string& json, size_t n,
                              const std::string& source) {
  EXPECT_NE(json.find(absl::StrFormat("\"samples\": %d,", n)),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(absl::StrFormat("\"source\": \"%s\"", source)),
            std::string::npos)
      << json;
}

inline std::vector<std::string> Concat(
    std::vector<std::vector<std::string>> parts) {
  std::vector<std::string> out;
  for (auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

}  // namespace hotpage

#endif  // HOTPAGE_TESTS_PMU_PROFILE_CHECKS_H_
