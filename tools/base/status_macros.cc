#include "tools/base/status_macros.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace hotpage {

std::string ErrnoName(int err) {
  // glibc 2.32+: "EACCES" for EACCES, nullptr for numbers it has no name
  // for (and "0" for 0, which is no error).
  const char* name = strerrorname_np(err);
  if (name == nullptr || name[0] != 'E') return absl::StrCat("E", err);
  return name;
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
