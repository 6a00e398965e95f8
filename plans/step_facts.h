#pragma once
// StepFacts: what the step compiler asks of a plan about one rank — which layers its stage
// holds, the bytes of each tensor in the layout it is held in, which redistributions a layer's
// inputs and gradients go through, what backward reads, and the model states (parameters,
// gradients, optimizer state, ZeRO's slices) as resident buffers of the program.

#include <cstdint>
#include <map>
#include <vector>

#include "plans/compiled_plan.h"
#include "plans/plan.h"
#include "plans/program_writer.h"
#include "plans/redistribution.h"

namespace splitbrain::plans {

class StepFacts {
 public:
  StepFacts(const Plan& plan, const CompiledPlan& compiled, int rank);

  int rank() const { return rank_; }
  int stage() const { return stage_; }
  bool on_stage(int layer) const { return compiled_.layers[static_cast<size_t>(layer)].stage == stage_; }
  // The stage's layers, in model order (of all its chunks).
  const std::vector<int>& stage_layers() const { return stage_layers_; }
  // The layers of model chunk `chunk` (one of the stage's), in model order.
  const std::vector<int>& chunk_layers(int chunk) const;
  // The last consumer of `layer`'s output on this stage (-1: none).
  int last_local_consumer(int layer) const;
  // Backward of `layer` reads its input `position`.
  bool saves_input(int layer, size_t position) const;
  // Plan::regathers_input for this input and its redistribution.
  bool regathers_input(int layer, size_t position) const;

  // Bytes of one micro-batch's tensors on this rank.
  int64_t output_bytes(int layer) const { return of(layer).output_bytes; }          // in the layout it produces
  int64_t input_bytes(int layer, size_t position) const;                            // in the layout the layer reads it
  int64_t kept_by_op_bytes(int layer) const { return of(layer).kept_by_op_bytes; }  // masks, indices, statistics
  int64_t gradient_bytes_of_output(int layer) const { return of(layer).gradient_bytes_of_output; }
  int64_t input_gradient_bytes(int layer, size_t position) const;

  // The collectives taking the producer's output into input `position`'s layout (empty: the
  // layer reads the producer's array itself), and the input gradient back into the producer's
  // gradient layout.
  const std::vector<RedistributionStep>& input_redistribution(int layer, size_t position) const {
    return of(layer).input_redistribution.at(position);
  }
  const std::vector<RedistributionStep>& gradient_redistribution(int layer, size_t position) const {
    return of(layer).gradient_redistribution.at(position);
  }

  // ZeRO shards this layer's model states (it has parameters synchronised over more than one rank).
  bool zero_shards(int layer) const;
  // Gradient buckets of this stage overlap the backward: the plan asks for it and each is one
  // all-reduce or one reduce-scatter (the calls with a non-blocking form).
  bool buckets_overlap() const { return buckets_overlap_; }

  // Adds the model states as resident buffers, in the order the executor creates them.
  void add_model_states(ProgramWriter& writer);
  // The resident buffers holding `layer`'s parameters (under ZeRO 3 its bucket's slice).
  SmallIndexList parameter_buffers(int layer) const;
  // The resident whole gradients of `layer` (none where ZeRO 2-3 keeps only a slice).
  SmallIndexList gradient_buffers(int layer) const;
  // ZeRO: the resident slices of bucket `bucket` (-1 where the stage keeps none).
  int gradient_slice(size_t bucket) const { return gradient_slice_.at(bucket); }
  int parameter_slice(size_t bucket) const { return parameter_slice_.at(bucket); }
  int64_t slice_elements(size_t bucket) const;

 private:
  struct LayerFacts {
    int64_t output_bytes = 0;
    int64_t kept_by_op_bytes = 0;
    int64_t gradient_bytes_of_output = 0;
    std::vector<std::vector<RedistributionStep>> input_redistribution;     // per input position
    std::vector<std::vector<RedistributionStep>> gradient_redistribution;  // empty where none flows
  };
  const LayerFacts& of(int layer) const { return layers_.at(static_cast<size_t>(layer)); }
  int64_t compute_output_bytes(int layer) const;
  int64_t compute_kept_by_op_bytes(int layer) const;
  int64_t compute_gradient_bytes_of_output(int layer) const;
  std::vector<RedistributionStep> compute_input_redistribution(int layer, size_t position) const;
  std::vector<RedistributionStep> compute_gradient_redistribution(int layer, size_t position) const;

  const Plan& plan_;
  const CompiledPlan& compiled_;
  int rank_ = 0;
  int stage_ = 0;
  bool buckets_overlap_ = false;
  std::vector<SmallIndexList> parameters_;  // per layer
  std::vector<SmallIndexList> gradients_;   // per layer
  std::vector<int> bucket_of_layer_;
  std::vector<int> gradient_slice_;   // per compiled bucket
  std::vector<int> parameter_slice_;  // per compiled bucket
  std::vector<LayerFacts> layers_;
  std::vector<int> stage_layers_;
  std::map<int, std::vector<int>> chunk_layers_;  // by chunk
};

}  // namespace splitbrain::plans
