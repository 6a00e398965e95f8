#!/usr/bin/env python3
"""Golden numbers for the CPU executor's GPT layers, computed by PyTorch.

Builds the zoo's tiny GPT (MODEL below: 2 pre-norm blocks, width 64, 4 heads, 16 positions, a
vocabulary of 96, the output head tied to the token embedding) in PyTorch with exactly the
executor's initial weights (exec/runtime/parameter_init.cc), its dropout masks
(exec/kernels/dropout_mask.h) and its token sequences (exec/data/token_sequences.h), runs three SGD steps
with momentum (torch.optim.SGD), and writes tests/exec/golden/gpt_golden.json in the format of
tools/pytorch_golden.py (whose helpers it shares): the loss of each step and, per parameter, the
initial tensor and its step-1 gradient summarised. The tied table's gradient is the sum of the
embedding's and the output head's, as in PyTorch's GPT-2. tests/exec/golden/golden_test.cc
checks the executor against the file (fp32, rtol 1e-4).

Only needed to regenerate the committed file (CI never runs it). Needs Debian's python3-torch:

    /usr/bin/python3 tools/pytorch_golden_gpt.py [--output FILE]
"""

import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pytorch_golden as common  # noqa: E402  (shared hashing, initialisation, summaries)

MODEL = "gpt:layers=2,hidden=64,heads=4,seq=16,vocab=96,positions=16"
LAYERS = 2
HIDDEN = 64
HEADS = 4
SEQ = 16
VOCAB = 96
POSITIONS = 16
EPSILON = 1e-5
DROPOUT = 0.1
SEED = 1
BATCH = 4
STEPS = 3
LEARNING_RATE = 0.05
MOMENTUM = 0.9
TOKEN_STRIDES = 7

# Topological layer indices (`splitbrain inspect --model MODEL --json -`): tokens 0, wte 1, wpe 2,
# embed 3, embed.dropout 4, then 12 per block from 5, ln_f 29, lm_head 30, loss 31.
BLOCK_LAYERS = ["ln_1", "attn.c_attn", "attn.core", "attn.c_proj", "attn.dropout", "attn.residual",
                "ln_2", "mlp.c_fc", "mlp.gelu", "mlp.c_proj", "mlp.dropout", "mlp.residual"]


def layer_indices():
    index = {"wte": 1, "wpe": 2, "embed.dropout": 4}
    for block in range(LAYERS):
        for k, name in enumerate(BLOCK_LAYERS):
            index[f"h{block}.{name}"] = 5 + 12 * block + k
    index["ln_f"] = 5 + 12 * LAYERS
    index["lm_head"] = 6 + 12 * LAYERS
    return index


INDEX = layer_indices()


# --- Token sequences (exec/data/token_sequences.cc) ----------------------------------------------

def hash_keys(seed, keys):
    """exec/data/seeded_hash.h: h = mix64(seed), then h = mix64(h ^ key) per key."""
    h = common.splitmix64_int(seed)
    for key in keys:
        h = common.splitmix64_int(h ^ key)
    return h


def batch(step):
    """Sample i: start = h mod vocab, stride = 1 + (h >> 32) mod 7, token(t) = (start + t stride)
    mod vocab with h = hash_keys(seed, [step, i]); inputs are tokens 0..SEQ-1, labels 1..SEQ."""
    tokens = np.zeros((BATCH, SEQ + 1), dtype=np.int64)
    for i in range(BATCH):
        h = hash_keys(SEED, [step, i])
        start, stride = h % VOCAB, 1 + (h >> 32) % TOKEN_STRIDES
        tokens[i] = [(start + stride * t) % VOCAB for t in range(SEQ + 1)]
    return torch.from_numpy(tokens[:, :SEQ]), torch.from_numpy(tokens[:, 1:])


# --- Initial parameters (exec/runtime/parameter_init.cc) -----------------------------------------

def embedding_table(layer, shape, seed=SEED):
    """Embeddings are uniform with std 0.02 (GPT-2): (2u - 1) * 0.02 * sqrt(3), u as for linears."""
    key = common.splitmix64_int(common.splitmix64_int(common.splitmix64_int(seed) ^ layer) ^ 0)
    g = np.arange(int(np.prod(shape)), dtype=np.uint64)
    u = (common.splitmix64_array(np.uint64(key) ^ g) >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
    return torch.from_numpy(((2.0 * u - 1.0) * (0.02 * math.sqrt(3.0))).astype(np.float32).reshape(shape))


def build_parameters():
    """In the executor's registration order (layer order, weight before bias)."""
    params = {
        "wte.weight": embedding_table(INDEX["wte"], (VOCAB, HIDDEN)),
        "wpe.weight": embedding_table(INDEX["wpe"], (POSITIONS, HIDDEN)),
    }

    def linear(name, out_features, in_features):
        layer = INDEX[name]
        params[name + ".weight"] = common.initial_parameter(layer, 0, (out_features, in_features), in_features)
        params[name + ".bias"] = common.initial_parameter(layer, 1, (out_features,), in_features)

    def norm(name):
        params[name + ".weight"] = torch.ones(HIDDEN)
        params[name + ".bias"] = torch.zeros(HIDDEN)

    for block in range(LAYERS):
        h = f"h{block}."
        norm(h + "ln_1")
        linear(h + "attn.c_attn", 3 * HIDDEN, HIDDEN)
        linear(h + "attn.c_proj", HIDDEN, HIDDEN)
        norm(h + "ln_2")
        linear(h + "mlp.c_fc", 4 * HIDDEN, HIDDEN)
        linear(h + "mlp.c_proj", HIDDEN, 4 * HIDDEN)
    norm("ln_f")
    return {name: value.requires_grad_(True) for name, value in params.items()}


# --- The net -------------------------------------------------------------------------------------

def dropout(x, step, name):
    return x * common.dropout_scale_mask(step, tuple(x.shape), p=DROPOUT, seed=SEED, layer=INDEX[name])


def attention(qkv):
    """The executor's fused layout: per position [head][q|k|v][head_dim]; causal, 1/sqrt(head_dim)."""
    head_dim = HIDDEN // HEADS
    parts = qkv.view(BATCH, SEQ, HEADS, 3, head_dim).permute(3, 0, 2, 1, 4)  # [3, N, heads, T, hd]
    q, k, v = parts[0], parts[1], parts[2]
    scores = q @ k.transpose(-1, -2) / math.sqrt(head_dim)
    future = torch.triu(torch.ones(SEQ, SEQ, dtype=torch.bool), diagonal=1)
    probabilities = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
    return (probabilities @ v).permute(0, 2, 1, 3).reshape(BATCH, SEQ, HIDDEN)


def forward(params, tokens, labels, step):
    def norm(x, name):
        return F.layer_norm(x, (HIDDEN,), params[name + ".weight"], params[name + ".bias"], eps=EPSILON)

    def linear(x, name):
        return F.linear(x, params[name + ".weight"], params[name + ".bias"])

    x = params["wte.weight"][tokens] + params["wpe.weight"][torch.arange(SEQ)]
    x = dropout(x, step, "embed.dropout")
    for block in range(LAYERS):
        h = f"h{block}."
        a = linear(attention(linear(norm(x, h + "ln_1"), h + "attn.c_attn")), h + "attn.c_proj")
        x = x + dropout(a, step, h + "attn.dropout")
        m = F.gelu(linear(norm(x, h + "ln_2"), h + "mlp.c_fc"), approximate="tanh")
        x = x + dropout(linear(m, h + "mlp.c_proj"), step, h + "mlp.dropout")
    logits = F.linear(norm(x, "ln_f"), params["wte.weight"])  # the head tied to wte, no bias
    return F.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1), reduction="mean")


def main():
    args = common.golden_arguments(__doc__, "gpt_golden.json")

    params = build_parameters()
    run = common.sgd_run(params, lambda step: forward(params, *batch(step), step), STEPS, LEARNING_RATE, MOMENTUM)
    golden = common.token_model_golden(MODEL, "tools/pytorch_golden_gpt.py", sys.modules[__name__], INDEX, run)
    common.write_golden(golden, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
