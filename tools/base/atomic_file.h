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

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hotpage {

absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view contents, int mode = 0644);

// Whether WriteFileAtomically(path, ...) can create its file now: creates
// and removes the temporary file it would write (so a missing or read-only
// directory, or one this process may not write, gives the error the write
// would), and refuses a directory at `path` (which rename(2) could not
// replace). For a command that writes its output after minutes of work: the
// mistake shows before the work, not after. Writes nothing at `path`.
absl::Status CheckCanWriteFileAtomically(const std::string& path);

// A file written by appending, from empty (a log that other programs may
// read while it grows: `hotpage attach --rounds`). Created as
// WriteFileAtomically creates its file: a new temporary file beside `path`
// (O_CREAT|O_EXCL|O_NOFOLLOW, `mode`) renamed over `path`, so a symlink or
// a hard link planted at the name is replaced, never written through; the
// file is then written through its descriptor only. Thread-compatible.
class AppendOnlyFile {
 public:
  // Errors: an empty path, the directory's (ENOENT, EACCES), the rename's.
  static absl::StatusOr<std::unique_ptr<AppendOnlyFile>> Create(
      const std::string& path, int mode = 0644);
  // The same, in the directory open as `dir_fd` (the caller keeps it
  // open; tools/base/state_dir.h checks that nobody else can write it):
  // `name` is a plain file name (no '/', not "." or ".."); `display` names
  // the file in messages.
  static absl::StatusOr<std::unique_ptr<AppendOnlyFile>> CreateAt(
      int dir_fd, const std::string& name, std::string display, int mode);
  ~AppendOnlyFile();
  AppendOnlyFile(const AppendOnlyFile&) = delete;
  AppendOnlyFile& operator=(const AppendOnlyFile&) = delete;

  // Writes all of `bytes` at the end (write(2) until done; EINTR retried).
  // After a write error the file may hold part of `bytes`. An append that
  // would take the file past max_bytes() writes nothing and returns
  // ResourceExhausted, so the file holds whole appends only.
  absl::Status Append(absl::string_view bytes);
  // The bound on the file's size; 0 (the default): none.
  void set_max_bytes(uint64_t max_bytes) { max_bytes_ = max_bytes; }
  uint64_t max_bytes() const { return max_bytes_; }
  uint64_t bytes() const { return bytes_; }  // appended so far
  const std::string& path() const { return path_; }

 private:
  AppendOnlyFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::string path_;
  uint64_t max_bytes_ = 0;
  uint64_t bytes_ = 0;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_BASE_ATOMIC_FILE_H_
