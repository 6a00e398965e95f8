#!/usr/bin/env python3
"""Writes README.md and results.json into WORK from tools/bench/fidelity-before-after.sh's rounds:
WORK/rounds/<before|after>-<round>/results.json, each one round of that version's fidelity.sh."""
import argparse
import datetime
import json
import pathlib
import re
import statistics

VERSIONS = ("before", "after")


def plan_key(plan):
    """The plan without its rank in the planner's list, which may differ between versions and rounds:
    vgg11-cifar10-2-03-splitbrain-g-2 -> vgg11-cifar10-2-splitbrain-g-2 (and '-best' dropped)."""
    prefix = f"{plan['model']}-{plan['ranks']}-"
    rest = re.sub(r"^\d+-", "", plan["name"][len(prefix):])
    return prefix + re.sub(r"-best$", "", rest)


def median_round_error(errors):
    """fidelity.sh's choice: the error of the round whose error is the median (the upper one of two)."""
    ordered = sorted(errors)
    return ordered[len(ordered) // 2]


def summarise(errors_by_plan):
    row_errors = {key: median_round_error(errors) for key, errors in errors_by_plan.items()}
    absolute = [abs(e) for e in row_errors.values()]
    return row_errors, {
        "plans": len(row_errors),
        "median_abs_error": statistics.median(absolute) if absolute else None,
        "worst_abs_error": max(absolute) if absolute else None,
        "under_predicted": sum(1 for e in row_errors.values() if e < 0),
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("work", type=pathlib.Path)
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--rounds", type=int, required=True)
    parser.add_argument("--command", required=True)
    parser.add_argument("--load", nargs=2, required=True, metavar=("START", "END"))
    parser.add_argument("--machine", required=True)
    args = parser.parse_args()

    errors = {v: {} for v in VERSIONS}  # version -> plan key -> [error by round]
    round_medians = {v: [] for v in VERSIONS}  # each round's median |error| over its plans
    picks = {v: [] for v in VERSIONS}  # each round's ranking checks
    memory_exact = {v: True for v in VERSIONS}
    for version in VERSIONS:
        for round_number in range(1, args.rounds + 1):
            report = json.loads((args.work / "rounds" / f"{version}-{round_number}" / "results.json").read_text())
            for plan in report["plans"]:
                errors[version].setdefault(plan_key(plan), []).append(plan["error"])
                memory_exact[version] &= plan["worst_memory_error"] == 0.0 and plan["bytes_equal"]
            round_medians[version].append(report["summary"]["median_abs_error"])
            picks[version] += [{"round": round_number, "model": r["model"], "ranks": r["ranks"], "gap": r["gap"]}
                               for r in report["summary"]["ranking"]]

    rows, summary = {}, {}
    for version in VERSIONS:
        rows[version], summary[version] = summarise(errors[version])
        summary[version]["round_median_abs_errors"] = round_medians[version]
        summary[version]["memory_and_bytes_exact"] = memory_exact[version]
        summary[version]["pick_gaps"] = picks[version]
    shared = sorted(set(rows["before"]) & set(rows["after"]))
    better = sum(1 for key in shared if abs(rows["after"][key]) <= abs(rows["before"][key]))
    date = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    document = {"command": args.command, "machine": args.machine, "date": date, "before": args.before,
                "after": args.after, "rounds": args.rounds, "load_average_start": args.load[0],
                "load_average_end": args.load[1], "summary": summary,
                "plans": {key: {v: {"error": rows[v].get(key), "errors_by_round": errors[v].get(key)} for v in VERSIONS}
                          for key in sorted(set(rows["before"]) | set(rows["after"]))},
                "plans_both_rank": len(shared), "plans_after_as_good_or_better": better}
    (args.work / "results.json").write_text(json.dumps(document, indent=2) + "\n")

    def percent(value):
        return f"{value * 100:+.1f}%" if value is not None else "-"

    def rounds_text(values):
        return ", ".join(f"{v * 100:+.1f}" for v in values) if values else "-"

    lines = [
        "# Fidelity: before and after, in one run",
        "",
        f"Command: `{args.command}`.",
        f"Machine: {args.machine}; run {date}; load average (1, 5, 15 min) {args.load[0]} at the start, "
        f"{args.load[1]} at the end.",
        f"Before: `{args.before}`; after: `{args.after}`. Each version's own `tools/bench/fidelity.sh` (its calibrate, "
        f"planner, simulator and executor) ran {args.rounds} single rounds, the two versions alternating round by round "
        "(before first in odd rounds). A plan's error is its median round's (predicted / measured step - 1).",
        "",
        "| | before | after |",
        "|---|---|---|",
    ]
    for label, field in (("plans", "plans"), ("median error", "median_abs_error"), ("worst error", "worst_abs_error"),
                         ("under-predicted plans", "under_predicted")):
        values = [summary[v][field] for v in VERSIONS]
        if field.endswith("error"):
            values = [f"{v * 100:.1f}%" for v in values]
        lines.append(f"| {label} | {values[0]} | {values[1]} |")
    lines.append("| each round's median error | " +
                 " | ".join(", ".join(f"{v * 100:.1f}" for v in summary[v]["round_median_abs_errors"]) for v in VERSIONS) +
                 " |")
    lines.append("| memory exact, bytes equal | " +
                 " | ".join("yes" if summary[v]["memory_and_bytes_exact"] else "no" for v in VERSIONS) + " |")
    lines += [
        "",
        f"Plans both planners rank: {len(shared)}; the after error as small or smaller on {better}.",
        "",
        "| plan | before | after | before by round | after by round |",
        "|---|---|---|---|---|",
    ]
    for key, plan in document["plans"].items():
        lines.append(f"| {key} | {percent(plan['before']['error'])} | {percent(plan['after']['error'])} | "
                     f"{rounds_text(plan['before']['errors_by_round'])} | {rounds_text(plan['after']['errors_by_round'])} |")
    lines += ["", "The planner's pick against the measured fastest, round by round (gap: how much slower the pick ran):", ""]
    for version in VERSIONS:
        gaps = ", ".join(f"{p['model']} r{p['round']} {p['gap'] * 100:.1f}%" for p in summary[version]["pick_gaps"])
        lines.append(f"- {version}: {gaps}")
    lines += ["", "`rounds/<version>-<round>/`: that round's fidelity.sh report and results.json (its figures and "
              "compare/ folders are not kept), and `calibration.txt`, what its calibration said it measured."]
    (args.work / "README.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
