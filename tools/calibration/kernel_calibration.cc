#include "tools/calibration/kernel_calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iostream>
#include <string>
#include <vector>

#include "exec/comm/local_array.h"
#include "exec/cpu/conv2d.h"
#include "exec/cpu/cpu_context.h"
#include "exec/cpu/eltwise.h"
#include "exec/cpu/linear.h"
#include "exec/cpu/pooling.h"
#include "exec/runtime/memory_tracker.h"
#include "exec/runtime/host_device.h"
#include "exec/runtime/optimizer.h"
#include "tools/calibration/calibration_timing.h"
#include "tools/calibration/gemm_table_calibration.h"
#include "tools/calibration/line_fit.h"

namespace splitbrain::tools {
namespace {

using Floats = std::vector<float>;

Floats filled(int64_t elements, float value) { return Floats(static_cast<size_t>(elements), value); }

// Samples per pass of one op class: forward, input gradients (backward) and weight gradients;
// the simulator prices each phase of a layer with its own curve at its own FLOPs or bytes.
struct PassSamples {
  RateSamples forward;
  RateSamples backward;
  RateSamples weight_gradient;
};

class KernelTimer {
 public:
  KernelTimer(const KernelCalibration& options, MPI_Comm comm, bool leader)
      : options_(options), comm_(comm), print_(leader && options.print) {}

  // Times `work` and adds its rate to `samples`; `size` is FLOPs or bytes as the curve counts them.
  // Returns the seconds.
  template <class Work>
  double sample(RateSamples& samples, double size, const std::string& label, const char* unit, Work&& work) {
    const double seconds = median_seconds(options_.repeats, comm_, work, CoreSharing::Cost::cpu_share);
    samples.add(size, seconds);
    if (print_)
      std::cout << fmt::format("[calibrate] {:<40} {:9.3f} ms  {:8.2f} {}\n", label, seconds * 1e3,
                               size / seconds / 1e9, unit);
    return seconds;
  }

 private:
  const KernelCalibration& options_;
  MPI_Comm comm_;
  bool print_;
};

// 3x3 convolutions from the narrow, wide images of a CNN's first blocks to its deep, small ones.
PassSamples measure_conv(exec::cpu::CpuContext& context, KernelTimer& timer) {
  PassSamples samples;
  const std::vector<std::array<int64_t, 4>> shapes = {// batch, in, out channels, height = width
                                                      {8, 16, 16, 28},   {16, 32, 64, 28},  {32, 64, 128, 16},
                                                      {32, 128, 256, 8}, {64, 256, 256, 8}, {64, 512, 512, 4},
                                                      {64, 512, 512, 2}};
  for (const auto& [batch, in, out, size] : shapes) {
    exec::kernels::Conv2dShape shape;
    shape.batch = batch;
    shape.in_channels = in;
    shape.out_channels = out;
    shape.height = shape.width = size;
    shape.kernel_h = shape.kernel_w = 3;
    shape.pad_top = shape.pad_bottom = shape.pad_left = shape.pad_right = 1;
    exec::cpu::Conv2dKernel kernel(context, shape);
    Floats x = filled(batch * in * size * size, 0.5f), w = filled(out * in * 9, 0.01f), b = filled(out, 0.0f);
    Floats y = filled(batch * out * size * size, 0.0f), dx = filled(static_cast<int64_t>(x.size()), 0.0f);
    Floats dw = filled(static_cast<int64_t>(w.size()), 0.0f), db = filled(out, 0.0f);
    const double flops = 2.0 * static_cast<double>(batch * out * size * size * in * 9);
    const std::string name = fmt::format("conv3x3 {}x{}->{} {}x{}", batch, in, out, size, size);
    timer.sample(samples.forward, flops, name + " fwd", "GFLOP/s",
                 [&] { kernel.forward(x.data(), w.data(), b.data(), y.data()); });
    timer.sample(samples.backward, flops, name + " bwd data", "GFLOP/s",
                 [&] { kernel.backward_data(y.data(), w.data(), dx.data()); });
    RateSamples weights;
    timer.sample(weights, flops, name + " bwd weights", "GFLOP/s",
                 [&] { kernel.backward_weights(x.data(), y.data(), dw.data(), db.data()); });
    samples.weight_gradient.add_rate(static_cast<double>(batch * size * size), weights.rates.back());
  }
  return samples;
}

// Fully connected layers from a small MLP's to a VGG classifier's.
PassSamples measure_gemm(exec::cpu::CpuContext& context, KernelTimer& timer) {
  PassSamples samples;
  const std::vector<std::array<int64_t, 3>> shapes = {// rows, in, out features
                                                      {16, 256, 256},
                                                      {64, 512, 512},
                                                      {64, 1024, 1024},
                                                      {128, 2048, 1024},
                                                      {64, 4096, 4096}};
  for (const auto& [rows, in, out] : shapes) {
    exec::cpu::LinearKernel kernel(context, {rows, in, out, true});
    Floats x = filled(rows * in, 0.5f), w = filled(in * out, 0.01f), b = filled(out, 0.0f),
           y = filled(rows * out, 0.0f);
    Floats dx = filled(rows * in, 0.0f), dw = filled(in * out, 0.0f), db = filled(out, 0.0f);
    const double flops = 2.0 * static_cast<double>(rows * in * out);
    const std::string name = fmt::format("linear {}x{}->{}", rows, in, out);
    timer.sample(samples.forward, flops, name + " fwd", "GFLOP/s",
                 [&] { kernel.forward(x.data(), w.data(), b.data(), y.data()); });
    timer.sample(samples.backward, flops, name + " bwd data", "GFLOP/s",
                 [&] { kernel.backward_data(y.data(), w.data(), dx.data()); });
    timer.sample(samples.weight_gradient, flops, name + " bwd weights", "GFLOP/s",
                 [&] { kernel.backward_weights(x.data(), y.data(), dw.data(), db.data()); });
  }
  return samples;
}

// Memory-bound kernels, with their bytes counted as the simulator counts them (sim/compute_cost:
// every tensor read or written once): ReLU (forward reads x, writes y; backward reads the saved
// tensor and dy, writes dx) and the optimizer update give the common curve; 2x2 max pooling (with
// its index workspace) runs far below it on plain layouts and gets its own.
struct MemorySamples {
  PassSamples common;      // the optimizer's update, and every memory-bound op without its own curve
  PassSamples activation;  // ReLU and GELU (oneDNN eltwise)
  PassSamples max_pooling;
  PassSamples thin_linear;  // few rows, large weights: streaming the weights sets the time
  // The time of a short memory-bound call (an update of a few thousand parameters: a bias, a
  // layer norm), its arrays in cache. The curves are fitted on MiB-sized arrays, where a fixed
  // cost per call (h / peak on a saturating curve) is a small share of the time and poorly
  // pinned; left free, one fit charged each small array of a tiny GPT a hundred times its
  // real time. (The cost of the cap: a MiB-sized array's slowdown below the peak is no longer
  // all on the curve.)
  double short_call_seconds = 0.0;
};

// The optimizer's update of `elements` parameters into `samples`, with the simulator's bytes
// (parameter, gradient and momentum, each read and written). The update alone: the trainer then
// clears the gradients for the next step's accumulation, which the simulator prices as a pass of
// its own (sim/simulation.cc, optimizer_instruction_seconds). `back_to_back` updates are timed as
// one, so all but the first find the arrays in cache. Returns the seconds of one.
double time_update(KernelTimer& timer, RateSamples& samples, int64_t elements, int back_to_back = 1) {
  exec::MemoryTracker memory;
  exec::HostDevice device;
  exec::Optimizer optimizer(plans::OptimizerConfig{}, device, memory);
  optimizer.add_parameter(elements);
  exec::DeviceMemory& arrays = device.memory();
  const auto value = arrays.allocate({elements}, false);
  const auto grad = arrays.allocate({elements}, false);
  arrays.fill(*value, 0, elements, 0.5f);
  arrays.fill(*grad, 0, elements, 1e-3f);
  const auto bytes = static_cast<double>(2 * 12 * elements * back_to_back);
  const std::string label = back_to_back == 1
                                ? fmt::format("sgd-momentum update {} parameters", elements)
                                : fmt::format("sgd-momentum update {} parameters x{}", elements, back_to_back);
  return timer.sample(samples, bytes, label, "GB/s", [&] {
    for (int call = 0; call < back_to_back; ++call) optimizer.step({value.get()}, {grad.get()});
  }) / back_to_back;
}

MemorySamples measure_memory(exec::cpu::CpuContext& context, KernelTimer& timer) {
  MemorySamples all;
  PassSamples& samples = all.common;
  // Sizes of training's activations and updates (MiB to tens of MiB): the caches make smaller
  // arrays faster than memory, which a saturating curve cannot follow, and training rarely has them.
  for (int64_t elements : {int64_t{1} << 19, int64_t{1} << 21, int64_t{1} << 23}) {
    exec::cpu::ActivationKernel relu(context, exec::kernels::Activation::relu, elements);
    Floats x = filled(elements, 0.5f), y = filled(elements, 0.0f), dx = filled(elements, 0.0f);
    const auto bytes = static_cast<double>(4 * elements);
    timer.sample(all.activation.forward, 2 * bytes, fmt::format("relu {} elements fwd", elements), "GB/s",
                 [&] { relu.forward(x.data(), y.data()); });
    timer.sample(all.activation.backward, 3 * bytes, fmt::format("relu {} elements bwd", elements), "GB/s",
                 [&] { relu.backward(x.data(), y.data(), dx.data()); });
  }
  for (int64_t channels : {32, 64, 128}) {
    exec::kernels::Pool2dShape shape;
    shape.batch = 32;
    shape.channels = channels;
    shape.height = shape.width = 32;
    shape.kernel_h = shape.kernel_w = shape.stride_h = shape.stride_w = 2;
    exec::cpu::Pool2dKernel pool(context, exec::kernels::PoolKind::max, shape);
    const int64_t in = shape.batch * channels * 32 * 32;
    const int64_t out = in / 4;
    Floats x = filled(in, 0.5f), y = filled(out, 0.0f), dx = filled(in, 0.0f);
    std::vector<std::byte> workspace(pool.workspace_bytes());
    const auto bytes = static_cast<double>(4 * (in + out) + static_cast<int64_t>(workspace.size()));
    const std::string name = fmt::format("maxpool2x2 32x{} 32x32", channels);
    timer.sample(all.max_pooling.forward, bytes, name + " fwd", "GB/s",
                 [&] { pool.forward(x.data(), y.data(), workspace.data()); });
    timer.sample(all.max_pooling.backward, bytes, name + " bwd", "GB/s",
                 [&] { pool.backward(y.data(), workspace.data(), dx.data()); });
  }
  for (int64_t elements : {int64_t{1} << 20, int64_t{1} << 22, int64_t{1} << 24}) {
    time_update(timer, samples.forward, elements);
  }
  // Not a point of any curve: its time caps their fixed cost per call. Timed with its arrays in
  // cache, as a small model's are from one step to the next: swept first, the 96 KB it moves
  // come from memory, which is a transfer, not a fixed cost (on 2 ranks per core it capped each
  // call at 17 us where the trainer's updates took 3 us).
  RateSamples short_call;
  all.short_call_seconds = time_update(timer, short_call, 4096, 64);
  // A fully connected layer on a few rows (a pipeline's micro-batch) reads its whole weight for
  // little arithmetic: memory-bound, at the rate the GEMM streams its operands, well below a
  // copy's. Bytes as the simulator counts them: x, W, b and y (forward); dy, W and dx (input
  // gradient); x, dy, dW and db (weight gradient).
  for (const auto& [rows, features] : std::vector<std::pair<int64_t, int64_t>>{{8, 2048}, {8, 4096}, {16, 4096}}) {
    exec::cpu::LinearKernel kernel(context, {rows, features, features, true});
    Floats x = filled(rows * features, 0.5f), w = filled(features * features, 0.01f), b = filled(features, 0.0f);
    Floats y = filled(rows * features, 0.0f), dx = filled(rows * features, 0.0f),
           dw = filled(features * features, 0.0f);
    const auto activations = static_cast<double>(4 * rows * features);
    const auto weights = static_cast<double>(4 * (features * features + features));
    const std::string name = fmt::format("linear {}x{}->{} (thin)", rows, features, features);
    timer.sample(all.thin_linear.forward, 2 * activations + weights, name + " fwd", "GB/s",
                 [&] { kernel.forward(x.data(), w.data(), b.data(), y.data()); });
    timer.sample(all.thin_linear.backward, 2 * activations + weights, name + " bwd data", "GB/s",
                 [&] { kernel.backward_data(y.data(), w.data(), dx.data()); });
    timer.sample(all.thin_linear.backward, 2 * activations + weights, name + " bwd weights", "GB/s",
                 [&] { kernel.backward_weights(x.data(), y.data(), dw.data(), b.data()); });
  }
  return all;
}

// Rates into curves relative to a peak: the asymptote as a fraction of it, capped at 1.
sim::EfficiencyCurve relative_curve(const SaturatingRate& rate, double peak) {
  return {std::min(1.0, rate.peak / peak), rate.half_size};
}

}  // namespace

void calibrate_kernels(const KernelCalibration& options, MPI_Comm comm, sim::Device& device) {
  int rank = 0;
  SB_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  KernelTimer timer(options, comm, rank == 0);
  exec::cpu::CpuContext context(1);
  const PassSamples conv = measure_conv(context, timer);
  const PassSamples gemm = measure_gemm(context, timer);
  const GemmRateTable gemm_table = measure_gemm_table(context, options.repeats, options.print && rank == 0, comm);
  const MemorySamples memory_samples = measure_memory(context, timer);
  const PassSamples& memory = memory_samples.common;

  const SaturatingRate conv_forward = fit_saturating_rate(conv.forward.sizes, conv.forward.rates);
  const SaturatingRate conv_backward = fit_saturating_rate(conv.backward.sizes, conv.backward.rates);
  const SaturatingRate gemm_forward = fit_saturating_rate(gemm.forward.sizes, gemm.forward.rates);
  const SaturatingRate gemm_backward = fit_saturating_rate(gemm.backward.sizes, gemm.backward.rates);
  const SaturatingRate conv_weights = fit_saturating_rate(conv.weight_gradient.sizes, conv.weight_gradient.rates);
  const SaturatingRate gemm_weights = fit_saturating_rate(gemm.weight_gradient.sizes, gemm.weight_gradient.rates);
  // The peak is the fastest rate seen anywhere, the curves' asymptotes and the table's shapes.
  const double peak = std::max({conv_forward.peak, conv_backward.peak, conv_weights.peak, gemm_forward.peak,
                                gemm_backward.peak, gemm_weights.peak, gemm_table.fastest()});
  device.peak_fp32_flops_per_second = device.peak_fp16_flops_per_second = device.peak_bf16_flops_per_second = peak;
  device.conv_efficiency = relative_curve(conv_forward, peak);
  device.gemm_efficiency = relative_curve(gemm_forward, peak);
  device.backward.conv = relative_curve(conv_backward, peak);
  device.backward.gemm = relative_curve(gemm_backward, peak);
  device.weight_gradient.conv = relative_curve(conv_weights, peak);
  device.weight_gradient.gemm = relative_curve(gemm_weights, peak);
  device.gemm_table = gemm_table.relative_to(peak);

  // Memory-bound rates, each kernel family on its own curve; the common one (the optimizer's
  // update, and ops without a curve of their own) has no backward.
  // No call is charged more fixed time than a short one takes in all.
  auto fit = [&](const RateSamples& samples) {
    SaturatingRate rate = fit_saturating_rate(samples.sizes, samples.rates);
    rate.half_size = std::min(rate.half_size, memory_samples.short_call_seconds * rate.peak);
    return rate;
  };
  const SaturatingRate memory_forward = fit(memory.forward);
  const SaturatingRate activation_forward = fit(memory_samples.activation.forward);
  const SaturatingRate activation_backward = fit(memory_samples.activation.backward);
  const SaturatingRate pooling_forward = fit(memory_samples.max_pooling.forward);
  const SaturatingRate pooling_backward = fit(memory_samples.max_pooling.backward);
  const SaturatingRate linear_forward = fit(memory_samples.thin_linear.forward);
  const SaturatingRate linear_backward = fit(memory_samples.thin_linear.backward);
  const double bandwidth =
      std::max({memory_forward.peak, activation_forward.peak, activation_backward.peak, pooling_forward.peak,
                pooling_backward.peak, linear_forward.peak, linear_backward.peak});
  device.memory_bandwidth_bytes_per_second = bandwidth;
  device.memory_efficiency = relative_curve(memory_forward, bandwidth);
  device.backward.memory.reset();
  const sim::Device::OpMemoryCurves activation{relative_curve(activation_forward, bandwidth),
                                               relative_curve(activation_backward, bandwidth)};
  device.op_memory_efficiency[model::OpKind::relu] = activation;
  device.op_memory_efficiency[model::OpKind::gelu] = activation;
  device.op_memory_efficiency[model::OpKind::maxpool] = {relative_curve(pooling_forward, bandwidth),
                                                         relative_curve(pooling_backward, bandwidth)};
  device.op_memory_efficiency[model::OpKind::linear] = {relative_curve(linear_forward, bandwidth),
                                                        relative_curve(linear_backward, bandwidth)};
  if (rank == 0 && options.print) {
    std::cout << fmt::format(
        "[calibrate] fitted rate(size) = peak * size / (size + half):\n"
        "[calibrate]   conv  forward {:6.1f}, input gradient {:6.1f}, weight gradient {:6.1f} GFLOP/s\n"
        "[calibrate]   gemm  forward {:6.1f}, input gradient {:6.1f}, weight gradient {:6.1f} GFLOP/s\n"
        "[calibrate]   optimizer update {:6.2f} GB/s; activations forward {:6.2f}, backward {:6.2f}; max pooling "
        "forward {:6.2f}, "
        "backward {:6.2f}; thin linear forward {:6.2f}, backward {:6.2f} GB/s\n",
        conv_forward.peak / 1e9, conv_backward.peak / 1e9, conv_weights.peak / 1e9, gemm_forward.peak / 1e9,
        gemm_backward.peak / 1e9, gemm_weights.peak / 1e9, memory_forward.peak / 1e9, activation_forward.peak / 1e9,
        activation_backward.peak / 1e9, pooling_forward.peak / 1e9, pooling_backward.peak / 1e9,
        linear_forward.peak / 1e9, linear_backward.peak / 1e9);
  }
}

}  // namespace splitbrain::tools
