#include "model/shape_inference.h"

#include "model/op_unit.h"

namespace splitbrain::model {

void infer_output_shape(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site) {
  layer.output_is_tokens = false;  // only an input of token ids sets it
  op_unit(layer.kind).infer_shape(layer, producers, site);
}

}  // namespace splitbrain::model
