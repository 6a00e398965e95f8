#!/usr/bin/env bash
# Fidelity of this checkout against an earlier revision's, on this machine in one run. Each
# version runs its own tools/bench/fidelity.sh (its own calibrate, planner, simulator and executor)
# one round at a time, the two alternating round by round and the order flipping each round, so a
# slow minute of the shared host falls on both alike. A plan's error is the error of its median
# round (as fidelity.sh takes it); the report gives each version's median and worst over the plans
# its planner ranks, and the plans both rank side by side.
# BEFORE_REF: a git revision, checked out in a temporary worktree and built there (CUDA off); or
# BEFORE_TREE: a checkout of it, built in its build/ where needed and kept (its results/fidelity is
# overwritten each round).
# Writes results/fidelity-before-after/, or OUT (README.md, results.json, and each version's
# per-round fidelity results under rounds/), made in a temporary folder and renamed.
# Knobs (environment): OUT, ROUNDS (5); TIMED_SECONDS, MIN_ITERS, WARMUP and MODELS go to both
# fidelity.sh. About 7 minutes a round on 2 cores, plus the build of BEFORE_REF.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-results/fidelity-before-after}
rounds=${ROUNDS:-5}
python=/usr/bin/python3
source tools/bench/earlier-revision.sh fidelity-before-after
work=$tmp/fidelity-before-after
mkdir -p "$work/rounds"

before_tree=${BEFORE_TREE:-}
if [ -z "$before_tree" ]; then
  [ -n "${BEFORE_REF:-}" ] || { echo "fidelity-before-after: set BEFORE_REF (a git revision) or BEFORE_TREE (a checkout of it)" >&2; exit 2; }
  add_earlier_worktree "$BEFORE_REF"
  before_tree=$earlier_worktree
fi
[ -f "$before_tree/tools/bench/fidelity.sh" ] || { echo "fidelity-before-after: $before_tree has no tools/bench/fidelity.sh" >&2; exit 2; }
before_label=$(git -C "$before_tree" rev-parse --short HEAD)
after_label="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!results' || echo '+changes')"
if [ ! -f "$before_tree/build/CMakeCache.txt" ]; then
  echo "[before-after] configuring $before_label (CUDA off)" >&2
  cmake -S "$before_tree" -B "$before_tree/build" -DCMAKE_BUILD_TYPE=Release -DSPLITBRAIN_CUDA=OFF -DBUILD_TESTING=OFF > /dev/null
fi
echo "[before-after] building $before_label and $after_label" >&2
cmake --build "$before_tree/build" --target splitbrain -j "$(nproc)" > /dev/null
cmake --build build --target splitbrain -j "$(nproc)" > /dev/null
loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)

one_round() {  # version round -> rounds/<version>-<round>/ (that round's results.json and README.md)
  local version=$1 round=$2 report
  echo "[before-after] round $round/$rounds: $version" >&2
  if [ "$version" = before ]; then
    # Its own default folder: OUT here names this script's, and later fidelity.sh read it too.
    env -u OUT ROUNDS=1 bash "$before_tree/tools/bench/fidelity.sh" > "$tmp/$version-$round.log" 2>&1
    report=$before_tree/results/fidelity
  else
    OUT=$tmp/after-fidelity ROUNDS=1 bash tools/bench/fidelity.sh > "$tmp/$version-$round.log" 2>&1
    report=$tmp/after-fidelity
  fi
  mkdir -p "$work/rounds/$version-$round"
  cp "$report/results.json" "$report/README.md" "$work/rounds/$version-$round/"
  # What that round's calibration measured, in its own words (the overlap among them).
  grep -h '^\[calibrate\] Measured by\|^\[calibrate\] overlap' "$report/calibrate-1.txt" \
    > "$work/rounds/$version-$round/calibration.txt" || true
}
for round in $(seq 1 "$rounds"); do
  if [ $((round % 2)) -eq 1 ]; then order="before after"; else order="after before"; fi
  for version in $order; do one_round "$version" "$round"; done
done
loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)

"$python" tools/bench/fidelity_before_after_report.py "$work" --before "$before_label" --after "$after_label" \
  --rounds "$rounds" --command "${OUT:+OUT=$OUT }${BEFORE_REF:+BEFORE_REF=$BEFORE_REF }${BEFORE_TREE:+BEFORE_TREE=$BEFORE_TREE }bash tools/bench/fidelity-before-after.sh (ROUNDS=$rounds)" \
  --load "$loadavg_start" "$loadavg_end" --machine "$(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p' | head -n 1)"
rm -rf "$out.new" && cp -r "$work" "$out.new"
rm -rf "$out" && mv "$out.new" "$out"
echo "[before-after] wrote $out/README.md" >&2
