#pragma once
// Reading a decoder's layer graph in model order (gpt_shape.cc, llama_shape.cc): the refusal
// naming the first layer that stands where the expected decoder has another.

#include <span>
#include <string_view>

#include "model/model.h"

namespace splitbrain::tools {

// Throws ExportRefusal: layer `index` of `model` (or its end, when `index` is past its last
// layer) stands where a `decoder` (e.g. "GPT-2-style decoder") has `expected`.
[[noreturn]] void refuse_decoder_layer(const model::Model& model, int index, std::string_view decoder,
                                       std::string_view expected);

// The layers from `first` on have `kinds`, in order; refuses the first that differs, naming it
// as number k of `part` (e.g. "block 3").
void expect_layer_kinds(const model::Model& model, int first, std::span<const model::OpKind> kinds,
                        std::string_view part, std::string_view decoder);

}  // namespace splitbrain::tools
