#!/usr/bin/python3
"""Summary of tools/bench/fidelity.sh: predicted against measured over every plan it ran.

Usage: fidelity_report.py WORK_DIR --command TEXT --load START END
Reads WORK_DIR/compare/*/comparison.json and WORK_DIR/runs.txt; writes WORK_DIR/README.md,
results.json, predicted-vs-measured.{png,svg} and phases.{png,svg}.
"""
import argparse
import json
import re
import pathlib
import statistics

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# The targets this study checks (issue: fidelity here, after calibrate).
MEDIAN_TARGET = 0.10
WORST_TARGET = 0.25
MEMORY_TARGET = 0.03
RANKING_TARGET = 0.05


def value(rows, name):
    return next(r for r in rows if r["name"] == name)


def load(work):
    plans = []
    for path in sorted((work / "compare").glob("*/comparison.json")):
        c = json.loads(path.read_text())
        name = path.parent.name
        model, ranks = c["model"], len(c["memory"])
        iteration = value(c["time"], "iteration")
        worst_memory = max(abs(v["error"]) for rank in c["memory"] for v in rank if v["measured"] > 0)
        plans.append({
            "name": name, "model": model, "ranks": ranks, "family": c["family"], "mesh": c["mesh"],
            "predicted_seconds": iteration["predicted"], "measured_seconds": iteration["measured"],
            "error": iteration["error"], "worst_memory_error": worst_memory,
            "peak_memory_error": max(abs(value(rank, "peak")["error"]) for rank in c["memory"]),
            "bytes_equal": c["bytes_equal"], "phases": c["time"],
        })
    return plans


def ranking(plans, median_seconds):
    """Per (model, ranks) group with two or more plans: is the plan the planner ranked first (its
    emitted name starts with 01) measured within the target of the fastest, by the median step time
    over the rounds?"""
    groups = {}
    for p in plans:
        groups.setdefault((p["model"], p["ranks"]), []).append(p)
    checks = []
    for (model, ranks), group in sorted(groups.items()):
        if len(group) < 2:
            continue
        predicted_best = min(group, key=lambda p: planner_rank(p["name"]))
        measured_best = min(group, key=lambda p: median_seconds[p["name"]])
        gap = median_seconds[predicted_best["name"]] / median_seconds[measured_best["name"]] - 1.0
        checks.append({"model": model, "ranks": ranks, "plans": len(group), "predicted_fastest": predicted_best["name"],
                       "measured_fastest": measured_best["name"], "gap": gap, "holds": gap <= RANKING_TARGET})
    return checks


def errors_by_round(rounds_path):
    """Each round's median and worst |error| over its plans: the spread a single calibration gives,
    which the per-plan median round above hides. None without rounds.txt."""
    if not rounds_path.exists():
        return None
    errors = {}  # round -> |predicted / measured - 1| of its plans
    for line in rounds_path.read_text().splitlines():
        _, round_index, predicted, measured = line.split()
        errors.setdefault(int(round_index), []).append(abs(float(predicted) / float(measured) - 1.0))
    return [{"round": r, "median_abs_error": statistics.median(e), "worst_abs_error": max(e)}
            for r, e in sorted(errors.items())]


def ranking_by_round(plans, rounds_path):
    """Per (model, ranks) group, each round as a whole experiment: the plan that round's calibration
    predicts fastest, measured in that round against the round's fastest. A near-tie's pick moves
    with the calibration, which the check above (the planner's pick by the first round's
    calibration) cannot show. None without rounds.txt."""
    if not rounds_path.exists():
        return None
    runs = {}  # (name, round) -> (predicted, measured)
    for line in rounds_path.read_text().splitlines():
        name, round_index, predicted, measured = line.split()
        runs[(name, int(round_index))] = (float(predicted), float(measured))
    groups = {}
    for p in plans:
        groups.setdefault((p["model"], p["ranks"]), []).append(p["name"])
    checks = []
    for (model, ranks), names in sorted(groups.items()):
        if len(names) < 2:
            continue
        gaps = []
        for round_index in sorted({r for (_, r) in runs}):
            if not all((n, round_index) in runs for n in names):
                continue
            pick = min(names, key=lambda n: runs[(n, round_index)][0])
            fastest = min(runs[(n, round_index)][1] for n in names)
            gaps.append(runs[(pick, round_index)][1] / fastest - 1.0)
        if gaps:
            gap = statistics.median(gaps)
            checks.append({"model": model, "ranks": ranks, "plans": len(names), "rounds": len(gaps), "gaps": gaps,
                           "median_gap": gap, "holds": gap <= RANKING_TARGET})
    return checks


def planner_rank(name):
    """`[<model>-<ranks>-]<NN>-<family>`: NN is the plan's place in `splitbrain plan`'s ranking."""
    return int(re.search(r"(?:^|-)(\d\d)-(?=[a-z])", name).group(1))


def figure_scatter(plans, path):
    figure, axis = plt.subplots(figsize=(6, 6))
    for model in sorted({p["model"] for p in plans}):
        chosen = [p for p in plans if p["model"] == model]
        axis.scatter([p["measured_seconds"] * 1e3 for p in chosen], [p["predicted_seconds"] * 1e3 for p in chosen], label=model)
    top = max(max(p["measured_seconds"], p["predicted_seconds"]) for p in plans) * 1e3 * 1.1
    axis.plot([0, top], [0, top], color="black", linewidth=1, label="predicted = measured")
    axis.fill_between([0, top], [0, top * (1 - MEDIAN_TARGET)], [0, top * (1 + MEDIAN_TARGET)], color="grey", alpha=0.2,
                      label=f"±{MEDIAN_TARGET:.0%}")
    axis.set_xlim(0, top)
    axis.set_ylim(0, top)
    axis.set_xlabel("measured ms per step")
    axis.set_ylabel("predicted ms per step")
    axis.set_title("Predicted against measured, every plan run")
    axis.legend()
    save(figure, path)


def figure_phases(plans, path):
    names = ["compute_forward", "compute_backward", "comm_exposed", "bubble", "optimizer"]
    figure, axis = plt.subplots(figsize=(max(8, 0.9 * len(plans)), 5))
    width = 0.4
    for offset, kind, hatch in ((-width / 2, "predicted", ""), (width / 2, "measured", "//")):
        bottom = [0.0] * len(plans)
        for index, phase in enumerate(names):
            heights = [value(p["phases"], phase)[kind] * 1e3 for p in plans]
            axis.bar([i + offset for i in range(len(plans))], heights, width, bottom=bottom, hatch=hatch,
                     color=f"C{index}", edgecolor="black", linewidth=0.3, label=phase if kind == "predicted" else None)
            bottom = [b + h for b, h in zip(bottom, heights)]
    axis.set_xticks(range(len(plans)))
    axis.set_xticklabels([p["name"] for p in plans], rotation=60, ha="right", fontsize=7)
    axis.set_ylabel("ms per step (left bar predicted, hatched bar measured)")
    axis.legend(fontsize=8)
    save(figure, path)


def save(figure, path):
    for suffix in ("png", "svg"):
        figure.savefig(path.with_suffix("." + suffix), dpi=120, bbox_inches="tight")
    plt.close(figure)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("work", type=pathlib.Path)
    parser.add_argument("--command", required=True)
    parser.add_argument("--load", nargs=2, default=["?", "?"])
    parser.add_argument("--machine", default="?")
    args = parser.parse_args()
    plans = load(args.work)
    if not plans:
        raise SystemExit(f"{args.work}: no comparisons to summarise")
    # Median step times over several rounds where the study ran them (fidelity.sh); else each
    # plan's one measured run (the main job).
    medians = args.work / "median-step-seconds.txt"
    median_seconds = {p["name"]: p["measured_seconds"] for p in plans}
    if medians.exists():
        median_seconds.update((name, float(seconds)) for name, seconds in (line.split() for line in medians.read_text().splitlines()))
    skipped = [line.split(" ", 2) for line in (args.work / "runs.txt").read_text().splitlines() if " skipped" in line]
    errors = [abs(p["error"]) for p in plans]
    summary = {
        "plans_run": len(plans),
        "median_abs_error": statistics.median(errors),
        "worst_abs_error": max(errors),
        "worst_memory_error": max(p["worst_memory_error"] for p in plans),
        "all_bytes_equal": all(p["bytes_equal"] for p in plans),
        "ranking": ranking(plans, median_seconds),
        "ranking_by_round": ranking_by_round(plans, args.work / "rounds.txt"),
        "errors_by_round": errors_by_round(args.work / "rounds.txt"),
        "command": args.command,
        "machine": args.machine,
        "loadavg_start": args.load[0],
        "loadavg_end": args.load[1],
    }
    (args.work / "results.json").write_text(json.dumps({"summary": summary, "plans": plans}, indent=2) + "\n")
    figure_scatter(plans, args.work / "predicted-vs-measured")
    figure_phases(plans, args.work / "phases")

    lines = [
        "# Fidelity: predicted against measured on this machine",
        "",
        f"Made by `{args.command}` on {args.machine}; load average {args.load[0]} at the start, {args.load[1]} at the end.",
        ("Each round calibrates this machine afresh with `splitbrain calibrate --model` (`local-cpu-calibrated-<round>.json`, "
         "output in `calibrate-<round>.txt`) and predicts its runs with that calibration; a plan's row is its round with the "
         "median error." if medians.exists() else
         "The cluster is this machine calibrated by `splitbrain calibrate --model` in the same run (`local-cpu-calibrated.json`, "
         "output in `calibrate.txt`); one run per plan."),
        "",
        f"- plans run: {len(plans)}; median |error| of the iteration time {summary['median_abs_error']:.1%} "
        f"(target <= {MEDIAN_TARGET:.0%}), worst {summary['worst_abs_error']:.1%} (target <= {WORST_TARGET:.0%})",
    ]
    if summary["errors_by_round"]:
        rounds = summary["errors_by_round"]
        lines.append(
            "- in sample (each round's `calibrate --model` timed these models' kernels); by round, median |error| "
            + ", ".join(f"{r['median_abs_error']:.1%}" for r in rounds) + ", worst "
            + ", ".join(f"{r['worst_abs_error']:.1%}" for r in rounds))
    lines += [
        f"- worst tracked-memory error over every category and rank: {summary['worst_memory_error']:.1%} "
        f"(target <= {MEMORY_TARGET:.0%})",
        f"- bytes sent per rank equal to the prediction in every run: {'yes' if summary['all_bytes_equal'] else 'NO'}",
    ]
    for check in summary["ranking"]:
        lines.append(f"- ranking, {check['model']} on {check['ranks']} ranks ({check['plans']} plans): the planner's pick "
                     f"`{check['predicted_fastest']}` is measured {check['gap']:+.1%} (median step time over the rounds where there are several) from the measured fastest "
                     f"`{check['measured_fastest']}` (target <= {RANKING_TARGET:.0%}): {'holds' if check['holds'] else 'FAILS'}")
    for check in summary["ranking_by_round"] or []:
        lines.append(f"- ranking by round, {check['model']} on {check['ranks']} ranks: the plan each round's calibration "
                     f"predicts fastest is measured in that round {', '.join(f'{g:+.1%}' for g in check['gaps'])} from the "
                     f"round's fastest; median {check['median_gap']:+.1%} (target <= {RANKING_TARGET:.0%}): "
                     f"{'holds' if check['holds'] else 'FAILS'}")
    lines += ["", "![predicted vs measured](predicted-vs-measured.png)", "", "![phases](phases.png)", "",
              "| plan | family | mesh | predicted ms | measured ms | error | worst memory error | peak memory error | bytes equal |",
              "|---|---|---|---:|---:|---:|---:|---:|---|"]
    for p in plans:
        lines.append(f"| {p['name']} | {p['family']} | `{p['mesh']}` | {p['predicted_seconds'] * 1e3:.1f} | "
                     f"{p['measured_seconds'] * 1e3:.1f} | {p['error']:+.1%} | {p['worst_memory_error']:.1%} | "
                     f"{p['peak_memory_error']:.1%} | {'yes' if p['bytes_equal'] else 'NO'} |")
    if skipped:
        lines += ["", "Plans the executor refused (not counted above):", ""]
        lines += [f"- {entry[0]}: {entry[2] if len(entry) > 2 else ''}" for entry in skipped]
    lines += ["", "Per plan: `compare/<plan>/` holds comparison.json, phases and memory figures, and `trace.json` "
              "(predicted and measured timelines side by side; open in chrome://tracing or Perfetto).", ""]
    (args.work / "README.md").write_text("\n".join(lines))


if __name__ == "__main__":
    main()
