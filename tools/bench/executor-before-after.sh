#!/usr/bin/env bash
# CPU executor step time, this checkout against an earlier one: vgg11-cifar10 (batch 48) on 2
# ranks, the planner's plans on the local-cpu preset (every family it ranks there: SoyBean,
# model-parallel, SplitBrain, data-parallel, domain-parallel, pipeline) plus three variants that
# cover the rest of the executor's step (data-parallel under ZeRO 1 and ZeRO 3, the pipeline with
# recompute). Both binaries run every plan in every round, the order alternating round by round,
# so a slow minute of the shared host falls on both alike; each cell is the median over the rounds
# of each run's median step time.
# BEFORE_BIN: the earlier splitbrain binary (BEFORE_LABEL: what to call it); or BEFORE_REF: a git
# revision, built here (CUDA off) in a temporary worktree. Writes results/executor-before-after/
# (README.md, results.json, results.csv; made in a temporary folder and renamed).
# Knobs (environment): ROUNDS (5), WARMUP (2), ITERS (8). About 8 minutes on 2 quiet cores, plus
# the build of BEFORE_REF.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=results/executor-before-after
rounds=${ROUNDS:-5} warmup=${WARMUP:-2} iters=${ITERS:-8}
model=vgg11-cifar10 batch=48 ranks=2 data=synthetic
python=/usr/bin/python3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
source tools/bench/earlier-revision.sh executor-before-after
work=$tmp/executor-before-after
mkdir -p "$work" "$tmp/runs" "$tmp/plans"

before=${BEFORE_BIN:-}
# The earlier version as the report names it: the revision, or BEFORE_LABEL (say, the revision a
# given binary was built from), else the binary's path.
before_label=${BEFORE_REF:-${BEFORE_LABEL:-$before}}
given="BEFORE_REF=${BEFORE_REF:-}"
[ -n "$before" ] && given="BEFORE_BIN=$before${BEFORE_LABEL:+ BEFORE_LABEL=$BEFORE_LABEL}"
if [ -z "$before" ]; then
  [ -n "${BEFORE_REF:-}" ] || { echo "executor-before-after: set BEFORE_BIN (a splitbrain binary) or BEFORE_REF (a git revision)" >&2; exit 2; }
  add_earlier_worktree "$BEFORE_REF"
  echo "[before-after] building $BEFORE_REF (CUDA off)" >&2
  cmake -S "$earlier_worktree" -B "$tmp/before-build" -DCMAKE_BUILD_TYPE=Release -DSPLITBRAIN_CUDA=OFF -DBUILD_TESTING=OFF > /dev/null
  cmake --build "$tmp/before-build" --target splitbrain -j "$(nproc)" > /dev/null
  before=$tmp/before-build/tools/splitbrain
fi
[ -x "$before" ] || { echo "executor-before-after: $before is not an executable" >&2; exit 2; }
echo "[before-after] building splitbrain" >&2
cmake --build build --target splitbrain -j "$(nproc)" > /dev/null
after=./build/tools/splitbrain
after_label="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!results' || echo '+changes')"
loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)

"$after" plan --model "$model" --devices "$ranks" --batch "$batch" --cluster local-cpu --emit-plans "$tmp/ranked" > /dev/null
cp "$tmp/ranked"/*.json "$tmp/plans/"
"$python" - "$tmp/plans" <<'PY'
import json, pathlib, sys
plans = pathlib.Path(sys.argv[1])
def variant(source_suffix, name, **options):
    source = next(p for p in sorted(plans.glob("*.json")) if p.stem.endswith(source_suffix))
    plan = json.loads(source.read_text())
    plan["options"].update(options)
    plan["family"] += " " + name
    (plans / f"{source.stem}-{name}.json").write_text(json.dumps(plan, indent=1))
variant("data-parallel", "zero1", zero_stage=1)
variant("data-parallel", "zero3", zero_stage=3)
variant("pipeline-2-stages", "recompute", recompute=True)
PY

run_one() {  # version binary plan round
  local version=$1 binary=$2 plan=$3 round=$4 name
  name=$(basename "$plan" .json)
  local report=$tmp/runs/$name@$version@$round.json
  echo "[before-after] round $round/$rounds: $name, $version" >&2
  mpirun -np "$ranks" "$binary" run --backend cpu --plan "$plan" --data "$data" --warmup "$warmup" --iters "$iters" \
    --log-every 1000 --report "$report" > "$tmp/runs/$name@$version@$round.log" 2>&1 \
    || { echo "[before-after]   failed: $(tail -n 1 "$tmp/runs/$name@$version@$round.log")" >&2; rm -f "$report"; }
}
for round in $(seq 1 "$rounds"); do
  for plan in "$tmp/plans"/*.json; do
    if (( round % 2 )); then
      run_one before "$before" "$plan" "$round"; run_one after "$after" "$plan" "$round"
    else
      run_one after "$after" "$plan" "$round"; run_one before "$before" "$plan" "$round"
    fi
  done
done
loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)

command="$given bash tools/bench/executor-before-after.sh (ROUNDS=$rounds WARMUP=$warmup ITERS=$iters)"
"$python" tools/bench/executor_before_after_report.py "$tmp/runs" "$work" --command "$command" \
  --before "$before_label" --after "$after_label" --load "$loadavg_start" "$loadavg_end" \
  --cpu "$(lscpu | sed -n 's/^Model name: *//p' | head -n 1)" --cpus "$(nproc)" \
  --setup "$model, batch $batch, $ranks ranks, --data $data, warmup $warmup, $iters timed steps"
rm -rf "$out.new" && mkdir -p "$(dirname "$out")" && cp -r "$work" "$out.new"
rm -rf "$out" && mv "$out.new" "$out"
cat "$out/README.md"
echo "[before-after] wrote $out/README.md" >&2
