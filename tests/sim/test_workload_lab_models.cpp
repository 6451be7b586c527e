// The lab models in the catalog are what `scalelab train` runs: the same forward FLOPs and
// parameter counts as lib/nn's own models for Fashion-MNIST (1x28x28, 10 classes).
#include <gtest/gtest.h>

#include "nn/model.h"
#include "sim/workload.h"

namespace scalelab::sim {

void PrintTo(LayerKind k, std::ostream* os) { *os << name_of(k); }

namespace {

TEST(WorkloadLabModels, CatalogFilesAgreeWithLibNn) {
  for (const auto& name : nn::model_names()) {
    SCOPED_TRACE(name);
    const auto model = nn::make_model(name, nn::Shape{1, 28, 28}, 10, 7);
    const Workload w = resolve_workload(name);
    EXPECT_EQ(w.forward_flops(), model->flops_per_image().forward);
    EXPECT_EQ(w.parameters(), model->parameters().size());
    EXPECT_EQ(w.encoded_sample_bytes, 784);  // one raw 28x28 byte image
    EXPECT_EQ(w.input_shape, (std::vector<std::size_t>{1, 28, 28}));
  }
}

// The course's Keras CNN has 1,199,882 parameters (Keras' model.summary() for 10 classes).
TEST(WorkloadLabModels, CnnHasTheKerasModelsParameterCount) {
  EXPECT_EQ(resolve_workload("cnn").parameters(), 1'199'882u);
}

TEST(WorkloadLabModels, EachLayerKeepsNnsKindAndOrder) {
  const auto model = nn::make_model("cnn", nn::Shape{1, 28, 28}, 10, 7);
  const Workload w = workload_from_model(*model);
  std::vector<std::string> names;
  std::vector<LayerKind> kinds;
  for (const auto& l : w.layers) {
    names.push_back(l.name);
    kinds.push_back(l.kind);
  }
  // Flatten moves no data in nn (it aliases its input), so it has no entry.
  EXPECT_EQ(names, (std::vector<std::string>{"conv2d", "conv2d_1", "max_pooling2d", "dropout", "dense", "dropout_1", "dense_1"}));
  EXPECT_EQ(kinds, (std::vector<LayerKind>{LayerKind::conv, LayerKind::conv, LayerKind::pool, LayerKind::elementwise,
                                           LayerKind::matmul, LayerKind::elementwise, LayerKind::matmul}));
  // Keras' activation='relu' of both convolutions and the first dense layer, none on the classifier.
  EXPECT_EQ(w.layers[0].activation, "relu");
  EXPECT_EQ(w.layers[1].activation, "relu");
  EXPECT_EQ(w.layers[4].activation, "relu");
  EXPECT_EQ(w.layers[6].activation, "");
  EXPECT_EQ(w.layers[0].in_elems, 784);
  EXPECT_EQ(w.layers[0].out_elems, 32 * 26 * 26);
  EXPECT_EQ(w.layers[4].in_elems, 64 * 12 * 12);
}

// A residual block is listed step by step, so that its batch norms and its add are priced as the
// memory-bound steps they are, not at a convolution's rate; its steps add up to nn's count.
TEST(WorkloadLabModels, ResidualBlocksAreListedStepByStep) {
  const auto model = nn::make_model("resnet", nn::Shape{1, 28, 28}, 10, 7);
  const Workload w = workload_from_model(*model);
  std::vector<std::string> names;
  std::vector<LayerKind> kinds;
  double flops = 0;
  std::size_t params = 0;
  for (const auto& l : w.layers) {
    if (!l.name.starts_with("residual_block_1.")) continue;
    names.push_back(l.name.substr(17));
    kinds.push_back(l.kind);
    flops += l.forward_flops;
    params += l.params;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"conv1", "bn1", "relu", "conv2", "bn2", "shortcut", "shortcut_bn", "add_relu"}));
  EXPECT_EQ(kinds, (std::vector<LayerKind>{LayerKind::conv, LayerKind::norm, LayerKind::elementwise, LayerKind::conv,
                                           LayerKind::norm, LayerKind::conv, LayerKind::norm, LayerKind::elementwise}));
  // The model's layer 4 is residual_block_1 (16 -> 32 channels, stride 2), on 16x28x28.
  EXPECT_EQ(model->layer_name(4), "residual_block_1");
  EXPECT_EQ(flops, model->layer(4).flops(model->layer_output_shape(3)).forward);
  EXPECT_EQ(params, model->layer(4).parameter_count());
}

}  // namespace
}  // namespace scalelab::sim
