// Small networks for Fashion-MNIST (28x28x1, 10 classes): quick to train for real on a CPU.

#include "model/zoo/builders.h"
#include "model/zoo/net_builder.h"

namespace splitbrain::model::zoo {

Model build_mlp(const std::string& name, const ZooOptions& options) {
  NetBuilder net(name);
  auto x = net.flatten(net.input({1, 28, 28}));
  for (int64_t i = 0; i < options.at("layers"); ++i) x = net.relu(net.linear(x, options.at("hidden")));
  net.loss(net.linear(x, options.at("classes")));
  return net.build();
}

// Two VGG blocks (two 3x3 convs and a 2x2 max pool each), then a 256-wide classifier. The
// classifier holds 92% of the parameters: a SplitBrain-shaped net in miniature.
Model build_fashion_vgg(const std::string& name) {
  NetBuilder net(name);
  auto x = net.input({1, 28, 28});
  for (int64_t channels : {32, 64}) {
    x = net.relu(net.conv2d(x, channels, 3, 1, 1, true));
    x = net.relu(net.conv2d(x, channels, 3, 1, 1, true));
    x = net.maxpool(x, 2, 2);
  }
  x = net.dropout(net.relu(net.linear(net.flatten(x), 256)), 0.5);
  net.loss(net.linear(x, 10));
  return net.build();
}

}  // namespace splitbrain::model::zoo
