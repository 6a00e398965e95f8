#!/usr/bin/env bash
# How the cost model's reading of the cache bears on fidelity: results/fidelity's measured runs
# re-predicted (fidelity-repredict.sh) with every calibration's cache as calibrate recorded it and
# set to each of CACHES_MIB in turn. The same measurements throughout: only the cache differs.
# Writes results/cache-what-if/ (README.md, results.json; made in a temporary folder and renamed).
# About a minute per cache. FIDELITY=DIR FIDELITY_COMMIT=REV: an earlier fidelity run (as
# fidelity-repredict.sh reads it), named by REV in the README. OUT=DIR writes there instead of
# results/cache-what-if/ (one folder per study; earlier runs live in git history).
set -euo pipefail
cd "$(dirname "$0")/../.."
caches=${CACHES_MIB:-0 4 8 16 32 64}
source_dir=${FIDELITY:-results/fidelity}
out=${OUT:-results/cache-what-if}
python=/usr/bin/python3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cache-what-if.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
OUT=$tmp/calibrated bash tools/bench/fidelity-repredict.sh
for mib in $caches; do
  echo "[cache-what-if] cache $mib MiB" >&2
  CACHE_MIB=$mib OUT=$tmp/cache-$mib bash tools/bench/fidelity-repredict.sh
done
mkdir -p "$tmp/out"
"$python" - "$tmp" "$tmp/out" "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!results' || echo '+changes')" \
  "${FIDELITY_COMMIT:-$(git log -1 --format=%h -- "$source_dir/rounds.txt")}" "$source_dir" $caches <<'PY'
import json, pathlib, sys
tmp, out, commit, source_commit = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3], sys.argv[4]
source, caches = pathlib.Path(sys.argv[5]), sys.argv[6:]
recorded = [json.load(open(p))["device"].get("last_level_cache_bytes", 0) / 2**20
            for p in sorted(source.glob("local-cpu-calibrated-*.json"))]
runs = [("as calibrated (" + ", ".join(f"{c:.1f}" for c in recorded) + " MiB by round)", tmp / "calibrated")]
runs += [(f"{c} MiB", tmp / f"cache-{c}") for c in caches]
rows = []
for label, folder in runs:
    result = json.load(open(folder / "results.json"))
    errors = {p["plan"]: p["repredicted_error"] for p in result["plans"]}
    rows.append({"cache": label, "median_abs_error": result["summary"]["repredicted_median_abs_error"],
                 "worst_abs_error": result["summary"]["repredicted_worst_abs_error"], "errors": errors})
(out / "results.json").write_text(json.dumps(rows, indent=1) + "\n")
plans = list(rows[0]["errors"])
lines = ["# The cache the cost model reads, against results/fidelity's measurements", "",
         f"Made by `bash tools/bench/cache-what-if.sh` at {commit}: the runs of `results/fidelity` as committed at "
         f"{source_commit}, re-predicted by `tools/bench/fidelity-repredict.sh` with every calibration's cache "
         "(`device.last_level_cache_bytes`, which weighs each measured kernel's swept and warm times) as calibrate "
         "recorded it, then set to each size below. Each plan at its round with the median error.", "",
         "| cache | median abs error | worst abs error |", "|---|---:|---:|"]
for r in rows:
    lines.append(f"| {r['cache']} | {r['median_abs_error']:.1%} | {r['worst_abs_error']:.1%} |")
lines += ["", "Per plan (the error of the iteration time; columns as the rows above):", "",
          "| plan | " + " | ".join(r["cache"].split(" (")[0] for r in rows) + " |",
          "|---|" + "---:|" * len(rows)]
for p in plans:
    lines.append(f"| {p} | " + " | ".join(f"{r['errors'].get(p, float('nan')):+.1%}" for r in rows) + " |")
(out / "README.md").write_text("\n".join(lines) + "\n")
PY
rm -rf "$out.new" && cp -r "$tmp/out" "$out.new" && rm -rf "$out" && mv "$out.new" "$out"
echo "[cache-what-if] wrote $out/README.md" >&2
