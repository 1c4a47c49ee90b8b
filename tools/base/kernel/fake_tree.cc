#include "tools/base/kernel/fake_tree.h"

#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace hotpage {
namespace fs = std::filesystem;

FakeTree::FakeTree() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string tmpl = absl::StrCat(tmp ? tmp : "/tmp", "/hotpage_fake_XXXXXX");
  if (mkdtemp(tmpl.data()) == nullptr) {
    std::perror("mkdtemp");
    std::abort();
  }
  root_ = tmpl;
}

FakeTree::~FakeTree() {
  std::error_code ec;
  fs::remove_all(root_, ec);
}

void FakeTree::Write(absl::string_view path, absl::string_view contents) {
  fs::path p = absl::StrCat(root_, path);
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  if (!out) std::abort();
}

void FakeTree::Mkdir(absl::string_view path) {
  fs::create_directories(absl::StrCat(root_, path));
}

void FakeTree::Symlink(absl::string_view target, absl::string_view path) {
  fs::path p = absl::StrCat(root_, path);
  fs::create_directories(p.parent_path());
  fs::create_symlink(std::string(target), p);
}

void FakeTree::Remove(absl::string_view path) {
  fs::remove(absl::StrCat(root_, path));
}

void FakeTree::WriteProcStat(int pid, uint64_t start_ticks) {
  Write(absl::StrCat("/proc/", pid, "/stat"),
        absl::StrCat(pid,
                     " (workload) S 1 100 100 0 -1 4194560 1234 0 0 0 5 7 "
                     "0 0 20 0 1 0 ",
                     start_ticks,
                     " 12345678 300 18446744073709551615 1 1 0 0 0 0 0 0 "
                     "0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n"));
}

}  // namespace hotpage
