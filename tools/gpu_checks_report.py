#!/usr/bin/python3
"""Table of tools/gpu-checks.sh's vgg11-cifar10 runs: splitbrain against PyTorch, prediction against
measurement.

  gpu_checks_report.py WORK_DIR BATCH [BATCH ...]

Reads WORK_DIR/vgg11-b<BATCH>/{compare/comparison.json, measured.json, pytorch.json,
prediction-preset.json} and the repeated runs of both sides (measured-repeat-*.json,
pytorch-repeat-*.json), and prints a Markdown table with issue 14's targets: within 1.5x of
PyTorch at batch 64 and 1.3x at 512, iteration time predicted within 10%, peak memory within 3%;
and where the host waited for the GPU, predicted against measured (instructions of the step program).
Times are the median run of each side (each run's own figure is the median of its steps), with
every run's in brackets; the prediction is set against that median. A second table sets the
tracked peak memory against the GPU's allocator and the driver (cudaMemGetInfo). A batch whose
files are missing (its run failed) gets a row saying so. Exits 1 when no batch has all its files.
"""

import json
import pathlib
import statistics
import sys

SPEED_TARGET = {64: 1.5, 512: 1.3}


def row(name, rows):
    return next(r for r in rows if r["name"] == name)


def runs(folder, first, pattern):
    """Every run's report: `first`, then the repeats in order."""
    repeats = sorted(folder.glob(pattern), key=lambda p: int(p.stem.rsplit("-", 1)[1]))
    return [json.loads(p.read_text()) for p in [folder / first, *repeats]]


def milliseconds(values):
    return ", ".join(f"{v * 1e3:.2f}" for v in values)


def batch_rows(work, batch):
    folder = work / f"vgg11-b{batch}"
    try:
        comparison = json.loads((folder / "compare" / "comparison.json").read_text())
        ours_runs = runs(folder, "measured.json", "measured-repeat-*.json")
        peer_runs = runs(folder, "pytorch.json", "pytorch-repeat-*.json")
        preset = json.loads((folder / "prediction-preset.json").read_text())
    except (OSError, ValueError) as error:
        return f"| {batch} | missing: {error} | | | | | | | | | |", f"| {batch} | missing | | | |"
    ours_each = [r["iteration_seconds"] for r in ours_runs]
    peer_each = [r["iteration_seconds"] for r in peer_runs]
    ours, theirs = statistics.median(ours_each), statistics.median(peer_each)
    predicted = row("iteration", comparison["time"])["predicted"]
    peak = row("peak", comparison["memory"][0])
    measured = ours_runs[0]
    transfers = measured["ranks"][0]["host_transfers_per_step"]
    purposes = transfers.get("by_purpose")
    transfers_by_purpose = (", ".join(f"{name} {count:g}" for name, count in purposes.items())
                            if purposes else "not split by purpose")
    target = SPEED_TARGET.get(batch)
    waits = comparison.get("host_waits", {})
    if waits.get("compared"):
        first = waits["ranks"][0]
        host_waits = (f"{len(first['predicted'])} / {len(first['measured'])}"
                      f" ({'equal' if first['equal'] else 'predicted ' + str(first['predicted']) + ', measured ' + str(first['measured'])})")
    else:
        host_waits = f"not compared: {waits.get('why_not', 'no host_waits in comparison.json')}"
    speed = (f"| {batch} | {ours * 1e3:.2f} ({milliseconds(ours_each)}) | {theirs * 1e3:.2f} ({milliseconds(peer_each)})"
             f" | {ours / theirs:.2f}x ({f'target {target}x' if target else 'no target'}) | {predicted * 1e3:.2f}"
             f" | {(predicted - ours) / ours * 100:+.1f}% | {preset['iteration_seconds'] * 1e3:.2f}"
             f" ({(preset['iteration_seconds'] - ours) / ours * 100:+.1f}%) | {peak['predicted'] / 1e6:.1f} /"
             f" {peak['measured'] / 1e6:.1f} ({peak['error'] * 100:+.1f}%) | {transfers['count']:g}"
             f" ({transfers['bytes'] / 1e6:.3f} MB; {transfers_by_purpose}) | {host_waits} | {measured.get('backend')}, tf32 {measured.get('tf32')};"
             f" torch {peer_runs[0]['torch']} on {peer_runs[0]['device']} |")
    device = measured["ranks"][0].get("device_memory")
    if device is None:
        memory = f"| {batch} | {peak['measured'] / 1e6:.1f} | not reported | | |"
    else:
        memory = (f"| {batch} | {peak['measured'] / 1e6:.1f} | {device['allocator_peak_in_use_bytes'] / 1e6:.1f}"
                  f" | {device['allocator_reserved_bytes'] / 1e6:.1f} | {device['driver_used_bytes'] / 1e6:.1f} |")
    return speed, memory


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    work = pathlib.Path(sys.argv[1])
    batches = [int(b) for b in sys.argv[2:]]
    rows = [batch_rows(work, b) for b in batches]
    print("| batch | splitbrain ms/step (runs) | PyTorch ms/step (runs) | ratio | predicted ms (calibrated)"
          " | prediction error | predicted ms (cluster file as written) | peak memory MB predicted / measured"
          " | host transfers per step | instructions the host waited in, predicted / measured | backend |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(speed for speed, _ in rows))
    print()
    print("Each run's figure is the median of its timed steps after the warm-up; the table's, the median run;"
          " prediction error = (predicted - measured) / measured; per-phase and per-category rows of the first"
          " run in each `vgg11-b<N>/compare.txt`.")
    print()
    print("GPU memory of the first run, MB: what the runtime tracks (the measured peak above), the caching"
          " allocator's peak in use (the same arrays, each rounded up to 512 bytes) and what it holds from the"
          " driver, and the driver's count of memory used since the backend started (cudaMemGetInfo: the"
          " allocator's, cuDNN's workspace, the libraries' code and handles).")
    print()
    print("| batch | tracked peak | allocator peak in use | allocator reserved | driver used |")
    print("|---|---|---|---|---|")
    print("\n".join(memory for _, memory in rows))
    if all("missing" in speed for speed, _ in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
