#include "tools/base/state_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tools/base/kernel/fake_tree.h"

namespace hotpage {
namespace {

std::string Slurp(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

absl::StatusOr<StateDir> OpenDir(const std::string& path) {
  return StateDir::Open(path, "the test state directory", "test state");
}

TEST(StateDir, CreatesAPrivateDirectory) {
  FakeTree t;
  const std::string d = t.root() + "/run/hotpage";
  t.Mkdir("/run");
  absl::StatusOr<StateDir> s = OpenDir(d);
  ASSERT_TRUE(s.ok()) << s.status();
  struct stat st;
  ASSERT_EQ(stat(d.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(s->path(), d);
  EXPECT_EQ(s->Display("x"), d + "/x");
  // An existing safe directory (0755, ours) is taken as it is.
  ASSERT_EQ(chmod(d.c_str(), 0755), 0);
  EXPECT_TRUE(OpenDir(d).ok());
}

TEST(StateDir, UnsafeDirectoriesAreRefused) {
  FakeTree t;
  const std::string d = t.root() + "/state";
  t.Mkdir("/state");
  ASSERT_EQ(chmod(d.c_str(), 0777), 0);
  absl::StatusOr<StateDir> s = OpenDir(d);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(s.status()));
  EXPECT_EQ(s.status().message(),
            absl::StrCat("the test state directory ", d,
                         " is writable by group or others (mode 0777): "
                         "refusing to keep test state "
                         "there (chmod 0700 it or remove it)"));
  ASSERT_EQ(chmod(d.c_str(), 0720), 0);
  EXPECT_FALSE(OpenDir(d).ok());  // group-writable alone is enough
  // A symlink to a safe directory is refused (O_NOFOLLOW).
  ASSERT_EQ(rmdir(d.c_str()), 0);
  t.Mkdir("/elsewhere");
  t.Symlink(t.root() + "/elsewhere", "/state");
  EXPECT_FALSE(OpenDir(d).ok());
}

TEST(StateDir, SomeoneElsesDirectoryIsRefused) {
  FakeTree t;
  t.Mkdir("/theirs");
  // Needs root outside a user namespace (the target is tagged "local").
  ASSERT_EQ(chown((t.root() + "/theirs").c_str(), 4242, 4242), 0)
      << "chown: " << std::strerror(errno) << " (run as root)";
  absl::StatusOr<StateDir> s = OpenDir(t.root() + "/theirs");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.status().message(), "belongs to uid 4242"))
      << s.status();
}

TEST(StateDir, LockIsExclusiveAcrossOpenFilesAndFreedOnUnlock) {
  FakeTree t;
  absl::StatusOr<StateDir> a = OpenDir(t.root() + "/s");
  absl::StatusOr<StateDir> b = OpenDir(t.root() + "/s");
  ASSERT_TRUE(a.ok() && b.ok());
  absl::StatusOr<bool> la = a->TryLock("x.lock");
  ASSERT_TRUE(la.ok()) << la.status();
  EXPECT_TRUE(*la);
  EXPECT_TRUE(a->locked());
  absl::StatusOr<bool> lb = b->TryLock("x.lock");
  ASSERT_TRUE(lb.ok()) << lb.status();
  EXPECT_FALSE(*lb);
  EXPECT_FALSE(b->locked());
  EXPECT_TRUE(*b->TryLock("y.lock"));  // another name is another lock
  b->Unlock();
  a->Unlock();
  EXPECT_FALSE(a->locked());
  EXPECT_TRUE(*b->TryLock("x.lock"));
  // Destruction releases it too (and moving keeps it held).
  StateDir moved = std::move(*b);
  EXPECT_TRUE(moved.locked());
  EXPECT_FALSE(*a->TryLock("x.lock"));
  { StateDir gone = std::move(moved); }
  EXPECT_TRUE(*a->TryLock("x.lock"));
}

TEST(StateDir, LockOfAKilledProcessIsFree) {
  FakeTree t;
  const std::string d = t.root() + "/s";
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    absl::StatusOr<StateDir> s = OpenDir(d);
    if (!s.ok() || !s->TryLock("x.lock").value_or(false)) _exit(3);
    (void)!write(ready[1], "k", 1);
    pause();
    _exit(4);
  }
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  absl::StatusOr<StateDir> s = OpenDir(d);
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(*s->TryLock("x.lock"));  // the child holds it
  kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(*s->TryLock("x.lock"));  // released by the kernel
  close(ready[0]);
  close(ready[1]);
}

TEST(StateDir, WriteReadRemove) {
  FakeTree t;
  absl::StatusOr<StateDir> s = OpenDir(t.root() + "/s");
  ASSERT_TRUE(s.ok());
  absl::StatusOr<std::optional<std::string>> r = s->Read("st", 100);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->has_value());
  ASSERT_TRUE(s->WriteAtomically("st", "one\n").ok());
  EXPECT_EQ(**s->Read("st", 100), "one\n");
  ASSERT_TRUE(s->WriteAtomically("st", "two, longer\n").ok());
  EXPECT_EQ(Slurp(t.root() + "/s/st"), "two, longer\n");
  struct stat st;
  ASSERT_EQ(stat((t.root() + "/s/st").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(t.root() + "/s"))
    files += e.is_regular_file();
  EXPECT_EQ(files, 1);  // no temporary left behind
  ASSERT_TRUE(s->Remove("st").ok());
  EXPECT_FALSE(s->Read("st", 100)->has_value());
  EXPECT_TRUE(s->Remove("st").ok());  // already gone: fine
}

TEST(StateDir, CreateAppendOnlyMakesAPrivateFileInTheDirectory) {
  FakeTree t;
  absl::StatusOr<StateDir> s = OpenDir(t.root() + "/s");
  ASSERT_TRUE(s.ok());
  t.Write("/s/old.jsonl", "an old run\n");
  absl::StatusOr<std::unique_ptr<AppendOnlyFile>> f =
      s->CreateAppendOnly("old.jsonl");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ((*f)->path(), t.root() + "/s/old.jsonl");
  ASSERT_TRUE((*f)->Append("one\n").ok());
  EXPECT_EQ(Slurp(t.root() + "/s/old.jsonl"), "one\n");
  struct stat st;
  ASSERT_EQ(stat((t.root() + "/s/old.jsonl").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_FALSE(s->CreateAppendOnly("../escape.jsonl").ok());
  EXPECT_FALSE(std::filesystem::exists(t.root() + "/escape.jsonl"));
}

TEST(StateDir, ReadIsBoundedAndDoesNotFollowSymlinks) {
  FakeTree t;
  absl::StatusOr<StateDir> s = OpenDir(t.root() + "/s");
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(s->WriteAtomically("big", std::string(100000, 'x')).ok());
  absl::StatusOr<std::optional<std::string>> r = s->Read("big", 4096);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->size(),
            4097u);  // one byte more than allowed: the caller sees "too large"
  t.Write("/secret", "root's");
  t.Symlink(t.root() + "/secret", "/s/link");
  EXPECT_FALSE(s->Read("link", 4096).ok());
  // Writing replaces a planted symlink instead of writing through it.
  ASSERT_TRUE(s->WriteAtomically("link", "mine").ok());
  EXPECT_EQ(Slurp(t.root() + "/secret"), "root's");
  EXPECT_EQ(**s->Read("link", 100), "mine");
}

TEST(StateDir, ListGivesTheRegularFilesWithTheSuffixOnly) {
  FakeTree t;
  absl::StatusOr<StateDir> s = OpenDir(t.root() + "/s");
  ASSERT_TRUE(s.ok());
  t.Write("/s/a-1-2.jsonl", "12345");
  t.Write("/s/b-3-4.jsonl", "");
  t.Write("/s/notes.txt", "not a rounds file");
  t.Write("/secret.jsonl", std::string(1000, 'x'));
  t.Symlink(t.root() + "/secret.jsonl", "/s/link.jsonl");
  t.Mkdir("/s/dir.jsonl");
  const struct timespec times[2] = {{0, UTIME_OMIT}, {1000, 5}};
  ASSERT_EQ(
      utimensat(AT_FDCWD, (t.root() + "/s/a-1-2.jsonl").c_str(), times, 0), 0);
  absl::StatusOr<std::vector<StateDir::FileInfo>> l = s->List(".jsonl");
  ASSERT_TRUE(l.ok()) << l.status();
  std::sort(l->begin(), l->end(),
            [](const auto& x, const auto& y) { return x.name < y.name; });
  ASSERT_EQ(l->size(), 2u);  // no symlink, directory or other suffix
  EXPECT_EQ((*l)[0].name, "a-1-2.jsonl");
  EXPECT_EQ((*l)[0].size_bytes, 5u);
  EXPECT_EQ((*l)[0].mtime_ns, 1000 * 1'000'000'000ll + 5);
  EXPECT_EQ((*l)[1].name, "b-3-4.jsonl");
  EXPECT_EQ((*l)[1].size_bytes, 0u);
  absl::StatusOr<std::vector<StateDir::FileInfo>> all = s->List("");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 3u);  // notes.txt too
}

}  // namespace
}  // namespace hotpage
