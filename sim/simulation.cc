#include "sim/simulation.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <cmath>
#include <map>
#include <tuple>
#include <numeric>
#include <span>

#include "sim/cluster_error.h"
#include "sim/collective_prices.h"
#include "sim/kernel_problem.h"
#include "sim/neighbour_speed.h"
#include "sim/plan_collective_cost.h"
#include "sim/rank_traffic.h"
#include "plans/hand_over_groups.h"
#include "plans/step_compiler.h"
#include "plans/collective_residence.h"
#include "plans/recompute_scope.h"

namespace splitbrain::sim {
namespace {

using plans::Collective;
using plans::CompiledPlan;
using plans::Plan;

// `sizes` summed in consecutive groups of at most `per_kernel`: the kernels that take them.
std::vector<int64_t> sums_per_kernel(const std::vector<int64_t>& sizes, size_t per_kernel) {
  std::vector<int64_t> sums;
  for (size_t first = 0; first < sizes.size(); first += per_kernel) {
    const auto end = sizes.begin() + static_cast<std::ptrdiff_t>(std::min(sizes.size(), first + per_kernel));
    sums.push_back(std::accumulate(sizes.begin() + static_cast<std::ptrdiff_t>(first), end, int64_t{0}));
  }
  return sums;
}

class StepBuilder {
 public:
  // `alone`: where ranks share nodes (NodeSharing), the cluster's rates for a rank alone on its
  // node; its instructions are priced both ways.
  StepBuilder(const Plan& plan, const CompiledPlan& compiled, const Cluster& cluster, const Cluster* alone,
              NodeConditions conditions, std::span<const plans::StepProgram> programs, Prediction& out)
      : plan_(plan),
        compiled_(compiled),
        cluster_(cluster),
        alone_(alone),
        conditions_(conditions),
        out_(out),
        prices_(cluster, plan.mesh) {
    for (int s = 0; s < plan.stage_count(); ++s) first_rank_.push_back(first_rank_of_stage(plan, s));
    out_.stages.resize(static_cast<size_t>(plan.stage_count()));
    out_.layers.resize(compiled.layers.size());
    forward_internal_.assign(compiled.layers.size(), 0.0);
    backward_internal_.assign(compiled.layers.size(), 0.0);
    recomputed_ = plans::recomputed_layers(plan);
    grouped_hand_overs_ = plans::hand_overs_complete_in_groups(plan, compiled, programs);
  }

  // The seconds of one run of a collective on a stage, and the level its group crosses.
  const CollectivePrices::Price& price(int stage, const Collective& collective) {
    return prices_.of(collective, first_rank_[static_cast<size_t>(stage)]);
  }

  // Prices a collective and records its use (the bytes every rank sends come from these).
  double use(int layer, int stage, StepPhase phase, const Collective& collective, int count) {
    const auto& [seconds, level] = price(stage, collective);
    out_.collectives.push_back({layer, stage, phase, collective, count, seconds, level});
    return seconds;
  }

  // Layer `i`'s kernels on `cluster` under `conditions`, with the executor's accumulation of its
  // weight gradient.
  LayerComputeSeconds compute_of(const Cluster& cluster, int i, NodeConditions conditions) const {
    const plans::LayerLayouts& layouts = compiled_.layers[static_cast<size_t>(i)].layouts;
    LayerComputeSeconds compute = layer_compute_seconds(cluster, *plan_.model, i, layouts, plan_.mesh,
                                                        compiled_.micro_batch, plan_.dtype, conditions);
    compute.backward_weight += gradient_accumulation_seconds(cluster, plan_, layouts);
    return compute;
  }

  void cost_layers() {
    const int micro_batches = plan_.micro_batches;
    for (int i = 0; i < static_cast<int>(compiled_.layers.size()); ++i) {
      const plans::CompiledLayer& layer = compiled_.layers[static_cast<size_t>(i)];
      LayerTiming& timing = out_.layers[static_cast<size_t>(i)];
      StageWork& work = out_.stages[static_cast<size_t>(layer.stage)].work;
      timing.compute = compute_of(cluster_, i, conditions_);
      if (alone_) alone_compute_.push_back(compute_of(*alone_, i, {0.0, conditions_.caches_warm}));
      for (const plans::InputTransfer& input : layer.inputs) {
        const int producer_stage = compiled_.layers[static_cast<size_t>(input.producer)].stage;
        if (input.forward_send) {
          out_.stages[static_cast<size_t>(producer_stage)].work.send_forward_seconds +=
              use(i, producer_stage, StepPhase::forward, *input.forward_send, micro_batches);
        }
        for (const Collective& c : input.forward)
          timing.forward_comm_seconds += use(i, layer.stage, StepPhase::forward, c, micro_batches);
        // A saved input kept split is gathered again before the backward.
        const auto position = static_cast<size_t>(&input - layer.inputs.data());
        if (plan_.regathers_input(plan_.model->layer(i), position, input.forward)) {
          for (const Collective& c : input.forward)
            timing.backward_comm_seconds += use(i, layer.stage, StepPhase::forward, c, micro_batches);
        }
        for (const Collective& c : input.backward)
          timing.backward_comm_seconds += use(i, layer.stage, StepPhase::backward, c, micro_batches);
        if (input.backward_send) {
          work.send_backward_seconds += use(i, layer.stage, StepPhase::backward, *input.backward_send, micro_batches);
        }
      }
      for (const Collective& c : layer.layouts.forward_internal) {
        const double seconds = use(i, layer.stage, StepPhase::forward, c, micro_batches);
        timing.forward_comm_seconds += seconds;
        forward_internal_[static_cast<size_t>(i)] += seconds;
      }
      for (const Collective& c : layer.layouts.backward_internal) {
        const double seconds = use(i, layer.stage, StepPhase::backward, c, micro_batches);
        timing.backward_comm_seconds += seconds;
        backward_internal_[static_cast<size_t>(i)] += seconds;
      }
      if (layer.tied_copy) {
        // The embedding group's swap of the tied table's gradients (timed by the programs).
        use(i, layer.tied_copy->table_stage, StepPhase::gradient_sync, layer.tied_copy->to_head, 1);
        use(i, layer.stage, StepPhase::gradient_sync, layer.tied_copy->to_table, 1);
      }
      for (const Collective& c : layer.parameter_gathers) {
        // ZeRO 3 gathers the parameters for the forward and again for the backward pass.
        timing.forward_comm_seconds += use(i, layer.stage, StepPhase::parameter_gather, c, micro_batches);
        timing.backward_comm_seconds += use(i, layer.stage, StepPhase::parameter_gather, c, micro_batches);
      }
      const bool whole_stage = recomputed_[static_cast<size_t>(i)];
      const bool selective = plan_.recomputes_selectively(plan_.model->layer(i));
      if (whole_stage || selective) {
        // The forward runs again before the backward: its compute and the collectives in it;
        // from the kept stage inputs (whole stage) also the redistributions into the layer (not
        // the pipeline hand-overs, which are kept) and one more ZeRO 3 gather. A selectively
        // recomputed attention core reads its kept input.
        timing.recompute_seconds = timing.compute.forward;
        auto again = [&](const Collective& c, StepPhase phase) {
          timing.backward_comm_seconds += use(i, layer.stage, phase, c, micro_batches);
        };
        for (const Collective& c : layer.layouts.forward_internal) again(c, StepPhase::forward);
        if (whole_stage) {
          for (const plans::InputTransfer& input : layer.inputs) {
            for (const Collective& c : input.forward) again(c, StepPhase::forward);
          }
          for (const Collective& c : layer.parameter_gathers) again(c, StepPhase::parameter_gather);
        }
      }
      work.forward_seconds += timing.compute.forward + timing.forward_comm_seconds;
      work.backward_seconds += timing.recompute_seconds + timing.compute.backward_input +
                               timing.compute.backward_weight + timing.backward_comm_seconds;
    }
  }

  // What an instruction of stage `stage`'s program costs: a layer's pass its compute and the
  // collectives inside the op; a transfer, a reduction or a gather its collectives; the
  // executor's copies of a gradient bucket into and out of its flat fp32 array a read and a
  // write of it each; the update the optimizer's pass over the stage's parameters; the input's
  // upload and the loss's download the device's host transfers; an alloc its buffer's zero-fill.
  InstructionCost instruction_cost(const plans::StepProgram& program, int stage,
                                   const plans::StepInstruction& instruction) {
    using plans::StepOp;
    InstructionCost cost;
    const auto layer = static_cast<size_t>(std::max(instruction.layer, 0));
    const double launch = cluster_.device.launch_host_seconds;
    const double pass_overhead = cluster_.device.instruction_host_seconds;
    switch (instruction.op) {
      case StepOp::forward:
      case StepOp::recompute:
        cost.compute_seconds = out_.layers[layer].compute.forward;
        if (alone_) cost.alone_compute_seconds = alone_compute_[layer].forward;
        cost.communication_seconds = forward_internal_[layer];
        cost.host_seconds = std::max(out_.layers[layer].compute.forward_host, launch) + pass_overhead;
        if (plan_.model->layer(static_cast<int>(layer)).kind == model::OpKind::softmax_cross_entropy) {
          // The loss's forward queues the upload of its labels (a few bytes: the host link's
          // latency, on the device's queue before the kernels) and one more call for it.
          const double labels = host_transfer_seconds(cluster_.device, 0);
          cost.compute_seconds += labels;
          if (alone_) cost.alone_compute_seconds += labels;
          cost.host_seconds += launch;
        }
        cost.host_waits = cost.communication_seconds > 0.0;
        break;
      case StepOp::backward:
        cost.compute_seconds = out_.layers[layer].compute.backward_input + out_.layers[layer].compute.backward_weight;
        if (alone_)
          cost.alone_compute_seconds = alone_compute_[layer].backward_input + alone_compute_[layer].backward_weight;
        cost.communication_seconds = backward_internal_[layer];
        cost.host_seconds = std::max(out_.layers[layer].compute.backward_host, launch) + pass_overhead;
        cost.host_waits = cost.communication_seconds > 0.0;
        break;
      case StepOp::redistribute:
        cost.compute_seconds = local_reslice_seconds(cluster_, instruction);
        if (alone_) cost.alone_compute_seconds = local_reslice_seconds(*alone_, instruction);
        [[fallthrough]];
      case StepOp::send:
      case StepOp::recv:
      case StepOp::reduce:
      case StepOp::gather_params:
        for (const Collective& c : plans::collectives_of(instruction)) {
          const auto& [seconds, level] = price(stage, c);
          cost.communication_seconds += seconds;
          if (c.kind != plans::CollectiveKind::send_recv || level < 0) continue;
          const Level& crossed = cluster_.levels[static_cast<size_t>(level)];
          const MessageOverhead& overhead =
              instruction.op == StepOp::send ? crossed.send_overhead : crossed.receive_overhead;
          cost.message_host_seconds += overhead.at(static_cast<double>(c.buffer_bytes));
        }
        [[fallthrough]];
      case StepOp::wait:
        // Collectives on device memory the host queues and leaves; staged ones it waits for.
        cost.host_waits = !plans::host_goes_on(program, instruction, grouped_hand_overs_);
        break;
      case StepOp::pack:
      case StepOp::unpack: {
        const int flat = instruction.op == StepOp::pack ? instruction.writes.at(0) : instruction.reads.at(0);
        if (program.buffers.at(static_cast<size_t>(flat)).role == plans::BufferRole::bucket) {
          const auto& bucket = compiled_.buckets.at(static_cast<size_t>(instruction.bucket));
          cost.compute_seconds =
              streaming_pass_seconds(cluster_, 2.0 * 4.0 * static_cast<double>(bucket.padded_elements));
        }
        cost.host_seconds = launch;
        break;
      }
      case StepOp::optimizer: {
        const OptimizerWork work = optimizer_instruction_work(cluster_, program, instruction);
        cost.compute_seconds = work.seconds;
        if (alone_) cost.alone_compute_seconds = optimizer_instruction_work(*alone_, program, instruction).seconds;
        cost.host_seconds = launch * static_cast<double>(work.kernels);
        break;
      }
      case StepOp::load_input:
        // The batch's upload, queued: the data reader's block stays as it is through the step.
        cost.communication_seconds = host_transfer_seconds(
            cluster_.device, program.buffers.at(static_cast<size_t>(instruction.writes.at(0))).bytes);
        cost.host_seconds = launch;
        break;
      case StepOp::alloc: {
        // The executor's zero-fill of the buffer (plans::allocated_zeroed): one write over it,
        // where the ranks compute on a host's cores (a CPU calibrated by `calibrate`), in the
        // same memory as their kernels: 4-7% of a small CNN's step. A GPU's memsets run at its
        // memory bandwidth and are left unpriced: the planner also ranks plans for GPU frameworks
        // (Megatron-LM, DeepSpeed), which make no such fill.
        const plans::StepBuffer& buffer = program.buffers.at(static_cast<size_t>(instruction.buffer));
        if (cluster_.cpu_cores_per_node > 0 && plans::allocated_zeroed(*plan_.model, buffer)) {
          cost.compute_seconds = streaming_pass_seconds(cluster_, static_cast<double>(buffer.bytes));
          if (alone_) cost.alone_compute_seconds = streaming_pass_seconds(*alone_, static_cast<double>(buffer.bytes));
        }
        break;
      }
      case StepOp::loss_out:
        // The loss's download (8 bytes), queued: the host reads it at the step's end.
        cost.communication_seconds = host_transfer_seconds(cluster_.device, 0);
        cost.host_seconds = launch;
        break;
      default:
        break;
    }
    return cost;
  }

  // A redistribution's local steps (plans::local_reslice) as the executor runs them: each cuts
  // the rank's `after` block out of its `before` block, one read and one write of the block. (A
  // rank off coordinate 0 of a newly partial axis then zeroes it: a replicated -> partial step
  // some ranks run, left out.)
  double local_reslice_seconds(const Cluster& cluster, const plans::StepInstruction& instruction) const {
    if (std::ranges::all_of(instruction.steps,
                            [](const plans::RedistributionStep& s) { return s.collective.has_value(); }))
      return 0.0;
    const auto global = plans::redistributed_shape(*plan_.model, instruction, compiled_.micro_batch);
    int64_t elements = 0;
    for (const plans::RedistributionStep& step : instruction.steps) {
      if (!step.collective) elements += plans::local_element_count(step.after, plan_.mesh, global);
    }
    return streaming_pass_seconds(cluster, 2.0 * static_cast<double>(elements * model::bytes_per_element(plan_.dtype)));
  }

  // The step's timeline: the stages' programs priced and run (program_timeline.h).
  void time_programs(std::span<const plans::StepProgram> programs, const NodeSharing* sharing) {
    for (size_t b = 0; b < compiled_.buckets.size(); ++b) {
      const plans::GradientBucket& bucket = compiled_.buckets[b];
      for (const Collective& c : bucket.reduction) use(-1, bucket.stage, StepPhase::gradient_sync, c, 1);
      for (const Collective& c : bucket.gather) use(-1, bucket.stage, StepPhase::parameter_gather, c, 1);
    }
    const InstructionPricer pricer = [&](int stage, const plans::StepInstruction& instruction) {
      return instruction_cost(programs[static_cast<size_t>(stage)], stage, instruction);
    };
    ProgramTimeline timeline = run_program_timeline(programs, pricer, cluster_.communication_overlap, sharing);
    out_.passes = std::move(timeline.passes);
    out_.gradient_sync = std::move(timeline.gradient_sync);
    out_.other_instructions = std::move(timeline.other_instructions);
    for (size_t s = 0; s < timeline.stages.size(); ++s) {
      const StageTimeline& from = timeline.stages[s];
      StageTiming& timing = out_.stages[s];
      timing.backward_end_seconds = from.backward_end_seconds;
      timing.sync_end_seconds = from.sync_end_seconds;
      timing.optimizer_seconds = from.optimizer_seconds;
      timing.end_seconds = from.end_seconds;
      timing.host_wait_instructions = from.host_wait_instructions;
    }
    stage_phases_.clear();
    for (const StageTimeline& stage : timeline.stages) stage_phases_.push_back(stage.phases);
  }

  // The optimizer instruction as the executor runs it (exec/runtime/step_interpreter_buckets.cc):
  // one update per gradient it reads (a whole parameter's, or a ZeRO slice's), then every kept
  // parameter gradient cleared for the next step's accumulation (Device::update_all, zero_all).
  // The device does both in kernels of up to Device::optimizer_tensors_per_kernel tensors, each
  // a memory-bound pass at the achieved rate for its tensors' bytes together.
  struct OptimizerWork {
    double seconds = 0.0;
    int kernels = 0;
  };
  OptimizerWork optimizer_instruction_work(const Cluster& cluster, const plans::StepProgram& program,
                                           const plans::StepInstruction& instruction) const {
    const size_t per_kernel = static_cast<size_t>(cluster.device.optimizer_tensors_per_kernel);
    const int64_t gradient_bytes = plans::gradient_element_bytes(plan_);
    std::vector<int64_t> updated_elements;
    for (const int gradient : instruction.reads) {
      updated_elements.push_back(program.buffers.at(static_cast<size_t>(gradient)).bytes / gradient_bytes);
    }
    std::vector<int64_t> cleared_bytes;
    for (const int buffer : program.resident) {
      const plans::StepBuffer& kept = program.buffers.at(static_cast<size_t>(buffer));
      if (kept.role == plans::BufferRole::parameter_gradient) cleared_bytes.push_back(kept.bytes);
    }
    OptimizerWork work;
    for (const int64_t elements : sums_per_kernel(updated_elements, per_kernel)) {
      work.seconds += optimizer_step_seconds(cluster, plan_, elements);
      ++work.kernels;
    }
    for (const int64_t bytes : sums_per_kernel(cleared_bytes, per_kernel)) {
      work.seconds += streaming_pass_seconds(cluster, static_cast<double>(bytes));
      ++work.kernels;
    }
    return work;
  }

  void summarise() {
    auto critical =
        std::max_element(out_.stages.begin(), out_.stages.end(),
                         [](const StageTiming& a, const StageTiming& b) { return a.end_seconds < b.end_seconds; });
    out_.critical_stage = static_cast<int>(critical - out_.stages.begin());
    out_.iteration_seconds = critical->end_seconds;
    out_.samples_per_second = static_cast<double>(plan_.global_batch) / out_.iteration_seconds;
    const StagePhases& stage = stage_phases_[static_cast<size_t>(out_.critical_stage)];
    PhaseSeconds& phases = out_.phases;
    phases.compute_forward = stage.compute_forward;
    phases.compute_backward = stage.compute_backward;
    phases.comm_exposed = stage.comm_exposed;
    phases.optimizer = stage.optimizer;
    const double accounted = phases.compute_forward + phases.compute_backward + phases.comm_exposed + phases.optimizer;
    phases.bubble = std::max(0.0, out_.iteration_seconds - accounted);
  }

 private:
  const Plan& plan_;
  const CompiledPlan& compiled_;
  bool grouped_hand_overs_ = false;  // a GPU moves the pipeline's hand-overs as NCCL groups
  const Cluster& cluster_;
  const Cluster* alone_;
  NodeConditions conditions_;
  Prediction& out_;
  std::vector<int> first_rank_;
  CollectivePrices prices_;
  std::vector<bool> recomputed_;                    // per layer: full recomputation reruns it
  std::vector<double> forward_internal_;            // per layer: the collectives inside its forward op
  std::vector<double> backward_internal_;           // and inside its backward
  std::vector<LayerComputeSeconds> alone_compute_;  // per layer, with alone_: its compute alone
  std::vector<StagePhases> stage_phases_;
};

Prediction simulate_step(const Plan& plan, const CompiledPlan& compiled, const Cluster& cluster,
                         NodeConditions conditions, std::span<const plans::StepProgram> programs,
                         std::span<const MemoryBreakdown> memory_of_stage, const Cluster* alone,
                         const NodeSharing* sharing) {
  Prediction prediction;
  StepBuilder step(plan, compiled, cluster, alone, conditions, programs, prediction);
  step.cost_layers();
  step.time_programs(programs, sharing);
  step.summarise();
  prediction.ranks = rank_predictions(plan, cluster, prediction.collectives, memory_of_stage);
  return prediction;
}

}  // namespace

std::string_view step_phase_name(StepPhase phase) {
  switch (phase) {
    case StepPhase::forward:
      return "forward";
    case StepPhase::backward:
      return "backward";
    case StepPhase::gradient_sync:
      return "gradient_sync";
    case StepPhase::parameter_gather:
      return "parameter_gather";
  }
  return "unknown";
}

int first_rank_of_stage(const Plan& plan, int stage) {
  std::vector<int> coordinates(static_cast<size_t>(plan.mesh.axis_count()), 0);
  if (plan.pipe_axis >= 0) coordinates[static_cast<size_t>(plan.pipe_axis)] = stage;
  return plan.mesh.rank_of(coordinates);
}

Prediction simulate(const Plan& plan, const CompiledPlan& compiled, const Cluster& cluster) {
  if (const int devices = rank_count(cluster); plan.mesh.rank_count() > devices) {
    throw ClusterError(fmt::format("cluster '{}' {} {} {} but the plan's mesh {} needs {}", cluster.name,
                                   cluster.placement.empty() ? "has" : "places ranks on", devices,
                                   devices == 1 ? "device" : "devices", plan.mesh.to_string(), plan.mesh.rank_count()));
  }
  // Ranks sharing a node slow each other's kernels only while both compute, and ranks beyond the
  // node's cores take turns: the timeline schedules their compute (neighbour_speed.h) from its
  // price alone, slowed as the busy price says. Elsewhere the prices are the calibrated ones, all
  // ranks busy.
  const double speedup = alone_speedup(cluster.device, busy_ranks_per_node(cluster, plan.mesh));
  const std::optional<NodeSharing> sharing = node_sharing(cluster, plan, speedup);
  // The step programs of each stage's first rank: what the timeline prices; their memory walks
  // (stage_memory's) come from the same compilation.
  std::vector<plans::StepProgram> programs;
  std::vector<MemoryBreakdown> memory_of_stage;
  for (int stage = 0; stage < plan.stage_count(); ++stage) {
    plans::StepWithMemory step = plans::compile_step_with_memory(plan, compiled, first_rank_of_stage(plan, stage));
    programs.push_back(std::move(step.program));
    memory_of_stage.push_back(memory_breakdown(step.peaks));
  }
  int64_t peak_bytes_per_rank = 0;
  for (const MemoryBreakdown& memory : memory_of_stage)
    peak_bytes_per_rank = std::max(peak_bytes_per_rank, memory.peak);
  const double caches_warm = caches_warm_fraction(cluster, plan.mesh, static_cast<double>(peak_bytes_per_rank));
  // Where ranks share a node, instructions are priced also as a rank alone on it runs them (the
  // timed problems' "1 busy" seconds, the curves raised by the median speed-up alone), for the
  // timeline to slow them by who else computes.
  std::optional<Cluster> alone;
  if (sharing) alone = with_neighbours_busy(cluster, speedup, 0.0);
  const Prediction prediction = simulate_step(plan, compiled, cluster, {1.0, caches_warm}, programs, memory_of_stage,
                                              alone ? &*alone : nullptr, sharing ? &*sharing : nullptr);
  // The cluster's ranges keep every cost finite; a prediction that is not would put NaN or
  // infinity in a report, so it is refused here whatever let it through.
  const PhaseSeconds& p = prediction.phases;
  for (const double seconds :
       {prediction.iteration_seconds, p.compute_forward, p.compute_backward, p.comm_exposed, p.bubble, p.optimizer}) {
    if (!std::isfinite(seconds)) {
      throw ClusterError(
          fmt::format("cluster '{}': the predicted step of plan {} is not finite ({} s): a rate, latency or "
                      "efficiency of the cluster is out of any real range",
                      cluster.name, plan.mesh.to_string(), seconds));
    }
  }
  return prediction;
}

Prediction simulate(const Plan& plan, const Cluster& cluster) {
  return simulate(plan, plans::compile_plan(plan), cluster);
}

double total_communication_seconds(const Prediction& prediction) {
  double total = 0.0;
  for (const CollectiveUse& u : prediction.collectives) total += u.count * u.seconds;
  return total;
}

int64_t peak_memory_bytes(const Prediction& prediction) {
  int64_t peak = 0;
  for (const RankPrediction& r : prediction.ranks) peak = std::max(peak, r.memory.total());
  return peak;
}

}  // namespace splitbrain::sim
