// A GPU's architecture: what the cost model's NCCL constants are indexed by (NCCL picks its
// tuning tables by compute capability: Volta, Ampere, Hopper, Blackwell; src/graph/tuning.cc).
// Machine files state it per GPU ("arch", docs/machine-format.md); detection reads the compute
// capability; files of format 1, which had no such field, get it from the model name with a
// warning.
//
//   GpuArch a = *parse_gpu_arch("hopper");
//   std::optional<GpuArch> g = arch_from_model_name("NVIDIA H800 80GB HBM3");  // hopper
//   GpuArch c = arch_from_compute_capability(8, 9);                              // ada
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace scalelab::topo {

enum class GpuArch { pascal, volta, turing, ampere, ada, hopper, blackwell, cdna2, cdna3 };

[[nodiscard]] std::string_view name_of(GpuArch a);
// "volta", "hopper", ... (lower case, as written in machine files); nullopt for anything else.
[[nodiscard]] std::optional<GpuArch> parse_gpu_arch(std::string_view name);
// "pascal, volta, turing, ampere, ada, hopper, blackwell, cdna2, cdna3": for error messages.
[[nodiscard]] std::string gpu_arch_names();
// NVIDIA compute capability (major.minor) to architecture: 6.x pascal, 7.0/7.2 volta, 7.5 turing,
// 8.0/8.6/8.7 ampere, 8.9 ada, 9.x hopper, 10.x and 12.x blackwell.
[[nodiscard]] GpuArch arch_from_compute_capability(int major, int minor);
// The architecture a product name belongs to ("Tesla V100-SXM2-16GB", "RTX 4090", "MI250X"), from
// NVIDIA's and AMD's product lists; nullopt when the name is not recognised.
[[nodiscard]] std::optional<GpuArch> arch_from_model_name(std::string_view model);

}  // namespace scalelab::topo
