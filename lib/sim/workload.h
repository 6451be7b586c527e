// A workload as the step simulator sees it: a model's layers, each with its kind, forward FLOPs,
// parameters and activation sizes per sample, and what one sample is (images or sequences). The
// catalog (data/workloads/*.json, docs/workload-format.md) holds the course's networks, written
// by a generator from layer formulas (tools/make_workloads.cpp) and the lab models read from
// lib/nn's own definitions (workload_from_model), so the simulator and the executor count the
// same FLOPs and parameters.
//
//   Workload w = resolve_workload("resnet50");       // catalog name, or a file path
//   w.parameters(), w.forward_flops(), w.layers[i].kind
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace scalelab::nn {
class Model;
}

namespace scalelab::sim {

// What bounds a layer's speed on a device: the roofline's compute or memory side depends on it,
// and devices give an achievable fraction per kind (sim/device.h).
enum class LayerKind {
  conv,         // convolution (implicit GEMM / im2col + GEMM)
  matmul,       // dense / linear / projection: one GEMM
  attention,    // the batched score and context products of self-attention (and its softmax)
  norm,         // batch or layer normalisation
  elementwise,  // activation, residual add, dropout, scaling
  pool,         // max / average / global pooling
  embedding,    // table lookup
};
[[nodiscard]] std::string_view name_of(LayerKind k);
[[nodiscard]] LayerKind parse_layer_kind(std::string_view text);  // input error naming the valid kinds

struct WorkloadLayer {
  std::string name;
  LayerKind kind = LayerKind::elementwise;
  double forward_flops = 0;  // per sample, multiply-adds counted as 2
  std::size_t params = 0;    // trainable parameters
  double in_elems = 0;       // input activation elements per sample
  double out_elems = 0;      // output activation elements per sample
  // An activation applied to the output inside the layer ("relu"; empty: none), as lib/nn's Conv2D
  // and Dense carry Keras' activation=. On a GPU the step model prices it as the separate
  // elementwise pass a framework runs; on this machine's CPU it is inside the layer's measured rate.
  std::string activation;
};

// A convolution or dense layer as the matrix product it is: a convolution per sample, m = output
// channels, n = output pixels, k = input channels x kernel area (from its FLOPs, parameters and
// output, so a bias counts as a little more m); a dense layer m = the batch, n = outputs, k =
// inputs. `batch`: the samples of one call (a convolution runs its product once per sample, and
// how fast depends on how much of the batch's data the caches hold); 0 when not known. Nothing
// for the other kinds, or a layer without the figures.
struct GemmShape {
  double m = 0, n = 0, k = 0;
  double batch = 0;
};
[[nodiscard]] std::optional<GemmShape> gemm_shape(const WorkloadLayer& l, double batch);

struct Workload {
  std::string name;                  // "resnet50"
  std::string title;                 // "ResNet-50 (torchvision), 224x224 RGB"
  std::string unit = "images";       // what a sample is: "images" or "sequences"
  std::vector<std::size_t> input_shape;  // per sample, e.g. {3, 224, 224} or {128} (tokens)
  double encoded_sample_bytes = 0;   // one stored sample (a JPEG, a token sequence); 0: not given
  std::vector<std::string> sources;  // where the architecture comes from
  std::vector<WorkloadLayer> layers; // in forward order

  [[nodiscard]] std::size_t parameters() const;
  [[nodiscard]] double forward_flops() const;  // per sample
};

// Names of the catalog's workloads (data/workloads, embedded at build time), sorted.
[[nodiscard]] std::vector<std::string> workload_names();
// A catalog name, or a workload file (a path: contains '/' or ends in .json). An unknown name
// or a malformed file is an input error naming it and the fix.
[[nodiscard]] Workload resolve_workload(const std::string& name_or_path);
// Parses the JSON of a workload file; `where` names it in errors.
[[nodiscard]] Workload workload_from_json(const nlohmann::json& j, const std::string& where);
[[nodiscard]] nlohmann::json to_json(const Workload& w);

// A lab model of lib/nn (cnn, mlp, resnet, trivial) as a workload: its own layers, FLOPs
// (nn::Layer::flops) and parameter counts, so the simulator prices what `scalelab train` runs.
[[nodiscard]] Workload workload_from_model(const nn::Model& m);

}  // namespace scalelab::sim
