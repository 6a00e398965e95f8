#pragma once
// A plan: everything `splitbrain run` needs to train a model on a mesh, and everything
// `splitbrain simulate` needs to predict it. The plan file (plans/plan_json.h) is its text form.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/dtype.h"
#include "model/model.h"
#include "plans/collective.h"
#include "plans/layer_sharding.h"
#include "plans/mesh.h"

namespace splitbrain::plans {

// GPipe: every forward, then every backward. 1F1B: one forward one backward after a warm-up.
// Interleaved 1F1B (Narayanan et al. SC21, Section 2.2.2): each pipeline rank holds
// `virtual_stages` model chunks and runs 1F1B over (chunk, micro-batch) passes.
enum class PipelineSchedule { gpipe, one_f_one_b, interleaved_one_f_one_b };
enum class OptimizerKind { sgd_momentum, adam };

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::sgd_momentum;
  double learning_rate = 0.01;
  double momentum = 0.9;  // sgd_momentum
  double beta1 = 0.9;     // adam
  double beta2 = 0.999;   // adam
  double epsilon = 1e-8;  // adam
  double weight_decay = 0.0;
  friend bool operator==(const OptimizerConfig&, const OptimizerConfig&) = default;
};

// Optimizer-state bytes per parameter element (fp32 state whatever the model dtype):
// momentum 4, Adam 8 (first and second moments).
int64_t optimizer_state_bytes_per_parameter(OptimizerKind kind);
// As plan files spell it: "sgd_momentum", "adam".
std::string_view optimizer_kind_name(OptimizerKind kind);
// As plan files spell it: "gpipe", "1f1b", "interleaved_1f1b".
std::string_view schedule_name(PipelineSchedule schedule);

// Whether selective recomputation (Megatron-LM's: attention's score terms dropped after the
// forward, made again before the backward) has something to drop in `layer`: an attention core
// that keeps its probabilities. A fused one keeps only its softmax statistics and makes its
// scores again in its own backward. The step compiler, the simulator and the planner's choice of
// recompute variants all ask this.
inline bool selective_recompute_applies(const model::Layer& layer) {
  return layer.kind == model::OpKind::self_attention && !layer.attr<model::SelfAttentionAttrs>().fused;
}

struct Plan {
  std::string family;  // a label such as "data-parallel" or "splitbrain g=4"
  std::string description;
  std::string model_spec;  // zoo spec or model file path, as written in the plan
  std::shared_ptr<const model::Model> model;
  int64_t global_batch = 1;  // samples per optimizer step, over all ranks
  model::DType dtype = model::DType::fp32;
  Mesh mesh{{{"data", 1}}};

  // One entry per model layer, in model order: which mesh axes split which role of the layer.
  std::vector<LayerSharding> layers;

  // Pipeline: the mesh axis whose coordinate is the stage (-1: no pipeline), the virtual stage
  // (model chunk) of each layer (non-decreasing in model order, 0 .. chunk_count() - 1),
  // micro-batches per step and their schedule. With one virtual stage per rank (every schedule
  // but the interleaved one) a layer's chunk is its stage; with V of them, chunk c runs on stage
  // c % stage_count(), so stage s holds chunks s, s + S, s + 2S, ... (Megatron-LM's layout).
  int pipe_axis = -1;
  std::vector<int> stage_of_layer;
  int micro_batches = 1;
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  int virtual_stages = 1;  // model chunks per pipeline stage (> 1 only with interleaved 1F1B)

  OptimizerConfig optimizer;
  // The element type gradients are accumulated and reduced in, when not `dtype`: fp32 is
  // Megatron-LM's main_grad under bf16 (2 + 4 + 4 + 8 = 18 bytes per parameter with Adam).
  std::optional<model::DType> gradient_dtype;
  bool recompute_activations = false;  // keep only stage inputs; recompute in backward
  // With recompute_activations: 0 reruns every layer of a chunk from the chunk's input, all at
  // once; N > 0 only those of its first N blocks, each checkpointed on its own (its input kept,
  // rerun right before its own backward: Megatron-LM's --recompute-method block
  // --recompute-num-layers N, torchtitan's full activation checkpointing where N covers every
  // block); the rest keep their activations (recompute_scope.h).
  int recompute_blocks = 0;
  // Selective recomputation (Korthikanti et al. 2022): the attention core's kept tensors (its
  // probabilities, the s x s terms) are let go after its forward and recomputed right before
  // its backward; everything else is kept.
  bool recompute_attention = false;
  // Megatron's sequence parallelism keeps the sequence-split input of a layer whose input an
  // all-gather makes whole (the column-parallel linears), and gathers it again right before the
  // layer's backward: 1/t of the bytes kept for one more all-gather. Applies to every saved
  // input made by all-gathers alone (StepFacts::regathers_input); not under full recomputation,
  // which keeps nothing to gather.
  bool regather_saved_inputs = false;
  int zero_stage = 0;  // 0 off; 1 optimizer state, 2 + gradients, 3 + parameters
  // Gradient synchronisation starts bucket by bucket while backward still runs.
  bool overlap_gradient_sync = true;
  int64_t gradient_bucket_bytes = 25'000'000;

  // Pipeline stages: the size of the pipeline axis (1 without one).
  int stage_count() const;
  // Model chunks (virtual stages): stage_count() x virtual_stages.
  int chunk_count() const { return stage_count() * virtual_stages; }
  // The pipeline stage that runs chunk `chunk`.
  int stage_of_chunk(int chunk) const { return chunk % stage_count(); }
  int64_t micro_batch_size() const { return global_batch / micro_batches; }
  // Selective recomputation reruns this layer's forward right before its backward (the
  // attention cores; the step compiler emits it, the simulator prices it).
  bool recomputes_selectively(const model::Layer& layer) const {
    return recompute_attention && selective_recompute_applies(layer);
  }
  // regather_saved_inputs applies to input `position` of `layer`, which `collectives` (its
  // redistribution's) make: it is saved for the backward and made by all-gathers alone, so its
  // source is the smaller tensor to keep (the step compiler emits the second gather, the
  // simulator counts its bytes).
  bool regathers_input(const model::Layer& layer, size_t position, std::span<const Collective> collectives) const;
};

}  // namespace splitbrain::plans
