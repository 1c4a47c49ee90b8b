// Streaming: 10M samples (640 MB as raw records) go from a TraceWriter
// through a pipe into a TraceReader on another thread. The trace never
// exists whole anywhere, so the test only passes if both sides stream; it
// also checks that the process's peak RSS grows by far less than the data
// and that the reader's buffers stay at one block.

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "sampler/trace/trace_reader.h"
#include "sampler/trace/trace_testing.h"
#include "sampler/trace/trace_writer.h"

namespace hotpage {
namespace {

constexpr uint64_t kSamples = 10'000'000;

// Peak resident set size of this process so far, in KiB (VmHWM).
int64_t PeakRssKib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6));
  }
  return -1;
}

// Order-sensitive digest of a sample stream, the same on both sides.
struct Digest {
  uint64_t h = 0x6a09e667f3bcc908ull;
  void Add(const Sample& s) {
    uint64_t w[8];
    std::memcpy(w, &s, sizeof(w));
    for (uint64_t v : w) h = (h ^ v) * 0x100000001b3ull + (h >> 29);
  }
};

TEST(TraceStreamingTest, TenMillionSamplesThroughAPipeInConstantMemory) {
  const int64_t rss_before_kib = PeakRssKib();
  ASSERT_GT(rss_before_kib, 0) << "no VmHWM in /proc/self/status";
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);

  Digest written;
  absl::Status write_status;
  std::thread writer([&] {
    auto w = TraceWriter::Create(MakeFdSink(fds[1], "pipe:w", /*owns_fd=*/true),
                                 "pipe:w", testing_internal::TestHeader(), {});
    if (!w.ok()) {
      write_status = w.status();
      ::close(fds[1]);
      return;
    }
    testing_internal::SyntheticSamples gen(99);
    for (uint64_t i = 0; i < kSamples; ++i) {
      const Sample s = gen.Next();
      written.Add(s);
      write_status = (*w)->Append(s);
      if (!write_status.ok()) return;
      if (i % 1'000'000 == 0) {
        write_status = (*w)->SetCounters(
            {static_cast<uint32_t>(i % 8), i / 1'000'000, 0, 0, 0});
        if (!write_status.ok()) return;
      }
    }
    write_status = (*w)->Close();
  });

  Digest read;
  uint64_t n = 0;
  size_t max_buffer_bytes = 0;
  absl::Status read_status;
  bool complete = false;
  {
    auto r = TraceReader::Open(MakeFdSource(fds[0], "pipe:r", /*owns_fd=*/true),
                               "pipe:r");
    ASSERT_TRUE(r.ok()) << r.status();
    while (true) {
      auto block = (*r)->Next();
      if (!block.ok()) {
        read_status = block.status();
        break;
      }
      if (block->empty()) break;
      for (const Sample& s : *block) read.Add(s);
      n += block->size();
      max_buffer_bytes = std::max(max_buffer_bytes, (*r)->buffer_bytes());
    }
    complete = (*r)->complete();
  }
  writer.join();
  ASSERT_TRUE(write_status.ok()) << write_status;
  ASSERT_TRUE(read_status.ok()) << read_status;
  EXPECT_TRUE(complete);
  EXPECT_EQ(n, kSamples);
  EXPECT_EQ(read.h, written.h);

  // One block of 4096 samples: 256 KiB of Samples plus its stored and
  // decompressed bytes (under 160 KiB each, rounded up to 16 KiB).
  EXPECT_LE(max_buffer_bytes, 768u << 10);
  const int64_t growth_kib = PeakRssKib() - rss_before_kib;
  RecordProperty("peak_rss_growth_kib", std::to_string(growth_kib));
  RecordProperty("reader_buffer_bytes", std::to_string(max_buffer_bytes));
  // 640 MB of samples went through; the process may grow by a few MB
  // (writer buffers, zstd contexts, the pipe, thread stack) and no more.
  EXPECT_LT(growth_kib, 32 * 1024)
      << "peak RSS grew by " << growth_kib << " KiB";
}

}  // namespace
}  // namespace hotpage
