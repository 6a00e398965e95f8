#!/usr/bin/python3
"""Summarises results/planner-scaling/rankings/*.csv (one `splitbrain plan --csv` ranking per
model, cluster and device count) into scaling.csv, README.md and two figures per model."""
import csv
import glob
import os
import re
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

out = sys.argv[1]
FAMILIES = ["data-parallel", "model-parallel", "splitbrain", "gholami-grid", "domain-parallel", "pipeline", "soybean", "best"]


def family_of(label):
    # "splitbrain g=4 = soybean m=4 +zero1" -> every family named in the merged label
    names = set()
    for part in label.split(" = "):
        for family in FAMILIES:
            if part.strip().startswith(family):
                names.add(family)
    return names


rows = []
for path in sorted(glob.glob(os.path.join(out, "rankings", "*.csv"))):
    match = re.match(r"(.+?)-(dgx-a100-80g|v100-pcie-10gbe)-(\d+)\.csv", os.path.basename(path))
    model, cluster, devices = match.group(1), match.group(2), int(match.group(3))
    best = {}
    for r in csv.DictReader(open(path)):
        if r["feasible"] != "true":
            continue
        for family in family_of(r["family"]):
            seconds = float(r["iteration_seconds"])
            if family not in best or seconds < best[family][0]:
                best[family] = (seconds, r)
    for family, (seconds, r) in best.items():
        rows.append({"model": model, "cluster": cluster, "devices": devices, "family": family, "variant": r["family"],
                     "mesh": r["mesh"], "iteration_seconds": seconds, "speedup": float(r["speedup"]),
                     "peak_memory_bytes": int(r["peak_memory_bytes"]),
                     "memory_saving_vs_data_parallel": float(r["memory_saving_vs_data_parallel"])})

rows.sort(key=lambda r: (r["model"], r["cluster"], r["family"], r["devices"]))
with open(os.path.join(out, "scaling.csv.tmp"), "w", newline="") as f:
    writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    writer.writeheader()
    writer.writerows(rows)
os.replace(os.path.join(out, "scaling.csv.tmp"), os.path.join(out, "scaling.csv"))

lines = ["# Predicted scaling per plan family", "",
         "Command: `bash tools/bench/planner-scaling.sh` (global batch 1024, fp32, SGD with momentum; the fastest "
         "variant of each family that fits in device memory). Speedup is against the same batch on one device; "
         "memory saving is 1 - peak memory per rank / data parallelism's peak at the same device count. "
         "All figures are predictions of the cost model (presets, not calibrated).", ""]
for model in sorted({r["model"] for r in rows}):
    for cluster in sorted({r["cluster"] for r in rows}):
        sub = [r for r in rows if r["model"] == model and r["cluster"] == cluster]
        if not sub:
            continue
        devices = sorted({r["devices"] for r in sub})
        lines += [f"## {model} on {cluster}", "", "speedup / memory saving vs data parallel:", "",
                  "| family | " + " | ".join(f"{d} dev" for d in devices) + " |",
                  "|---|" + "---|" * len(devices)]
        fig, axes = plt.subplots(1, 2, figsize=(11, 4))
        for family in FAMILIES:
            cells, xs, speed, saving = [], [], [], []
            for d in devices:
                match = [r for r in sub if r["family"] == family and r["devices"] == d]
                if match:
                    r = match[0]
                    cells.append(f"{r['speedup']:.2f}x / {round(100 * r['memory_saving_vs_data_parallel']) + 0:d}%")
                    xs.append(d)
                    speed.append(r["speedup"])
                    saving.append(100 * r["memory_saving_vs_data_parallel"])
                else:
                    cells.append("-")
            if xs:
                lines.append(f"| {family} | " + " | ".join(cells) + " |")
                axes[0].plot(xs, speed, marker="o", label=family)
                axes[1].plot(xs, saving, marker="o", label=family)
        axes[0].plot(devices, devices, linestyle=":", color="grey", label="linear")
        for ax, label in ((axes[0], "predicted speedup"), (axes[1], "memory saving vs data parallel (%)")):
            ax.set_xscale("log", base=2)
            if ax is axes[0]:
                ax.set_yscale("log", base=2)
            ax.set_xlabel("devices")
            ax.set_ylabel(label)
            ax.grid(True, alpha=0.3)
        axes[0].legend(fontsize=7)
        fig.suptitle(f"{model} on {cluster} (batch 1024)")
        fig.tight_layout()
        name = f"{model}-{cluster}.png"
        fig.savefig(os.path.join(out, name), dpi=100)
        plt.close(fig)
        lines += ["", f"![{model} on {cluster}]({name})", ""]
tmp = os.path.join(out, "README.md.tmp")
open(tmp, "w").write("\n".join(lines) + "\n")
os.replace(tmp, os.path.join(out, "README.md"))
print("\n".join(lines))
