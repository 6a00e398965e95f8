#include "tools/training/synthetic_defaults.h"

#include <limits>

namespace splitbrain::tools {

int64_t predicted_classes(const model::Model& net) {
  const model::Layer& loss = net.layer(net.size() - 1);
  return loss.kind == model::OpKind::softmax_cross_entropy ? net.layer(loss.inputs[0]).output_shape.back() : 0;
}

exec::data::SyntheticOptions synthetic_defaults_for(const model::Model& net) {
  exec::data::SyntheticOptions options;
  const model::Shape& input = net.layer(0).output_shape;
  if (input.size() == 3) options.shape = {input[0], input[1], input[2]};
  const int64_t classes = predicted_classes(net);
  if (classes >= 2 && classes <= std::numeric_limits<int32_t>::max()) options.classes = static_cast<int32_t>(classes);
  return options;
}

}  // namespace splitbrain::tools
