#!/usr/bin/env bash
# Does calibration depend on who places the ranks? `mpirun -np 2 splitbrain calibrate` three
# ways, interleaved over ROUNDS rounds: splitbrain pins (mpirun --bind-to none), the launcher
# binds (mpirun --bind-to core), nobody binds (--bind-to none + --no-bind). Compares the fitted
# rates the cost model uses: the device's conv, gemm and elementwise peak efficiencies, memory
# bandwidth, and the link's bandwidth and latency (medians over the rounds).
# Writes results/calibrate-placement/ (README.md, results.json; made in a temporary folder and
# renamed). Knobs: ROUNDS (3), REPEATS (5, calibrate's own). About 6 minutes on 2 quiet cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=results/calibrate-placement
rounds=${ROUNDS:-3} repeats=${REPEATS:-5}
python=/usr/bin/python3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/calibrate-placement.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
work=$tmp/calibrate-placement
mkdir -p "$work" "$tmp/runs"
echo "[calibrate-placement] building splitbrain" >&2
cmake --build build --target splitbrain -j "$(nproc)" > /dev/null
sb=./build/tools/splitbrain
loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)
ways=(splitbrain launcher unbound)
for round in $(seq 1 "$rounds"); do
  for i in 0 1 2; do
    way=${ways[$(((i + round - 1) % 3))]}
    launch=(mpirun -np 2 --bind-to none) extra=()
    case "$way" in
      launcher) launch=(mpirun -np 2 --bind-to core) ;;
      unbound) extra=(--no-bind) ;;
    esac
    echo "[calibrate-placement] round $round/$rounds: $way" >&2
    "${launch[@]}" "$sb" calibrate --repeats "$repeats" --out "$tmp/runs/$way-$round.json" "${extra[@]}" \
      > "$tmp/runs/$way-$round.log" 2>&1
  done
done
loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)
"$python" - "$tmp/runs" "$work" "$rounds" "$(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p' | head -n 1)" \
  "$loadavg_start" "$loadavg_end" "bash tools/bench/calibrate-placement.sh (ROUNDS=$rounds REPEATS=$repeats)" <<'PY'
import datetime, json, pathlib, statistics, sys
runs, work, rounds, machine, load_start, load_end, command = sys.argv[1:]
runs, work, rounds = pathlib.Path(runs), pathlib.Path(work), int(rounds)
ways = ("splitbrain", "launcher", "unbound")
def rates(doc):
    d = doc["device"]
    link = doc["levels"][0]["link"]
    return {"conv max efficiency": d["efficiency"]["conv"]["max_efficiency"],
            "gemm max efficiency": d["efficiency"]["gemm"]["max_efficiency"],
            "elementwise max efficiency": d["efficiency"]["elementwise"]["max_efficiency"],
            "memory bandwidth GB/s": d["memory_bandwidth_bytes_per_second"] * d["memory_efficiency"]["max_efficiency"] / 1e9,
            "link bandwidth GB/s": link["bandwidth_bytes_per_second"] / 1e9,
            "link latency us": link["latency_seconds"] * 1e6}
table = {}
for way in ways:
    per_round = [rates(json.loads((runs / f"{way}-{r}.json").read_text())) for r in range(1, rounds + 1)]
    table[way] = {k: {"median": statistics.median(p[k] for p in per_round), "by_round": [p[k] for p in per_round]}
                  for k in per_round[0]}
date = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
doc = {"command": command, "machine": machine, "date": date, "load_average_start": load_start,
       "load_average_end": load_end, "rates": table}
(work / "results.json").write_text(json.dumps(doc, indent=2) + "\n")
lines = ["# Calibration by rank placement", "", f"Command: `{command}`. Machine: {machine}; run {date}; load average "
         f"{load_start} at the start, {load_end} at the end.",
         "Ways: **splitbrain**: `mpirun --bind-to none`, splitbrain pins; **launcher**: `mpirun --bind-to core`; "
         "**unbound**: `--bind-to none` + `--no-bind`. Each cell: the median over the rounds of the fitted value.", "",
         "| rate | splitbrain | launcher | unbound | splitbrain / launcher | unbound / launcher |", "|---|---:|---:|---:|---:|---:|"]
for key in table["launcher"]:
    s, l, u = (table[w][key]["median"] for w in ways)
    lines.append(f"| {key} | {s:.4g} | {l:.4g} | {u:.4g} | {s / l:.3f} | {u / l:.3f} |")
(work / "README.md").write_text("\n".join(lines) + "\n")
PY
rm -rf "$out.new" && mkdir -p "$(dirname "$out")" && cp -r "$work" "$out.new"
rm -rf "$out" && mv "$out.new" "$out"
cat "$out/README.md"
