#!/usr/bin/env bash
# Re-predicts the runs of results/fidelity with this checkout's simulator and the calibrations
# committed beside them, against the times measured then: a cost-model change checked on real
# measurements in seconds, with no run and no new noise. Each plan is emitted again as fidelity.sh
# emitted it (the planner, round 1's calibration) and predicted with every round's calibration;
# its row is its round with the median error, as in fidelity.sh. The measured times are the
# committed ones: re-run fidelity.sh for what an executor change does.
# Writes results/fidelity-repredicted/ (README.md, results.json; made in a temporary folder and
# renamed). About a minute.
# CACHE_MIB=N predicts with every calibration's cache (device.last_level_cache_bytes) set to N MiB
# instead of what calibrate recorded: how the cost model's reading of the cache bears on the same
# measurements (tools/bench/cache-what-if.sh). OUT=DIR writes there instead. FIDELITY=DIR reads
# an earlier fidelity run there (e.g. `git archive REV results/fidelity | tar -x -C /tmp/REV`),
# named by FIDELITY_COMMIT=REV.
set -euo pipefail
cd "$(dirname "$0")/../.."
source_dir=${FIDELITY:-results/fidelity}
out=${OUT:-results/fidelity-repredicted}
python=/usr/bin/python3
[ -f "$source_dir/rounds.txt" ] || { echo "fidelity-repredict: $source_dir/rounds.txt missing (run tools/bench/fidelity.sh)" >&2; exit 2; }
rounds=$(ls "$source_dir"/local-cpu-calibrated-*.json | wc -l)
echo "[repredict] building splitbrain" >&2
cmake --build build --target splitbrain -j "$(nproc)" > /dev/null
sb=./build/tools/splitbrain
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fidelity-repredict.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
: > "$tmp/predicted.txt"
calibrations=$source_dir
if [ -n "${CACHE_MIB:-}" ]; then
  calibrations=$tmp/calibrations
  mkdir -p "$calibrations"
  for round in $(seq 1 "$rounds"); do
    "$python" -c 'import json, sys
cluster = json.load(open(sys.argv[1]))
cluster["device"]["last_level_cache_bytes"] = float(sys.argv[2]) * 2**20
json.dump(cluster, open(sys.argv[3], "w"), indent=1)' \
      "$source_dir/local-cpu-calibrated-$round.json" "$CACHE_MIB" "$calibrations/local-cpu-calibrated-$round.json"
  done
fi
for group in $(cut -d' ' -f1 "$source_dir/rounds.txt" | sed -E 's/^(.*-[0-9]+)-[0-9]{2}-.*/\1/' | sort -u); do
  model=${group%-*} ranks=${group##*-}
  "$sb" plan --model "$model" --cluster "$calibrations/local-cpu-calibrated-1.json" --devices "$ranks" --batch 64 --top 30 \
    --emit-plans "$tmp/plans-$group" > /dev/null 2>&1
  for plan in "$tmp/plans-$group"/*.json; do
    name=$group-$(basename "$plan" .json)
    echo "[repredict] $name" >&2
    for round in $(seq 1 "$rounds"); do
      "$sb" simulate --plan "$plan" --cluster "$calibrations/local-cpu-calibrated-$round.json" --json "$tmp/p.json" > /dev/null
      echo "$name $round $("$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["iteration_seconds"])' "$tmp/p.json")" \
        >> "$tmp/predicted.txt"
    done
  done
done
mkdir -p "$tmp/out"
"$python" tools/bench/fidelity_repredict_report.py "$source_dir" "$tmp/predicted.txt" "$tmp/out" \
  --commit "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!results' || echo '+changes')" \
  --source-commit "${FIDELITY_COMMIT:-$(git log -1 --format=%h -- "$source_dir/rounds.txt")}" ${CACHE_MIB:+--cache-mib "$CACHE_MIB"}
rm -rf "$out.new" && cp -r "$tmp/out" "$out.new" && rm -rf "$out" && mv "$out.new" "$out"
echo "[repredict] wrote $out/README.md" >&2
