#include "tools/base/kernel/fake_sysfs_writer.h"

#include <cerrno>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "tools/base/status_macros.h"

namespace hotpage {
namespace {

class FakeSysfsWriter : public SysfsWriter {
 public:
  explicit FakeSysfsWriter(FakeSysfsLog* log) : log_(log) {}
  int WriteErrno(absl::string_view path, absl::string_view value) override {
    return log_->Write(path, value);
  }
  std::string Display(absl::string_view path) const override {
    return absl::StrCat(log_->tree()->root(), path);
  }

 private:
  FakeSysfsLog* log_;
};

}  // namespace

std::unique_ptr<SysfsWriter> FakeSysfsLog::NewWriter() {
  return std::make_unique<FakeSysfsWriter>(this);
}

int FakeSysfsLog::Write(absl::string_view path, absl::string_view value) {
  int err = hook_ ? hook_(path, value) : 0;
  if (err == 0) {
    std::error_code ec;
    const std::string file = absl::StrCat(tree_->root(), path);
    if (!std::filesystem::is_regular_file(file, ec)) {
      err = std::filesystem::is_directory(file, ec) ? EISDIR : ENOENT;
    } else {
      tree_->Write(path, value);
    }
  } else if (err == kHandled) {
    err = 0;
  }
  writes_.push_back({std::string(path), std::string(value), err});
  return err;
}

std::vector<std::string> FakeSysfsLog::Lines() const {
  std::vector<std::string> out;
  out.reserve(writes_.size());
  for (const FakeSysfsWrite& w : writes_) {
    out.push_back(w.err == 0 ? absl::StrCat(w.path, "=", w.value)
                             : absl::StrCat(w.path, "=", w.value, " !",
                                            ErrnoName(w.err)));
  }
  return out;
}

}  // namespace hotpage
