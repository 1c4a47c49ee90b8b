// json_expect EXPECTED.json ACTUAL.json
//
// Checks that the JSON document in ACTUAL contains the pattern in EXPECTED
// (JsonContains in json_contains.h: objects match by subset, arrays
// elementwise with equal length, scalars by value). Prints every mismatch as
// "PATH: message". Exit status: 0 match, 1 mismatch, 2 usage or
// unreadable/invalid input. Used by the VM topology tests instead of
// python3/jq.

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/vm/json_contains.h"
#include "tools/base/json.h"

namespace hotpage {
namespace {

constexpr size_t kMaxInputBytes = 16 << 20;

bool ReadFile(const char* path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream buf;
  buf << in.rdbuf();
  *out = buf.str();
  return !in.bad() && out->size() <= kMaxInputBytes;
}

int Main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: json_expect EXPECTED.json ACTUAL.json\n";
    return 2;
  }
  Json docs[2];
  for (int i = 0; i < 2; ++i) {
    std::string text;
    if (!ReadFile(argv[i + 1], &text)) {
      std::cerr << "json_expect: cannot read " << argv[i + 1]
                << " (missing, unreadable or over 16 MiB)\n";
      return 2;
    }
    absl::StatusOr<Json> doc = ParseJson(text);
    if (!doc.ok()) {
      std::cerr << "json_expect: " << argv[i + 1] << ": "
                << doc.status().message() << "\n";
      return 2;
    }
    docs[i] = *std::move(doc);
  }
  std::vector<std::string> mismatches = JsonContains(docs[0], docs[1]);
  for (const std::string& m : mismatches) std::cout << "MISMATCH " << m << "\n";
  if (!mismatches.empty()) {
    std::cout << "json_expect: " << mismatches.size()
              << " mismatch(es) between " << argv[1] << " and " << argv[2]
              << "\n";
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace hotpage

int main(int argc, char** argv) { return hotpage::Main(argc, argv); }
