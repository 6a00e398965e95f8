// ResNet (He et al. 2015) as in torchvision: v1.5 (the stride sits on the 3x3 conv of a
// bottleneck), convs without bias followed by batchnorm, a 1x1 conv + batchnorm shortcut where
// the shape changes.

#include <fmt/format.h>

#include <array>
#include <stdexcept>

#include "model/zoo/builders.h"
#include "model/zoo/net_builder.h"

namespace splitbrain::model::zoo {
namespace {

using Tensor = NetBuilder::Tensor;

Tensor conv_bn(NetBuilder& net, const Tensor& x, int64_t out, int64_t kernel, int64_t stride, const std::string& prefix,
               const std::string& index) {
  auto y = net.conv2d(x, out, kernel, stride, kernel / 2, false, prefix + "conv" + index);
  return net.batchnorm(y, prefix + "bn" + index);
}

Tensor shortcut(NetBuilder& net, const Tensor& x, int64_t in, int64_t out, int64_t stride, const std::string& prefix) {
  if (stride == 1 && in == out) return x;
  auto y = net.conv2d(x, out, 1, stride, 0, false, prefix + "downsample.conv");
  return net.batchnorm(y, prefix + "downsample.bn");
}

Tensor basic_block(NetBuilder& net, const Tensor& x, int64_t in, int64_t width, int64_t stride,
                   const std::string& prefix) {
  auto y = net.relu(conv_bn(net, x, width, 3, stride, prefix, "1"), prefix + "relu1");
  y = conv_bn(net, y, width, 3, 1, prefix, "2");
  return net.relu(net.add({y, shortcut(net, x, in, width, stride, prefix)}, prefix + "add"), prefix + "relu2");
}

Tensor bottleneck(NetBuilder& net, const Tensor& x, int64_t in, int64_t width, int64_t stride,
                  const std::string& prefix) {
  constexpr int64_t kExpansion = 4;
  auto y = net.relu(conv_bn(net, x, width, 1, 1, prefix, "1"), prefix + "relu1");
  y = net.relu(conv_bn(net, y, width, 3, stride, prefix, "2"), prefix + "relu2");
  y = conv_bn(net, y, width * kExpansion, 1, 1, prefix, "3");
  return net.relu(net.add({y, shortcut(net, x, in, width * kExpansion, stride, prefix)}, prefix + "add"),
                  prefix + "relu3");
}

}  // namespace

Model build_resnet(const std::string& name, int depth, int64_t classes) {
  const bool bottlenecks = depth == 50;
  std::array<int, 4> blocks{};
  if (depth == 18)
    blocks = {2, 2, 2, 2};
  else if (depth == 50)
    blocks = {3, 4, 6, 3};
  else
    throw std::logic_error("ResNet depth must be 18 or 50");

  NetBuilder net(name);
  auto x = net.input({3, 224, 224});
  x = net.relu(net.batchnorm(net.conv2d(x, 64, 7, 2, 3, false, "conv1"), "bn1"), "relu");
  x = net.maxpool(x, 3, 2, 1, "maxpool");
  int64_t channels = 64;
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t width = int64_t{64} << stage;
    for (int b = 0; b < blocks[static_cast<size_t>(stage)]; ++b) {
      const int64_t stride = (stage > 0 && b == 0) ? 2 : 1;
      const std::string prefix = fmt::format("layer{}.{}.", stage + 1, b);
      x = bottlenecks ? bottleneck(net, x, channels, width, stride, prefix)
                      : basic_block(net, x, channels, width, stride, prefix);
      channels = bottlenecks ? width * 4 : width;
    }
  }
  x = net.flatten(net.adaptive_avgpool(x, 1, "avgpool"));
  net.loss(net.linear(x, classes, true, "fc"));
  return net.build();
}

}  // namespace splitbrain::model::zoo
