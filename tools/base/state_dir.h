// StateDir: the private directory (/run/hotpage by default) where a source
// that changes system-wide kernel state keeps what it changed, so that the
// next run can undo it after this one was SIGKILLed. Used by the hint-fault
// source (sysctls) and the DAMON source (its kdamond).
//
// The pattern, per source NAME:
//   STATE_DIR/NAME.lock   an exclusive flock held while the source runs. The
//                         kernel releases it when the process dies, even by
//                         SIGKILL, so "lock free" means "the writer is dead
//                         or finished", which a pid cannot say (pids are
//                         reused).
//   STATE_DIR/NAME-state  written atomically (temp file O_CREAT|O_EXCL|
//                         O_NOFOLLOW, fsync, rename, fsync of the directory)
//                         BEFORE the kernel is changed; removed after a
//                         clean undo. Present + lock free = undo is due.
// The contents are the caller's (each source has its own strict parser).
//
// Directory safety: hotpage runs as root and later acts on what the file
// says, so the directory must be one nobody else can write: it is created
// with mode 0700 when missing, opened with O_NOFOLLOW (a symlink is
// refused), and refused when owned by anyone but root or the effective
// user, or writable by group or others. Every file below it is opened
// relative to that descriptor with O_NOFOLLOW.
//
// Threading: a StateDir is used by one thread at a time (its owner
// serializes).

#ifndef HOTPAGE_TOOLS_BASE_STATE_DIR_H_
#define HOTPAGE_TOOLS_BASE_STATE_DIR_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/base/atomic_file.h"

namespace hotpage {

inline constexpr char kDefaultStateDir[] = "/run/hotpage";

class StateDir {
 public:
  // Creates `path` (mode 0700) if it is missing, opens it and checks it as
  // above. `what` names the directory in messages ("the hint-fault state
  // directory") and `purpose` says what would be kept there ("sysctl
  // state"). FailedPrecondition for an unsafe directory, the errno's code
  // when it cannot be created or opened.
  static absl::StatusOr<StateDir> Open(const std::string& path,
                                       absl::string_view what,
                                       absl::string_view purpose);

  StateDir(StateDir&& other) noexcept;
  StateDir& operator=(StateDir&& other) noexcept;
  StateDir(const StateDir&) = delete;
  StateDir& operator=(const StateDir&) = delete;
  ~StateDir();  // releases the lock, if held

  // Takes an exclusive flock on `name` (created 0600, O_NOFOLLOW) without
  // waiting. true: taken, held until Unlock() or destruction; false:
  // another open file (another process, or another StateDir in this one)
  // holds it. Errors when the file cannot be opened or locked.
  absl::StatusOr<bool> TryLock(absl::string_view name);
  // Releases the lock (closes its descriptor). No-op when none is held.
  void Unlock();
  bool locked() const { return lock_fd_ >= 0; }

  // The contents of `name`, nullopt when it does not exist. Reads at most
  // max_bytes + 1 bytes, so that a caller's size check sees an oversized
  // file as such without reading all of it.
  absl::StatusOr<std::optional<std::string>> Read(absl::string_view name,
                                                  size_t max_bytes) const;
  // Replaces `name` atomically (see above), mode 0600.
  absl::Status WriteAtomically(absl::string_view name,
                               absl::string_view contents);
  // A new, empty file `name` (mode 0600) for appending, created as
  // AppendOnlyFile::Create creates one (whatever was at the name is
  // replaced). Unlike the methods above it may be used by another thread
  // than the owner's, after it returns: the file has its own descriptor.
  absl::StatusOr<std::unique_ptr<AppendOnlyFile>> CreateAppendOnly(
      absl::string_view name) const;
  // Removes `name`; OK when it does not exist.
  absl::Status Remove(absl::string_view name);

  // A regular file in the directory, as List() saw it.
  struct FileInfo {
    std::string name;
    uint64_t size_bytes = 0;  // st_size
    int64_t mtime_ns = 0;     // last modification, since the epoch
  };
  // The regular files directly in the directory whose names end in
  // `suffix` (every one for ""), in no particular order. Read through the
  // directory's descriptor; each entry is stat'ed without following it, so
  // symlinks, directories and other kinds are left out. A file removed
  // while the list is read is left out too. Like CreateAppendOnly it may
  // be called from another thread than the owner's.
  absl::StatusOr<std::vector<FileInfo>> List(absl::string_view suffix) const;

  const std::string& path() const { return path_; }
  // path() + "/" + name, for messages.
  std::string Display(absl::string_view name) const;

 private:
  StateDir(std::string path, int dir_fd)
      : path_(std::move(path)), dir_fd_(dir_fd) {}

  std::string path_;
  int dir_fd_ = -1;
  int lock_fd_ = -1;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_BASE_STATE_DIR_H_
