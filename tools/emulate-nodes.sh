#!/usr/bin/env bash
# Emulated nodes: N Linux network namespaces ("nodes") on this machine, joined through a bridge
# by links of a given bandwidth and latency, and an Open MPI job started across them: TCP
# between nodes, shared memory inside a node. It lets the cost model's inter-node level be
# measured on one machine. Everything it makes is removed on exit, also on failure and on
# Ctrl-C. Needs root, `ip`, `tc`, `unshare` and `taskset`; a latency on a kernel without netem
# needs /dev/net/tun and the project's splitbrain-delay-line (built by tools/build.sh).
#
# Usage: tools/emulate-nodes.sh [options] -- COMMAND [ARG...]
#   --nodes N            emulated nodes (default 2)
#   --ranks-per-node R   MPI ranks per node (default 1)
#   --bandwidth RATE     each node's link, in tc's units: 1gbit, 100mbit (default 1gbit)
#   --latency TIME       one-way delay of the link, in tc's units: 0.1ms, 50us (default 0)
#   --delay-line PATH    the splitbrain-delay-line binary, for a latency where the kernel has
#                        no netem (default: build/tools/delay_line/ of this checkout)
#   --cpus split|all     split: node i runs on its own share of the CPUs (as a real node has
#                        its own cores; nodes share CPUs only when there are fewer CPUs than
#                        nodes); all: every node may use every CPU (default split)
#   --mpirun-arg ARG     one more argument for mpirun (repeatable)
#   --no-mpirun          run COMMAND once in node 0's namespace instead of under mpirun; it sees
#                        EMULATE_NODES_NETNS (the nodes' namespaces) and EMULATE_NODES_ADDRESSES
#                        (their addresses), in node order, space-separated
# Example:
#   tools/emulate-nodes.sh --nodes 2 --ranks-per-node 1 --bandwidth 1gbit -- \
#       build/tools/splitbrain run --plan plans/examples/fashion-vgg-data-parallel-2.json \
#       --data synthetic:shape=1x28x28 --iters 4
#
# How it is wired, and why:
#   - Node i is namespace NAME-i with one interface, sbnet0, at 10.213.0.(i+1)/24. The bridge
#     lives in a namespace of its own (NAME-sw), so nothing is added to the host's namespace and
#     the host's firewall and addresses cannot interfere. Deleting the namespaces removes the
#     veths and the bridge with them.
#   - The link: node i's egress on sbnet0 (what it sends) and the bridge port's egress towards
#     node i (what it receives) are each limited to RATE by a token bucket (tbf), as a
#     full-duplex NIC. With --latency, the node side is netem (delay and rate in one qdisc), so
#     a round trip between two nodes is twice the latency.
#   - A latency where the kernel has no netem (tc says "Specified qdisc kind is unknown"): each
#     node's sbnet0 is then a TUN device (MTU 65535, the size of the segments TCP hands a veth
#     with offloads on) with the token bucket on its egress, and no bridge; the delay line, a
#     process in the host's namespace holding every node's TUN, writes each packet into its
#     destination node's device once the delay has passed and that node's port is free
#     (tools/delay_line/). When the job ends it prints how late it delivered.
#   - mpirun itself runs inside node 0 (its HNP listens on 10.213.0.1, where the orteds of the
#     other nodes connect back; a mpirun in the host namespace would not be reachable from
#     them). The hostfile names nodes by address, so Open MPI sees that node 0 is local and
#     launches the others through the rsh agent, which enters the node's namespace with
#     `ip netns exec`. Each node gets its own UTS namespace and host name (node0, node1, ...),
#     so MPI_Get_processor_name and Open MPI's per-host session directories tell nodes apart;
#     the filesystem is shared, so binaries and plans are visible on every node.
#   - Open MPI: `btl tcp,self,vader` with TCP and its out-of-band channel on sbnet0 only (ranks
#     on different nodes talk over the shaped link; ranks of one node use shared memory), and
#     `--bind-to none` because the node's CPU share is set by taskset (Open MPI would otherwise
#     bind every node's first rank to the same core); `mpi_yield_when_idle` where a node's
#     ranks outnumber its CPUs (see below).
set -euo pipefail

usage() { sed -n '9,26p' "$0" | sed 's/^# \{0,1\}//'; }
fail() { echo "emulate-nodes: $*" >&2; exit 2; }

nodes=2
ranks_per_node=1
bandwidth=1gbit
latency=0
delay_line=$(cd "$(dirname "$0")/.." && pwd)/build/tools/delay_line/splitbrain-delay-line
cpus_mode=split
use_mpirun=1
extra_mpirun_args=()
while [ $# -gt 0 ]; do
  case $1 in
    --nodes) nodes=${2:?--nodes needs a value}; shift 2 ;;
    --ranks-per-node) ranks_per_node=${2:?--ranks-per-node needs a value}; shift 2 ;;
    --bandwidth) bandwidth=${2:?--bandwidth needs a value}; shift 2 ;;
    --latency) latency=${2:?--latency needs a value}; shift 2 ;;
    --delay-line) delay_line=${2:?--delay-line needs a value}; shift 2 ;;
    --cpus) cpus_mode=${2:?--cpus needs a value}; shift 2 ;;
    --mpirun-arg) extra_mpirun_args+=("${2:?--mpirun-arg needs a value}"); shift 2 ;;
    --no-mpirun) use_mpirun=0; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    *) usage >&2; fail "unknown option '$1' (the command to run comes after --)" ;;
  esac
done
[ $# -gt 0 ] || { usage >&2; fail "no command given (it comes after --)"; }
[[ $nodes =~ ^[0-9]+$ ]] && [ "$nodes" -ge 1 ] && [ "$nodes" -le 250 ] ||
  fail "--nodes: '$nodes' is not a whole number from 1 to 250"
[[ $ranks_per_node =~ ^[0-9]+$ ]] && [ "$ranks_per_node" -ge 1 ] ||
  fail "--ranks-per-node: '$ranks_per_node' is not a whole number of at least 1"
[[ $bandwidth =~ ^[0-9.]+[kmg]?(bit|bps)$ ]] ||
  fail "--bandwidth: '$bandwidth' is not a tc rate such as 1gbit or 100mbit"
[[ $latency =~ ^[0-9.]+(s|ms|us)?$ ]] || fail "--latency: '$latency' is not a tc time such as 0.1ms or 50us"
[ "$cpus_mode" = split ] || [ "$cpus_mode" = all ] || fail "--cpus: '$cpus_mode' is neither split nor all"

# What the set-up needs, each named when missing.
[ "$(id -u)" -eq 0 ] || fail "must run as root (network namespaces, veths and tc need it)"
for tool in ip tc unshare taskset; do
  command -v "$tool" > /dev/null || fail "'$tool' is not installed (it is needed to build the nodes)"
done
mpirun_binary=
if [ "$use_mpirun" -eq 1 ]; then
  mpirun_binary=$(command -v mpirun) || fail "'mpirun' is not installed (Open MPI is needed to start the ranks)"
fi

# Bits per second of a tc rate (bit = bits, bps = bytes per second), for the token bucket size.
rate_bits_per_second() {
  local value=${1%bit} factor=1
  if [[ $1 == *bps ]]; then value=${1%bps}; factor=8; fi
  case $value in
    *k) value=${value%k}; factor=$((factor * 1000)) ;;
    *m) value=${value%m}; factor=$((factor * 1000000)) ;;
    *g) value=${value%g}; factor=$((factor * 1000000000)) ;;
  esac
  awk -v v="$value" -v f="$factor" 'BEGIN { printf "%.0f", v * f }'
}
bits_per_second=$(rate_bits_per_second "$bandwidth")
[ "$bits_per_second" -gt 0 ] || fail "--bandwidth: '$bandwidth' is zero"
# The bucket holds 1 ms of traffic (at least 16 KiB, a few full frames): large enough that the
# timer granularity does not cut the rate, small enough that a message of more than ~1 ms at the
# link rate is paced by it.
burst_bytes=$(awk -v b="$bits_per_second" 'BEGIN { x = b / 8 / 1000; if (x < 16384) x = 16384; printf "%.0f", x }')
# The latency in microseconds (tc reads a bare number as microseconds too).
latency_microseconds=$(awk -v t="$latency" 'BEGIN {
  v = t + 0; u = substr(t, length(v "") + 1)
  print (u == "s") ? v * 1e6 : (u == "ms") ? v * 1e3 : v }')
latency_is_zero=$(awk -v t="$latency_microseconds" 'BEGIN { print (t + 0 == 0) ? 1 : 0 }')

name=sbn$$
work=$(mktemp -d "${TMPDIR:-/tmp}/emulate-nodes.XXXXXX")
namespaces=()
delay_line_pid=

teardown() {
  local status=$? ns
  trap - EXIT INT TERM
  for ns in "${namespaces[@]}"; do
    # Processes still inside a node (ranks of a failed job) are ours: end them first.
    local pids
    pids=$(ip netns pids "$ns" 2> /dev/null || true)
    [ -z "$pids" ] || kill -TERM $pids 2> /dev/null || true
  done
  if [ -n "$delay_line_pid" ]; then
    kill -TERM "$delay_line_pid" 2> /dev/null || true
    wait "$delay_line_pid" 2> /dev/null || true
    cat "$work/delay-line.err" >&2 2> /dev/null || true
  fi
  for ns in "${namespaces[@]}"; do
    ip netns del "$ns" 2> /dev/null || true
  done
  rm -rf "$work"
  exit "$status"
}
trap teardown EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

add_namespace() {
  ip netns add "$1" || fail "could not create network namespace '$1'"
  namespaces+=("$1")
  ip -n "$1" link set lo up
}

switch_ns=$name-sw
add_namespace "$switch_ns"
ip -n "$switch_ns" link add br0 type bridge
ip -n "$switch_ns" link set br0 up

# Where the kernel cannot delay packets, the delay line does (see the wiring above).
use_delay_line=0
if [ "$latency_is_zero" -eq 0 ] &&
  ! ip netns exec "$switch_ns" tc qdisc add dev lo root netem delay "$latency" 2> /dev/null; then
  use_delay_line=1
  [ -x "$delay_line" ] || fail "--latency $latency: this kernel has no netem and the delay line '$delay_line'" \
    "is not built (run tools/build.sh, or pass --delay-line PATH)"
  [ -c /dev/net/tun ] || fail "--latency $latency: this kernel has no netem and no /dev/net/tun for the delay line"
  # A token bucket drops a packet larger than itself: it holds at least two of the TUN's.
  burst_bytes=$((burst_bytes > 131070 ? burst_bytes : 131070))
fi

# The CPUs this script may run on (a container's cpuset may hide some), one per element.
allowed_cpus=()
for range in $(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status | tr ',' ' '); do
  for ((cpu = ${range%-*}; cpu <= ${range#*-}; cpu++)); do allowed_cpus+=("$cpu"); done
done
[ "${#allowed_cpus[@]}" -gt 0 ] || fail "could not read the allowed CPUs from /proc/self/status"
addresses=()
node_namespaces=()
for ((i = 0; i < nodes; i++)); do
  ns=$name-$i
  address=10.213.$((i / 250)).$((i % 250 + 1))
  add_namespace "$ns"
  addresses+=("$address")
  node_namespaces+=("$ns")
  if [ "$use_delay_line" -eq 1 ]; then
    ip netns exec "$ns" ip tuntap add dev sbnet0 mode tun || fail "could not make a TUN device in '$ns'"
    ip -n "$ns" link set sbnet0 mtu 65535
    ip -n "$ns" addr add "$address/16" dev sbnet0
    ip -n "$ns" link set sbnet0 up
    ip netns exec "$ns" tc qdisc add dev sbnet0 root tbf rate "$bandwidth" burst "$burst_bytes" latency 100ms
    continue
  fi
  ip link add sbnet0 netns "$ns" type veth peer name "port$i" netns "$switch_ns"
  ip -n "$switch_ns" link set "port$i" master br0 up
  ip -n "$ns" addr add "$address/16" dev sbnet0
  ip -n "$ns" link set sbnet0 up
  if [ "$latency_is_zero" -eq 1 ]; then
    ip netns exec "$ns" tc qdisc add dev sbnet0 root tbf rate "$bandwidth" burst "$burst_bytes" latency 100ms
  else
    ip netns exec "$ns" tc qdisc add dev sbnet0 root netem delay "$latency" rate "$bandwidth" limit 100000 \
      2> "$work/netem.err" ||
      fail "--latency $latency needs the netem qdisc, which this kernel lacks (CONFIG_NET_SCH_NETEM:" \
        "$(tr '\n' ' ' < "$work/netem.err")); use --latency 0 to emulate the bandwidth alone"
  fi
  ip netns exec "$switch_ns" tc qdisc add dev "port$i" root tbf rate "$bandwidth" burst "$burst_bytes" latency 100ms
done
if [ "$use_delay_line" -eq 1 ]; then
  delay_line_args=(--delay-microseconds "$latency_microseconds" --bits-per-second "$bits_per_second")
  for ((i = 0; i < nodes; i++)); do delay_line_args+=(--node "${node_namespaces[i]}=${addresses[i]}"); done
  "$delay_line" "${delay_line_args[@]}" > "$work/delay-line.out" 2> "$work/delay-line.err" &
  delay_line_pid=$!
  for ((tries = 0; tries < 1000; tries++)); do
    grep -q ready "$work/delay-line.out" 2> /dev/null && break
    kill -0 "$delay_line_pid" 2> /dev/null || fail "the delay line stopped: $(cat "$work/delay-line.err")"
    sleep 0.01
  done
  grep -q ready "$work/delay-line.out" || fail "the delay line was not ready after 10 s"
fi

# The CPUs node i runs on: its share of the allowed CPUs (--cpus split), or all of them.
node_cpus() {
  local count=${#allowed_cpus[@]} first last
  if [ "$cpus_mode" = all ]; then
    first=0 last=$((count - 1))
  elif [ "$count" -ge "$nodes" ]; then
    first=$(($1 * count / nodes)) last=$((($1 + 1) * count / nodes - 1))
  else
    first=$(($1 % count)) last=$first
  fi
  local list=("${allowed_cpus[@]:first:last-first+1}")
  (IFS=,; echo "${list[*]}")
}

# Enters node $1 (namespace, own host name, its CPUs) and runs the shell command line $2 there.
cat > "$work/enter-node" << EOF
#!/usr/bin/env bash
set -euo pipefail
node=\$1
shift
namespaces=(${node_namespaces[*]})
cpus=($(for ((i = 0; i < nodes; i++)); do printf '%s ' "$(node_cpus "$i")"; done))
exec ip netns exec "\${namespaces[\$node]}" unshare --uts /bin/sh -c \
  'hostname "node\$1" && shift && exec taskset -c "\$@"' sh "\$node" "\${cpus[\$node]}" "\$@"
EOF
# Open MPI's rsh agent: "agent [OPTIONS] HOST COMMAND..." runs the orted command line on the node
# whose address is HOST.
cat > "$work/rsh-agent" << EOF
#!/usr/bin/env bash
set -euo pipefail
while [ \$# -gt 0 ] && [[ \$1 == -* ]]; do shift; done
host=\$1
shift
addresses=(${addresses[*]})
for i in "\${!addresses[@]}"; do
  if [ "\${addresses[\$i]}" = "\$host" ]; then
    exec "$work/enter-node" "\$i" /bin/sh -c "\$*"
  fi
done
echo "emulate-nodes rsh agent: no emulated node has address '\$host'" >&2
exit 2
EOF
chmod +x "$work/enter-node" "$work/rsh-agent"
for address in "${addresses[@]}"; do
  echo "$address slots=$ranks_per_node"
done > "$work/hostfile"

# Open MPI spins while a rank waits unless it knows that a node is oversubscribed, and here it
# cannot know (the hostfile gives a node a slot per rank; taskset, not Open MPI, sets the node's
# CPUs). Where a node's ranks outnumber its CPUs it is told, so a waiting rank yields its core
# instead of spinning through its neighbour's time slice (2 nodes x 2 ranks on one CPU each: the
# tiny GPT's data-parallel all-reduce took 13.9 ms spinning, 6.6 ms yielding).
yield_args=()
for ((i = 0; i < nodes; i++)); do
  node_cpu_list=$(node_cpus "$i")
  node_cpu_count=$(($(tr -cd , <<< "$node_cpu_list" | wc -c) + 1))
  if [ "$ranks_per_node" -gt "$node_cpu_count" ]; then yield_args=(--mca mpi_yield_when_idle 1); fi
done
echo "emulate-nodes: $nodes nodes x $ranks_per_node ranks, link $bandwidth" \
  "(bucket $burst_bytes B), latency $latency$([ "$use_delay_line" -eq 0 ] || echo ' (delay line)');" \
  "namespaces $name-*; CPUs per node:" \
  "$(for ((i = 0; i < nodes; i++)); do printf '%s ' "$(node_cpus "$i")"; done)" \
  "${yield_args[*]:+(oversubscribed: ranks yield their core while they wait)}" >&2

export EMULATE_NODES_NETNS="${node_namespaces[*]}"
export EMULATE_NODES_ADDRESSES="${addresses[*]}"
# The job runs in the background and this shell waits for it, so that a TERM or INT sent to this
# script alone is handled at once (bash runs a trap only after a foreground child ends);
# teardown then ends what is left inside the nodes. Its standard input stays this script's.
# mpirun needs --allow-run-as-root: this script runs as root by necessity.
if [ "$use_mpirun" -eq 1 ]; then
  "$work/enter-node" 0 "$mpirun_binary" --allow-run-as-root -np $((nodes * ranks_per_node)) \
    --hostfile "$work/hostfile" --map-by slot --bind-to none \
    --mca plm_rsh_agent "$work/rsh-agent" --mca plm_rsh_no_tree_spawn 1 \
    --mca btl tcp,self,vader --mca btl_tcp_if_include sbnet0 --mca oob_tcp_if_include sbnet0 \
    "${yield_args[@]}" "${extra_mpirun_args[@]}" "$@" 0<&0 &
else
  "$work/enter-node" 0 "$@" 0<&0 &
fi
job_pid=$!
status=0
if [ -n "$delay_line_pid" ]; then
  # Without its wire the job would wait forever: a delay line that stops first ends it.
  wait -n "$job_pid" "$delay_line_pid" || true
  kill -0 "$job_pid" 2> /dev/null && fail "the delay line stopped during the job (its own output follows)"
fi
wait "$job_pid" || status=$?
exit "$status"
