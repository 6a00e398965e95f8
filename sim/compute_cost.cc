#include "sim/compute_cost.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <span>
#include <variant>
#include <vector>

#include "model/op_unit.h"
#include "model/statistics.h"
#include "plans/compiled_plan.h"
#include "plans/tensor_layout.h"
#include "sim/kernel_problem.h"

namespace splitbrain::sim {
namespace {

using model::Layer;
using model::OpKind;

// The bytes one rank moves to and from memory for the tensors a layer touches, for one
// micro-batch. Every figure is local (this rank's shard), in bytes.
struct LocalBytes {
  double inputs = 0;        // every input, in the layout the layer reads it
  double saved_inputs = 0;  // the inputs backward reads again (SavedForBackward::inputs)
  double input_grads = 0;   // gradients written for the inputs (none for token ids)
  double params = 0;        // parameters, and equally their gradients (kept in the model dtype)
  double output = 0;        // the output as written by forward
  double output_grad = 0;   // the gradient of the output, in the model dtype
  double extras = 0;        // masks, indices, probabilities kept for backward
};

// Local element counts: exact on a mesh, or `work_fraction` of the global count without one.
class LocalCounter {
 public:
  LocalCounter(const plans::Mesh* mesh, double work_fraction) : mesh_(mesh), work_fraction_(work_fraction) {}

  double count(const plans::TensorLayout& layout, std::span<const int64_t> global_shape) const {
    if (mesh_ != nullptr) return static_cast<double>(plans::local_element_count(layout, *mesh_, global_shape));
    double global = 1.0;
    for (int64_t extent : global_shape) global *= static_cast<double>(extent);
    return global * work_fraction_;
  }
  // Local elements of a [out_features, in_features] weight a linear multiplies by: its
  // features' local extents (the output's last dim by the input's), or work_fraction of the
  // whole without a mesh.
  double weight_block(const plans::TensorLayout& input, std::span<const int64_t> input_shape,
                      const plans::TensorLayout& output, std::span<const int64_t> output_shape) const {
    if (mesh_ == nullptr) return static_cast<double>(input_shape.back() * output_shape.back()) * work_fraction_;
    return static_cast<double>(plans::local_shape(input, *mesh_, input_shape).back() *
                               plans::local_shape(output, *mesh_, output_shape).back());
  }

 private:
  const plans::Mesh* mesh_;
  double work_fraction_;
};

LocalBytes local_bytes(const model::Model& model, const Layer& layer, const plans::LayerLayouts& layouts,
                       const LocalCounter& counter, int64_t micro_batch, model::DType dtype) {
  const auto element_bytes = static_cast<double>(model::bytes_per_element(dtype));
  LocalBytes bytes;
  const std::vector<int>& saved_positions = layer.cost.saved.inputs;
  for (size_t k = 0; k < layer.inputs.size() && k < layouts.inputs.size(); ++k) {
    const Layer& producer = model.layer(layer.inputs[k]);
    const std::vector<int64_t> shape = plans::activation_shape(producer, micro_batch);
    const double elements = counter.count(layouts.inputs[k], shape);
    const double read = elements * static_cast<double>(model::output_element_bytes(producer, dtype));
    bytes.inputs += read;
    if (std::find(saved_positions.begin(), saved_positions.end(), static_cast<int>(k)) != saved_positions.end()) {
      bytes.saved_inputs += read;
    }
    // A partial-sum input gradient is as large locally as a replicated one: the layout's local
    // count ignores partial axes, which is what the rank writes.
    if (!producer.output_is_tokens && k < layouts.input_gradients.size()) {
      bytes.input_grads += counter.count(layouts.input_gradients[k], shape) * element_bytes;
    }
  }
  for (const plans::ParameterShard& shard : layouts.parameters) {
    bytes.params += static_cast<double>(shard.local_elements) * element_bytes;
  }
  const std::vector<int64_t> out_shape = plans::activation_shape(layer, micro_batch);
  // A tied head owns no weight (the table is the embedding's), yet it reads its block of the
  // table forward and writes that block's gradient backward like any linear.
  // (On another stage than its table it holds a copy, counted with its parameters above.)
  if (layer.kind == OpKind::linear && !layer.attr<model::LinearAttrs>().tied_to.empty() && layouts.parameters.empty() &&
      !layouts.inputs.empty()) {
    const std::vector<int64_t> in_shape = plans::activation_shape(model.layer(layer.inputs[0]), micro_batch);
    bytes.params += counter.weight_block(layouts.inputs[0], in_shape, layouts.output, out_shape) * element_bytes;
  }
  const double out_elements = counter.count(layouts.output, out_shape);
  bytes.output = out_elements * static_cast<double>(model::output_element_bytes(layer, dtype));
  bytes.output_grad = layer.output_is_tokens ? 0.0 : out_elements * element_bytes;
  // Extras are per sample and follow the output's split (a pool index per output element, a
  // dropout mask per element, the loss's probabilities per row).
  const double global_out = static_cast<double>(micro_batch * model::num_elements(layer.output_shape));
  const double out_fraction = global_out > 0 ? out_elements / global_out : 0.0;
  const model::SavedForBackward& saved = layer.cost.saved;
  bytes.extras = static_cast<double>(micro_batch) *
                 (static_cast<double>(saved.extra_elements) * element_bytes + static_cast<double>(saved.extra_bytes)) *
                 out_fraction;
  return bytes;
}

// The op unit says whether the input gradient reads the saved tensors: conv2d and linear compute it
// from the output gradient and the weight alone (dX = dY W).
bool input_gradient_needs_saved_tensors(OpKind kind) { return model::op_unit(kind).input_gradient_reads_saved; }

// Roofline: the slower of doing the arithmetic and moving the bytes, each at its achieved rate.
// A phase without FLOPs is free (a view such as flatten, or a gradient nobody needs), except
// for the few ops that copy data without arithmetic (concat).
// `curve_size` is where the efficiency curve is read: the FLOPs, except for a convolution's weight
// gradient (see conv_weight_gradient_rows).
double phase_seconds(const Cluster& cluster, const Layer& layer, OpClass op_class, KernelPass pass, model::DType dtype,
                     double flops, double bytes, bool copies_without_flops, double curve_size = -1.0) {
  double seconds = 0.0;
  if (flops > 0.0) {
    seconds = flops / achieved_flops_per_second(cluster, op_class, dtype, curve_size >= 0.0 ? curve_size : flops, pass);
  } else if (!copies_without_flops) {
    return 0.0;
  }
  if (bytes > 0.0)
    seconds = std::max(seconds, bytes / achieved_memory_bytes_per_second(cluster, bytes, pass, layer.kind));
  return seconds;
}

// A convolution's weight gradient is one product whose reduction runs over every output pixel
// of every local sample (N x H_out x W_out): short reductions (small images, as deep in a CIFAR
// network) run far below the forward's rate at the same FLOPs, so its curve is read there.
double conv_weight_gradient_rows(const Layer& layer, const plans::LayerLayouts& layouts, const plans::Mesh* mesh,
                                 int64_t micro_batch) {
  const std::vector<int64_t> global = plans::activation_shape(layer, micro_batch);  // [N, C, H, W]
  if (global.size() != 4) return 0.0;
  if (mesh == nullptr) return static_cast<double>(global[0] * global[2] * global[3]) * layouts.work_fraction;
  const std::vector<int64_t> local = plans::local_shape(layouts.output, *mesh, global);
  return static_cast<double>(local[0] * local[2] * local[3]);
}

// `from` + (`to` - `from`) x f, pass by pass.
Device::MeasuredKernel between(const Device::MeasuredKernel& from, const Device::MeasuredKernel& to, double f) {
  const auto mix = [f](double a, double b) { return a + (b - a) * f; };
  return {mix(from.forward_seconds, to.forward_seconds),
          mix(from.backward_input_seconds, to.backward_input_seconds),
          mix(from.backward_weight_seconds, to.backward_weight_seconds),
          mix(from.forward_host_seconds, to.forward_host_seconds),
          mix(from.backward_input_host_seconds, to.backward_input_host_seconds),
          mix(from.backward_weight_host_seconds, to.backward_weight_host_seconds)};
}

// The problem's seconds with `busy` ranks of the node computing and the caches in state
// `caches`, between its time alone and beside them by `neighbours_busy`; nullopt when calibrate
// did not measure it with `busy` ranks.
std::optional<Device::MeasuredKernel> measured_exactly(const std::map<std::string, Device::MeasuredKernel>& table,
                                                       const KernelProblem& problem, int busy, CacheState caches,
                                                       double neighbours_busy) {
  const auto shared = table.find(kernel_key(problem, busy, caches));
  if (shared == table.end()) return std::nullopt;
  const auto alone = table.find(kernel_key(problem, 1, caches));
  if (busy == 1 || alone == table.end() || neighbours_busy >= 1.0) return shared->second;
  return between(alone->second, shared->second, std::max(0.0, neighbours_busy));
}

// Every pass's seconds times `factor`; the host's to queue them stay (the same calls, on more or
// less work).
Device::MeasuredKernel scaled(const Device::MeasuredKernel& kernel, double factor) {
  Device::MeasuredKernel out = kernel;
  out.forward_seconds *= factor;
  out.backward_input_seconds *= factor;
  out.backward_weight_seconds *= factor;
  return out;
}

// As measured_exactly; a problem calibrate did not time (a plan it was not run for, another
// micro-batch) is read from the same problem with the nearest amount of work it did time, 2, 4,
// 8 or 16 times more or less, in proportion to the work (the mean of both where both were
// timed). The exact shape's own efficiency is lost, but a sibling's measurement stays closer
// than the FLOP-sized curves (seen: vgg11's conv6 split by input channels, 16 samples: the curves
// priced its weight gradient near 3x what 8 samples' measurement gives, and the whole plan's step
// 34% over the measured one, against 13% from the sibling). Beyond 16 times, the curves.
std::optional<Device::MeasuredKernel> measured_at(const std::map<std::string, Device::MeasuredKernel>& table,
                                                  const KernelProblem& problem, int busy, CacheState caches,
                                                  double neighbours_busy) {
  if (auto exact = measured_exactly(table, problem, busy, caches, neighbours_busy)) return exact;
  const int64_t items = work_items(problem);
  // The sibling with `sibling_items` of work, scaled to this problem's; nullopt where unmeasured.
  auto estimate_from = [&](int64_t sibling_items) -> std::optional<Device::MeasuredKernel> {
    const auto sibling =
        measured_exactly(table, with_work_items(problem, sibling_items), busy, caches, neighbours_busy);
    if (!sibling) return std::nullopt;
    return scaled(*sibling, static_cast<double>(items) / static_cast<double>(sibling_items));
  };
  for (const int64_t factor : {2, 4, 8, 16}) {
    const auto larger = estimate_from(items * factor);
    const auto smaller = items >= factor && items % factor == 0 ? estimate_from(items / factor) : std::nullopt;
    if (larger && smaller) return between(*larger, *smaller, 0.5);
    if (larger || smaller) return larger ? larger : smaller;
  }
  return std::nullopt;
}

// The seconds `splitbrain calibrate --model` measured for this layer's exact kernel problem,
// when it did; fp32 only (the executor's kernels are fp32), under `conditions`
// (layer_compute_seconds).
std::optional<Device::MeasuredKernel> measured_kernel(const Cluster& cluster, const model::Model& model, int index,
                                                      const plans::LayerLayouts& layouts, const plans::Mesh* mesh,
                                                      int64_t micro_batch, model::DType dtype,
                                                      const NodeConditions& conditions) {
  const std::map<std::string, Device::MeasuredKernel>& table = cluster.device.measured_kernels;
  if (mesh == nullptr || dtype != model::DType::fp32 || table.empty()) return std::nullopt;
  const std::optional<KernelProblem> problem = kernel_problem(model, index, layouts, *mesh, micro_batch);
  if (!problem) return std::nullopt;
  const int busy = busy_ranks_per_node(cluster, *mesh);
  const std::optional<Device::MeasuredKernel> swept =
      measured_at(table, *problem, busy, CacheState::swept, conditions.neighbours_busy);
  if (!swept || conditions.caches_warm <= 0.0) return swept;
  const std::optional<Device::MeasuredKernel> warm =
      measured_at(table, *problem, busy, CacheState::warm, conditions.neighbours_busy);
  if (!warm) return swept;
  return between(*swept, *warm, std::min(1.0, conditions.caches_warm));
}

// Bytes the executor moves through memory around a height split's halo exchange, besides the
// exchange itself (exec/ops/halo_in_backend.h), with b the block's bytes and h the bytes of one
// side's halo rows. Forward: the block is copied into its extended array by rows (read b, write
// b); its boundary rows are cut out (read 2h, write 2h), brought to a zero-filled host array (write
// 2h; read 2h, write 2h), and each side's rows from the neighbours go up (read h, write h) and into
// place (read h, write h): 2b + 18h. Backward: the extended gradient's own rows are copied out (2b);
// where the group has others, its boundary rows go to the host as forward's (10h), and for each
// side with a neighbour the block's rows there are cut out (2h), brought to a zero-filled host
// array (h; 2h), the neighbour's part added (read 2h, write h), and put back (2h; 2h): 12h a side,
// priced for a rank with the most neighbours.
struct HaloCopyBytes {
  double forward = 0.0;
  double backward = 0.0;
};
HaloCopyBytes halo_copy_bytes(const plans::LayerLayouts& layouts, const LocalBytes& b) {
  if (layouts.forward_internal.empty() ||
      layouts.forward_internal.front().kind != plans::CollectiveKind::halo_exchange) {
    return {};
  }
  const plans::Collective& halo = layouts.forward_internal.front();
  const double h = static_cast<double>(halo.halo_rows * halo.row_bytes);
  const double sides = std::min(2, std::max(0, halo.group_size - 1));
  const double boundary_to_host = halo.group_size > 1 ? 10.0 * h : 0.0;
  return {2.0 * b.inputs + 18.0 * h, 2.0 * b.inputs + boundary_to_host + 12.0 * h * sides};
}

// A measured kernel's seconds plus what the executor does around the kernel, at the memory
// rate: every array it hands a kernel is zero-filled first (output, input gradient), and a
// convolution's weight gradient is written to a fresh zero-filled array and then added into the
// accumulated one (zero-fill, read both, write one: four passes over the local parameters); a
// linear layer's accumulates in place.
// Layers without parameters (pooling, activations) have no weight gradient.
LayerComputeSeconds measured_seconds(const Cluster& cluster, const Layer& layer, const plans::LayerLayouts& layouts,
                                     const Device::MeasuredKernel& kernel, const LocalBytes& b) {
  const auto pass_seconds = [&](double bytes) { return streaming_pass_seconds(cluster, bytes); };
  const HaloCopyBytes halo = halo_copy_bytes(layouts, b);
  LayerComputeSeconds seconds;
  seconds.forward = kernel.forward_seconds + pass_seconds(b.output) + pass_seconds(halo.forward);
  if (layer.needs_input_gradient) {
    seconds.backward_input = kernel.backward_input_seconds + pass_seconds(b.input_grads) + pass_seconds(halo.backward);
  }
  // A linear layer's kernel accumulates its weight gradient inside the GEMM (no temporary).
  const double weight_passes = layer.kind == OpKind::conv2d ? 4.0 : 0.0;
  if (b.params > 0.0) seconds.backward_weight = kernel.backward_weight_seconds + pass_seconds(weight_passes * b.params);
  // The host queues the kernels and each zero-fill (and a convolution's addition) beside them.
  const double launch = cluster.device.launch_host_seconds;
  seconds.forward_host = kernel.forward_host_seconds + launch;
  seconds.backward_host = kernel.backward_input_host_seconds + (layer.needs_input_gradient ? launch : 0.0);
  if (b.params > 0.0) {
    seconds.backward_host += kernel.backward_weight_host_seconds + (layer.kind == OpKind::conv2d ? 2.0 * launch : 0.0);
  }
  return seconds;
}

// The attention core as the kernels that compute it (the executor's, and Megatron-LM's unfused
// path): its two products per pass on the GEMM curve, and the passes of the s x s score
// matrix through memory between them, each at the memory rate. Forward: Q K^T writes the
// scores, scale/mask/softmax reads them and writes the probabilities, P V reads those (three
// passes). Backward: dY V^T writes dP, the softmax gradient reads P and dP and writes dS, dQ
// and dK read dS, P^T dY reads P (six). Dropout on the probabilities adds a pass that reads P
// and writes the dropped copy and its one-byte mask, and one back. A fused attention's backward
// computes the scores again first (a third product, Q K^T) and makes its probabilities from them
// and the kept row statistics in place (three passes more: the scores written, read and
// written). A single roofline over the
// whole op would hide those passes behind the products; for long sequences they take as long.
LayerComputeSeconds attention_seconds(const Cluster& cluster, const Layer& layer, const LocalBytes& b, double scale,
                                      model::DType dtype) {
  const double tokens = static_cast<double>(layer.output_shape.front());  // output [tokens, hidden] per sample
  const double hidden = static_cast<double>(layer.output_shape.back());
  const double product_flops = 4 * tokens * tokens * hidden * scale;  // Q K^T and P V, 2 FLOPs per MAC
  const auto& a = layer.attr<model::SelfAttentionAttrs>();
  // One pass over the local scores: heads x tokens of them per element of a local output row.
  const double score_pass = b.output * static_cast<double>(a.heads) * tokens / hidden;
  const double mask_pass = a.dropout > 0.0 ? score_pass / static_cast<double>(model::bytes_per_element(dtype)) : 0.0;
  const double dropout_passes = a.dropout > 0.0 ? 2.0 : 0.0;
  // Rotary positions turn the dense per-head copies of q and of k (a group's k copied to each of
  // its heads: as many bytes as the output each), read and written once forward; backward turns
  // them again and turns their gradients back (exec/cpu/attention.h).
  const double rotated = a.rope_theta > 0.0 ? 2.0 * b.output : 0.0;
  const double recomputed_product_flops = a.fused ? product_flops / 2.0 : 0.0;
  const double recompute_passes = a.fused ? 3.0 : 0.0;
  LayerComputeSeconds seconds;
  seconds.forward = phase_seconds(cluster, layer, OpClass::gemm, KernelPass::forward, dtype, product_flops,
                                  b.inputs + 2.0 * b.output, false) +
                    streaming_pass_seconds(cluster, (3.0 + dropout_passes) * score_pass + mask_pass + 2.0 * rotated);
  if (layer.needs_input_gradient) {
    seconds.backward_input = phase_seconds(cluster, layer, OpClass::gemm, KernelPass::backward, dtype,
                                           2.0 * product_flops + recomputed_product_flops,
                                           b.output_grad + b.saved_inputs + 2.0 * b.input_grads, false) +
                             streaming_pass_seconds(cluster, (6.0 + dropout_passes + recompute_passes) * score_pass +
                                                                 mask_pass + 4.0 * rotated);
  }
  return seconds;
}

// The local product a linear layer runs: on a mesh, its kernel problem's (sim/kernel_problem.h);
// without one, `work_fraction` of the rows (where the split falls is unknown).
GemmShape linear_gemm_shape(const model::Model& model, int index, const plans::LayerLayouts& layouts,
                            const plans::Mesh* mesh, int64_t micro_batch) {
  if (mesh != nullptr) {
    const auto p = std::get<LinearProblem>(kernel_problem(model, index, layouts, *mesh, micro_batch).value());
    return {static_cast<double>(p.rows), static_cast<double>(p.out_features), static_cast<double>(p.in_features)};
  }
  const Layer& layer = model.layer(index);
  const std::vector<int64_t> in = plans::activation_shape(model.layer(layer.inputs[0]), micro_batch);
  double rows = layouts.work_fraction;
  for (size_t d = 0; d + 1 < in.size(); ++d) rows *= static_cast<double>(in[d]);
  return {rows, static_cast<double>(layer.output_shape.back()), static_cast<double>(in.back())};
}

// A linear layer priced by the device's GEMM table: each pass's FLOPs at the efficiency measured
// for its shape. The table timed the executor's whole kernel, its memory traffic included, so
// no roofline on top; the zero-filled arrays the executor hands the kernel (output, input
// gradient) are passes at the memory rate, as for a measured problem. The weight gradient
// accumulates inside its GEMM (no temporary).
LayerComputeSeconds linear_table_seconds(const Cluster& cluster, const model::Model& model, int index,
                                         const plans::LayerLayouts& layouts, const plans::Mesh* mesh,
                                         int64_t micro_batch, model::DType dtype, const LocalBytes& b) {
  const GemmEfficiencyTable& table = *cluster.device.gemm_table;
  const Layer& layer = model.layer(index);
  const GemmShape shape = linear_gemm_shape(model, index, layouts, mesh, micro_batch);
  const double scale = static_cast<double>(micro_batch) * layouts.work_fraction;
  const double peak = cluster.device.peak_flops_per_second(dtype);
  const auto kernel_seconds = [&](double flops, KernelPass pass) {
    return flops > 0.0 ? flops / (peak * gemm_table_efficiency(table, pass, shape)) : 0.0;
  };
  LayerComputeSeconds seconds;
  seconds.forward =
      kernel_seconds(layer.cost.forward_flops * scale, KernelPass::forward) + streaming_pass_seconds(cluster, b.output);
  if (layer.needs_input_gradient) {
    seconds.backward_input = kernel_seconds(layer.cost.backward_input_flops * scale, KernelPass::backward) +
                             streaming_pass_seconds(cluster, b.input_grads);
  }
  if (b.params > 0.0)
    seconds.backward_weight = kernel_seconds(layer.cost.backward_weight_flops * scale, KernelPass::weight_gradient);
  return seconds;
}

LayerComputeSeconds compute_seconds(const Cluster& cluster, const model::Model& model, int index,
                                    const plans::LayerLayouts& layouts, const plans::Mesh* mesh, int64_t micro_batch,
                                    model::DType dtype, const NodeConditions& conditions) {
  const Layer& layer = model.layer(index);
  LayerComputeSeconds seconds;
  if (micro_batch <= 0 || layouts.work_fraction <= 0.0) return seconds;
  const LocalCounter counter(mesh, layouts.work_fraction);
  const LocalBytes b = local_bytes(model, layer, layouts, counter, micro_batch, dtype);
  if (const auto kernel = measured_kernel(cluster, model, index, layouts, mesh, micro_batch, dtype, conditions)) {
    return measured_seconds(cluster, layer, layouts, *kernel, b);
  }
  const double scale = static_cast<double>(micro_batch) * layouts.work_fraction;
  if (layer.kind == OpKind::self_attention) return attention_seconds(cluster, layer, b, scale, dtype);
  if (layer.kind == OpKind::linear && cluster.device.gemm_table && !layouts.inputs.empty()) {
    return linear_table_seconds(cluster, model, index, layouts, mesh, micro_batch, dtype, b);
  }
  const OpClass op_class = op_class_of(layer);
  const bool copies = layer.kind == OpKind::concat;
  const double saved = b.saved_inputs + (layer.cost.saved.output ? b.output : 0.0) + b.extras;

  // Forward reads the inputs and the parameters, writes the output (and any masks or indices).
  // The executor hands every kernel a zero-filled array (its arrays are value-initialised), so
  // outputs and input gradients are written twice: a third more traffic for a memory-bound op.
  seconds.forward =
      phase_seconds(cluster, layer, op_class, KernelPass::forward, dtype, layer.cost.forward_flops * scale,
                    b.inputs + b.params + 2.0 * b.output + b.extras, copies);
  // Input gradient: reads the output gradient and the parameters (+ the saved tensors where
  // the op needs them), writes the input gradients.
  if (layer.needs_input_gradient) {
    const double reads = b.output_grad + b.params + (input_gradient_needs_saved_tensors(layer.kind) ? saved : 0.0);
    seconds.backward_input =
        phase_seconds(cluster, layer, op_class, KernelPass::backward, dtype, layer.cost.backward_input_flops * scale,
                      reads + 2.0 * b.input_grads, copies);
  }
  const HaloCopyBytes halo = halo_copy_bytes(layouts, b);
  seconds.forward += streaming_pass_seconds(cluster, halo.forward);
  if (layer.needs_input_gradient) seconds.backward_input += streaming_pass_seconds(cluster, halo.backward);
  // Weight gradient: reads the output gradient and the saved input, writes the parameter
  // gradient (as large as the local parameters).
  if (b.params > 0.0) {
    // Only a calibrated weight-gradient curve is sized in output pixels; the others in FLOPs.
    const bool by_rows = layer.kind == OpKind::conv2d && cluster.device.weight_gradient.conv.has_value();
    const double curve_size = by_rows ? conv_weight_gradient_rows(layer, layouts, mesh, micro_batch) : -1.0;
    seconds.backward_weight =
        phase_seconds(cluster, layer, op_class, KernelPass::weight_gradient, dtype,
                      layer.cost.backward_weight_flops * scale, b.output_grad + saved + b.params, false, curve_size);
  }
  return seconds;
}

}  // namespace

LayerComputeSeconds layer_compute_seconds(const Cluster& cluster, const model::Model& model, int index,
                                          const plans::LayerLayouts& layouts, int64_t micro_batch, model::DType dtype) {
  return compute_seconds(cluster, model, index, layouts, nullptr, micro_batch, dtype, NodeConditions{});
}

LayerComputeSeconds layer_compute_seconds(const Cluster& cluster, const model::Model& model, int index,
                                          const plans::LayerLayouts& layouts, const plans::Mesh& mesh,
                                          int64_t micro_batch, model::DType dtype, NodeConditions conditions) {
  return compute_seconds(cluster, model, index, layouts, &mesh, micro_batch, dtype, conditions);
}

double caches_warm_fraction(const Cluster& cluster, const plans::Mesh& mesh, double peak_bytes_per_rank) {
  const double cache_bytes = cluster.device.last_level_cache_bytes;
  if (cache_bytes <= 0.0) return 0.0;
  const double node_bytes = peak_bytes_per_rank * busy_ranks_per_node(cluster, mesh);
  return node_bytes <= cache_bytes ? 1.0 : cache_bytes / node_bytes;
}

double streaming_pass_seconds(const Cluster& cluster, double bytes) {
  return bytes > 0.0 ? bytes / achieved_memory_bytes_per_second(cluster, bytes) : 0.0;
}

double host_transfer_seconds(const Device& device, int64_t bytes) {
  if (device.host_to_device_bytes_per_second <= 0.0) return 0.0;
  return device.host_transfer_latency_seconds + static_cast<double>(bytes) / device.host_to_device_bytes_per_second;
}

double optimizer_step_seconds(const Cluster& cluster, const plans::Plan& plan, int64_t local_parameter_elements) {
  if (local_parameter_elements <= 0) return 0.0;
  const int64_t element_bytes = model::bytes_per_element(plan.dtype);
  // Low-precision training keeps an fp32 master copy that the update reads and writes too.
  const int64_t master_bytes = plan.dtype == model::DType::fp32 ? 0 : 4;
  const int64_t bytes_per_parameter = element_bytes + plans::gradient_element_bytes(plan) +
                                      plans::optimizer_state_bytes_per_parameter(plan.optimizer.kind) + master_bytes;
  // Every byte is read once and written once (a fused update kernel).
  const double bytes = 2.0 * static_cast<double>(local_parameter_elements * bytes_per_parameter);
  return bytes / achieved_memory_bytes_per_second(cluster, bytes);
}

double gradient_accumulation_seconds(const Cluster& cluster, const plans::Plan& plan,
                                     const plans::LayerLayouts& layouts) {
  const int64_t compute_bytes = model::bytes_per_element(plan.dtype);
  const int64_t accumulator_bytes = plans::gradient_element_bytes(plan);
  if (accumulator_bytes == compute_bytes) return 0.0;
  int64_t local_parameters = 0;
  for (const plans::ParameterShard& shard : layouts.parameters) local_parameters += shard.local_elements;
  // Read the computed gradient and the accumulator, write the accumulator.
  return streaming_pass_seconds(cluster,
                                static_cast<double>(local_parameters * (compute_bytes + 2 * accumulator_bytes)));
}

OpClass op_class_of(const model::Layer& layer) {
  switch (model::op_unit(layer.kind).arithmetic) {
    case model::ArithmeticPattern::convolution:
      return OpClass::conv;
    case model::ArithmeticPattern::matrix_product:
      return OpClass::gemm;
    case model::ArithmeticPattern::elementwise:
      return OpClass::elementwise;
  }
  return OpClass::elementwise;
}

}  // namespace splitbrain::sim
