#!/usr/bin/python3
"""Table of tools/gpu-checks.sh's vgg11-cifar10 runs: splitbrain against PyTorch, prediction against
measurement.

  gpu_checks_report.py WORK_DIR BATCH [BATCH ...]

Reads WORK_DIR/vgg11-b<BATCH>/{compare/comparison.json, measured.json, pytorch.json,
prediction-preset.json} and prints a
Markdown table with issue 14's targets: within 1.5x of PyTorch at batch 64 and 1.3x at 512,
iteration time predicted within 10%, peak memory within 3%. A batch whose files are missing (its
run failed) gets a row saying so. Exits 1 when no batch has all its files.
"""

import json
import pathlib
import sys

SPEED_TARGET = {64: 1.5, 512: 1.3}


def row(name, rows):
    return next(r for r in rows if r["name"] == name)


def batch_row(work, batch):
    folder = work / f"vgg11-b{batch}"
    try:
        comparison = json.loads((folder / "compare" / "comparison.json").read_text())
        measured = json.loads((folder / "measured.json").read_text())
        peer = json.loads((folder / "pytorch.json").read_text())
        preset = json.loads((folder / "prediction-preset.json").read_text())
    except (OSError, ValueError) as error:
        return f"| {batch} | missing: {error} | | | | | | | | |"
    iteration = row("iteration", comparison["time"])
    peak = row("peak", comparison["memory"][0])
    transfers = measured["ranks"][0]["host_transfers_per_step"]
    ours, theirs = iteration["measured"], peer["iteration_seconds"]
    target = SPEED_TARGET.get(batch)
    return (f"| {batch} | {ours * 1e3:.2f} | {theirs * 1e3:.2f} | {ours / theirs:.2f}x"
            f" ({f'target {target}x' if target else 'no target'}) | {iteration['predicted'] * 1e3:.2f}"
            f" | {iteration['error'] * 100:+.1f}% | {preset['iteration_seconds'] * 1e3:.2f}"
            f" ({(preset['iteration_seconds'] - ours) / ours * 100:+.1f}%) | {peak['predicted'] / 1e6:.1f} / {peak['measured'] / 1e6:.1f}"
            f" ({peak['error'] * 100:+.1f}%) | {transfers['count']:g} ({transfers['bytes'] / 1e6:.3f} MB)"
            f" | {measured.get('backend')}, tf32 {measured.get('tf32')}; torch {peer['torch']} on {peer['device']} |")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    work = pathlib.Path(sys.argv[1])
    batches = [int(b) for b in sys.argv[2:]]
    rows = [batch_row(work, b) for b in batches]
    print("| batch | splitbrain ms/step | PyTorch ms/step | ratio | predicted ms (calibrated) | prediction error"
          " | predicted ms (cluster file as written) | peak memory MB predicted / measured | host transfers per step"
          " | backend |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    print()
    print("Medians of the timed steps after the warm-up; prediction error = (predicted - measured) / measured;"
          " per-phase and per-category rows in each `vgg11-b<N>/compare.txt`.")
    if all("missing" in r for r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
