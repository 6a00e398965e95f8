#!/usr/bin/env python3
"""How long `splitbrain plan` takes on large GPT searches, and that its pruned search ranks what
the exhaustive one ranks.

Usage: planner_speed.py SPLITBRAIN OUT_DIR [BASELINE] [CHECK] [RUNS]. Each job runs RUNS times
(user CPU and wall seconds from /usr/bin/time -v; the table shows medians); with CHECK=1 once more
with --exhaustive, and with a BASELINE binary RUNS times with it. Every run's ranking (the "plans"
of --json: family, mesh, predicted time, memory, ZeRO, recompute, fits) must equal the first
run's, the exhaustive run's and the baseline's, else the script exits 1. Writes OUT_DIR/README.md,
runs.csv and rankings/JOB.json.
"""
import csv
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

GPT_1T = "gpt:layers=128,hidden=25600,heads=160,seq=2048,vocab=51200,positions=2048"
COMMON = ["--dtype", "bf16", "--optimizer", "adam", "--top", "10"]
# name, what it is, plan arguments
JOBS = [
    ("gpt-1t-3072", "1T GPT of SC21 Table 1 (row 10), batch 3072, on 3,072 A100s",
     ["--model", GPT_1T, "--cluster", "dgx-a100-80g:nodes=384", "--devices", "3072", "--batch", "3072"]),
    ("gpt3-175b-1024", "GPT-3 175B shape, batch 1536, on 1,024 A100s",
     ["--model", "gpt3-175b", "--cluster", "dgx-a100-80g:nodes=128", "--devices", "1024", "--batch", "1536"]),
    ("gpt-1t-512", "1T GPT of SC21 Table 1, batch 3072, on 512 A100s (only micro-batches of one or two samples per replica fit)",
     ["--model", GPT_1T, "--cluster", "dgx-a100-80g:nodes=64", "--devices", "512", "--batch", "3072"]),
]


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def timed_plan(binary, arguments, json_path):
    """Runs one search under /usr/bin/time -v: (wall seconds, user seconds, the JSON report)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as timing:
        command = ["/usr/bin/time", "-v", "-o", timing.name, binary, "plan", *arguments, *COMMON, "--json", json_path]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        fields = {}
        for line in timing.read().splitlines():
            key, _, value = line.strip().rpartition(": ")
            fields[key] = value
    user = float(fields["User time (seconds)"])
    clock = fields["Elapsed (wall clock) time (h:mm:ss or m:ss)"].split(":")
    wall = sum(float(part) * 60**i for i, part in enumerate(reversed(clock)))
    return wall, user, json.load(open(json_path))


def main():
    binary, out_dir = sys.argv[1], sys.argv[2]
    baseline = sys.argv[3] if len(sys.argv) > 3 else ""
    # CHECK: 1 runs --exhaustive on every job, 0 on none, else a comma-separated list of jobs.
    check_argument = sys.argv[4] if len(sys.argv) > 4 else "1"
    checked_jobs = {job for job, _, _ in JOBS} if check_argument == "1" else (
        set() if check_argument == "0" else set(check_argument.split(",")))
    check = bool(checked_jobs)
    runs = int(sys.argv[5]) if len(sys.argv) > 5 else 3
    os.makedirs(os.path.join(out_dir, "rankings"), exist_ok=True)
    scratch = os.path.join(out_dir, "scratch.json")
    rows, records, mismatches = [], [], []

    def measure(job, label, program, arguments, count, reference):
        walls, users, simulated = [], [], None
        for run in range(count):
            print(f"[planner-speed] {job} {label} run {run + 1}/{count}", file=sys.stderr, flush=True)
            wall, user, report = timed_plan(program, arguments, scratch)
            walls.append(wall)
            users.append(user)
            simulated = report["plans_simulated"]
            records.append([job, label, run + 1, f"{wall:.2f}", f"{user:.2f}", simulated, len(report["plans"])])
            if reference is None:
                reference = report
                json.dump(report, open(os.path.join(out_dir, "rankings", f"{job}.json"), "w"), indent=1)
            elif report["plans"] != reference["plans"]:
                mismatches.append(f"{job}: {label} run {run + 1} ranks differently")
        os.remove(scratch)
        return statistics.median(walls), statistics.median(users), simulated, reference

    for job, what, arguments in JOBS:
        wall, user, simulated, reference = measure(job, "default", binary, arguments, runs, None)
        rows.append((job, what, "default (pruned)", runs, wall, user, simulated, len(reference["plans"])))
        if job in checked_jobs:
            wall, user, simulated, _ = measure(job, "exhaustive", binary, arguments + ["--exhaustive"], 1, reference)
            rows.append((job, what, "--exhaustive", 1, wall, user, simulated, len(reference["plans"])))
        if baseline:
            wall, user, simulated, _ = measure(job, "baseline", baseline, arguments, runs, reference)
            rows.append((job, what, "baseline build", runs, wall, user, simulated, len(reference["plans"])))

    with open(os.path.join(out_dir, "runs.csv"), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["job", "search", "run", "wall_seconds", "user_seconds", "plans_simulated", "plans_ranked"])
        writer.writerows(records)

    lines = [
        "# Planner speed",
        "",
        "Command: `bash tools/bench/planner-speed.sh`"
        + (" with `BASELINE=<build of the previous search>`" if baseline else "") + " (Release build).",
        f"Machine: {cpu_model()}, {os.cpu_count()} CPUs, shared with other work (wall times move with the"
        " load; user CPU time less so); run " + datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds") + ".",
        "",
        "Each search: `splitbrain plan <arguments> " + " ".join(COMMON) + " --json FILE`, timed with"
        " `/usr/bin/time -v`; seconds are medians of the runs. \"plans timed\" counts the full simulations"
        " (timelines); the default search decides whether a variant fits by its step programs' memory walks"
        " alone and times only plans whose lower bound on the step time could beat the best so far.",
        "",
        "| job | search | runs | wall s (median) | user s (median) | plans timed | plans ranked |",
        "|---|---|---|---|---|---|---|",
    ]
    for job, what, label, count, wall, user, simulated, ranked in rows:
        lines.append(f"| {job} | {label} | {count} | {wall:.1f} | {user:.1f} | {simulated} | {ranked} |")
    lines += ["", "Jobs:", ""]
    for job, what, arguments in JOBS:
        lines.append(f"- `{job}`: {what}: `splitbrain plan {' '.join(arguments)} {' '.join(COMMON)}`")
    lines += ["", "Rankings: every run of a job ranked the same plans (ids, families, meshes, predicted times,"
              " peak memory, ZeRO stage, recompute, fits)"
              + (f", and so did `--exhaustive` ({', '.join(sorted(checked_jobs))})" if check else "")
              + (" and the baseline build" if baseline else "") + ("." if not mismatches else ": NOT SO, see below."),
              "`rankings/JOB.json` holds each job's."]
    for m in mismatches:
        lines.append(f"- {m}")
    open(os.path.join(out_dir, "README.md"), "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))
    if mismatches:
        sys.exit(1)


if __name__ == "__main__":
    main()
