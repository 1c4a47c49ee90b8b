// A main() for svg_report_fuzz.cc without libFuzzer (gcc builds, CI): runs
// LLVMFuzzerTestOneInput over the files named on the command line, then
// over kIterations deterministic pseudo-random inputs of up to 600 bytes,
// built from fragments that matter to the picture (XML specials, UTF-8 and
// invalid bytes, small numbers) and random bytes. A smoke test: the real
// coverage-guided run is the clang --config=fuzz binary.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    std::string s((std::istreambuf_iterator<char>(in)),
                  std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()),
                           s.size());
  }
  static const char* kFragments[] = {"<",
                                     "&",
                                     "\"",
                                     "'",
                                     ">",
                                     "]]>",
                                     "\xe2\x89\xa5",
                                     "\xff",
                                     "\xc0\xaf",
                                     "\xef\xbf\xbf",
                                     "\x01",
                                     "\x10",
                                     "\x7f\xff",
                                     "hotpage",
                                     "\xed\xa0\x80"};
  constexpr int kIterations = 4000;
  std::mt19937_64 rng(0x737667ULL);  // fixed seed: reproducible
  std::string buf;
  for (int it = 0; it < kIterations; ++it) {
    buf.clear();
    size_t len = rng() % 600;
    while (buf.size() < len) {
      uint64_t r = rng();
      if (r % 3 == 0) {
        buf +=
            kFragments[(r >> 8) % (sizeof(kFragments) / sizeof(kFragments[0]))];
      } else {
        buf += static_cast<char>(r >> 16);
      }
    }
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(buf.data()),
                           buf.size());
  }
  std::printf("svg fuzz driver: %d generated inputs, %d files, no crash\n",
              kIterations, argc - 1);
  return 0;
}
