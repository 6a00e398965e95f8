#!/usr/bin/env python3
"""Writes results/rank-placement/ (README.md, results.json, results.csv) from the run reports of
tools/bench/rank-placement.sh: RUNS/<plan>-<way>-<round>.json, way in splitbrain, launcher, unbound."""
import argparse
import csv
import datetime
import json
import math
import pathlib
import re
import statistics

WAYS = ("splitbrain", "launcher", "unbound")
# What each way's reports must say placed the ranks; a mismatch means the way measured something else.
EXPECTED_BY = {"splitbrain": "splitbrain", "launcher": "launcher", "unbound": "none"}
WAY_TEXT = {
    "splitbrain": "`mpirun --bind-to none`: splitbrain pins",
    "launcher": "`mpirun --bind-to core`: the launcher binds",
    "unbound": "`mpirun --bind-to none` + `--no-bind`: nobody binds",
}


def cpu_text(cpus):
    return ",".join(str(c) for c in cpus)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("runs", type=pathlib.Path)
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--command", required=True)
    parser.add_argument("--load", nargs=2, required=True, metavar=("START", "END"))
    parser.add_argument("--cpu", required=True)
    parser.add_argument("--cpus", type=int, required=True)
    parser.add_argument("--setup", required=True)
    args = parser.parse_args()

    runs = {}  # plan -> way -> [(round, report)]
    for path in sorted(args.runs.glob("*.json")):
        match = re.fullmatch(r"(.*)-(splitbrain|launcher|unbound)-(\d+)\.json", path.name)
        if match:
            plan, way, round_number = match.group(1), match.group(2), int(match.group(3))
            runs.setdefault(plan, {}).setdefault(way, []).append((round_number, json.loads(path.read_text())))

    rows, csv_rows, mismatches = [], [], []
    for plan, by_way in sorted(runs.items()):
        row = {"plan": plan, "ways": {}}
        for way in WAYS:
            reports = sorted(by_way.get(way, []), key=lambda r: r[0])
            if not reports:
                continue
            seconds = [report["iteration_seconds"] for _, report in reports]
            placement = [r["placement"] for r in reports[0][1]["ranks"]]
            row["ways"][way] = {"median_step_seconds": statistics.median(seconds), "step_seconds_by_round": seconds,
                                "placement": placement}
            for round_number, report in reports:
                by = [r["placement"]["by"] for r in report["ranks"]]
                if any(b != EXPECTED_BY[way] for b in by):
                    mismatches.append(f"{plan} {way} round {round_number}: placed by {by}")
                csv_rows.append([plan, way, round_number, report["iteration_seconds"], by[0],
                                 *[cpu_text(r["placement"]["cpus"]) for r in report["ranks"]]])
        ways = row["ways"]
        def ratio(a, b):
            return ways[a]["median_step_seconds"] / ways[b]["median_step_seconds"] if a in ways and b in ways else None
        row["ratios"] = {"unbound_over_splitbrain": ratio("unbound", "splitbrain"),
                         "unbound_over_launcher": ratio("unbound", "launcher"),
                         "splitbrain_over_launcher": ratio("splitbrain", "launcher")}
        rows.append(row)

    def geomean(key):
        values = [r["ratios"][key] for r in rows if r["ratios"][key]]
        return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None

    summary = {k: geomean(k) for k in ("unbound_over_splitbrain", "unbound_over_launcher", "splitbrain_over_launcher")}
    plain_binding = (args.out / "plain-mpirun-binding.txt").read_text().strip().splitlines()
    date = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    document = {"setup": args.setup, "cpu": args.cpu, "cpus": args.cpus, "command": args.command, "date": date,
                "load_average_start": args.load[0], "load_average_end": args.load[1],
                "plain_mpirun_binding": plain_binding, "geometric_mean_ratios": summary,
                "placement_mismatches": mismatches, "plans": rows}
    (args.out / "results.json").write_text(json.dumps(document, indent=2) + "\n")
    with open(args.out / "results.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["plan", "way", "round", "step_seconds", "placed_by", "cpus_rank0", "cpus_rank1"])
        writer.writerows(csv_rows)

    def ms(row, way):
        return f"{row['ways'][way]['median_step_seconds'] * 1e3:.0f}" if way in row["ways"] else "-"

    def times(value):
        return f"{value:.2f}x" if value else "-"

    lines = [
        "# Rank placement: step time pinned, bound by the launcher, and unbound",
        "",
        f"Command: `{args.command}`.",
        f"Machine: {args.cpus} CPUs, {args.cpu}; run {date}; load average (1, 5, 15 min) {args.load[0]} at the start, "
        f"{args.load[1]} at the end.",
        f"Setup: {args.setup}; `splitbrain run --backend cpu`, one thread per rank; the planner's top plans on the "
        "local-cpu preset plus data-parallel. Each cell: the median over the rounds of each run's median step time.",
        "",
        "Ways: " + "; ".join(f"**{w}**: {WAY_TEXT[w]}" for w in WAYS) + ".",
        "",
        "| plan | splitbrain ms | launcher ms | unbound ms | unbound / splitbrain | unbound / launcher | splitbrain / launcher |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        r = row["ratios"]
        lines.append(f"| {row['plan']} | {ms(row, 'splitbrain')} | {ms(row, 'launcher')} | {ms(row, 'unbound')} | "
                     f"{times(r['unbound_over_splitbrain'])} | {times(r['unbound_over_launcher'])} | "
                     f"{times(r['splitbrain_over_launcher'])} |")
    lines += [
        f"| geometric mean | | | | {times(summary['unbound_over_splitbrain'])} | {times(summary['unbound_over_launcher'])} | "
        f"{times(summary['splitbrain_over_launcher'])} |",
        "",
        "Placements the reports recorded (rank 0, rank 1): " + "; ".join(
            f"{way} {' / '.join(cpu_text(p['cpus']) for p in rows[0]['ways'][way]['placement'])}"
            for way in WAYS if rows and way in rows[0]["ways"]) + ".",
        "",
        "A plain `mpirun -np 2` (no binding flags) on this machine: " + "; ".join(plain_binding) +
        " (Open MPI 4 binds jobs of up to 2 ranks to cores by itself; splitbrain then keeps the launcher's binding).",
    ]
    # The ways compete for the same cores with whatever else runs; say so when something did. The
    # 1-minute load at the end includes the benchmark's own 2 ranks, at the start it does not.
    start_load, end_load = (float(load.split()[0]) for load in args.load)
    if start_load > 0.5 * args.cpus or end_load > 2 + 0.5 * args.cpus:
        lines += ["", f"**Noisy**: 1-minute load average {start_load:.2f} at the start and {end_load:.2f} at the end on "
                  f"{args.cpus} CPUs (the benchmark's own 2 ranks add about 2): other work shared the machine and competed "
                  "with the ranks for the same cores, so step times vary from round to round (each round's "
                  "times are in results.csv). Rerun on a quiet machine before drawing conclusions."]
    if mismatches:
        lines += ["", "Runs placed otherwise than their way says: " + "; ".join(mismatches) + "."]
    (args.out / "README.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
