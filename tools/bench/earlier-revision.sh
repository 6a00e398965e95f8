# Sourced by the before/after benchmarks (`source tools/bench/earlier-revision.sh NAME`, from the
# repository's root): makes $tmp, a temporary folder named after NAME, and removes it on exit,
# together with the worktree that add_earlier_worktree checked out there, so a stopped benchmark
# leaves no stray worktree registered in the repository.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
earlier_worktree=
remove_earlier_worktree_and_tmp() {
  if [ -n "$earlier_worktree" ]; then git worktree remove --force "$earlier_worktree" > /dev/null 2>&1 || true; fi
  rm -rf "$tmp"
}
trap remove_earlier_worktree_and_tmp EXIT

# add_earlier_worktree REF: checks REF out, detached, in $tmp/before-src ($earlier_worktree).
add_earlier_worktree() {
  earlier_worktree=$tmp/before-src
  git worktree add --detach "$earlier_worktree" "$1" > /dev/null
}
