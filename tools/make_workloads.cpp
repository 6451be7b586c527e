// make_workloads: writes the workload catalog, data/workloads/<name>.json, from the layer
// formulas of tools/workloads/ and lib/nn's lab models. Run after changing a network:
//   cmake --build build/ci --target make_workloads && build/ci/tools/make_workloads data/workloads
// tests/sim checks that the committed files equal what this writes.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "core/error.h"
#include "workloads/networks.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_workloads DIR   (writes DIR/<name>.json for every catalog workload)\n";
    return 2;
  }
  try {
    const std::filesystem::path dir = argv[1];
    std::filesystem::create_directories(dir);
    for (const auto& w : scalelab::workloads::catalog_workloads()) {
      const auto path = dir / (w.name + ".json");
      std::ofstream out(path, std::ios::binary);
      out << scalelab::workloads::workload_file_text(w);
      if (!out) scalelab::throw_runtime(path.string() + ": cannot write");
      std::cout << path.string() << ": " << w.layers.size() << " layers, " << w.parameters() << " parameters, "
                << w.forward_flops() / 1e9 << " GFLOP forward per sample\n";
    }
  } catch (const scalelab::Error& e) {
    std::cerr << "make_workloads: " << e.what() << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "make_workloads: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
