#include "tests/exec/equivalence/plan_run.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>

#include "exec/comm/mesh_communicators.h"
#include "exec/cpu/cpu_backend.h"
#include "exec/runtime/trainer.h"
#include "model/errors.h"
#include "plans/tensor_layout.h"
#include "tests/exec/equivalence/equivalence_options.h"
#include "tests/exec/equivalence/scrambled_device.h"

namespace splitbrain::equivalence {
namespace {

int64_t product(const std::vector<int64_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
}

// The message of the lowest rank that has one, on every rank.
std::string shared_message(const std::string& mine) {
  const int size = world_size();
  const int candidate = mine.empty() ? size : world_rank();
  int source = size;
  MPI_Allreduce(&candidate, &source, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (source == size) return {};
  int length = static_cast<int>(mine.size());
  MPI_Bcast(&length, 1, MPI_INT, source, MPI_COMM_WORLD);
  std::string text = mine;
  text.resize(static_cast<size_t>(length));
  MPI_Bcast(text.data(), length, MPI_CHAR, source, MPI_COMM_WORLD);
  return text;
}

std::string parameter_name(const model::Layer& layer, int index) {
  return layer.name + "[" + std::to_string(index) + "]";
}

// The largest difference of a tied head's copy of a table from the table (gathered before it),
// noted as a replica's disagreement.
void note_copy_difference(PlanOutcome& out, const GlobalParameter& copy, int table) {
  for (const GlobalParameter& parameter : out.parameters) {
    if (parameter.layer != table || parameter.index != 0) continue;
    if (parameter.values.size() != copy.values.size()) {
      out.gather_problem += copy.name + ": a copy of " + std::to_string(copy.values.size()) +
                            " elements of a table of " + std::to_string(parameter.values.size()) + "; ";
      return;
    }
    for (size_t i = 0; i < copy.values.size(); ++i) {
      const double difference = std::abs(static_cast<double>(copy.values[i]) - parameter.values[i]) /
                                std::max(std::abs(static_cast<double>(parameter.values[i])), 1e-3);
      if (difference > out.replica_disagreement) {
        out.replica_disagreement = difference;
        out.replica_where = copy.name + " (the copy of " + parameter.name + ") element " + std::to_string(i);
      }
    }
    return;
  }
  out.gather_problem += copy.name + ": copies a table that was not gathered; ";
}

}  // namespace

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// Smooth images, so the tests also see the ties that ReLU and max pooling decide: weights that
// differ by rounding (1e-7, from summing in another order) can flip such a decision in a later
// step and move a few weights by 1e-4 or more. That is arithmetic, not a wrong runtime (every plan
// agrees to 1.2e-7 after step 1, and the flips move between families, data parallelism included,
// as the constants change), so the constants are ones where no decision of these 5 steps lies
// within rounding of its threshold (with 0.61 in place of 1.1, the {model: 2} plans flip one).
void FormulaBatches::images(int64_t step, int64_t first, int64_t count, float* out) {
  for (int64_t s = 0; s < count; ++s) {
    const auto sample = static_cast<double>(first + s);
    for (int64_t p = 0; p < sample_elements_; ++p) {
      const auto pixel = static_cast<double>(p);
      const double value = 0.5 * std::sin(0.017 * pixel + 1.1 * sample + 0.29 * static_cast<double>(step)) +
                           0.25 * std::cos(0.0031 * pixel * (sample + 1.0));
      out[s * sample_elements_ + p] = static_cast<float>(value);
    }
  }
}

std::vector<int32_t> FormulaBatches::labels(int64_t, int64_t first, int64_t count) {
  std::vector<int32_t> labels(static_cast<size_t>(count));
  for (int64_t s = 0; s < count; ++s) labels[static_cast<size_t>(s)] = static_cast<int32_t>((first + s) % classes_);
  return labels;
}

GatheredTensor gather_tensor(const std::vector<float>& local, const plans::TensorLayout& layout,
                             const plans::Mesh& mesh, const std::vector<int64_t>& global_shape,
                             const std::function<bool(int)>& holds) {
  const int rank = world_rank();
  const int size = world_size();
  const int count = static_cast<int>(local.size());
  std::vector<int> counts(static_cast<size_t>(size), 0);
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> displacements(static_cast<size_t>(size), 0);
  for (size_t r = 1; r < counts.size(); ++r) displacements[r] = displacements[r - 1] + counts[r - 1];
  const int total = displacements.back() + counts.back();
  std::vector<float> all(rank == 0 ? static_cast<size_t>(total) : 0);
  MPI_Gatherv(local.data(), count, MPI_FLOAT, all.data(), counts.data(), displacements.data(), MPI_FLOAT, 0,
              MPI_COMM_WORLD);

  GatheredTensor out;
  if (rank != 0) return out;
  const auto dims = global_shape.size();
  std::vector<int64_t> strides(dims, 1);
  for (size_t d = dims; d-- > 1;) strides[d - 1] = strides[d] * global_shape[d];
  out.values.assign(static_cast<size_t>(product(global_shape)), 0.0f);
  std::vector<char> written(out.values.size(), 0);
  const std::vector<int64_t> shape = plans::local_shape(layout, mesh, global_shape);
  const int64_t block = product(shape);
  for (int r = 0; r < size; ++r) {
    if (!holds(r)) continue;
    if (counts[static_cast<size_t>(r)] != block) {
      out.problem = "rank " + std::to_string(r) + " holds " + std::to_string(counts[static_cast<size_t>(r)]) +
                    " elements, its layout says " + std::to_string(block);
      return out;
    }
    const std::vector<int64_t> offset = plans::local_offset(layout, mesh, global_shape, r);
    const float* values = all.data() + displacements[static_cast<size_t>(r)];
    for (int64_t i = 0; i < block; ++i) {
      int64_t rest = i;
      int64_t at = 0;
      for (size_t d = dims; d-- > 0;) {
        at += (offset[d] + rest % shape[d]) * strides[d];
        rest /= shape[d];
      }
      const float value = values[i];
      float& slot = out.values[static_cast<size_t>(at)];
      if (written[static_cast<size_t>(at)]) {
        const double difference = std::abs(static_cast<double>(value) - static_cast<double>(slot)) /
                                  std::max(std::abs(static_cast<double>(slot)), 1e-3);
        if (difference > out.replica_disagreement) {
          out.replica_disagreement = difference;
          out.worst_index = at;
        }
      } else {
        slot = value;
        written[static_cast<size_t>(at)] = 1;
      }
    }
  }
  const auto missing = std::count(written.begin(), written.end(), 0);
  if (missing > 0) out.problem = std::to_string(missing) + " elements held by no rank";
  return out;
}

PlanOutcome run_plan(const plans::Plan& plan, const sim::Cluster& cluster, int steps) {
  PlanOutcome out;
  out.plan = plan;
  const plans::Plan& p = out.plan;  // the Trainer keeps a reference: it must not move meanwhile
  const model::Model& net = *p.model;
  int status = 0;  // 0 ran, 1 refused (InputError), 2 failed (anything else)
  std::string message;
  try {
    exec::comm::MeshCommunicators communicators(p.mesh);
    exec::Backend backend = exec::cpu::make_cpu_backend(communicators);
    if (options().scrambled_device) backend.device = std::make_unique<ScrambledDevice>();
    exec::Trainer trainer(p, std::move(backend), 1);
    const model::Layer& loss = net.layer(net.size() - 1);
    const auto classes = static_cast<int>(net.layer(loss.inputs.at(0)).output_shape.back());
    FormulaBatches images(product(net.layer(0).output_shape), classes);
    TokenBatches tokens(classes, product(net.layer(0).output_shape));
    exec::BatchSource& data = net.layer(0).output_is_tokens ? static_cast<exec::BatchSource&>(tokens) : images;
    const auto start = std::chrono::steady_clock::now();
    const exec::HostTransfers before = trainer.device().host_link().host_transfers();
    if (const auto* scrambled = dynamic_cast<const ScrambledDevice*>(&trainer.device())) {
      out.grouped_hand_overs = scrambled->grouped_hand_overs();
    }
    for (int s = 0; s < steps; ++s) out.losses.push_back(trainer.step(data).loss);
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const exec::HostTransfers moved = trainer.device().host_link().host_transfers() - before;
    out.host_transfers_per_step = static_cast<double>(moved.count()) / std::max(steps, 1);
    out.input_transfers_per_step =
        static_cast<double>(moved.count_of(exec::HostTransferPurpose::input)) / std::max(steps, 1);
    out.inputs_per_step =
        std::ranges::count(trainer.program().instructions, plans::StepOp::load_input, &plans::StepInstruction::op);
    out.bytes = trainer.communicator().counter();
    const exec::MemoryTracker& memory = trainer.memory();
    out.params_bytes = memory.peak(exec::MemoryCategory::params);
    out.grads_bytes = memory.peak(exec::MemoryCategory::grads);
    out.optimizer_bytes = memory.peak(exec::MemoryCategory::optimizer);
    out.activations_bytes = memory.peak(exec::MemoryCategory::activations);
    out.buffers_bytes = memory.peak(exec::MemoryCategory::buffers);
    out.peak_bytes = memory.peak_total();
    out.accuracy = trainer.evaluate(data, kEvaluationSteps, &out.evaluation_loss);
    for (int v = 0; v < net.size(); ++v) {
      const auto& shards = trainer.compiled().layers[static_cast<size_t>(v)].layouts.parameters;
      const std::vector<std::vector<float>> values = trainer.local_parameter_values(v);
      for (size_t k = 0; k < shards.size(); ++k) {
        const plans::ParameterShard& shard = shards[k];
        if (!shard.layout.partial_axes.empty()) {
          throw std::logic_error("parameter " + parameter_name(net.layer(v), static_cast<int>(k)) +
                                 " is a partial sum");
        }
        const int stage = trainer.compiled().layers[static_cast<size_t>(v)].stage;
        auto holds = [&](int r) { return p.pipe_axis < 0 || p.mesh.coordinate(r, p.pipe_axis) == stage; };
        const std::vector<float> nothing;
        const auto& local = values.empty() ? nothing : values[k];
        GatheredTensor whole = gather_tensor(local, shard.layout, p.mesh, shard.global_shape, holds);
        GlobalParameter parameter{v, static_cast<int>(k), parameter_name(net.layer(v), static_cast<int>(k)),
                                  shard.global_shape, std::move(whole.values)};
        const std::optional<plans::TiedCopy>& copy = trainer.compiled().layers[static_cast<size_t>(v)].tied_copy;
        if (copy && k == 0) {
          // A tied head's copy of its table (on another stage): not a parameter of the model, but
          // a replica of the table, which must stay equal to it.
          if (world_rank() == 0) note_copy_difference(out, parameter, copy->table);
          continue;
        }
        if (world_rank() == 0) {
          if (!whole.problem.empty()) out.gather_problem += parameter.name + ": " + whole.problem + "; ";
          if (whole.replica_disagreement > out.replica_disagreement) {
            out.replica_disagreement = whole.replica_disagreement;
            out.replica_where = parameter.name + " element " + std::to_string(whole.worst_index);
          }
          out.parameters.push_back(std::move(parameter));
        }
      }
    }
    out.prediction = sim::simulate(p, cluster);
  } catch (const InputError& e) {
    status = 1;
    message = e.what();
  } catch (const std::exception& e) {
    status = 2;
    message = e.what();
    std::fprintf(stderr, "[rank %d] plan '%s' %s: %s\n", world_rank(), p.family.c_str(), p.mesh.to_string().c_str(),
                 e.what());
  }
  int lowest = 0;
  int highest = 0;
  MPI_Allreduce(&status, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&status, &highest, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  out.message = shared_message(message);
  if (lowest != highest) {
    out.status = RunStatus::failed;
    out.message = "ranks disagree on the outcome (some ran, some threw): " + out.message;
  } else {
    out.status = status == 0 ? RunStatus::ran : status == 1 ? RunStatus::refused : RunStatus::failed;
  }
  return out;
}

}  // namespace splitbrain::equivalence
