#pragma once
// Checks a layer's attributes against its input shapes and infers its output shape.

#include <span>

#include "model/error_site.h"
#include "model/layer.h"

namespace splitbrain::model {

// Fills layer.output_shape and layer.output_is_tokens from layer.kind, layer.attrs and the
// already-inferred producers. Also completes attributes that default to "derived from the input"
// (a pooling stride of 0 becomes the kernel size). Throws ModelError through `site` when the
// attributes are invalid or do not fit the inputs.
void infer_output_shape(Layer& layer, std::span<const Layer* const> producers, const ErrorSite& site);

}  // namespace splitbrain::model
