// A main() for fuzz targets built without libFuzzer (gcc builds, CI): runs
// LLVMFuzzerTestOneInput over every file named on the command line, then
// over kIterations deterministic pseudo-random inputs drawn mostly from the
// characters kernel text formats use, so that the parsers' edge cases are
// reached. It is a smoke test that fails on a crash or a sanitizer report;
// the real coverage-guided run is the clang --config=fuzz binary.

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
  static const char kAlphabet[] =
      "0123456789-,: \n\t[]kBNodeMemTotalFreeprefermanybindinterleave=N"
      "\xff\x00";
  constexpr int kIterations = 200000;
  std::mt19937_64 rng(0x686f74706167ULL);  // fixed seed: reproducible
  std::string buf;
  for (int it = 0; it < kIterations; ++it) {
    size_t len = rng() % 96;
    buf.resize(len);
    for (size_t j = 0; j < len; ++j) {
      uint64_t r = rng();
      buf[j] = (r & 7) == 0 ? static_cast<char>(r >> 8)
                            : kAlphabet[(r >> 8) % (sizeof(kAlphabet) - 1)];
    }
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(buf.data()),
                           buf.size());
  }
  std::printf("fuzz driver: %d generated inputs, %d files, no crash\n",
              kIterations, argc - 1);
  return 0;
}
