#include "tools/daemon/rounds_dir.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tools/base/kernel/fake_tree.h"

namespace hotpage {
namespace {

StateDir::FileInfo F(std::string name, uint64_t bytes, int64_t mtime) {
  return StateDir::FileInfo{std::move(name), bytes, mtime};
}

std::vector<std::string> Names(const RoundsPrunePlan& p) {
  std::vector<std::string> n;
  for (const auto& f : p.remove) n.push_back(f.name);
  return n;
}

TEST(PlanRoundsPrune, UnderTheBoundNothingGoes) {
  const RoundsPrunePlan p =
      PlanRoundsPrune({F("a.jsonl", 40, 1), F("b.jsonl", 60, 2)}, {}, 100);
  EXPECT_TRUE(p.remove.empty());
  EXPECT_EQ(p.total_bytes, 100u);
  EXPECT_FALSE(p.over);
}

TEST(PlanRoundsPrune, TheOldestEndedGoFirstUntilUnderTheBound) {
  // 170 bytes, bound 100: c (oldest) and a go, 60 left; b stays.
  const RoundsPrunePlan p = PlanRoundsPrune(
      {F("a.jsonl", 50, 20), F("b.jsonl", 60, 30), F("c.jsonl", 60, 10)}, {},
      100);
  EXPECT_EQ(Names(p), (std::vector<std::string>{"c.jsonl", "a.jsonl"}));
  EXPECT_EQ(p.removed_bytes, 110u);
  EXPECT_FALSE(p.over);
  // Equal times: by name, so the same listing gives the same plan.
  const RoundsPrunePlan q =
      PlanRoundsPrune({F("y.jsonl", 60, 5), F("x.jsonl", 60, 5)}, {}, 60);
  EXPECT_EQ(Names(q), (std::vector<std::string>{"x.jsonl"}));
}

TEST(PlanRoundsPrune, LiveFilesStayEvenWhenOldest) {
  const RoundsPrunePlan p = PlanRoundsPrune(
      {F("live.jsonl", 80, 1), F("ended.jsonl", 50, 2), F("new.jsonl", 10, 3)},
      {"live.jsonl"}, 100);
  EXPECT_EQ(Names(p), (std::vector<std::string>{"ended.jsonl"}));
  EXPECT_EQ(p.live_bytes, 80u);
  EXPECT_FALSE(p.over);
  // The live files alone past the bound: every ended one goes, still over.
  const RoundsPrunePlan q = PlanRoundsPrune(
      {F("l1.jsonl", 80, 1), F("l2.jsonl", 80, 2), F("e.jsonl", 5, 3)},
      {"l1.jsonl", "l2.jsonl"}, 100);
  EXPECT_EQ(Names(q), (std::vector<std::string>{"e.jsonl"}));
  EXPECT_TRUE(q.over);
}

class RoundsDirTest : public ::testing::Test {
 protected:
  void Plant(const std::string& name, size_t bytes, int64_t mtime_s) {
    t_.Write("/r/" + name, std::string(bytes, 'x'));
    const struct timespec times[2] = {{0, UTIME_OMIT}, {mtime_s, 0}};
    ASSERT_EQ(utimensat(AT_FDCWD, (t_.root() + "/r/" + name).c_str(), times, 0),
              0);
  }
  bool Exists(const std::string& name) {
    return std::filesystem::exists(t_.root() + "/r/" + name);
  }
  RoundsDir Open(uint64_t file_max, uint64_t dir_max) {
    absl::StatusOr<StateDir> d =
        StateDir::Open(t_.root() + "/r", "the rounds directory", "rounds");
    EXPECT_TRUE(d.ok()) << d.status();
    return RoundsDir(*std::move(d), file_max, dir_max, &log_);
  }

  FakeTree t_;
  std::ostringstream log_;
};

TEST_F(RoundsDirTest, CreatePrunesTheEndedProcessesOldestFirst) {
  t_.Mkdir("/r");
  ASSERT_EQ(chmod((t_.root() + "/r").c_str(), 0700), 0);
  Plant("w-10-1.jsonl", 400, 1000);
  Plant("w-11-2.jsonl", 400, 3000);
  Plant("w-12-3.jsonl", 400, 2000);
  Plant("notes.txt", 5000, 1);  // not a rounds file: neither counted nor gone
  t_.Write("/elsewhere.jsonl", std::string(5000, 'x'));
  t_.Symlink(t_.root() + "/elsewhere.jsonl", "/r/link.jsonl");
  RoundsDir dir = Open(/*file_max=*/500, /*dir_max=*/700);
  absl::StatusOr<std::unique_ptr<RoundsDir::File>> f =
      dir.Create("w-13-4.jsonl");
  ASSERT_TRUE(f.ok()) << f.status();
  // 1200 bytes of ended files against 700: the oldest (10) went, then 12
  // (the next oldest), and 400 bytes are left.
  EXPECT_FALSE(Exists("w-10-1.jsonl"));
  EXPECT_FALSE(Exists("w-12-3.jsonl"));
  EXPECT_TRUE(Exists("w-11-2.jsonl"));
  EXPECT_TRUE(Exists("notes.txt"));
  EXPECT_TRUE(Exists("link.jsonl"));
  EXPECT_TRUE(std::filesystem::exists(t_.root() + "/elsewhere.jsonl"));
  EXPECT_TRUE(absl::StrContains(log_.str(), "rounds: removed 2 file(s)"))
      << log_.str();
  // The new file is bounded at file_max.
  EXPECT_TRUE((*f)->get()->Append(std::string(450, 'y') + "\n").ok());
  EXPECT_FALSE((*f)->get()->Append(std::string(100, 'y') + "\n").ok());
  EXPECT_EQ((*f)->path(), t_.root() + "/r/w-13-4.jsonl");
  EXPECT_FALSE(dir.Create("w-14-5.txt").ok());
  EXPECT_FALSE(dir.Create("../w-14-5.jsonl").ok());
}

TEST_F(RoundsDirTest, ALiveFileStaysUntilItsMemberEnds) {
  RoundsDir dir = Open(/*file_max=*/500, /*dir_max=*/600);
  absl::StatusOr<std::unique_ptr<RoundsDir::File>> live =
      dir.Create("live-1-1.jsonl");
  ASSERT_TRUE(live.ok());
  ASSERT_TRUE((*live)->get()->Append(std::string(399, 'l') + "\n").ok());
  const struct timespec old[2] = {{0, UTIME_OMIT}, {1, 0}};
  ASSERT_EQ(
      utimensat(AT_FDCWD, (t_.root() + "/r/live-1-1.jsonl").c_str(), old, 0),
      0);  // the oldest file, still written
  Plant("ended-2-2.jsonl", 300, 1000);
  dir.Prune();
  // 700 bytes against 600: the ended file goes, the older live one stays.
  EXPECT_TRUE(Exists("live-1-1.jsonl"));
  EXPECT_FALSE(Exists("ended-2-2.jsonl"));
  // Its member ended: the file is an ended process's now.
  live->reset();
  Plant("ended-3-3.jsonl", 300, 2000);
  dir.Prune();
  EXPECT_FALSE(Exists("live-1-1.jsonl"));
  EXPECT_TRUE(Exists("ended-3-3.jsonl"));
}

TEST_F(RoundsDirTest, LiveFilesPastTheBoundAreSaidOnceAndKept) {
  RoundsDir dir = Open(/*file_max=*/100, /*dir_max=*/100);
  std::vector<std::unique_ptr<RoundsDir::File>> files;
  for (const char* name : {"a-1-1.jsonl", "b-2-2.jsonl"}) {
    absl::StatusOr<std::unique_ptr<RoundsDir::File>> f = dir.Create(name);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE((*f)->get()->Append(std::string(79, 'x') + "\n").ok());
    files.push_back(*std::move(f));
  }
  dir.Prune();
  dir.Prune();
  EXPECT_TRUE(Exists("a-1-1.jsonl"));
  EXPECT_TRUE(Exists("b-2-2.jsonl"));
  size_t said = 0;
  for (size_t at = 0; (at = log_.str().find("past rounds_dir_max_bytes", at)) !=
                      std::string::npos;
       ++at) {
    ++said;
  }
  EXPECT_EQ(said, 1u) << log_.str();
}

TEST_F(RoundsDirTest, FilesComeAndGoFromManyThreads) {
  // Members start and end on other threads than the pruner's (tsan).
  RoundsDir dir = Open(/*file_max=*/1000, /*dir_max=*/2000);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&dir, t] {
      for (int i = 0; i < 20; ++i) {
        absl::StatusOr<std::unique_ptr<RoundsDir::File>> f = dir.Create(
            "m-" + std::to_string(t) + "-" + std::to_string(i) + ".jsonl");
        ASSERT_TRUE(f.ok());
        ASSERT_TRUE((*f)->get()->Append(std::string(199, 'x') + "\n").ok());
      }
    });
  }
  for (int i = 0; i < 20; ++i) dir.Prune();
  for (std::thread& th : threads) th.join();
  dir.Prune();
  uint64_t total = 0;
  for (const auto& e : std::filesystem::directory_iterator(t_.root() + "/r"))
    total += e.file_size();
  EXPECT_LE(total, 2000u);
}

}  // namespace
}  // namespace hotpage
