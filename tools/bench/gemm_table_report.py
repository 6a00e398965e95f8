#!/usr/bin/env python3
"""Report of tools/bench/gemm-table.sh: each fc layer's forward and backward time, measured
(median over the runs' traces) and predicted with the flat GEMM curve and with the GEMM table.
Usage: gemm_table_report.py TMP OUT RUNS LOAD_START LOAD_END CPU NPROC CASE..."""
import json
import os
import statistics
import sys


def events(path):
    with open(path) as f:
        trace = json.load(f)
    return trace["traceEvents"] if isinstance(trace, dict) else trace


def fc_durations_ms(path):
    """{(layer, phase): ms} for the fc layers' compute events (summed over micro-batches)."""
    durations = {}
    for event in events(path):
        if event.get("ph") != "X" or event.get("cat") != "compute":
            continue
        words = event["name"].split()
        if len(words) < 2 or not words[1].startswith("fc"):
            continue
        phase = "forward" if words[0] in ("fwd", "forward") else "backward"
        key = (words[1], phase)
        durations[key] = durations.get(key, 0.0) + event["dur"] / 1e3
    return durations


def error(predicted, measured):
    return (predicted - measured) / measured if measured > 0 else 0.0


def main():
    tmp, out, runs, load_start, load_end, cpu, nproc = sys.argv[1:8]
    cases = sys.argv[8:]
    rows = []
    for case in cases:
        folder = os.path.join(tmp, case)
        table = fc_durations_ms(os.path.join(folder, "table.json"))
        flat = fc_durations_ms(os.path.join(folder, "flat.json"))
        measured_runs = [fc_durations_ms(os.path.join(folder, f"run-{r}.json")) for r in range(1, int(runs) + 1)]
        for key in sorted(table):
            measured = statistics.median(run.get(key, 0.0) for run in measured_runs)
            rows.append({"case": case, "layer": key[0], "phase": key[1], "measured_ms": measured,
                         "flat_curve_ms": flat.get(key, 0.0), "table_ms": table[key],
                         "flat_curve_error": error(flat.get(key, 0.0), measured), "table_error": error(table[key], measured)})
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"cpu": cpu, "cpus": int(nproc), "runs": int(runs), "rows": rows}, f, indent=2)

    def median_abs(field):
        return statistics.median(abs(r[field]) for r in rows) * 100 if rows else 0.0

    def total_abs_ms(field):
        return sum(abs(r[field] - r["measured_ms"]) for r in rows)

    lines = [
        "# GEMM table: fully connected layers predicted with the flat curve and with the table",
        "",
        f"Made by `bash tools/bench/gemm-table.sh` (RUNS={runs}) on {nproc} CPUs, {cpu}; load average {load_start} at the start, "
        f"{load_end} at the end.",
        "One `splitbrain calibrate` (1 rank, no `--model`: no layer's exact problem is measured) gives `cluster-table.json` "
        "(`calibrate.txt` is its output); the flat-curve prediction uses the same file without `device.gemm_table`. Each case is "
        "the planner's best plan on 1 rank; measured is the median over the runs of the fc layer's time in the trace of the last "
        "step (forward; backward = input and weight gradients).",
        "",
        "The host is shared (see the load average): one kernel's time varies by up to 2x from minute to minute, and the table's grid points come from one calibration, so single rows can be off either way; the medians and sums over all rows are the comparison.",
        "",
        f"- median |error| over the rows: flat curve {median_abs('flat_curve_error'):.1f}%, table {median_abs('table_error'):.1f}%",
        f"- sum of |predicted - measured| over the rows: flat curve {total_abs_ms('flat_curve_ms'):.2f} ms, "
        f"table {total_abs_ms('table_ms'):.2f} ms",
        "",
        "| case | layer | phase | measured ms | flat curve ms | error | table ms | error |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(f"| {r['case']} | {r['layer']} | {r['phase']} | {r['measured_ms']:.3f} | {r['flat_curve_ms']:.3f} | "
                     f"{r['flat_curve_error'] * 100:+.1f}% | {r['table_ms']:.3f} | {r['table_error'] * 100:+.1f}% |")
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
