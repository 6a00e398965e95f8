#!/usr/bin/env bash
# tools/emulate-nodes.sh end to end: two emulated nodes joined by a 100 Mb/s link. The link
# really is that slow (a bulk TCP transfer between the nodes stays under the limit; unshaped,
# veths run at several Gb/s) and, given a latency, that late; a 2-rank `splitbrain run` spans
# both nodes (each rank reports its node's host name) and sends the bytes the simulator
# predicts; a failing command's status comes back; no namespace is left behind by any of them;
# `calibrate` across the nodes measures the link as the level between them.
# Exits 77 (ctest: skipped) with the reason where namespaces cannot be made here.
# Usage: emulate_nodes_test.sh SPLITBRAIN_BINARY SOURCE_DIR
set -euo pipefail
binary=$1 source=$2
emulate=$source/tools/emulate-nodes.sh

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "not root: network namespaces, veths and tc need root"
for tool in ip tc unshare taskset mpirun python3; do
  command -v "$tool" > /dev/null || skip "'$tool' is not installed"
done
# The kernel or a container may refuse namespaces, veths or the token bucket even to root.
probe=sbn-probe$$
trap 'ip netns del "$probe" 2> /dev/null || true' EXIT
ip netns add "$probe" 2> /dev/null || skip "this system refuses to create a network namespace"
ip -n "$probe" link add sbprobe0 type veth peer name sbprobe1 2> /dev/null || skip "this kernel has no veth"
ip netns exec "$probe" tc qdisc add dev sbprobe0 root tbf rate 1gbit burst 16k latency 10ms 2> /dev/null \
  || skip "this kernel has no tbf qdisc (CONFIG_NET_SCH_TBF)"
ip netns del "$probe"
unshare --uts true 2> /dev/null || skip "this system refuses a UTS namespace (each node's own host name)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

# The namespaces a run of emulate-nodes.sh made (its log names their prefix) must all be gone.
check_torn_down() {
  local prefix
  prefix=$(sed -n 's/.*namespaces \(sbn[0-9]*\)-\*.*/\1/p' "$1" | head -1)
  [ -n "$prefix" ] || { fail "$1 does not name the namespaces"; cat "$1"; return; }
  if ip netns list | grep -q "^$prefix-"; then
    fail "namespaces left behind: $(ip netns list | grep "^$prefix-" | tr '\n' ' ')"
  fi
}

# 1. The link: 16 MiB from node 0 to node 1 through a 100 Mb/s link takes at least 1.3 s.
if timeout 300 "$emulate" --nodes 2 --bandwidth 100mbit --no-mpirun -- \
     python3 "$source/tools/link-probe.py" $((16 << 20)) > "$work/probe.json" 2> "$work/probe.log"; then
  python3 - "$work/probe.json" << 'PY' || failures=$((failures + 1))
import json, sys
link = json.load(open(sys.argv[1]))
print(f"link: {link['bits_per_second'] / 1e6:.1f} Mb/s, round trip {link['rtt_seconds'] * 1e6:.0f} us")
# 5% above the limit for the token bucket's initial burst and timer rounding.
if not 0 < link["bits_per_second"] <= 1.05 * 100e6:
    sys.exit(f"FAIL the link is not limited to 100 Mb/s: {link}")
PY
else
  fail "the link probe"; cat "$work/probe.log"
fi
check_torn_down "$work/probe.log"

# 1b. A latency: the round trip grows by twice the one-way delay (netem where the kernel has it,
# else the delay line, which tells how late it delivered).
if timeout 300 "$emulate" --nodes 2 --bandwidth 1gbit --latency 0.5ms --no-mpirun -- \
     python3 "$source/tools/link-probe.py" $((1 << 20)) > "$work/delayed.json" 2> "$work/delayed.log"; then
  python3 - "$work/delayed.json" << 'PY' || failures=$((failures + 1))
import json, sys
link = json.load(open(sys.argv[1]))
print(f"link with 0.5 ms latency: round trip {link['rtt_seconds'] * 1e6:.0f} us median, "
      f"{link['rtt_fastest_seconds'] * 1e6:.0f} us fastest")
# At least the two delays; the fastest at most that plus 0.5 ms of stack, TUN hops and
# scheduling (the median also holds a busy host's lateness; a delay applied twice is 2 ms).
if not 1.0e-3 <= link["rtt_fastest_seconds"] <= 1.5e-3:
    sys.exit(f"FAIL a 0.5 ms link's round trip is not about 1 ms: {link}")
PY
  grep "delay line" "$work/delayed.log" || true
else
  fail "the link probe with a latency"; cat "$work/delayed.log"
fi
check_torn_down "$work/delayed.log"

# 2. A 2-rank run across the two nodes, bytes against the simulator's.
plan=$source/plans/examples/fashion-vgg-data-parallel-2.json
if timeout 500 "$emulate" --nodes 2 --ranks-per-node 1 --bandwidth 1gbit -- \
     "$binary" run --backend cpu --plan "$plan" --data synthetic:shape=1x28x28 --warmup 1 --iters 2 \
     --report "$work/measured.json" > "$work/run.log" 2>&1; then
  "$binary" simulate --plan "$plan" --json "$work/predicted.json" > /dev/null
  python3 - "$work/measured.json" "$work/predicted.json" << 'PY' || failures=$((failures + 1))
import json, sys
measured, predicted = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
hosts = [r["placement"]["host"] for r in measured["ranks"]]
if hosts != ["node0", "node1"]:
    sys.exit(f"FAIL the ranks did not run one per emulated node: hosts {hosts}")
for m, p in zip(measured["ranks"], predicted["ranks"]):
    if m["comm_bytes_sent"] != p["comm_bytes_sent"]:
        sys.exit(f"FAIL rank {m['rank']} sent {m['comm_bytes_sent']} bytes per step, predicted {p['comm_bytes_sent']}")
print(f"run across 2 nodes: hosts {hosts}, bytes per step equal the prediction")
PY
else
  fail "splitbrain run across 2 emulated nodes"; cat "$work/run.log"
fi
check_torn_down "$work/run.log"

# 3. calibrate across the two nodes writes a two-level cluster file whose level between the
# hosts is the 1 Gb/s link as measured (a node of one rank has nothing to measure inside).
if timeout 500 "$emulate" --nodes 2 --ranks-per-node 1 --bandwidth 1gbit -- \
     "$binary" calibrate --repeats 2 --out "$work/two-level.json" > "$work/calibrate.log" 2>&1; then
  python3 - "$work/two-level.json" << 'PY' || failures=$((failures + 1))
import json, sys
cluster = json.load(open(sys.argv[1]))
levels = [(level["name"], level["fan_out"]) for level in cluster["levels"]]
if levels != [("node", 1), ("cluster", 2)]:
    sys.exit(f"FAIL levels {levels}, expected a node of 1 rank and a cluster of 2 nodes")
between = cluster["levels"][1]["link"]
# An all-reduce's bus bandwidth through a 1 Gb/s (125 MB/s) link, less MPI's and TCP's overheads.
if not 0.3 * 125e6 < between["bandwidth_bytes_per_second"] <= 1.1 * 125e6:
    sys.exit(f"FAIL the measured link between the nodes is not about 1 Gb/s: {between}")
print(f"calibrate across 2 nodes: between them {between['bandwidth_bytes_per_second'] / 1e6:.1f} MB/s, "
      f"{between['latency_seconds'] * 1e6:.1f} us")
PY
else
  fail "splitbrain calibrate across 2 emulated nodes"; cat "$work/calibrate.log"
fi
check_torn_down "$work/calibrate.log"

# 4. A failing command: its status comes back and the nodes are removed all the same.
status=0
timeout 300 "$emulate" --nodes 2 -- /bin/false > "$work/false.log" 2>&1 || status=$?
[ "$status" -ne 0 ] && [ "$status" -ne 124 ] || { fail "a failing command returned $status"; cat "$work/false.log"; }
check_torn_down "$work/false.log"

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "emulated nodes: ok"
