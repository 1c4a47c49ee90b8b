#include "tools/base/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/base/status_macros.h"

namespace hotpage {

namespace {

// A new file beside `path` (its name: path.tmp.XXXXXXXX), created
// O_EXCL|O_NOFOLLOW relative to `dir_fd` (AT_FDCWD: `path` as it is); the
// descriptor and the name.
absl::StatusOr<std::pair<int, std::string>> CreateBeside(
    int dir_fd, const std::string& path, int mode) {
  if (path.empty()) return absl::InvalidArgumentError("empty output path");
  std::random_device rd;
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::string tmp = absl::StrFormat("%s.tmp.%08x", path, rd());
    const int fd =
        openat(dir_fd, tmp.c_str(),
               O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd >= 0) return std::make_pair(fd, std::move(tmp));
    if (errno != EEXIST)
      return ErrnoStatus(errno, absl::StrCat("create ", tmp));
  }
  return ErrnoStatus(EEXIST,
                     absl::StrCat("create a temporary file next to ", path));
}

// CreateBeside, then the new file renamed over `path`: an open descriptor
// of an empty file at `path` that no link planted there could redirect.
absl::StatusOr<int> CreateOver(int dir_fd, const std::string& path,
                               const std::string& display, int mode) {
  HOTPAGE_ASSIGN_OR_RETURN(auto created, CreateBeside(dir_fd, path, mode));
  const auto& [fd, tmp] = created;
  if (renameat(dir_fd, tmp.c_str(), dir_fd, path.c_str()) != 0) {
    int err = errno;
    close(fd);
    unlinkat(dir_fd, tmp.c_str(), 0);
    return ErrnoStatus(err, absl::StrCat("rename ", tmp, " to ", display));
  }
  return fd;
}

// write(2) until all of `bytes` is written; EINTR retried.
absl::Status WriteAll(int fd, absl::string_view bytes,
                      const std::string& name) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      return ErrnoStatus(n < 0 ? errno : EIO, absl::StrCat("write ", name));
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckCanWriteFileAtomically(const std::string& path) {
  absl::StatusOr<std::pair<int, std::string>> created =
      CreateBeside(AT_FDCWD, path, 0600);
  if (!created.ok()) {
    return absl::Status(
        created.status().code(),
        absl::StrCat("cannot write ", path, ": ", created.status().message()));
  }
  const auto& [fd, tmp] = *created;
  close(fd);
  unlink(tmp.c_str());
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    return ErrnoStatus(EISDIR, absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view contents, int mode) {
  HOTPAGE_ASSIGN_OR_RETURN(auto created, CreateBeside(AT_FDCWD, path, mode));
  const auto& [fd, tmp] = created;
  if (absl::Status s = WriteAll(fd, contents, tmp); !s.ok()) {
    close(fd);
    unlink(tmp.c_str());
    return s;
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    return ErrnoStatus(err, absl::StrCat("sync ", tmp));
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    return ErrnoStatus(err, absl::StrCat("rename ", tmp, " to ", path));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<AppendOnlyFile>> AppendOnlyFile::Create(
    const std::string& path, int mode) {
  HOTPAGE_ASSIGN_OR_RETURN(int fd, CreateOver(AT_FDCWD, path, path, mode));
  return std::unique_ptr<AppendOnlyFile>(new AppendOnlyFile(fd, path));
}

absl::StatusOr<std::unique_ptr<AppendOnlyFile>> AppendOnlyFile::CreateAt(
    int dir_fd, const std::string& name, std::string display, int mode) {
  if (name.empty() || name == "." || name == ".." ||
      name.find('/') != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a plain file name: \"", name, "\""));
  }
  HOTPAGE_ASSIGN_OR_RETURN(int fd, CreateOver(dir_fd, name, display, mode));
  return std::unique_ptr<AppendOnlyFile>(
      new AppendOnlyFile(fd, std::move(display)));
}

AppendOnlyFile::~AppendOnlyFile() { close(fd_); }

absl::Status AppendOnlyFile::Append(absl::string_view bytes) {
  if (max_bytes_ != 0 && bytes_ + bytes.size() > max_bytes_) {
    return absl::ResourceExhaustedError(
        absl::StrCat(path_, " would pass its bound of ", max_bytes_, " bytes (",
                     bytes_, " written)"));
  }
  absl::Status s = WriteAll(fd_, bytes, path_);
  // After a short write the count is not the file's size; nothing is
  // appended after an error (the callers stop at the first).
  if (s.ok()) bytes_ += bytes.size();
  return s;
}

}  // namespace hotpage
