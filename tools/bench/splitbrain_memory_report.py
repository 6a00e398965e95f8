#!/usr/bin/python3
"""Summary of tools/bench/splitbrain-memory.sh: SplitBrain's memory saving, predicted and measured.

Usage: splitbrain_memory_report.py WORK_DIR --command TEXT
Reads WORK_DIR/reports/<model>-<ranks>-<family>.{prediction,measured}.json; writes README.md,
results.json and memory-saving.{png,svg} into WORK_DIR.
"""
import argparse
import json
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

CATEGORIES = ("params", "grads", "optimizer", "activations", "buffers")


def peak_rank(report):
    """The rank with the largest tracked peak: what must fit on a device."""
    return max(report["ranks"], key=lambda r: r["peak_memory_bytes"])


def load(work):
    rows = []
    for predicted_path in sorted((work / "reports").glob("*.prediction.json")):
        name = predicted_path.name[: -len(".prediction.json")]
        predicted = json.loads(predicted_path.read_text())
        measured = json.loads((work / "reports" / f"{name}.measured.json").read_text())
        p, m = peak_rank(predicted), peak_rank(measured)
        rows.append({
            "name": name, "model": predicted["model"], "ranks": len(predicted["ranks"]),
            "family": predicted["family"].replace(" = best", ""), "mesh": json.dumps(predicted["mesh"]),
            "predicted_peak_bytes": p["peak_memory_bytes"], "measured_peak_bytes": m["peak_memory_bytes"],
            "predicted": {c: p["memory"][c] for c in CATEGORIES}, "measured": {c: m["memory"][c] for c in CATEGORIES},
        })
    for row in rows:
        baseline = next(r for r in rows if r["model"] == row["model"] and r["ranks"] == row["ranks"]
                        and r["family"].startswith("data-parallel"))
        row["predicted_saving"] = 1 - row["predicted_peak_bytes"] / baseline["predicted_peak_bytes"]
        row["measured_saving"] = 1 - row["measured_peak_bytes"] / baseline["measured_peak_bytes"]
    return rows


def figure(rows, path):
    models = sorted({r["model"] for r in rows})
    figure_, axes = plt.subplots(1, len(models), figsize=(6 * len(models), 4), squeeze=False)
    for axis, model in zip(axes[0], models):
        chosen = [r for r in rows if r["model"] == model and not r["family"].startswith("data-parallel")]
        labels = [f"{r['ranks']} ranks\n{r['family']}" for r in chosen]
        positions = range(len(chosen))
        axis.bar([i - 0.2 for i in positions], [100 * r["predicted_saving"] for r in chosen], 0.4, label="predicted")
        axis.bar([i + 0.2 for i in positions], [100 * r["measured_saving"] for r in chosen], 0.4, label="measured")
        axis.set_xticks(list(positions))
        axis.set_xticklabels(labels, fontsize=7)
        axis.set_ylabel("peak memory per rank saved vs data parallel (%)")
        axis.set_title(model)
        axis.legend()
    for suffix in ("png", "svg"):
        figure_.savefig(path.with_suffix("." + suffix), dpi=120, bbox_inches="tight")
    plt.close(figure_)


def megabytes(value):
    return f"{value / 1e6:.1f}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("work", type=pathlib.Path)
    parser.add_argument("--command", required=True)
    args = parser.parse_args()
    rows = load(args.work)
    (args.work / "results.json").write_text(json.dumps(rows, indent=2) + "\n")
    figure(rows, args.work / "memory-saving")
    lines = [
        "# SplitBrain's memory saving against data parallelism, predicted and measured",
        "",
        f"Made by `{args.command}`: 32 samples per rank, SGD with momentum, fp32; one step under mpirun "
        "(oversubscribed beyond 2 ranks). Peak = the largest tracked peak over the ranks; saving = 1 - peak / "
        "data parallelism's peak at the same rank count. MB = 1e6 bytes.",
        "",
        "![memory saving](memory-saving.png)",
        "",
        "| model | ranks | family | mesh | predicted peak MB | measured peak MB | predicted saving | measured saving | "
        "params+grads+optimizer MB predicted / measured | activations+buffers MB predicted / measured |",
        "|---|---:|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        states_p = sum(r["predicted"][c] for c in ("params", "grads", "optimizer"))
        states_m = sum(r["measured"][c] for c in ("params", "grads", "optimizer"))
        rest_p = r["predicted"]["activations"] + r["predicted"]["buffers"]
        rest_m = r["measured"]["activations"] + r["measured"]["buffers"]
        lines.append(f"| {r['model']} | {r['ranks']} | {r['family']} | `{r['mesh']}` | {megabytes(r['predicted_peak_bytes'])} | "
                     f"{megabytes(r['measured_peak_bytes'])} | {r['predicted_saving']:.0%} | {r['measured_saving']:.0%} | "
                     f"{megabytes(states_p)} / {megabytes(states_m)} | {megabytes(rest_p)} / {megabytes(rest_m)} |")
    lines.append("")
    (args.work / "README.md").write_text("\n".join(lines))


if __name__ == "__main__":
    main()
