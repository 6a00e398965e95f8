#!/usr/bin/env python3
"""PyTorch's grouped-query attention with rotary positions, as the reference of splitbrain's
self_attention kernels.

Reads a fused input laid out as model/op.h documents it ([N, T, (heads + 2 kv_heads) head_dim],
per position for each key/value group its query heads, then k, then v), rotates q and k by
position the way Hugging Face's Llama does (rotate_half, cos/sin of t * theta^(-2i/head_dim)
repeated over both halves), shares each group's k and v with its heads by repeat_interleave,
and runs causal softmax attention with matmul and softmax (torch 1.13 has no
scaled_dot_product_attention). The gradient of sum(y * dy) with respect to the fused input comes
from autograd. Everything in float64 from fp32 inputs; writes
tests/exec/golden/gqa_rope_attention_pytorch.json: the shape, the inputs (exact fp32 values), y
and dx. tests/exec/grouped_attention_test.cc checks its float64 reference and the CPU kernel
against this file.

Only needed to regenerate the committed file (CI never runs it). Needs Debian's python3-torch:

    /usr/bin/python3 tools/pytorch_attention_reference.py [--output FILE]
"""

import argparse
import json
import math
import os

import torch

SHAPE = {"batch": 2, "seq": 5, "heads": 4, "kv_heads": 2, "head_dim": 6, "causal": True, "rope_theta": 10000.0}


def inputs(shape):
    """Deterministic fp32 x and dy, without a random generator to keep in step."""
    n, t, h, k, d = (shape[key] for key in ("batch", "seq", "heads", "kv_heads", "head_dim"))
    x = [1.5 * math.sin(0.37 * i + 0.1) for i in range(n * t * (h + 2 * k) * d)]
    dy = [math.cos(0.53 * i) for i in range(n * t * h * d)]
    # Rounded to fp32, then widened: the kernel sees exactly these values.
    return [torch.tensor(v, dtype=torch.float32).to(torch.float64) for v in (x, dy)]


def rotate_half(x):
    """Hugging Face's Llama: the second half negated, then the first."""
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def attention(x, shape):
    n, t, h, k, d = (shape[key] for key in ("batch", "seq", "heads", "kv_heads", "head_dim"))
    group = h // k
    fused = x.view(n, t, k, group + 2, d)
    q = fused[:, :, :, :group, :].reshape(n, t, h, d).transpose(1, 2)  # [N, heads, T, d]
    key = fused[:, :, :, group, :].transpose(1, 2)  # [N, kv_heads, T, d]
    value = fused[:, :, :, group + 1, :].transpose(1, 2)
    if shape["rope_theta"] > 0:
        inv_freq = 1.0 / (shape["rope_theta"] ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
        freqs = torch.outer(torch.arange(t, dtype=torch.float64), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos(), emb.sin()
        q = q * cos + rotate_half(q) * sin
        key = key * cos + rotate_half(key) * sin
    key = key.repeat_interleave(group, dim=1)
    value = value.repeat_interleave(group, dim=1)
    scores = torch.matmul(q, key.transpose(-1, -2)) / math.sqrt(d)
    if shape["causal"]:
        future = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        scores = scores.masked_fill(future, float("-inf"))
    probs = torch.softmax(scores, dim=-1)
    return torch.matmul(probs, value).transpose(1, 2).reshape(n, t, h * d)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output",
                        default=os.path.join(root, "tests", "exec", "golden", "gqa_rope_attention_pytorch.json"))
    args = parser.parse_args()

    x, dy = inputs(SHAPE)
    x.requires_grad_(True)
    y = attention(x, SHAPE)
    (y.reshape(-1) * dy).sum().backward()

    out = {
        "description": "grouped-query causal attention with Hugging Face Llama's rotary positions, float64 from "
                       "fp32 inputs (tools/pytorch_attention_reference.py, torch " + torch.__version__ + ")",
        "shape": SHAPE,
        "x": x.detach().tolist(),
        "dy": dy.tolist(),
        "y": y.detach().reshape(-1).tolist(),
        "dx": x.grad.tolist(),
    }
    with open(args.output, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
