#!/usr/bin/env bash
# `splitbrain run` under mpirun with 2 ranks records who placed each rank and on which CPUs:
#   mpirun --bind-to none            -> by "splitbrain", disjoint CPU lists that cover the node
#   mpirun --bind-to none, --no-bind -> by "none", every rank on every CPU
#   mpirun --bind-to core            -> by "launcher", one CPU each, disjoint
#   taskset -c 0 mpirun --bind-to none, --threads 2 -> by "launcher" (the mask is not every CPU),
#                                       both on CPU 0: the sharing and the --threads warnings
# "--bind-to none" stands for a launcher that does not bind: Open MPI 4 itself binds jobs of up
# to 2 ranks to cores unless told otherwise.
# Usage: placement.sh SPLITBRAIN_BINARY SOURCE_DIR MPIEXEC. Exit 77 (skipped) on a 1-CPU machine.
set -euo pipefail
binary=$1 source=$2 mpiexec=$3
cpus=$(nproc)
[ "$cpus" -ge 2 ] || { echo "skipped: 2 ranks need 2 CPUs for CPUs of their own, this machine has $cpus"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
plan=$source/plans/examples/fashion-vgg-splitbrain-2.json
run() {  # name, launcher prefix and mpirun flags..., then -- splitbrain run flags...
  local name=$1
  shift
  local launch=()
  while [ "$1" != "--" ]; do launch+=("$1"); shift; done
  shift
  "${launch[@]}" "$binary" run --backend cpu --plan "$plan" --data synthetic:shape=1x28x28 --warmup 1 --iters 1 \
    --report "$work/$name.json" "$@" > "$work/$name.log" 2> "$work/$name.err" \
    || { cat "$work/$name.log" "$work/$name.err"; echo "$name: run failed"; exit 1; }
}
run splitbrain "$mpiexec" -np 2 --bind-to none --
run none "$mpiexec" -np 2 --bind-to none -- --no-bind
run launcher "$mpiexec" -np 2 --bind-to core --
run shared taskset -c 0 "$mpiexec" -np 2 --bind-to none -- --threads 2

/usr/bin/python3 - "$work" "$cpus" <<'PY'
import json, sys
work, cpus = sys.argv[1], int(sys.argv[2])
every_cpu = list(range(cpus))  # nproc: the CPUs this test may use, here all online ones
def placements(name):
    ranks = json.load(open(f"{work}/{name}.json"))["ranks"]
    assert len(ranks) == 2, ranks
    for r in ranks:
        assert set(r["placement"]) == {"host", "cpus", "by"}, r["placement"]
        assert r["placement"]["host"], r["placement"]
    return [r["placement"] for r in ranks]
def check(condition, name, what):
    if not condition:
        sys.exit(f"{name}: {what}: {json.dumps(placements(name))}")

p = placements("splitbrain")
check(all(q["by"] == "splitbrain" for q in p), "splitbrain", "by is not splitbrain")
check(not set(p[0]["cpus"]) & set(p[1]["cpus"]), "splitbrain", "CPU lists overlap")
check(sorted(p[0]["cpus"] + p[1]["cpus"]) == every_cpu, "splitbrain", f"CPU lists do not cover {every_cpu}")
check(abs(len(p[0]["cpus"]) - len(p[1]["cpus"])) <= 1, "splitbrain", "uneven split")

p = placements("none")
check(all(q["by"] == "none" and q["cpus"] == every_cpu for q in p), "none", "not left on every CPU")

p = placements("launcher")
check(all(q["by"] == "launcher" and len(q["cpus"]) == 1 for q in p), "launcher", "not one CPU each by the launcher")
check(p[0]["cpus"] != p[1]["cpus"], "launcher", "both on one CPU")

p = placements("shared")
check(all(q["by"] == "launcher" and q["cpus"] == [0] for q in p), "shared", "not both on CPU 0 by the launcher")
print("placement in the report: ok")
PY
expect() {  # file, pattern
  grep -q -- "$2" "$work/$1" || { cat "$work/$1"; echo "$1: no line matching '$2'"; exit 1; }
}
refuse() {  # file, pattern
  ! grep -q -- "$2" "$work/$1" || { cat "$work/$1"; echo "$1: unexpected line matching '$2'"; exit 1; }
}
expect splitbrain.log '^\[run\] placement: rank 0 cpus [0-9,-]*, rank 1 cpus [0-9,-]* (pinned by splitbrain)$'
expect none.log '^\[run\] placement: .* (not bound)$'
expect launcher.log '^\[run\] placement: .* (bound by the launcher)$'
expect shared.err 'warning: the launcher bound ranks 0 (cpus 0) and 1 (cpus 0) on .* to common CPUs'
expect shared.err 'warning: --threads 2 but rank 0 has 1 CPU (0)'
# Warnings come once (from rank 0), and only where something is wrong.
[ "$(grep -c 'common CPUs' "$work/shared.err")" -eq 1 ] || { cat "$work/shared.err"; echo "sharing warned more than once"; exit 1; }
for name in splitbrain none launcher; do refuse "$name.err" 'warning'; done
"$binary" run --help | grep -q -- '--no-bind.*Leave ranks unbound' || { echo "run --help does not explain --no-bind"; exit 1; }
"$binary" calibrate --help | grep -q -- '--no-bind' || { echo "calibrate --help has no --no-bind"; exit 1; }
echo "rank placement: ok"
