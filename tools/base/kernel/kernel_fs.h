// KernelFs: the one seam through which hotpage reads sysfs and procfs.
//
// Every path is absolute as the kernel spells it ("/sys/devices/system/node/
// online"); KernelFs resolves it under a root directory, which is "/" on the
// live machine and a copied or fake tree in tests and with --sysfs-root. The
// tree under the root mirrors the real one: ROOT/sys/..., ROOT/proc/....
//
// Resolution uses openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS), so a
// tree's symlinks (absolute or "../..") can never lead outside its root, and
// procfs magic links (/proc/PID/exe, fd/N) are never followed. Reads are
// bounded (kMaxFileBytes) so a hostile or broken file cannot exhaust memory.
//
// Errors name the file as the user would find it ("<root>/sys/...").
// Thread-compatible; the instance holds only an O_PATH fd to the root.

#ifndef HOTPAGE_TOOLS_BASE_KERNEL_KERNEL_FS_H_
#define HOTPAGE_TOOLS_BASE_KERNEL_KERNEL_FS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hotpage {

class KernelFs {
 public:
  static constexpr size_t kMaxFileBytes = 4 << 20;

  // Opens `root` ("/" for the live machine). Fails if it is not a directory.
  static absl::StatusOr<KernelFs> Open(const std::string& root);

  KernelFs(KernelFs&& other) noexcept;
  KernelFs& operator=(KernelFs&& other) noexcept;
  KernelFs(const KernelFs&) = delete;
  KernelFs& operator=(const KernelFs&) = delete;
  ~KernelFs();

  const std::string& root() const { return root_; }
  bool is_live() const { return root_ == "/"; }

  // The path as a user would find it: "/sys/x" on the live machine,
  // "<root>/sys/x" under a fake tree. For messages.
  std::string Display(absl::string_view path) const;

  // Whole file contents (at most kMaxFileBytes; longer is an error).
  absl::StatusOr<std::string> ReadFile(absl::string_view path) const;

  // Up to `length` bytes at `offset` (pread; fewer at end of file). For
  // binary files read by position (/proc/PID/pagemap, /proc/kpageflags).
  absl::StatusOr<std::string> ReadAt(absl::string_view path, uint64_t offset,
                                     size_t length) const;

  // Contents with surrounding whitespace removed (sysfs values end in '\n').
  absl::StatusOr<std::string> ReadTrimmed(absl::string_view path) const;

  // A whole-file decimal integer; garbage is an InvalidArgument error that
  // names the file and quotes (a prefix of) what it found.
  absl::StatusOr<int64_t> ReadInt(absl::string_view path) const;

  // A kernel list ("0-3,8,10-11", empty allowed) as sorted unique values.
  absl::StatusOr<std::vector<int>> ReadList(absl::string_view path) const;

  // Entry names of a directory, sorted, without "." and "..".
  absl::StatusOr<std::vector<std::string>> ListDir(
      absl::string_view path) const;

  // True if the path resolves (file, directory or symlink) under the root.
  bool Exists(absl::string_view path) const;

 private:
  KernelFs(std::string root, int root_fd)
      : root_(std::move(root)), root_fd_(root_fd) {}

  // Opens `path` relative to the root with RESOLVE_IN_ROOT. Returns an fd or
  // -errno.
  int OpenAt(absl::string_view path, int flags) const;

  std::string root_;
  int root_fd_ = -1;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_BASE_KERNEL_KERNEL_FS_H_
