#pragma once
// Time one rank spends computing a layer, by a roofline over its local FLOPs and the bytes it
// moves through memory, each at the device's achieved (size-dependent) rate.

#include <cstdint>

#include "model/dtype.h"
#include "model/model.h"
#include "plans/mesh.h"
#include "plans/op_sharding.h"
#include "plans/plan.h"
#include "sim/cluster.h"

namespace splitbrain::sim {

struct LayerComputeSeconds {
  double forward = 0.0;
  double backward_input = 0.0;   // gradient with respect to the inputs (0 when not needed)
  double backward_weight = 0.0;  // gradient with respect to the parameters
  // The host's seconds to queue the pass's kernels where the device runs behind a queue (a GPU's
  // measured kernel problems, Device::MeasuredKernel); 0 elsewhere.
  double forward_host = 0.0;
  double backward_host = 0.0;  // both gradients
};

// One micro-batch of `micro_batch` samples through layer `index`, split by `layouts`.
LayerComputeSeconds layer_compute_seconds(const Cluster& cluster, const model::Model& model, int index,
                                          const plans::LayerLayouts& layouts, int64_t micro_batch, model::DType dtype);

// The same with every local size counted exactly on `mesh` (plans::local_element_count): an input
// replicated over an axis that splits the output is read whole by every rank. The overload above
// has no mesh and takes every local activation as work_fraction of the global one (parameters
// are exact either way: ParameterShard carries its local size). Prefer this one.
//
// What a measured kernel's time depends on besides its problem (Device::measured_kernels).
struct NodeConditions {
  // In [0, 1]: the fraction of the time the other ranks on this rank's node compute too. Cores
  // of a node share memory bandwidth, caches and (SMT siblings) execution units, so a kernel runs
  // between its speed alone and its speed beside busy neighbours; where calibrate measured a
  // problem both ways ("1 busy" and "N busy"), the seconds are interpolated by this fraction. 1
  // (every rank computing in lock step, as data parallelism does) takes the "N busy" time.
  double neighbours_busy = 1.0;
  // In [0, 1]: how much of the data a kernel reads is still in the last-level cache
  // (caches_warm_fraction); the seconds are interpolated between the problem's time with the
  // caches swept (0) and warm (1, ", caches warm"), where calibrate measured both.
  double caches_warm = 0.0;
};

// sim::simulate finds both conditions of a plan.
LayerComputeSeconds layer_compute_seconds(const Cluster& cluster, const model::Model& model, int index,
                                          const plans::LayerLayouts& layouts, const plans::Mesh& mesh,
                                          int64_t micro_batch, model::DType dtype, NodeConditions conditions = {});

// The share of a step's data that stays in the node's last-level cache between the kernels that
// use it: the cache over the data the node's busy ranks touch in a step (each rank's peak tracked
// bytes, `peak_bytes_per_rank` the largest), capped at 1; 0 where the device's cache is unknown.
// A first-order model: a layer's input was written by the layer just before, its saved
// activations and weights long before, and LRU keeps the most recent bytes up to the cache's size.
double caches_warm_fraction(const Cluster& cluster, const plans::Mesh& mesh, double peak_bytes_per_rank);

// A streaming pass over `bytes` (read plus written) outside any kernel, such as a copy, at the
// device's achieved memory rate (the common memory curve, the optimizer's).
double streaming_pass_seconds(const Cluster& cluster, double bytes);

// One host transfer of `bytes` to the device (the input batch; 0 bytes: the loss scalar's way
// back, its latency alone), by the device's measured host link (Device::host_transfer_*; zero
// where unmeasured).
double host_transfer_seconds(const Device& device, int64_t bytes);

// The optimizer update of `local_parameter_elements` parameters: a memory-bound pass that reads
// and writes parameters, gradients and optimizer state.
double optimizer_step_seconds(const Cluster& cluster, const plans::Plan& plan, int64_t local_parameter_elements);

// The pass that adds one micro-batch's weight gradients into a wider gradient accumulator, per
// layer: where a plan keeps its gradients in a wider type than it computes in (`gradient_dtype`
// "fp32" under bf16, Megatron-LM's fp32 main gradients), the weight-gradient kernel writes a
// 16-bit gradient and a separate memory-bound pass adds it into the fp32 array: it reads the
// 16-bit gradient and the accumulator and writes the accumulator, once per micro-batch. This is
// Megatron-LM's local DDP as run in Narayanan et al., SC21 (arXiv 2104.04473): a hook on every
// parameter runs `main_grad.add_(grad)` after each backward (megatron/model/distributed.py; the
// wgrad GEMM accumulating into main_grad itself, gradient_accumulation_fusion, came in 2022).
// It costs 10 bytes of traffic per local parameter and micro-batch, as much as a 2,048-token
// micro-batch's GEMMs take for about 7% of their time (8 FLOPs per parameter and token with
// recomputation), less with larger micro-batches. 0 where the gradient type is the compute type
// (the kernel writes or adds the gradient itself). Priced by simulate, the planner's cost table
// and the step-time bound alike, so the bound stays below the simulated step.
double gradient_accumulation_seconds(const Cluster& cluster, const plans::Plan& plan,
                                     const plans::LayerLayouts& layouts);

// The op class whose efficiency curve applies to a layer (conv2d: conv; linear, matmul,
// attention: gemm; everything else: elementwise).
OpClass op_class_of(const model::Layer& layer);

}  // namespace splitbrain::sim
