#!/usr/bin/python3
"""Turns a Google Benchmark JSON file into results/<name>/README.md: one row per benchmark
(medians when repetitions were run), with the command that made it and the machine it ran on.
Usage: benchmark_report.py OUT_DIR TITLE COMMAND [NOTE]"""
import json
import os
import sys



def cpu_model():
    """The processor's name as /proc/cpuinfo gives it (the report is made on the machine that ran)."""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown processor"


out_dir, title, command = sys.argv[1:4]
note = sys.argv[4] if len(sys.argv) > 4 else ""
data = json.load(open(os.path.join(out_dir, "benchmark.json")))
rows = [b for b in data["benchmarks"] if b.get("aggregate_name", "median") == "median"]
unit_to_ms = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
lines = [f"# {title}", "", f"Command: `{command}` (Release build).",
         f"Machine: {cpu_model()}, {data['context'].get('num_cpus')} CPUs at {data['context'].get('mhz_per_cpu')} MHz, "
         f"shared; run {data['context'].get('date')}.", ""]
if note:
    lines += [note, ""]
lines += ["| benchmark | ms per run | plans per second |", "|---|---|---|"]
for b in rows:
    ms = b["real_time"] * unit_to_ms[b["time_unit"]]
    rate = b.get("plans_per_second")
    lines.append(f"| {b['run_name']} | {ms:.4g} | {f'{rate:,.0f}' if rate else '-'} |")
tmp = os.path.join(out_dir, "README.md.tmp")
open(tmp, "w").write("\n".join(lines) + "\n")
os.replace(tmp, os.path.join(out_dir, "README.md"))
