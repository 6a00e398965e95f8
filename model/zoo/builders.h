#pragma once
// The zoo's network builders, one family per file. Registered by name in model/zoo.cc.

#include "model/model.h"
#include "model/zoo.h"

namespace splitbrain::model::zoo {

// torchvision's VGG configurations: depth 11, 13, 16 or 19; 224x224 inputs.
Model build_vgg_imagenet(const std::string& name, int depth, int64_t classes);
// The VGG conv stack on 32x32x3 inputs with the classifier 512-4096-4096-classes.
Model build_vgg_cifar(const std::string& name, int depth, int64_t classes);
Model build_alexnet(const std::string& name, int64_t classes);
// torchvision's ResNet v1.5: depth 18 (basic blocks) or 50 (bottlenecks).
Model build_resnet(const std::string& name, int depth, int64_t classes);
Model build_mlp(const std::string& name, const ZooOptions& options);
Model build_fashion_vgg(const std::string& name);
Model build_gpt(const std::string& name, const ZooOptions& options);

}  // namespace splitbrain::model::zoo
