// The catalog's list, the lab models read from lib/nn, and the text of a catalog file (see
// networks.h).
#include <nlohmann/json.hpp>

#include "nn/model.h"
#include "workloads/networks.h"

namespace scalelab::workloads {

sim::Workload lab_model(const std::string& name) {
  // As `scalelab train` builds it for Fashion-MNIST; the seed changes no count.
  const auto model = nn::make_model(name, nn::Shape{1, 28, 28}, 10, 1);
  sim::Workload w = sim::workload_from_model(*model);
  w.title = "lab model " + name + " (lib/nn), Fashion-MNIST 1x28x28, 10 classes";
  w.encoded_sample_bytes = 784;  // one raw 28x28 8-bit image in the IDX file
  w.sources = {"lib/nn/model_zoo.cpp (nn::make_model(\"" + name + "\")), read by sim::workload_from_model",
               "Xiao, Rasul, Vollgraf 2017, Fashion-MNIST (arXiv:1708.07747): 28x28 grayscale images stored as raw "
               "bytes in IDX files"};
  return w;
}

std::vector<sim::Workload> catalog_workloads() {
  std::vector<sim::Workload> all;
  all.push_back(alexnet());
  all.push_back(bert_large(128));
  all.push_back(bert_large(512));
  all.push_back(lab_model("cnn"));
  all.push_back(googlenet());
  all.push_back(gpt2_xl());
  all.push_back(inception_v3(false));
  all.push_back(lab_model("mlp"));
  all.push_back(lab_model("resnet"));
  all.push_back(resnet(101));
  all.push_back(resnet(152));
  all.push_back(resnet(50));
  all.push_back(lab_model("trivial"));
  all.push_back(vgg16());
  return all;
}

std::string workload_file_text(const sim::Workload& w) {
  const nlohmann::json j = sim::to_json(w);
  std::string out = "{\n";
  for (const char* key : {"format", "name", "title", "unit", "input_shape", "encoded_sample_bytes"}) {
    if (j.contains(key)) out += " \"" + std::string(key) + "\": " + j[key].dump() + ",\n";
  }
  out += " \"sources\": [\n";
  for (std::size_t i = 0; i < w.sources.size(); ++i)
    out += "  " + j["sources"][i].dump() + (i + 1 < w.sources.size() ? ",\n" : "\n");
  out += " ],\n \"layers\": [\n";
  const auto& layers = j["layers"];
  for (std::size_t i = 0; i < layers.size(); ++i) {
    std::string line = "  {";
    const char* sep = "";
    for (const char* key : {"name", "kind", "forward_flops", "params", "in_elems", "out_elems", "activation"}) {
      if (!layers[i].contains(key)) continue;
      line += std::string(sep) + "\"" + key + "\": " + layers[i][key].dump();
      sep = ", ";
    }
    out += line + (i + 1 < layers.size() ? "},\n" : "}\n");
  }
  out += " ]\n}\n";
  return out;
}

}  // namespace scalelab::workloads
