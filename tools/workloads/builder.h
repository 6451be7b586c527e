// Layer formulas for the workload generator (tools/make_workloads.cpp): each call appends one
// workload layer with its FLOPs per sample (a multiply-add counts 2), trainable parameters and
// activation elements, and returns the output's shape, so a network reads like its definition:
//
//   Builder b(w);
//   Act x = b.input(3, 224, 224);
//   x = b.conv("conv1", x, 64, Kernel::square(7, 2, 3));   // 2*Cin*Cout*kh*kw*Hout*Wout/groups
//   x = b.bn("bn1", x);  x = b.relu("relu", x);
//
// Conventions (docs/workload-format.md): conv and matmul count 2 per multiply-add; a norm counts
// 4 per element (as lib/nn's BatchNorm does: subtract, scale, multiply, add); elementwise layers
// count 1 per output element; pooling counts the window's size per output element; attention
// counts its two batched products (2*s*s*d each per head) and 5 per score for the softmax;
// embedding lookups count none. Running statistics of a norm are not trainable parameters.
#pragma once
#include <string>
#include <vector>

#include "sim/workload.h"

namespace scalelab::workloads {

// A typical stored ImageNet training JPEG: the ILSVRC2012 training archive holds 1,281,167 images
// in 147,897,477,120 bytes, about 115,440 bytes per image (the catalog's image networks read it).
inline constexpr double kImageNetJpegBytes = 115440;
inline constexpr const char* kImageNetJpegSource =
    "image size: ILSVRC2012 training archive, 147,897,477,120 bytes for 1,281,167 JPEGs "
    "(https://image-net.org/download-images.php; Russakovsky et al. 2015, IJCV)";

// Per-sample activation shape: channels x height x width (features: c x 1 x 1).
struct Act {
  std::size_t c = 0, h = 1, w = 1;
  [[nodiscard]] double elems() const { return double(c) * double(h) * double(w); }
};

struct Kernel {
  std::size_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0;
  static Kernel square(std::size_t k, std::size_t stride = 1, std::size_t pad = 0) { return {k, k, stride, stride, pad, pad}; }
  // A kh x kw kernel, stride 1, padded to keep the size ("1x7" with pad 0,3).
  static Kernel rect(std::size_t kh, std::size_t kw) { return {kh, kw, 1, 1, (kh - 1) / 2, (kw - 1) / 2}; }
};

class Builder {
 public:
  explicit Builder(sim::Workload& w) : w_(w) {}

  // --- images -------------------------------------------------------------------------------
  Act conv(const std::string& name, Act in, std::size_t out_channels, Kernel k, bool bias = false, std::size_t groups = 1);
  Act bn(const std::string& name, Act in);
  Act relu(const std::string& name, Act in) { return elementwise(name, in); }
  Act dropout(const std::string& name, Act in) { return elementwise(name, in); }
  Act elementwise(const std::string& name, Act in);
  // Residual add: reads two tensors shaped like `in`.
  Act add(const std::string& name, Act in);
  // Concatenation along channels: a copy, no arithmetic.
  Act concat(const std::string& name, const std::vector<Act>& parts);
  // ceil_mode as in PyTorch's MaxPool2d (output size rounded up).
  Act maxpool(const std::string& name, Act in, Kernel k, bool ceil_mode = false);
  Act avgpool(const std::string& name, Act in, Kernel k);
  Act global_avgpool(const std::string& name, Act in);
  // A fully connected layer on `in`'s c*h*w features (torch.flatten is a view: no entry).
  Act linear(const std::string& name, Act in, std::size_t out_features, bool bias = true);

  // --- token sequences (seq tokens of `hidden` features) ------------------------------------
  void embedding(const std::string& name, std::size_t rows, std::size_t dim, std::size_t lookups);
  void token_matmul(const std::string& name, std::size_t seq, std::size_t in_f, std::size_t out_f, bool bias = true,
                    bool tied = false);
  void attention(const std::string& name, std::size_t seq, std::size_t hidden, std::size_t heads);
  void layer_norm(const std::string& name, std::size_t seq, std::size_t hidden);
  void token_elementwise(const std::string& name, std::size_t elems, double in_factor = 1);

 private:
  void push(const std::string& name, sim::LayerKind kind, double flops, std::size_t params, double in, double out);
  sim::Workload& w_;
};

}  // namespace scalelab::workloads
