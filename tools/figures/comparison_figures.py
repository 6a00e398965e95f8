#!/usr/bin/python3
"""Figures of one `splitbrain compare` result: phases and memory per rank, predicted beside measured.

Usage: comparison_figures.py DIR   (DIR holds comparison.json, as `splitbrain compare --out DIR` writes it)
Writes DIR/phases.{png,svg} and DIR/memory.{png,svg}; each file is drawn into a temporary name
first and renamed, so no half-written figure is left behind. Needs matplotlib (python3-matplotlib).
"""
import json
import os
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

PREDICTED_COLOUR = "#4c72b0"
MEASURED_COLOUR = "#dd8452"


def save(figure, path_without_suffix):
    """Writes PNG and SVG atomically (temporary name, then rename)."""
    written = []
    for suffix in ("png", "svg"):
        final = path_without_suffix.with_suffix("." + suffix)
        temporary = final.with_name(final.name + ".tmp")
        figure.savefig(temporary, format=suffix, dpi=120, bbox_inches="tight")
        os.replace(temporary, final)
        written.append(final)
    plt.close(figure)
    return written


def paired_bars(axis, labels, predicted, measured, unit):
    positions = range(len(labels))
    width = 0.4
    axis.bar([p - width / 2 for p in positions], predicted, width, label="predicted", color=PREDICTED_COLOUR)
    axis.bar([p + width / 2 for p in positions], measured, width, label="measured", color=MEASURED_COLOUR)
    axis.set_xticks(list(positions))
    axis.set_xticklabels(labels, rotation=30, ha="right")
    axis.set_ylabel(unit)
    axis.legend()


def phases_figure(comparison, title):
    rows = comparison["time"]
    figure, axis = plt.subplots(figsize=(7, 4))
    paired_bars(axis, [r["name"] for r in rows], [r["predicted"] * 1e3 for r in rows],
                [r["measured"] * 1e3 for r in rows], "ms per step")
    for index, row in enumerate(rows):
        if row["measured"] > 0:
            axis.annotate(f"{100 * row['error']:+.0f}%", (index, max(row["predicted"], row["measured"]) * 1e3),
                          ha="center", va="bottom", fontsize=8)
    axis.set_title(title + ": time per phase")
    return figure


def memory_figure(comparison, title):
    ranks = comparison["memory"]
    columns = len(ranks)
    figure, axes = plt.subplots(1, columns, figsize=(max(5, 4 * columns), 4), squeeze=False, sharey=True)
    for rank, rows in enumerate(ranks):
        axis = axes[0][rank]
        paired_bars(axis, [r["name"] for r in rows], [r["predicted"] / 1e6 for r in rows],
                    [r["measured"] / 1e6 for r in rows], "MB (1e6 bytes)")
        axis.set_title(f"rank {rank}")
    figure.suptitle(title + ": tracked memory per rank")
    return figure


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: comparison_figures.py DIR (with DIR/comparison.json)")
    folder = pathlib.Path(sys.argv[1])
    source = folder / "comparison.json"
    try:
        comparison = json.loads(source.read_text())
    except (OSError, json.JSONDecodeError) as error:
        print(f"{source}: {error}", file=sys.stderr)
        sys.exit(2)
    title = " ".join(str(comparison[key]) for key in ("model", "family", "mesh") if key in comparison) or folder.name
    written = save(phases_figure(comparison, title), folder / "phases")
    written += save(memory_figure(comparison, title), folder / "memory")
    for path in written:
        print(path)


if __name__ == "__main__":
    main()
