#include "tools/base/kernel/sysfs_writer.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "tools/base/status_macros.h"

namespace hotpage {

absl::Status WriteErrorStatus(int err, absl::string_view value,
                              absl::string_view display_path) {
  std::string shown(value.substr(0, 64));
  for (char& c : shown) {
    if (c < 0x20 || c >= 0x7f) c = '?';
  }
  return ErrnoStatus(err,
                     absl::StrCat("write \"", shown, "\" to ", display_path));
}

absl::Status SysfsWriter::Write(absl::string_view path,
                                absl::string_view value) {
  int err = WriteErrno(path, value);
  if (err == 0) return absl::OkStatus();
  return WriteErrorStatus(err, value, Display(path));
}

absl::StatusOr<std::unique_ptr<LiveSysfsWriter>> LiveSysfsWriter::Open(
    const std::string& root) {
  if (root.empty()) return absl::InvalidArgumentError("empty root directory");
  int fd = open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return ErrnoStatus(errno, absl::StrCat("open root directory ", root));
  std::string r = root;
  while (r.size() > 1 && r.back() == '/') r.pop_back();
  return std::unique_ptr<LiveSysfsWriter>(
      new LiveSysfsWriter(std::move(r), fd));
}

LiveSysfsWriter::~LiveSysfsWriter() {
  if (root_fd_ >= 0) close(root_fd_);
}

std::string LiveSysfsWriter::Display(absl::string_view path) const {
  if (is_live()) return std::string(path);
  return absl::StrCat(root_, path);
}

int LiveSysfsWriter::WriteErrno(absl::string_view path,
                                absl::string_view value) {
  absl::string_view stripped = absl::StripPrefix(path, "/");
  if (stripped.empty()) return EISDIR;
  const std::string rel(stripped);
  // No O_CREAT: sysfs attributes exist or the feature is missing. O_NOFOLLOW:
  // an attribute is never a symlink; a tree that says otherwise is refused.
  const int flags = O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW;
  open_how how = {};
  how.flags = static_cast<uint64_t>(flags);
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  long fd = syscall(SYS_openat2, root_fd_, rel.c_str(), &how, sizeof(how));
  if (fd < 0 && errno == ENOSYS) {
    // Before Linux 5.6. Same fallback as KernelFs::OpenAt.
    fd = openat(root_fd_, rel.c_str(), flags);
  }
  if (fd < 0) return errno;
  int err = 0;
  for (;;) {
    ssize_t n = write(static_cast<int>(fd), value.data(), value.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err = errno;
    } else if (static_cast<size_t>(n) != value.size()) {
      err = EIO;  // a sysfs store() consumed part of a command: treat as failed
    }
    break;
  }
  close(static_cast<int>(fd));
  return err;
}

}  // namespace hotpage
