#include "sampler/trace/crc32c.h"

#include <cstring>
#include <random>
#include <string>

#include "gtest/gtest.h"

namespace hotpage {
namespace {

// Check values from RFC 3720 (iSCSI) appendix B.4 and the CRC catalogue.
TEST(Crc32cTest, KnownVectors) {
  EXPECT_EQ(Crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(Crc32c("", 0), 0u);
  std::string zeros(32, '\0');
  EXPECT_EQ(Crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);
  std::string ones(32, '\xff');
  EXPECT_EQ(Crc32c(ones.data(), ones.size()), 0x62A8AB43u);
  std::string inc(32, '\0');
  for (int i = 0; i < 32; ++i) inc[i] = static_cast<char>(i);
  EXPECT_EQ(Crc32c(inc.data(), inc.size()), 0x46DD794Eu);
}

TEST(Crc32cTest, PortableMatchesDispatchedOnEveryLengthAndAlignment) {
  std::mt19937_64 rng(3);
  std::string buf(300, '\0');
  for (char& c : buf) c = static_cast<char>(rng());
  for (size_t off = 0; off < 8; ++off) {
    for (size_t len = 0; off + len <= buf.size(); ++len) {
      ASSERT_EQ(internal::Crc32cPortable(0, buf.data() + off, len),
                Crc32c(buf.data() + off, len))
          << "off=" << off << " len=" << len;
    }
  }
}

TEST(Crc32cTest, ExtendIsConcatenation) {
  const char* s = "hotpage trace block payload";
  const size_t n = std::strlen(s);
  for (size_t cut = 0; cut <= n; ++cut) {
    EXPECT_EQ(Crc32cExtend(Crc32c(s, cut), s + cut, n - cut), Crc32c(s, n));
    EXPECT_EQ(internal::Crc32cPortable(internal::Crc32cPortable(0, s, cut),
                                       s + cut, n - cut),
              Crc32c(s, n));
  }
}

TEST(Crc32cTest, ReportsImplementation) {
#if defined(__x86_64__)
  if (!__builtin_cpu_supports("sse4.2")) GTEST_SKIP() << "CPU lacks SSE 4.2";
  EXPECT_TRUE(internal::Crc32cIsHardware());
#else
  EXPECT_FALSE(internal::Crc32cIsHardware());
#endif
}

}  // namespace
}  // namespace hotpage
