// The catalog's networks, built from layer formulas (builder.h), and the text of a catalog file.
// tools/make_workloads.cpp writes them to data/workloads/; tests/sim checks the committed files
// against them and their parameter counts against the published figures.
#pragma once
#include <string>
#include <vector>

#include "sim/workload.h"

namespace scalelab::workloads {

// torchvision's ResNet with Bottleneck blocks (stride on the 3x3 convolution, "v1.5"):
// depth 50, 101 or 152, 224x224 RGB, 1000 classes.
[[nodiscard]] sim::Workload resnet(int depth);
[[nodiscard]] sim::Workload vgg16();
[[nodiscard]] sim::Workload alexnet();
// torchvision's GoogLeNet without the auxiliary classifiers.
[[nodiscard]] sim::Workload googlenet();
// torchvision's Inception v3 at 299x299; aux_head adds the auxiliary classifier (training only).
[[nodiscard]] sim::Workload inception_v3(bool aux_head);
// BERT-large (24 layers, hidden 1024, 16 heads, FFN 4096, vocab 30522) with the pooler and
// without the pre-training heads, at a sequence length.
[[nodiscard]] sim::Workload bert_large(std::size_t seq);
// GPT-2 XL (48 layers, hidden 1600, 25 heads, context 1024, vocab 50257), LM head tied.
[[nodiscard]] sim::Workload gpt2_xl();
// A lab model of lib/nn as `scalelab train` builds it for Fashion-MNIST (1x28x28, 10 classes).
[[nodiscard]] sim::Workload lab_model(const std::string& name);

// Every catalog workload, in name order.
[[nodiscard]] std::vector<sim::Workload> catalog_workloads();
// The exact text of a catalog file: the fields in reading order, one layer per line.
[[nodiscard]] std::string workload_file_text(const sim::Workload& w);

}  // namespace scalelab::workloads
