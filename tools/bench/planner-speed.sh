#!/usr/bin/env bash
# Times `splitbrain plan` on three large GPT searches (tools/bench/planner_speed.py lists them:
# the 1T GPT of SC21 Table 1 on 3,072 and on 512 A100s, the 175B GPT-3 shape on 1,024), 3 runs
# each, user CPU and wall seconds from /usr/bin/time -v, medians reported. Each job also runs once
# with --exhaustive (every candidate and variant timed in full) and the script fails unless both
# rank the same plans with the same ids, times and memory (CHECK=0 skips this: it is slow;
# CHECK=job,job runs it on those jobs only).
# BASELINE=path times another splitbrain build the same way, for a before/after table.
# Writes results/planner-speed/ (README.md, runs.csv, rankings/*.json), made in a temporary
# folder and renamed. Needs a Release build (./build/tools/splitbrain, or SPLITBRAIN=path).
set -euo pipefail
cd "$(dirname "$0")/../.."
binary=${SPLITBRAIN:-./build/tools/splitbrain}
[ -x "$binary" ] || { echo "planner-speed: no splitbrain at $binary (build first, or set SPLITBRAIN)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "planner-speed: needs /usr/bin/time (GNU time)" >&2; exit 2; }
out=results/planner-speed
tmp=$(mktemp -d "results/.planner-speed.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 tools/bench/planner_speed.py "$binary" "$tmp" "${BASELINE:-}" "${CHECK:-1}" "${RUNS:-3}"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
echo "[planner-speed] wrote $out/README.md" >&2
