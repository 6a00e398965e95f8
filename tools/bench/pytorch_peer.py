#!/usr/bin/python3
"""PyTorch peer of `splitbrain run`: CPU for tools/bench/executor-vs-pytorch.sh, CUDA for tools/gpu-checks.sh.

Trains vgg11-cifar10 (the zoo's network: torchvision VGG cfg "A" conv stack on 3x32x32, then
512 -> 4096 -> 4096 -> 10 with ReLU and Dropout(0.5), cross-entropy, SGD momentum 0.9) on random
inputs and labels, and times whole training steps (zero_grad, forward, loss, backward, optimizer).

  pytorch_peer.py --ranks 1 --batch 64 --iters 10 --warmup 2 --threads 1 --out FILE
  pytorch_peer.py --ranks 2 --batch 64 ...      # DistributedDataParallel over gloo, batch per rank
  pytorch_peer.py --device cuda --batch 512 ...  # one GPU, eager fp32 (TF32 off unless --tf32)

On CUDA the thread that drives the GPU runs alone on one CPU after the first step, as in
`splitbrain run`. The step ends with loss.item(), which waits for the GPU, as `splitbrain run`'s step ends
with the loss on the host; the batches are on the GPU before timing starts, as the executor's
synthetic data is uploaded once per step inside its timing (a 64x3x32x32 batch is 0.8 MB).

Writes FILE (JSON): iteration_seconds (median of rank 0's timed steps, as `splitbrain run`
reports), step_seconds of every rank, losses of rank 0, torch version and settings. FILE is
written to FILE.tmp and renamed.
"""

import argparse
import json
import os
import socket
import statistics
import sys
import threading
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn

CFG_A = [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"]


def vgg11_cifar10():
    layers, channels = [], 3
    for v in CFG_A:
        if v == "M":
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
        else:
            layers += [nn.Conv2d(channels, v, kernel_size=3, padding=1), nn.ReLU(inplace=True)]
            channels = v
    return nn.Sequential(
        *layers,
        nn.Flatten(),
        nn.Linear(512, 4096), nn.ReLU(inplace=True), nn.Dropout(0.5),
        nn.Linear(4096, 4096), nn.ReLU(inplace=True), nn.Dropout(0.5),
        nn.Linear(4096, 10),
    )


def train(rank, args, port, result_queue):
    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    if args.ranks > 1:
        if args.pin:
            os.sched_setaffinity(0, {rank % os.cpu_count()})
        os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ["MASTER_PORT"] = str(port)
        dist.init_process_group("gloo", rank=rank, world_size=args.ranks)
    torch.manual_seed(args.seed)  # same initial weights on every rank, as DDP broadcasts anyway
    device = torch.device(args.device)
    if args.device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = args.tf32
        torch.backends.cudnn.allow_tf32 = args.tf32
        torch.backends.cudnn.benchmark = True  # algorithm search once per shape, in the warm-up
    model = vgg11_cifar10().to(device)
    if args.ranks > 1:
        model = nn.parallel.DistributedDataParallel(model)
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    generator = torch.Generator().manual_seed(args.seed + 1 + rank)
    batches = [(torch.randn(args.batch, 3, 32, 32, generator=generator).to(device),
                torch.randint(0, 10, (args.batch,), generator=generator).to(device)) for _ in range(4)]
    steps, losses = [], []
    for step in range(args.warmup + args.iters):
        x, y = batches[step % len(batches)]
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        value = loss.item()
        steps.append(time.perf_counter() - start)
        losses.append(value)
        if step == 0 and args.device == "cuda" and args.pin:
            give_calling_thread_its_own_cpu()
    if args.ranks > 1:
        dist.barrier()
        dist.destroy_process_group()
    result_queue.put((rank, steps[args.warmup:], losses))


def give_calling_thread_its_own_cpu():
    """As `splitbrain run` places the thread that drives its GPU (exec/comm/driver_thread_cpu.h):
    alone on the CPU it runs on, every other thread of the process on the process's other CPUs.
    Threads started later by this one inherit its CPU, so it is called after the first step (the
    autograd engine starts its device thread in the first backward)."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return
    me = threading.get_native_id()
    with open(f"/proc/self/task/{me}/stat") as f:
        current = int(f.read().rsplit(")", 1)[1].split()[36])  # field 39: the CPU it last ran on
    driver = current if current in cpus else cpus[0]
    helpers = set(cpus) - {driver}
    for task in os.listdir("/proc/self/task"):
        if int(task) != me:
            try:
                os.sched_setaffinity(int(task), helpers)
            except ProcessLookupError:  # ended since the listing
                pass
    os.sched_setaffinity(me, {driver})


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ranks", type=int, default=1)
    parser.add_argument("--batch", type=int, default=64, help="samples per rank")
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--tf32", action="store_true", help="cuda: TF32 tensor cores for convolutions and products")
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-pin", dest="pin", action="store_false",
                        help="cpu: do not pin rank r to core r (pinned by default, like mpirun --bind-to core); "
                        "cuda: do not give the thread that drives the GPU a CPU of its own, as `splitbrain run` does")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    if args.device == "cuda" and args.ranks != 1:
        parser.error("--device cuda runs one rank (one GPU)")

    if args.ranks == 1:
        results = []

        class Collect:
            def put(self, item):
                results.append(item)
        train(0, args, 0, Collect())
    else:
        context = mp.get_context("spawn")
        queue = context.SimpleQueue()
        port = free_port()
        processes = [context.Process(target=train, args=(r, args, port, queue)) for r in range(args.ranks)]
        for p in processes:
            p.start()
        results = [queue.get() for _ in processes]
        for p in processes:
            p.join()
            if p.exitcode != 0:
                sys.exit(f"pytorch_peer: a rank exited with code {p.exitcode}")
    results.sort(key=lambda r: r[0])
    document = {
        "format": "pytorch-peer",
        "torch": torch.__version__,
        "mkldnn": torch.backends.mkldnn.is_available(),
        "device": args.device,
        "gpu": torch.cuda.get_device_name(0) if args.device == "cuda" else None,
        "tf32": args.tf32,
        "driver_thread_own_cpu": args.device == "cuda" and args.pin,
        "ranks": args.ranks,
        "batch_per_rank": args.batch,
        "global_batch": args.batch * args.ranks,
        "threads_per_rank": args.threads,
        "warmup_steps": args.warmup,
        "iters": args.iters,
        "iteration_seconds": statistics.median(results[0][1]),
        "step_seconds": {str(rank): steps for rank, steps, _ in results},
        "losses": results[0][2],
    }
    with open(args.out + ".tmp", "w") as f:
        json.dump(document, f, indent=2)
    os.replace(args.out + ".tmp", args.out)
    print(f"[pytorch] {args.ranks} rank(s), batch {args.batch} per rank: "
          f"{document['iteration_seconds'] * 1e3:.1f} ms per step (median of {args.iters})", file=sys.stderr)


if __name__ == "__main__":
    main()
