// Status helpers shared by every hotpage component.
//
// Debian's abseil (20220623) predates ABSL_RETURN_IF_ERROR and
// ABSL_ASSIGN_OR_RETURN, so hotpage defines its own two, with the same
// meaning, once, here.

#ifndef HOTPAGE_TOOLS_BASE_STATUS_MACROS_H_
#define HOTPAGE_TOOLS_BASE_STATUS_MACROS_H_

#include <cerrno>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#define HOTPAGE_CONCAT_INNER_(a, b) a##b
#define HOTPAGE_CONCAT_(a, b) HOTPAGE_CONCAT_INNER_(a, b)

// Evaluates `expr` (an absl::Status); returns it from the enclosing function
// if it is not OK.
#define HOTPAGE_RETURN_IF_ERROR(expr)                  \
  do {                                                 \
    ::absl::Status hotpage_status_ = (expr);           \
    if (!hotpage_status_.ok()) return hotpage_status_; \
  } while (0)

// `lhs` = value of `rexpr` (an absl::StatusOr<T>), or returns its status.
#define HOTPAGE_ASSIGN_OR_RETURN(lhs, rexpr)                                   \
  HOTPAGE_ASSIGN_OR_RETURN_IMPL_(HOTPAGE_CONCAT_(hotpage_sor_, __LINE__), lhs, \
                                 rexpr)

#define HOTPAGE_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                   \
  if (!tmp.ok()) return std::move(tmp).status();        \
  lhs = std::move(tmp).value()

namespace hotpage {

// An absl::Status for a failed system call: the code follows the errno and
// the message reads "<what>: <ERRNAME> (<strerror>)", e.g.
// "open /sys/devices/system/node/online: ENOENT (No such file or directory)".
absl::Status ErrnoStatus(int err, absl::string_view what);

// "ENOENT", "EBUSY", ... (glibc's strerrorname_np), or "E<number>" for
// values it has no name for.
std::string ErrnoName(int err);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_BASE_STATUS_MACROS_H_
