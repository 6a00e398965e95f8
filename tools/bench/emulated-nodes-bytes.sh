#!/usr/bin/env bash
# Bytes per rank and per level across emulated nodes: every example plan (plans/examples/) runs
# on 2 emulated nodes (tools/emulate-nodes.sh, a 1 Gb/s link) with its ranks split evenly over
# them (2 ranks: 2 x 1; 4: 2 x 2; 8: 2 x 4, oversubscribed on a small machine), and its measured
# bytes per rank, in total and within / across hosts, are compared with `simulate` of the same
# plan on a two-level cluster file of that shape (written here: local-cpu's device and
# shared-memory level, the 1 Gb/s link between nodes); `compare` lines the levels up.
# Writes results/emulated-nodes/: bytes.json, bytes.md, clusters/emulated-2xR.json, and each
# run's report, prediction and comparison under runs/. Besides the examples, the planner's TOP plans of
# vgg11-cifar10 (batch 32) and the tiny GPT (batch 8) for 2 x 1
# and 2 x 2 run the same way.
# Needs root (namespaces). Knobs (environment): ITERS (2), TOP (3).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=results/emulated-nodes
iters=${ITERS:-2} top=${TOP:-3}
python=/usr/bin/python3
sb=./build/tools/splitbrain
[ -x "$sb" ] || { echo "build splitbrain first ($sb)" >&2; exit 2; }
mkdir -p "$out/clusters" "$out/runs"

# A cluster of 2 nodes x R devices: local-cpu's device and node link, the emulated link above.
write_cluster() {  # ranks_per_node file
  "$python" - "$1" "$2" << 'PY'
import json, sys
ranks, path = int(sys.argv[1]), sys.argv[2]
c = json.load(open("sim/clusters/local-cpu.json"))
c["name"] = f"emulated-2x{ranks}"
c["description"] = (f"Two emulated nodes (tools/emulate-nodes.sh) of {ranks} rank(s) on this machine, joined by a "
                    "1 Gb/s token-bucket link (125e6 B/s each way per node). Bytes only: the device and the "
                    "shared-memory node level are copied from local-cpu.json and the link latency is an estimate, "
                    "none of them measured for this machine, so the times this file predicts are not checked "
                    "against anything (two-level calibrate is not written yet); the bytes per level do not "
                    "depend on them.")
c["sources"] = ["tools/emulate-nodes.sh --bandwidth 1gbit: tbf at 1e9 bit/s on each node's egress and on the bridge port towards it",
                "Latency 30 us: an estimate of MPI over TCP between namespaces (tools/link-probe.py: 21-24 us TCP round trip)",
                "Device and node level: copied from local-cpu.json, uncalibrated"]
c["levels"] = [{"name": "node", "fan_out": ranks, "link": {"bandwidth_bytes_per_second": 5e9, "latency_seconds": 1e-6}},
               {"name": "cluster", "fan_out": 2, "link": {"bandwidth_bytes_per_second": 125e6, "latency_seconds": 30e-6}}]
with open(path, "w") as f:
    json.dump(c, f, indent=2)
    f.write("\n")
PY
}

# The planner's top plans for the models the timing checks use, planned for the cluster they run on.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/emulated-nodes.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
plan_files=(plans/examples/*.json)
for per_node in 1 2; do
  write_cluster "$per_node" "$out/clusters/emulated-2x$per_node.json"
  for job in "vgg11-cifar10 32" "gpt:layers=2,hidden=64,heads=4,seq=16,vocab=96,positions=16 8"; do
    read -r model batch <<< "$job"
    short=${model%%:*}
    "$sb" plan --model "$model" --devices $((2 * per_node)) --batch "$batch" \
      --cluster "$out/clusters/emulated-2x$per_node.json" --emit-plans "$tmp/$short-2x$per_node" > /dev/null
    candidates=$(ls "$tmp/$short-2x$per_node"/*.json | sort)
    for plan in $(head -n "$top" <<< "$candidates"); do
      cp "$plan" "$tmp/$short-2x$per_node-$(basename "$plan")"
      plan_files+=("$tmp/$short-2x$per_node-$(basename "$plan")")
    done
  done
done

rows=()
for plan in "${plan_files[@]}"; do
  name=$(basename "$plan" .json)
  read -r ranks data < <("$python" - "$plan" << 'PY'
import json, math, sys
p = json.load(open(sys.argv[1]))
ranks = math.prod(p["mesh"].values())
print(ranks, "tokens" if p["model"].startswith("gpt") else "synthetic")
PY
)
  per_node=$((ranks / 2))
  cluster=$out/clusters/emulated-2x$per_node.json
  write_cluster "$per_node" "$cluster"
  echo "[emulated-nodes] $name: 2 nodes x $per_node ranks" >&2
  "$sb" simulate --plan "$plan" --cluster "$cluster" --json "$out/runs/$name.predicted.json" > /dev/null
  status=0
  tools/emulate-nodes.sh --nodes 2 --ranks-per-node "$per_node" --bandwidth 1gbit -- \
    "$sb" run --backend cpu --plan "$plan" --data "$data" --warmup 0 --iters "$iters" \
    --report "$out/runs/$name.measured.json" > "$out/runs/$name.log" 2>&1 || status=$?
  if [[ $status == 0 ]]; then
    # compare lines the levels up (the prediction's node level = within a host): its rule, not ours.
    "$sb" compare "$out/runs/$name.predicted.json" "$out/runs/$name.measured.json" --out "$tmp/$name-compare" \
      --no-figures > "$out/runs/$name.compare.txt"
    cp "$tmp/$name-compare/comparison.json" "$out/runs/$name.comparison.json"
  fi
  rows+=("$name $per_node $status")
done

"$python" - "$out" "${rows[@]}" << 'PY'
import json, sys
out, rows = sys.argv[1], [r.split() for r in sys.argv[2:]]
results, lines = [], []
lines.append("| plan | nodes x ranks | rank | host | measured bytes/step | predicted | equal "
             "| within host: measured | predicted | across hosts: measured | predicted | equal per level |")
lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
for name, per_node, status in rows:
    predicted = json.load(open(f"{out}/runs/{name}.predicted.json"))
    if status != "0":
        log = open(f"{out}/runs/{name}.log").read().strip().splitlines()
        reason = next((l.split(": ", 2)[-1] for l in log if l.startswith("splitbrain: ")), log[-1] if log else "")
        results.append({"plan": name, "ranks_per_node": int(per_node), "ran": False, "reason": reason})
        lines.append(f"| {name} | 2 x {per_node} | - | - | did not run: {reason} | | | | | | | |")
        continue
    measured = json.load(open(f"{out}/runs/{name}.measured.json"))
    by_level = json.load(open(f"{out}/runs/{name}.comparison.json"))["bytes_per_host_level"]
    if not by_level["mapped"]:
        sys.exit(f"{name}: compare could not line up the levels: {by_level['why_not']}")
    ranks = []
    for m, p, lv in zip(measured["ranks"], predicted["ranks"], by_level["ranks"]):
        equal = m["comm_bytes_sent"] == p["comm_bytes_sent"]
        level_equal = all(v["predicted"] == v["measured"] for v in lv.values())
        host = m.get("placement", {}).get("host", "?")
        ranks.append({"rank": m["rank"], "host": host, "measured_bytes": m["comm_bytes_sent"],
                      "predicted_bytes": p["comm_bytes_sent"], "equal": equal,
                      "predicted_per_level": p["comm_bytes_sent_per_level"],
                      "measured_per_host_level": m["comm_bytes_sent_per_host_level"], "equal_per_level": level_equal})
        w, a = lv["within_host"], lv["across_hosts"]
        lines.append(f"| {name} | 2 x {per_node} | {m['rank']} | {host} | {m['comm_bytes_sent']} | "
                     f"{p['comm_bytes_sent']} | {'yes' if equal else 'NO'} | {int(w['measured'])} | {int(w['predicted'])} | "
                     f"{int(a['measured'])} | {int(a['predicted'])} | {'yes' if level_equal else 'NO'} |")
    levels_by_kind = sorted({(c["kind"], ",".join(c["axes"]), c["level"] or "-") for c in predicted["collectives"]})
    results.append({"plan": name, "ranks_per_node": int(per_node), "ran": True, "ranks": ranks,
                    "collective_levels": [{"kind": k, "axes": a, "level": l} for k, a, l in levels_by_kind]})
json.dump(results, open(f"{out}/bytes.json", "w"), indent=1)
open(f"{out}/bytes.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
