#pragma once
// One plan trained for a few steps on this MPI job, and what the equivalence tests compare: the
// loss of every step, the final weights gathered into whole tensors on rank 0, the bytes this
// rank's communicator counted, and the simulator's prediction for the same plan.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "exec/comm/byte_counter.h"
#include "exec/data/token_sequences.h"
#include "exec/runtime/batch_source.h"
#include "plans/plan.h"
#include "sim/cluster.h"
#include "sim/simulation.h"

namespace splitbrain::equivalence {

// This process's rank and the job's size in MPI_COMM_WORLD.
int world_rank();
int world_size();

// The same samples whatever the split: pixel p of global sample i in step s is a fixed formula
// of (s, i, p), and sample i's label is i % classes.
class FormulaBatches : public exec::BatchSource {
 public:
  FormulaBatches(int64_t sample_elements, int classes) : sample_elements_(sample_elements), classes_(classes) {}
  void images(int64_t step, int64_t first, int64_t count, float* out) override;
  std::vector<int32_t> labels(int64_t step, int64_t first, int64_t count) override;

 private:
  int64_t sample_elements_;
  int classes_;
};

// Token models: the same sequences whatever the split (exec/data/token_sequences.h, seed 1).
class TokenBatches : public exec::BatchSource {
 public:
  TokenBatches(int64_t vocab, int64_t positions) : sequences_({vocab, positions, 1}) {}
  void images(int64_t step, int64_t first, int64_t count, float* out) override {
    sequences_.inputs(step, first, count, out);
  }
  std::vector<int32_t> labels(int64_t step, int64_t first, int64_t count) override {
    return sequences_.labels(step, first, count);
  }

 private:
  exec::data::TokenSequences sequences_;
};

// One parameter tensor of the model, whole (global shape, row-major).
struct GlobalParameter {
  int layer = 0;
  int index = 0;     // which parameter of the layer (0 weight, 1 bias)
  std::string name;  // "fc6[0]"
  std::vector<int64_t> shape;
  std::vector<float> values;
};

enum class RunStatus { ran, refused, failed };

struct PlanOutcome {
  plans::Plan plan;
  RunStatus status = RunStatus::failed;
  std::string message;         // refused or failed: the exception's message (from any rank)
  std::vector<double> losses;  // one per step
  // Rank 0 only (empty elsewhere): the final weights, each element from the rank(s) holding it.
  std::vector<GlobalParameter> parameters;
  // Rank 0 only: the largest difference, relative to max(|value|, 1e-3), between two ranks'
  // copies of one replicated element, and where it was seen.
  double replica_disagreement = 0.0;
  std::string replica_where;
  std::string gather_problem;     // rank 0: what did not add up when placing the blocks
  exec::comm::ByteCounter bytes;  // this rank's, over all steps
  // This rank's tracked peaks over the training steps, by category (bytes).
  int64_t params_bytes = 0;
  int64_t grads_bytes = 0;
  int64_t optimizer_bytes = 0;
  int64_t activations_bytes = 0;
  int64_t buffers_bytes = 0;
  int64_t peak_bytes = 0;  // every category at once, at the worst moment
  // After training: the fraction of kEvaluationSteps batches' samples classified right (--eval).
  double accuracy = 0.0;
  double evaluation_loss = 0.0;  // the mean loss of those batches (finer than the accuracy)
  // Under --scrambled-device: its pipeline hand-overs ran as NCCL's (held back, grouped,
  // synchronous, matched in order) because the plan's complete that way.
  bool grouped_hand_overs = false;
  // Host transfers (Device::upload_queued / upload / download) per training step, those of them
  // that carried the input, and the input batches the rank's step program loads per step: a
  // device-resident step makes exactly those.
  double host_transfers_per_step = 0.0;
  double input_transfers_per_step = 0.0;
  int64_t inputs_per_step = 0;
  sim::Prediction prediction;  // ran only
  double seconds = 0.0;        // wall time of the steps
};

// Trains `plan` for `steps` steps from seed 1 on the CPU backend (one oneDNN thread per rank;
// its device the double of scrambled_device.h under --scrambled-device).
// Collective: every rank of MPI_COMM_WORLD calls it with the same plan. A plan the executor
// refuses (InputError on every rank) comes back `refused`; any other exception on every rank
// comes back `failed`. An exception on only some ranks is printed at once (the others may then
// wait in a collective until the test's timeout).
PlanOutcome run_plan(const plans::Plan& plan, const sim::Cluster& cluster, int steps);
constexpr int64_t kEvaluationSteps = 4;

// Gathers this rank's block `local` of a tensor of `global_shape` split by `layout` onto rank 0
// of MPI_COMM_WORLD (mesh rank = world rank); rank 0 gets the whole tensor and the largest
// relative disagreement between replicated copies (with the flat index where it was seen).
struct GatheredTensor {
  std::vector<float> values;  // rank 0 only
  double replica_disagreement = 0.0;
  int64_t worst_index = -1;  // -1 when every copy agrees exactly
  std::string problem;       // rank 0: a rank's block of the wrong size, or elements nobody holds
};
// `holds(r)`: whether rank r holds the tensor at all (a pipeline stage holds only its layers).
GatheredTensor gather_tensor(const std::vector<float>& local, const plans::TensorLayout& layout,
                             const plans::Mesh& mesh, const std::vector<int64_t>& global_shape,
                             const std::function<bool(int)>& holds);

}  // namespace splitbrain::equivalence
