#!/usr/bin/python3
"""Replays calibrate's fit of the runtime's host time per pass on the committed GPU runs.

Usage: gpu_host_fit_replay.py SPLITBRAIN OUT_DIR --command TEXT [RUN_DIR ...]

`calibrate --backend cuda` runs a model's step and fits sim::Device::instruction_host_seconds
from each forward's and backward's host queuing beyond its predicted span
(tools/calibration/pass_host_excess.h). Each committed run of tools/gpu-checks.sh holds one
measured step per batch (vgg11-b<N>/measured-trace.json, host row) and the cluster calibrate
wrote, so the fit can be replayed offline: per pass, measured host span minus the simulator's
(`simulate --trace` on that cluster, the figure zeroed); then the step predicted again with each
candidate statistic of those excesses, fitted on one batch's step and judged on both batches
against the median measured step of the run's README table. Fitting on batch 512 and judging
batch 64 is the out-of-sample check. Writes OUT_DIR/README.md.
"""
import argparse
import json
import pathlib
import re
import statistics
import subprocess
import tempfile

BATCHES = (64, 512)


def trimmed_mean(values):
    """As tools/calibration/pass_host_excess.cc: a tenth left out at each end."""
    values = sorted(values)
    tenth = len(values) // 10
    kept = values[tenth : len(values) - tenth]
    return statistics.mean(kept) if kept else 0.0


STATISTICS = {
    "median (fit until now)": lambda v: sorted(v)[len(v) // 2],
    "mean": statistics.mean,
    "trimmed mean (fit now)": trimmed_mean,
}


def host_rows(trace_path):
    """(name, microseconds) of the host (queuing) row of rank 0, in step order."""
    events = json.loads(pathlib.Path(trace_path).read_text())["traceEvents"]
    host = None
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name" and e["pid"] == 0 and "host" in e["args"]["name"]:
            host = e["tid"]
    rows = [e for e in events if e.get("ph") == "X" and e.get("pid") == 0 and e.get("tid") == host]
    rows.sort(key=lambda e: e["ts"])
    return [(e["name"].replace("fwd ", "forward ").replace("bwd ", "backward "), e["dur"]) for e in rows]


def simulate(splitbrain, plan, cluster, trace=None):
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "prediction.json"
        command = [splitbrain, "simulate", "--plan", str(plan), "--cluster", str(cluster), "--json", str(out)]
        if trace:
            command += ["--trace", str(trace)]
        subprocess.run(command, check=True, capture_output=True)
        return json.loads(out.read_text())["iteration_seconds"]


def with_figure(cluster, seconds, path):
    data = json.loads(pathlib.Path(cluster).read_text())
    data["device"]["instruction_host_seconds"] = max(0.0, seconds)
    path.write_text(json.dumps(data))
    return path


def excess_per_pass(splitbrain, run, batch, bare_cluster, tmp):
    trace = tmp / "predicted-trace.json"
    simulate(splitbrain, run / f"vgg11-b{batch}" / "plan.json", bare_cluster, trace)
    predicted = dict(host_rows(trace))
    excess = []
    for name, microseconds in host_rows(run / f"vgg11-b{batch}" / "measured-trace.json"):
        if name.split(" ")[0] in ("forward", "backward") and name in predicted:
            excess.append((microseconds - predicted[name]) * 1e-6)
    return excess


def measured_medians(run):
    """Batch -> the median run's ms per step, from the README's table."""
    medians = {}
    for line in (run / "README.md").read_text().splitlines():
        match = re.match(r"\| (\d+) \| ([0-9.]+) \(", line)
        if match and int(match.group(1)) in BATCHES:
            medians.setdefault(int(match.group(1)), float(match.group(2)))
    return medians


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("splitbrain")
    parser.add_argument("out_dir")
    parser.add_argument("--command", required=True)
    parser.add_argument("runs", nargs="*", default=["results/gpu", "results/gpu-h200", "results/gpu-h100"])
    args = parser.parse_args()
    lines = [
        "# The runtime's host time per pass, replayed on the committed GPU runs",
        "",
        f"Made by `{args.command}` (tools/bench/gpu_host_fit_replay.py says how). No GPU is needed: it",
        "reads each run's measured step and calibrated cluster and re-simulates. Prediction error =",
        "(predicted - measured) / measured, against the median run of the run's table; fitted at 512,",
        "the batch-64 column is the out-of-sample check. `calibrate --backend cuda` fits on its smallest --batch",
        "(64 in tools/gpu-checks.sh); each fit here uses one measured step, calibrate's five.",
        "",
        "| run | statistic | fitted at | figure (us) | batch 64 | batch 512 |",
        "|---|---|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = pathlib.Path(tmp_name)
        for run_name in args.runs:
            run = pathlib.Path(run_name)
            cluster = run / "calibrated-cluster.json"
            bare = with_figure(cluster, 0.0, tmp / "bare.json")
            measured = measured_medians(run)
            plans = {b: run / f"vgg11-b{b}" / "plan.json" for b in BATCHES}

            def errors(cluster_path):
                cells = []
                for b in BATCHES:
                    predicted_ms = simulate(args.splitbrain, plans[b], cluster_path) * 1e3
                    cells.append(f"{100 * (predicted_ms / measured[b] - 1):+.1f}%")
                return cells

            lines.append(f"| {run_name} | none | - | 0 | " + " | ".join(errors(bare)) + " |")
            for fit_batch in BATCHES:
                excess = excess_per_pass(args.splitbrain, run, fit_batch, bare, tmp)
                for name, statistic in STATISTICS.items():
                    seconds = max(0.0, statistic(excess))
                    fitted = with_figure(cluster, seconds, tmp / "fitted.json")
                    lines.append(
                        f"| {run_name} | {name} | {fit_batch} ({len(excess)} passes) | {seconds * 1e6:.1f} | "
                        + " | ".join(errors(fitted))
                        + " |"
                    )
    out = pathlib.Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    partial = out / "README.md.partial"
    partial.write_text("\n".join(lines) + "\n")
    partial.rename(out / "README.md")


if __name__ == "__main__":
    main()
