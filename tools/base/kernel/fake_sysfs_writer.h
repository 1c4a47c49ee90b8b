// FakeSysfsLog: a SysfsWriter for tests. Every write is recorded, in order,
// with the errno it returned, and (unless the hook says otherwise) stored as
// the whole content of the file under a FakeTree, so that a KernelFs opened
// on the same tree reads back what was written.
//
// A test plays the kernel with the hook, which runs before anything is
// stored and returns:
//   0                      store the value in the file (it must exist, as a
//                          sysfs attribute must: a missing file is ENOENT,
//                          a directory EISDIR)
//   an errno (> 0)         fail with it; nothing is stored
//   kHandled               the hook updated the tree itself (e.g. a command
//                          word written to a `state` file that must keep
//                          reading "on"); success
//
// The log outlives the writers it hands out (NewWriter), so a test can
// inspect it after the object under test, which owns its writer, is gone.
// Single-threaded, or serialized by the caller (DamonSource writes under
// its own mutex).

#ifndef HOTPAGE_TOOLS_BASE_KERNEL_FAKE_SYSFS_WRITER_H_
#define HOTPAGE_TOOLS_BASE_KERNEL_FAKE_SYSFS_WRITER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "tools/base/kernel/fake_tree.h"
#include "tools/base/kernel/sysfs_writer.h"

namespace hotpage {

struct FakeSysfsWrite {
  std::string path;
  std::string value;
  int err = 0;  // what the write returned (0 = success)
};

class FakeSysfsLog {
 public:
  static constexpr int kHandled = -1;
  using Hook =
      std::function<int(absl::string_view path, absl::string_view value)>;

  explicit FakeSysfsLog(FakeTree* tree) : tree_(tree) {}
  FakeSysfsLog(const FakeSysfsLog&) = delete;
  FakeSysfsLog& operator=(const FakeSysfsLog&) = delete;

  void set_hook(Hook hook) { hook_ = std::move(hook); }
  const std::vector<FakeSysfsWrite>& writes() const { return writes_; }
  void clear() { writes_.clear(); }
  // "path=value" per write; failed ones as "path=value !ERRNAME".
  std::vector<std::string> Lines() const;

  // A new writer over this log; it must not outlive the log or the tree.
  std::unique_ptr<SysfsWriter> NewWriter();

  // What a writer's WriteErrno() does.
  int Write(absl::string_view path, absl::string_view value);
  FakeTree* tree() const { return tree_; }

 private:
  FakeTree* tree_;
  Hook hook_;
  std::vector<FakeSysfsWrite> writes_;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_BASE_KERNEL_FAKE_SYSFS_WRITER_H_
