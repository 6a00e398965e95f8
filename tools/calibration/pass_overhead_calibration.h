#pragma once
// The runtime's own host time per layer pass on a GPU (sim::Device::instruction_host_seconds).
// Beyond its kernels' queuing, each forward and backward the step interpreter runs costs the host
// its dispatch, the op's bookkeeping, the buffers' allocation and the step clock's mark, which
// kernels timed alone do not show; and where the host paces the step (a small batch on a fast
// GPU) it adds up: on the H200 and H100 runs of results/gpu*, a relu's or a pool's pass took the
// step's host 1-10 us more than calibrate's timing of its kernel, over vgg11's 60 passes a few
// to 16% of a batch-64 step. So calibrate runs the model's step itself on this GPU for a few
// steps and compares each pass's queuing with the simulator's price of it.

#include <cstdint>
#include <string>

#include "sim/cluster.h"

namespace splitbrain::tools {

// Runs `model_spec`'s data-parallel plan of `batch` samples on this process's GPU (a run of one
// rank, synthetic data) for a few steps and returns per_pass_host_seconds of pass_host_excess
// (pass_host_excess.h) over the steps after a warm-up, against `cluster` as calibrate has
// measured it so far; 0 for a model of token ids (no synthetic images to feed it). `own_cpu`: the
// driving thread alone on one of the process's CPUs, as `run` places it (not under --no-bind).
// `print`: progress and the result on stdout.
double measure_pass_host_seconds(const std::string& model_spec, int64_t batch, const sim::Cluster& cluster,
                                 bool own_cpu, bool print);

}  // namespace splitbrain::tools
