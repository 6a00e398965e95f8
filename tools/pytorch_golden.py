#!/usr/bin/env python3
"""Golden numbers for the CPU executor, computed by PyTorch.

Builds the zoo's `fashion-vgg` in PyTorch with exactly the initial weights the executor gives it
(exec/runtime/parameter_init.cc), exactly its dropout masks (exec/kernels/dropout_mask.h) and the batch
formula below, runs three SGD steps with momentum (torch.optim.SGD), and writes
tests/exec/golden/fashion_vgg_golden.json: the loss of each step, and per parameter the shape,
sum, sum of absolute values, sum of squares and 32 sampled values of the initial tensor and of
its gradient at step 1 (before the first update). tests/exec/golden/golden_test.cc runs the
same net through splitbrain's Trainer and checks it against this file (fp32, rtol 1e-4).

Only needed to regenerate the committed file (CI never runs it). Needs Debian's python3-torch:

    /usr/bin/python3 tools/pytorch_golden.py [--output FILE]
"""

import argparse
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

SEED = 1
BATCH = 8
STEPS = 3
LEARNING_RATE = 0.05
MOMENTUM = 0.9
DROPOUT = 0.5
SAMPLES = 32

# Topological layer indices of fashion-vgg (`splitbrain inspect --model fashion-vgg --json -`):
# data 0, conv1 1, relu1 2, conv2 3, relu2 4, pool1 5, conv3 6, relu3 7, conv4 8, relu4 9,
# pool2 10, flatten1 11, fc1 12, relu5 13, dropout1 14, fc2 15, loss 16.
# (name, layer index, weight shape [out, in, kh, kw] or [out, in])
PARAMETER_LAYERS = [
    ("conv1", 1, (32, 1, 3, 3)),
    ("conv2", 3, (32, 32, 3, 3)),
    ("conv3", 6, (64, 32, 3, 3)),
    ("conv4", 8, (64, 64, 3, 3)),
    ("fc1", 12, (256, 3136)),
    ("fc2", 15, (10, 256)),
]
DROPOUT_LAYER = 14

MASK64 = (1 << 64) - 1


# --- SplitMix64 on uint64 with wrap-around -------------------------------------------------------

def splitmix64_int(x):
    """SplitMix64 on one Python int (arbitrary precision, masked to 64 bits)."""
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def splitmix64_array(x):
    """SplitMix64 element-wise on a numpy uint64 array (numpy array arithmetic wraps mod 2^64)."""
    x = x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = x
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


# --- Initial parameters (exec/runtime/parameter_init.cc) -----------------------------------------

def initial_parameter(layer_index, parameter, shape, fan_in, seed=SEED):
    """Element g (global row-major index) of parameter `parameter` (0 weight, 1 bias) of layer
    `layer_index`: (2u - 1) / sqrt(fan_in), u = (splitmix64(key ^ g) >> 11) * 2^-53,
    key = splitmix64(splitmix64(splitmix64(seed) ^ layer) ^ parameter); computed in float64 and
    rounded to float32 once, as the C++ does."""
    key = splitmix64_int(splitmix64_int(splitmix64_int(seed) ^ layer_index) ^ parameter)
    count = int(np.prod(shape))
    g = np.arange(count, dtype=np.uint64)
    u = (splitmix64_array(np.uint64(key) ^ g) >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
    scale = 1.0 / math.sqrt(float(fan_in))
    values = ((2.0 * u - 1.0) * scale).astype(np.float32)
    return torch.from_numpy(values.reshape(shape))


# --- Dropout mask (exec/kernels/dropout_mask.h) --------------------------------------------------

def dropout_scale_mask(step, shape, p=DROPOUT, seed=SEED, layer=DROPOUT_LAYER):
    """Element i (row-major over the layer output's global shape, batch dimension = the whole
    step's batch) is kept iff (splitmix64(stream ^ i) >> 32) >= floor(p * 2^32), with
    stream = splitmix64(splitmix64(splitmix64(seed) ^ step) ^ layer); kept elements are scaled by
    1 / (1 - p). Returns the float32 multiplier (0 or 1/(1-p)) per element."""
    stream = splitmix64_int(splitmix64_int(splitmix64_int(seed) ^ step) ^ layer)
    limit = int(math.ldexp(p, 32))
    count = int(np.prod(shape))
    index = np.arange(count, dtype=np.uint64)
    keep = (splitmix64_array(np.uint64(stream) ^ index) >> np.uint64(32)) >= np.uint64(limit)
    scale = np.float32(1.0 / (1.0 - p))
    return torch.from_numpy(np.where(keep, scale, np.float32(0.0)).astype(np.float32).reshape(shape))


# --- The batch (golden_test.cc's FormulaBatch computes the same) ---------------------------------

def batch(step):
    """image[i][0][h][w] = 0.5 * sin(0.37 * i + 0.11 * h + 0.07 * w + 0.5 * step) + 0.25 * cos(0.05 * h * w),
    evaluated in float64 and rounded to float32; label[i] = (3 * i + step) % 10."""
    i = np.arange(BATCH, dtype=np.float64).reshape(BATCH, 1, 1, 1)
    h = np.arange(28, dtype=np.float64).reshape(1, 1, 28, 1)
    w = np.arange(28, dtype=np.float64).reshape(1, 1, 1, 28)
    image = 0.5 * np.sin(0.37 * i + 0.11 * h + 0.07 * w + 0.5 * step) + 0.25 * np.cos(0.05 * (h * w))
    labels = (3 * np.arange(BATCH, dtype=np.int64) + step) % 10
    return torch.from_numpy(image.astype(np.float32)), torch.from_numpy(labels)


# --- The net -------------------------------------------------------------------------------------

def build_parameters():
    params = {}
    for name, layer, shape in PARAMETER_LAYERS:
        fan_in = int(np.prod(shape[1:]))  # in_channels x kernel area, or in_features
        params[name + ".weight"] = initial_parameter(layer, 0, shape, fan_in).requires_grad_(True)
        params[name + ".bias"] = initial_parameter(layer, 1, (shape[0],), fan_in).requires_grad_(True)
    return params


def forward(params, images, labels, step):
    x = images
    for conv in ("conv1", "conv2"):
        x = F.relu(F.conv2d(x, params[conv + ".weight"], params[conv + ".bias"], stride=1, padding=1))
    x = F.max_pool2d(x, 2, 2)
    for conv in ("conv3", "conv4"):
        x = F.relu(F.conv2d(x, params[conv + ".weight"], params[conv + ".bias"], stride=1, padding=1))
    x = F.max_pool2d(x, 2, 2)
    x = torch.flatten(x, 1)
    x = F.relu(F.linear(x, params["fc1.weight"], params["fc1.bias"]))
    x = x * dropout_scale_mask(step, tuple(x.shape))
    x = F.linear(x, params["fc2.weight"], params["fc2.bias"])
    return F.cross_entropy(x, labels, reduction="mean")


# --- Summaries -----------------------------------------------------------------------------------

def spread(indices, count):
    """`count` entries of `indices` spread evenly from its first to its last (all when fewer)."""
    if len(indices) <= count:
        return list(indices)
    return [indices[(k * (len(indices) - 1)) // (count - 1)] for k in range(count)]


def sample_indices(flat):
    """32 fixed indices: 16 spread over the whole tensor (zeros included: dead units, dropped
    rows), and 16 spread over its nonzero elements, so that a tensor with many exact zeros still
    has values worth comparing. All of them when the tensor has at most 32 elements."""
    if flat.size <= SAMPLES:
        return list(range(flat.size))
    chosen = set(spread(list(range(flat.size)), SAMPLES // 2))
    nonzero = [int(k) for k in np.flatnonzero(flat) if int(k) not in chosen]
    chosen.update(spread(nonzero, SAMPLES - len(chosen)))
    rest = [k for k in range(flat.size) if k not in chosen]  # only for nearly all-zero tensors
    chosen.update(spread(rest, SAMPLES - len(chosen)))
    return sorted(chosen)


def summary(tensor):
    flat = tensor.detach().reshape(-1).to(torch.float64).numpy()
    return {
        "shape": list(tensor.shape),
        "sum": float(flat.sum()),
        "sum_abs": float(np.abs(flat).sum()),
        "sum_of_squares": float((flat * flat).sum()),
        "samples": [[int(k), float(np.float32(flat[k]))] for k in sample_indices(flat)],
    }


def write_json(golden, path):
    """Indented at the top two levels, each tensor's summary on one line: small and diffable."""
    lines = ["{"]
    keys = list(golden)
    for n, key in enumerate(keys):
        value = golden[key]
        comma = "," if n + 1 < len(keys) else ""
        if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
            inner = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in value.items()]
            lines.append(f" {json.dumps(key)}: {{\n" + ",\n".join(inner) + "\n }" + comma)
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value)}{comma}")
    lines.append("}")
    temporary = path + ".tmp"
    with open(temporary, "w") as out:
        out.write("\n".join(lines) + "\n")
    with open(temporary) as written:
        json.load(written)  # it parses
    os.replace(temporary, path)


def sgd_run(params, loss_of_step, steps, learning_rate, momentum):
    """SGD with momentum over `steps` steps, loss_of_step(step) giving each step's loss: the
    parameters' summaries before the first step, their gradients' summaries at it, and every
    step's loss (what a golden file holds)."""
    initial = {name: summary(value) for name, value in params.items()}
    optimizer = torch.optim.SGD(list(params.values()), lr=learning_rate, momentum=momentum)
    losses = []
    gradients = {}
    for step in range(steps):
        optimizer.zero_grad(set_to_none=False)
        loss = loss_of_step(step)
        loss.backward()
        if step == 0:
            gradients = {name: summary(value.grad) for name, value in params.items()}
        losses.append(float(loss.item()))
        optimizer.step()
    return initial, gradients, losses


def token_model_golden(model, script, hyper, layer_indices, run):
    """The golden of a model trained on exec/data/token_sequences.h's batches (GPT, Llama, MoE):
    `run` is sgd_run's (initial parameters, first-step gradients, losses), `hyper` the SEED, BATCH,
    STEPS, LEARNING_RATE and MOMENTUM of the module that made them."""
    initial, gradients, losses = run
    return {
        "model": model,
        "generator": script + ", torch " + torch.__version__,
        "seed": hyper.SEED,
        "batch": hyper.BATCH,
        "steps": hyper.STEPS,
        "learning_rate": hyper.LEARNING_RATE,
        "momentum": hyper.MOMENTUM,
        "batch_formula": "token sequences of exec/data/token_sequences.h with the seed above",
        "layer_indices": layer_indices,
        "losses": losses,
        "initial_parameters": initial,
        "gradients": gradients,
    }


def write_golden(golden, path):
    """write_json into `path`'s folder, made if missing, and what was written on standard output."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    write_json(golden, path)
    print("losses:", " ".join(f"{x:.7f}" for x in golden["losses"]))
    print("wrote", os.path.normpath(path), os.path.getsize(path), "bytes")


def golden_arguments(description, golden_name):
    """--output (default: the committed golden file), and one deterministic fp32 thread for torch."""
    parser = argparse.ArgumentParser(description=description.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    default = os.path.join(here, "..", "tests", "exec", "golden", golden_name)
    parser.add_argument("--output", default=default, help="where to write (default: the committed golden file)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    torch.set_default_dtype(torch.float32)
    torch.manual_seed(0)  # nothing draws from it; set so that nothing could differ between runs
    return args


def main():
    args = golden_arguments(__doc__, "fashion_vgg_golden.json")

    params = build_parameters()
    initial, gradients, losses = sgd_run(params, lambda step: forward(params, *batch(step), step), STEPS,
                                         LEARNING_RATE, MOMENTUM)

    golden = {
        "model": "fashion-vgg",
        "generator": "tools/pytorch_golden.py, torch " + torch.__version__,
        "seed": SEED,
        "batch": BATCH,
        "steps": STEPS,
        "learning_rate": LEARNING_RATE,
        "momentum": MOMENTUM,
        "batch_formula": "image[i][0][h][w] = float32(0.5 sin(0.37 i + 0.11 h + 0.07 w + 0.5 step) "
                         "+ 0.25 cos(0.05 h w)); label[i] = (3 i + step) % 10",
        "layer_indices": {name: layer for name, layer, _ in PARAMETER_LAYERS},
        "losses": losses,
        "initial_parameters": initial,
        "gradients": gradients,
    }
    write_golden(golden, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
