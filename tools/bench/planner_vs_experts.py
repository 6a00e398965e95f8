#!/usr/bin/env python3
"""Does `splitbrain plan` beat the experts? The 10 GPTs of Narayanan et al., SC21 (arXiv 2104.04473),
Table 1, each on the table's GPUs and global batch (bf16, Adam, dgx-a100-80g:nodes=GPUs/8).

Experts' side: the fastest plan that fits in 80 GB of
  (a) the published plan, written as tools/bench/sc21_table1.py writes it (the table's TP x PP x DP,
      full recomputation, fp32 main gradients reduced after the backward), micro-batch size 1, 2, 4;
  (b) the same mesh with Megatron-LM's later practice (Korthikanti et al. 2022): sequence
      parallelism and selective (attention) recomputation, micro-batch size 1-4, plain 1F1B and,
      with PP >= 2, interleaved 1F1B over V model chunks per stage wherever the layers cut evenly
      into PP x V chunks and the micro-batch count is a multiple of PP (Megatron-LM requires both).
Planner's side: the best plan that fits of `splitbrain plan` for the same job, and how long the
search took. Both sides are priced by the same simulator: this compares choices, not machines.

Usage: planner_vs_experts.py SPLITBRAIN OUT_DIR [--rows 1,5,8]. Writes OUT_DIR/README.md,
results.json, results.csv and plans/ (each row's two winning plan files); the caller renames a
temporary folder into place.
"""
import argparse
import copy
import csv
import datetime
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sc21_table1 import MICRO_BATCH_SIZES, ROWS, megatron_plan, paper_flops, simulate  # noqa: E402

DEVICE_MEMORY = 85899345920  # an A100 80GB's memory, the bar sc21_table1.py and the planner use
LATER_MICRO_BATCH_SIZES = (1, 2, 3, 4)
VIRTUAL_STAGES = (2, 3, 4, 6)  # tried where the layers of a stage divide by V


def log(message):
    print(f"[planner-vs-experts] {message}", file=sys.stderr, flush=True)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def revision():
    """The commit the sources are at (read-only: nothing in the checkout is touched)."""
    run = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return run.stdout.strip() if run.returncode == 0 else "unknown"


def later_practice(plan, layers, pp, virtual_stages):
    """The published plan changed as Megatron-LM runs it since 2022: sequence parallelism (the
    per-token layers split the sequence over the tensor-parallel axis, their saved inputs gathered
    again in backward, as plans/sequence_parallel.cc does it), selective recomputation, and V
    model chunks per stage under interleaved 1F1B."""
    plan = copy.deepcopy(plan)
    plan["options"]["recompute"] = "selective"
    sequence_parallel = "model" in plan["mesh"]  # it needs tensor parallelism
    if sequence_parallel:
        per_token = ["embed", "embed.dropout", "ln_f"]
        for i in range(layers):
            per_token += [f"h{i}.{name}" for name in
                          ("ln_1", "attn.dropout", "attn.residual", "ln_2", "mlp.dropout", "mlp.residual")]
        for name in per_token:
            plan["layers"][name] = {"batch": ["data"], "spatial": ["model"]}
        plan["options"]["regather_saved_inputs"] = True
    if virtual_stages > 1:
        per_chunk = layers // (pp * virtual_stages)
        plan["pipeline"].update(schedule="interleaved_1f1b", virtual_stages=virtual_stages,
                                stage_starts=[f"h{k * per_chunk}.ln_1" for k in range(1, pp * virtual_stages)])
    plan["family"] += (" +sp" if sequence_parallel else "") + " +selective" + \
        (f" interleaved v={virtual_stages}" if virtual_stages > 1 else "")
    return plan


def expert_candidates(heads, hidden, layers, tp, pp, gpus, batch):
    """(practice, plan) for every plan the experts would try on this row's mesh."""
    dp = gpus // (tp * pp)
    for mbs in MICRO_BATCH_SIZES:
        if batch % (dp * mbs) == 0:
            yield "published", megatron_plan(heads, hidden, layers, tp, pp, gpus, batch, mbs)
    for mbs in LATER_MICRO_BATCH_SIZES:
        if batch % (dp * mbs) != 0:
            continue
        published = megatron_plan(heads, hidden, layers, tp, pp, gpus, batch, mbs)
        yield "later", later_practice(published, layers, pp, 1)
        micro_batches = batch // (dp * mbs)
        for v in VIRTUAL_STAGES:
            if pp >= 2 and layers % (pp * v) == 0 and micro_batches % pp == 0:
                yield "later", later_practice(published, layers, pp, v)


def choices(plan):
    """What a plan file chose, in the terms both sides are compared by."""
    mesh, options = plan["mesh"], plan["options"]
    pipeline = plan.get("pipeline", {})
    micro_batches = pipeline.get("micro_batches", plan.get("micro_batches", 1))
    recompute = options.get("recompute", False)
    if recompute == "selective":
        mode = "selective"
    elif recompute:
        blocks = options.get("recompute_blocks", 0)
        mode = f"full, first {blocks} blocks" if blocks else "full"
    else:
        mode = "none"
    # Sequence parallelism: a layer splitting the sequence over an axis that also splits a
    # linear's features (a `space` axis splitting positions alone is not Megatron's SP).
    layer_map = plan.get("layers", {})
    feature_axes = {a for s in layer_map.values() for a in s.get("out", []) + s.get("in", [])}
    sp = any(set(s.get("spatial", [])) & feature_axes for s in layer_map.values())
    return {"tp": mesh.get("model", 1), "pp": mesh.get("pipe", 1), "dp": mesh.get("data", 1),
            "space": mesh.get("space", 1), "micro_batches": micro_batches,
            # samples per micro-batch per data-parallel replica
            "micro_batch_size": plan["batch"] / (micro_batches * mesh.get("data", 1)),
            "schedule": pipeline.get("schedule", "none") if pipeline else "none",
            "virtual_stages": pipeline.get("virtual_stages", 1), "recompute": mode,
            "zero_stage": options.get("zero_stage", 0), "sequence_parallel": sp,
            "gradient_dtype": options.get("gradient_dtype", plan.get("dtype", "fp32")),
            "overlap_gradient_sync": options.get("overlap_gradient_sync", True)}


def short(c):
    """One line for a plan's choices, e.g. `TP8 PP16 DP15 mb2 interleaved v3 SP sel-rc`."""
    mbs = f"{c['micro_batch_size']:g}"
    text = f"TP{c['tp']} PP{c['pp']} DP{c['dp']}" + (f" space{c['space']}" if c["space"] > 1 else "") + f" mb{mbs}"
    if c["schedule"] == "interleaved_1f1b":
        text += f" interleaved v{c['virtual_stages']}"
    elif c["schedule"] not in ("none", "1f1b"):
        text += f" {c['schedule']}"
    text += " SP" if c["sequence_parallel"] else ""
    text += {"none": "", "selective": " sel-rc", "full": " full-rc"}.get(c["recompute"], f" rc({c['recompute']})")
    return text + (f" ZeRO{c['zero_stage']}" if c["zero_stage"] else "")


def differences(experts, planner):
    """What the planner chose otherwise than the experts' best plan, most structural first."""
    e, p = experts, planner
    out = []
    mesh = lambda c: (c["tp"], c["pp"], c["dp"], c["space"])
    if mesh(e) != mesh(p):
        out.append(f"mesh TP{p['tp']} PP{p['pp']} DP{p['dp']}" + (f" space{p['space']}" if p["space"] > 1 else "")
                   + f" (not TP{e['tp']} PP{e['pp']} DP{e['dp']})")
    if e["micro_batch_size"] != p["micro_batch_size"]:
        out.append(f"micro-batch {p['micro_batch_size']:g} (not {e['micro_batch_size']:g})")
    schedule = lambda c: c["schedule"] + (f" v{c['virtual_stages']}" if c["virtual_stages"] > 1 else "")
    if schedule(e) != schedule(p):
        out.append(f"schedule {schedule(p)} (not {schedule(e)})")
    if e["recompute"] != p["recompute"]:
        out.append(f"recompute {p['recompute']} (not {e['recompute']})")
    if e["zero_stage"] != p["zero_stage"]:
        out.append(f"ZeRO {p['zero_stage']}")
    if e["sequence_parallel"] != p["sequence_parallel"]:
        out.append("sequence parallel" if p["sequence_parallel"] else "no sequence parallelism")
    # Not choices the experts' table lets vary, but they move the time: said so the ratio is read right.
    if e["gradient_dtype"] != p["gradient_dtype"]:
        out.append(f"{p['gradient_dtype']} gradients (not {e['gradient_dtype']} main gradients)")
    if e["overlap_gradient_sync"] != p["overlap_gradient_sync"]:
        out.append(f"gradients reduced {'during' if p['overlap_gradient_sync'] else 'after'} the backward")
    return out or ["nothing"]


def simulated(binary, plan, cluster, work):
    """simulate's step time, peak memory, bubble and fit; {"error": ...} when it refuses the plan."""
    prediction, error = simulate(binary, plan, cluster, work)
    if prediction is None:
        return {"error": error}  # kept: a plan the simulator refuses is a finding
    peak = max(r["peak_memory_bytes"] for r in prediction["ranks"])
    return {"iteration_seconds": prediction["iteration_seconds"], "peak_memory_bytes": peak,
            "fits": peak <= DEVICE_MEMORY, "bubble_seconds": prediction["phases"]["bubble"]}


def run_experts(binary, row, cluster, work):
    """Simulates every candidate; returns (candidates, best fitting one or None, its plan)."""
    params, heads, hidden, layers, tp, pp, gpus, batch, _ = row
    results, best, best_plan = [], None, None
    for practice, plan in expert_candidates(heads, hidden, layers, tp, pp, gpus, batch):
        entry = {"practice": practice, "family": plan["family"], **choices(plan),
                 **simulated(binary, plan, cluster, work)}
        if entry.get("fits") and (best is None or entry["iteration_seconds"] < best["iteration_seconds"]):
            best, best_plan = entry, plan
        results.append(entry)
    return results, best, best_plan


def run_planner(binary, spec, cluster, gpus, batch, work):
    """One `splitbrain plan` search, timed; returns (summary, best fitting plan file's text or None)."""
    report_path, emit_dir = os.path.join(work, "ranking.json"), os.path.join(work, "emitted")
    shutil.rmtree(emit_dir, ignore_errors=True)  # the previous row's plan files
    command = [binary, "plan", "--model", spec, "--cluster", cluster, "--devices", str(gpus), "--batch", str(batch),
               "--dtype", "bf16", "--optimizer", "adam", "--top", "5", "--json", report_path, "--emit-plans", emit_dir]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    run = subprocess.run(command, capture_output=True, text=True)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    summary = {"command": " ".join(command[1:]).replace(report_path, "FILE").replace(emit_dir, "DIR"),
               "wall_seconds": round(wall, 1), "user_seconds": round(after.ru_utime - before.ru_utime, 1)}
    if run.returncode != 0:
        lines = run.stderr.strip().splitlines()
        summary["error"] = lines[-1] if lines else f"exit {run.returncode}"
        return summary, None
    with open(report_path) as f:
        report = json.load(f)
    # The planner's own account of the search: the line it prints under its table.
    summary["printed"] = next((line.strip() for line in run.stdout.splitlines() if "plans ranked" in line), "")
    for key in ("search_seconds", "plans_simulated", "memory_walks", "layer_prices"):
        summary[key] = report.get(key)
    summary["plans_ranked"] = len(report["plans"])
    # The head of the ranking, to see what the planner weighed its choice against.
    summary["top"] = [{key: p.get(key) for key in ("rank", "family", "mesh", "micro_batches", "iteration_seconds",
                                                    "peak_memory_bytes", "zero_stage", "feasible")}
                      for p in report["plans"][:5]]
    best = next((p for p in report["plans"] if p["feasible"]), None)
    if best is None:
        summary["error"] = "no ranked plan fits"
        return summary, None
    with open(best["plan_file"]) as f:
        text = f.read()
    summary.update(rank=best["rank"], family=best["family"], iteration_seconds=best["iteration_seconds"],
                   peak_memory_bytes=best["peak_memory_bytes"], bubble_seconds=best["bubble_seconds"],
                   **choices(json.loads(text)))
    return summary, text


def experts_with_planner_gradients(binary, experts_plan, planner, cluster, work):
    """The experts' best plan with the planner's gradient type and overlap: Megatron-LM's fp32 main
    gradients reduced after the backward are a setting, not a split, that any expert could change,
    so this separates what the planner gains by the setting from what it gains by its choices."""
    plan = copy.deepcopy(experts_plan)
    plan["options"]["overlap_gradient_sync"] = planner["overlap_gradient_sync"]
    plan["options"].pop("gradient_dtype", None)
    if planner["gradient_dtype"] != plan["dtype"]:
        plan["options"]["gradient_dtype"] = planner["gradient_dtype"]
    return simulated(binary, plan, cluster, work)


def study_row(binary, index, row, work, plans_dir):
    params, heads, hidden, layers, tp, pp, gpus, batch, published = row
    cluster = f"dgx-a100-80g:nodes={gpus // 8}"
    spec = megatron_plan(heads, hidden, layers, tp, pp, gpus, batch, 1)["model"]  # the experts' model exactly
    flops = paper_flops(batch, layers, hidden)
    candidates, experts, experts_plan = run_experts(binary, row, cluster, work)
    said = f"{experts['iteration_seconds']:.2f} s ({short(experts)})" if experts else "nothing fits"
    log(f"row {index}/{len(ROWS)} {params}B: experts {said}; planning ...")
    planner, planner_text = run_planner(binary, spec, cluster, gpus, batch, work)
    result = {"row": index, "params_billion": params, "layers": layers, "hidden": hidden, "heads": heads,
              "gpus": gpus, "batch": batch, "cluster": cluster, "model": spec,
              "published_tflops_per_gpu": published, "experts": experts, "expert_candidates": candidates,
              "planner": planner}
    experts_text = experts_plan and json.dumps(experts_plan, indent=1)
    for side, plan_text in (("experts", experts_text), ("planner", planner_text)):
        if plan_text:
            with open(os.path.join(plans_dir, f"row{index:02d}-{side}.json"), "w") as f:
                f.write(plan_text)
    if experts:
        experts["tflops_per_gpu"] = flops / (experts["iteration_seconds"] * gpus) / 1e12
    if "iteration_seconds" in planner:
        planner["tflops_per_gpu"] = flops / (planner["iteration_seconds"] * gpus) / 1e12
    if experts and "iteration_seconds" in planner:
        result["ratio"] = planner["iteration_seconds"] / experts["iteration_seconds"]
        result["differences"] = differences(experts, planner)
        same = experts_with_planner_gradients(binary, experts_plan, planner, cluster, work)
        result["experts_with_planner_gradients"] = same
        if same.get("fits"):
            result["ratio_same_gradients"] = planner["iteration_seconds"] / same["iteration_seconds"]
    said = (f"{planner['iteration_seconds']:.2f} s ({short(planner)}), ratio {result['ratio']:.3f}"
            if "ratio" in result else planner.get("error", "no plan"))
    experts_said = f"{experts['iteration_seconds']:.2f} s" if experts else "-"
    log(f"row {index}/{len(ROWS)} {params}B: experts {experts_said}, planner {said}, "
        f"search {planner['wall_seconds']} s wall")
    return result


def geometric_mean_inverse(ratios):
    """Geometric mean of experts' / planner's seconds, from ratios planner / experts."""
    return math.exp(sum(-math.log(x) for x in ratios) / len(ratios)) if ratios else None


def write_outputs(out_dir, results, command):
    ratios = [r["ratio"] for r in results if "ratio" in r]
    same_ratios = [r["ratio_same_gradients"] for r in results if "ratio_same_gradients" in r]
    geomean, same_geomean = geometric_mean_inverse(ratios), geometric_mean_inverse(same_ratios)
    summary = {"rows": len(results), "rows_compared": len(ratios), "geomean_experts_over_planner": geomean,
               "geomean_experts_over_planner_same_gradients": same_geomean,
               "planner_wins": sum(x <= 1.0 for x in ratios), "planner_loses": sum(x > 1.0 for x in ratios)}
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump({"summary": summary, "rows": results}, f, indent=1)
    with open(os.path.join(out_dir, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["row", "params_B", "GPUs", "batch", "experts_plan", "experts_seconds", "experts_peak_GB",
                    "planner_plan", "planner_seconds", "planner_peak_GB", "ratio", "ratio_same_gradients",
                    "plan_wall_seconds", "differences"])
        for r in results:
            e, p = r["experts"] or {}, r["planner"]
            w.writerow([r["row"], r["params_billion"], r["gpus"], r["batch"], short(e) if e else "",
                        f"{e['iteration_seconds']:.4f}" if e else "",
                        f"{e['peak_memory_bytes'] / 1e9:.1f}" if e else "",
                        short(p) if "tp" in p else p.get("error", ""),
                        f"{p['iteration_seconds']:.4f}" if "iteration_seconds" in p else "",
                        f"{p['peak_memory_bytes'] / 1e9:.1f}" if "peak_memory_bytes" in p else "",
                        f"{r['ratio']:.4f}" if "ratio" in r else "",
                        f"{r['ratio_same_gradients']:.4f}" if "ratio_same_gradients" in r else "",
                        p["wall_seconds"], "; ".join(r.get("differences", []))])
    lines = ["# Planner against the experts: SC21 Table 1", "",
             f"Command: `{command}` (Release build at {revision()}). Simulator only; run "
             f"{datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')} on {cpu_model()}, "
             "2 vCPUs shared with other work (search times move with the load).", "",
             "Each row of Narayanan et al., SC21 (arXiv 2104.04473), Table 1 with its GPUs and global batch, bf16, "
             "Adam, on `dgx-a100-80g:nodes=GPUs/8`. **Experts**: the fastest plan that fits in 80 GB of the published "
             "plan (the table's TP x PP x DP, full recomputation, fp32 main gradients reduced after the backward; "
             "micro-batch 1, 2, 4, written as `tools/bench/sc21_table1.py` does) and of the same mesh with "
             "Megatron-LM's later practice (sequence parallelism, selective recomputation, micro-batch 1-4, 1F1B or "
             "interleaved 1F1B with V = 2, 3, 4, 6 chunks per stage where the layers cut evenly and the micro-batches "
             "are a multiple of PP). **Planner**: the best plan that fits of `splitbrain plan --model GPT --cluster "
             "CLUSTER --devices GPUs --batch B --dtype bf16 --optimizer adam`. Both are priced by the same "
             "simulator. Ratio = planner's step / experts' step (<= 1.00: the planner wins). *Same gradients*: the "
             "ratio against the experts' best plan simulated again with the planner's gradient type and overlap (a "
             "setting any expert could change, not a split). mb = samples per micro-batch per data-parallel "
             "replica; rc = recomputation; `plans/` holds both winning plan files.", "",
             "| row | params (B) | GPUs | batch | experts' plan | experts s | planner's plan | planner s | ratio | "
             "ratio, same gradients | search s (wall) | what the planner did differently |",
             "|---:|---:|---:|---:|---|---:|---|---:|---:|---:|---:|---|"]
    for r in results:
        e, p = r["experts"], r["planner"]
        experts_cells = f"{short(e)} | {e['iteration_seconds']:.2f}" if e else "nothing fits | -"
        planner_cells = f"{short(p)} | {p['iteration_seconds']:.2f}" if "iteration_seconds" in p else \
            f"{p.get('error', '-')} | -"
        ratios_cells = (f"{r['ratio']:.3f}" if "ratio" in r else "-") + " | " + \
            (f"{r['ratio_same_gradients']:.3f}" if "ratio_same_gradients" in r else "-")
        what = "; ".join(r.get("differences", ["-"]))
        lines.append(f"| {r['row']} | {r['params_billion']} | {r['gpus']} | {r['batch']} | {experts_cells} | "
                     f"{planner_cells} | {ratios_cells} | {p['wall_seconds']:.1f} | {what} |")
    if geomean:
        lines += ["", f"Geometric mean of experts' / planner's step time: **{geomean:.3f}** over {len(ratios)} rows "
                      f"(> 1: the planner is faster); the planner wins {summary['planner_wins']}, loses "
                      f"{summary['planner_loses']}."]
    if same_geomean:
        lines[-1] += (f" With the experts on the planner's gradient settings: **{same_geomean:.3f}**, the planner "
                      f"wins {sum(x <= 1.0 for x in same_ratios)}, loses {sum(x > 1.0 for x in same_ratios)}.")
    lines += ["", "## Where the planner loses", ""]
    for r in results:
        e, p = r["experts"], r["planner"]
        if r.get("ratio", 0) > 1.0:
            # The pipeline bubble says whether the loss is the schedule (too few micro-batches per
            # stage, no interleaving) rather than the split of the layers.
            lines.append(f"- Row {r['row']} ({r['params_billion']}B): {100 * (r['ratio'] - 1):.1f}% slower than "
                         f"the experts' {short(e)} ({e['practice']} practice). Bubble {p['bubble_seconds']:.1f} s of "
                         f"{p['iteration_seconds']:.1f} ({p['micro_batches']} micro-batches over {p['pp']} stages), "
                         f"the experts' {e['bubble_seconds']:.1f} s of {e['iteration_seconds']:.1f} "
                         f"({e['micro_batches']} over {e['pp']} x {e['virtual_stages']} chunks).")
        elif r.get("ratio_same_gradients", 0) > 1.0:
            lines.append(f"- Row {r['row']} ({r['params_billion']}B): wins only by the gradient settings: the "
                         f"experts' {short(e)} with the planner's gradients takes "
                         f"{r['experts_with_planner_gradients']['iteration_seconds']:.2f} s, "
                         f"{100 * (r['ratio_same_gradients'] - 1):.1f}% faster than the planner's plan.")
    if not any(r.get("ratio", 0) > 1.0 or r.get("ratio_same_gradients", 0) > 1.0 for r in results):
        lines.append("- Nowhere in these rows, under this simulator.")
    lines.append("- Both sides are predictions of one cost model: a plan the simulator misprices in the "
                 "planner's favour wins here and may not on the machine.")
    refused = sorted({(c["family"], c["error"]) for r in results for c in r["expert_candidates"] if "error" in c})
    if refused:
        lines += ["", "Expert candidates the simulator refused:", ""] + [f"- `{f}`: {e}" for f, e in refused]
    failed = [r for r in results if "error" in r["planner"]]
    if failed:
        lines += ["", "Planner searches without a plan that fits:", ""] + \
            [f"- row {r['row']}: {r['planner']['error']}" for r in failed]
    lines += ["", "Search statistics (as `plan` prints them):", ""] + \
        [f"- row {r['row']}: {r['planner'].get('printed') or '-'}; {r['planner']['wall_seconds']} s wall, "
         f"{r['planner']['user_seconds']} s user" for r in results]
    with open(os.path.join(out_dir, "README.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return geomean


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary")
    parser.add_argument("out_dir")
    parser.add_argument("--rows", help="comma-separated rows of Table 1 to run (1-10), e.g. 1,5,8; default all")
    args = parser.parse_args()
    wanted = [int(x) for x in args.rows.split(",")] if args.rows else list(range(1, len(ROWS) + 1))
    if any(not 1 <= i <= len(ROWS) for i in wanted):
        parser.error(f"--rows: rows are 1 to {len(ROWS)}")
    plans_dir = os.path.join(args.out_dir, "plans")
    os.makedirs(plans_dir, exist_ok=True)
    results = []
    with tempfile.TemporaryDirectory() as work:
        for index in wanted:
            results.append(study_row(args.binary, index, ROWS[index - 1], work, plans_dir))
    command = "bash tools/bench/planner-vs-experts.sh" + (f" --rows {args.rows}" if args.rows else "")
    geomean = write_outputs(args.out_dir, results, command)
    log(f"geometric mean experts/planner {geomean:.3f}" if geomean else "no row compared")


if __name__ == "__main__":
    main()
