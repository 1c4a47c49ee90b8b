#include "tools/base/state_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/base/status_macros.h"

namespace hotpage {

absl::StatusOr<StateDir> StateDir::Open(const std::string& path,
                                        absl::string_view what,
                                        absl::string_view purpose) {
  if (path.empty())
    return absl::InvalidArgumentError(absl::StrCat("empty path for ", what));
  if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    return ErrnoStatus(errno, absl::StrCat("create ", what, " ", path));
  }
  const int fd =
      open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, absl::StrCat("open ", what, " ", path));
  StateDir dir(path, fd);  // closes fd on every return below
  struct stat st;
  if (fstat(fd, &st) != 0)
    return ErrnoStatus(errno, absl::StrCat("stat ", path));
  // Someone else's or a group/world-writable directory could swap the state
  // file under us: refuse rather than trust what it holds.
  if (st.st_uid != geteuid() && st.st_uid != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, " ", path, " belongs to uid ", st.st_uid,
                     ", not to root or this user: refusing to keep ", purpose,
                     " there (remove it)"));
  }
  if ((st.st_mode & 022) != 0) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s %s is writable by group or others (mode %04o): "
                        "refusing to keep %s there (chmod 0700 "
                        "it or remove it)",
                        what, path, st.st_mode & 07777, purpose));
  }
  return dir;
}

StateDir::StateDir(StateDir&& other) noexcept
    : path_(std::move(other.path_)),
      dir_fd_(other.dir_fd_),
      lock_fd_(other.lock_fd_) {
  other.dir_fd_ = -1;
  other.lock_fd_ = -1;
}

StateDir& StateDir::operator=(StateDir&& other) noexcept {
  if (this != &other) {
    Unlock();
    if (dir_fd_ >= 0) close(dir_fd_);
    path_ = std::move(other.path_);
    dir_fd_ = other.dir_fd_;
    lock_fd_ = other.lock_fd_;
    other.dir_fd_ = -1;
    other.lock_fd_ = -1;
  }
  return *this;
}

StateDir::~StateDir() {
  Unlock();
  if (dir_fd_ >= 0) close(dir_fd_);
}

std::string StateDir::Display(absl::string_view name) const {
  return absl::StrCat(path_, "/", name);
}

absl::StatusOr<bool> StateDir::TryLock(absl::string_view name) {
  if (lock_fd_ >= 0)
    return absl::FailedPreconditionError(
        absl::StrCat(Display(name), ": a lock is held already"));
  const std::string n(name);
  const int fd = openat(dir_fd_, n.c_str(),
                        O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return ErrnoStatus(errno, absl::StrCat("open ", Display(name)));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    close(fd);
    if (err == EWOULDBLOCK) return false;
    return ErrnoStatus(err, absl::StrCat("lock ", Display(name)));
  }
  lock_fd_ = fd;
  return true;
}

void StateDir::Unlock() {
  if (lock_fd_ >= 0) {
    close(lock_fd_);  // releases the flock
    lock_fd_ = -1;
  }
}

absl::StatusOr<std::optional<std::string>> StateDir::Read(
    absl::string_view name, size_t max_bytes) const {
  const std::string n(name);
  const int fd = openat(dir_fd_, n.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    return ErrnoStatus(errno, absl::StrCat("open ", Display(name)));
  }
  std::string out;
  char buf[1024];
  while (out.size() <= max_bytes) {
    ssize_t n_read = read(fd, buf, sizeof(buf));
    if (n_read < 0 && errno == EINTR) continue;
    if (n_read < 0) {
      const int err = errno;
      close(fd);
      return ErrnoStatus(err, absl::StrCat("read ", Display(name)));
    }
    if (n_read == 0) break;
    out.append(buf, static_cast<size_t>(n_read));
  }
  close(fd);
  if (out.size() > max_bytes + 1) out.resize(max_bytes + 1);
  return std::optional<std::string>(std::move(out));
}

absl::Status StateDir::WriteAtomically(absl::string_view name,
                                       absl::string_view contents) {
  const std::string n(name);
  const std::string tmp = absl::StrCat(n, ".tmp.", getpid());
  (void)unlinkat(dir_fd_, tmp.c_str(),
                 0);  // ours from an earlier crash with the same pid
  const int fd =
      openat(dir_fd_, tmp.c_str(),
             O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return ErrnoStatus(errno, absl::StrCat("create ", Display(tmp)));
  int err = 0;
  size_t done = 0;
  while (err == 0 && done < contents.size()) {
    ssize_t w = write(fd, contents.data() + done, contents.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      err = w < 0 ? errno : EIO;
    } else {
      done += static_cast<size_t>(w);
    }
  }
  if (err == 0 && fsync(fd) != 0) err = errno;
  if (close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && renameat(dir_fd_, tmp.c_str(), dir_fd_, n.c_str()) != 0)
    err = errno;
  if (err != 0) {
    (void)unlinkat(dir_fd_, tmp.c_str(), 0);
    return ErrnoStatus(err, absl::StrCat("write ", Display(name)));
  }
  (void)fsync(dir_fd_);  // the rename itself survives a crash
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<AppendOnlyFile>> StateDir::CreateAppendOnly(
    absl::string_view name) const {
  return AppendOnlyFile::CreateAt(dir_fd_, std::string(name), Display(name),
                                  0600);
}

absl::Status StateDir::Remove(absl::string_view name) {
  const std::string n(name);
  if (unlinkat(dir_fd_, n.c_str(), 0) != 0 && errno != ENOENT) {
    return ErrnoStatus(errno, absl::StrCat("remove ", Display(name)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<StateDir::FileInfo>> StateDir::List(
    absl::string_view suffix) const {
  // fdopendir takes the descriptor it is given: a fresh one of the same
  // directory, so that closedir leaves dir_fd_ open.
  const int fd = openat(dir_fd_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, absl::StrCat("open ", path_));
  DIR* d = fdopendir(fd);
  if (d == nullptr) {
    const int err = errno;
    close(fd);
    return ErrnoStatus(err, absl::StrCat("read ", path_));
  }
  std::vector<FileInfo> files;
  errno = 0;
  while (const dirent* e = readdir(d)) {
    const absl::string_view name(e->d_name);
    if (name == "." || name == ".." || !absl::EndsWith(name, suffix)) {
      continue;
    }
    struct stat st;
    if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(st.st_mode)) {
      continue;  // gone since readdir, or not a regular file
    }
    files.push_back(
        FileInfo{std::string(name), static_cast<uint64_t>(st.st_size),
                 static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 +
                     st.st_mtim.tv_nsec});
    errno = 0;
  }
  const int err = errno;
  closedir(d);
  if (err != 0) return ErrnoStatus(err, absl::StrCat("read ", path_));
  return files;
}

}  // namespace hotpage
