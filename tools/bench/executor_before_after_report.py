#!/usr/bin/env python3
"""Writes results/executor-before-after/ (README.md, results.json, results.csv) from the run reports
of tools/bench/executor-before-after.sh: RUNS/<plan>@<before|after>@<round>.json."""
import argparse
import csv
import datetime
import json
import math
import pathlib
import statistics


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("runs", type=pathlib.Path)
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--command", required=True)
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--load", nargs=2, required=True, metavar=("START", "END"))
    parser.add_argument("--cpu", required=True)
    parser.add_argument("--cpus", type=int, required=True)
    parser.add_argument("--setup", required=True)
    args = parser.parse_args()

    runs = {}  # plan -> version -> [(round, report)]
    for path in sorted(args.runs.glob("*.json")):
        plan, version, round_number = path.stem.split("@")
        runs.setdefault(plan, {}).setdefault(version, []).append((int(round_number), json.loads(path.read_text())))

    rows, csv_rows, failures = [], [], []
    for plan, by_version in sorted(runs.items()):
        row = {"plan": plan}
        for version in ("before", "after"):
            reports = sorted(by_version.get(version, []), key=lambda r: r[0])
            seconds = [report["iteration_seconds"] for _, report in reports]
            row[version] = {"median_step_seconds": statistics.median(seconds) if seconds else None,
                            "step_seconds_by_round": seconds,
                            "last_loss": reports[-1][1]["losses"][-1] if reports and reports[-1][1].get("losses") else None}
            csv_rows += [[plan, version, r, report["iteration_seconds"]] for r, report in reports]
            if not seconds:
                failures.append(f"{plan} {version}")
        b, a = row["before"]["median_step_seconds"], row["after"]["median_step_seconds"]
        row["after_over_before"] = a / b if a and b else None
        rows.append(row)
    ratios = [r["after_over_before"] for r in rows if r["after_over_before"]]
    geomean = math.exp(sum(math.log(v) for v in ratios) / len(ratios)) if ratios else None
    date = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    document = {"setup": args.setup, "cpu": args.cpu, "cpus": args.cpus, "command": args.command, "date": date,
                "before": args.before, "after": args.after, "load_average_start": args.load[0],
                "load_average_end": args.load[1], "geometric_mean_after_over_before": geomean,
                "worst_after_over_before": max(ratios) if ratios else None, "failed_runs": failures, "plans": rows}
    (args.out / "results.json").write_text(json.dumps(document, indent=2) + "\n")
    with open(args.out / "results.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["plan", "version", "round", "step_seconds"])
        writer.writerows(csv_rows)

    def ms(value):
        return f"{value * 1e3:.1f}" if value else "-"

    lines = [
        "# CPU executor step time: before and after",
        "",
        f"Command: `{args.command}`.",
        f"Machine: {args.cpus} CPUs, {args.cpu}; run {date}; load average (1, 5, 15 min) {args.load[0]} at the start, "
        f"{args.load[1]} at the end.",
        f"Setup: {args.setup}; `splitbrain run --backend cpu`. Before: `{args.before}`; after: `{args.after}`. "
        "Each cell: the median over the rounds of each run's median step time.",
        "",
        "| plan | before ms | after ms | after / before |",
        "|---|---|---|---|",
    ]
    for row in rows:
        ratio = row["after_over_before"]
        lines.append(f"| {row['plan']} | {ms(row['before']['median_step_seconds'])} | "
                     f"{ms(row['after']['median_step_seconds'])} | {f'{ratio:.3f}' if ratio else '-'} |")
    lines += ["", f"Geometric mean of after / before: {geomean:.3f}; worst plan {max(ratios):.3f}." if ratios else "",
              "", "Failed runs: " + (", ".join(failures) if failures else "none") + "."]
    (args.out / "README.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
