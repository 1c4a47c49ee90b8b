#include "tools/version.h"

#include "absl/strings/str_cat.h"
#include "tools/version_number.h"  // generated from VERSION

namespace hotpage {

absl::string_view VersionNumber() { return HOTPAGE_VERSION_NUMBER; }

std::string VersionLine(absl::string_view commit) {
  return absl::StrCat("hotpage ", VersionNumber(), " (git ",
                      commit.empty() ? "unknown" : commit, ")");
}

}  // namespace hotpage
