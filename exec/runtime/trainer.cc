#include "exec/runtime/trainer.h"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <stdexcept>
#include <utility>

#include "exec/comm/mpi_check.h"
#include "exec/comm/redistribution_runner.h"
#include "exec/runtime/correct_predictions.h"
#include "exec/runtime/micro_batch_state.h"
#include "exec/runtime/parameter_init.h"
#include "exec/runtime/tied_parameters.h"
#include "exec/runtime/zero_sharding.h"
#include "model/errors.h"
#include "model/statistics.h"
#include "plans/pipeline_order.h"
#include "plans/step_compiler.h"
#include "plans/redistribution.h"

namespace splitbrain::exec {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::vector<int64_t> local_shape_of(const plans::TensorLayout& layout, const plans::Mesh& mesh,
                                    const std::vector<int64_t>& global) {
  return plans::local_shape(layout, mesh, global);
}

// Whether this rank is the first of the group over `axes` (its rows are the group's).
bool first_in_group(const plans::Mesh& mesh, int rank, const std::vector<int>& axes) {
  return axes.empty() || mesh.index_in_group(rank, axes) == 0;
}

std::vector<int> axes_not_splitting(const plans::TensorLayout& layout, const plans::Mesh& mesh) {
  std::vector<int> axes;
  for (int axis = 0; axis < mesh.axis_count(); ++axis) {
    bool used = false;
    for (const auto& dim : layout.dim_axes) used = used || std::find(dim.begin(), dim.end(), axis) != dim.end();
    if (!used) axes.push_back(axis);
  }
  return axes;
}

comm::CollectiveEngine& engine_of(const Backend& backend) {
  if (!backend.collectives) throw std::invalid_argument(fmt::format("backend '{}' has no collective engine", backend.name));
  return *backend.collectives;
}

}  // namespace

Trainer::Trainer(const plans::Plan& plan, Backend backend, uint64_t seed)
    : plan_(plan), compiled_(plans::compile_plan(plan)), backend_(std::move(backend)),
      communicators_(engine_of(backend_).communicators()), communicator_(engine_of(backend_)), seed_(seed) {
  check_tied_weights(plan, compiled_);
  const model::Model& net = *plan.model;
  const plans::Mesh& mesh = plan.mesh;
  const int rank = communicators_.rank();
  stage_ = plan.pipe_axis >= 0 ? mesh.coordinate(rank, plan.pipe_axis) : 0;

  // Every communicator the plan needs, created up front: creation is collective over all ranks.
  // (The pipe axis is the stage links', which stay on MPI: stage_link.h.)
  std::vector<std::vector<int>> axis_sets;
  auto note = [&](const plans::Collective& c) { axis_sets.push_back(c.axes); };
  for (const plans::CompiledLayer& layer : compiled_.layers) {
    for (const auto& input : layer.inputs) {
      for (const auto& c : input.forward) note(c);
      for (const auto& c : input.backward) note(c);
    }
    for (const auto& c : layer.layouts.forward_internal) note(c);
    for (const auto& c : layer.layouts.backward_internal) note(c);
    for (const auto& c : layer.parameter_gathers) note(c);
  }
  for (const auto& bucket : compiled_.buckets) {
    for (const auto& c : bucket.reduction) note(c);
    for (const auto& c : bucket.gather) note(c);
  }
  if (plan.pipe_axis >= 0) axis_sets.push_back({plan.pipe_axis});
  backend_.collectives->prepare(axis_sets);
  link_ = std::make_unique<StageLink>(communicator_, plan.pipe_axis, plan.micro_batches);
  // The step's order comes from the rank's step program (plans/step_compiler.h), the one the
  // simulator walks: which pass runs when, and which buckets start during the backward.
  const plans::StepProgram program = plans::compile_step(plan, compiled_, rank);
  passes_ = plans::pass_sequence(program);
  for (const std::vector<int>& started : plans::buckets_started_after(program, net.size())) {
    buckets_ready_after_.emplace_back(started.begin(), started.end());
    overlap_ = overlap_ || !started.empty();
  }

  optimizer_ = std::make_unique<Optimizer>(plan.optimizer, memory_);
  ops_.resize(static_cast<size_t>(net.size()));
  contexts_.resize(static_cast<size_t>(net.size()));
  parameters_.resize(static_cast<size_t>(net.size()));
  const int64_t micro_batch = compiled_.micro_batch;
  for (int v = 0; v < net.size(); ++v) {
    const model::Layer& layer = net.layer(v);
    const plans::LayerLayouts& layouts = compiled_.layers[static_cast<size_t>(v)].layouts;
    OpContext& ctx = contexts_[static_cast<size_t>(v)];
    ctx.model = &net;
    ctx.layer = v;
    ctx.layouts = &layouts;
    ctx.mesh = &mesh;
    ctx.rank = rank;
    for (size_t p = 0; p < layer.inputs.size(); ++p) {
      const auto global = plans::activation_shape(net.layer(layer.inputs[p]), micro_batch);
      ctx.input_shapes.push_back(local_shape_of(layouts.inputs[p], mesh, global));
    }
    ctx.output_global_shape = plans::activation_shape(layer, micro_batch);
    ctx.output_shape = local_shape_of(layouts.output, mesh, ctx.output_global_shape);
    ctx.output_offset = plans::local_offset(layouts.output, mesh, ctx.output_global_shape, rank);
    ctx.adds_bias = first_in_group(mesh, rank, layouts.output.partial_axes);
    ctx.seed = seed;
    ctx.global_batch = plan.global_batch;
    ctx.communicator = &communicator_;
    ctx.labels = [this](int micro, int64_t first, int64_t count) {
      return data_->labels(steps_, micro * compiled_.micro_batch + first, count);
    };
    if (!on_my_stage(v)) continue;  // another stage holds this layer
    LayerParameters& params = parameters_[static_cast<size_t>(v)];
    // ZeRO keeps sharded layers' model states as slices (setup_zero): stage 3's whole parameters
    // exist here only to be cut, stage 2-3's whole gradients only during backward.
    const bool sharded = zero_shards(v);
    // Stage 3's whole parameters are a set-up transient, cut before the first step: not a step's
    // memory, so not tracked.
    const bool cut_at_setup = sharded && plan.zero_stage >= 3;
    for (size_t k = 0; k < layouts.parameters.size(); ++k) {
      const plans::ParameterShard& shard = layouts.parameters[k];
      const auto shape = local_shape_of(shard.layout, mesh, shard.global_shape);
      ctx.parameter_shapes.push_back(shape);
      TrackedArray value = cut_at_setup ? std::make_shared<comm::LocalArray>(comm::LocalArray{
                                              shape, std::vector<float>(static_cast<size_t>(comm::element_count(shape)), 0.0f)})
                                        : make_tracked(memory_, MemoryCategory::params, shape);
      initialize_parameter(layer, v, static_cast<int>(k), shard, plans::local_offset(shard.layout, mesh, shard.global_shape, rank),
                           seed, *value);
      params.values.push_back(value);
      params.grads.push_back(sharded && plan.zero_stage >= 2 ? nullptr : make_tracked(memory_, MemoryCategory::grads, shape));
      if (!sharded) optimizer_->add_parameter(static_cast<int64_t>(value->values.size()));
    }
    if (layer.kind != model::OpKind::input) ops_[static_cast<size_t>(v)] = backend_.ops(ctx);
    if (layer.kind == model::OpKind::softmax_cross_entropy) {
      // Ranks that hold the same loss rows (replicas on axes that do not split them; the pipe
      // axis does not count: only the last stage has a loss) report it once.
      std::vector<int> replicas = axes_not_splitting(layouts.inputs[0], mesh);
      std::erase(replicas, plan.pipe_axis);
      counts_loss_ = first_in_group(mesh, rank, replicas);
    }
  }
  setup_zero();
}

Trainer::~Trainer() = default;

TrackedArray Trainer::read_input(int layer, int micro) {
  const OpContext& ctx = contexts_[static_cast<size_t>(layer)];
  // The batch block this rank holds, read whole; channel or height splits are cut afterwards.
  std::vector<int64_t> whole = ctx.output_global_shape;
  whole[0] = ctx.output_shape[0];
  comm::LocalArray samples;
  samples.shape = whole;
  samples.values.resize(static_cast<size_t>(comm::element_count(whole)));
  data_->images(steps_, micro * compiled_.micro_batch + ctx.output_offset[0], whole[0], samples.values.data());
  if (whole == ctx.output_shape) return adopt_tracked(memory_, MemoryCategory::activations, std::move(samples));
  std::vector<int64_t> offset = ctx.output_offset;
  offset[0] = 0;
  comm::LocalArray block = comm::to_floats(comm::sub_array(comm::to_bytes(samples), offset, ctx.output_shape));
  return adopt_tracked(memory_, MemoryCategory::activations, std::move(block));
}

void Trainer::send_forward(int producer, int micro, const TrackedArray& output) {
  const model::Model& net = *plan_.model;
  for (int consumer : net.layer(producer).consumers) {
    const plans::CompiledLayer& compiled = compiled_.layers[static_cast<size_t>(consumer)];
    for (size_t p = 0; p < compiled.inputs.size(); ++p) {
      const plans::InputTransfer& transfer = compiled.inputs[p];
      if (transfer.producer != producer || !transfer.forward_send) continue;
      link_->send(output, *transfer.forward_send, link_->tag(consumer, static_cast<int>(p), micro, false),
                  net.layer(consumer).name + "/forward");
    }
  }
}

void Trainer::forward(int micro, MicroBatchState& state, StepSeconds& seconds) {
  const model::Model& net = *plan_.model;
  for (int v = 0; v < net.size(); ++v) {
    if (!on_my_stage(v)) continue;
    const model::Layer& layer = net.layer(v);
    const plans::CompiledLayer& compiled = compiled_.layers[static_cast<size_t>(v)];
    const plans::LayerLayouts& layouts = compiled.layouts;
    if (layer.kind == model::OpKind::input) {
      if (state.recomputing) continue;  // kept from the first forward
      state.outputs[static_cast<size_t>(v)] = read_input(v, micro);
      send_forward(v, micro, state.outputs[static_cast<size_t>(v)]);
      continue;
    }
    const auto communication_start = Clock::now();
    std::vector<const comm::LocalArray*> inputs;
    for (size_t p = 0; p < layer.inputs.size(); ++p) {
      const int u = layer.inputs[p];
      const plans::InputTransfer& transfer = compiled.inputs[p];
      TrackedArray input = state.outputs[static_cast<size_t>(u)];
      if (transfer.forward_send && state.recomputing) {  // kept from the first forward
        input = state.received.at({v, static_cast<int>(p)});
      } else if (transfer.forward_send) {  // the producer sits on an earlier stage
        input = adopt_tracked(memory_, MemoryCategory::activations,
                              link_->receive(contexts_[static_cast<size_t>(u)].output_shape, *transfer.forward_send,
                                             link_->tag(v, static_cast<int>(p), micro, false)));
        if (plan_.recompute_activations) state.received[{v, static_cast<int>(p)}] = input;
      }
      const plans::TensorLayout& from = compiled_.layers[static_cast<size_t>(u)].layouts.output;
      const auto global = plans::activation_shape(net.layer(u), compiled_.micro_batch);
      const auto steps = plans::plan_redistribution(from, layouts.inputs[p], plan_.mesh, global,
                                                    model::output_element_bytes(net.layer(u), plan_.dtype));
      if (!steps.empty()) {
        input = adopt_tracked(memory_, MemoryCategory::activations,
                              comm::run_redistribution(communicator_, steps, global, *input, layer.name + "/forward"));
      }
      state.inputs[static_cast<size_t>(v)].push_back(input);
      inputs.push_back(input.get());
    }
    seconds.communication += seconds_since(communication_start);
    record(fmt::format("fwd {} mb{}", layer.name, micro), true, communication_start);
    const auto compute_start = Clock::now();
    TrackedArray output = make_tracked(memory_, MemoryCategory::activations, contexts_[static_cast<size_t>(v)].output_shape);
    gather_parameters(v, seconds);
    const ParameterViews params = parameter_views(plan_, compiled_, communicators_.rank(), parameters_, v);
    const int64_t kept = ops_[static_cast<size_t>(v)]->kept_bytes();
    ops_[static_cast<size_t>(v)]->forward(micro, steps_, inputs, params.values, *output);
    count_kept_by_op(v, kept);
    release_gathered_parameters(v);
    state.outputs[static_cast<size_t>(v)] = output;
    seconds.compute_forward += seconds_since(compute_start);
    record(fmt::format("{} {} mb{}", state.recomputing ? "refwd" : "fwd", layer.name, micro), false, compute_start);
    if (!state.recomputing) send_forward(v, micro, output);
    release_after_forward(v, state);
    link_->progress();
  }
}

void Trainer::backward(int micro, MicroBatchState& state, StepSeconds& seconds) {
  const model::Model& net = *plan_.model;
  for (int v = net.size() - 1; v >= 0; --v) {
    const model::Layer& layer = net.layer(v);
    if (layer.kind == model::OpKind::input || !on_my_stage(v)) continue;
    const plans::CompiledLayer& compiled = compiled_.layers[static_cast<size_t>(v)];
    TrackedArray& output_grad = state.output_grads[static_cast<size_t>(v)];
    // Gradients from consumers on later stages arrive over the pipeline.
    for (int consumer : layer.consumers) {
      const plans::CompiledLayer& later = compiled_.layers[static_cast<size_t>(consumer)];
      for (size_t p = 0; p < later.inputs.size(); ++p) {
        const plans::InputTransfer& transfer = later.inputs[p];
        if (transfer.producer != v || !transfer.backward_send) continue;
        TrackedArray grad = adopt_tracked(memory_, MemoryCategory::buffers,
                                          link_->receive(contexts_[static_cast<size_t>(v)].output_shape, *transfer.backward_send,
                                                         link_->tag(consumer, static_cast<int>(p), micro, true)));
        if (!output_grad) {
          output_grad = std::move(grad);
        } else {
          for (size_t i = 0; i < grad->values.size(); ++i) output_grad->values[i] += grad->values[i];
        }
      }
    }
    if (!output_grad) output_grad = make_tracked(memory_, MemoryCategory::buffers, contexts_[static_cast<size_t>(v)].output_shape);

    const auto compute_start = Clock::now();
    std::vector<const comm::LocalArray*> inputs;
    std::vector<comm::LocalArray> input_grads;
    int64_t input_grad_bytes = 0;  // the backward's working set, with the output gradients
    for (const TrackedArray& input : state.inputs[static_cast<size_t>(v)]) {
      inputs.push_back(input.get());
      // A layer whose inputs need no gradient (nothing upstream learns) skips computing it.
      if (!layer.needs_input_gradient) continue;
      comm::LocalArray grad;
      grad.shape = input->shape;  // a released input keeps its shape
      grad.values.assign(static_cast<size_t>(comm::element_count(grad.shape)), 0.0f);
      input_grad_bytes += static_cast<int64_t>(grad.values.size() * sizeof(float));
      input_grads.push_back(std::move(grad));
    }
    memory_.allocate(MemoryCategory::buffers, input_grad_bytes);
    gather_parameters(v, seconds);
    ensure_gradient_accumulators(v);
    // A tied head adds into its embedding's gradient, which ZeRO 2 creates at first use.
    if (const int table = tied_table_layer(net, v); table >= 0) ensure_gradient_accumulators(table);
    const ParameterViews params = parameter_views(plan_, compiled_, communicators_.rank(), parameters_, v);
    ops_[static_cast<size_t>(v)]->backward(micro, inputs, *state.outputs[static_cast<size_t>(v)], *output_grad,
                                           params.values, input_grads, params.grads);
    params.add_tied_gradient();
    const int64_t kept = ops_[static_cast<size_t>(v)]->kept_bytes();
    ops_[static_cast<size_t>(v)]->release(micro);
    count_kept_by_op(v, kept);
    release_gathered_parameters(v);
    seconds.compute_backward += seconds_since(compute_start);
    record(fmt::format("bwd {} mb{}", layer.name, micro), false, compute_start);

    const auto communication_start = Clock::now();
    for (size_t p = 0; p < layer.inputs.size(); ++p) {
      if (!compiled.inputs[p].gradient_flows) continue;
      const int u = layer.inputs[p];
      const plans::TensorLayout target = plans::gradient_layout(compiled_.layers[static_cast<size_t>(u)].layouts.output);
      const auto global = plans::activation_shape(net.layer(u), compiled_.micro_batch);
      const auto steps = plans::plan_redistribution(compiled.layouts.input_gradients[p], target, plan_.mesh, global,
                                                    model::output_element_bytes(net.layer(u), plan_.dtype));
      const auto grad_bytes = static_cast<int64_t>(input_grads[p].values.size() * sizeof(float));
      // As the step program holds them: a redistributed gradient exists beside the one it came
      // from until the collectives are done; an unmoved one simply changes hands.
      if (steps.empty()) memory_.release(MemoryCategory::buffers, grad_bytes);
      TrackedArray grad = adopt_tracked(memory_, MemoryCategory::buffers,
                                        comm::run_redistribution(communicator_, steps, global, std::move(input_grads[p]),
                                                                 layer.name + "/backward"));
      if (!steps.empty()) memory_.release(MemoryCategory::buffers, grad_bytes);
      input_grad_bytes -= grad_bytes;
      if (compiled.inputs[p].backward_send) {  // the producer sits on an earlier stage; held until sent
        link_->send(std::move(grad), *compiled.inputs[p].backward_send, link_->tag(v, static_cast<int>(p), micro, true),
                    layer.name + "/backward");
        continue;
      }
      TrackedArray& accumulated = state.output_grads[static_cast<size_t>(u)];
      if (!accumulated) {
        accumulated = std::move(grad);
      } else {
        for (size_t i = 0; i < grad->values.size(); ++i) accumulated->values[i] += grad->values[i];
      }
    }
    memory_.release(MemoryCategory::buffers, input_grad_bytes);  // gradients nothing upstream takes
    seconds.communication += seconds_since(communication_start);
    record(fmt::format("bwd {} mb{}", layer.name, micro), true, communication_start);
    state.outputs[static_cast<size_t>(v)].reset();
    state.inputs[static_cast<size_t>(v)].clear();
    output_grad.reset();
    if (overlap_ && micro == plan_.micro_batches - 1) {
      for (size_t b : buckets_ready_after_[static_cast<size_t>(v)]) start_bucket(b);
      progress_buckets();
    }
    link_->progress();
  }
  state.outputs.front().reset();
}

void Trainer::record(std::string name, bool communication, Clock::time_point start) {
  const double seconds = seconds_since(start);
  if (seconds < 1e-6) return;  // nothing happened (no collective, say)
  timeline_.push_back({std::move(name), communication, std::chrono::duration<double>(start - step_start_).count(), seconds});
}

double Trainer::evaluate(BatchSource& data, int64_t steps, double* mean_loss) {
  const model::Model& net = *plan_.model;
  const int loss = net.size() - 1;
  if (net.layer(loss).kind != model::OpKind::softmax_cross_entropy) throw InputError("evaluate: the model does not end in a loss");
  for (auto& op : ops_) {
    if (op) op->set_training(false);
  }
  data_ = &data;
  const int64_t saved_steps = steps_;
  double counts[3] = {0.0, 0.0, 0.0};  // correct, seen, loss (each batch's mean, added up)
  for (int64_t s = 0; s < steps; ++s) {
    steps_ = s;
    for (int micro = 0; micro < plan_.micro_batches; ++micro) {
      MicroBatchState state;
      state.keeps_everything = true;  // the logits are read after the forward
      state.outputs.resize(static_cast<size_t>(net.size()));
      state.inputs.resize(static_cast<size_t>(net.size()));
      state.output_grads.resize(static_cast<size_t>(net.size()));
      StepSeconds ignored;
      forward(micro, state, ignored);
      if (counts_loss_) {
        counts[2] += ops_.back()->loss_sum(micro);
        // The loss's input holds this rank's rows of logits (of its positions, for sequences),
        // whole over the classes.
        const comm::LocalArray& logits = *state.inputs[static_cast<size_t>(loss)][0];
        const auto labels = data.labels(
            s, micro * compiled_.micro_batch + contexts_[static_cast<size_t>(loss)].output_offset[0], logits.shape[0]);
        const auto logits_global = plans::activation_shape(net.layer(net.layer(loss).inputs[0]), compiled_.micro_batch);
        const int64_t first_position =
            logits.shape.size() == 3
                ? plans::local_offset(compiled_.layers[static_cast<size_t>(loss)].layouts.inputs[0], plan_.mesh,
                                      logits_global, communicators_.rank())[1]
                : 0;
        const PredictionCount count = count_correct(logits, labels, first_position);
        counts[0] += count.correct;
        counts[1] += count.seen;
      }
      for (auto& op : ops_) {
        if (op) op->release(micro);
      }
    }
  }
  // Pipelines: each stage ran its forwards in micro-batch order, receiving from the stage before
  // and sending on; the last stage counted. The sends' buffers may go once they are done.
  link_->finish_sends();
  for (auto& op : ops_) {
    if (op) op->set_training(true);
  }
  steps_ = saved_steps;
  data_ = nullptr;
  // Counts for the report, not training data: host bookkeeping on MPI whatever the backend.
  SB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, counts, 3, MPI_DOUBLE, MPI_SUM, communicators_.world()));
  if (mean_loss != nullptr) *mean_loss = steps > 0 ? counts[2] / static_cast<double>(steps) : 0.0;
  return counts[1] > 0 ? counts[0] / counts[1] : 0.0;
}

double Trainer::global_loss(double local_weighted_sum) const {
  // Logging, not training: this all-reduce is not part of the plan and its bytes are not counted.
  double total = 0.0;
  SB_MPI_CHECK(MPI_Allreduce(&local_weighted_sum, &total, 1, MPI_DOUBLE, MPI_SUM, communicators_.world()));
  return total;
}

StepResult Trainer::step(BatchSource& data) {
  data_ = &data;
  const model::Model& net = *plan_.model;
  StepResult result;
  // Every rank starts the step's clock together (host synchronisation, on MPI for any backend).
  SB_MPI_CHECK(MPI_Barrier(communicators_.world()));
  const auto start = Clock::now();
  step_start_ = start;
  timeline_.clear();
  double loss_sum = 0.0;
  std::vector<MicroBatchState> states(static_cast<size_t>(plan_.micro_batches));
  for (MicroBatchState& state : states) {
    state.outputs.resize(static_cast<size_t>(net.size()));
    state.inputs.resize(static_cast<size_t>(net.size()));
    state.output_grads.resize(static_cast<size_t>(net.size()));
  }
  // This stage's passes in the step program's order (the plan's GPipe or 1F1B schedule; one
  // forward and one backward without a pipeline).
  for (const auto& [kind, micro] : passes_) {
    MicroBatchState& state = states[static_cast<size_t>(micro)];
    if (kind == plans::PassKind::forward) {
      forward(micro, state, result.seconds);
      if (counts_loss_) loss_sum += ops_.back()->loss_sum(micro);
      if (plan_.recompute_activations) drop_recomputable(micro, state);
    } else {
      if (plan_.recompute_activations) recompute_forward(micro, state, result.seconds);
      backward(micro, state, result.seconds);
      state = MicroBatchState{};
    }
  }
  link_->finish_sends();
  if (plan_.zero_stage > 0) {
    update_sharded(result.seconds);
  } else {
    synchronise_gradients(result.seconds);
    const auto optimizer_start = Clock::now();
    std::vector<comm::LocalArray*> values;
    std::vector<const comm::LocalArray*> grads;
    for (LayerParameters& params : parameters_) {
      for (TrackedArray& value : params.values) values.push_back(value.get());
      for (TrackedArray& grad : params.grads) grads.push_back(grad.get());
    }
    optimizer_->step(values, grads);
    for (LayerParameters& params : parameters_) {
      for (TrackedArray& grad : params.grads) std::fill(grad->values.begin(), grad->values.end(), 0.0f);
    }
    result.seconds.optimizer = seconds_since(optimizer_start);
    record("optimizer step", false, optimizer_start);
  }
  result.seconds.total = seconds_since(start);
  ++steps_;
  data_ = nullptr;
  // The loss op already divides by the global number of rows; sum over the ranks that own rows.
  result.loss = global_loss(loss_sum);
  return result;
}

}  // namespace splitbrain::exec
