// torchvision's Inception v3 (see networks.h): BasicConv2d is a convolution without bias, batch
// norm and ReLU; blocks InceptionA-E as torchvision/models/inception.py names them.
#include "workloads/builder.h"
#include "workloads/networks.h"

namespace scalelab::workloads {

namespace {

struct Inception {
  Builder& b;

  Act basic(const std::string& n, Act x, std::size_t out, Kernel k) {
    x = b.conv(n + ".conv", x, out, k);
    x = b.bn(n + ".bn", x);
    return b.relu(n + ".relu", x);
  }

  Act block_a(const std::string& n, Act x, std::size_t pool_features) {
    const Act b1 = basic(n + ".branch1x1", x, 64, Kernel::square(1));
    Act b5 = basic(n + ".branch5x5_1", x, 48, Kernel::square(1));
    b5 = basic(n + ".branch5x5_2", b5, 64, Kernel::square(5, 1, 2));
    Act b3 = basic(n + ".branch3x3dbl_1", x, 64, Kernel::square(1));
    b3 = basic(n + ".branch3x3dbl_2", b3, 96, Kernel::square(3, 1, 1));
    b3 = basic(n + ".branch3x3dbl_3", b3, 96, Kernel::square(3, 1, 1));
    Act bp = b.avgpool(n + ".avg_pool", x, Kernel::square(3, 1, 1));
    bp = basic(n + ".branch_pool", bp, pool_features, Kernel::square(1));
    return b.concat(n + ".cat", {b1, b5, b3, bp});
  }

  Act block_b(const std::string& n, Act x) {
    const Act b3 = basic(n + ".branch3x3", x, 384, Kernel::square(3, 2));
    Act bd = basic(n + ".branch3x3dbl_1", x, 64, Kernel::square(1));
    bd = basic(n + ".branch3x3dbl_2", bd, 96, Kernel::square(3, 1, 1));
    bd = basic(n + ".branch3x3dbl_3", bd, 96, Kernel::square(3, 2));
    const Act bp = b.maxpool(n + ".max_pool", x, Kernel::square(3, 2));
    return b.concat(n + ".cat", {b3, bd, bp});
  }

  Act block_c(const std::string& n, Act x, std::size_t c7) {
    const Act b1 = basic(n + ".branch1x1", x, 192, Kernel::square(1));
    Act b7 = basic(n + ".branch7x7_1", x, c7, Kernel::square(1));
    b7 = basic(n + ".branch7x7_2", b7, c7, Kernel::rect(1, 7));
    b7 = basic(n + ".branch7x7_3", b7, 192, Kernel::rect(7, 1));
    Act bd = basic(n + ".branch7x7dbl_1", x, c7, Kernel::square(1));
    bd = basic(n + ".branch7x7dbl_2", bd, c7, Kernel::rect(7, 1));
    bd = basic(n + ".branch7x7dbl_3", bd, c7, Kernel::rect(1, 7));
    bd = basic(n + ".branch7x7dbl_4", bd, c7, Kernel::rect(7, 1));
    bd = basic(n + ".branch7x7dbl_5", bd, 192, Kernel::rect(1, 7));
    Act bp = b.avgpool(n + ".avg_pool", x, Kernel::square(3, 1, 1));
    bp = basic(n + ".branch_pool", bp, 192, Kernel::square(1));
    return b.concat(n + ".cat", {b1, b7, bd, bp});
  }

  Act block_d(const std::string& n, Act x) {
    Act b3 = basic(n + ".branch3x3_1", x, 192, Kernel::square(1));
    b3 = basic(n + ".branch3x3_2", b3, 320, Kernel::square(3, 2));
    Act b7 = basic(n + ".branch7x7x3_1", x, 192, Kernel::square(1));
    b7 = basic(n + ".branch7x7x3_2", b7, 192, Kernel::rect(1, 7));
    b7 = basic(n + ".branch7x7x3_3", b7, 192, Kernel::rect(7, 1));
    b7 = basic(n + ".branch7x7x3_4", b7, 192, Kernel::square(3, 2));
    const Act bp = b.maxpool(n + ".max_pool", x, Kernel::square(3, 2));
    return b.concat(n + ".cat", {b3, b7, bp});
  }

  Act block_e(const std::string& n, Act x) {
    const Act b1 = basic(n + ".branch1x1", x, 320, Kernel::square(1));
    const Act b3 = basic(n + ".branch3x3_1", x, 384, Kernel::square(1));
    const Act b3a = basic(n + ".branch3x3_2a", b3, 384, Kernel::rect(1, 3));
    const Act b3b = basic(n + ".branch3x3_2b", b3, 384, Kernel::rect(3, 1));
    Act bd = basic(n + ".branch3x3dbl_1", x, 448, Kernel::square(1));
    bd = basic(n + ".branch3x3dbl_2", bd, 384, Kernel::square(3, 1, 1));
    const Act bda = basic(n + ".branch3x3dbl_3a", bd, 384, Kernel::rect(1, 3));
    const Act bdb = basic(n + ".branch3x3dbl_3b", bd, 384, Kernel::rect(3, 1));
    Act bp = b.avgpool(n + ".avg_pool", x, Kernel::square(3, 1, 1));
    bp = basic(n + ".branch_pool", bp, 192, Kernel::square(1));
    return b.concat(n + ".cat", {b1, b3a, b3b, bda, bdb, bp});
  }

  // InceptionAux on Mixed_6e's output: used in training only; its output is a second loss.
  void aux(const std::string& n, Act x) {
    x = b.avgpool(n + ".avg_pool", x, Kernel::square(5, 3));
    x = basic(n + ".conv0", x, 128, Kernel::square(1));
    x = basic(n + ".conv1", x, 768, Kernel::square(5));
    x = b.global_avgpool(n + ".adaptive_avg_pool", x);
    b.linear(n + ".fc", x, 1000);
  }
};

}  // namespace

sim::Workload inception_v3(bool aux_head) {
  sim::Workload w;
  w.name = "inception_v3";
  w.title = std::string("Inception v3 (torchvision, ") + (aux_head ? "with" : "without") +
            " the auxiliary classifier), 299x299 RGB, 1000 classes";
  w.unit = "images";
  w.input_shape = {3, 299, 299};
  w.encoded_sample_bytes = kImageNetJpegBytes;
  w.sources = {"Szegedy et al. 2016, Rethinking the Inception Architecture for Computer Vision (CVPR)",
               std::string("torchvision/models/inception.py (inception_v3, aux_logits=") + (aux_head ? "True" : "False") + ")",
               kImageNetJpegSource};
  Builder b(w);
  Inception net{b};
  Act x{3, 299, 299};
  x = net.basic("Conv2d_1a_3x3", x, 32, Kernel::square(3, 2));
  x = net.basic("Conv2d_2a_3x3", x, 32, Kernel::square(3));
  x = net.basic("Conv2d_2b_3x3", x, 64, Kernel::square(3, 1, 1));
  x = b.maxpool("maxpool1", x, Kernel::square(3, 2));
  x = net.basic("Conv2d_3b_1x1", x, 80, Kernel::square(1));
  x = net.basic("Conv2d_4a_3x3", x, 192, Kernel::square(3));
  x = b.maxpool("maxpool2", x, Kernel::square(3, 2));
  x = net.block_a("Mixed_5b", x, 32);
  x = net.block_a("Mixed_5c", x, 64);
  x = net.block_a("Mixed_5d", x, 64);
  x = net.block_b("Mixed_6a", x);
  x = net.block_c("Mixed_6b", x, 128);
  x = net.block_c("Mixed_6c", x, 160);
  x = net.block_c("Mixed_6d", x, 160);
  x = net.block_c("Mixed_6e", x, 192);
  if (aux_head) net.aux("AuxLogits", x);
  x = net.block_d("Mixed_7a", x);
  x = net.block_e("Mixed_7b", x);
  x = net.block_e("Mixed_7c", x);
  x = b.global_avgpool("avgpool", x);
  x = b.dropout("dropout", x);
  b.linear("fc", x, 1000);
  return w;
}

}  // namespace scalelab::workloads
