#include "tools/base/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/base/status_macros.h"

namespace hotpage {

absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view contents, int mode) {
  if (path.empty()) return absl::InvalidArgumentError("empty output path");
  std::random_device rd;
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 8 && fd < 0; ++attempt) {
    tmp = absl::StrFormat("%s.tmp.%08x", path, rd());
    fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
              mode);
    if (fd < 0 && errno != EEXIST)
      return ErrnoStatus(errno, absl::StrCat("create ", tmp));
  }
  if (fd < 0)
    return ErrnoStatus(EEXIST,
                       absl::StrCat("create a temporary file next to ", path));
  size_t done = 0;
  while (done < contents.size()) {
    ssize_t n = write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : EIO;
      close(fd);
      unlink(tmp.c_str());
      return ErrnoStatus(err, absl::StrCat("write ", tmp));
    }
    done += static_cast<size_t>(n);
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

}  // namespace hotpage
