#!/usr/bin/env bash
# The emulated link itself (tools/emulate-nodes.sh + tools/link-probe.py): the TCP round trip of
# a 1-byte message and the rate of a 64 MiB transfer between two emulated nodes over a 1 Gb/s
# link, with no latency (veths through a bridge), and with a one-way delay of 1 us, 0.1 ms and
# 0.5 ms (netem where the kernel has it, else splitbrain-delay-line, whose lateness is kept).
# Each set-up is probed ROUNDS times (3), one fresh pair of nodes each; the table gives the median
# and the range. Writes results/emulated-link/README.md and probe-LATENCY-ROUND.{json,log}. Needs root.
# Usage: bash tools/bench/emulated-link.sh   (after bash tools/build.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "emulated-link: needs root (network namespaces)" >&2; exit 2; }
out=results/emulated-link
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rounds=${ROUNDS:-3}
for ((round = 1; round <= rounds; round++)); do
  for latency in 0 1us 0.1ms 0.5ms; do
    echo "[emulated-link] round $round of $rounds: latency $latency" >&2
    tools/emulate-nodes.sh --nodes 2 --bandwidth 1gbit --latency "$latency" --no-mpirun -- \
      /usr/bin/python3 tools/link-probe.py $((64 << 20)) > "$work/probe-$latency-$round.json" \
      2> "$work/probe-$latency-$round.log"
  done
done
/usr/bin/python3 - "$work" "$rounds" << 'PY'
import json, pathlib, re, statistics, sys
work, rounds = pathlib.Path(sys.argv[1]), int(sys.argv[2])
lines = ["# The emulated link: round trip and rate between two emulated nodes", "",
         f"Command (as root): `bash tools/bench/emulated-link.sh` (ROUNDS={rounds}); a 1 Gb/s link; per round, "
         "a fresh pair of nodes, the median of 200 round trips of 1 byte and one 64 MiB transfer. The delay "
         "line's lateness is each round's median past the due time (one-way).", "",
         "| one-way latency | carried by | TCP round trip, us: median (range) | rate, Gb/s: median | "
         "delay line: median lateness per round, us |",
         "|---|---|---|---|---|"]
for latency in ["0", "1us", "0.1ms", "0.5ms"]:
    probes = [json.loads((work / f"probe-{latency}-{r}.json").read_text()) for r in range(1, rounds + 1)]
    logs = [(work / f"probe-{latency}-{r}.log").read_text() for r in range(1, rounds + 1)]
    late = [m.group(1) for log in logs for m in [re.search(r"late by median ([0-9.]+) us", log)] if m]
    carrier = "veth, bridge" if latency == "0" else ("delay line" if "(delay line)" in logs[0] else "netem")
    rtts = [p["rtt_seconds"] * 1e6 for p in probes]
    rate = statistics.median(p["bits_per_second"] for p in probes) / 1e9
    lines.append(f"| {latency} | {carrier} | {statistics.median(rtts):.0f} ({min(rtts):.0f}-{max(rtts):.0f}) | "
                 f"{rate:.3f} | {', '.join(late) if late else '-'} |")
(work / "README.md").write_text("\n".join(lines) + "\n")
PY
machine="$(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p' | head -n 1), kernel $(uname -r)"
printf '\nMachine: %s; load average %s at the end.\n' "$machine" "$(cut -d' ' -f1-3 /proc/loadavg)" >> "$work/README.md"
rm -rf "$out.new" && mkdir -p "$out.new" && cp "$work"/* "$out.new"/
rm -rf "$out" && mv "$out.new" "$out"
echo "[emulated-link] wrote $out/README.md" >&2
