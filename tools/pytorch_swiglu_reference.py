#!/usr/bin/env python3
"""PyTorch's SwiGLU gate, as the reference of splitbrain's swiglu kernels.

Computes y = torch.nn.functional.silu(gate) * up and, by autograd, the gradients of sum(y * dy)
with respect to gate and up, in float64 from fp32 inputs, and writes
tests/exec/golden/swiglu_pytorch.json: the inputs (exact fp32 values) and the three results.
The gates span -30..30, past where sigmoid saturates in fp32, and 0. tests/exec/swiglu_test.cc
feeds the same inputs to the CPU kernel and checks it against this file.

Only needed to regenerate the committed file (CI never runs it). Needs Debian's python3-torch:

    /usr/bin/python3 tools/pytorch_swiglu_reference.py [--output FILE]
"""

import argparse
import json
import math
import os

import torch
import torch.nn.functional as F

ELEMENTS = 67


def inputs():
    """Deterministic fp32 gate, up and dy, without a random generator to keep in step."""
    gate = [-12.0 + 24.0 * i / (ELEMENTS - 4) for i in range(ELEMENTS - 3)] + [0.0, -30.0, 30.0]
    up = [1.5 * math.cos(0.7 * i) for i in range(ELEMENTS)]
    dy = [math.sin(1.3 * i + 0.2) for i in range(ELEMENTS)]
    # Rounded to fp32, then widened: the kernel sees exactly these values.
    return [torch.tensor(v, dtype=torch.float32).to(torch.float64) for v in (gate, up, dy)]


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=os.path.join(root, "tests", "exec", "golden", "swiglu_pytorch.json"))
    args = parser.parse_args()

    gate, up, dy = inputs()
    gate.requires_grad_(True)
    up.requires_grad_(True)
    y = F.silu(gate) * up
    (y * dy).sum().backward()

    out = {
        "description": "torch.nn.functional.silu(gate) * up and its gradients for dy, float64 from fp32 inputs "
                       "(tools/pytorch_swiglu_reference.py, torch " + torch.__version__ + ")",
        "gate": gate.detach().tolist(),
        "up": up.detach().tolist(),
        "dy": dy.tolist(),
        "y": y.detach().tolist(),
        "d_gate": gate.grad.tolist(),
        "d_up": up.grad.tolist(),
    }
    with open(args.output, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
