#!/usr/bin/env bash
# Trains the zoo's fashion-vgg on Fashion-MNIST with a hybrid SplitBrain plan on 2 ranks
# (convs batch-parallel over both ranks, the classifier's features split over them) for 2
# epochs, then measures test accuracy. Writes results/fashion-mnist-training/.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=results/fashion-mnist-training
mkdir -p "$out"
cmake --build build --target splitbrain -j "$(nproc)" > /dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
command=(mpirun -np 2 ./build/tools/splitbrain run --backend cpu --plan plans/examples/fashion-vgg-splitbrain-2.json
         --data fashion-mnist --epochs 2 --lr 0.04 --eval --log-every 50 --report "$out/report.json.tmp")
echo "\$ ${command[*]}" > "$out/console.txt.tmp"
"${command[@]}" 2>&1 | tee -a "$out/console.txt.tmp"
mv "$out/report.json.tmp" "$out/report.json"
mv "$out/console.txt.tmp" "$out/console.txt"
/usr/bin/python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
r = json.load(open(os.path.join(out, "report.json")))
text = f"""# Fashion-MNIST, hybrid plan on 2 ranks

Command: `bash tools/bench/fashion-mnist-training.sh` (plan `plans/examples/fashion-vgg-splitbrain-2.json`:
mesh {{data: 1, model: 2}}, convs split the batch over both ranks, fc1/fc2 split their output
features over them; batch {r['batch']}, SGD momentum 0.9, lr 0.04, 2 epochs, seed 1, one thread per rank).

| | |
|---|---|
| steps | {r['steps']} |
| first / last loss | {r['losses'][0]:.4f} / {r['losses'][-1]:.4f} |
| test accuracy (10,000 images) | {100 * r['test_accuracy']:.2f}% |
| median step | {1e3 * r['iteration_seconds']:.1f} ms |
| bytes sent per step, rank 0 | {r['ranks'][0]['comm_bytes_sent']:,} |

Full log: `console.txt`; measured report: `report.json`.
"""
open(os.path.join(out, "README.md.tmp"), "w").write(text)
os.replace(os.path.join(out, "README.md.tmp"), os.path.join(out, "README.md"))
print(text)
PY
