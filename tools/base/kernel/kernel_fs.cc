#include "tools/base/kernel/kernel_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "tools/base/parse.h"
#include "tools/base/status_macros.h"

namespace hotpage {

absl::StatusOr<KernelFs> KernelFs::Open(const std::string& root) {
  if (root.empty()) return absl::InvalidArgumentError("empty root directory");
  int fd = open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return ErrnoStatus(errno, absl::StrCat("open root directory ", root));
  }
  std::string r = root;
  while (r.size() > 1 && r.back() == '/') r.pop_back();
  return KernelFs(std::move(r), fd);
}

KernelFs::KernelFs(KernelFs&& other) noexcept
    : root_(std::move(other.root_)), root_fd_(other.root_fd_) {
  other.root_fd_ = -1;
}

KernelFs& KernelFs::operator=(KernelFs&& other) noexcept {
  if (this != &other) {
    if (root_fd_ >= 0) close(root_fd_);
    root_ = std::move(other.root_);
    root_fd_ = other.root_fd_;
    other.root_fd_ = -1;
  }
  return *this;
}

KernelFs::~KernelFs() {
  if (root_fd_ >= 0) close(root_fd_);
}

std::string KernelFs::Display(absl::string_view path) const {
  if (is_live()) return std::string(path);
  return absl::StrCat(root_, path);
}

int KernelFs::OpenAt(absl::string_view path, int flags) const {
  absl::string_view stripped = absl::StripPrefix(path, "/");
  const std::string rel =
      stripped.empty() ? std::string(".") : std::string(stripped);
  open_how how = {};
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  long fd = syscall(SYS_openat2, root_fd_, rel.c_str(), &how, sizeof(how));
  if (fd < 0 && errno == ENOSYS) {
    // Kernels before 5.6: no openat2. Magic links are still refused on the
    // last component; absolute symlinks in a fake tree then resolve against
    // the real root, which only matters for trees we were handed.
    fd = openat(root_fd_, rel.c_str(), flags | O_CLOEXEC | O_NOFOLLOW);
  }
  return fd < 0 ? -errno : static_cast<int>(fd);
}

absl::StatusOr<std::string> KernelFs::ReadFile(absl::string_view path) const {
  int fd = OpenAt(path, O_RDONLY);
  if (fd < 0) return ErrnoStatus(-fd, absl::StrCat("open ", Display(path)));
  std::string out;
  char buf[8192];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      close(fd);
      return ErrnoStatus(err, absl::StrCat("read ", Display(path)));
    }
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > kMaxFileBytes) {
      close(fd);
      return absl::ResourceExhaustedError(absl::StrCat(
          "read ", Display(path), ": file larger than ", kMaxFileBytes,
          " bytes; not a sysfs/procfs file hotpage understands"));
    }
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

absl::StatusOr<std::string> KernelFs::ReadAt(absl::string_view path,
                                             uint64_t offset,
                                             size_t length) const {
  if (length > kMaxFileBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("read ", Display(path), ": ", length,
                     " bytes at once is more than ", kMaxFileBytes));
  }
  int fd = OpenAt(path, O_RDONLY);
  if (fd < 0) return ErrnoStatus(-fd, absl::StrCat("open ", Display(path)));
  std::string out(length, '\0');
  size_t got = 0;
  while (got < length) {
    ssize_t n = pread(fd, out.data() + got, length - got,
                      static_cast<off_t>(offset + got));
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      close(fd);
      return ErrnoStatus(err,
                         absl::StrCat("read ", Display(path), " at ", offset));
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  out.resize(got);
  return out;
}

absl::StatusOr<std::string> KernelFs::ReadTrimmed(
    absl::string_view path) const {
  HOTPAGE_ASSIGN_OR_RETURN(std::string s, ReadFile(path));
  return std::string(absl::StripAsciiWhitespace(s));
}

absl::StatusOr<int64_t> KernelFs::ReadInt(absl::string_view path) const {
  HOTPAGE_ASSIGN_OR_RETURN(std::string s, ReadFile(path));
  std::optional<int64_t> v = ParseInt(s);
  if (!v) {
    std::string shown(absl::StripAsciiWhitespace(s).substr(0, 40));
    for (char& c : shown) {
      if (c < 0x20 || c >= 0x7f) c = '?';
    }
    return absl::InvalidArgumentError(absl::StrCat(
        Display(path), ": expected a decimal integer, found \"", shown, "\""));
  }
  return *v;
}

absl::StatusOr<std::vector<int>> KernelFs::ReadList(
    absl::string_view path) const {
  HOTPAGE_ASSIGN_OR_RETURN(std::string s, ReadFile(path));
  absl::StatusOr<std::vector<int>> list = ParseKernelList(s);
  if (!list.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(Display(path), ": ", list.status().message()));
  }
  return list;
}

absl::StatusOr<std::vector<std::string>> KernelFs::ListDir(
    absl::string_view path) const {
  int fd = OpenAt(path, O_RDONLY | O_DIRECTORY);
  if (fd < 0)
    return ErrnoStatus(-fd, absl::StrCat("open directory ", Display(path)));
  DIR* dir = fdopendir(fd);
  if (dir == nullptr) {
    int err = errno;
    close(fd);
    return ErrnoStatus(err, absl::StrCat("fdopendir ", Display(path)));
  }
  std::vector<std::string> names;
  constexpr size_t kMaxEntries = 1 << 20;
  while (dirent* e = readdir(dir)) {
    absl::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    if (names.size() >= kMaxEntries) break;
    names.emplace_back(name);
  }
  closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

bool KernelFs::Exists(absl::string_view path) const {
  int fd = OpenAt(path, O_PATH);
  if (fd < 0) return false;
  close(fd);
  return true;
}

}  // namespace hotpage
