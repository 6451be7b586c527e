// The catalog's image networks as torchvision defines them (see networks.h). Layer names follow
// torchvision's module names, so a layer can be looked up in its definition.
#include "workloads/networks.h"

#include <functional>

#include "core/error.h"
#include "workloads/builder.h"

namespace scalelab::workloads {

namespace {

sim::Workload image_workload(const std::string& name, const std::string& title, std::size_t side,
                             std::vector<std::string> sources) {
  sim::Workload w;
  w.name = name;
  w.title = title;
  w.unit = "images";
  w.input_shape = {3, side, side};
  w.encoded_sample_bytes = kImageNetJpegBytes;
  sources.emplace_back(kImageNetJpegSource);
  w.sources = std::move(sources);
  return w;
}

// conv (no bias) + batch norm + ReLU: torchvision's BasicConv2d and ResNet's conv/bn/relu.
Act conv_bn_relu(Builder& b, const std::string& name, Act x, std::size_t out, Kernel k, const std::string& conv = ".conv",
                 const std::string& bn = ".bn", const std::string& relu = ".relu") {
  x = b.conv(name + conv, x, out, k);
  x = b.bn(name + bn, x);
  return b.relu(name + relu, x);
}

Act bottleneck(Builder& b, const std::string& name, Act x, std::size_t planes, std::size_t stride) {
  const std::size_t out = planes * 4;
  Act y = b.conv(name + ".conv1", x, planes, Kernel::square(1));
  y = b.relu(name + ".relu1", b.bn(name + ".bn1", y));
  y = b.conv(name + ".conv2", y, planes, Kernel::square(3, stride, 1));
  y = b.relu(name + ".relu2", b.bn(name + ".bn2", y));
  y = b.conv(name + ".conv3", y, out, Kernel::square(1));
  y = b.bn(name + ".bn3", y);
  if (stride != 1 || x.c != out) b.bn(name + ".downsample.1", b.conv(name + ".downsample.0", x, out, Kernel::square(1, stride)));
  y = b.add(name + ".add", y);
  return b.relu(name + ".relu3", y);
}

}  // namespace

sim::Workload resnet(int depth) {
  std::vector<std::size_t> blocks;
  if (depth == 50) blocks = {3, 4, 6, 3};
  else if (depth == 101) blocks = {3, 4, 23, 3};
  else if (depth == 152) blocks = {3, 8, 36, 3};
  else throw_runtime("resnet: depth 50, 101 or 152");
  const std::string d = std::to_string(depth);
  sim::Workload w = image_workload(
      "resnet" + d, "ResNet-" + d + " (torchvision), 224x224 RGB, 1000 classes", 224,
      {"He, Zhang, Ren, Sun 2016, Deep Residual Learning for Image Recognition (CVPR), Table 1",
       "torchvision/models/resnet.py (resnet" + d + ": Bottleneck, layers " + std::to_string(blocks[0]) + ", " +
           std::to_string(blocks[1]) + ", " + std::to_string(blocks[2]) + ", " + std::to_string(blocks[3]) +
           "; stride on the 3x3 convolution)"});
  Builder b(w);
  Act x{3, 224, 224};
  x = conv_bn_relu(b, "", x, 64, Kernel::square(7, 2, 3), "conv1", "bn1", "relu");
  x = b.maxpool("maxpool", x, Kernel::square(3, 2, 1));
  const std::size_t planes[] = {64, 128, 256, 512};
  for (std::size_t stage = 0; stage < 4; ++stage) {
    for (std::size_t i = 0; i < blocks[stage]; ++i) {
      const std::size_t stride = (stage > 0 && i == 0) ? 2 : 1;
      x = bottleneck(b, "layer" + std::to_string(stage + 1) + "." + std::to_string(i), x, planes[stage], stride);
    }
  }
  x = b.global_avgpool("avgpool", x);
  b.linear("fc", x, 1000);
  return w;
}

sim::Workload vgg16() {
  sim::Workload w = image_workload("vgg16", "VGG-16 (torchvision, without batch norm), 224x224 RGB, 1000 classes", 224,
                                   {"Simonyan, Zisserman 2015, Very Deep Convolutional Networks for Large-Scale Image "
                                    "Recognition (ICLR), configuration D",
                                    "torchvision/models/vgg.py (vgg16: cfgs[\"D\"], batch_norm=False)"});
  Builder b(w);
  Act x{3, 224, 224};
  const int cfg[] = {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0};  // 0: max pool
  std::size_t i = 0;
  for (int c : cfg) {
    const std::string n = "features." + std::to_string(i);
    if (c == 0) {
      x = b.maxpool(n, x, Kernel::square(2, 2));
      ++i;
    } else {
      x = b.conv(n, x, static_cast<std::size_t>(c), Kernel::square(3, 1, 1), true);
      x = b.relu("features." + std::to_string(i + 1), x);
      i += 2;
    }
  }
  x = b.avgpool("avgpool", x, Kernel::square(1));  // AdaptiveAvgPool2d((7, 7)) on 7x7: one element per window
  x = b.linear("classifier.0", x, 4096);
  x = b.dropout("classifier.2", b.relu("classifier.1", x));
  x = b.linear("classifier.3", x, 4096);
  x = b.dropout("classifier.5", b.relu("classifier.4", x));
  b.linear("classifier.6", x, 1000);
  return w;
}

sim::Workload alexnet() {
  sim::Workload w = image_workload("alexnet", "AlexNet (torchvision), 224x224 RGB, 1000 classes", 224,
                                   {"Krizhevsky 2014, One weird trick for parallelizing convolutional neural networks "
                                    "(arXiv:1404.5997): the single-tower variant torchvision follows",
                                    "torchvision/models/alexnet.py"});
  Builder b(w);
  Act x{3, 224, 224};
  x = b.relu("features.1", b.conv("features.0", x, 64, Kernel::square(11, 4, 2), true));
  x = b.maxpool("features.2", x, Kernel::square(3, 2));
  x = b.relu("features.4", b.conv("features.3", x, 192, Kernel::square(5, 1, 2), true));
  x = b.maxpool("features.5", x, Kernel::square(3, 2));
  x = b.relu("features.7", b.conv("features.6", x, 384, Kernel::square(3, 1, 1), true));
  x = b.relu("features.9", b.conv("features.8", x, 256, Kernel::square(3, 1, 1), true));
  x = b.relu("features.11", b.conv("features.10", x, 256, Kernel::square(3, 1, 1), true));
  x = b.maxpool("features.12", x, Kernel::square(3, 2));
  x = b.avgpool("avgpool", x, Kernel::square(1));  // AdaptiveAvgPool2d((6, 6)) on 6x6
  x = b.dropout("classifier.0", x);
  x = b.relu("classifier.2", b.linear("classifier.1", x, 4096));
  x = b.dropout("classifier.3", x);
  x = b.relu("classifier.5", b.linear("classifier.4", x, 4096));
  b.linear("classifier.6", x, 1000);
  return w;
}

sim::Workload googlenet() {
  sim::Workload w = image_workload(
      "googlenet", "GoogLeNet (torchvision, without the auxiliary classifiers), 224x224 RGB, 1000 classes", 224,
      {"Szegedy et al. 2015, Going Deeper with Convolutions (CVPR), Table 1",
       "torchvision/models/googlenet.py (BasicConv2d with batch norm; the 5x5 branch uses a 3x3 convolution as "
       "torchvision does; aux_logits=False)"});
  Builder b(w);
  auto inception = [&b](const std::string& n, Act x, std::size_t c1, std::size_t c3r, std::size_t c3, std::size_t c5r,
                        std::size_t c5, std::size_t pool_proj) {
    const Act b1 = conv_bn_relu(b, n + ".branch1", x, c1, Kernel::square(1));
    Act b2 = conv_bn_relu(b, n + ".branch2.0", x, c3r, Kernel::square(1));
    b2 = conv_bn_relu(b, n + ".branch2.1", b2, c3, Kernel::square(3, 1, 1));
    Act b3 = conv_bn_relu(b, n + ".branch3.0", x, c5r, Kernel::square(1));
    b3 = conv_bn_relu(b, n + ".branch3.1", b3, c5, Kernel::square(3, 1, 1));
    Act b4 = b.maxpool(n + ".branch4.0", x, Kernel::square(3, 1, 1), true);
    b4 = conv_bn_relu(b, n + ".branch4.1", b4, pool_proj, Kernel::square(1));
    return b.concat(n + ".cat", {b1, b2, b3, b4});
  };
  Act x{3, 224, 224};
  x = conv_bn_relu(b, "conv1", x, 64, Kernel::square(7, 2, 3));
  x = b.maxpool("maxpool1", x, Kernel::square(3, 2), true);
  x = conv_bn_relu(b, "conv2", x, 64, Kernel::square(1));
  x = conv_bn_relu(b, "conv3", x, 192, Kernel::square(3, 1, 1));
  x = b.maxpool("maxpool2", x, Kernel::square(3, 2), true);
  x = inception("inception3a", x, 64, 96, 128, 16, 32, 32);
  x = inception("inception3b", x, 128, 128, 192, 32, 96, 64);
  x = b.maxpool("maxpool3", x, Kernel::square(3, 2), true);
  x = inception("inception4a", x, 192, 96, 208, 16, 48, 64);
  x = inception("inception4b", x, 160, 112, 224, 24, 64, 64);
  x = inception("inception4c", x, 128, 128, 256, 24, 64, 64);
  x = inception("inception4d", x, 112, 144, 288, 32, 64, 64);
  x = inception("inception4e", x, 256, 160, 320, 32, 128, 128);
  x = b.maxpool("maxpool4", x, Kernel::square(2, 2), true);
  x = inception("inception5a", x, 256, 160, 320, 32, 128, 128);
  x = inception("inception5b", x, 384, 192, 384, 48, 128, 128);
  x = b.global_avgpool("avgpool", x);
  x = b.dropout("dropout", x);
  b.linear("fc", x, 1000);
  return w;
}

}  // namespace scalelab::workloads
