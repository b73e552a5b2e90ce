#!/usr/bin/env bash
# kernel-worktree.sh ROOT — the kernel tests' demo tree and its worktree under ROOT, made or refreshed:
#   ROOT/tree.git                      scripts/make-kernel-tree's tree
#   ROOT/kernel-e2e/worktrees/linux    a git worktree of it, checked out at the base commit when new
# Prints "worktree: PATH", "store: PATH", "base: SHA" and "planted: SHA" lines. The store is the build store of the
# kernel tests' daemon (its data dir CACHE/kernel-e2e, test_kernel_bisect.py's persistent_data_dir): builds are
# stored by (recipe hash, commit), the same for kernel_lab_tool and bisectd, so a kernel one of them built the
# other reuses.
# Why that worktree path: kbuild sets CCACHE_BASEDIR to the worktree's and build dir's common folder, so ccache hits
# only where the build dir reaches the sources by the same relative path. ROOT/kbuild/X reaches this worktree as
# ../../kernel-e2e/worktrees/linux, exactly as the daemon of the kernel tests (data dir CACHE/kernel-e2e, build
# dirs CACHE/kbuild/X) reaches its own: one cold kernel build serves the tools' builds and the daemon's.
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: kernel-worktree.sh ROOT" >&2; exit 2; }
root=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$root"
planted=$("$src/scripts/make-kernel-tree" "$root/tree.git" | tail -1)
base=$(cat "$root/tree.git/.bisectd-base")
worktree=$root/kernel-e2e/worktrees/linux
if [[ ! -e $worktree/.git ]]; then
  rm -rf "$worktree"
  git -C "$root/tree.git" worktree prune
  git -C "$root/tree.git" worktree add -q --detach "$worktree" "$base"
fi
echo "worktree: $worktree"
echo "store: ${XDG_CACHE_HOME:-$HOME/.cache}/bisectd/kernel-e2e/builds"
echo "base: $base"
echo "planted: $planted"
