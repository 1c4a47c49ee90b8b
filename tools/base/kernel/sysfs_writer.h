// SysfsWriter: the one seam through which hotpage WRITES to sysfs (DAMON's
// admin tree today; sysctls and mempolicy weights later).
//
// Paths are absolute as the kernel spells them ("/sys/kernel/mm/damon/admin/
// kdamonds/nr_kdamonds"), like KernelFs reads. Two implementations:
//  - LiveSysfsWriter: resolves the path under a root directory ("/" on the
//    live machine) with openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS) and
//    opens it O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW (never O_CREAT: a
//    sysfs attribute that does not exist is an error, not a file to make),
//    then issues ONE write(2) of the value, because a sysfs store() sees each
//    write() as a whole command. O_TRUNC is a no-op on sysfs and makes the
//    writer usable on a plain directory tree in tests.
//  - FakeSysfsWriter (fake_sysfs_writer.h, testonly): records every write in
//    order and stores it in a FakeTree, with a hook that lets a test play the
//    kernel (create directories, refuse with an errno).
//
// Errors name the value and the file as the user would find it:
//   write "on" to /sys/kernel/mm/damon/admin/kdamonds/0/state: EBUSY (...)
// and WriteErrno() gives the raw errno for callers whose logic depends on it
// (DAMON answers EBUSY, EINVAL and EPERM with different meanings).
//
// Thread-compatible: the live writer holds only an O_PATH fd to the root.

#ifndef HOTPAGE_TOOLS_BASE_KERNEL_SYSFS_WRITER_H_
#define HOTPAGE_TOOLS_BASE_KERNEL_SYSFS_WRITER_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hotpage {

class SysfsWriter {
 public:
  virtual ~SysfsWriter() = default;

  // Writes `value` (no newline is added) to the file at `path`. Returns 0
  // or the errno of the failed open/write (a short write is EIO).
  virtual int WriteErrno(absl::string_view path, absl::string_view value) = 0;

  // The path as a user would find it (for messages).
  virtual std::string Display(absl::string_view path) const = 0;

  // WriteErrno() as a Status naming the value and the file.
  absl::Status Write(absl::string_view path, absl::string_view value);
};

// "write \"VALUE\" to PATH: ERRNAME (strerror)" with the code ErrnoStatus
// gives; VALUE is shown with non-printable bytes replaced by '?'.
absl::Status WriteErrorStatus(int err, absl::string_view value,
                              absl::string_view display_path);

class LiveSysfsWriter : public SysfsWriter {
 public:
  // Opens `root` ("/" for the live machine). Fails if it is not a directory.
  static absl::StatusOr<std::unique_ptr<LiveSysfsWriter>> Open(
      const std::string& root);
  ~LiveSysfsWriter() override;
  LiveSysfsWriter(const LiveSysfsWriter&) = delete;
  LiveSysfsWriter& operator=(const LiveSysfsWriter&) = delete;

  int WriteErrno(absl::string_view path, absl::string_view value) override;
  std::string Display(absl::string_view path) const override;
  bool is_live() const { return root_ == "/"; }

 private:
  LiveSysfsWriter(std::string root, int root_fd)
      : root_(std::move(root)), root_fd_(root_fd) {}

  std::string root_;
  int root_fd_ = -1;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_BASE_KERNEL_SYSFS_WRITER_H_
