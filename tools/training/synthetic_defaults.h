#pragma once
// Synthetic data that fits the model it feeds (`run --data synthetic`, and the model's step that
// `calibrate --backend cuda` runs): a user running vgg16 on synthetic data should not have to
// spell out 3x224x224 and 1000 classes.

#include <cstdint>

#include "exec/data/synthetic.h"
#include "model/model.h"

namespace splitbrain::tools {

// The classes a model's loss tells apart (0 when it does not end in a classification loss).
int64_t predicted_classes(const model::Model& net);

// The model's input sample shape and, where its loss classifies, its class count.
exec::data::SyntheticOptions synthetic_defaults_for(const model::Model& net);

}  // namespace splitbrain::tools
