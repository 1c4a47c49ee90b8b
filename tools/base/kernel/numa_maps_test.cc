#include "tools/base/kernel/numa_maps.h"

#include "gtest/gtest.h"

namespace hotpage {
namespace {

// Lines as Linux 6.12 prints them.
constexpr char kNumaMaps[] =
    "55d0c6a00000 default file=/usr/bin/cat mapped=2 active=0 N0=2 "
    "kernelpagesize_kB=4\n"
    "55d0c7c3e000 default heap anon=33 dirty=33 active=0 N0=33 "
    "kernelpagesize_kB=4\n"
    "7f1200000000 bind:1 anon=512 dirty=512 N1=512 kernelpagesize_kB=4\n"
    "7f1300000000 prefer (many):0,2 anon=10 dirty=10 N0=4 N2=6 "
    "kernelpagesize_kB=4\n"
    "7f1400000000 weighted interleave:0-1 anon=8 dirty=8 N0=6 N1=2 "
    "kernelpagesize_kB=4\n"
    "7f1500000000 interleave=static:0-3 anon=4 N0=1 N1=1 N2=1 N3=1 "
    "kernelpagesize_kB=4\n"
    "7f1600000000 prefer=relative|balancing:1 anon=1 N1=1 kernelpagesize_kB=4\n"
    "7f1700000000 local anon=1 N0=1 kernelpagesize_kB=4\n"
    "7f1800000000 default file=/dev/hugepages/x\\040y huge dirty=1 N1=1 "
    "kernelpagesize_kB=2048\n"
    "7ffd12345000 default stack anon=3 dirty=3 N0=3 kernelpagesize_kB=4 "
    "newkey=9\n";

TEST(ParseNumaMaps, EveryPolicyMode) {
  auto r = ParseNumaMaps(kNumaMaps);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 10u);
  const auto& v = *r;
  EXPECT_EQ(v[0].mode, MempolicyMode::kDefault);
  EXPECT_EQ(v[0].file, "/usr/bin/cat");
  EXPECT_TRUE(v[1].heap);
  EXPECT_TRUE(v[1].anon);
  EXPECT_EQ(v[2].start, 0x7f1200000000u);
  EXPECT_EQ(v[2].mode, MempolicyMode::kBind);
  EXPECT_EQ(v[2].nodes, (std::vector<int>{1}));
  EXPECT_EQ(v[2].pages_on_node,
            (std::vector<std::pair<int, uint64_t>>{{1, 512}}));
  EXPECT_EQ(v[3].mode, MempolicyMode::kPreferredMany);
  EXPECT_EQ(v[3].nodes, (std::vector<int>{0, 2}));
  EXPECT_EQ(v[3].pages_on_node.size(), 2u);
  EXPECT_EQ(v[4].mode, MempolicyMode::kWeightedInterleave);
  EXPECT_EQ(v[4].nodes, (std::vector<int>{0, 1}));
  EXPECT_EQ(v[5].mode, MempolicyMode::kInterleave);
  EXPECT_TRUE(v[5].static_nodes);
  EXPECT_EQ(v[5].nodes.size(), 4u);
  EXPECT_EQ(v[6].mode, MempolicyMode::kPreferred);
  EXPECT_TRUE(v[6].relative_nodes);
  EXPECT_TRUE(v[6].numa_balancing);
  EXPECT_EQ(v[7].mode, MempolicyMode::kLocal);
  EXPECT_TRUE(v[8].huge);
  EXPECT_EQ(v[8].page_size, 2u << 20);
  EXPECT_EQ(v[8].file, "/dev/hugepages/x\\040y");
  EXPECT_TRUE(v[9].stack);
}

TEST(NumaMapsRange, OnlyBindForbidsNodes) {
  auto r = ParseNumaMaps(kNumaMaps);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE((*r)[2].Forbids(0));  // bind:1
  EXPECT_FALSE((*r)[2].Forbids(1));
  EXPECT_FALSE((*r)[3].Forbids(1));  // prefer (many) is advice, not a bound
  EXPECT_FALSE((*r)[0].Forbids(5));
}

TEST(ParseNumaMaps, ErrorsNameTheLine) {
  for (const char* bad :
       {"zzzz default\n", "7f00 sometimes:0\n", "7f00 bind\n", "7f00 bind:x\n",
        "7f00 bind=weird:0\n", "7f00 default N0=abc\n",
        "7f00 default N99999999=1\n", "7f00 default kernelpagesize_kB=0\n"}) {
    auto r = ParseNumaMaps(std::string("7e00 default N0=1\n") + bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("line 2"), std::string::npos)
        << r.status();
  }
}

TEST(ParseProcMaps, AndJoin) {
  auto maps = ParseProcMaps(
      "55d0c6a00000-55d0c6a02000 r--p 00000000 08:01 123   /usr/bin/cat\n"
      "7f1200000000-7f1220000000 rw-p 00000000 00:00 0\n"
      "7f1300000000-7f1300100000 rw-p 00000000 00:00 0    [anon: my name]\n");
  ASSERT_TRUE(maps.ok()) << maps.status();
  ASSERT_EQ(maps->size(), 3u);
  EXPECT_EQ((*maps)[1].end, 0x7f1220000000u);
  EXPECT_EQ((*maps)[2].perms, "rw-p");
  auto ranges = ParseNumaMaps(kNumaMaps);
  size_t unmatched = JoinWithMaps(*ranges, *maps);
  EXPECT_EQ((*ranges)[0].end, 0x55d0c6a02000u);
  EXPECT_EQ((*ranges)[2].end, 0x7f1220000000u);
  EXPECT_EQ((*ranges)[3].end, 0x7f1300100000u);
  EXPECT_EQ(unmatched, 7u);
  EXPECT_FALSE(ParseProcMaps("7f00-7e00 rw-p 0 0:0 0\n").ok());  // end <= start
  EXPECT_FALSE(ParseProcMaps("garbage\n").ok());
}

TEST(SmapsTest, ParsesThpFieldsPerVma) {
  // From a 6.12 guest: a 4 MiB THP-backed anonymous area and a file mapping.
  const char* text =
      "7f1c00000000-7f1c00400000 rw-p 00000000 00:00 0 \n"
      "Size:               4096 kB\n"
      "Rss:                4096 kB\n"
      "Anonymous:          4096 kB\n"
      "AnonHugePages:      4096 kB\n"
      "THPeligible:    1\n"
      "VmFlags: rd wr mr mw me ac sd hg\n"
      "55d0c0a00000-55d0c0a21000 r--p 00000000 08:01 1234   /usr/bin/odd: "
      "name\n"
      "Anonymous:             0 kB\n"
      "AnonHugePages:         0 kB\n";
  auto v = ParseSmaps(text);
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_EQ(v->size(), 2u);
  EXPECT_EQ((*v)[0].start, 0x7f1c00000000u);
  EXPECT_EQ((*v)[0].end, 0x7f1c00400000u);
  EXPECT_EQ((*v)[0].anonymous_bytes, 4096u * 1024);
  EXPECT_EQ((*v)[0].anon_huge_bytes, 4096u * 1024);
  EXPECT_EQ((*v)[1].anon_huge_bytes, 0u);
}

TEST(SmapsTest, MalformedLinesAreErrorsNamingTheLine) {
  for (const char* bad :
       {"zz-10 rw-p 0 0:0 0\n", "10-5 rw-p\n",
        "1000-2000 rw-p\nAnonHugePages: x kB\n",
        "1000-2000 rw-p\nAnonHugePages: 4 MB\n", "AnonHugePages: 4 kB\n"}) {
    auto v = ParseSmaps(bad);
    ASSERT_FALSE(v.ok()) << bad;
    EXPECT_NE(v.status().message().find("smaps line"), std::string::npos)
        << v.status();
  }
}

}  // namespace
}  // namespace hotpage
