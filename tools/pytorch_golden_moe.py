#!/usr/bin/env python3
"""Golden numbers for the CPU executor's mixture-of-experts layer, computed by PyTorch.

Builds the zoo's small mixture of experts (MODEL below: tools/pytorch_golden_llama.py's small
Llama, whose attention half, RMSNorm, head and token batches it shares, with each block's MLP half
one sparse layer of 4 SwiGLU experts 32 wide, top 2) in PyTorch with exactly the executor's
initial weights (exec/runtime/parameter_init.cc), runs three SGD steps with momentum, and writes
tests/exec/golden/moe_golden.json in the format of tools/pytorch_golden.py. tests/exec/golden/
golden_test.cc checks the executor against the file (fp32, rtol 1e-4).

The sparse layer is written here from Hugging Face's MixtralSparseMoeBlock, not from splitbrain's
kernel: the router's softmax in fp32, torch.topk of it, the kept weights renormalised to sum to 1,
each expert's silu(x w1^T) * (x w3^T) w2^T on the tokens routed to it, scaled by their weights and
added into their rows (index_add_). Only the parameters' layout is splitbrain's (plans/op_rules/
moe.cc: the router [experts, hidden], then w1 and w3 [experts, ffn, hidden] and w2 [experts,
hidden, ffn]); a layer with more than two parameter tensors names them "<layer>.<k>" in the file.

Only needed to regenerate the committed file (CI never runs it). Needs Debian's python3-torch:

    /usr/bin/python3 tools/pytorch_golden_moe.py [--output FILE]
"""

import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pytorch_golden as common  # noqa: E402  (initialisation, summaries, the SGD run)
import pytorch_golden_gpt as gpt  # noqa: E402  (embedding tables)
import pytorch_golden_llama as llama  # noqa: E402  (attention, RMSNorm, token batches)

EXPERTS = 4
TOP_K = 2
FFN = 32
MODEL = ("moe:layers=2,hidden=64,heads=4,kv_heads=2,ffn=32,seq=16,vocab=96,rope_theta=10000,"
         f"experts={EXPERTS},top_k={TOP_K}")
LAYERS = llama.LAYERS
HIDDEN = llama.HIDDEN

# Topological layer indices (`splitbrain inspect --model MODEL`): tokens 0, tok_embeddings 1, then
# 8 per block from 2, norm 18, output 19, loss 20.
BLOCK_LAYERS = ["attention_norm", "attention.wqkv", "attention.core", "attention.wo", "attention.residual",
                "ffn_norm", "feed_forward.moe", "feed_forward.residual"]


INDEX = llama.layer_indices(BLOCK_LAYERS, LAYERS)


def build_parameters():
    """In the executor's registration order (layer order, then each layer's tensors)."""
    params = {"tok_embeddings.weight": gpt.embedding_table(INDEX["tok_embeddings"], (llama.VOCAB, HIDDEN), llama.SEED)}

    def linear(name, out_features, in_features):
        params[name + ".weight"] = common.initial_parameter(INDEX[name], 0, (out_features, in_features), in_features)

    def norm(name):
        params[name + ".weight"] = torch.ones(HIDDEN)

    def experts(name):
        shapes = [((EXPERTS, HIDDEN), HIDDEN), ((EXPERTS, FFN, HIDDEN), HIDDEN), ((EXPERTS, FFN, HIDDEN), HIDDEN),
                  ((EXPERTS, HIDDEN, FFN), FFN)]
        for k, (shape, fan_in) in enumerate(shapes):
            params[f"{name}.{k}"] = common.initial_parameter(INDEX[name], k, shape, fan_in)

    for block in range(LAYERS):
        h = f"h{block}."
        norm(h + "attention_norm")
        linear(h + "attention.wqkv", (llama.HEADS + 2 * llama.KV_HEADS) * llama.HEAD_DIM, HIDDEN)
        linear(h + "attention.wo", HIDDEN, HIDDEN)
        norm(h + "ffn_norm")
        experts(h + "feed_forward.moe")
    norm("norm")
    linear("output", llama.VOCAB, HIDDEN)
    return {name: value.requires_grad_(True) for name, value in params.items()}


def sparse_moe(x, router, w1, w3, w2):
    """MixtralSparseMoeBlock's forward, written out, on x [N, T, HIDDEN]."""
    rows = x.reshape(-1, HIDDEN)
    probabilities = torch.softmax(F.linear(rows, router), dim=1, dtype=torch.float)
    weights, chosen = torch.topk(probabilities, TOP_K, dim=-1)
    weights = weights / weights.sum(dim=-1, keepdim=True)
    out = torch.zeros_like(rows)
    for e in range(EXPERTS):
        token, slot = torch.where(chosen == e)
        routed = rows[token]
        hidden = F.silu(F.linear(routed, w1[e])) * F.linear(routed, w3[e])
        out = out.index_add(0, token, F.linear(hidden, w2[e]) * weights[token, slot, None])
    return out.view_as(x)


def forward(params, tokens, labels):
    def linear(x, name):
        return F.linear(x, params[name + ".weight"])

    x = params["tok_embeddings.weight"][tokens]
    for block in range(LAYERS):
        h = f"h{block}."
        a = llama.attention(linear(llama.rms_norm(x, params[h + "attention_norm.weight"]), h + "attention.wqkv"))
        x = x + linear(a, h + "attention.wo")
        m = llama.rms_norm(x, params[h + "ffn_norm.weight"])
        x = x + sparse_moe(m, *(params[f"{h}feed_forward.moe.{k}"] for k in range(4)))
    logits = linear(llama.rms_norm(x, params["norm.weight"]), "output")
    return F.cross_entropy(logits.reshape(-1, llama.VOCAB), labels.reshape(-1), reduction="mean")


def main():
    args = common.golden_arguments(__doc__, "moe_golden.json")

    params = build_parameters()
    run = common.sgd_run(params, lambda step: forward(params, *llama.batch(step)), llama.STEPS,
                         llama.LEARNING_RATE, llama.MOMENTUM)
    golden = common.token_model_golden(MODEL, "tools/pytorch_golden_moe.py", llama, INDEX, run)
    common.write_golden(golden, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
