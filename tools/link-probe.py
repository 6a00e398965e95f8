#!/usr/bin/env python3
"""Measures the link between emulated nodes 0 and 1: TCP round-trip time of a 1-byte message and
the bandwidth of one bulk transfer. Run it inside tools/emulate-nodes.sh --no-mpirun (it reads
EMULATE_NODES_NETNS and EMULATE_NODES_ADDRESSES); it starts its peer in node 1's namespace with
`ip netns exec` and is itself the client in node 0. Prints one JSON line:
{"rtt_seconds": median round trip, "rtt_fastest_seconds": the fastest, "bits_per_second": bulk rate, "bytes": bulk size}.
Usage: link-probe.py [BULK_BYTES]  (default 8 MiB)"""

import json
import os
import socket
import statistics
import subprocess
import sys
import time

PORT = 47113
ROUND_TRIPS = 200


def serve():
    """Node 1's side: echo each 1-byte ping, then read the bulk transfer and answer one byte."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("0.0.0.0", PORT))
    listener.listen(1)
    print("ready", flush=True)
    connection, _ = listener.accept()
    connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    for _ in range(ROUND_TRIPS):
        connection.sendall(connection.recv(1))
    expected = int.from_bytes(read_exactly(connection, 8), "little")
    received = 0
    while received < expected:
        chunk = connection.recv(1 << 20)
        if not chunk:
            raise SystemExit("link-probe server: the client closed early")
        received += len(chunk)
    connection.sendall(b"k")


def read_exactly(connection, count):
    data = b""
    while len(data) < count:
        chunk = connection.recv(count - len(data))
        if not chunk:
            raise SystemExit("link-probe: the peer closed early")
        data += chunk
    return data


def probe(bulk_bytes):
    namespaces = os.environ.get("EMULATE_NODES_NETNS", "").split()
    addresses = os.environ.get("EMULATE_NODES_ADDRESSES", "").split()
    if len(namespaces) < 2 or len(addresses) < 2:
        raise SystemExit("link-probe: run it inside tools/emulate-nodes.sh --no-mpirun with 2 nodes or more")
    server = subprocess.Popen(["ip", "netns", "exec", namespaces[1], sys.executable, __file__, "--serve"],
                              stdout=subprocess.PIPE, text=True)
    try:
        if server.stdout.readline().strip() != "ready":
            raise SystemExit("link-probe: the server in node 1 did not start")
        connection = socket.create_connection((addresses[1], PORT), timeout=60)
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        round_trips = []
        for _ in range(ROUND_TRIPS):
            start = time.perf_counter()
            connection.sendall(b"p")
            read_exactly(connection, 1)
            round_trips.append(time.perf_counter() - start)
        payload = bytes(1 << 20)
        start = time.perf_counter()
        connection.sendall(bulk_bytes.to_bytes(8, "little"))
        sent = 0
        while sent < bulk_bytes:
            piece = payload[: min(len(payload), bulk_bytes - sent)]
            connection.sendall(piece)
            sent += len(piece)
        read_exactly(connection, 1)
        seconds = time.perf_counter() - start
        print(json.dumps({"rtt_seconds": statistics.median(round_trips), "rtt_fastest_seconds": min(round_trips),
                          "bits_per_second": bulk_bytes * 8 / seconds, "bytes": bulk_bytes}))
    finally:
        server.wait(timeout=60)


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:
        probe(int(sys.argv[1]) if len(sys.argv) > 1 else 8 << 20)
