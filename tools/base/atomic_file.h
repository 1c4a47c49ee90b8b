// WriteFileAtomically: replaces a file's contents so that readers (a
// dashboard, node_exporter's textfile collector) see either the old or the
// new contents, never a torn write.
//
// The contents go to a new temporary file in the same directory, created
// with O_CREAT|O_EXCL|O_NOFOLLOW (a name an attacker pre-created or
// symlinked makes it fail rather than write through), fsync'd, then
// rename(2)d over the target. rename replaces a symlink at the target name
// instead of following it, so hotpage, running as root, never writes
// through a link another user planted in a shared directory.

#ifndef HOTPAGE_TOOLS_BASE_ATOMIC_FILE_H_
#define HOTPAGE_TOOLS_BASE_ATOMIC_FILE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace hotpage {

absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view contents, int mode = 0644);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_BASE_ATOMIC_FILE_H_
