#!/usr/bin/env bash
# How reading a model file scales with its size: chains of 160,000 and 1,600,000 layers (a
# 60 MB file at the larger size) read by `splitbrain inspect` (its per-layer table thrown
# away), three times each; linear reading takes about 10x the time for 10x the layers. Writes results/model-parse-scaling/
# (README.md, results.json; made in a temporary folder and renamed). About a minute.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=results/model-parse-scaling
python=/usr/bin/python3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/model-parse-scaling.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
work=$tmp/model-parse-scaling
mkdir -p "$work"
echo "[model-parse] building splitbrain" >&2
cmake --build build --target splitbrain -j "$(nproc)" > /dev/null
sizes=(160000 1600000)
for layers in "${sizes[@]}"; do
  "$python" - "$layers" "$tmp/model-$layers.json" <<'PY'
import json, sys
layers = int(sys.argv[1])
doc = {"format": "splitbrain-model", "version": 1, "name": "chain",
       "layers": [{"name": "data", "op": "input", "shape": [8]}] + [{"name": f"relu{i}", "op": "relu"} for i in range(layers)]}
with open(sys.argv[2], "w") as f:
    json.dump(doc, f)
PY
done
for round in 1 2 3; do
  for layers in "${sizes[@]}"; do
    echo "[model-parse] round $round: $layers layers" >&2
    /usr/bin/time -f "%e %M" -o "$tmp/time-$layers-$round" ./build/tools/splitbrain inspect --model "$tmp/model-$layers.json" \
      > /dev/null
  done
done
"$python" - "$tmp" "$work" "$(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p' | head -n 1)" "${sizes[@]}" <<'PY'
import datetime, json, os, pathlib, statistics, sys
tmp, work, machine = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]
sizes = [int(s) for s in sys.argv[4:]]
rows = []
for layers in sizes:
    runs = [tuple(float(x) for x in (tmp / f"time-{layers}-{r}").read_text().split()) for r in (1, 2, 3)]
    rows.append({"layers": layers, "file_bytes": os.path.getsize(tmp / f"model-{layers}.json"),
                 "median_seconds": statistics.median(r[0] for r in runs), "seconds_by_round": [r[0] for r in runs],
                 "peak_rss_kib": max(int(r[1]) for r in runs)})
ratio = rows[-1]["median_seconds"] / rows[0]["median_seconds"]
date = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
doc = {"command": "bash tools/bench/model-parse-scaling.sh", "machine": machine, "date": date, "rows": rows,
       "time_ratio": ratio, "layer_ratio": sizes[-1] / sizes[0]}
(work / "results.json").write_text(json.dumps(doc, indent=2) + "\n")
lines = ["# Reading a model file: time against size", "",
         f"Command: `bash tools/bench/model-parse-scaling.sh`. Machine: {machine}; run {date}.",
         "`splitbrain inspect --model FILE` on chains of ReLU layers (read, validated, shapes and costs worked out, "
         "the per-layer table printed to /dev/null); median of 3 runs.", "",
         "| layers | file MB | median s | peak RSS MB |", "|---:|---:|---:|---:|"]
for r in rows:
    lines.append(f"| {r['layers']:,} | {r['file_bytes'] / 1e6:.1f} | {r['median_seconds']:.2f} | {r['peak_rss_kib'] / 1024:.0f} |")
lines += ["", f"{sizes[-1] // sizes[0]}x the layers took {ratio:.1f}x the time."]
(work / "README.md").write_text("\n".join(lines) + "\n")
PY
rm -rf "$out.new" && mkdir -p "$(dirname "$out")" && cp -r "$work" "$out.new"
rm -rf "$out" && mv "$out.new" "$out"
cat "$out/README.md"
