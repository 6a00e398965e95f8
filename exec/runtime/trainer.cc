#include "exec/runtime/trainer.h"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <stdexcept>
#include <utility>

#include "exec/comm/mpi_check.h"
#include "exec/runtime/correct_predictions.h"
#include "exec/runtime/parameter_init.h"
#include "exec/runtime/zero_sharding.h"
#include "model/errors.h"
#include "model/statistics.h"
#include "plans/hand_over_groups.h"
#include "plans/step_compiler.h"

namespace splitbrain::exec {
namespace {

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
  if (!backend.collectives)
    throw std::invalid_argument(fmt::format("backend '{}' has no collective engine", backend.name));
  if (!backend.device) throw std::invalid_argument(fmt::format("backend '{}' has no device", backend.name));
  return *backend.collectives;
}

}  // namespace

Trainer::Trainer(const plans::Plan& plan, Backend backend, uint64_t seed)
    : plan_(plan),
      compiled_(plans::compile_plan(plan)),
      backend_(std::move(backend)),
      communicators_(engine_of(backend_).communicators()),
      communicator_(engine_of(backend_)),
      seed_(seed) {
  // The kernels compute in fp32; a bf16 plan runs emulated on the CPU, the others are refused.
  precision_ = MixedPrecision::of(plan, backend_.name);
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
  Device& device = *backend_.device;
  link_ = std::make_unique<StageLink>(communicator_, device.collectives(), plan.pipe_axis, plan.micro_batches);
  device.collectives().allow_grouped_hand_overs(plans::hand_overs_complete_in_groups(plan, compiled_));

  optimizer_ = std::make_unique<Optimizer>(plan.optimizer, device, memory_, precision_.bf16);
  ops_.resize(static_cast<size_t>(net.size()));
  contexts_.resize(static_cast<size_t>(net.size()));
  parameters_.resize(static_cast<size_t>(net.size()));
  const int64_t micro_batch = compiled_.micro_batch;
  int input_layer = 0;
  while (input_layer + 1 < net.size() && net.layer(input_layer).kind != model::OpKind::input) ++input_layer;
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
    // The data source feeds the model's one input layer (load_input): its sample's values.
    ctx.input_values = [this, sample_elements = comm::element_count(net.layer(input_layer).output_shape)](
                           int micro, int64_t first, int64_t count) {
      std::vector<float> values(static_cast<size_t>(count * sample_elements));
      data_->images(steps_, micro * compiled_.micro_batch + first, count, values.data());
      return values;
    };
    if (compiled_.layers[static_cast<size_t>(v)].stage != stage_) continue;  // another stage holds this layer
    LayerParameters& params = parameters_[static_cast<size_t>(v)];
    // ZeRO keeps sharded layers' model states as slices (make_zero_slices): stage 3's whole
    // parameters exist here only to be cut, stage 2-3's whole gradients only during backward.
    const bool sharded = zero_shards(plan, compiled_, v);
    // Stage 3's whole parameters are a set-up transient, cut before the first step: not a step's
    // memory, so not tracked.
    const bool cut_at_setup = sharded && plan.zero_stage >= 3;
    for (size_t k = 0; k < layouts.parameters.size(); ++k) {
      const plans::ParameterShard& shard = layouts.parameters[k];
      const auto shape = local_shape_of(shard.layout, mesh, shard.global_shape);
      ctx.parameter_shapes.push_back(shape);
      comm::LocalArray initial{shape, std::vector<float>(static_cast<size_t>(comm::element_count(shape)))};
      // A tied head's copy of its table (another stage holds the table) starts equal to it.
      const std::optional<plans::TiedCopy>& copy = compiled_.layers[static_cast<size_t>(v)].tied_copy;
      const int source = copy && k == 0 ? copy->table : v;
      initialize_parameter(net.layer(source), source, static_cast<int>(k), shard,
                           plans::local_offset(shard.layout, mesh, shard.global_shape, rank), seed, initial);
      TrackedArray value = cut_at_setup ? TrackedArray(device.memory().allocate(shape, false))
                                        : make_tracked(device.memory(), memory_, MemoryCategory::params, shape, false,
                                                       precision_.parameter_bytes());
      device.host_link().upload(initial.values, *value);
      params.values.push_back(value);
      params.grads.push_back(sharded && plan.zero_stage >= 2
                                 ? nullptr
                                 : make_tracked(device.memory(), memory_, MemoryCategory::grads, shape, true,
                                                precision_.gradient_bytes()));
      if (!sharded) optimizer_->add_parameter(*value);
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
  zero_ = make_zero_slices(plan, compiled_, stage_, communicator_, parameters_, *optimizer_, device.memory(), memory_);
  // The step's order is the rank's step program (plans/step_compiler.h), the one the simulator
  // prices and walks for memory; evaluation runs the forward passes' program.
  const RankResources resources{plan_,  compiled_,   rank,   ops_,    contexts_,     parameters_,
                                zero_,  *optimizer_, device, memory_, communicator_, *backend_.collectives,
                                *link_, precision_};
  training_ = std::make_unique<StepInterpreter>(plans::compile_step(plan, compiled_, rank), resources);
  evaluation_ = std::make_unique<StepInterpreter>(plans::compile_evaluation(plan, compiled_, rank), resources);
}

Trainer::~Trainer() = default;

double Trainer::evaluate(BatchSource& data, int64_t steps, double* mean_loss) {
  const model::Model& net = *plan_.model;
  const int loss = net.size() - 1;
  if (net.layer(loss).kind != model::OpKind::softmax_cross_entropy)
    throw InputError("evaluate: the model does not end in a loss");
  for (auto& op : ops_) {
    if (op) op->set_training(false);
  }
  data_ = &data;
  const int64_t saved_steps = steps_;
  double counts[3] = {0.0, 0.0, 0.0};  // correct, seen, loss (each batch's mean, added up)
  // The loss's input holds this rank's rows of logits (of its positions, for sequences), whole
  // over the classes.
  const plans::TensorLayout& logits_layout = compiled_.layers[static_cast<size_t>(loss)].layouts.inputs[0];
  const auto logits_global = plans::activation_shape(net.layer(net.layer(loss).inputs[0]), compiled_.micro_batch);
  const int64_t first_row = contexts_[static_cast<size_t>(loss)].output_offset.empty()
                                ? 0
                                : contexts_[static_cast<size_t>(loss)].output_offset[0];
  const StepInterpreter::LogitsObserver count = [&](int micro, const comm::LocalArray& logits) {
    if (!counts_loss_) return;
    const auto labels = data.labels(steps_, micro * compiled_.micro_batch + first_row, logits.shape[0]);
    const int64_t first_position =
        logits.shape.size() == 3
            ? plans::local_offset(logits_layout, plan_.mesh, logits_global, communicators_.rank())[1]
            : 0;
    const PredictionCount counted = count_correct(logits, labels, first_position);
    counts[0] += counted.correct;
    counts[1] += counted.seen;
  };
  for (int64_t s = 0; s < steps; ++s) {
    steps_ = s;
    const StepRun run = evaluation_->run(s, data, count);
    if (counts_loss_) counts[2] += run.loss_sum;
  }
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
  // Every rank starts the step's clock together (host synchronisation, on MPI for any backend).
  SB_MPI_CHECK(MPI_Barrier(communicators_.world()));
  const Device& device = *backend_.device;
  const HostTransfers before = device.host_link().host_transfers();
  const std::optional<RecordedCalls> recorded_before = device.kernels().recorded_calls();
  StepRun run = training_->run(steps_, data);
  StepResult result;
  result.seconds = run.seconds;
  result.started_at_seconds = run.started_at_seconds;
  result.host_transfers = device.host_link().host_transfers() - before;
  if (const std::optional<RecordedCalls> recorded_after = device.kernels().recorded_calls();
      recorded_before && recorded_after) {
    result.recorded_calls = RecordedCalls{recorded_after->recorded - recorded_before->recorded,
                                          recorded_after->replayed - recorded_before->replayed,
                                          recorded_after->direct - recorded_before->direct};
  }
  result.host_wait_instructions = std::move(run.host_wait_instructions);
  result.seconds_by_instruction = instruction_names_.seconds_of(run.timeline);
  timeline_ = std::move(run.timeline);
  step_started_at_seconds_ = run.started_at_seconds;
  step_host_ran_ahead_ = run.host_runs_ahead;
  ++steps_;
  data_ = nullptr;
  // The loss op already divides by the global number of rows; sum over the ranks that own rows.
  result.loss = global_loss(counts_loss_ ? run.loss_sum : 0.0);
  return result;
}

const plans::StepProgram& Trainer::program() const { return training_->program(); }

std::vector<std::vector<float>> Trainer::local_parameter_values(int layer) {
  const auto v = static_cast<size_t>(layer);
  Device& device = *backend_.device;
  std::vector<std::vector<float>> out;
  if (plan_.zero_stage < 3 || !zero_shards(plan_, compiled_, layer) || compiled_.layers[v].stage != stage_) {
    for (const TrackedArray& value : parameters_[v].values) out.push_back(host_copy(device.host_link(), *value));
    return out;
  }
  const ZeroBucketSlice& z = zero_.buckets[static_cast<size_t>(zero_.bucket_of_layer[v])];
  const auto position = static_cast<size_t>(zero_.position_in_bucket[v]);
  const int64_t slice = z.layer_slices[position];
  const std::unique_ptr<DeviceArray> mine = device.memory().allocate({slice}, false);
  device.memory().copy(*z.param_slice, z.layer_offsets[position], *mine, 0, slice);
  const plans::Collective& gather = *plans::own_parameter_gather(plan_, compiled_, layer);
  // The engine directly, not the Communicator: a checkpoint's gather is not the plan's traffic.
  const std::unique_ptr<DeviceArray> gathered = device.memory().allocate({slice * gather.group_size}, false);
  device.collectives().all_gather(*backend_.collectives, gather.axes, *mine, *gathered);
  const std::vector<float> whole = host_copy(device.host_link(), *gathered);
  size_t at = 0;
  for (const auto& shape : contexts_[v].parameter_shapes) {
    const auto elements = static_cast<size_t>(comm::element_count(shape));
    const auto first = whole.begin() + static_cast<std::ptrdiff_t>(at);
    out.emplace_back(first, first + static_cast<std::ptrdiff_t>(elements));
    at += elements;
  }
  return out;
}

std::vector<DeviceArray*> Trainer::sharded_state() {
  std::vector<DeviceArray*> arrays;
  for (ZeroBucketSlice& z : zero_.buckets) {
    if (z.param_slice) arrays.push_back(z.param_slice.get());
  }
  return arrays;
}

}  // namespace splitbrain::exec
