#!/usr/bin/env python3
"""Golden numbers for the CPU executor's Llama layers, computed by PyTorch.

Builds the zoo's small Llama (MODEL below: 2 pre-norm blocks, width 64, 4 query heads sharing 2
key/value heads, rotary positions with base 10000, a SwiGLU MLP 96 wide, RMSNorm, an untied
output head, 16 tokens, a vocabulary of 96) in PyTorch with exactly the executor's initial
weights (exec/runtime/parameter_init.cc) and token sequences (exec/data/token_sequences.h), runs
three SGD steps with momentum (torch.optim.SGD), and writes tests/exec/golden/llama_golden.json in
the format of tools/pytorch_golden.py (whose helpers it shares, with the token batches of
tools/pytorch_golden_gpt.py): the loss of each step and, per parameter, the initial tensor and its
step-1 gradient summarised. tests/exec/golden/golden_test.cc checks the executor against the file
(fp32, rtol 1e-4).

The block is written here from the published definitions, not from splitbrain's kernels: Hugging
Face's LlamaRMSNorm, its rotate-half rotary embedding and repeat_kv for the shared key/value heads,
and torch.nn.functional.silu for the gate. Only the fused q|k|v layout is splitbrain's
(model/op.h: per key/value group its query heads, then its k, then its v).

Only needed to regenerate the committed file (CI never runs it). Needs Debian's python3-torch:

    /usr/bin/python3 tools/pytorch_golden_llama.py [--output FILE]
"""

import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pytorch_golden as common  # noqa: E402  (shared hashing, initialisation, summaries)
import pytorch_golden_gpt as gpt  # noqa: E402  (token sequences, embedding tables)

MODEL = "llama:layers=2,hidden=64,heads=4,kv_heads=2,ffn=96,seq=16,vocab=96,rope_theta=10000"
LAYERS = 2
HIDDEN = 64
HEADS = 4
KV_HEADS = 2
HEAD_DIM = HIDDEN // HEADS
FFN = 96
SEQ = 16
VOCAB = 96
ROPE_THETA = 10000.0
EPSILON = 1e-5
SEED = 1
BATCH = 4
STEPS = 3
LEARNING_RATE = 0.05
MOMENTUM = 0.9

# Topological layer indices (`splitbrain inspect --model MODEL --json -`): tokens 0,
# tok_embeddings 1, then 11 per block from 2, norm 24, output 25, loss 26.
BLOCK_LAYERS = ["attention_norm", "attention.wqkv", "attention.core", "attention.wo", "attention.residual",
                "ffn_norm", "feed_forward.w1", "feed_forward.w3", "feed_forward.swiglu", "feed_forward.w2",
                "feed_forward.residual"]


def layer_indices(block_layers=BLOCK_LAYERS, layers=LAYERS):
    """The zoo's layer index of each named layer of a decoder of `layers` blocks of `block_layers`."""
    index = {"tok_embeddings": 1}
    for block in range(layers):
        for k, name in enumerate(block_layers):
            index[f"h{block}.{name}"] = 2 + len(block_layers) * block + k
    index["norm"] = 2 + len(block_layers) * layers
    index["output"] = 3 + len(block_layers) * layers
    return index


INDEX = layer_indices()


def batch(step):
    """tools/pytorch_golden_gpt.py's token sequences at this model's sizes."""
    tokens = np.zeros((BATCH, SEQ + 1), dtype=np.int64)
    for i in range(BATCH):
        h = gpt.hash_keys(SEED, [step, i])
        start, stride = h % VOCAB, 1 + (h >> 32) % gpt.TOKEN_STRIDES
        tokens[i] = [(start + stride * t) % VOCAB for t in range(SEQ + 1)]
    return torch.from_numpy(tokens[:, :SEQ]), torch.from_numpy(tokens[:, 1:])


def build_parameters():
    """In the executor's registration order (layer order); every projection is bias-free."""
    params = {"tok_embeddings.weight": gpt.embedding_table(INDEX["tok_embeddings"], (VOCAB, HIDDEN), SEED)}

    def linear(name, out_features, in_features):
        params[name + ".weight"] = common.initial_parameter(INDEX[name], 0, (out_features, in_features), in_features)

    def norm(name):
        params[name + ".weight"] = torch.ones(HIDDEN)

    for block in range(LAYERS):
        h = f"h{block}."
        norm(h + "attention_norm")
        linear(h + "attention.wqkv", (HEADS + 2 * KV_HEADS) * HEAD_DIM, HIDDEN)
        linear(h + "attention.wo", HIDDEN, HIDDEN)
        norm(h + "ffn_norm")
        linear(h + "feed_forward.w1", FFN, HIDDEN)
        linear(h + "feed_forward.w3", FFN, HIDDEN)
        linear(h + "feed_forward.w2", HIDDEN, FFN)
    norm("norm")
    linear("output", VOCAB, HIDDEN)
    return {name: value.requires_grad_(True) for name, value in params.items()}


# --- The net (Hugging Face's modeling_llama.py, written out) ------------------------------------

def rms_norm(x, weight):
    """LlamaRMSNorm: x / sqrt(mean(x^2) + eps) * weight."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPSILON) * weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rotary(x):
    """LlamaRotaryEmbedding: x cos + rotate_half(x) sin, angle t theta^(-2i/head_dim) for the pair
    (i, i + head_dim/2); x is [N, heads, T, head_dim]."""
    inverse_frequency = 1.0 / (ROPE_THETA ** (torch.arange(0, HEAD_DIM, 2, dtype=torch.float64) / HEAD_DIM))
    angles = torch.outer(torch.arange(SEQ, dtype=torch.float64), inverse_frequency)
    angles = torch.cat((angles, angles), dim=-1)
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    return x * cos + rotate_half(x) * sin


def attention(qkv):
    """Grouped-query causal attention on splitbrain's fused layout: per position, per key/value
    group, its HEADS / KV_HEADS query heads, then its k, then its v."""
    group = HEADS // KV_HEADS
    parts = qkv.view(BATCH, SEQ, KV_HEADS, group + 2, HEAD_DIM)
    q = parts[:, :, :, :group].reshape(BATCH, SEQ, HEADS, HEAD_DIM).transpose(1, 2)  # head = g * group + j
    k = parts[:, :, :, group].transpose(1, 2)  # [N, KV_HEADS, T, hd]
    v = parts[:, :, :, group + 1].transpose(1, 2)
    q, k = rotary(q), rotary(k)
    k = k.repeat_interleave(group, dim=1)  # repeat_kv: query head h reads group h // group
    v = v.repeat_interleave(group, dim=1)
    scores = q @ k.transpose(-1, -2) / math.sqrt(HEAD_DIM)
    future = torch.triu(torch.ones(SEQ, SEQ, dtype=torch.bool), diagonal=1)
    probabilities = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
    return (probabilities @ v).transpose(1, 2).reshape(BATCH, SEQ, HIDDEN)


def forward(params, tokens, labels):
    def linear(x, name):
        return F.linear(x, params[name + ".weight"])

    x = params["tok_embeddings.weight"][tokens]
    for block in range(LAYERS):
        h = f"h{block}."
        a = attention(linear(rms_norm(x, params[h + "attention_norm.weight"]), h + "attention.wqkv"))
        x = x + linear(a, h + "attention.wo")
        m = rms_norm(x, params[h + "ffn_norm.weight"])
        m = F.silu(linear(m, h + "feed_forward.w1")) * linear(m, h + "feed_forward.w3")
        x = x + linear(m, h + "feed_forward.w2")
    logits = linear(rms_norm(x, params["norm.weight"]), "output")
    return F.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1), reduction="mean")


def main():
    args = common.golden_arguments(__doc__, "llama_golden.json")

    params = build_parameters()
    run = common.sgd_run(params, lambda step: forward(params, *batch(step)), STEPS, LEARNING_RATE, MOMENTUM)
    golden = common.token_model_golden(MODEL, "tools/pytorch_golden_llama.py", sys.modules[__name__], INDEX, run)
    common.write_golden(golden, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
