#!/bin/sh
# Bazel's --workspace_status_command for release builds (`--config=release`
# in .bazelrc; tools/install.sh and debian/rules build with it): prints the
# git commit the tree is at, which //tools:build_commit_h stamps into the
# `hotpage` binary (`hotpage --version`). "-dirty" when tracked files differ
# from that commit. Prints nothing outside a git checkout (a source tarball):
# the binary then says "git unknown".
#
# Only release builds run this: a stamped commit in every build would relink
# `hotpage` on every commit and re-run each test that uses it (the VM tests
# included) even when no code changed.
cd "$(dirname "$0")/.." || exit 0
commit=$(git rev-parse --short=12 HEAD 2>/dev/null) || exit 0
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  commit="$commit-dirty"
fi
echo "STABLE_HOTPAGE_GIT_COMMIT $commit"
