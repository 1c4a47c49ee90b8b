#include "tools/base/kernel/huge_chunks.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tools/base/kernel/fake_tree.h"
#include "tools/base/kernel/kernel_fs.h"

namespace hotpage {
namespace {

constexpr uint64_t kChunk = uint64_t{1} << 21;
constexpr uint64_t kPresent = uint64_t{1} << 63;
constexpr uint64_t kThp = uint64_t{1} << 22;

// Writes one 8-byte entry at `offset` of a (sparse) file.
void PutU64(const std::string& path, uint64_t offset, uint64_t v) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT, 0600);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(pwrite(fd, &v, 8, static_cast<off_t>(offset)), 8);
  close(fd);
}

std::string Vma(uint64_t start, uint64_t end, uint64_t anon_kb,
                uint64_t huge_kb) {
  return absl::StrCat(absl::Hex(start), "-", absl::Hex(end),
                      " rw-p 00000000 00:00 0\n", "Anonymous:  ", anon_kb,
                      " kB\nAnonHugePages:  ", huge_kb, " kB\n");
}

// A fully THP-backed VMA counts every aligned chunk wholly inside it; a
// partly backed one is checked chunk by chunk in pagemap + kpageflags; a
// VMA without THP never counts; the cap holds.
TEST(FindHugeChunksTest, SmapsThenPagemapAndKpageflags) {
  FakeTree tree;
  const uint64_t a = 0x40000000;  // 3 whole chunks + 4 KiB, all anon THP
  const uint64_t b = 0x80000000;  // 3 chunks, partly THP: the second is
  const uint64_t c = 0xc0000000;  // no THP
  tree.Write("/proc/9/smaps", Vma(a, a + 3 * kChunk + 4096, 6144, 6144) +
                                  Vma(b, b + 3 * kChunk, 6144, 2048) +
                                  Vma(c, c + kChunk, 2048, 0));
  const std::string pagemap = tree.root() + "/proc/9/pagemap";
  const std::string kpageflags = tree.root() + "/proc/kpageflags";
  PutU64(pagemap, (b / 4096) * 8, kPresent | 200);             // not THP
  PutU64(pagemap, ((b + kChunk) / 4096) * 8, kPresent | 201);  // THP
  PutU64(pagemap, ((b + 2 * kChunk) / 4096) * 8, 201);         // not present
  PutU64(kpageflags, 200 * 8, 0);
  PutU64(kpageflags, 201 * 8, kThp);
  auto fs = KernelFs::Open(tree.root());
  ASSERT_TRUE(fs.ok());
  auto chunks = FindHugeChunks(*fs, 9, 100);
  ASSERT_TRUE(chunks.ok()) << chunks.status();
  EXPECT_EQ(*chunks,
            (std::vector<uint64_t>{a, a + kChunk, a + 2 * kChunk, b + kChunk}));
  auto capped = FindHugeChunks(*fs, 9, 2);
  ASSERT_TRUE(capped.ok());
  EXPECT_EQ(capped->size(), 2u);
  EXPECT_FALSE(FindHugeChunks(*fs, 10, 100).ok());  // no smaps
}

TEST(FindHugeChunksTest, WithoutPrivilegePfnsReadZeroAndChunksAreSkipped) {
  FakeTree tree;
  const uint64_t b = 0x80000000;
  tree.Write("/proc/9/smaps", Vma(b, b + kChunk, 4096, 2048));
  PutU64(tree.root() + "/proc/9/pagemap", (b / 4096) * 8,
         kPresent);  // PFN hidden
  PutU64(tree.root() + "/proc/kpageflags", 0, kThp);
  auto fs = KernelFs::Open(tree.root());
  ASSERT_TRUE(fs.ok());
  auto chunks = FindHugeChunks(*fs, 9, 100);
  ASSERT_TRUE(chunks.ok());
  EXPECT_TRUE(chunks->empty());
}

// A machine without anonymous THP (/proc/vmstat) has no chunks to find:
// the process's smaps, which walks its page tables, is not read (here it
// does not exist, so reading it would fail). With THP somewhere, or
// vmstat unreadable or without the field, smaps is read as before.
TEST(FindHugeChunksTest, NoTransparentHugePagesOnTheMachineReadsNoSmaps) {
  FakeTree tree;
  auto fs = KernelFs::Open(tree.root());
  ASSERT_TRUE(fs.ok());
  EXPECT_FALSE(NoAnonHugePages(*fs));  // no vmstat: unknown
  EXPECT_FALSE(FindHugeChunks(*fs, 9, 100).ok());
  tree.Write("/proc/vmstat", "nr_free_pages 100\nnr_anon_pages 7\n");
  EXPECT_FALSE(NoAnonHugePages(*fs));  // no field: unknown
  tree.Write("/proc/vmstat",
             "nr_free_pages 100\nnr_anon_transparent_hugepages 0\n"
             "nr_file_hugepages 3\n");
  EXPECT_TRUE(NoAnonHugePages(*fs));
  auto none = FindHugeChunks(*fs, 9, 100);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());
  tree.Write("/proc/vmstat", "nr_anon_transparent_hugepages 2\n");
  EXPECT_FALSE(NoAnonHugePages(*fs));
  EXPECT_FALSE(FindHugeChunks(*fs, 9, 100).ok());  // smaps is read
  tree.Write("/proc/vmstat", "nr_anon_transparent_hugepages x\n");
  EXPECT_FALSE(NoAnonHugePages(*fs));
}

}  // namespace
}  // namespace hotpage
