#!/usr/bin/env bash
# Predicted against measured iteration time across emulated nodes, after calibrating each set-up:
#   one-node-2  2 ranks on this host (mpirun, one core each): one level
#   2x1         2 emulated nodes x 1 rank (tools/emulate-nodes.sh, a 1 Gb/s, 0.1 ms link): two levels
#   2x2         2 emulated nodes x 2 ranks (oversubscribed: a node's 2 ranks share its one core)
# Each set-up is calibrated where it runs (`calibrate` measures the node level among each host's
# ranks and the cluster level among one rank per host, with the exact kernels of both jobs'
# plans, under the same oversubscription), the jobs are planned on that cluster file, and the
# planner's TOP plans that the executor runs are run there and compared with their prediction.
# Jobs: vgg11-cifar10 and a tiny GPT, batch 16. For the 2-rank jobs, the TOP plans of one-node-2
# and of 2x1 are run on both, so the planner's ranking on one node and on two can be compared
# with the measured one (rank correlation, regret of the predicted best).
# Writes results/emulated-nodes-time/: README.md (tables, median and worst error, rankings),
# results.json, clusters/*.json (the calibrated cluster files), runs/ (each run's plan, prediction,
# report and log). Made in a temporary folder and renamed. Needs root (namespaces).
# Each plan that runs is run ROUNDS times, round after round over all of them (so a slow spell of
# this shared machine falls on every plan alike, not on a few), and its median round is compared.
# Each set-up is calibrated anew in every round, just before its first run there, and each run is
# predicted on its round's cluster file: a calibration is a sample of the same noisy machine (the
# tiny GPT's 2 x 2 prediction moved 6.0 -> 7.6 ms between two calibrations minutes apart), so the
# median prediction over the rounds is compared with the median measurement. The planner ranks on
# round 1's calibration.
# Knobs (environment): TOP (3), ROUNDS (5; about 30 minutes on 2 CPUs), TIMED_SECONDS (each run times at least this many
# seconds of steps by the prediction, 2), MIN_ITERS (5), WARMUP (1), REPEATS (calibrate's, 3),
# LATENCY (the link's one-way delay, 0.1ms; through the delay line where the kernel has no netem).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=results/emulated-nodes-time
top=${TOP:-3} rounds=${ROUNDS:-5} timed_seconds=${TIMED_SECONDS:-2} min_iters=${MIN_ITERS:-5} warmup=${WARMUP:-1}
repeats=${REPEATS:-3} latency=${LATENCY:-0.1ms}
batch=16
python=/usr/bin/python3
sb=./build/tools/splitbrain
[ -x "$sb" ] || { echo "emulated-nodes-time: build splitbrain first ($sb)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "emulated-nodes-time: needs root (network namespaces)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/emulated-nodes-time.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
work=$tmp/out
mkdir -p "$work/clusters" "$work/runs" "$tmp/plans"
gpt="gpt:layers=2,hidden=64,heads=4,seq=16,vocab=96,positions=16"
loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)

ranks_of() { case "$1" in one-node-2 | 2x1) echo 2 ;; 2x2) echo 4 ;; esac; }
launch() {  # setup command...
  local setup=$1
  shift
  case "$setup" in
    one-node-2) mpirun -np 2 --bind-to core "$@" ;;
    2x1) tools/emulate-nodes.sh --nodes 2 --ranks-per-node 1 --bandwidth 1gbit --latency "$latency" -- "$@" ;;
    2x2) tools/emulate-nodes.sh --nodes 2 --ranks-per-node 2 --bandwidth 1gbit --latency "$latency" -- "$@" ;;
  esac
}
short_of() { [ "$1" = "$gpt" ] && echo tiny-gpt || echo "$1"; }
data_of() { [ "$1" = "$gpt" ] && echo tokens || echo synthetic:shape=3x32x32; }

# The set-up's cluster file of a round: SETUP.json in round 1, SETUP.round-K.json after.
cluster_of() { [ "$2" -eq 1 ] && echo "$work/clusters/$1.json" || echo "$work/clusters/$1.round-$2.json"; }
calibrate_setup() {  # setup round
  local setup=$1 round=$2 ranks cluster
  ranks=$(ranks_of "$setup")
  cluster=$(cluster_of "$setup" "$round")
  echo "[emulated-nodes-time] $setup: calibrating ($ranks ranks, round $round of $rounds)" >&2
  launch "$setup" "$sb" calibrate --repeats "$repeats" --batch "$batch" --devices "$ranks" \
    --model vgg11-cifar10 --model "$gpt" --out "$cluster" > "${cluster%.json}.calibrate.txt" 2>&1
  tail -n 2 "${cluster%.json}.calibrate.txt" | head -n 1 >&2
}

setups=(one-node-2 2x1 2x2)
for setup in "${setups[@]}"; do
  ranks=$(ranks_of "$setup")
  calibrate_setup "$setup" 1
  for model in vgg11-cifar10 "$gpt"; do
    short=$(short_of "$model")
    "$sb" plan --model "$model" --cluster "$work/clusters/$setup.json" --devices "$ranks" --batch "$batch" --top 40 \
      --emit-plans "$tmp/plans/$setup-$short" --json "$work/clusters/$setup-$short.ranking.json" > /dev/null
  done
done

# Runs one plan on one set-up against its prediction there (on the round's cluster file); prints
# "ran" or "refused REASON". Round 1 writes NAME.predicted.json, NAME.measured.json and NAME.log,
# round k NAME.round-k.predicted.json, .measured.json and .log.
run_plan() {  # setup model plan name [round]
  local setup=$1 model=$2 plan=$3 name=$4 round=${5:-1} dir=$work/runs/$1
  local report=$name
  [ "$round" -eq 1 ] || report=$name.round-$round
  mkdir -p "$dir"
  [ -f "$dir/$name.plan.json" ] || cp "$plan" "$dir/$name.plan.json"
  [ -f "$dir/$report.predicted.json" ] ||
    "$sb" simulate --plan "$plan" --cluster "$(cluster_of "$setup" "$round")" --json "$dir/$report.predicted.json" > /dev/null
  local iters
  iters=$("$python" -c "import json, math, sys; s = json.load(open(sys.argv[1]))['iteration_seconds']; print(max($min_iters, math.ceil($timed_seconds / s)))" "$dir/$report.predicted.json")
  echo "[emulated-nodes-time] $setup: $name ($iters steps, round $round of $rounds)" >&2
  if launch "$setup" "$sb" run --backend cpu --plan "$plan" --data "$(data_of "$model")" --warmup "$warmup" \
    --iters "$iters" --log-every 1000 --report "$dir/$report.measured.json" > "$dir/$report.log" 2>&1; then
    echo ran
  else
    echo "refused $(grep -m1 '^splitbrain: ' "$dir/$name.log" | cut -c13- || tail -n 1 "$dir/$name.log")"
  fi
}

# What a plan is, whatever its file name and family: its mesh, layers, stages and options.
plan_key() { "$python" -c "import hashlib, json, sys; p = json.load(open(sys.argv[1])); p.pop('family', None); print(hashlib.sha1(json.dumps(p, sort_keys=True).encode()).hexdigest())" "$1"; }

# Each set-up's TOP plans that run, per job; for 2 ranks also the other 2-rank set-up's.
: > "$work/runs.txt"
declare -A chosen
declare -A done_keys
declare -A plan_of  # "setup|name" -> the plan file, for the later rounds
for setup in "${setups[@]}"; do
  for model in vgg11-cifar10 "$gpt"; do
    short=$(short_of "$model")
    ran=0
    for plan in $(ls "$tmp/plans/$setup-$short"/*.json | sort); do
      [ "$ran" -lt "$top" ] || break
      name=$short-$(basename "$plan" .json)
      result=$(run_plan "$setup" "$model" "$plan" "$name")
      echo "$setup|$short|$name|$result" >> "$work/runs.txt"
      done_keys["$setup|$short|$(plan_key "$plan")"]=1
      if [ "$result" = ran ]; then
        ran=$((ran + 1))
        chosen["$setup|$short"]+="$plan "
        plan_of["$setup|$name"]=$plan
      fi
    done
  done
done
for pair in "one-node-2 2x1" "2x1 one-node-2"; do
  read -r from to <<< "$pair"
  for model in vgg11-cifar10 "$gpt"; do
    short=$(short_of "$model")
    for plan in ${chosen["$from|$short"]:-}; do
      # The same plan may have run there under another rank and family: its content decides.
      [ -z "${done_keys["$to|$short|$(plan_key "$plan")"]:-}" ] || continue
      name=$short-$(basename "$plan" .json)-from-$from
      result=$(run_plan "$to" "$model" "$plan" "$name")
      echo "$to|$short|$name|$result|from $from" >> "$work/runs.txt"
      [ "$result" != ran ] || plan_of["$to|$name"]=$plan
    done
  done
done
for ((round = 2; round <= rounds; round++)); do
  declare -A calibrated=()
  while IFS='|' read -r -u 3 setup short name result _; do
    [ "$result" = ran ] || continue
    [ -n "${calibrated[$setup]:-}" ] || { calibrate_setup "$setup" "$round" 3<&-; calibrated[$setup]=1; }
    model=$gpt
    [ "$short" = tiny-gpt ] || model=$short
    result=$(run_plan "$setup" "$model" "${plan_of["$setup|$name"]}" "$name" "$round")
    [ "$result" = ran ] || echo "[emulated-nodes-time] $setup: $name did not run in round $round: $result" >&2
  done 3< "$work/runs.txt"  # not stdin: mpirun forwards its stdin to rank 0
done
loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)

"$python" tools/bench/emulated_nodes_time_report.py "$work" \
  --command "bash tools/bench/emulated-nodes-time.sh (TOP=$top ROUNDS=$rounds TIMED_SECONDS=$timed_seconds MIN_ITERS=$min_iters WARMUP=$warmup REPEATS=$repeats LATENCY=$latency)" \
  --latency "$latency" --machine "$(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p' | head -n 1)" --load "$loadavg_start" "$loadavg_end"
rm -rf "$out.new" && mkdir -p "$(dirname "$out")" && cp -r "$work" "$out.new"
rm -rf "$out" && mv "$out.new" "$out"
echo "[emulated-nodes-time] wrote $out/README.md" >&2
