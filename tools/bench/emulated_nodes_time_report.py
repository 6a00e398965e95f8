"""Report of tools/bench/emulated-nodes-time.sh: predicted against measured iteration time per
set-up (one node, two emulated nodes of one and of two ranks), and the planner's ranking of the
2-rank jobs on one node and on two against the measured one.

Usage: emulated_nodes_time_report.py WORK --command TEXT --machine TEXT --load START END
Reads WORK/runs.txt and WORK/runs/SETUP/NAME.{predicted,measured}.json; writes WORK/README.md
and WORK/results.json."""

import argparse
import json
import statistics
from pathlib import Path


def spearman(xs, ys):
    """Spearman's rank correlation (average ranks for ties); None for fewer than 2 points."""
    if len(xs) < 2:
        return None

    def ranks(values):
        order = sorted(range(len(values)), key=lambda i: values[i])
        result = [0.0] * len(values)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
                j += 1
            for k in range(i, j + 1):
                result[order[k]] = (i + j) / 2.0
            i = j + 1
        return result

    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.mean(rx), statistics.mean(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    var = (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5
    return cov / var if var > 0 else None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("work")
    parser.add_argument("--command", required=True)
    parser.add_argument("--machine", required=True)
    parser.add_argument("--load", nargs=2, required=True)
    parser.add_argument("--latency", required=True, help="the link's one-way delay, as given to emulate-nodes.sh")
    args = parser.parse_args()
    work = Path(args.work)

    runs, refused = [], []
    for line in (work / "runs.txt").read_text().splitlines():
        setup, job, name, result = line.split("|")[:4]
        if not result.startswith("ran"):
            refused.append({"setup": setup, "job": job, "plan": name, "reason": result[len("refused "):]})
            continue
        # Round 1 (NAME.KIND.json) and the later rounds (NAME.round-K.KIND.json) of the same plan,
        # each round predicted on its own calibration.
        def round_reports(kind):
            paths = [work / "runs" / setup / f"{name}.{kind}.json"]
            later = (work / "runs" / setup).glob(f"{name}.round-*.{kind}.json")
            paths += sorted(later, key=lambda path: int(path.name[len(name) + len(".round-"):].split(".")[0]))
            return [json.loads(path.read_text()) for path in paths]

        predictions = round_reports("predicted")
        predicted_rounds = [report["iteration_seconds"] for report in predictions]
        measured_rounds = [report["iteration_seconds"] for report in round_reports("measured")]
        predicted, measured = statistics.median(predicted_rounds), statistics.median(measured_rounds)
        runs.append({"setup": setup, "job": job, "plan": name, "mesh": predictions[0].get("mesh", ""),
                     "predicted_seconds": predicted, "predicted_rounds_seconds": predicted_rounds,
                     "measured_seconds": measured, "measured_rounds_seconds": measured_rounds,
                     "error": predicted / measured - 1.0,
                     "round_errors": [p / m - 1.0 for p, m in zip(predicted_rounds, measured_rounds)]})

    lines = ["# Iteration time across emulated nodes: predicted after calibrate, against measured", ""]
    lines += [f"Command (as root): `{args.command}`.",
              f"Machine: {args.machine}; load average {args.load[0]} at the start, {args.load[1]} at the end.",
              "",
              "Set-ups: `one-node-2` is 2 ranks on this host (mpirun, one core each); `2x1` is 2 emulated nodes "
              f"x 1 rank joined by a 1 Gb/s link of {args.latency} one-way delay (`tools/emulate-nodes.sh`: netem where the "
              "kernel has it, else, as here, `splitbrain-delay-line`, whose lateness each run's log ends with); "
              "`2x2` is 2 emulated nodes x 2 ranks, "
              "a node's 2 ranks sharing its one core. Each set-up's cluster file (`clusters/SETUP.json`) is what "
              "`calibrate` measured there (`clusters/SETUP.calibrate.txt`; `SETUP.round-K.*` in round K): on the "
              "emulated nodes a node level among each host's ranks and a cluster level among one rank per host. "
              "Each plan ran once per round, the rounds one after another over all plans, and each set-up was "
              "calibrated anew in each round just before its runs there, each run predicted on its round's "
              "calibration. Errors are the median prediction over the rounds / the median measurement - 1; the "
              "spread columns give the lowest and highest round, and the last column the range of the errors "
              "of each round's prediction against that round's run alone (what one calibration gives).",
              ""]
    summary = {}
    lines += ["| set-up | job | plan | predicted ms (median) | rounds: spread | measured ms (median) | rounds: spread "
              "| error | one round's error: range |",
              "|---|---|---|---|---|---|---|---|---|"]

    def spread(seconds):
        return f"{len(seconds)}: {min(seconds) * 1e3:.1f}-{max(seconds) * 1e3:.1f}"

    for r in runs:
        lines.append(f"| {r['setup']} | {r['job']} | {r['plan']} | {r['predicted_seconds'] * 1e3:.1f} | "
                     f"{spread(r['predicted_rounds_seconds'])} | {r['measured_seconds'] * 1e3:.1f} | "
                     f"{spread(r['measured_rounds_seconds'])} | {r['error'] * 100:+.1f}% | "
                     f"{min(r['round_errors']) * 100:+.1f}% to {max(r['round_errors']) * 100:+.1f}% |")
    lines.append("")
    setups = sorted({r["setup"] for r in runs}, key=lambda s: ["one-node-2", "2x1", "2x2"].index(s))
    lines += ["| set-up | runs | median abs error | worst abs error | one round's: median | one round's: worst |",
              "|---|---|---|---|---|---|"]
    for setup in setups + ["all emulated"]:
        chosen = [r for r in runs if r["setup"] == setup or (setup == "all emulated" and r["setup"] != "one-node-2")]
        if not chosen:
            continue
        errors = [abs(r["error"]) for r in chosen]
        round_errors = [abs(e) for r in chosen for e in r["round_errors"]]
        summary[setup] = {"runs": len(chosen), "median_abs_error": statistics.median(errors), "worst_abs_error": max(errors),
                          "one_round_median_abs_error": statistics.median(round_errors),
                          "one_round_worst_abs_error": max(round_errors)}
        lines.append(f"| {setup} | {len(chosen)} | {statistics.median(errors) * 100:.1f}% | {max(errors) * 100:.1f}% | "
                     f"{statistics.median(round_errors) * 100:.1f}% | {max(round_errors) * 100:.1f}% |")
    lines.append("")

    # Rankings of the 2-rank jobs: the same plans on one node and on two.
    lines += ["## Ranking on one node and on two emulated nodes", "",
              "The 2-rank jobs' top plans of both set-ups, each run on both. Per set-up: the plans in predicted "
              "order with their measured times, Spearman's rank correlation of predicted and measured, and the "
              "regret of the predicted best (its measured time over the measured best's, minus 1).", ""]
    rankings = {}
    for job in sorted({r["job"] for r in runs}):
        orders = {}
        for setup in ("one-node-2", "2x1"):
            chosen = sorted((r for r in runs if r["setup"] == setup and r["job"] == job), key=lambda r: r["predicted_seconds"])
            if not chosen:
                continue
            predicted = [r["predicted_seconds"] for r in chosen]
            measured = [r["measured_seconds"] for r in chosen]
            rho = spearman(predicted, measured)
            regret = measured[0] / min(measured) - 1.0
            orders[setup] = [r["plan"] for r in chosen]
            rankings.setdefault(job, {})[setup] = {"predicted_order": orders[setup], "spearman": rho, "regret_of_predicted_best": regret,
                                                   "measured_best": min(chosen, key=lambda r: r["measured_seconds"])["plan"]}
            rho_text = "n/a" if rho is None else f"{rho:.2f}"
            lines.append(f"**{job}, {setup}**: rank correlation {rho_text}, regret of the predicted best {regret * 100:.1f}%; "
                         "predicted order: " + ", ".join(f"{r['plan']} ({r['predicted_seconds'] * 1e3:.0f} ms predicted, "
                                                          f"{r['measured_seconds'] * 1e3:.0f} ms measured)" for r in chosen))
            lines.append("")
        if len(orders) == 2:
            differs = orders["one-node-2"] != orders["2x1"]
            rankings[job]["ranking_differs"] = differs
            best_differs = orders["one-node-2"][0] != orders["2x1"][0]
            rankings[job]["predicted_best_differs"] = best_differs
            lines.append(f"{job}: the predicted ranking {'differs' if differs else 'is the same'} between one node and two; "
                         f"the predicted best {'differs' if best_differs else 'is the same'}.")
            lines.append("")
    if refused:
        lines += ["## Plans the executor did not run", "", "| set-up | job | plan | reason |", "|---|---|---|---|"]
        lines += [f"| {r['setup']} | {r['job']} | {r['plan']} | {r['reason']} |" for r in refused]
        lines.append("")
    (work / "README.md").write_text("\n".join(lines) + "\n")
    (work / "results.json").write_text(json.dumps({"runs": runs, "refused": refused, "summary": summary,
                                                   "rankings": rankings}, indent=1) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
