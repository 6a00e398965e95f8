#pragma once
// Feeds a token model (GPT) from the synthetic token sequences of exec/data/token_sequences.h:
// the vocabulary and sequence length come from the model, the sequences from the seed. There is
// no epoch: step i's batch is a fresh set of sequences.

#include <memory>

#include "exec/data/token_sequences.h"
#include "exec/runtime/batch_source.h"
#include "model/model.h"

namespace splitbrain::tools {

class TokenBatches final : public exec::BatchSource {
 public:
  TokenBatches(int64_t vocab, int64_t positions, uint64_t seed) : sequences_({vocab, positions, seed}) {}
  // For `net`: the vocabulary its loss predicts over, as many positions as its input has.
  static std::unique_ptr<TokenBatches> for_model(const model::Model& net, uint64_t seed) {
    const model::Layer& loss = net.layer(net.size() - 1);
    return std::make_unique<TokenBatches>(net.layer(loss.inputs.at(0)).output_shape.back(),
                                          net.layer(0).output_shape.at(0), seed);
  }
  void images(int64_t step, int64_t first, int64_t count, float* out) override {
    sequences_.inputs(step, first, count, out);
  }
  std::vector<int32_t> labels(int64_t step, int64_t first, int64_t count) override {
    return sequences_.labels(step, first, count);
  }

 private:
  exec::data::TokenSequences sequences_;
};

}  // namespace splitbrain::tools
