// FakePageMover's kernel-like behaviour, and the live SyscallPageMover on
// this (single-node) machine: query, a no-op move, ENOENT/EFAULT, ESRCH.

#include "migrator/page_mover.h"

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "gtest/gtest.h"
#include "migrator/fake_page_mover.h"

namespace hotpage {
namespace {

constexpr uint64_t kBase = 0x7f0000000000;
constexpr uint32_t k4K = 4096;
constexpr uint32_t k2M = 2 << 20;

std::vector<int> Unset(size_t n) {
  return std::vector<int>(n, kPageStatusUnset);
}

TEST(FakePageMoverTest, QueryReportsNodesAndErrors) {
  FakePageMover m;
  m.AddPages(kBase, 2, k4K, 1);
  m.AddPages(kBase + 2 * k4K, 1, k4K, -ENOENT);  // never touched
  std::vector<uint64_t> pages = {kBase, kBase + k4K + 100, kBase + 2 * k4K,
                                 kBase + 3 * k4K};
  std::vector<int> status = Unset(pages.size());
  EXPECT_EQ(m.Query(42, pages, absl::MakeSpan(status)), 0);
  EXPECT_EQ(status, (std::vector<int>{1, 1, -ENOENT, -EFAULT}));
  ASSERT_EQ(m.calls().size(), 1u);
  EXPECT_EQ(m.calls()[0].op, FakePageMover::Op::kQuery);
  EXPECT_EQ(m.calls()[0].pid, 42);
}

TEST(FakePageMoverTest, MoveWritesTargetForMovedAndAlreadyThere) {
  FakePageMover m;
  m.AddPages(kBase, 3, k4K, 1);
  m.SetNode(kBase + 2 * k4K, 0);
  std::vector<uint64_t> pages = {kBase, kBase + k4K, kBase + 2 * k4K};
  std::vector<int> nodes(3, 0), status = Unset(3);
  EXPECT_EQ(m.Move(1, pages, nodes, absl::MakeSpan(status)), 0);
  EXPECT_EQ(status, (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(m.CountOn(0), 3u);
  EXPECT_EQ(m.pages_migrated(), 2u);
}

TEST(FakePageMoverTest, HugePageMovesAsAUnitAndASecondAddressIsBusy) {
  FakePageMover m;
  m.AddPages(kBase, 1, k2M, 1);
  std::vector<uint64_t> pages = {kBase + 5 * k4K, kBase + 9 * k4K};
  std::vector<int> nodes(2, 0), status = Unset(2);
  EXPECT_EQ(m.Move(1, pages, nodes, absl::MakeSpan(status)), 0);
  EXPECT_EQ(status, (std::vector<int>{0, -EBUSY}));
  EXPECT_EQ(m.NodeOf(kBase), 0);
  EXPECT_EQ(m.NodeOf(kBase + k2M - 1), 0);
  EXPECT_EQ(m.NodeOf(kBase + k2M), std::nullopt);
}

TEST(FakePageMoverTest, InjectedPageErrorsCountDown) {
  FakePageMover m;
  m.AddPages(kBase, 2, k4K, 1);
  m.InjectMoveError(kBase, EBUSY, 1);
  m.InjectMoveError(kBase + k4K, EACCES);  // for ever
  std::vector<uint64_t> pages = {kBase, kBase + k4K};
  std::vector<int> nodes(2, 0), status = Unset(2);
  EXPECT_EQ(m.Move(1, pages, nodes, absl::MakeSpan(status)), 0);
  EXPECT_EQ(status, (std::vector<int>{-EBUSY, -EACCES}));
  status = Unset(2);
  EXPECT_EQ(m.Move(1, pages, nodes, absl::MakeSpan(status)), 0);
  EXPECT_EQ(status, (std::vector<int>{0, -EACCES}));
  m.InjectQueryError(kBase, EFAULT, 1);
  status = Unset(2);
  EXPECT_EQ(m.Query(1, pages, absl::MakeSpan(status)), 0);
  EXPECT_EQ(status, (std::vector<int>{-EFAULT, 1}));
}

TEST(FakePageMoverTest, FullNodePerPageAndCallLevel) {
  FakePageMover m;
  m.AddPages(kBase, 2, k4K, 1);
  std::vector<uint64_t> pages = {kBase, kBase + k4K};
  std::vector<int> nodes(2, 0), status = Unset(2);
  m.SetNodeFull(0, true);
  EXPECT_EQ(m.Move(1, pages, nodes, absl::MakeSpan(status)), 0);
  EXPECT_EQ(status, (std::vector<int>{-ENOMEM, -ENOMEM}));
  m.SetNodeFull(0, true, /*call_level=*/true);
  pages.push_back(kBase + 100 * k4K);  // unmapped: status written first
  nodes.push_back(0);
  status = Unset(3);
  EXPECT_EQ(m.Move(1, pages, nodes, absl::MakeSpan(status)), -ENOMEM);
  EXPECT_EQ(status,
            (std::vector<int>{kPageStatusUnset, kPageStatusUnset, -EFAULT}));
  m.SetNodeFull(0, false);
  status = Unset(3);
  EXPECT_EQ(m.Move(1, pages, nodes, absl::MakeSpan(status)), 0);
  EXPECT_EQ(status, (std::vector<int>{0, 0, -EFAULT}));
}

TEST(FakePageMoverTest, PartialGroupReturnsCountAndLeavesStatusUnset) {
  FakePageMover m;
  m.AddPages(kBase, 4, k4K, 1);
  std::vector<uint64_t> pages = {kBase, kBase + k4K, kBase + 2 * k4K,
                                 kBase + 3 * k4K};
  std::vector<int> nodes = {0, 0, 2, 2}, status = Unset(4);
  m.InjectPartialGroup(1);
  // Group {0,1} -> node 0: one migrates, one does not; group {2,3} is never
  // reached. 1 + 2 pages not migrated.
  EXPECT_EQ(m.Move(1, pages, nodes, absl::MakeSpan(status)), 3);
  EXPECT_EQ(status, Unset(4));
  EXPECT_EQ(m.NodeOf(kBase), 0);
  EXPECT_EQ(m.NodeOf(kBase + k4K), 1);
  EXPECT_EQ(m.NodeOf(kBase + 2 * k4K), 1);
}

TEST(FakePageMoverTest, CallErrorsWriteNothing) {
  FakePageMover m;
  m.AddPages(kBase, 1, k4K, 1);
  std::vector<uint64_t> pages = {kBase};
  std::vector<int> nodes = {0}, status = Unset(1);
  m.InjectCallError(FakePageMover::Op::kMove, ESRCH);
  m.InjectCallError(FakePageMover::Op::kQuery, EPERM, 2);
  EXPECT_EQ(m.Move(1, pages, nodes, absl::MakeSpan(status)), -ESRCH);
  EXPECT_EQ(status, Unset(1));
  EXPECT_EQ(m.Query(1, pages, absl::MakeSpan(status)), -EPERM);
  EXPECT_EQ(m.Query(1, pages, absl::MakeSpan(status)), -EPERM);
  EXPECT_EQ(m.Query(1, pages, absl::MakeSpan(status)), 0);
  EXPECT_EQ(m.Move(1, pages, nodes, absl::MakeSpan(status)), 0);
  EXPECT_EQ(m.query_calls(), 3u);
  EXPECT_EQ(m.move_calls(), 2u);
}

// --- The live kernel -------------------------------------------------------

class SyscallPageMoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    page_ = sysconf(_SC_PAGESIZE);
    len_ = 8 * page_;
    region_ = static_cast<char*>(mmap(nullptr, len_, PROT_READ | PROT_WRITE,
                                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(region_, MAP_FAILED);
    for (size_t i = 0; i < 4; ++i) region_[i * page_] = 1;  // 4..7 untouched
  }
  void TearDown() override { munmap(region_, len_); }
  uint64_t Addr(size_t i) const {
    return reinterpret_cast<uint64_t>(region_) + i * page_;
  }

  size_t page_ = 0, len_ = 0;
  char* region_ = nullptr;
  SyscallPageMover mover_;
};

TEST_F(SyscallPageMoverTest, QueryShowsNodeOrNotPresent) {
  std::vector<uint64_t> pages = {Addr(0), Addr(3), Addr(5)};
  std::vector<int> status = Unset(3);
  ASSERT_EQ(mover_.Query(0, pages, absl::MakeSpan(status)), 0);
  EXPECT_GE(status[0], 0);
  EXPECT_EQ(status[1], status[0]);
  EXPECT_EQ(status[2], -ENOENT);
  // By pid too (our own).
  status = Unset(3);
  ASSERT_EQ(mover_.Query(getpid(), pages, absl::MakeSpan(status)), 0);
  EXPECT_GE(status[0], 0);
}

TEST_F(SyscallPageMoverTest, MoveToTheCurrentNodeAndErrors) {
  std::vector<uint64_t> pages = {Addr(0), Addr(1)};
  std::vector<int> status = Unset(2);
  ASSERT_EQ(mover_.Query(0, pages, absl::MakeSpan(status)), 0);
  const int node = status[0];
  ASSERT_GE(node, 0);
  // Add an untouched page and an unmapped address.
  const uint64_t unmapped = Addr(0) + len_ + (1 << 30);
  pages = {Addr(0), Addr(1), Addr(6), unmapped};
  std::vector<int> nodes(pages.size(), node);
  status = Unset(pages.size());
  ASSERT_EQ(mover_.Move(0, pages, nodes, absl::MakeSpan(status)), 0);
  EXPECT_EQ(status[0], node);
  EXPECT_EQ(status[1], node);
  EXPECT_EQ(status[2], -ENOENT);
  EXPECT_EQ(status[3], -EFAULT);
}

TEST_F(SyscallPageMoverTest, GoneProcessIsEsrch) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  std::vector<uint64_t> pages = {Addr(0)};
  std::vector<int> status = Unset(1);
  EXPECT_EQ(mover_.Query(child, pages, absl::MakeSpan(status)), -ESRCH);
}

}  // namespace
}  // namespace hotpage
