#!/usr/bin/env bash
# Whether `splitbrain plan` finds a plan that fits for the 1T GPT of SC21 Table 1 (128 layers,
# hidden 25,600, 160 heads, sequence 2,048) on 512 A100 80GB (64 DGX nodes), global batch 3,072,
# in fp32 with SGD and in bf16 with Adam, and whether any candidate is left out for a combination
# a step cannot run. One search each, the ranking and the search's progress lines kept.
# Writes results/planner-1t-512/ (README.md, <job>.txt, <job>.log), made in a temporary folder
# and renamed. Needs a Release build (./build/tools/splitbrain, or SPLITBRAIN=path).
set -euo pipefail
cd "$(dirname "$0")/../.."
binary=${SPLITBRAIN:-./build/tools/splitbrain}
[ -x "$binary" ] || { echo "planner-1t-512: no splitbrain at $binary (build first, or set SPLITBRAIN)" >&2; exit 2; }
out=results/planner-1t-512
tmp=$(mktemp -d "results/.planner-1t-512.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
model=gpt:layers=128,hidden=25600,heads=160,seq=2048,vocab=51200,positions=2048
cpu=$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
{
  echo "# 1T GPT on 512 A100s: a plan that fits"
  echo
  echo "Made by \`bash tools/bench/planner-1t-512.sh\` on $(date -u +%Y-%m-%d), $cpu, $(nproc) cores."
  echo
  echo "| job | best plan that fits | step s | peak memory | left out | search wall s |"
  echo "|---|---|---|---|---|---|"
} > "$tmp/README.md"
for job in "fp32 sgd" "bf16 adam"; do
  set -- $job
  name="$1-$2"
  start=$SECONDS
  "$binary" plan --model "$model" --cluster dgx-a100-80g:nodes=64 --devices 512 --batch 3072 --dtype "$1" \
    --optimizer "$2" --top 5 > "$tmp/$name.txt" 2> "$tmp/$name.log"
  wall=$((SECONDS - start))
  /usr/bin/python3 - "$tmp/$name.txt" "$name" "$wall" >> "$tmp/README.md" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
rows = [l for l in text.splitlines() if re.match(r"^ +\d+\*? ", l)]
fits = [l for l in rows if l.rstrip().endswith("yes")]
left = re.search(r"^(\d+) candidate plans left out", text, re.M)
if not fits:
    print(f"| {sys.argv[2]} | none fits | - | - | {left.group(1) if left else 0} | {float(sys.argv[3]):.0f} |")
else:
    cells = re.split(r"\s{2,}", fits[0].strip())
    print(f"| {sys.argv[2]} | {cells[1]} {cells[2]} | {float(cells[3]) / 1000:.1f} | {cells[5]} | "
          f"{left.group(1) if left else 0} | {float(sys.argv[3]):.0f} |")
PY
done
{
  echo
  echo "Commands: \`splitbrain plan --model $model --cluster dgx-a100-80g:nodes=64 --devices 512 --batch 3072"
  echo "--dtype DTYPE --optimizer OPT --top 5\`; the rankings are in \`<job>.txt\`, the progress lines in \`<job>.log\`."
} >> "$tmp/README.md"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
echo "[planner-1t-512] wrote $out/README.md" >&2
