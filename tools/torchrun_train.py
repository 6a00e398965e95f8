#!/usr/bin/env python3
"""Data-parallel training of a GPT-2-style decoder with PyTorch DDP, started by torchrun.

`splitbrain plan ... --export torchrun` (and `splitbrain export --format torchrun`) copy this file
next to a launch.sh that runs it with the plan's model shape, batch, optimizer and options:

    python3 -m torch.distributed.run --nproc_per_node 2 torchrun_train.py --layers 2 --hidden 64 ...

The network is the zoo's `gpt:` model (model/zoo/gpt.cc; the same layers as
tools/pytorch_golden_gpt.py): learned token and position embeddings, dropout, pre-norm blocks of
causal attention (a fused q|k|v projection laid out per head) and a 4x GELU MLP, a final layer
norm and an output head tied to the token embedding. The samples are synthetic arithmetic token
sequences (start and stride drawn per sample, as the executor's token data), so the loss falls
within a few steps. Gloo on CPU, NCCL on GPUs. Rank 0 prints each step's loss averaged over ranks;
the run fails if a loss is not finite, and with --require-decrease if the mean loss of the last
third of the steps is not below that of the first third.
"""

import argparse
import contextlib
import math
import os
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint


def arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("layers", "hidden", "heads", "ffn-hidden", "seq", "vocab", "positions",
                 "batch-per-replica", "micro-batches", "steps"):
        parser.add_argument("--" + name, type=int, required=name != "steps", default=10)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--attention-dropout", type=float, default=0.0)
    parser.add_argument("--untied", action="store_true", help="an output head of its own")
    parser.add_argument("--no-bias", action="store_true", help="linears without biases")
    parser.add_argument("--dtype", choices=("fp32", "bf16"), default="fp32")
    parser.add_argument("--optimizer", choices=("sgd", "adam"), default="sgd")
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--beta1", type=float, default=0.9)
    parser.add_argument("--beta2", type=float, default=0.999)
    parser.add_argument("--eps", type=float, default=1e-8)
    parser.add_argument("--weight-decay", type=float, default=0.0)
    parser.add_argument("--recompute", action="store_true", help="keep only the blocks' input; recompute in backward")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--require-decrease", action="store_true",
                        help="fail unless the mean loss of the last third of the steps is below that of the first third")
    return parser.parse_args()


class Block(nn.Module):
    def __init__(self, a):
        super().__init__()
        bias = not a.no_bias
        self.heads = a.heads
        self.attention_dropout = a.attention_dropout
        self.ln_1 = nn.LayerNorm(a.hidden)
        self.c_attn = nn.Linear(a.hidden, 3 * a.hidden, bias=bias)
        self.attn_proj = nn.Linear(a.hidden, a.hidden, bias=bias)
        self.ln_2 = nn.LayerNorm(a.hidden)
        self.c_fc = nn.Linear(a.hidden, a.ffn_hidden, bias=bias)
        self.mlp_proj = nn.Linear(a.ffn_hidden, a.hidden, bias=bias)
        self.dropout = nn.Dropout(a.dropout)

    def attention(self, x):
        n, t, width = x.shape
        head_dim = width // self.heads
        # Per position [head][q|k|v][head_dim], as the executor lays out the fused projection.
        q, k, v = self.c_attn(x).view(n, t, self.heads, 3, head_dim).permute(3, 0, 2, 1, 4)
        scores = q @ k.transpose(-1, -2) / math.sqrt(head_dim)
        future = torch.triu(torch.ones(t, t, dtype=torch.bool, device=x.device), diagonal=1)
        probabilities = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
        probabilities = F.dropout(probabilities, self.attention_dropout, self.training)
        return (probabilities @ v).permute(0, 2, 1, 3).reshape(n, t, width)

    def forward(self, x):
        x = x + self.dropout(self.attn_proj(self.attention(self.ln_1(x))))
        return x + self.dropout(self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)))))


class Gpt(nn.Module):
    def __init__(self, a):
        super().__init__()
        self.recompute = a.recompute
        self.wte = nn.Embedding(a.vocab, a.hidden)
        self.wpe = nn.Embedding(a.positions, a.hidden)
        self.dropout = nn.Dropout(a.dropout)
        self.blocks = nn.ModuleList(Block(a) for _ in range(a.layers))
        self.ln_f = nn.LayerNorm(a.hidden)
        self.head = nn.Linear(a.hidden, a.vocab, bias=False) if a.untied else None
        for table in (self.wte, self.wpe):
            nn.init.normal_(table.weight, std=0.02)

    def run_blocks(self, x):
        for block in self.blocks:
            x = block(x)
        return x

    def forward(self, tokens, labels):
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.dropout(self.wte(tokens) + self.wpe(positions))
        x = checkpoint(self.run_blocks, x, use_reentrant=False) if self.recompute else self.run_blocks(x)
        x = self.ln_f(x)
        logits = self.head(x) if self.head is not None else x @ self.wte.weight.t()
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), labels.reshape(-1))


def token_batch(a, step, micro_batch, rank, world, device):
    """This rank's samples of one micro-batch: sample j of the step's global batch starts at a
    random token and steps by a random stride (1..7), both drawn from (seed, step, j)."""
    per_step = a.batch_per_replica * a.micro_batches * world
    generator = torch.Generator().manual_seed(a.seed * 1_000_003 + step)
    starts = torch.randint(0, a.vocab, (per_step,), generator=generator)
    strides = torch.randint(1, 8, (per_step,), generator=generator)
    first = (micro_batch * world + rank) * a.batch_per_replica
    mine = slice(first, first + a.batch_per_replica)
    tokens = (starts[mine, None] + strides[mine, None] * torch.arange(a.seq + 1)) % a.vocab
    return tokens[:, :-1].to(device), tokens[:, 1:].to(device)


def main():
    a = arguments()
    use_cuda = torch.cuda.is_available()
    dist.init_process_group("nccl" if use_cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0))) if use_cuda else torch.device("cpu")
    torch.manual_seed(a.seed)  # the same initial weights on every rank
    model = nn.parallel.DistributedDataParallel(Gpt(a).to(device))
    if a.optimizer == "adam":
        optimizer = torch.optim.Adam(model.parameters(), lr=a.lr, betas=(a.beta1, a.beta2), eps=a.eps,
                                     weight_decay=a.weight_decay)
    else:
        optimizer = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=a.momentum, weight_decay=a.weight_decay)
    losses = []
    for step in range(a.steps):
        optimizer.zero_grad()
        step_loss = torch.zeros((), device=device)
        for m in range(a.micro_batches):
            tokens, labels = token_batch(a, step, m, rank, world, device)
            # Gradients accumulate locally until the last micro-batch, whose backward all-reduces.
            sync = contextlib.nullcontext() if m == a.micro_batches - 1 else model.no_sync()
            with sync:
                with torch.autocast(device.type, dtype=torch.bfloat16, enabled=a.dtype == "bf16"):
                    loss = model(tokens, labels) / a.micro_batches
                loss.backward()
            step_loss += loss.detach()
        optimizer.step()
        dist.all_reduce(step_loss)
        losses.append(step_loss.item() / world)
        if rank == 0:
            print(f"step {step + 1} loss {losses[-1]:.6f}", flush=True)
    dist.destroy_process_group()
    if not all(math.isfinite(x) for x in losses):
        sys.exit(f"torchrun_train.py: a loss is not finite: {losses}")
    third = max(1, len(losses) // 3)  # means over a third of the steps: dropout makes each step's loss noisy
    first, last = sum(losses[:third]) / third, sum(losses[-third:]) / third
    if a.require_decrease and not last < first:
        sys.exit(f"torchrun_train.py: the loss did not fall: mean of the first {third} steps {first:.6f}, "
                 f"of the last {third} {last:.6f}")
    if rank == 0:
        print(f"mean loss of the first {third} steps {first:.6f}, of the last {third} {last:.6f}", flush=True)


if __name__ == "__main__":
    main()
