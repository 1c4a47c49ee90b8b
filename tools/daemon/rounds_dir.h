// RoundsDir: the daemon's rounds directory (DaemonConfig::rounds_dir), the
// files its members write their rounds to, and the bound on all of them.
//
// Each managed process of a workload with `rounds` appends to a file of its
// own, NAME-PID-START.jsonl, that stops growing at file_max_bytes
// (AppendOnlyFile::set_max_bytes). When the process ends its file stays for
// a reader; without more, a workload whose processes come and go would fill
// the disk one bounded file at a time. So the directory is bounded too:
// Prune() removes the files of ended processes, the least recently changed
// first, until the directory's rounds files add up to at most
// dir_max_bytes. A file a member still writes is never removed (the
// config's check, dir_max_bytes >= file_max_bytes, leaves room for at
// least one); when the live files alone pass the bound, Prune says so once
// and removes nothing of theirs.
//
// What counts: the regular files directly in the directory whose names end
// in ".jsonl" (StateDir::List: symlinks, directories and other names are
// neither counted nor removed). The directory is the daemon's (StateDir:
// created 0700, refused when another user owns it or may write it), so the
// names it lists are files the daemon, or root, put there.
//
// When: Create() prunes before it makes a file, so a new process never
// pushes the directory past the bound by its ended predecessors; the daemon
// calls Prune() once a minute for the live files' growth.
//
// Thread safety: every method may be called from any thread (one mutex);
// a File is written by its member's loop alone and released, by its
// destructor, on whichever thread ends the member. Every File must be
// destroyed before its RoundsDir.

#ifndef HOTPAGE_TOOLS_DAEMON_ROUNDS_DIR_H_
#define HOTPAGE_TOOLS_DAEMON_ROUNDS_DIR_H_

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/base/atomic_file.h"
#include "tools/base/mutex.h"
#include "tools/base/state_dir.h"

namespace hotpage {

inline constexpr char kRoundsFileSuffix[] = ".jsonl";

// What Prune() removes from `files` (the directory's rounds files) so that
// they add up to at most max_bytes: files not in `live`, the oldest
// modification first (ties by name, so the plan is the same for the same
// listing). Pure: the test of the rule.
struct RoundsPrunePlan {
  std::vector<StateDir::FileInfo> remove;  // in the order to remove them
  uint64_t removed_bytes = 0;
  uint64_t total_bytes = 0;  // every rounds file, before the removals
  uint64_t live_bytes = 0;   // the live files alone
  bool over = false;         // still over max_bytes after the removals
};
RoundsPrunePlan PlanRoundsPrune(std::vector<StateDir::FileInfo> files,
                                const absl::flat_hash_set<std::string>& live,
                                uint64_t max_bytes);

class RoundsDir {
 public:
  // One member's file: the file and its hold on the name (a live file is
  // never pruned). Released when destroyed.
  class File {
   public:
    ~File();
    File(const File&) = delete;
    File& operator=(const File&) = delete;
    AppendOnlyFile* get() const { return file_.get(); }
    const std::string& path() const { return file_->path(); }

   private:
    friend class RoundsDir;
    File(RoundsDir* dir, std::string name, std::unique_ptr<AppendOnlyFile> f)
        : dir_(dir), name_(std::move(name)), file_(std::move(f)) {}
    RoundsDir* const dir_;
    const std::string name_;
    const std::unique_ptr<AppendOnlyFile> file_;
  };

  // `log` gets one line for each prune that removed something, and the
  // warnings; it must outlive this.
  RoundsDir(StateDir dir, uint64_t file_max_bytes, uint64_t dir_max_bytes,
            std::ostream* log);

  // Prunes, then makes `name` (a plain name ending in ".jsonl"; whatever
  // was at the name is replaced, as StateDir::CreateAppendOnly does),
  // bounded at file_max_bytes and held live until the File is destroyed.
  absl::StatusOr<std::unique_ptr<File>> Create(absl::string_view name)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Removes ended processes' files as above; says in the log what it
  // removed and, once until the directory is under its bound again, that
  // the live files alone pass it. A file that cannot be removed is a
  // warning; the rest are still tried.
  void Prune() ABSL_LOCKS_EXCLUDED(mu_);

  const std::string& path() const { return path_; }

 private:
  void PruneLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Release(const std::string& name) ABSL_LOCKS_EXCLUDED(mu_);

  const std::string path_;
  const uint64_t file_max_bytes_;
  const uint64_t dir_max_bytes_;
  std::ostream* const log_;
  Mutex mu_;
  StateDir dir_ ABSL_GUARDED_BY(mu_);
  // Names of the Files not yet destroyed; a name counts as often as it
  // was created (a replaced file's old File may still be open).
  std::vector<std::string> live_ ABSL_GUARDED_BY(mu_);
  bool said_over_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace hotpage

#endif  // HOTPAGE_TOOLS_DAEMON_ROUNDS_DIR_H_
