#!/usr/bin/env python3
"""Predicted against published: Narayanan et al., SC21 (arXiv 2104.04473), Table 1.

Each row's GPT (seq 2048, vocab 51,200) with the table's tensor- (TP) and pipeline-parallel (PP)
sizes, data parallelism over the rest, bf16, Adam, full recomputation, written as a Megatron
plan by hand: TP splits c_attn and c_fc by output features and the c_proj layers by input
features, the embedding table and lm_head by vocabulary; PP cuts evenly between blocks. Each
row runs at micro-batch sizes 1, 2 and 4 (not in the table) on dgx-a100-80g:nodes=GPUs/8, as
shipped. Predicted TFLOP/s per GPU = F / (iteration seconds x GPUs), with the paper's count
F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)).

Usage: sc21_table1.py SPLITBRAIN OUT_DIR. Writes OUT_DIR/results.json, results.csv and
README.md (the caller renames a temporary folder into place).
"""
import csv
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

SEQ, VOCAB = 2048, 51200
# params (B), heads, hidden, layers, TP, PP, GPUs, batch, published TFLOP/s per GPU
ROWS = [
    (1.7, 24, 2304, 24, 1, 1, 32, 512, 137),
    (3.6, 32, 3072, 30, 2, 1, 64, 512, 138),
    (7.5, 32, 4096, 36, 4, 1, 128, 512, 142),
    (18.4, 48, 6144, 40, 8, 1, 256, 1024, 135),
    (39.1, 64, 8192, 48, 8, 2, 512, 1536, 138),
    (76.1, 80, 10240, 60, 8, 4, 1024, 1792, 140),
    (145.6, 96, 12288, 80, 8, 8, 1536, 2304, 148),
    (310.1, 128, 16384, 96, 8, 16, 1920, 2160, 155),
    (529.6, 128, 20480, 105, 8, 35, 2520, 2520, 163),
    (1008.0, 160, 25600, 128, 8, 64, 3072, 3072, 163),
]
MICRO_BATCH_SIZES = (1, 2, 4)


# What the cost model charges for these plans that decides the fit, and what it leaves out (the
# README's closing section; tools/bench/sc21_table1.py is its source).
NOTES = """## What the model charges, and why

Before the fp32 gradient accumulation was priced (below), the same command gave mean absolute
error 7.9%, worst 11.4%: the rows without pipelining 0-7% slow (130.8, 130.1, 131.4, 135.5
TFLOP/s), the pipelined rows 8-11% fast (149.0, 155.9, 164.5, 172.5, 176.4, 180.5), every
pipelined row at micro-batch 1 but the first.

- **fp32 gradient accumulation, once per micro-batch** (`sim::gradient_accumulation_seconds`,
  sim/compute_cost.h). The plans keep Megatron-LM's fp32 main gradients under bf16
  (`"gradient_dtype": "fp32"`). SC21's Megatron-LM accumulated them with a hook on every
  parameter that runs `main_grad.add_(grad)` after each micro-batch's backward
  (megatron/model/distributed.py, local DDP; the wgrad GEMM writing into main_grad itself,
  gradient_accumulation_fusion, came in 2022): a memory-bound pass of 2 + 4 + 4 bytes per local
  parameter. Next to a micro-batch's GEMMs (8 FLOPs per parameter and token with recomputation)
  it costs about 7% at micro-batch 1 (2,048 tokens), 3.5% at 2 and 1.8% at 4. Before it was
  priced, the simulator saw no cost in micro-batch 1 and picked it for every pipelined row
  (its bubble is the smallest), predicting them 8-11% fast; 1T at micro-batch 1 went from 180.5
  to 168.6 TFLOP/s. It applies to every plan with gradients wider than its compute type, and
  to no other (the executor computes in fp32 and refuses such plans, so nothing it runs changes).
- **Gradient all-reduce after the flush.** Megatron-LM (2021) reduced the fp32 gradients after
  the last backward, not during it: the plans say `"overlap_gradient_sync": false`, which the
  executor honours too. Without pipelining it takes 0.5-0.7 s, 7-14% of the step.
- **Pipeline sends** are priced as the step program runs them (non-blocking; the receiver waits
  for the whole local activation, b s h per tensor-parallel rank, over the rank's InfiniBand
  link: 4.2 ms per hand-over on 1T). Little of it is on the critical path: pricing the sends
  8x faster, as SC21's scatter/gather sends 1/t per rank (Section 4.1), moves 1T by +0.5% and
  76B by 0.0%. SC21's Megatron-LM also blocked on every exchange (`req.wait()` and
  `torch.cuda.synchronize()` in p2p_communication.py), about 2 x 0.8 ms per micro-batch with
  scatter/gather, near 1% the other way. Both are left as the executor's program has them.
- **Left out, each under 0.1% of a step here:** the tied embedding's gradient all-reduce between
  the first and last stage, and gradient clipping's norm (one read of the fp32 gradients).
- **Still off: the rows without pipelining are 2-9% slow.** Their gradient all-reduce crosses
  nodes with several group members per node (8 per node at TP 1, 4 at TP 2, 2 at TP 4), where
  NCCL runs one ring per InfiniBand adapter, so the node's traffic shares all of its 8 links;
  the simulator's flat ring is costed at one link per node boundary (as the v100-pcie-10gbe
  preset's shared NIC needs). Costing a ring over every adapter of a node would need the
  cluster file to say how many adapters a node has; not done.
"""


def paper_flops(batch, layers, hidden):
    return 96 * batch * SEQ * layers * hidden**2 * (1 + SEQ / (6 * hidden) + VOCAB / (16 * layers * hidden))


def megatron_plan(heads, hidden, layers, tp, pp, gpus, batch, micro_batch_size):
    dp = gpus // (tp * pp)
    micro_batches = batch // (dp * micro_batch_size)
    mesh = {}
    if pp > 1:
        mesh["pipe"] = pp
    mesh["data"] = dp
    if tp > 1:
        mesh["model"] = tp
    plan = {
        "format": "splitbrain-plan", "version": 1,
        "family": f"megatron tp={tp} pp={pp} dp={dp} mb={micro_batch_size}",
        "model": f"gpt:layers={layers},hidden={hidden},heads={heads},seq={SEQ},vocab={VOCAB},positions={SEQ},attn_dropout=10",
        "batch": batch, "dtype": "bf16", "mesh": mesh,
        "default": {"batch": ["data"]},
        "layers": {},
        "optimizer": {"kind": "adam", "learning_rate": 1.5e-4, "weight_decay": 0.1},
        # Megatron-LM (2021) reduces the gradients after the backward, not during it, and in fp32
        # (its main_grad buffers under bf16).
        "options": {"recompute": True, "zero_stage": 0, "overlap_gradient_sync": False, "gradient_dtype": "fp32"},
    }
    if tp > 1:
        layers_map = plan["layers"]
        layers_map["wte"] = {"batch": ["data"], "in": ["model"]}
        layers_map["lm_head"] = {"batch": ["data"], "out": ["model"]}
        for i in range(layers):
            layers_map[f"h{i}.attn.c_attn"] = {"batch": ["data"], "out": ["model"]}
            layers_map[f"h{i}.attn.c_proj"] = {"batch": ["data"], "in": ["model"]}
            layers_map[f"h{i}.mlp.c_fc"] = {"batch": ["data"], "out": ["model"]}
            layers_map[f"h{i}.mlp.c_proj"] = {"batch": ["data"], "in": ["model"]}
    if pp > 1:
        per_stage = layers // pp
        plan["pipeline"] = {"axis": "pipe", "stage_starts": [f"h{k * per_stage}.ln_1" for k in range(1, pp)],
                            "micro_batches": micro_batches, "schedule": "1f1b"}
    elif micro_batches > 1:
        plan["micro_batches"] = micro_batches
    return plan


def simulate(binary, plan, cluster, work):
    path = os.path.join(work, "plan.json")
    with open(path, "w") as f:
        json.dump(plan, f)
    out = os.path.join(work, "prediction.json")
    run = subprocess.run([binary, "simulate", "--plan", path, "--cluster", cluster, "--json", out],
                         capture_output=True, text=True)
    if run.returncode != 0:
        return None, run.stderr.strip().splitlines()[-1] if run.stderr.strip() else f"exit {run.returncode}"
    with open(out) as f:
        return json.load(f), ""


def main():
    binary, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    results = []
    with tempfile.TemporaryDirectory() as work:
        for params, heads, hidden, layers, tp, pp, gpus, batch, published in ROWS:
            cluster = f"dgx-a100-80g:nodes={gpus // 8}"
            flops = paper_flops(batch, layers, hidden)
            runs = []
            for mbs in MICRO_BATCH_SIZES:
                dp = gpus // (tp * pp)
                if batch % (dp * mbs) != 0:
                    continue
                started = time.monotonic()
                prediction, error = simulate(binary, megatron_plan(heads, hidden, layers, tp, pp, gpus, batch, mbs),
                                             cluster, work)
                seconds = time.monotonic() - started
                if prediction is None:
                    runs.append({"micro_batch_size": mbs, "error": error})
                    continue
                iteration = prediction["iteration_seconds"]
                peak = max(r["peak_memory_bytes"] for r in prediction["ranks"])
                runs.append({"micro_batch_size": mbs, "iteration_seconds": iteration,
                             "tflops_per_gpu": flops / (iteration * gpus) / 1e12, "peak_memory_bytes": peak,
                             "fits_80GB": peak <= 85899345920, "simulate_seconds": round(seconds, 2),
                             "phases_seconds": prediction["phases"]})
                print(f"[sc21] {params}B mb={mbs}: {runs[-1]['tflops_per_gpu']:.1f} TFLOP/s per GPU "
                      f"(published {published}), peak {peak / 1e9:.1f} GB", file=sys.stderr, flush=True)
            ok = [r for r in runs if "tflops_per_gpu" in r and r["fits_80GB"]]
            best = max(ok, key=lambda r: r["tflops_per_gpu"]) if ok else None
            row = {"params_billion": params, "heads": heads, "hidden": hidden, "layers": layers, "tp": tp, "pp": pp,
                   "gpus": gpus, "batch": batch, "published_tflops_per_gpu": published, "runs": runs}
            if best:
                row["best_micro_batch_size"] = best["micro_batch_size"]
                row["predicted_tflops_per_gpu"] = best["tflops_per_gpu"]
                row["error"] = best["tflops_per_gpu"] / published - 1
                spread = [r["tflops_per_gpu"] for r in ok]
                row["spread_tflops_per_gpu"] = [min(spread), max(spread)]
            results.append(row)
    errors = [abs(r["error"]) for r in results if "error" in r]
    summary = {"rows": len(results), "rows_predicted": len(errors),
               "mean_abs_error": statistics.mean(errors) if errors else None,
               "worst_abs_error": max(errors) if errors else None}
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump({"summary": summary, "rows": results}, f, indent=1)
    with open(os.path.join(out_dir, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["params_B", "TP", "PP", "GPUs", "batch", "published_TFLOPs", "predicted_TFLOPs",
                    "best_micro_batch", "error", "spread_low", "spread_high"])
        for r in results:
            w.writerow([r["params_billion"], r["tp"], r["pp"], r["gpus"], r["batch"], r["published_tflops_per_gpu"],
                        f"{r.get('predicted_tflops_per_gpu', float('nan')):.1f}", r.get("best_micro_batch_size", ""),
                        f"{r.get('error', float('nan')):+.3f}",
                        *(f"{x:.1f}" for x in r.get("spread_tflops_per_gpu", [float("nan")] * 2))])
    lines = ["# SC21 Table 1: predicted against published TFLOP/s per GPU", "",
             "Command: `bash tools/bench/sc21-table1.sh`. Simulator only (no GPU is used); "
             f"run {time.strftime('%Y-%m-%dT%H:%M:%S%z')} on {platform.machine()}.", "",
             "Narayanan et al., SC21 (arXiv 2104.04473), Table 1: GPT, seq 2048, vocab 51,200, bf16, Adam, full "
             "recomputation, the table's TP and PP with data parallelism over the rest, Megatron plans written by "
             "hand (tools/bench/sc21_table1.py), on `dgx-a100-80g:nodes=GPUs/8` as shipped. Micro-batch size 1, 2 "
             "and 4 each; the table's row takes the fastest that fits in 80 GB. TFLOP/s = F / (iteration x GPUs), "
             "F = 96 B s l h^2 (1 + s/6h + V/16lh).", "",
             "| params (B) | TP | PP | GPUs | batch | published | predicted | micro-batch | error | spread (mb 1/2/4) |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['params_billion']} | {r['tp']} | {r['pp']} | {r['gpus']} | {r['batch']} | "
                         f"{r['published_tflops_per_gpu']} | {r['predicted_tflops_per_gpu']:.1f} | "
                         f"{r['best_micro_batch_size']} | {100 * r['error']:+.1f}% | "
                         f"{r['spread_tflops_per_gpu'][0]:.1f}-{r['spread_tflops_per_gpu'][1]:.1f} |")
        else:
            why = "; ".join(run.get("error", "over 80 GB") for run in r["runs"]) or "no micro-batch size divides"
            lines.append(f"| {r['params_billion']} | {r['tp']} | {r['pp']} | {r['gpus']} | {r['batch']} | "
                         f"{r['published_tflops_per_gpu']} | - | - | - | {why} |")
    if errors:
        lines += ["", f"Mean absolute error {100 * summary['mean_abs_error']:.1f}%, worst "
                      f"{100 * summary['worst_abs_error']:.1f}% over {len(errors)} of {len(results)} rows "
                      "(the issue's target: mean <= 5%, worst <= 12%)."]
    lines += ["", "Where the predicted step goes (the best micro-batch size's critical stage, seconds; "
              "backward includes the recomputed forward and the fp32 gradient accumulation):", "",
              "| params (B) | iteration | forward | backward | communication exposed | pipeline bubble | optimizer |",
              "|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        if "error" not in r:
            continue
        best = next(run for run in r["runs"] if run.get("micro_batch_size") == r["best_micro_batch_size"])
        ph = best["phases_seconds"]
        lines.append(f"| {r['params_billion']} | {best['iteration_seconds']:.2f} | {ph['compute_forward']:.2f} | "
                     f"{ph['compute_backward']:.2f} | {ph['comm_exposed']:.2f} | {ph['bubble']:.2f} | "
                     f"{ph['optimizer']:.3f} |")
    lines += ["", NOTES]
    with open(os.path.join(out_dir, "README.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
