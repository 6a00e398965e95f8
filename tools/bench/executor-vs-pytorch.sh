#!/usr/bin/env bash
# Training-step time of the CPU executor (`splitbrain run`) against PyTorch CPU on the same
# machine in the same run, on vgg11-cifar10, fp32, one thread per rank:
#   1 rank,  batch 64                against PyTorch (tools/bench/pytorch_peer.py --ranks 1)
#   2 ranks, data parallel, batch 128 against PyTorch DDP over gloo (2 processes x batch 64)
# The runs are interleaved (ours, PyTorch, ours, PyTorch, ... for ROUNDS rounds) because the
# machine is shared; the table reports every round, the median over rounds and ours/PyTorch
# (< 1: ours is faster). One `perf record -g` of the 1-rank run names the executor's hotspots.
# Writes results/executor-vs-pytorch/{results.json, README.md, perf-top.txt}; nothing is left
# half-written (files are made in a temporary folder and renamed).
# Knobs (environment): ROUNDS (3), ITERS (8 timed steps per run), WARMUP (2), PERF (1: record
# hotspots), PERF_ITERS (6). About 8 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=results/executor-vs-pytorch
rounds=${ROUNDS:-3} iters=${ITERS:-8} warmup=${WARMUP:-2} do_perf=${PERF:-1} perf_iters=${PERF_ITERS:-6}
python=/usr/bin/python3  # the PyTorch 1.13 CPU install
tmp=$(mktemp -d "${TMPDIR:-/tmp}/executor-vs-pytorch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

"$python" -c 'import torch' || { echo "executor-vs-pytorch: $python has no torch (apt-get install python3-torch)" >&2; exit 1; }
echo "[bench] building splitbrain" >&2
cmake --build build --target splitbrain -j "$(nproc)" > /dev/null
sb=./build/tools/splitbrain

# The data-parallel plan of each case (family "data-parallel" or "data-parallel = best").
pick_dp() {  # DIR -> path of the data-parallel plan file
  "$python" - "$1" <<'EOF'
import json, pathlib, sys
for path in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    if json.loads(path.read_text()).get("family", "").startswith("data-parallel"):
        print(path); break
else:
    sys.exit(f"no data-parallel plan in {sys.argv[1]}")
EOF
}
"$sb" plan --model vgg11-cifar10 --devices 1 --batch 64 --emit-plans "$tmp/plans-1" > /dev/null 2>&1
"$sb" plan --model vgg11-cifar10 --devices 2 --batch 128 --emit-plans "$tmp/plans-2" > /dev/null 2>&1
plan1=$(pick_dp "$tmp/plans-1")
plan2=$(pick_dp "$tmp/plans-2")
cp "$plan1" "$tmp/plan-1rank.json"
cp "$plan2" "$tmp/plan-2rank.json"
data=synthetic:shape=3x32x32
loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)

for round in $(seq 1 "$rounds"); do
  echo "[bench] round $round/$rounds: 1 rank" >&2
  "$sb" run --backend cpu --plan "$tmp/plan-1rank.json" --data "$data" --iters "$iters" --warmup "$warmup" --threads 1 \
    --log-every 1000 --report "$tmp/ours-1-$round.json" > /dev/null
  "$python" tools/bench/pytorch_peer.py --ranks 1 --batch 64 --iters "$iters" --warmup "$warmup" --threads 1 \
    --out "$tmp/torch-1-$round.json"
  echo "[bench] round $round/$rounds: 2 ranks" >&2
  mpirun -np 2 --bind-to core "$sb" run --backend cpu --plan "$tmp/plan-2rank.json" --data "$data" --iters "$iters" \
    --warmup "$warmup" --threads 1 --log-every 1000 --report "$tmp/ours-2-$round.json" > /dev/null
  "$python" tools/bench/pytorch_peer.py --ranks 2 --batch 64 --iters "$iters" --warmup "$warmup" --threads 1 \
    --out "$tmp/torch-2-$round.json"
done
loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)

: > "$tmp/perf-top.txt"
if [ "$do_perf" = 1 ] && command -v perf > /dev/null; then
  echo "[bench] perf record -g of the 1-rank run" >&2
  # DNNL_JIT_PROFILE=2: oneDNN writes /tmp/perf-PID.map so its JIT kernels get names; the
  # command records its PID so that exactly that file is removed afterwards.
  if DNNL_JIT_PROFILE=2 perf record -g -F 499 -o "$tmp/perf.data" -- sh -c 'echo $$ > "$1"; shift; exec "$@"' sh \
       "$tmp/perf.pid" "$sb" run --backend cpu --plan "$tmp/plan-1rank.json" --data "$data" --iters "$perf_iters" --warmup 1 \
       --threads 1 --log-every 1000 > /dev/null 2> "$tmp/perf-record.log"; then
    clean() { grep -v '^#' | grep -v '^$' | sed -e 's/ *- *- *$//' -e 's/ *$//'; }
    {
      echo "# perf record -g -F 499 of: splitbrain run (vgg11-cifar10, 1 rank, batch 64, fp32, --threads 1,"
      echo "# 1 warm-up + $perf_iters steps; start-up is in the profile too). [JIT] = oneDNN's generated kernels."
      echo
      echo "## self time by shared object"
      perf report -i "$tmp/perf.data" --no-children --sort dso --stdio -g none 2> /dev/null | clean \
        | sed 's/\[JIT\] tid [0-9]*/[JIT] oneDNN kernels/' | head -8
      echo
      echo "## self time by symbol (JIT kernels of the same name summed)"
      perf report -i "$tmp/perf.data" --no-children --sort symbol --stdio -g none 2> /dev/null | clean \
        | awk '{p = $1; sub(/%/, "", p); $1 = ""; $2 = ""; sub(/^ +/, ""); s[$0] += p}
               END {for (k in s) if (s[k] >= 0.4) printf "%6.2f%%  %s\n", s[k], k}' | sort -rn | head -30
    } > "$tmp/perf-top.txt"
  else
    echo "[bench] perf record failed; no hotspots recorded:" >&2
    cat "$tmp/perf-record.log" >&2
  fi
  if [ -s "$tmp/perf.pid" ]; then rm -f "/tmp/perf-$(cat "$tmp/perf.pid").map"; fi
fi

machine=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
"$python" - "$tmp" "$out" "$rounds" "$iters" "$warmup" "$machine" "$loadavg_start" "$loadavg_end" <<'EOF'
import json, os, pathlib, platform, statistics, subprocess, sys
tmp, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
rounds, iters, warmup = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
machine, load_start, load_end = sys.argv[6], sys.argv[7], sys.argv[8]
load = lambda name: json.loads((tmp / name).read_text())
phase_names = ["compute_forward", "compute_backward", "comm_exposed", "bubble", "optimizer"]

cases = []
for ranks, title in [(1, "1 rank, batch 64"), (2, "2 ranks data parallel, global batch 128")]:
    ours = [load(f"ours-{ranks}-{r}.json") for r in range(1, rounds + 1)]
    theirs = [load(f"torch-{ranks}-{r}.json") for r in range(1, rounds + 1)]
    ours_s = [d["iteration_seconds"] for d in ours]
    theirs_s = [d["iteration_seconds"] for d in theirs]
    phases = {p: statistics.median(d["phases"][p] for d in ours) for p in phase_names}
    cases.append({
        "case": title, "ranks": ranks, "global_batch": 64 * ranks,
        "peer": "PyTorch CPU" if ranks == 1 else "PyTorch DDP (gloo)",
        "ours_seconds": ours_s, "pytorch_seconds": theirs_s,
        "ours_median_seconds": statistics.median(ours_s),
        "pytorch_median_seconds": statistics.median(theirs_s),
        "ratio_ours_over_pytorch": statistics.median(ours_s) / statistics.median(theirs_s),
        "ratio_per_round": [a / b for a, b in zip(ours_s, theirs_s)],
        "ours_phases_median_seconds": phases,
        "ours_family": ours[0]["family"], "ours_mesh": ours[0]["mesh"],
        "ours_comm_bytes_sent_rank0": ours[0]["ranks"][0]["comm_bytes_sent"],
        "ours_final_loss": ours[-1]["losses"][-1], "pytorch_final_loss": theirs[-1]["losses"][-1],
    })

def run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()
    except Exception:
        return "unknown"
torch_version = load("torch-1-1.json")["torch"]
info = {
    "cpu": machine, "logical_cpus": os.cpu_count(), "kernel": platform.release(),
    "memory_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
    "torch": torch_version, "mpirun": run(["mpirun", "--version"]).splitlines()[0] if run(["mpirun", "--version"]) != "unknown" else "unknown",
    "git_commit": run(["git", "rev-parse", "HEAD"]),
    "loadavg_start": load_start, "loadavg_end": load_end,
}
document = {
    "format": "executor-vs-pytorch", "version": 1,
    "command": "bash tools/bench/executor-vs-pytorch.sh",
    "model": "vgg11-cifar10", "dtype": "fp32", "threads_per_rank": 1,
    "rounds": rounds, "timed_steps_per_run": iters, "warmup_steps": warmup,
    "statistic": "each run reports the median of its timed steps (rank 0); the table's median is over rounds",
    "machine": info, "cases": cases,
}
perf_text = (tmp / "perf-top.txt").read_text()

ms = lambda s: f"{s * 1e3:.0f}"
lines = [
    "# Executor vs PyTorch on CPU (vgg11-cifar10, fp32, one thread per rank)", "",
    "Made by:", "", "```sh", "bash tools/bench/executor-vs-pytorch.sh", "```", "",
    f"One training step (forward, loss, backward, gradient all-reduce, SGD momentum 0.9) of `splitbrain run` "
    f"(`--threads 1`, synthetic 3x32x32 data, the planner's data-parallel plan) against the same network in "
    f"PyTorch {torch_version} (`torch.set_num_threads(1)`; `tools/bench/pytorch_peer.py`), interleaved "
    f"ours, PyTorch, ours, PyTorch over {rounds} rounds. Every run times {iters} steps after {warmup} warm-up "
    f"steps and reports their median (rank 0); 2 ranks are `mpirun -np 2 --bind-to core` for ours and "
    f"two processes pinned to cores 0 and 1 with DistributedDataParallel over gloo for PyTorch (batch 64 each).", "",
    f"Machine: {machine}, {info['logical_cpus']} logical CPUs, {info['memory_gb']} GB, Linux {info['kernel']}, "
    f"{info['mpirun']}; commit `{info['git_commit'][:12]}`. Load average {load_start} at the start and "
    f"{load_end} at the end (the machine is shared; other jobs ran alongside).", "",
    "| case | peer | ours ms per round | PyTorch ms per round | ours median ms | PyTorch median ms | ours / PyTorch |",
    "|---|---|---|---|---|---|---|",
]
for c in cases:
    lines.append(f"| {c['case']} | {c['peer']} | {', '.join(ms(s) for s in c['ours_seconds'])} | "
                 f"{', '.join(ms(s) for s in c['pytorch_seconds'])} | {ms(c['ours_median_seconds'])} | "
                 f"{ms(c['pytorch_median_seconds'])} | **{c['ratio_ours_over_pytorch']:.2f}** |")
lines += ["", "Per-round ratios: " + "; ".join(
    f"{c['ranks']} rank{'s' if c['ranks'] > 1 else ''}: " + ", ".join(f"{r:.2f}" for r in c["ratio_per_round"])
    for c in cases) + ".", ""]
lines += ["Where our step goes (medians over rounds of the run report's phases, rank 0, ms):", "",
          "| case | " + " | ".join(phase_names) + " | step |", "|---|" + "---|" * (len(phase_names) + 1)]
for c in cases:
    lines.append(f"| {c['case']} | " + " | ".join(f"{c['ours_phases_median_seconds'][p] * 1e3:.1f}" for p in phase_names)
                 + f" | {c['ours_median_seconds'] * 1e3:.1f} |")
lines += [""]
# A reading generated from the numbers (no hand-written claims that could go stale).
reading = []
for c in cases:
    r = c["ratio_ours_over_pytorch"]
    verdict = "faster than" if r < 0.97 else ("within 3% of" if r <= 1.03 else "slower than")
    reading.append(f"- {c['case']}: ours is {verdict} {c['peer']} (ours/PyTorch {r:.2f}; "
                   f"{ms(c['ours_median_seconds'])} vs {ms(c['pytorch_median_seconds'])} ms). "
                   + ("The goal ours <= PyTorch is met." if r <= 1.0 else "The goal ours <= PyTorch is not met."))
one, two = cases
ph = one["ours_phases_median_seconds"]
total = one["ours_median_seconds"]
reading.append(f"- In the 1-rank step, backward takes {ph['compute_backward'] / total:.0%}, forward "
               f"{ph['compute_forward'] / total:.0%} and the optimizer {ph['optimizer'] / total:.0%}.")
scale_ours = two["ours_median_seconds"] / one["ours_median_seconds"]
scale_theirs = two["pytorch_median_seconds"] / one["pytorch_median_seconds"]
reading.append(f"- Going from 1 rank to 2 ranks (twice the samples, one core each) multiplies the step time by "
               f"{scale_ours:.2f} for ours and {scale_theirs:.2f} for PyTorch; ours exposes "
               f"{two['ours_phases_median_seconds']['comm_exposed'] * 1e3:.0f} ms of all-reduce per step "
               f"({two['ours_comm_bytes_sent_rank0'] / 1e6:.0f} MB sent by rank 0).")
reading.append("- With two logical CPUs, the 2-rank runs use the whole machine, so they are the most exposed to the "
               "other jobs sharing it; compare the per-round ratios, not single numbers.")
lines += ["Reading:", ""] + reading + [""]
if perf_text.strip():
    lines += ["Hotspots of the 1-rank executor run (`perf record -g`; full list in `perf-top.txt`):", "", "```"]
    lines += perf_text.rstrip().splitlines()[:34] + ["```", ""]
lines += ["`results.json` holds every number above; the losses of both sides stay near ln 10 = 2.30 on random labels "
          f"(last: ours {one['ours_final_loss']:.3f}, PyTorch {one['pytorch_final_loss']:.3f}).", ""]

out.mkdir(parents=True, exist_ok=True)
def publish(name, text):
    (out / (name + ".tmp")).write_text(text)
    os.replace(out / (name + ".tmp"), out / name)
publish("results.json", json.dumps(document, indent=2) + "\n")
if perf_text.strip():
    publish("perf-top.txt", perf_text)
publish("README.md", "\n".join(lines))
EOF
cat "$out/README.md"
