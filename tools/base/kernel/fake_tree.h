// FakeTree: a throw-away directory that stands in for "/" in tests, so that
// KernelFs (and everything above it) reads a sysfs/procfs of the test's
// making. Removed on destruction.

#ifndef HOTPAGE_TOOLS_BASE_KERNEL_FAKE_TREE_H_
#define HOTPAGE_TOOLS_BASE_KERNEL_FAKE_TREE_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace hotpage {

class FakeTree {
 public:
  FakeTree();  // Creates a fresh directory under $TEST_TMPDIR (or /tmp).
  ~FakeTree();
  FakeTree(const FakeTree&) = delete;
  FakeTree& operator=(const FakeTree&) = delete;

  const std::string& root() const { return root_; }

  // Writes `contents` to root + path, creating parent directories.
  void Write(absl::string_view path, absl::string_view contents);
  // Creates the directory root + path and its parents.
  void Mkdir(absl::string_view path);
  // Creates a symlink at root + path pointing to `target` (verbatim).
  void Symlink(absl::string_view target, absl::string_view path);
  // Removes root + path (file or empty directory).
  void Remove(absl::string_view path);
  // Writes /proc/PID/stat of a sleeping process named "workload" that
  // started at `start_ticks` (field 22), as ProcessHandle::Attach reads it.
  void WriteProcStat(int pid, uint64_t start_ticks = 1000);

 private:
  std::string root_;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_BASE_KERNEL_FAKE_TREE_H_
