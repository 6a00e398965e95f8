// simulate(): the step's pieces add up, overlap hides gradient synchronisation, and every rank's
// bytes are exactly what its collectives send.

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <tuple>

#include "model/errors.h"
#include "model/zoo.h"
#include "plans/compiled_plan.h"
#include "plans/optimizer_launches.h"
#include "plans/plan_builder.h"
#include "plans/step_compiler.h"
#include "sim/chrome_trace.h"
#include "sim/cluster_presets.h"
#include "sim/compute_cost.h"
#include "sim/kernel_problem.h"
#include "sim/prediction_json.h"
#include "sim/search/families.h"
#include "sim/simulation.h"
#include "tests/support/test_plans.h"
#include "tests/sim/planner_requests.h"

namespace splitbrain::sim {
namespace {

using plans::LayerSharding;

using testing_support::data_parallel_plan;

// The executor's copies of every gradient bucket into its flat array and back (ZeRO 0): a
// streaming pass over 2 x 4 B per padded element each way.
double bucket_copy_seconds(const plans::Plan& plan, const Cluster& cluster) {
  double seconds = 0.0;
  for (const plans::GradientBucket& bucket : plans::compile_plan(plan).buckets) {
    seconds += 2.0 * streaming_pass_seconds(cluster, 8.0 * static_cast<double>(bucket.padded_elements));
  }
  return seconds;
}

TEST(Simulation, PhasesAddUpToTheIteration) {
  const plans::Plan plan = data_parallel_plan("vgg16-cifar10", 8, 256);
  const Prediction p = simulate(plan, cluster_preset("dgx-a100-80g"));
  const PhaseSeconds& ph = p.phases;
  EXPECT_GT(p.iteration_seconds, 0.0);
  EXPECT_NEAR(ph.compute_forward + ph.compute_backward + ph.comm_exposed + ph.bubble + ph.optimizer,
              p.iteration_seconds, 1e-12);
  EXPECT_DOUBLE_EQ(p.samples_per_second, 256 / p.iteration_seconds);
  EXPECT_EQ(p.ranks.size(), 8u);
}

TEST(Simulation, OverlapHidesGradientSynchronisation) {
  plans::Plan plan = data_parallel_plan("vgg16-cifar10", 8, 256);
  plan.gradient_bucket_bytes = 4'000'000;
  const Cluster cluster = cluster_preset("v100-pcie-10gbe");  // slow network: sync matters
  plan.overlap_gradient_sync = false;
  const Prediction serial = simulate(plan, cluster);
  plan.overlap_gradient_sync = true;
  const Prediction overlapped = simulate(plan, cluster);
  EXPECT_LT(overlapped.phases.comm_exposed, serial.phases.comm_exposed);
  EXPECT_LT(overlapped.iteration_seconds, serial.iteration_seconds);
  // Without overlap all of the synchronisation is exposed, with the buckets' copies in and out.
  EXPECT_GT(bucket_copy_seconds(plan, cluster), 0.0);
  EXPECT_NEAR(serial.phases.comm_exposed, total_communication_seconds(serial) + bucket_copy_seconds(plan, cluster),
              1e-9);
}

TEST(Simulation, CommunicationThatDoesNotHideIsChargedToTheStep) {
  // cluster.communication_overlap = 0 (CPU ranks copying with their own cores): overlapped
  // buckets expose all of their time, as if not overlapped; halfway, half of it. The buckets'
  // copies into their flat arrays and back are exposed either way.
  plans::Plan plan = data_parallel_plan("vgg16-cifar10", 8, 256);
  plan.gradient_bucket_bytes = 4'000'000;
  Cluster cluster = cluster_preset("v100-pcie-10gbe");
  plan.overlap_gradient_sync = true;
  const Prediction hidden = simulate(plan, cluster);
  cluster.communication_overlap = 0.0;
  const Prediction exposed = simulate(plan, cluster);
  EXPECT_NEAR(exposed.phases.comm_exposed, total_communication_seconds(exposed) + bucket_copy_seconds(plan, cluster),
              1e-9);
  EXPECT_GT(exposed.iteration_seconds, hidden.iteration_seconds);
  cluster.communication_overlap = 0.5;
  const Prediction half = simulate(plan, cluster);
  EXPECT_GE(half.phases.comm_exposed, 0.5 * total_communication_seconds(half) - 1e-9);
  EXPECT_LT(half.phases.comm_exposed, exposed.phases.comm_exposed);
}

TEST(Simulation, BytesPerRankAreTheCompiledCollectives) {
  // SplitBrain on {data: 2, model: 2}: convs batch over both, classifier features over model.
  const plans::Plan plan =
      plans::build_plan("fashion-vgg", plans::Mesh({{"data", 2}, {"model", 2}}), 64, [](const model::Layer& l) {
        if (l.kind == model::OpKind::linear || l.name == "relu5" || l.name == "dropout1")
          return LayerSharding{{0}, {1}, {}, {}};
        if (l.kind == model::OpKind::softmax_cross_entropy) return LayerSharding{{0}, {}, {}, {}};
        return LayerSharding{{0, 1}, {}, {}, {}};
      });
  const plans::CompiledPlan compiled = plans::compile_plan(plan);
  const Prediction p = simulate(plan, compiled, cluster_preset("dgx-a100-80g"));
  int64_t expected_rank3 = 0;
  for (const plans::CompiledLayer& layer : compiled.layers) {
    for (const plans::InputTransfer& input : layer.inputs) {
      for (const auto* list : {&input.forward, &input.backward}) {
        for (const plans::Collective& c : *list)
          expected_rank3 += plans::bytes_sent(c, plan.mesh.index_in_group(3, c.axes));
      }
    }
  }
  for (const plans::GradientBucket& bucket : compiled.buckets) {
    for (const plans::Collective& c : bucket.reduction)
      expected_rank3 += plans::bytes_sent(c, plan.mesh.index_in_group(3, c.axes));
  }
  EXPECT_GT(expected_rank3, 0);
  EXPECT_EQ(p.ranks[3].comm_bytes_sent, expected_rank3);
}

TEST(Simulation, RecomputeRunsTheForwardAgainInsideTheBackward) {
  // Model-parallel fashion-vgg on {model: 2}: the linear layers' inputs are redistributed.
  plans::Plan plan = plans::build_plan("fashion-vgg", plans::Mesh({{"model", 2}}), 64, [](const model::Layer& l) {
    if (l.kind == model::OpKind::linear) return LayerSharding{{}, {0}, {}, {}};
    return LayerSharding{{}, {}, {}, {}};
  });
  const Cluster cluster = cluster_preset("dgx-a100-80g");
  const plans::CompiledPlan compiled = plans::compile_plan(plan);
  const Prediction plain = simulate(plan, compiled, cluster);
  plan.recompute_activations = true;
  const Prediction recomputed = simulate(plan, compiled, cluster);
  // Every forward redistribution and collective inside a layer is sent a second time (no
  // pipeline here, no ZeRO 3 gathers); nothing else changes.
  int64_t forward_bytes = 0;
  for (const plans::CompiledLayer& layer : compiled.layers) {
    for (const plans::InputTransfer& input : layer.inputs) {
      for (const plans::Collective& c : input.forward) {
        forward_bytes += plans::bytes_sent(c, plan.mesh.index_in_group(0, c.axes));
      }
    }
    for (const plans::Collective& c : layer.layouts.forward_internal) {
      forward_bytes += plans::bytes_sent(c, plan.mesh.index_in_group(0, c.axes));
    }
  }
  EXPECT_GT(forward_bytes, 0);
  EXPECT_EQ(recomputed.ranks[0].comm_bytes_sent, plain.ranks[0].comm_bytes_sent + forward_bytes);
  // The forward's compute is paid again in the backward.
  EXPECT_NEAR(recomputed.phases.compute_backward - plain.phases.compute_backward, plain.phases.compute_forward, 1e-12);
  EXPECT_GT(recomputed.iteration_seconds, plain.iteration_seconds);
}

TEST(Simulation, WiderGradientsAreAddedIntoTheirAccumulatorEveryMicroBatch) {
  // bf16 compute with fp32 gradients (Megatron-LM's main_grad): each layer's backward writes a
  // bf16 weight gradient and a memory-bound pass adds it into the fp32 accumulator, 2 + 4 + 4
  // bytes per local parameter, on the step's critical path. Layers without parameters and
  // plans whose gradients are their compute type pay nothing more.
  plans::Plan plan = data_parallel_plan("gpt:layers=2,hidden=256,heads=4,seq=128,vocab=1024", 2, 8);
  plan.dtype = model::DType::bf16;
  const Cluster cluster = cluster_preset("dgx-a100-80g");
  const plans::CompiledPlan compiled = plans::compile_plan(plan);
  const Prediction half = simulate(plan, compiled, cluster);
  plan.gradient_dtype = model::DType::fp32;
  const Prediction wide = simulate(plan, compiled, cluster);
  double accumulation = 0.0;
  int with_parameters = 0;
  for (size_t i = 0; i < compiled.layers.size(); ++i) {
    int64_t parameters = 0;
    for (const plans::ParameterShard& p : compiled.layers[i].layouts.parameters) parameters += p.local_elements;
    const double pass = parameters > 0 ? streaming_pass_seconds(cluster, 10.0 * static_cast<double>(parameters)) : 0.0;
    with_parameters += parameters > 0 ? 1 : 0;
    EXPECT_NEAR(wide.layers[i].compute.backward_weight - half.layers[i].compute.backward_weight, pass, 1e-15) << i;
    EXPECT_DOUBLE_EQ(wide.layers[i].compute.forward, half.layers[i].compute.forward) << i;
    accumulation += pass;
  }
  EXPECT_GT(with_parameters, 0);
  // The fp32 gradients' all-reduce is larger too: the step grows by at least the passes.
  EXPECT_GE(wide.iteration_seconds - half.iteration_seconds, accumulation * (1.0 - 1e-9));
}

TEST(Simulation, RefusesAPlanLargerThanTheCluster) {
  EXPECT_THROW(simulate(data_parallel_plan("fashion-vgg", 4, 64), cluster_preset("local-cpu")), InputError);
}

TEST(Simulation, JsonAndTraceFollowTheContract) {
  const plans::Plan plan = data_parallel_plan("fashion-vgg", 2, 64);
  const plans::CompiledPlan compiled = plans::compile_plan(plan);
  const Cluster cluster = cluster_preset("local-cpu");
  const Prediction p = simulate(plan, compiled, cluster);
  const auto json = prediction_to_json(plan, cluster, p);
  for (const char* key : {"iteration_seconds", "samples_per_second", "phases", "ranks", "collectives"}) {
    EXPECT_TRUE(json.contains(key)) << key;
  }
  for (const char* key : {"compute_forward", "compute_backward", "comm_exposed", "bubble", "optimizer"}) {
    EXPECT_TRUE(json["phases"].contains(key)) << key;
  }
  const auto& rank = json["ranks"][0];
  for (const char* key : {"rank", "peak_memory_bytes", "memory", "comm_bytes_sent"})
    EXPECT_TRUE(rank.contains(key)) << key;
  for (const char* key : {"params", "grads", "optimizer", "activations", "buffers"})
    EXPECT_TRUE(rank["memory"].contains(key));
  const auto& collective = json["collectives"][0];
  for (const char* key : {"kind", "axes", "bytes", "seconds"}) EXPECT_TRUE(collective.contains(key)) << key;

  const auto trace = prediction_trace(plan, p);
  int compute_events = 0;
  int communication_events = 0;
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] != "X") continue;
    EXPECT_GE(event["dur"].get<double>(), 0.0);
    (event["tid"] == 0 ? compute_events : communication_events)++;
  }
  EXPECT_GT(compute_events, 0);
  EXPECT_GT(communication_events, 0);  // the gradient bucket
}

// Where the ranks compute on a host's cores (a calibrated CPU), every buffer the executor
// zero-fills (plans::allocated_zeroed) is written once per step, at the memory's streaming rate,
// and counted in the instruction after its alloc (a pass, as the executor's clock counts it).
// Elsewhere (presets, GPUs) the fills are not priced.
TEST(Simulation, ACalibratedCpuPaysForEveryZeroFilledBuffer) {
  const plans::Plan plan = data_parallel_plan("fashion-vgg", 1, 64);
  const plans::CompiledPlan compiled = plans::compile_plan(plan);
  Cluster cluster = cluster_preset("local-cpu");
  const Prediction unpriced = simulate(plan, compiled, cluster);
  cluster.cpu_cores_per_node = 2;
  const Prediction priced = simulate(plan, compiled, cluster);
  const plans::StepProgram program = plans::compile_step(plan, compiled, 0);
  double fills = 0.0;
  int zeroed = 0;
  for (const plans::StepInstruction& i : program.instructions) {
    if (i.op != plans::StepOp::alloc) continue;
    const plans::StepBuffer& buffer = program.buffers.at(static_cast<size_t>(i.buffer));
    if (!plans::allocated_zeroed(*plan.model, buffer)) continue;
    fills += streaming_pass_seconds(cluster, static_cast<double>(buffer.bytes));
    ++zeroed;
  }
  ASSERT_GT(zeroed, 10);
  EXPECT_NEAR(priced.iteration_seconds - unpriced.iteration_seconds, fills, 1e-12);
  const auto computing = [](const Prediction& p) { return p.phases.compute_forward + p.phases.compute_backward; };
  // Nearly all come right before a pass: the layers' outputs and gradients.
  EXPECT_GT(computing(priced) - computing(unpriced), 0.9 * fills);
}

// A redistribution whose steps are all local (each rank cuts its block out of the one it holds,
// as fashion-vgg's height split does to pool2's gradient) costs one read and one write of the
// block it cuts, at the memory's streaming rate: what the executor's copy does.
TEST(Simulation, ALocalRedistributionCostsOneCopyOfTheBlockItCuts) {
  const PlannerRequest request = testing::zoo_request("fashion-vgg", 2, 64, "local-cpu");
  const std::vector<plans::Plan> plans = domain_parallel_plans(request);
  ASSERT_FALSE(plans.empty());
  const plans::Plan& plan = plans.front();
  const plans::CompiledPlan compiled = plans::compile_plan(plan);
  const Prediction prediction = simulate(plan, compiled, request.cluster);
  const plans::StepProgram program = plans::compile_step(plan, compiled, 0);
  int local_only = 0;
  for (const plans::StepInstruction& i : program.instructions) {
    if (i.op != plans::StepOp::redistribute || i.steps.empty()) continue;
    if (std::ranges::any_of(i.steps, [](const plans::RedistributionStep& step) { return step.collective.has_value(); }))
      continue;
    const auto global = plans::redistributed_shape(*plan.model, i, compiled.micro_batch);
    double bytes = 0.0;
    for (const plans::RedistributionStep& step : i.steps) {
      bytes += 2.0 * static_cast<double>(plans::local_element_count(step.after, plan.mesh, global) *
                                         model::bytes_per_element(plan.dtype));
    }
    const auto span = std::ranges::find_if(prediction.other_instructions, [&](const InstructionSpan& other) {
      return other.op == plans::StepOp::redistribute && other.layer == i.layer && other.micro_batch == i.micro_batch;
    });
    ASSERT_NE(span, prediction.other_instructions.end()) << i.layer;
    EXPECT_NEAR(span->end_seconds - span->start_seconds, streaming_pass_seconds(request.cluster, bytes), 1e-12);
    ++local_only;
  }
  EXPECT_GT(local_only, 0);
}

// A step that fits the node's last-level cache runs its kernels at their warm times: each
// measured forward here is 1 ms faster warm, so the forward phase is 1 ms per measured layer
// shorter once the cache holds the step, and as before where the cache is unknown.
TEST(Simulation, AStepThatFitsTheCacheRunsItsKernelsWarm) {
  const plans::Plan plan = data_parallel_plan("fashion-vgg", 1, 64);
  const plans::CompiledPlan compiled = plans::compile_plan(plan);
  Cluster cluster = cluster_preset("local-cpu");
  int measured_layers = 0;
  for (size_t i = 0; i < compiled.layers.size(); ++i) {
    const auto problem =
        kernel_problem(*plan.model, static_cast<int>(i), compiled.layers[i].layouts, plan.mesh, compiled.micro_batch);
    if (!problem) continue;
    cluster.device.measured_kernels[kernel_key(*problem, 1)] = {2e-3, 2e-3, 2e-3};
    cluster.device.measured_kernels[kernel_key(*problem, 1, CacheState::warm)] = {1e-3, 2e-3, 2e-3};
    ++measured_layers;
  }
  ASSERT_GT(measured_layers, 5);
  const double swept = simulate(plan, compiled, cluster).phases.compute_forward;
  cluster.device.last_level_cache_bytes = 1e9;  // holds the whole step
  const double warm = simulate(plan, compiled, cluster).phases.compute_forward;
  EXPECT_NEAR(swept - warm, measured_layers * 1e-3, 1e-9);
  cluster.device.last_level_cache_bytes = 1e3;  // a sliver of it
  EXPECT_NEAR(swept - simulate(plan, compiled, cluster).phases.compute_forward, 0.0, 1e-4);
}

// On a device with a measured host link the step uploads each micro-batch's input (latency +
// bytes / bandwidth), and queues on the device the upload of its labels and the download of its
// loss (a latency each), exposed: fashion-vgg's 64 samples of 28 x 28 fp32 in 2 micro-batches add
// 2 x (latency + 32 x 3136 B / bandwidth) + 2 x 2 x latency. The labels' upload is the loss's
// forward's (the executor times it in that pass), the rest communication.
TEST(Simulation, HostTransfersCostTheDevicesHostLink) {
  plans::Plan plan = data_parallel_plan("fashion-vgg", 1, 64);
  plan.micro_batches = 2;
  Cluster cluster = cluster_preset("dgx-h100");
  const Prediction before = simulate(plan, cluster);
  cluster.device.host_transfer_latency_seconds = 20e-6;
  cluster.device.host_to_device_bytes_per_second = 10e9;
  const Prediction after = simulate(plan, cluster);
  const double expected = 2 * (20e-6 + 32 * 28 * 28 * 4 / 10e9) + 2 * 2 * 20e-6;
  EXPECT_NEAR(after.iteration_seconds - before.iteration_seconds, expected, 1e-12);
  EXPECT_NEAR(after.phases.comm_exposed - before.phases.comm_exposed, expected - 2 * 20e-6, 1e-12);
  EXPECT_NEAR(after.phases.compute_forward - before.phases.compute_forward, 2 * 20e-6, 1e-12);
  EXPECT_DOUBLE_EQ(host_transfer_seconds(cluster.device, 0), 20e-6);
  EXPECT_DOUBLE_EQ(host_transfer_seconds(cluster_preset("dgx-h100").device, 1'000'000), 0.0);
}

// A GPU whose host takes 1 ms to queue any kernel (far slower than dgx-h100's kernels for a
// 64-sample fashion-vgg): the host paces the step, each forward pass at least a launch after the one before, and
// the time still adds up by phase. The loss's passes queue one call more: its labels' upload.
TEST(Simulation, AHostSlowerThanItsKernelsPacesTheStep) {
  const plans::Plan plan = data_parallel_plan("fashion-vgg", 1, 64);
  Cluster cluster = cluster_preset("dgx-h100");
  const Prediction device_bound = simulate(plan, cluster);
  cluster.device.launch_host_seconds = 1e-3;
  const Prediction host_bound = simulate(plan, cluster);
  int passes = 0;  // forward passes alone: a lower bound
  for (int i = 0; i < plan.model->size(); ++i) passes += plan.model->layer(i).kind != model::OpKind::input ? 1 : 0;
  EXPECT_GT(device_bound.iteration_seconds, 0.0);
  EXPECT_LT(device_bound.iteration_seconds, 1e-3 * passes);
  EXPECT_GE(host_bound.iteration_seconds, 1e-3 * passes);
  const PhaseSeconds& p = host_bound.phases;
  EXPECT_NEAR(p.compute_forward + p.compute_backward + p.comm_exposed + p.optimizer + p.bubble,
              host_bound.iteration_seconds, 1e-9);
  // The trace's third row is the host's queuing, one launch per pass, one after the other; a
  // device-bound prediction without queuing has no such row.
  const auto host_row = [&](const Prediction& prediction) {
    std::vector<std::tuple<double, double, std::string>> spans;
    const auto trace = prediction_trace(plan, prediction);
    for (const auto& event : trace["traceEvents"]) {
      if (event["ph"] == "X" && event["tid"] == 2) spans.emplace_back(event["ts"], event["dur"], event["name"]);
    }
    return spans;
  };
  EXPECT_TRUE(host_row(device_bound).empty());
  const auto spans = host_row(host_bound);
  ASSERT_GE(static_cast<int>(spans.size()), passes);
  const std::string loss_forward = "forward " + plan.model->layer(plan.model->size() - 1).name + " mb0";
  ASSERT_EQ(plan.model->layer(plan.model->size() - 1).kind, model::OpKind::softmax_cross_entropy);
  for (size_t i = 0; i < spans.size(); ++i) {
    const auto& [start, duration, name] = spans[i];
    EXPECT_NEAR(duration, name == loss_forward ? 2e3 : 1e3, 1e-6) << name;  // microseconds
    if (i > 0) {
      EXPECT_GE(start, std::get<0>(spans[i - 1]) + std::get<1>(spans[i - 1]) - 1e-6);
    }
  }
}

// The runtime's own host time per layer pass (Device::instruction_host_seconds) comes on top of
// each forward's and backward's queuing, and only theirs: on a host-paced step each pass's host
// span grows by it (the loss's forward also queues its labels' upload), the other instructions'
// spans stay, and the step by at least as much.
TEST(Simulation, TheRuntimesHostTimePerPassAddsToEachPassesQueuing) {
  const plans::Plan plan = data_parallel_plan("fashion-vgg", 1, 64);
  Cluster cluster = cluster_preset("dgx-h100");
  cluster.device.launch_host_seconds = 1e-3;
  const Prediction without = simulate(plan, cluster);
  cluster.device.instruction_host_seconds = 2e-4;
  const Prediction with = simulate(plan, cluster);
  int passes = 0;
  for (const ScheduledPass& pass : with.passes) passes += static_cast<int>(pass.layers.size());
  ASSERT_GT(passes, 0);
  for (const ScheduledPass& pass : with.passes) {
    for (const LayerSpan& span : pass.layers) {
      const bool loss_forward =
          pass.kind == PassKind::forward && plan.model->layer(span.layer).kind == model::OpKind::softmax_cross_entropy;
      EXPECT_NEAR(span.host_queue_end_seconds - span.host_queue_start_seconds, loss_forward ? 2.2e-3 : 1.2e-3, 1e-9)
          << "layer " << span.layer;
    }
  }
  EXPECT_GE(with.iteration_seconds - without.iteration_seconds, 2e-4 * passes - 1e-9);
}

// The optimizer's host: the updates and the clears each queued in launches of up to
// plans::kTensorsPerOptimizerLaunch tensors, as the CUDA backend runs them (the count its
// calibration writes as Device::optimizer_tensors_per_kernel). A GPT of 8 blocks has
// more parameter tensors than one launch takes; on a host that takes 1 ms a launch and paces the
// step, the optimizer's phase is those launches (plus less than one more: the host's lag behind
// the device at the last backward, which the phase inherits).
TEST(Simulation, TheOptimizersHostQueuesOneLaunchPerBatchOfTensors) {
  const plans::Plan plan = data_parallel_plan("gpt:layers=8,hidden=64,heads=4,seq=16,vocab=128,positions=16", 1, 4);
  const plans::StepProgram program = plans::compile_step(plan, plans::compile_plan(plan), 0);
  int updates = 0;
  int clears = 0;
  for (const plans::StepInstruction& instruction : program.instructions) {
    if (instruction.op == plans::StepOp::optimizer) updates += static_cast<int>(instruction.reads.size());
  }
  for (const int buffer : program.resident) {
    clears += program.buffers.at(static_cast<size_t>(buffer)).role == plans::BufferRole::parameter_gradient ? 1 : 0;
  }
  ASSERT_GT(updates, plans::kTensorsPerOptimizerLaunch);
  const int launches = plans::optimizer_launches(updates) + plans::optimizer_launches(clears);
  EXPECT_GE(launches, 3);
  Cluster cluster = cluster_preset("dgx-h100");
  cluster.device.launch_host_seconds = 1e-3;
  cluster.device.optimizer_tensors_per_kernel = plans::kTensorsPerOptimizerLaunch;
  const double optimizer_seconds = simulate(plan, cluster).phases.optimizer;
  EXPECT_GE(optimizer_seconds, launches * 1e-3);
  EXPECT_LT(optimizer_seconds, (launches + 1) * 1e-3);
}

// The optimizer's device time: where one kernel updates (and one clears) all of a rank's
// tensors, it is one memory-bound pass over all their bytes, not a pass per tensor, so the
// small tensors (biases) pay no fixed cost of their own. vgg11's 22 tensors on one rank: with
// one kernel for all, the phase is exactly the two passes; tensor by tensor it is longer.
TEST(Simulation, AnOptimizerKernelOverManyTensorsIsOnePassOverTheirBytes) {
  const plans::Plan plan = data_parallel_plan("vgg11-cifar10", 1, 64);
  const plans::StepProgram program = plans::compile_step(plan, plans::compile_plan(plan), 0);
  int64_t gradient_bytes = 0;
  int tensors = 0;
  for (const int buffer : program.resident) {
    const plans::StepBuffer& kept = program.buffers.at(static_cast<size_t>(buffer));
    if (kept.role != plans::BufferRole::parameter_gradient) continue;
    gradient_bytes += kept.bytes;
    ++tensors;
  }
  ASSERT_EQ(tensors, 22);
  Cluster batched = cluster_preset("dgx-h100");
  batched.device.optimizer_tensors_per_kernel = 64;
  const int64_t parameters = gradient_bytes / plans::gradient_element_bytes(plan);
  EXPECT_NEAR(simulate(plan, batched).phases.optimizer,
              optimizer_step_seconds(batched, plan, parameters) +
                  streaming_pass_seconds(batched, static_cast<double>(gradient_bytes)),
              1e-12);
  const Cluster one_by_one = cluster_preset("dgx-h100");
  EXPECT_GT(simulate(plan, one_by_one).phases.optimizer, simulate(plan, batched).phases.optimizer * 1.2);
}

// A pipeline message's host overheads (Level::send_overhead, receive_overhead): with one
// micro-batch the stages run one after the other, so the step grows by the overheads of its two
// hand-overs (the activation forward, its gradient back), each paid once by its sender and once
// by its receiver, and the stages count them as waiting for each other.
TEST(Simulation, APipelineMessagePaysItsHostOverheadsOnBothStages) {
  plans::Plan plan =
      plans::build_plan("fashion-vgg", plans::Mesh({{"pipe", 2}, {"data", 1}}), 8, [](const model::Layer&) {
        return LayerSharding{{1}, {}, {}, {}};
      });
  plan.pipe_axis = 0;
  plan.micro_batches = 1;
  for (int i = plan.model->find("fc1"); i < plan.model->size(); ++i) plan.stage_of_layer[static_cast<size_t>(i)] = 1;
  const Cluster plain = cluster_preset("local-cpu");
  Cluster with_overheads = plain;
  const double send_seconds = 1e-3;
  const double receive_seconds = 2e-3;
  with_overheads.levels[0].send_overhead = {send_seconds, 0.0};
  with_overheads.levels[0].receive_overhead = {receive_seconds, 0.0};
  const Prediction before = simulate(plan, plain);
  const Prediction after = simulate(plan, with_overheads);
  EXPECT_NEAR(after.iteration_seconds - before.iteration_seconds, 2 * (send_seconds + receive_seconds), 1e-9);
  EXPECT_NEAR(after.phases.bubble - before.phases.bubble, 2 * (send_seconds + receive_seconds), 1e-9);
  // The per-byte part scales with the message.
  with_overheads.levels[0].send_overhead = {0.0, 1e-9};
  with_overheads.levels[0].receive_overhead = {};
  EXPECT_GT(simulate(plan, with_overheads).iteration_seconds, before.iteration_seconds);
}

}  // namespace
}  // namespace splitbrain::sim
