#!/usr/bin/env bash
# kernel-worktree.sh ROOT — the kernel tests' demo tree under ROOT, and the worktree and build dirs they build in,
# made or refreshed:
#   ROOT/tree.git                          scripts/make-kernel-tree's tree
#   CACHE/kernel-e2e/worktrees/linux       the worktree, checked out at the base commit when new
#   CACHE/kbuild                           the build root (build dirs <tree>-<recipe hash>-<worktree path hash>)
# (CACHE = ${XDG_CACHE_HOME:-~/.cache}/bisectd.) Prints "tree: NAME", "worktree: PATH", "build_root: PATH",
# "store: PATH", "base: SHA" and "planted: SHA" lines; check a commit out with `git -C WORKTREE checkout -f --detach`.
# Why these paths: they are those of the kernel tests' daemon (data dir CACHE/kernel-e2e, test_kernel_bisect.py's
# persistent_data_dir; tree "linux"; build root CACHE/kbuild): the tools (kernel_lab_tool) and that daemon build
# in one build dir and store builds in one store (by recipe hash and commit). A kernel one of them built the other
# reuses, and the daemon's first build of a commit the tools did not build is incremental, not a whole kernel.
# The worktree is a repository of its own that borrows the objects of whichever tree last checked out (the daemon
# points it at its mirror, this script back at ROOT/tree.git); the commits are the same (make-kernel-tree's are
# reproducible) but for a revert commit only the daemon's mirror has: HEAD is then moved to the base, the index
# still describing the files on disk, so that the next checkout rewrites only what differs.
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: kernel-worktree.sh ROOT" >&2; exit 2; }
root=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/bisectd
worktree=$cache/kernel-e2e/worktrees/linux
mkdir -p "$root"
planted=$("$src/scripts/make-kernel-tree" "$root/tree.git" | tail -1)
base=$(cat "$root/tree.git/.bisectd-base")
# An older layout kept its own worktree and build dirs under ROOT: 2 GB not used any more.
if [[ -e $root/kernel-e2e || -e $root/kbuild ]]; then
  rm -rf "$root/kernel-e2e" "$root/kbuild"
  git -C "$root/tree.git" worktree prune
fi
new=0
if [[ ! -d $worktree/.git ]]; then
  rm -rf "$worktree"
  git init -q "$worktree"
  new=1
fi
mkdir -p "$worktree/.git/objects/info"
echo "$(cd "$root/tree.git" && pwd -P)/objects" >"$worktree/.git/objects/info/alternates"
git -C "$worktree" rev-parse -q --verify 'HEAD^{commit}' >/dev/null ||
  git -C "$worktree" update-ref --no-deref HEAD "$base"
((new == 0)) || git -C "$worktree" -c advice.detachedHead=false checkout -q -f --detach "$base"
echo "tree: linux"
echo "worktree: $worktree"
echo "build_root: $cache/kbuild"
echo "store: $cache/kernel-e2e/builds"
echo "base: $base"
echo "planted: $planted"
