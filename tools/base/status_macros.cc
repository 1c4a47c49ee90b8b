#include "tools/base/status_macros.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace hotpage {

std::string ErrnoName(int err) {
  switch (err) {
#define HOTPAGE_ERRNO_CASE(e) \
  case e:                     \
    return #e;
    HOTPAGE_ERRNO_CASE(EPERM)
    HOTPAGE_ERRNO_CASE(ENOENT)
    HOTPAGE_ERRNO_CASE(ESRCH)
    HOTPAGE_ERRNO_CASE(EINTR)
    HOTPAGE_ERRNO_CASE(EIO)
    HOTPAGE_ERRNO_CASE(E2BIG)
    HOTPAGE_ERRNO_CASE(EBADF)
    HOTPAGE_ERRNO_CASE(EAGAIN)
    HOTPAGE_ERRNO_CASE(ENOMEM)
    HOTPAGE_ERRNO_CASE(EACCES)
    HOTPAGE_ERRNO_CASE(EFAULT)
    HOTPAGE_ERRNO_CASE(EBUSY)
    HOTPAGE_ERRNO_CASE(EEXIST)
    HOTPAGE_ERRNO_CASE(ENODEV)
    HOTPAGE_ERRNO_CASE(ENOTDIR)
    HOTPAGE_ERRNO_CASE(EISDIR)
    HOTPAGE_ERRNO_CASE(EINVAL)
    HOTPAGE_ERRNO_CASE(EMFILE)
    HOTPAGE_ERRNO_CASE(EFBIG)
    HOTPAGE_ERRNO_CASE(ENOSPC)
    HOTPAGE_ERRNO_CASE(ERANGE)
    HOTPAGE_ERRNO_CASE(ENOSYS)
    HOTPAGE_ERRNO_CASE(ENODATA)
    HOTPAGE_ERRNO_CASE(ELOOP)
    HOTPAGE_ERRNO_CASE(EOPNOTSUPP)
    HOTPAGE_ERRNO_CASE(ENXIO)
    HOTPAGE_ERRNO_CASE(EXDEV)
#undef HOTPAGE_ERRNO_CASE
    default:
      return absl::StrCat("E", err);
  }
}

absl::Status ErrnoStatus(int err, absl::string_view what) {
  std::string msg =
      absl::StrCat(what, ": ", ErrnoName(err), " (", std::strerror(err), ")");
  switch (err) {
    case ENOENT:
    case ESRCH:
      return absl::NotFoundError(msg);
    case EPERM:
    case EACCES:
      return absl::PermissionDeniedError(msg);
    case EINVAL:
    case ERANGE:
    case E2BIG:
      return absl::InvalidArgumentError(msg);
    case EBUSY:
    case EAGAIN:
    case EINTR:
      return absl::UnavailableError(msg);
    case ENOMEM:
    case ENOSPC:
    case EMFILE:
      return absl::ResourceExhaustedError(msg);
    case ENOSYS:
    case EOPNOTSUPP:
    case ENODEV:
      return absl::UnimplementedError(msg);
    default:
      return absl::InternalError(msg);
  }
}

}  // namespace hotpage
