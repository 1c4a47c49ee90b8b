// hotpage's version: one number, and the git commit a binary was built from.
//
// The number lives in one place, the VERSION file at the repository root;
// //tools:version_number_h turns it into a header at build time (and
// refuses anything but MAJOR.MINOR.PATCH), and debian/changelog must carry
// the same number (tests/dist/version_test.sh checks both).
//
// The commit is stamped only into the `hotpage` binary, and only by release
// builds (`bazel build --config=release`, which tools/install.sh and
// debian/rules use): //tools:build_commit_h reads it from Bazel's
// stable-status.txt, written by tools/workspace_status.sh. Other builds say
// "unknown", so that a new commit does not relink `hotpage` and re-run every
// test that uses it. The commit is passed in by the caller (hotpage_main.cc)
// for the same reason: a library holding it would relink every test.

#ifndef HOTPAGE_TOOLS_VERSION_H_
#define HOTPAGE_TOOLS_VERSION_H_

#include <string>

#include "absl/strings/string_view.h"

namespace hotpage {

// "0.1.0": the contents of VERSION.
absl::string_view VersionNumber();

// "hotpage 0.1.0 (git 0123456789ab)", what `--version` prints; `commit` is
// the stamped commit, "unknown" when it is empty.
std::string VersionLine(absl::string_view commit);

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_VERSION_H_
