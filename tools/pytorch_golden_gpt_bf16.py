#!/usr/bin/env python3
"""Golden numbers for the CPU executor's bf16 emulation (exec/runtime/mixed_precision.h), by PyTorch.

The tiny GPT of tools/pytorch_golden_gpt.py (same weights, dropout masks, token sequences, three
SGD steps with momentum), trained as the executor trains a bf16 plan: every layer's output
(every entry of pytorch_golden_gpt.INDEX, and the embeddings' sum) rounded to bf16, and so the
gradient of each layer's input (per consumer, and again when two consumers' gradients are added),
the weights the layers read rounded from fp32 master weights, which torch.optim.SGD updates with
the rounded parameter gradients. The loss is computed in fp32 from the rounded logits. Rounding
is PyTorch's fp32 -> torch.bfloat16 conversion (nearest, ties to even), the executor's
exec/comm/bf16.h. Writes tests/exec/golden/gpt_bf16_golden.json in tools/pytorch_golden.py's
format, plus "dtype": "bf16" and how golden_test.cc compares: an fp32 difference between two
kernels can move a value across a bf16 rounding boundary (2^-8 relative). Moving every master
weight by 1e-6 of itself here moves the losses by 1.2e-4 and the gradients' sums of absolute
values by up to 1.1e-3, but single gradient elements near zero (differences of rounded terms) by
several times themselves: the losses and the gradients' sums are compared within 3e-3, the
elements not. The bf16 emulation itself moves this model little: fp32 training (gpt_golden.json)
differs from this file by 7e-5 in the losses and by up to 4.3e-3 in a gradient's sum of absolute
values (h0.ln_1.bias), so 3e-3 tells the two apart, narrowly; the initial weights, compared
exactly, are the bf16 ones.

Only needed to regenerate the committed file (CI never runs it). Needs Debian's python3-torch:

    /usr/bin/python3 tools/pytorch_golden_gpt_bf16.py [--output FILE]
"""

import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pytorch_golden as common  # noqa: E402  (summaries, writing)
import pytorch_golden_gpt as gpt  # noqa: E402  (the model, its weights, masks and batches)

RELATIVE_TOLERANCE = 3e-3


def bf16(x):
    return x.to(torch.bfloat16).to(torch.float32)


class RoundedOutput(torch.autograd.Function):
    """A layer's output rounded to bf16, and its gradient (the consumers' sum) rounded too."""

    @staticmethod
    def forward(ctx, x):
        return bf16(x)

    @staticmethod
    def backward(ctx, grad):
        return bf16(grad)


class RoundedInputGradient(torch.autograd.Function):
    """A layer's input as it is; the gradient the layer gives it rounded (each backward's own)."""

    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return bf16(grad)


def layer(fn, *inputs):
    return RoundedOutput.apply(fn(*[RoundedInputGradient.apply(x) for x in inputs]))


def forward(params, tokens, labels, step):
    def norm(x, name):
        return layer(lambda v: F.layer_norm(v, (gpt.HIDDEN,), params[name + ".weight"], params[name + ".bias"],
                                            eps=gpt.EPSILON), x)

    def linear(x, name):
        return layer(lambda v: F.linear(v, params[name + ".weight"], params[name + ".bias"]), x)

    def dropout(x, name):
        return layer(lambda v: gpt.dropout(v, step, name), x)

    def add(a, b):
        return layer(lambda u, v: u + v, a, b)

    # The token embedding adds into its table's gradient, which the head's (rounded) part is
    # already in, and rounds the sum once: its own part is not rounded on its own.
    x = add(RoundedOutput.apply(params["wte.weight"][tokens]), RoundedOutput.apply(params["wpe.weight"][torch.arange(gpt.SEQ)]))
    x = dropout(x, "embed.dropout")
    for block in range(gpt.LAYERS):
        h = f"h{block}."
        a = linear(layer(gpt.attention, linear(norm(x, h + "ln_1"), h + "attn.c_attn")), h + "attn.c_proj")
        x = add(x, dropout(a, h + "attn.dropout"))
        m = layer(lambda v: F.gelu(v, approximate="tanh"), linear(norm(x, h + "ln_2"), h + "mlp.c_fc"))
        x = add(x, dropout(linear(m, h + "mlp.c_proj"), h + "mlp.dropout"))
    head_table = RoundedInputGradient.apply(params["wte.weight"])  # the head's weight gradient, rounded
    logits = layer(lambda v: F.linear(v, head_table), norm(x, "ln_f"))
    return F.cross_entropy(logits.reshape(-1, gpt.VOCAB), labels.reshape(-1), reduction="mean")


def bf16_sgd_run(master, steps):
    """sgd_run's result for the bf16 emulation: the summaries of the weights the layers read
    (the master rounded) and of the step-1 parameter gradients (rounded), and every step's loss."""
    optimizer = torch.optim.SGD(list(master.values()), lr=gpt.LEARNING_RATE, momentum=gpt.MOMENTUM)
    initial, gradients, losses = None, None, []
    for step in range(steps):
        weights = {name: bf16(value.detach()).requires_grad_(True) for name, value in master.items()}
        if step == 0:
            initial = {name: common.summary(value) for name, value in weights.items()}
        loss = forward(weights, *gpt.batch(step), step)
        loss.backward()
        for name, value in master.items():
            value.grad = bf16(weights[name].grad)
        if step == 0:
            gradients = {name: common.summary(value.grad) for name, value in master.items()}
        losses.append(float(loss.item()))
        optimizer.step()
    return initial, gradients, losses


def main():
    args = common.golden_arguments(__doc__, "gpt_bf16_golden.json")
    master = {name: value.detach().clone().requires_grad_(True) for name, value in gpt.build_parameters().items()}
    run = bf16_sgd_run(master, gpt.STEPS)
    golden = common.token_model_golden(gpt.MODEL, "tools/pytorch_golden_gpt_bf16.py", gpt, gpt.INDEX, run)
    golden["dtype"] = "bf16"
    golden["relative_tolerance"] = RELATIVE_TOLERANCE
    golden["gradient_samples_compared"] = False
    common.write_golden(golden, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
