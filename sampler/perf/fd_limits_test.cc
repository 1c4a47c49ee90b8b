// EnsureDescriptors' arithmetic against a fake limit, and LinuxFdLimits
// against this process.

#include "sampler/perf/fd_limits.h"

#include <unistd.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace hotpage {
namespace {

class FakeLimits : public FdLimits {
 public:
  rlimit limit{1024, 4096};
  size_t open_now = 10;
  std::vector<rlimit> sets;
  absl::Status Get(rlimit* l) override {
    *l = limit;
    return absl::OkStatus();
  }
  absl::Status Set(const rlimit& l) override {
    sets.push_back(l);
    limit = l;
    return absl::OkStatus();
  }
  size_t OpenNow() override { return open_now; }
};

TEST(FdLimits, FitsUnderTheSoftLimitWithoutChange) {
  FakeLimits f;
  auto r = EnsureDescriptors(1024 - 10 - kFdHeadroom, &f);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, 1024u);
  EXPECT_TRUE(f.sets.empty());
}

TEST(FdLimits, RaisesTheSoftLimitToTheHardOne) {
  FakeLimits f;
  auto r = EnsureDescriptors(1344, &f);  // 3 threads x 224 CPUs x 2
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, 4096u);
  ASSERT_EQ(f.sets.size(), 1u);
  EXPECT_EQ(f.sets[0].rlim_cur, 4096u);
  EXPECT_EQ(f.sets[0].rlim_max, 4096u);  // the hard limit is kept
}

TEST(FdLimits, OverTheHardLimitNamesBothNumbers) {
  FakeLimits f;
  auto r = EnsureDescriptors(5000, &f);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  const std::string msg(r.status().message());
  EXPECT_NE(msg.find("needs 5000 file descriptors"), std::string::npos) << msg;
  EXPECT_NE(msg.find("hard limit is 4096"), std::string::npos) << msg;
  EXPECT_NE(msg.find("ulimit -Hn 5074"), std::string::npos) << msg;
  EXPECT_TRUE(f.sets.empty());
}

TEST(FdLimits, UnlimitedIsNeverRaised) {
  FakeLimits f;
  f.limit = {RLIM_INFINITY, RLIM_INFINITY};
  auto r = EnsureDescriptors(size_t{1} << 30, &f);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(f.sets.empty());
}

TEST(FdLimits, LinuxCountsThisProcesssDescriptors) {
  LinuxFdLimits l;
  rlimit now{};
  ASSERT_TRUE(l.Get(&now).ok());
  EXPECT_GT(now.rlim_cur, 0u);
  const size_t before = l.OpenNow();
  EXPECT_GE(before, 3u);  // stdin, stdout, stderr at least
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  EXPECT_EQ(l.OpenNow(), before + 2);
  close(p[0]);
  close(p[1]);
}

}  // namespace
}  // namespace hotpage
