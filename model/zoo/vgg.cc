// VGG (Simonyan & Zisserman 2014) in torchvision's layout, and its CIFAR-10 variant.

#include <array>
#include <stdexcept>
#include <vector>

#include "model/zoo/builders.h"
#include "model/zoo/net_builder.h"

namespace splitbrain::model::zoo {
namespace {

constexpr int64_t kPool = 0;  // 'M' in torchvision's configuration lists

// torchvision's cfgs "A", "B", "D", "E": output channels of each 3x3 conv, kPool for a 2x2 max pool.
std::vector<int64_t> vgg_configuration(int depth) {
  switch (depth) {
    case 11:
      return {64, kPool, 128, kPool, 256, 256, kPool, 512, 512, kPool, 512, 512, kPool};
    case 13:
      return {64, 64, kPool, 128, 128, kPool, 256, 256, kPool, 512, 512, kPool, 512, 512, kPool};
    case 16:
      return {64, 64, kPool, 128, 128, kPool, 256, 256, 256, kPool, 512, 512, 512, kPool, 512, 512, 512, kPool};
    case 19:
      return {64,  64,  kPool, 128, 128,   kPool, 256, 256, 256, 256,  kPool,
              512, 512, 512,   512, kPool, 512,   512, 512, 512, kPool};
    default:
      throw std::logic_error("VGG depth must be 11, 13, 16 or 19");
  }
}

NetBuilder::Tensor conv_stack(NetBuilder& net, NetBuilder::Tensor x, int depth) {
  for (int64_t channels : vgg_configuration(depth)) {
    x = channels == kPool ? net.maxpool(x, 2, 2) : net.relu(net.conv2d(x, channels, 3, 1, 1, true));
  }
  return x;
}

// Linear-ReLU-Dropout twice, then the output layer: the classifier of both variants.
NetBuilder::Tensor classifier(NetBuilder& net, NetBuilder::Tensor x, int64_t hidden, int64_t classes) {
  for (int i = 0; i < 2; ++i) x = net.dropout(net.relu(net.linear(x, hidden)), 0.5);
  return net.linear(x, classes);
}

}  // namespace

Model build_vgg_imagenet(const std::string& name, int depth, int64_t classes) {
  NetBuilder net(name);
  auto x = conv_stack(net, net.input({3, 224, 224}), depth);
  x = net.flatten(net.adaptive_avgpool(x, 7));
  net.loss(classifier(net, x, 4096, classes));
  return net.build();
}

Model build_vgg_cifar(const std::string& name, int depth, int64_t classes) {
  NetBuilder net(name);
  auto x = conv_stack(net, net.input({3, 32, 32}), depth);  // five pools: 32 -> 1, so 512 features
  net.loss(classifier(net, net.flatten(x), 4096, classes));
  return net.build();
}

Model build_alexnet(const std::string& name, int64_t classes) {
  NetBuilder net(name);
  auto x = net.input({3, 224, 224});
  x = net.maxpool(net.relu(net.conv2d(x, 64, 11, 4, 2, true)), 3, 2);
  x = net.maxpool(net.relu(net.conv2d(x, 192, 5, 1, 2, true)), 3, 2);
  x = net.relu(net.conv2d(x, 384, 3, 1, 1, true));
  x = net.relu(net.conv2d(x, 256, 3, 1, 1, true));
  x = net.maxpool(net.relu(net.conv2d(x, 256, 3, 1, 1, true)), 3, 2);
  x = net.flatten(net.adaptive_avgpool(x, 6));
  // torchvision's AlexNet puts dropout before each hidden linear layer.
  x = net.relu(net.linear(net.dropout(x, 0.5), 4096));
  x = net.relu(net.linear(net.dropout(x, 0.5), 4096));
  net.loss(net.linear(x, classes));
  return net.build();
}

}  // namespace splitbrain::model::zoo
