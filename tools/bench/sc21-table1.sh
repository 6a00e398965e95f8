#!/usr/bin/env bash
# Predicted against published TFLOP/s per GPU for the 10 rows of Narayanan et al., SC21, Table 1
# (tools/bench/sc21_table1.py says how the plans are written). Writes results/sc21-table1/
# (README.md, results.json, results.csv), made in a temporary folder and renamed. Needs a
# build (./build/tools/splitbrain, or SPLITBRAIN=path). Simulator only.
set -euo pipefail
cd "$(dirname "$0")/../.."
binary=${SPLITBRAIN:-./build/tools/splitbrain}
[ -x "$binary" ] || { echo "sc21-table1: no splitbrain at $binary (build first, or set SPLITBRAIN)" >&2; exit 2; }
out=results/sc21-table1
tmp=$(mktemp -d "results/.sc21-table1.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 tools/bench/sc21_table1.py "$binary" "$tmp"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
echo "[sc21] wrote $out/README.md" >&2
