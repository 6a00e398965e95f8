#!/usr/bin/env python3
"""Exports the ONNX models the importer's tests read (tests/model/onnx/).

Writes into OUTPUT_DIR, with torch.onnx.export at opset 17, nothing downloaded:
  resnet18.onnx  torchvision's ResNet-18 (weights=None: random weights, the zoo's `resnet18`),
                 with a symbolic batch size (dynamic_axes)
  vgg11.onnx     torchvision's VGG-11 (the zoo's `vgg11`)
  gpt.onnx       the tiny GPT of tools/pytorch_golden_gpt.py as a torch.nn.Module (the zoo's
                 MODEL there: 2 pre-norm blocks, width 64, 4 heads, 16 tokens, vocabulary 96,
                 the output head tied to the token embedding)
  nanogpt.onnx   the same GPT written as nanoGPT writes it (q, k, v split off the fused
                 projection, exact GELU): the same zoo model
  gpt-separate-qkv.onnx  the same GPT with q, k and v by three linear layers
  gpt-folded.onnx  gpt.onnx exported with constant folding (torch's default): the head reads a
                 transposed copy of the token table, the positions a folded [T, D] table
  unsupported.onnx  a linear layer then torch.sin (ONNX Sin, node '/Sin'), which the importer
                 refuses by name
  llama.onnx     the small Llama of tools/pytorch_golden_llama.py (the zoo's MODEL there: 2 blocks,
                 width 64, 4 query heads over 2 key/value heads, rotary base 10000, SwiGLU 96 wide,
                 RMSNorm, untied head) written as Hugging Face's LlamaForCausalLM writes it:
                 LlamaRMSNorm (pow, mean, rsqrt), q/k/v/o projections, rotate-half rotary
                 embedding from cos and sin buffers, repeat_kv by expand, silu(gate) * up
  llama-rope-in-graph.onnx  the same Llama with the cos and sin tables computed in the forward
                 pass (the tracer stores them as Constant nodes, read as the buffers are)
  llama-rope-500k.onnx  the same Llama 256 wide, 2 query heads 128 wide over 1 key/value head,
                 rotary base 500000: Llama 3's base and head width

The nets are exported in training mode, the graph a training step runs: batchnorm keeps its
batch statistics and dropout stays in the graph (eval mode would fold batchnorm into the
convolutions and drop dropout, and the importer would see another net). Constant folding is
off for all but gpt-folded.onnx, which checks the importer copes with it.

Needs Debian's python3-torch, python3-torchvision and python3-onnx:

    /usr/bin/python3 tools/export_onnx_models.py OUTPUT_DIR

Exit code 77 (ctest's skip) when one of them is missing.
"""

import math
import os
import sys

SKIP = 77

try:
    import torch
    import torch.nn.functional as F
    import torchvision
    import onnx  # noqa: F401  (torch.onnx.export needs it to check the graph)
except ImportError as missing:
    print(f"skipping: {missing} (install python3-torch, python3-torchvision, python3-onnx)")
    sys.exit(SKIP)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pytorch_golden_gpt as golden  # noqa: E402  (the tiny GPT's sizes and attention layout)
import pytorch_golden_llama as small_llama  # noqa: E402  (the small Llama's sizes)

OPSET = 17
IMAGE_BATCH = 2


def heads_attention(q, k, v):
    """nanoGPT's attention on q, k, v of [N, T, D]: per-head views, the causal mask made in the graph."""
    batch, tokens, hidden = q.shape
    head_dim = hidden // golden.HEADS
    q, k, v = (t.view(batch, tokens, golden.HEADS, head_dim).transpose(1, 2) for t in (q, k, v))
    scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(head_dim))
    mask = torch.tril(torch.ones(tokens, tokens)).view(1, 1, tokens, tokens)
    probabilities = F.softmax(scores.masked_fill(mask == 0, float("-inf")), dim=-1)
    return (probabilities @ v).transpose(1, 2).contiguous().view(batch, tokens, hidden)


def split_attention(qkv):
    """nanoGPT's way: q, k, v split off the fused projection."""
    return heads_attention(*qkv.split(qkv.shape[-1] // 3, dim=2))


class SeparateProjections(torch.nn.Module):
    """q, k and v by three linear layers (the parameters of one fused projection)."""

    def __init__(self, hidden):
        super().__init__()
        self.q = torch.nn.Linear(hidden, hidden)
        self.k = torch.nn.Linear(hidden, hidden)
        self.v = torch.nn.Linear(hidden, hidden)

    def forward(self, x):
        return heads_attention(self.q(x), self.k(x), self.v(x))


class TinyGpt(torch.nn.Module):
    """The zoo's GPT at the golden test's sizes: learned token and position embeddings, pre-norm
    blocks (q, k, v projections, causal attention, 4x GELU MLP), final norm, tied head.
    style "golden" writes attention and GELU as tools/pytorch_golden_gpt.py does (one fused
    projection viewed per head as q|k|v, tanh GELU); "nanogpt" as nanoGPT does (q, k, v split off
    the fused projection, exact GELU, Erf in ONNX); "separate" has three projections instead."""

    def __init__(self, style="golden"):
        super().__init__()
        self.gelu_approximation = "tanh" if style == "golden" else "none"
        hidden = golden.HIDDEN
        self.wte = torch.nn.Embedding(golden.VOCAB, hidden)
        self.wpe = torch.nn.Embedding(golden.POSITIONS, hidden)
        self.register_buffer("positions", torch.arange(golden.SEQ))
        self.blocks = torch.nn.ModuleList()
        for _ in range(golden.LAYERS):
            block = torch.nn.Module()
            block.ln_1 = torch.nn.LayerNorm(hidden, eps=golden.EPSILON)
            if style == "separate":
                block.attention = SeparateProjections(hidden)
            else:
                fused = torch.nn.Linear(hidden, 3 * hidden)
                core = split_attention if style == "nanogpt" else golden.attention
                block.attention = torch.nn.Sequential(fused, LambdaModule(core))
            block.c_proj = torch.nn.Linear(hidden, hidden)
            block.ln_2 = torch.nn.LayerNorm(hidden, eps=golden.EPSILON)
            block.c_fc = torch.nn.Linear(hidden, 4 * hidden)
            block.mlp_proj = torch.nn.Linear(4 * hidden, hidden)
            self.blocks.append(block)
        self.ln_f = torch.nn.LayerNorm(hidden, eps=golden.EPSILON)

    def forward(self, tokens):
        dropout = golden.DROPOUT
        x = F.dropout(self.wte(tokens) + self.wpe(self.positions), dropout, self.training)
        for block in self.blocks:
            a = block.c_proj(block.attention(block.ln_1(x)))
            x = x + F.dropout(a, dropout, self.training)
            m = block.mlp_proj(F.gelu(block.c_fc(block.ln_2(x)), approximate=self.gelu_approximation))
            x = x + F.dropout(m, dropout, self.training)
        return F.linear(self.ln_f(x), self.wte.weight)


class LambdaModule(torch.nn.Module):
    """A function as a module, to chain it after the fused projection."""

    def __init__(self, function):
        super().__init__()
        self.function = function

    def forward(self, x):
        return self.function(x)


class LlamaSizes:
    """A Llama's sizes, by default those of tools/pytorch_golden_llama.py."""

    def __init__(self, **changes):
        for name in ("LAYERS", "HIDDEN", "HEADS", "KV_HEADS", "FFN", "SEQ", "VOCAB", "ROPE_THETA", "EPSILON",
                     "BATCH"):
            setattr(self, name, changes.get(name, getattr(small_llama, name)))
        self.HEAD_DIM = self.HIDDEN // self.HEADS


# Llama 3's rotary base and head width (128) on a small net: reading the base back from float
# tables is exact only at the lowest frequency.
LLAMA3_ROPE = LlamaSizes(HIDDEN=256, HEADS=2, KV_HEADS=1, FFN=96, ROPE_THETA=500000.0)


class LlamaRmsNorm(torch.nn.Module):
    """Hugging Face's LlamaRMSNorm: x / sqrt(mean(x^2) + eps) times a weight."""

    def __init__(self, sizes):
        super().__init__()
        self.epsilon = sizes.EPSILON
        self.weight = torch.nn.Parameter(torch.ones(sizes.HIDDEN))

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.epsilon))


def rotary_tables(sizes):
    """cos and sin [T, head_dim] of Hugging Face's rotary embedding (the frequencies twice)."""
    head_dim = sizes.HEAD_DIM
    inverse = 1.0 / (sizes.ROPE_THETA ** (torch.arange(0, head_dim, 2).float() / head_dim))
    angles = torch.outer(torch.arange(sizes.SEQ).float(), inverse)
    both = torch.cat((angles, angles), dim=-1)
    return both.cos(), both.sin()


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class LlamaAttention(torch.nn.Module):
    """Hugging Face's LlamaAttention: q, k, v projections, rotary positions, k and v heads
    repeated for their query heads (repeat_kv), causal attention, the output projection."""

    def __init__(self, sizes):
        super().__init__()
        self.sizes = sizes
        hidden, head_dim = sizes.HIDDEN, sizes.HEAD_DIM
        self.q_proj = torch.nn.Linear(hidden, sizes.HEADS * head_dim, bias=False)
        self.k_proj = torch.nn.Linear(hidden, sizes.KV_HEADS * head_dim, bias=False)
        self.v_proj = torch.nn.Linear(hidden, sizes.KV_HEADS * head_dim, bias=False)
        self.o_proj = torch.nn.Linear(sizes.HEADS * head_dim, hidden, bias=False)

    def forward(self, x, cos, sin):
        batch, tokens, _ = x.shape
        heads, kv_heads, head_dim = self.sizes.HEADS, self.sizes.KV_HEADS, self.sizes.HEAD_DIM
        q = self.q_proj(x).view(batch, tokens, heads, head_dim).transpose(1, 2)
        k = self.k_proj(x).view(batch, tokens, kv_heads, head_dim).transpose(1, 2)
        v = self.v_proj(x).view(batch, tokens, kv_heads, head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        group = heads // kv_heads
        k = k[:, :, None].expand(batch, kv_heads, group, tokens, head_dim).reshape(batch, heads, tokens, head_dim)
        v = v[:, :, None].expand(batch, kv_heads, group, tokens, head_dim).reshape(batch, heads, tokens, head_dim)
        scores = (q @ k.transpose(2, 3)) / math.sqrt(head_dim)
        mask = torch.full((tokens, tokens), float("-inf")).triu(1)
        probabilities = F.softmax(scores + mask, dim=-1)
        return self.o_proj((probabilities @ v).transpose(1, 2).reshape(batch, tokens, heads * head_dim))


class TinyHfLlama(torch.nn.Module):
    """The zoo's small Llama as Hugging Face's LlamaForCausalLM: embed_tokens, decoder layers
    (input_layernorm, self_attn, post_attention_layernorm, mlp with gate/up/down projections),
    norm, an untied lm_head. rope "buffers" keeps cos and sin as buffers (stored tensors in
    ONNX); "in_graph" computes them in forward."""

    def __init__(self, rope="buffers", sizes=LlamaSizes()):
        super().__init__()
        hidden, ffn = sizes.HIDDEN, sizes.FFN
        self.rope = rope
        self.sizes = sizes
        self.embed_tokens = torch.nn.Embedding(sizes.VOCAB, hidden)
        self.layers = torch.nn.ModuleList()
        for _ in range(sizes.LAYERS):
            layer = torch.nn.Module()
            layer.input_layernorm = LlamaRmsNorm(sizes)
            layer.self_attn = LlamaAttention(sizes)
            layer.post_attention_layernorm = LlamaRmsNorm(sizes)
            layer.mlp = torch.nn.Module()
            layer.mlp.gate_proj = torch.nn.Linear(hidden, ffn, bias=False)
            layer.mlp.up_proj = torch.nn.Linear(hidden, ffn, bias=False)
            layer.mlp.down_proj = torch.nn.Linear(ffn, hidden, bias=False)
            self.layers.append(layer)
        self.norm = LlamaRmsNorm(sizes)
        self.lm_head = torch.nn.Linear(hidden, sizes.VOCAB, bias=False)
        cos, sin = rotary_tables(sizes)
        self.register_buffer("cos", cos)
        self.register_buffer("sin", sin)

    def forward(self, tokens):
        cos, sin = rotary_tables(self.sizes) if self.rope == "in_graph" else (self.cos, self.sin)
        x = self.embed_tokens(tokens)
        for layer in self.layers:
            x = x + layer.self_attn(layer.input_layernorm(x), cos, sin)
            mlp = layer.mlp
            h = layer.post_attention_layernorm(x)
            x = x + mlp.down_proj(F.silu(mlp.gate_proj(h)) * mlp.up_proj(h))
        return self.lm_head(self.norm(x))


class SineNet(torch.nn.Module):
    """A net with an op the importer does not map."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.sin(self.fc(x))


def export(net, example, path, constant_folding=False, dynamic_batch=False):
    net.train()
    batch_axes = {"input": {0: "batch"}, "output": {0: "batch"}} if dynamic_batch else None
    torch.onnx.export(net, example, path, opset_version=OPSET, training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=constant_folding, input_names=["input"], output_names=["output"],
                      dynamic_axes=batch_axes)
    print("wrote", path, os.path.getsize(path), "bytes")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    output_dir = sys.argv[1]
    os.makedirs(output_dir, exist_ok=True)
    torch.manual_seed(0)
    images = torch.randn(IMAGE_BATCH, 3, 224, 224)
    export(torchvision.models.resnet18(weights=None), images, os.path.join(output_dir, "resnet18.onnx"),
           dynamic_batch=True)
    export(torchvision.models.vgg11(weights=None), images, os.path.join(output_dir, "vgg11.onnx"))
    tokens = torch.randint(0, golden.VOCAB, (golden.BATCH, golden.SEQ))
    export(TinyGpt(), tokens, os.path.join(output_dir, "gpt.onnx"))
    export(TinyGpt("nanogpt"), tokens, os.path.join(output_dir, "nanogpt.onnx"))
    export(TinyGpt("separate"), tokens, os.path.join(output_dir, "gpt-separate-qkv.onnx"))
    export(TinyGpt(), tokens, os.path.join(output_dir, "gpt-folded.onnx"), constant_folding=True)
    export(SineNet(), torch.randn(IMAGE_BATCH, 8), os.path.join(output_dir, "unsupported.onnx"))
    llama_tokens = torch.randint(0, small_llama.VOCAB, (small_llama.BATCH, small_llama.SEQ))
    export(TinyHfLlama(), llama_tokens, os.path.join(output_dir, "llama.onnx"))
    export(TinyHfLlama("in_graph"), llama_tokens, os.path.join(output_dir, "llama-rope-in-graph.onnx"))
    export(TinyHfLlama(sizes=LLAMA3_ROPE), llama_tokens, os.path.join(output_dir, "llama-rope-500k.onnx"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
