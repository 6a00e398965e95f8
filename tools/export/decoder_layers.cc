// The refusals shared by the decoder readers.

#include "tools/export/decoder_layers.h"

#include <fmt/format.h>

#include "tools/export/export_refusal.h"

namespace splitbrain::tools {

void refuse_decoder_layer(const model::Model& model, int index, std::string_view decoder, std::string_view expected) {
  if (index >= model.size()) {
    throw ExportRefusal(
        fmt::format("model '{}': ends after {} layers, where a {} has {}; only GPT-2- and Llama-style "
                    "decoders export to this trainer",
                    model.name(), model.size(), decoder, expected));
  }
  throw ExportRefusal(
      fmt::format("model '{}': layer '{}' ({}) stands where a {} has {}; only GPT-2- and Llama-style "
                  "decoders export to this trainer",
                  model.name(), model.layer(index).name, model::op_name(model.layer(index).kind), decoder, expected));
}

void expect_layer_kinds(const model::Model& model, int first, std::span<const model::OpKind> kinds,
                        std::string_view part, std::string_view decoder) {
  for (size_t k = 0; k < kinds.size(); ++k) {
    const int index = first + static_cast<int>(k);
    if (index >= model.size() || model.layer(index).kind != kinds[k]) {
      refuse_decoder_layer(model, index, decoder,
                           fmt::format("a '{}' layer (number {} of its {})", model::op_name(kinds[k]), k + 1, part));
    }
  }
}

}  // namespace splitbrain::tools
