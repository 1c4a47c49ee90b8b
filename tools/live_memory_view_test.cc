#include "tools/live_memory_view.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tools/base/kernel/fake_tree.h"

namespace hotpage {
namespace {

constexpr uint64_t kChunk = uint64_t{1} << 21;

// The view's huge chunks are FindHugeChunks' (its own tests are in
// tools/base/kernel/huge_chunks_test.cc), and the view swallows errors: no
// chunks known.
TEST(LiveMemoryViewTest, HugeChunksFromSmapsOrNoneOnError) {
  FakeTree tree;
  const uint64_t a = 0x40000000;  // 2 whole chunks, all anon THP
  tree.Write("/proc/9/smaps",
             absl::StrCat(absl::Hex(a), "-", absl::Hex(a + 2 * kChunk),
                          " rw-p 00000000 00:00 0\n",
                          "Anonymous:  4096 kB\nAnonHugePages:  4096 kB\n"));
  auto fs = KernelFs::Open(tree.root());
  ASSERT_TRUE(fs.ok());
  Topology topo;
  LiveMemoryView view(9, nullptr, &*fs, &topo, nullptr);
  EXPECT_EQ(view.HugeChunks(), (std::vector<uint64_t>{a, a + kChunk}));
  LiveMemoryView no_smaps(10, nullptr, &*fs, &topo, nullptr);
  EXPECT_TRUE(no_smaps.HugeChunks().empty());
}

}  // namespace
}  // namespace hotpage
